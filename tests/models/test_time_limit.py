"""The model-call time limit fits the output cap of the model it calls (runner/models/time_limit.py).

Hand-computed: limit = max(300, 120 + max_tokens / 20). A slow but healthy generation of 400 s (a 32,768-token cap
at 20 tokens/s is 1,638 s of decoding) is an answer, not `provider_error` (e = 0 of EvoGenUI-Bench §4.3), under
the paper's cap. The engine's own clock runs on a virtual-time event loop, so 400 s pass in milliseconds; the
fault (a server that takes 400 s to answer) is the only fake.
"""

from __future__ import annotations

import asyncio
import selectors
from pathlib import Path
from typing import Any

import pytest

from runner.turns.engine import Engine, Services, SlotLimits
from runner.judges.registry import build_judge
from runner.models.base import GenerationRequest, ModelBase, ModelResponse
from runner.models.openai_provider import OpenAIModelSettings
from runner.models.time_limit import generation_time_limit_s
from runner.turns.records import FailureBucket, ModelCall, RunDirectory
from runner.suites.base import EpisodeState
from runner.suites.registry import build_suite
from runner.run.validation import validate_config
from tests.test_presets import composed


def test_the_rule_by_hand() -> None:
    assert generation_time_limit_s(32768) == pytest.approx(120 + 32768 / 20) == pytest.approx(1758.4)
    assert generation_time_limit_s(16384) == pytest.approx(939.2)
    assert generation_time_limit_s(4096) == pytest.approx(324.8)
    assert generation_time_limit_s(1024) == 300.0  # never below the old fixed limit
    assert generation_time_limit_s(None) == 300.0  # replay providers


def test_the_run_limits_follow_the_generators_cap_unless_given() -> None:
    config = validate_config(composed("model=qwen3-coder"))  # App. D.1's 32,768-token cap
    assert config.model_timeout_s == pytest.approx(1758.4)
    assert config.turn_timeout_s == pytest.approx(1758.4 + 600)
    explicit = validate_config(composed("model=qwen3-coder", "model_timeout_s=300", "turn_timeout_s=900"))
    assert (explicit.model_timeout_s, explicit.turn_timeout_s) == (300, 900)
    assert validate_config(composed("model_timeout_s=450")).turn_timeout_s == 1050  # the rest of the turn: 600 s


def test_one_http_attempt_fits_the_cap_too() -> None:
    settings = OpenAIModelSettings(name="m", model="m", base_url="http://127.0.0.1:1/v1", max_tokens=32768)
    assert settings.attempt_timeout_s == pytest.approx(1758.4)
    assert settings.model_copy(update={"timeout_s": 60.0}).attempt_timeout_s == 60.0
    run = validate_config(composed("model=local-openai", "model.max_tokens=32768", "model.timeout_s=2000"))
    assert run.model_timeout_s == 2000  # a longer per-attempt limit is never cut by the run's


class _VirtualClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock jumps to the next timer whenever nothing is ready: sleeps and timeouts of
    hundreds of seconds take no real time, in the order real time would give them."""

    def __init__(self) -> None:
        super().__init__(selectors.DefaultSelector())
        self._skipped = 0.0
        real_select = self._selector.select

        def select(timeout: float | None = None) -> list[Any]:
            events = real_select(0 if timeout is None else min(timeout, 0.01))
            if not events and timeout is not None and timeout > 0.01:
                self._skipped += timeout
            return events

        self._selector.select = select  # type: ignore[method-assign]

    def time(self) -> float:
        return super().time() + self._skipped


class _SlowHealthyServer(ModelBase):
    """Answers every request after `seconds` (on the loop's clock): a loaded but working server."""

    name = "slow-healthy"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        await asyncio.sleep(self.seconds)
        return ModelResponse(text="an answer without the output contract's files", latency_s=self.seconds)

    async def aclose(self) -> None:
        return None


def _first_slot(tmp_path: Path, *overrides: str, seconds: float) -> Any:
    config = validate_config(composed("model=qwen3-coder", "suite.limit=1", "concurrency.judge_calls=1", *overrides))
    suite = build_suite(config.suite, project_root=Path(config.project_root))
    loop = _VirtualClockLoop()
    try:
        tasks = loop.run_until_complete(suite.load_tasks())
        services = Services(model=_SlowHealthyServer(seconds), sandbox=None, actor=None,  # type: ignore[arg-type]
                            judge=build_judge(config.judge), browsers=None, tracker=None)  # type: ignore[arg-type]
        engine = Engine(config, suite, services, RunDirectory(tmp_path))

        async def slot() -> Any:
            limits = SlotLimits(*(asyncio.Semaphore(1) for _ in range(4)))
            started = loop.time()
            outcome = await engine._run_slot(tasks[0], tasks[0].turns[0], EpisodeState(), limits)
            return outcome.record, loop.time() - started

        return loop.run_until_complete(slot())
    finally:
        loop.close()


def test_a_400_s_healthy_generation_is_an_answer_not_a_provider_error(tmp_path: Path) -> None:
    record, waited = _first_slot(tmp_path, seconds=400)
    assert waited >= 400  # the answer really took 400 s of the engine's clock
    assert record.status is FailureBucket.INVALID_OUTPUT  # the server's answer, judged on its content
    assert record.model_call is ModelCall.ANSWERED and not record.provider_failed


def test_the_old_fixed_limit_made_it_a_provider_error(tmp_path: Path) -> None:
    record, _ = _first_slot(tmp_path, "model_timeout_s=300", seconds=400)  # the explicit option: as given
    assert record.status is FailureBucket.PROVIDER_ERROR and record.provider_failed
