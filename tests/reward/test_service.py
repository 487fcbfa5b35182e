"""The Python API gives, for an answer, the score a full run records for the same answer: smoke's checks (rules
judge), MT-Web2Code micro (eqs. 9-12, chained turns) and I-WebGenBench (build, IR, rule and stability points).

Each suite: one full run through the command line, then the reward service opened with the same overrides scores
each slot's recorded answer (raw_response.txt), chaining the turns by the returned state or a held episode."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from runner.reward.compose import compose_config
from runner.reward.episodes import EpisodeTurnError
from runner.reward.service import RewardService, ScoreRequest, UnknownTask, UnknownTurn
from tests.conftest import REPO_ROOT
from tests.reward.conftest import SMOKE
from tests.reward.runs import answer_of, assert_same_score, full_run, requirement_share
from tests.suites.web2code.w2c_pages import write_two_pages

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox, pytest.mark.timeout(1800)]



def _open(*overrides: str):
    return RewardService.open(compose_config(["tracking=off", *overrides], project_root=REPO_ROOT))


async def _score_chain(service: RewardService, run_dir: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each task's turns in order, each continuing from the state the previous reward returned."""
    rewards, state, task_id = [], None, None
    for record in records:
        if record["task_id"] != task_id:
            state, task_id = None, record["task_id"]
        reward = await service.score(record["task_id"], record["turn"], answer_of(run_dir, record), state=state)
        rewards.append(reward.model_dump(mode="json"))
        state = reward.state
    return rewards


@pytest.fixture(scope="module")
def smoke(smoke_run: tuple[Path, list[dict[str, Any]]]) -> dict[str, Any]:
    run_dir, records = smoke_run

    async def score() -> dict[str, Any]:
        async with _open(*SMOKE) as service:
            chained = await _score_chain(service, run_dir, records)
            episode = service.open_episode("smoke-counter")
            held = [(await service.score("smoke-counter", None, answer_of(run_dir, record),
                                         episode_id=episode.id)).model_dump(mode="json") for record in records]
            batch = await service.score_many([ScoreRequest("smoke-counter", answer_of(run_dir, records[0])),
                                               ScoreRequest("smoke-counter", "", keep_evidence=True)])
            kept = Path(batch[1].evidence_dir)  # read while the service's work dir exists
            evidence = {"raw": (kept / "raw_response.txt").read_text(), "packet": (kept / "packet.json").is_file()}
            kept_good = await service.score("smoke-counter", 1, answer_of(run_dir, records[0]), keep_evidence=True)
            shots = {"lean": service.lean_evidence, "reward": kept_good.model_dump(mode="json"),
                     "files": sorted(p.name for p in Path(kept_good.evidence_dir).glob("*.png"))
                     + sorted(p.name for p in Path(kept_good.evidence_dir).glob("dom.html"))}
            errors = []
            for call in (lambda: service.score("no-such-task", 1, ""), lambda: service.score("smoke-counter", 4, ""),
                         lambda: service.score("smoke-counter", 2, "", state=chained[1]["state"]),
                         lambda: service.score("smoke-counter", None, "", episode_id=episode.id)):
                with pytest.raises((UnknownTask, UnknownTurn, EpisodeTurnError)) as caught:
                    await call()
                errors.append(str(caught.value))
            return {"chained": chained, "held": held, "batch": batch, "errors": errors, "evidence": evidence,
                    "shots": shots}

    return {"records": records, **asyncio.run(score())}


def test_smoke_check_rewards_equal_the_runs_scores(smoke: dict[str, Any]) -> None:
    records = smoke["records"]
    assert [r["status"] for r in records] == ["ok"] * 3
    for reward, record in zip(smoke["chained"], records, strict=True):
        assert_same_score(reward, record)
        assert reward["reward"] == requirement_share(record) == 1.0
        assert reward["evidence_dir"] is None  # not asked for: removed


def test_a_held_episode_chains_like_the_passed_state(smoke: dict[str, Any]) -> None:
    for reward, record in zip(smoke["held"], smoke["records"], strict=True):
        assert_same_score(reward, record)
        assert reward["episode_id"] is not None


def test_score_many_scores_each_answer_and_an_empty_answer_is_the_invalid_bucket(smoke: dict[str, Any]) -> None:
    good, empty = smoke["batch"]
    assert_same_score(good.model_dump(mode="json"), smoke["records"][0])
    assert (empty.status, empty.reward, empty.built) == ("invalid_output", 0.0, False)
    assert smoke["evidence"] == {"raw": "", "packet": True}  # kept when asked for


def test_lean_evidence_leaves_out_only_files_nothing_reads(smoke: dict[str, Any]) -> None:
    """The rules judge and the smoke suite read no screenshot or DOM file: calls without keep_evidence capture none
    (the rewards above equal the run's all the same); a call that keeps its evidence has them, and the same score."""
    shots = smoke["shots"]
    assert shots["lean"] is True
    assert shots["files"] == ["screenshot.png", "screenshot_full.png", "dom.html"]
    assert_same_score(shots["reward"], smoke["records"][0])


def test_bad_task_turn_and_state_are_named(smoke: dict[str, Any]) -> None:
    unknown, turn, state, done = smoke["errors"]
    assert "task_id 'no-such-task'" in unknown and "smoke-counter" in unknown
    assert "turn 4" in turn and "1..3" in turn
    assert "state.next_turn 3" in state
    assert "every turn" in done


@pytest.fixture(scope="module")
def micro(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("reward-micro")
    overrides = ("suite=micro", "actor=none", f"suite.pages_path={write_two_pages(root / 'pages')}", "suite.turns=2",
                 f"suite.cache_dir={root / 'cache'}", "browser.memory_mb=1024")
    records = full_run(root / "run", *overrides, "model=identity")

    async def score() -> tuple[list[dict[str, Any]], bool]:
        async with _open(*overrides) as service:
            return await _score_chain(service, root / "run", records), service.lean_evidence

    rewards, lean = asyncio.run(score())
    return {"records": records, "rewards": rewards, "lean": lean}


def test_micro_pixel_rewards_equal_the_runs_scores(micro: dict[str, Any]) -> None:
    assert len(micro["records"]) == 4
    for reward, record in zip(micro["rewards"], micro["records"], strict=True):
        assert_same_score(reward, record)
        assert reward["reward"] == pytest.approx(record["scores"]["score"], abs=1e-12)
        assert {"s_inbox", "s_outbox", "score"} <= set(reward["scores"])  # MT-Web2Code eqs. 9-12
        assert any(key.startswith("dim_") for key in reward["scores"])  # per dimension
        assert 0.0 < reward["reward"] < 0.9  # the identity preserves but does not repair


def test_micro_calls_capture_no_page_files_its_scoring_renders_its_own(micro: dict[str, Any]) -> None:
    assert micro["lean"] is True  # and the rewards above equal the run's, which captured them


def test_a_suite_or_judge_that_may_read_the_page_files_keeps_them() -> None:
    from types import SimpleNamespace

    from runner.judges.base import JudgeBase
    from runner.judges.rules import RulesJudge
    from runner.reward.service import page_files_read
    from runner.suites.base import SuiteBase

    class Reads(SuiteBase):  # a suite that does not say: it may
        pass

    class ReadsNone(SuiteBase):
        reads_page_files = False

    assert page_files_read(ReadsNone(), SimpleNamespace(judge=RulesJudge())) is False
    assert page_files_read(Reads(), SimpleNamespace(judge=RulesJudge())) is True
    class Judge(JudgeBase):  # a judge that does not say: it may
        name = "llm"

    assert page_files_read(ReadsNone(), SimpleNamespace(judge=Judge())) is True


@pytest.fixture(scope="module")
def iwebgen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    overrides = ("suite=iwebgen", "suite.limit=1", "judge=rules", "actor=probe", "browser.memory_mb=1024")
    run_dir = tmp_path_factory.mktemp("reward-iwebgen") / "run"
    records = full_run(run_dir, *overrides, "model=oracle")

    async def score() -> list[dict[str, Any]]:
        async with _open(*overrides) as service:
            return await _score_chain(service, run_dir, records)

    return {"records": records, "rewards": asyncio.run(score())}


def test_iwebgen_rewards_equal_the_runs_scores(iwebgen: dict[str, Any]) -> None:
    (reward,), (record,) = iwebgen["rewards"], iwebgen["records"]
    assert_same_score(reward, record)
    assert reward["built"] and reward["dimensions"]["rule"]["score"] == 5.0  # B.1 rule & stability
    assert reward["reward"] == record["scores"]["interaction_rate"] > 0  # §3.2 IR under judge=rules
    assert reward["dimensions"]["visual"]["score"] is None  # the judged points: unassessed, never guessed
