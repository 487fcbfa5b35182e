"""The reward service: one model answer to one task turn scored by a run's own path, for training loops.

MT-Web2Code §3.6: its deterministic, dense per-turn scores "can directly serve as training signals for
reinforcement learning"; I-WebGenBench's build success and interaction rate (§3.2) and the contracts'
executable checks likewise. `RewardService` (service.py) loads a suite's tasks once and scores answers through
the engine's slot path and the judging phase (runner/turns/engine.py, runner/turns/judging_phase.py), in the same sandbox, browsers
and limits as a run; `python -m runner.reward serve` puts it behind HTTP (http.py). docs/reward.md.
"""
