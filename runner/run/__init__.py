"""Run wiring: composing and checking a run (config validation, preflight, roles, placement, lineage) and the commands around it (pull, prepare, merge, rejudge, repeats)."""
