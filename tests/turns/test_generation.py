"""Generation strategies: single_pass makes one call and records it as one round."""

from __future__ import annotations

import asyncio
import json

import pytest

from runner.turns.generation import STRATEGIES, BuildCheck, SinglePass, build_strategy
from runner.models.base import ModelResponse


class NoBuilds:
    """GenerationTools for a strategy that must not build."""

    task_id = "t"
    turn = 1

    async def build(self, text: str) -> BuildCheck:
        raise AssertionError("single_pass builds nothing itself")


def test_single_pass_is_one_round_of_the_payload() -> None:
    seen: list[list[dict]] = []

    async def call(messages: list[dict]) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(text="answer", usage={"prompt_tokens": 3, "completion_tokens": 2})

    payload = [{"role": "user", "content": "build it"}]
    generation = asyncio.run(SinglePass().generate(payload, call, NoBuilds()))
    assert seen == [payload]
    assert generation.strategy == "single_pass" and [r.index for r in generation.rounds] == [1]
    assert generation.final.text == "answer" and generation.usage == {"prompt_tokens": 3, "completion_tokens": 2}
    assert generation.builds == []


def test_unknown_strategy_lists_the_choices() -> None:
    assert sorted(STRATEGIES) == ["self_repair", "single_pass"]  # self_repair: declared by runner.suites.iwebgen
    with pytest.raises(ValueError, match=r"unknown generation strategy 'nope'; choose from \['self_repair', 'single_pass'\]"):
        build_strategy("nope")


def test_a_declared_strategy_is_built_by_name() -> None:
    strategy = build_strategy("self_repair")
    assert strategy.name == "self_repair" and strategy.rounds == 5  # type: ignore[attr-defined]


def test_every_round_its_request_answer_and_build_log_are_written(tmp_path) -> None:
    from runner.turns.engine import _write_generation
    from runner.turns.evidence_folder import EvidenceFolder
    from runner.turns.generation import Generation, GenerationRound
    from runner.sandbox.base import BuildResult

    payload = [{"role": "user", "content": "build it"}]
    repair = [*payload, {"role": "user", "content": "fix it"}]
    failed = BuildCheck(text="a", ok=False, log="error TS1005", files={"src/App.jsx": "("},
                        build=BuildResult("build_failed", log="error TS1005"))
    unparsable = BuildCheck(text="b", ok=False, log="the answer holds no parsable files: empty", files={})
    generation = Generation("self_repair", [
        GenerationRound(1, "answer", payload, ModelResponse(text="a"), 1.0, check=failed),
        GenerationRound(2, "repair", repair, ModelResponse(text="b"), 1.0, check=unparsable),
    ])
    folder = EvidenceFolder(tmp_path)
    _write_generation(folder, generation, payload=payload)
    written = json.loads((tmp_path / "generation.json").read_text())["rounds"]
    assert [(r["request"], r["raw_response"], r["built"], r["build_log"]) for r in written] == [
        ("request.json", "raw_response.round1.txt", False, "build.round1.log"),
        ("request.round2.json", "raw_response.txt", False, "build.round2.log"),  # never built: no build.log
    ]
    assert (tmp_path / "build.round1.log").read_text() == "error TS1005"
    assert json.loads((tmp_path / "request.round2.json").read_text())["messages"] == repair
    assert generation.builds == [False, False]
