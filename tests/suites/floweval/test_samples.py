"""FlowEval §3.1's five generations per prompt are five independent requests, each its own answer, each replayed on
its own by the response cache.

A run of suite=floweval against a local OpenAI-compatible stand-in that counts what it is sent and answers each
generation request differently (text without files: each slot records its answer and stops before any build, so
the run stays cheap); then a second run on the same response cache, which must send the generator nothing and
give every slot back its own sample's answer.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from runner.run.experiment import run_experiment
from runner.compose import compose as compose_config
from runner.run.validation import validate_config
from runner.turns.evidence_folder import EvidenceFolder
from tests.conftest import REPO_ROOT
from tests.support.provider_standins import OpenAICompatibleRules, ProviderStandIn

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]  # the run opens its browsers and sandbox


def _run(server: ProviderStandIn, run_dir: Path, cache_dir: Path) -> list[dict[str, Any]]:
    raw = compose_config(["suite=floweval", "suite.task_ids=[shop]", "suite.flows=[checkout]",
                          "suite.featurizer=pixels", "actor=scripted", "model=local-openai",
                          f"model.base_url={server.origin}/v1", "model.temperature=1.0", "tracking=off",
                          f"cache_dir={cache_dir}"])
    raw["project_root"] = str(REPO_ROOT)
    asyncio.run(run_experiment(validate_config(raw), run_dir))
    return [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]


def _answers(run_dir: Path, records: list[dict[str, Any]]) -> dict[int, tuple[str, bool, int]]:
    """turn -> (the slot's answer, whether it came from the cache, the sample its request carried)."""
    found = {}
    for record in records:
        folder = EvidenceFolder(run_dir / record["evidence_dir"])
        (round_,) = json.loads((folder.path / EvidenceFolder.GENERATION).read_text())["rounds"]
        (request,) = folder.read_request_records(judging=False)
        found[record["turn"]] = (folder.raw_response.read_text(), round_["cached"], request["sample"])
    return found


def test_five_generations_are_five_requests_and_a_rerun_replays_each_sample(tmp_path: Path) -> None:
    numbers = itertools.count(1)

    def reply(body: dict[str, Any]) -> str:
        if "connection check" in json.dumps(body["messages"]):
            return '{"ok": true}'
        return f"generation {next(numbers)}, no files"

    cache = tmp_path / "cache"
    with ProviderStandIn(OpenAICompatibleRules(), reply=reply) as server:
        first = _run(server, tmp_path / "first", cache)
        generations = [body for body in server.bodies if "connection check" not in json.dumps(body["messages"])]
        sent_first = len(server.requests)
        second = _run(server, tmp_path / "second", cache)
        sent_second = len(server.requests) - sent_first

    assert sorted(record["turn"] for record in first) == [1, 2, 3, 4, 5]  # §3.1: five generations of the prompt
    assert len(generations) == 5 and sent_first == 6  # five generation requests, plus the live check's probe
    assert all(body["messages"] == generations[0]["messages"] for body in generations)  # one prompt
    assert all(body["temperature"] == 1.0 for body in generations)
    answers = _answers(tmp_path / "first", first)
    assert len({text for text, _, _ in answers.values()}) == 5  # each generation its own answer
    assert all(not cached for _, cached, _ in answers.values())
    assert {turn: sample for turn, (_, _, sample) in answers.items()} == {1: 0, 2: 1, 3: 2, 4: 3, 5: 4}
    assert all(record["status"] == "invalid_output" and record["model_responded"] for record in first)

    assert sent_second == 1  # the probe alone: every sample came from the cache
    replayed = _answers(tmp_path / "second", second)
    assert {turn: text for turn, (text, _, _) in replayed.items()} == \
        {turn: text for turn, (text, _, _) in answers.items()}  # each sample its own cached answer
    assert all(cached for _, cached, _ in replayed.values())
