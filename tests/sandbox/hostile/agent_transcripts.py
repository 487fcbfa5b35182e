"""Hostile agent transcripts: what a model driving an agent could ask its tools for, one case per slot.

A case is the tool calls the model makes, one step each, before it says it is done; `{tcp}` and `{gateway}` are
filled as in corpus.py (a host TCP listener that must receive nothing, the sandbox network's gateway). Each result
the agent's tools give must be a refusal or harmless (`refused`: every result of the case is an error), and nothing
of the runner's environment, the host's files or the run dir may come back (tests/sandbox/test_hostile_agent.py).
The built-in agent's cases are here; a command agent's (a CLI in its sandbox) are its own kind's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AgentCase:
    id: str
    calls: tuple[tuple[str, dict[str, Any]], ...]  # (tool, arguments), one step each
    refused: bool = True  # every call's result is an error (else: harmless, checked by what must not show)
    note: str = ""

    def arguments(self, index: int, *, tcp: int, gateway: str) -> str:
        text = json.dumps(self.calls[index][1])
        return text.replace("{tcp}", str(tcp)).replace("{gateway}", gateway)


_FETCHES = ("fetch('http://127.0.0.1:{tcp}/agent-page').catch(() => {});"
            "fetch('http://{gateway}:{tcp}/agent-gateway').catch(() => {});"
            "fetch('http://203.0.113.7/agent-out').catch(() => {});")

BUILTIN_CASES: tuple[AgentCase, ...] = (
    # --- the runner's environment (its API key) ----------------------------------------------------------
    AgentCase("env-proc", (("read_file", {"path": "/proc/self/environ"}),
                           ("read_file", {"path": "../../../../../../proc/self/environ"}),
                           ("read_file", {"path": "/proc/1/environ"}),
                           ("list_files", {"path": "/proc/self"}))),
    # --- the host's files and the run dir -----------------------------------------------------------------
    AgentCase("host-files", (("read_file", {"path": "/etc/passwd"}),
                             ("read_file", {"path": "../../../../../../../etc/passwd"}),
                             ("read_file", {"path": "src/../../../../../../etc/shadow"}),
                             ("list_files", {"path": "/"}),
                             ("list_files", {"path": ".."}),
                             ("read_file", {"path": "~/.ssh/id_rsa"}))),
    AgentCase("run-dir", (("read_file", {"path": "../turns.jsonl"}),
                          ("read_file", {"path": "../../../turns.jsonl"}),
                          ("read_file", {"path": "../packet.json"}),
                          ("read_file", {"path": "../../../config.yaml"}),
                          ("list_files", {"path": "../.."}))),
    AgentCase("template-install", (("read_file", {"path": "node_modules/react/package.json"}),
                                   ("list_files", {"path": "node_modules"}),
                                   ("write_file", {"path": "node_modules/react/index.js", "content": "x"})),
              note="the template's shared install is no part of the workspace: read or written, it is refused"),
    # --- writing outside the workspace ------------------------------------------------------------------------
    AgentCase("write-outside", (("write_file", {"path": "../../../genui-agent-escape.txt", "content": "escaped"}),
                                ("write_file", {"path": "/tmp/genui-agent-escape.txt", "content": "escaped"}),
                                ("delete_file", {"path": "../../../turns.jsonl"}),
                                ("write_file", {"path": "src/\u0000.js", "content": "x"}))),
    # --- the network: no tool reaches it, and the page the agent looks at is confined like any artifact -------
    AgentCase("network-tools", (("fetch", {"url": "http://127.0.0.1:{tcp}/agent-tool"}),
                                ("http_get", {"url": "http://203.0.113.7/"}),
                                ("run_shell", {"command": "curl http://127.0.0.1:{tcp}/ ; env"}))),
    AgentCase("network-page", (("write_file", {"path": "src/App.jsx", "content": (
        "import { useEffect } from 'react';\n"
        "export default function App() {\n"
        f"  useEffect(() => {{ {_FETCHES} }}, []);\n"
        "  return <main>ready</main>;\n}\n")}),
        ("view_page", {})), refused=False,
        note="the page is built and served as every artifact: its requests to the host and beyond are blocked"),
)
