"""`python -m runner.reward serve` end to end on loopback: the rewards of a full run's answers equal its scores
over HTTP too (a held episode and a passed state), back-pressure when the queue is full, named errors, health,
readiness and the OpenAPI description."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from tests.conftest import REPO_ROOT, cli_env
from tests.reward.conftest import SMOKE
from tests.reward.runs import answer_of, assert_same_score, requirement_share

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox, pytest.mark.timeout(1200)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, subprocess.Popen[str], Path]]:
    port = _free_port()
    log = tmp_path_factory.mktemp("reward-http") / "server.log"
    # One answer scored at a time and none waiting: a second concurrent answer is refused.
    process = subprocess.Popen([sys.executable, "-m", "runner.reward", "serve", *SMOKE, "tracking=off",
                                "concurrency.episodes=1", "--port", str(port), "--queue-size", "0"],
                               cwd=REPO_ROOT, env=cli_env(), stdout=log.open("w"), stderr=subprocess.STDOUT,
                               text=True)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300)
    try:
        deadline = time.monotonic() + 300
        while True:
            assert process.poll() is None, log.read_text()[-4000:]
            try:
                if client.get("/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the service did not become ready"
            time.sleep(1)
        yield client, process, log
    finally:
        client.close()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_rewards_over_http_equal_the_runs_scores(server, smoke_run) -> None:
    client, _, _ = server
    run_dir, records = smoke_run
    episode = client.post("/v1/episodes", json={"task_id": "smoke-counter"})
    assert episode.status_code == 201 and episode.json()["next_turn"] == 1
    episode_id = episode.json()["episode_id"]
    state = None
    for record in records:
        answer = answer_of(run_dir, record)
        held = client.post("/v1/score", json={"task_id": "smoke-counter", "answer": answer, "episode_id": episode_id})
        passed = client.post("/v1/score", json={"task_id": "smoke-counter", "answer": answer, "turn": record["turn"],
                                                "state": state})
        for response in (held, passed):
            assert response.status_code == 200, response.text
            assert_same_score(response.json(), record)
            assert response.json()["reward"] == requirement_share(record)
        state = passed.json()["state"]
    assert client.get(f"/v1/episodes/{episode_id}").json()["next_turn"] == 4
    assert client.delete(f"/v1/episodes/{episode_id}").status_code == 204
    assert client.get(f"/v1/episodes/{episode_id}").status_code == 404


def test_a_full_queue_answers_429_with_retry_after(server, smoke_run) -> None:
    client, _, _ = server
    run_dir, records = smoke_run
    body = {"task_id": "smoke-counter", "answer": answer_of(run_dir, records[0])}
    first: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: first.update(response=client.post("/v1/score", json=body)))
    worker.start()
    deadline = time.monotonic() + 30
    while client.get("/readyz").status_code == 200:  # until the first answer is admitted
        assert time.monotonic() < deadline
        time.sleep(0.05)
    refused = client.post("/v1/score", json=body)
    worker.join(300)
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1, refused.text
    assert "queue is full" in refused.json()["detail"]
    assert first["response"].status_code == 200
    assert client.get("/readyz").status_code == 200  # room again


def test_bad_requests_are_named(server) -> None:
    client, _, _ = server
    unknown = client.post("/v1/score", json={"task_id": "no-such-task", "answer": ""})
    assert unknown.status_code == 404 and "no-such-task" in unknown.json()["detail"]
    assert "smoke-counter" in unknown.json()["detail"]  # the known ids are listed
    turn = client.post("/v1/score", json={"task_id": "smoke-counter", "answer": "", "turn": 7})
    assert turn.status_code == 404 and "1..3" in turn.json()["detail"]
    for body, field in (({"task_id": "smoke-counter", "answer": 5}, "answer"), ({"task_id": "smoke-counter"}, "answer"),
                        ({"task_id": "smoke-counter", "answer": "", "turn": 0}, "turn"),
                        ({"task_id": "smoke-counter", "answer": "", "state": {"files": 3}}, "state")):
        malformed = client.post("/v1/score", json=body)
        assert malformed.status_code == 422, malformed.text
        assert any(field in error["loc"] for error in malformed.json()["detail"]), malformed.text
    episode = client.post("/v1/score", json={"task_id": "smoke-counter", "answer": "", "episode_id": "nope"})
    assert episode.status_code == 404 and "episode_id 'nope'" in episode.json()["detail"]


def test_empty_answer_is_the_invalid_bucket(server) -> None:
    client, _, _ = server
    response = client.post("/v1/score", json={"task_id": "smoke-counter", "answer": ""})
    assert response.status_code == 200
    assert {k: response.json()[k] for k in ("status", "reward", "built")} == \
        {"status": "invalid_output", "reward": 0.0, "built": False}


def test_health_readiness_and_openapi(server) -> None:
    client, _, _ = server
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json()["ready"] is True
    spec = client.get("/openapi.json").json()
    assert {"/v1/score", "/v1/score_many", "/v1/prompt", "/v1/tasks", "/v1/episodes", "/healthz", "/readyz"} \
        <= set(spec["paths"])
    assert {"reward", "status", "scores", "requirements", "state"} <= set(spec["components"]["schemas"]["Reward"]["properties"])
    assert "429" in spec["paths"]["/v1/score"]["post"]["responses"]
    tasks = client.get("/v1/tasks").json()
    assert [task["id"] for task in tasks] == ["smoke-counter"] and tasks[0]["turns"] == 3
    prompt = client.post("/v1/prompt", json={"task_id": "smoke-counter", "turn": 1}).json()
    assert "Counter" in str(prompt["messages"]) and "reference" not in str(prompt["messages"]).lower()


def test_the_server_stops_cleanly_on_sigterm(server) -> None:
    _, process, log = server
    process.send_signal(signal.SIGTERM)
    assert process.wait(120) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
    assert "Application shutdown complete" in log.read_text()  # the service closed its browsers and sandbox
