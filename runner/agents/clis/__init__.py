"""The official coding-agent CLIs as agent kinds: each runs headless, one container per turn, in the agent image
(images/agent: the CLIs at exact versions), in the slot's workspace, with no network but the model proxy.

    image.py        the agent image a run uses (docker sandbox only), its lineage record, the preflight check
    qwen_code.py    Qwen Code: OpenAI chat completions
    codex.py        Codex: the OpenAI Responses API
    gemini_cli.py   Gemini CLI: Gemini's generateContent
    claude_code.py  Claude Code: Anthropic Messages

Each points the CLI at the proxy's address with the API's own base-URL setting, gives it a placeholder key, turns
off its telemetry, update checks and other side calls in its own configuration (written to its home folder, which
is fresh at every turn), and feeds it the turn's prompt on standard input. docs/agents.md says what each CLI is
told and what is left out.
"""
