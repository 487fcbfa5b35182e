"""A tall page reaches a served judge as full-width tiles: the shipped `judge=qwen2.5-vl-7b` config (its server takes
4 images per prompt) with its weights pointed at each tiny random vision model (tests/support/tiny_models.py,
TINY_VLMS: two made differently), served by the CPU vLLM build.

The request is read as it left the runner (a spy on the HTTP client the vLLM role talks through: the call still
goes to the real server) and from the server's access log (answered, not refused).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

from runner.config import JudgeConfig
from runner.judges.registry import build_judge
from runner.models import openai_provider
from tests.judges.test_llm import make_input, sent_images
from tests.support.tiny_models import (NO_VLLM_REASON, READY_TIMEOUT_S, TINY_VLMS, VLLM_PYTHON, served_server,
                                       tiny_model_dir)

pytestmark = [pytest.mark.vllm, pytest.mark.served, pytest.mark.slow,
              pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=NO_VLLM_REASON)]

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGE = (1280, 8000)


@pytest.mark.timeout(READY_TIMEOUT_S + 600)
@pytest.mark.parametrize("vlm", TINY_VLMS)
def test_a_tall_page_reaches_the_served_judge_as_full_width_tiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  vlm: str) -> None:
    config = yaml.safe_load((REPO_ROOT / "conf" / "judge" / "qwen2.5-vl-7b.yaml").read_text())
    server = config["options"]["model"]["server"]
    assert server["limit_mm_per_prompt"] == {"image": 4}  # the shipped server's image limit, which the tiles fit
    server.update(served_server(tiny_model_dir(vlm)), log_dir=str(tmp_path / "servers"))  # type: ignore[arg-type]
    config["options"]["max_attempts"] = 1  # one request: the one read below

    sent: list[list[dict[str, Any]]] = []
    generate = openai_provider.OpenAIModel.generate

    async def spy(self: Any, request: Any) -> Any:
        sent.append(request.messages)
        return await generate(self, request)

    monkeypatch.setattr(openai_provider.OpenAIModel, "generate", spy)

    judge_input = make_input(tmp_path / "evidence")
    Image.new("RGB", PAGE, (90, 120, 200)).save(tmp_path / "evidence" / "screenshot_full.png")
    judge_input.evidence.screenshot_full = "screenshot_full.png"

    async def score() -> Any:
        judge = build_judge(JudgeConfig(**config))
        try:
            return await judge.score(judge_input)
        finally:
            await judge.aclose()

    verdict = asyncio.run(score())  # JudgeError if the server refused it or its answer did not parse
    (messages,) = sent
    sizes = sent_images({"messages": messages})
    assert len(sizes) == 4 and all(width == PAGE[0] for width, _ in sizes), sizes  # full width, as many as taken
    texts = " ".join(part.get("text", "") for part in messages[-1]["content"] if isinstance(part, dict))
    assert f"of {PAGE[1]} px, full width)" in texts
    (tiled,) = [entry for entry in verdict.raw["request"]["images_fitted"] if entry["image"] == "screenshot_full.png"]
    assert tiled["fitted"] == "tiled" and tiled["page_size"] == list(PAGE) and tiled["tiles"] == 4
    log = "\n".join(path.read_text(errors="replace") for path in (tmp_path / "servers").glob("*.log"))
    assert log.count('/v1/chat/completions HTTP/1.1" 200') == 1 and " 400 Bad Request" not in log
