"""suite=micro / suite=macro end to end through the CLI (real Chromium, static sandbox), plus the payload."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from runner.models.base import GenerationRequest
from runner.models.oracle import IdentityModel
from runner.models.parse import parse_model_output
from runner.suites.web2code.observation import build_messages
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.suites.web2code.w2c_pages import write_two_pages

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("w2c")
    pages = write_two_pages(root / "pages")
    return pages, root / "cache", root


def _run(setup, name: str, *overrides: str) -> tuple[Path, list[dict], dict]:
    pages, cache, root = setup
    run_dir = root / name
    cmd = runner_command(*overrides, "tracking=off", "actor=none", f"suite.pages_path={pages}", "suite.turns=2",
                         f"suite.cache_dir={cache}", f"hydra.run.dir={run_dir}")
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    records = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    return run_dir, records, json.loads((run_dir / "summary.json").read_text())


def test_micro_oracle_scores_one_on_every_turn(setup):
    run_dir, records, summary = _run(setup, "micro-oracle", "suite=micro", "model=oracle")
    assert len(records) == 4
    for r in records:
        assert r["status"] == "ok" and r["passed"] is None, r
        assert r["scores"]["score"] == pytest.approx(1.0), r["scores"]
        assert r["scores"]["s_inbox"] == pytest.approx(1.0) and r["scores"]["s_outbox"] == pytest.approx(1.0)
    assert summary["score"] == pytest.approx(1.0) and summary["turn_pass"] is None
    table = summary["web2code"]["table3"]["chain"]
    assert set(table) >= {"layout", "elements", "text", "color", "spacing", "overall", "s_inbox", "s_outbox", "score"}
    assert [row["turn"] for row in summary["web2code"]["per_turn"]["chain"]] == [1, 2]
    # The model never sees a fingerprint (§3.2), and it is shown images plus the current files.
    for request in run_dir.glob("evidence/*/*/request.json"):
        text = request.read_text()
        assert "data-fp" not in text
        assert "### index.html" in text and "data:image/png;base64," in text


def test_micro_identity_preserves_but_does_not_repair(setup):
    _, records, summary = _run(setup, "micro-identity", "suite=micro", "model=identity")
    for r in records:
        # Nothing outside the footprint changed; eq. 11 as written still averages the SSIM windows that straddle
        # the footprint's edge, so S_outbox is high but below 1 (the guard-band option would give exactly 1).
        assert 0.85 < r["scores"]["s_outbox"] < 1.0, r["scores"]
        assert r["scores"]["s_inbox"] < 0.8, r["scores"]  # and nothing was repaired
    assert summary["score"] < 0.85
    assert summary["s_inbox"] < 0.7 and summary["s_outbox"] > 0.85


def test_macro_oracle_scores_one_with_the_ssim_fallback(setup):
    run_dir, records, summary = _run(setup, "macro-oracle", "suite=macro", "model=oracle", "judge=rules",
                                     "suite.mode=both")
    assert len(records) == 8  # two pages x two modes x two turns
    for r in records:
        assert r["scores"]["score"] == pytest.approx(1.0), r
        assert r["verdict"]["summary"].startswith("[ssim]")
    assert set(summary["web2code"]["per_turn"]) == {"chain", "independent"}
    assert all(row["gap"] == pytest.approx(0.0) for row in summary["web2code"]["chain_minus_independent"])
    assert list(run_dir.glob("evidence/*/*/crop_model.png"))


def test_identity_model_returns_the_payload_files_unchanged():
    files = {"index.html": "<!DOCTYPE html>\n<html><body><p>x</p></body></html>\n", "style.css": "p { color: red; }\n"}
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(buf, format="PNG")
    for vision in (True, False):
        messages = build_messages(track="macro", turn=1, turns=2, screenshot=buf.getvalue(), targets=[{}],
                                  boxes=[[1, 2, 30, 10]], files=files, assets=["img/a.svg"], vision=vision,
                                  crop_png=buf.getvalue(), region_text="Hello")
        answer = asyncio.run(IdentityModel().generate(GenerationRequest(task_id="x", turn=1, messages=messages)))
        parsed = parse_model_output(answer.text)
        assert {k: v.rstrip() for k, v in parsed.files.items()} == {k: v.rstrip() for k, v in files.items()}
        text = json.dumps(messages)
        assert ("image_url" in text) is vision
        assert ("x=1, y=2, width=30, height=10" in text) is (not vision)


def test_macro_caption_ablation_puts_the_models_caption_in_the_payload(setup):
    """§5.1 ablation: suite.caption=true asks the configured caption model about each golden crop (as an
    image) and adds its answer to the turn's observation."""
    from tests.support.fault_server import FaultServer, completion

    caption = "A three-column pricing band with a dark header and rounded cards."
    with FaultServer(lambda messages: (200, completion(caption))) as server:
        model = (f"{{name:captioner,provider:openai,model:captioner,base_url:'{server.base_url}',"
                 f"cache:false,max_retries:0}}")
        run_dir, records, _ = _run(setup, "macro-caption", "suite=macro", "model=oracle", "judge=rules",
                                   "suite.caption=true", f"+roles.caption={model}")
        requests = list(server.requests)
    assert requests, "the caption model was asked"
    content = requests[0]["messages"][0]["content"]
    assert any(part.get("type") == "image_url" for part in content), "the golden crop is sent as an image"
    payloads = [json.loads(path.read_text()) for path in run_dir.glob("evidence/*/*/request.json")]
    assert payloads and all(caption in json.dumps(payload) for payload in payloads)
    assert all(r["scores"]["score"] == pytest.approx(1.0) for r in records)
