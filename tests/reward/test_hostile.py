"""Hostile answers through the reward service are contained as in a run: cases of the hostile corpus
(tests/sandbox/hostile/corpus.py) - a page that tries to send data to the host's ports and the world, a build that
forks without end or leaves links to host files, pages that forge the harness's evidence to pass a check they fail,
pages that leave late, hang on reload or load 200 refused frames, dialogs on every click, an app compiling at run
time - land in the buckets a run records for them, with the corpus's own evidence checks and the same reward, and
the host's listeners receive nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from runner.reward.compose import compose_config
from runner.reward.service import RewardService, ScoreRequest
from tests.conftest import REPO_ROOT
from tests.sandbox import test_hostile as corpus_run
from tests.sandbox.hostile.corpus import CASES

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox, pytest.mark.timeout(900)]

CHOSEN = ("exfil-requests", "build-fork-bomb", "build-symlinks", "forged-readers-redefined",
          "forged-mutation-observer", "forged-native-getters", "runtime-compiled", "dialogs-counter", "navigate-later",
          "hangs-on-reload", "frames-elsewhere")
FORGED = [name for name in CHOSEN if name.startswith("forged-")]


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("reward-hostile")
    cases = [case for case in CASES if case.id in CHOSEN]
    tasks = corpus_run._task_set(tmp / "tasks", tuple(cases))  # the corpus run's own task set: one task per case
    config = compose_config([
        "suite=smoke", f"suite.tasks_path={tasks}", "suite.web_template=floweval", "actor=probe", "judge=rules",
        "tracking=off", "browser.memory_mb=1024", f"+sandbox.local.build_timeout_s={corpus_run.BUILD_TIMEOUT_S}",
    ], project_root=REPO_ROOT)

    async def score(listeners: corpus_run.HostListeners) -> dict[str, Any]:
        ports = {"tcp": listeners.tcp.getsockname()[1], "udp": listeners.udp.getsockname()[1]}
        async with RewardService.open(config, work_dir=tmp / "work") as service:
            rewards = await service.score_many([
                ScoreRequest(task_id=f"hostile-{case.id}", answer=case.answer(**ports), keep_evidence=True)
                for case in cases])
        return {"rewards": {case.id: reward for case, reward in zip(cases, rewards)}, "ports": ports}

    with corpus_run.HostListeners() as listeners:
        result = asyncio.run(score(listeners))
        received = list(listeners.received)
    return {**result, "received": received, "cases": cases}


def test_each_case_lands_in_its_bucket_with_its_evidence(scored: dict[str, Any]) -> None:
    for case in scored["cases"]:
        reward = scored["rewards"][case.id]
        assert reward.status in (case.bucket, *case.also), (case.id, reward.status, reward.error[:500])
        record = {"status": reward.status.value, "error": reward.error, "extra": reward.extra,
                  "timings": reward.timings, "scores": reward.scores,
                  "verdict": {"requirements": [r.model_dump(mode="json") for r in reward.requirements]}}
        run = corpus_run.CorpusRun(sandbox="local", run_dir=Path("/"), store=Path("/"), records={case.id: record},
                                   received=scored["received"], ports=(scored["ports"]["tcp"], scored["ports"]["udp"]),
                                   seconds=0.0, process=None)  # type: ignore[arg-type]
        for name in case.evidence:
            corpus_run.EVIDENCE_CHECKS[name](run, case, Path(reward.evidence_dir))
    assert scored["rewards"]["build-fork-bomb"].reward == 0.0  # a build that fails earns nothing
    assert scored["rewards"]["runtime-compiled"].reward == 1.0 and scored["rewards"]["dialogs-counter"].reward == 1.0
    for name in FORGED:  # one of two requirements met: what the page does, not what it forged
        assert scored["rewards"][name].reward == 0.5, (name, scored["rewards"][name])


def test_nothing_reached_the_hosts_other_ports(scored: dict[str, Any]) -> None:
    assert scored["received"] == []
