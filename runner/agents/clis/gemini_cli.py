"""Gemini CLI (npm @google/gemini-cli), headless: it speaks Gemini's own generateContent API.

    gemini --model M --approval-mode yolo --output-format stream-json   (prompt on stdin: headless without a TTY)

`GOOGLE_GEMINI_BASE_URL` (the proxy's address) and `GEMINI_API_KEY` (a placeholder), with its settings file's
`security.auth.selectedType: gemini-api-key`, point it at the proxy (it asks
`/v1beta/models/M:streamGenerateContent?alt=sse`). `yolo` approves its own tool calls; `GEMINI_CLI_TRUST_WORKSPACE`
trusts the workspace (an untrusted folder would turn yolo back off); `GEMINI_CLI_NO_RELAUNCH` keeps it in one
process. Its settings file (~/.gemini/settings.json) turns off usage statistics, telemetry and update checks. Its
tools write files (`write_file`, `replace`), read them, search and run shell commands in the workspace; its web
tools (`google_web_search`, `web_fetch`) find no network.
References: docs/reference/configuration.md and docs/cli/headless.md of google-gemini/gemini-cli.
"""

from __future__ import annotations

import json

from runner.agents.base import AgentTurn
from runner.agents.command import AgentCommand, ProxyAddress

__all__ = ["GeminiCli", "SETTINGS"]

SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


class GeminiCli:
    name = "gemini-cli"

    def __init__(self, image: str) -> None:
        self.image = image

    def command(self, turn: AgentTurn, address: ProxyAddress) -> AgentCommand:
        argv = ["gemini", "--model", address.model, "--approval-mode", "yolo", "--output-format", "stream-json"]
        env = {"GOOGLE_GEMINI_BASE_URL": address.base_url, "GEMINI_API_KEY": address.api_key,
               "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "true",
               "GEMINI_TELEMETRY_ENABLED": "false"}
        return AgentCommand(argv=argv, env=env, home_files={".gemini/settings.json": json.dumps(SETTINGS, indent=2)},
                            image=self.image, stdin=turn.prompt)
