"""Coding agents as generators: an agent works in the slot's workspace until it stops or spends its budget, and
the workspace it leaves is the answer (built, served, acted on and judged like any other).

    kinds.py        the `agent` kind family (conf/agent/): none, builtin, and the command agents
    settings.py     what every agent kind's settings hold: its budget (steps, tokens, wall clock)
    budget.py       a slot's budget as the proxy spends it, and which part stopped the agent
    proxy.py        the model proxy: the agents' only way out (runner/agents/dialects/ for the APIs it speaks)
    http11.py       the proxy's HTTP/1.1 over a Unix socket
    workspace.py    the agent's workspace: seeded from the episode, its files read back as the answer
    builtin.py      the project's own tool-calling loop (agent=builtin) and its tools (builtin_tools.py)
    command.py      an agent that is a command run in the sandbox (the official CLIs plug in here)
    strategy.py     the generation strategy that runs an agent for one slot and records what it did
"""
