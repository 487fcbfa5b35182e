"""`suite=macro suite.caption=true` with a REAL vLLM-CPU caption model (a tiny random Llama) composed as
`+model@roles.caption=<conf/model name>`: the run's role machinery starts the caption role's server before the
tasks load (MT-Web2Code §5.1 captions are part of them), the suite asks it through the role it declared, and
the server is stopped when the run ends.

The tiny Llama is text-only, so the server itself refuses the golden crop ("not a multimodal model", HTTP 400):
the proof that the crop reached the caption role's own server, and a run that fails on it must still stop that
server. A caption model that answers, through the same role, is tests/suites/web2code/test_suite.py's."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT, cli_env
from tests.models.test_vllm_server import (READY_TIMEOUT_S, VLLM_PYTHON, _processes_mentioning,  # noqa: F401
                                           _server_block, tiny_model_dir)
from tests.suites.web2code.w2c_pages import write_two_pages

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.browser]


@pytest.mark.timeout(READY_TIMEOUT_S + 900)
def test_macro_starts_its_vllm_caption_model_through_the_run_roles(tiny_model_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    served = f"tiny-caption-{uuid.uuid4().hex[:8]}"
    caption = {"name": "tiny-caption", "provider": "vllm", "max_tokens": 16, "temperature": 0.0, "timeout_s": 300,
               "max_retries": 1, "cache": False, "server": _server_block(tiny_model_dir, served)}
    conf = tmp_path / "conf" / "model"
    conf.mkdir(parents=True)
    (conf / "tiny-caption.yaml").write_text(yaml.safe_dump(caption))
    pages = write_two_pages(tmp_path / "pages")
    run_dir = tmp_path / "run"
    overrides = [f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "suite=macro", "model=oracle", "judge=rules",
                 "suite.caption=true", "+model@roles.caption=tiny-caption",
                 f"suite.pages_path={pages}", "suite.limit=1", "suite.turns=1", f"suite.cache_dir={tmp_path / 'cache'}",
                 f"hydra.run.dir={run_dir}", "tracking=off", "concurrency.browsers=1"]
    result = subprocess.run([sys.executable, "-m", "runner", *overrides], cwd=REPO_ROOT, env=cli_env(),
                            capture_output=True, text=True, timeout=READY_TIMEOUT_S + 600)
    logs = list((run_dir / "servers").glob("tiny-caption-*.log")) if (run_dir / "servers").is_dir() else []
    assert len(logs) == 1, result.stderr[-3000:]  # started by the run, its log in the run dir
    log = logs[0].read_text(errors="replace")
    assert "Application startup complete" in log and "/v1/chat/completions" in log  # and asked
    assert result.returncode != 0 and "tiny-caption: HTTP 400" in result.stderr, result.stderr[-3000:]
    assert "is not a multimodal model" in result.stderr  # the caption server's own answer to the crop image
    assert not (run_dir / "turns.jsonl").exists()  # captions come before any turn
    assert _processes_mentioning(served) == []  # stopped with the run
