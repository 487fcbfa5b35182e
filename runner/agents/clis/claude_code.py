"""Claude Code (npm @anthropic-ai/claude-code), headless: it speaks Anthropic's Messages API.

    claude --print --model M --dangerously-skip-permissions --output-format stream-json --verbose
           --no-session-persistence --strict-mcp-config   (prompt on stdin)

`ANTHROPIC_BASE_URL` (the proxy's address) and `ANTHROPIC_API_KEY` (a placeholder) point it at the proxy (it asks
`/v1/messages`); its small background model (ANTHROPIC_DEFAULT_HAIKU_MODEL) is the same model, so every call it
makes is the run's model's, through the proxy and inside the budget. `--dangerously-skip-permissions` approves its
own tool calls ("for sandboxes with no internet access", as its help says; it refuses to as root, and the container
runs it as an unprivileged user). `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` with DISABLE_TELEMETRY,
DISABLE_ERROR_REPORTING and DISABLE_AUTOUPDATER turns off its telemetry, error reports and update checks. Its tools
write files (`Write`, `Edit`), read them, search and run shell commands in the workspace; its web tools find no
network.
References: https://docs.anthropic.com/en/docs/claude-code/settings (environment variables),
https://docs.anthropic.com/en/docs/claude-code/cli-reference (flags), and the pinned version's `--help`.
"""

from __future__ import annotations

from runner.agents.base import AgentTurn
from runner.agents.command import AgentCommand, ProxyAddress

__all__ = ["ClaudeCode"]


class ClaudeCode:
    name = "claude-code"

    def __init__(self, image: str) -> None:
        self.image = image

    def command(self, turn: AgentTurn, address: ProxyAddress) -> AgentCommand:
        argv = ["claude", "--print", "--model", address.model, "--dangerously-skip-permissions",
                "--output-format", "stream-json", "--verbose", "--no-session-persistence", "--strict-mcp-config"]
        env = {"ANTHROPIC_BASE_URL": address.base_url, "ANTHROPIC_API_KEY": address.api_key,
               "ANTHROPIC_MODEL": address.model, "ANTHROPIC_DEFAULT_HAIKU_MODEL": address.model,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
               "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1"}
        return AgentCommand(argv=argv, env=env, image=self.image, stdin=turn.prompt)
