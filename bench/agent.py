"""An agent slot's harness overhead against a single-call slot's, on the smoke suite, in one run.

    .venv/bin/python bench/agent.py [--repeats 1] [--with-tools]

Both answer every smoke turn with its reference app from a scripted OpenAI-compatible server on 127.0.0.1 (the
model's own time is then the round trip alone), through the real engine in-process (`sandbox=local`, probe actor,
rules judge, tracking off, one episode at a time):

- single: `agent=none`, one chat completion per turn whose text is the answer;
- agent: `agent=builtin`, the same files written through the agent's tools: one call that writes them, one that
  says it is done (two model calls through the model proxy, the workspace seeded and read back);
- agent+tools (`--with-tools`): the agent also builds its workspace and looks at the page before it is done
  (work a single call never does: reported beside, not held to the goal).

A slot's harness overhead is everything but the model's own time and the judge's work:
`total - model calls - judge - checks`, the model calls being the generation call's time for a single call and
the proxy's upstream time (`extra.agent.model_seconds`) for an agent. Prints each scenario's medians and the
difference, and the agent's own work besides its model calls (seeding and reading back the workspace, the proxy,
its tools: `extra.agent.seconds - model_seconds`), the part of the difference the other stages' noise does not
blur; goal: an agent slot's median overhead within 2 s of a single-call slot's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.experiment import run_quietly  # noqa: E402
from runner.models.parse import render_json_output  # noqa: E402
from runner.suites.native import load_native_tasks  # noqa: E402

GOAL_EXTRA_S = 2.0
USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


def _references() -> dict[str, dict[str, str]]:
    """Each smoke turn's request -> its reference files."""
    found = {}
    for task in load_native_tasks(REPO / "tasks" / "smoke", suite="smoke"):
        for turn in task.turns:
            found[" ".join(turn.prompt.split())] = dict(turn.reference_files or {})
    return found


REFERENCES = _references()


def _request_files(messages: list[dict[str, Any]]) -> dict[str, str]:
    contents = [message.get("content") for message in messages]
    text = " ".join(" ".join(content if isinstance(content, str) else "" for content in contents).split())
    # The current request comes last in the payload (earlier turns' requests are in its history).
    found = max(((text.rfind(prompt), files) for prompt, files in REFERENCES.items()), key=lambda item: item[0])
    if found[0] < 0:
        raise ValueError("no smoke turn's request in the messages")
    return found[1]


def _completion(content: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {"id": "bench", "object": "chat.completion", "created": int(time.time()), "model": "bench", "usage": USAGE,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": f"call-{uuid.uuid4().hex[:8]}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def answer(body: dict[str, Any], *, with_tools: bool) -> dict[str, Any]:
    """The scripted model: the reference app as the answer's text (no tools asked) or through the agent's tools."""
    messages = body.get("messages") or []
    files = _request_files(messages)
    if not body.get("tools"):
        return _completion(render_json_output("Here is the app.", files))
    script = [[_call("write_file", path=path, content=content) for path, content in files.items()]]
    if with_tools:
        script += [[_call("run_build")], [_call("view_page")]]
    step = sum(1 for message in messages if message.get("role") == "assistant")
    return _completion("", script[step]) if step < len(script) else _completion("Done.")


class ScriptedServer:
    def __init__(self, *, with_tools: bool) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                data = json.dumps(answer(body, with_tools=outer.with_tools)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.with_tools = with_tools
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ScriptedServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


SCENARIOS = {"single": (["agent=none"], False), "agent": (["agent=builtin"], False),
             "agent+tools": (["agent=builtin"], True)}


def slot_seconds(record: dict[str, Any]) -> tuple[float, float, float, float]:
    """(total, the model calls' own seconds, the harness overhead, the agent's own work besides its model calls)
    of one slot; the last is 0 for a single call."""
    timings = record["timings"]
    agent = (record.get("extra") or {}).get("agent")
    model = float(agent["model_seconds"]) if agent else timings.get("model", 0.0)
    overhead = timings["total"] - model - timings.get("judge", 0.0) - timings.get("checks", 0.0)
    own = float(agent["seconds"]) - model if agent else 0.0
    return timings["total"], model, overhead, own


def run(scenario: str, repeats: int, scratch: Path) -> list[tuple[float, float, float, float]]:
    overrides, with_tools = SCENARIOS[scenario]
    found = []
    for repeat in range(repeats):
        with ScriptedServer(with_tools=with_tools) as server:
            records = run_quietly(["model=local-openai", f"model.base_url={server.base_url}", "model.cache=false",
                                   "suite=smoke", "judge=rules", "actor=probe", "sandbox=local", "tracking=off",
                                   "concurrency.episodes=1", "run.live_check=false", *overrides],
                                  scratch / f"{scenario}-{repeat}")
        failed = [f"{r['task_id']}/{r['turn']}: {r['status']} {r['error'][:200]}" for r in records
                  if r["status"] != "ok" or not r["passed"]]
        if failed:
            raise SystemExit(f"{scenario}: turns did not pass, the figures would not be a working turn's: {failed}")
        found += [slot_seconds(record) for record in records]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--with-tools", action="store_true", help="also the agent that builds and looks at its page")
    args = parser.parse_args()
    scenarios = ["single", "agent", *(["agent+tools"] if args.with_tools else [])]
    medians: dict[str, tuple[float, float, float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as scratch:
        for scenario in scenarios:
            slots = run(scenario, args.repeats, Path(scratch))
            medians[scenario] = tuple(statistics.median(values) for values in zip(*slots))  # type: ignore[assignment]
            total, model, overhead, own = medians[scenario]
            print(f"{scenario:12s} {len(slots)} slots: median total {total:.2f} s, model calls {model:.3f} s, harness "
                  f"overhead {overhead:.2f} s" + (f" (the agent's own work: {own:.2f} s)" if scenario != "single"
                                                   else ""))
    base = medians["single"][2]
    for scenario in scenarios[1:]:
        extra = medians[scenario][2] - base
        held = " (goal: within %.1f s: %s)" % (GOAL_EXTRA_S, "met" if extra <= GOAL_EXTRA_S else "NOT met") \
            if scenario == "agent" else " (its own builds and page views; no goal)"
        print(f"{scenario} slot overhead - single-call slot overhead: {extra:+.2f} s{held}")


if __name__ == "__main__":
    main()
