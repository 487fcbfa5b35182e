"""Codex (npm @openai/codex), headless: it speaks the OpenAI Responses API, and only that (its chat-completions
wire API was removed), which the proxy translates (runner/agents/dialects/responses.py).

    codex exec --json --strict-config --skip-git-repo-check --ephemeral
               --dangerously-bypass-approvals-and-sandbox --color never -   (prompt on stdin)

Its configuration file (CODEX_HOME/config.toml, in its home) names a model provider of its own whose `base_url` is
the proxy's /v1, `wire_api = "responses"`, with the placeholder key in the variable `env_key` names, and no
retries of its own (the proxy retries the model; a refused call is final). `--strict-config` makes a key this
version does not know an error, not a silent no-op. Update checks, analytics and feedback reports are off, web
search is disabled, sub-agents are off, and so are the features that would offer the model tools no chat model
can serve (goals, apps, plugins, image generation, memories) and its endless wait for a network.
`--dangerously-bypass-approvals-and-sandbox` runs its commands without its own sandbox ("for environments that are
externally sandboxed", as its help says: the container is the sandbox; its bubblewrap could not start without the
privileges the container drops). Its tools run commands in
the workspace (`exec_command`) and write files with `apply_patch`, which it applies itself.
References: https://developers.openai.com/codex/config-reference and the pinned version's `exec --help` and
`features list`.
"""

from __future__ import annotations

import json

from runner.agents.base import AgentTurn
from runner.agents.command import HOME_INSIDE, AgentCommand, ProxyAddress

__all__ = ["Codex", "DISABLED_FEATURES", "config_toml"]

KEY_VARIABLE = "GENUI_PROXY_KEY"
# Features off: tools no chat model can serve (goals, apps, plugins, image generation, memories) and its endless
# waiting for a network it will never have (the proxy is on its loopback or nowhere).
DISABLED_FEATURES = ("goals", "apps", "plugins", "image_generation", "memories", "unbounded_connection_retries")


def _toml(value: object) -> str:
    """A TOML value: JSON's strings, numbers and booleans are TOML's too."""
    return json.dumps(value)


def config_toml(address: ProxyAddress) -> str:
    """Codex's config.toml pointing it at the proxy (module docstring)."""
    lines = [
        f"model = {_toml(address.model)}",
        'model_provider = "genui"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        "check_for_update_on_startup = false",
        'web_search = "disabled"',
        "",
        "[model_providers.genui]",
        'name = "genui-runner model proxy"',
        f"base_url = {_toml(address.openai_base_url)}",
        'wire_api = "responses"',
        f"env_key = {_toml(KEY_VARIABLE)}",
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "supports_websockets = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[feedback]",
        "enabled = false",
        "",
        "[agents]",  # no sub-agents
        "enabled = false",
        "",
        "[features]",
        *[f"{feature} = false" for feature in DISABLED_FEATURES],
    ]
    return "\n".join(lines) + "\n"


class Codex:
    name = "codex"

    def __init__(self, image: str) -> None:
        self.image = image

    def command(self, turn: AgentTurn, address: ProxyAddress) -> AgentCommand:
        argv = ["codex", "exec", "--json", "--strict-config", "--skip-git-repo-check", "--ephemeral",
                "--dangerously-bypass-approvals-and-sandbox", "--color", "never", "-"]
        env = {"CODEX_HOME": f"{HOME_INSIDE}/.codex", KEY_VARIABLE: address.api_key}
        return AgentCommand(argv=argv, env=env, home_files={".codex/config.toml": config_toml(address)},
                            image=self.image, stdin=turn.prompt)
