"""Qwen Code (npm @qwen-code/qwen-code), headless: it speaks OpenAI chat completions, the proxy's own API.

    qwen --auth-type openai --model M --approval-mode yolo --output-format stream-json   (prompt on stdin)

`--auth-type openai` with `OPENAI_BASE_URL` (the proxy's /v1) and `OPENAI_API_KEY` (a placeholder) points it at the
proxy. `yolo` approves its own tool calls (nobody is there to approve them; the container is the sandbox), and
`--chat-recording false` keeps no session on disk. Its settings file (~/.qwen/settings.json) turns off usage
statistics, telemetry, update checks and folder trust; QWEN_USAGE_STATISTICS_ENABLED and QWEN_TELEMETRY_ENABLED say
the same from the environment. Its tools write files (`write_file`, `edit`), read them, search and run shell
commands in the workspace.
Reference: the package's own `--help` and settings schema (the pinned version's bundle).
"""

from __future__ import annotations

import json

from runner.agents.base import AgentTurn
from runner.agents.command import AgentCommand, ProxyAddress

__all__ = ["QwenCode", "SETTINGS"]

SETTINGS = {
    "$version": 4,
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False},
    "security": {"folderTrust": {"enabled": False}},
}


class QwenCode:
    name = "qwen-code"

    def __init__(self, image: str) -> None:
        self.image = image

    def command(self, turn: AgentTurn, address: ProxyAddress) -> AgentCommand:
        argv = ["qwen", "--auth-type", "openai", "--model", address.model, "--approval-mode", "yolo",
                "--output-format", "stream-json", "--chat-recording", "false"]
        env = {"OPENAI_BASE_URL": address.openai_base_url, "OPENAI_API_KEY": address.api_key,
               "OPENAI_MODEL": address.model, "QWEN_USAGE_STATISTICS_ENABLED": "false",
               "QWEN_TELEMETRY_ENABLED": "false", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}
        return AgentCommand(argv=argv, env=env, home_files={".qwen/settings.json": json.dumps(SETTINGS, indent=2)},
                            image=self.image, stdin=turn.prompt)
