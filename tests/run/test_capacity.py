"""Default concurrency follows the serving models' batch capacity (vLLM max_num_seqs) unless set, bounded by the
machine's memory and cores; each limit says why."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest

from runner.compose import compose
from runner.config import RunnerConfig
from runner.models.role import VLLM_DEFAULT_MAX_NUM_SEQS
from runner.run.capacity import COSTS, Machine, choose_limits, resolve_concurrency
from runner.run.validation import validate_config
from tests.conftest import REPO_ROOT

BIG = Machine(cores=64, memory_mib=1_000_000)  # bounds nothing the servers ask for here
SMALL = Machine(cores=2, memory_mib=18_000)  # the 2-core, 24 GB machine with what it has free


@functools.cache
def _composed() -> dict[str, Any]:
    return compose(["model=oracle", "judge=rules", "actor=none", "tracking=off"], project_root=REPO_ROOT)


def _config(model: dict, judge_model: dict | None = None, actor_model: dict | None = None, *, actor: str = "none",
            browser: dict | None = None, **limits: int) -> RunnerConfig:
    """A validated config (its model roles resolved, as every run's) with these models, browser and limits."""
    raw = copy.deepcopy(_composed())
    raw["model"] = dict(model)
    if judge_model:
        raw["judge"] = {"name": "j", "kind": "llm", "options": {"model": judge_model}}
    if actor_model:
        raw["actor"] = {"name": "llm", "kind": "llm", "options": {"model": actor_model}}
    elif actor != "none":
        raw["actor"] = {"name": actor, "kind": actor}
    raw["browser"].update(browser or {})
    raw["concurrency"].update(limits)
    return validate_config(raw)


@pytest.fixture(autouse=True)
def _a_machine_that_bounds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests of the servers' part run on a machine large enough; those of the machine's part pass their own."""
    monkeypatch.setattr(Machine, "detect", classmethod(lambda cls: BIG))


VLLM = {"name": "g", "provider": "vllm", "server": {"model_path": "/w", "max_num_seqs": 32}}


def _batch_size(model: dict) -> int | None:
    return _config(model).model_roles["generator"].capabilities.batch_size


def test_capacity_of_each_kind_of_model() -> None:
    assert _batch_size(VLLM) == 32
    assert _batch_size({"name": "w", "provider": "vllm", "server": {"model_path": "/w"}}) == VLLM_DEFAULT_MAX_NUM_SEQS == 256
    assert _batch_size({"name": "x", "provider": "vllm", "server": {"mode": "attach", "base_url": "http://x"}}) is None
    assert _batch_size({"name": "o", "provider": "openai", "model": "gpt", "base_url": "http://x/v1"}) is None
    assert _batch_size(ORACLE) is None


def test_episodes_and_calls_follow_the_generator_server_bounded_by_the_episodes() -> None:
    resolved = resolve_concurrency(_config(VLLM), episodes_available=100)
    assert (resolved.episodes, resolved.model_calls, resolved.judge_calls) == (32, 32, 2)
    few = resolve_concurrency(_config(VLLM), episodes_available=9)
    assert (few.episodes, few.model_calls) == (9, 9)
    judged = resolve_concurrency(_config(VLLM, {"name": "k", "provider": "vllm", "server": {"model_path": "/k"}}),
                                 episodes_available=9)
    assert judged.judge_calls == 256


def test_set_values_and_unknown_capacity_keep_their_numbers() -> None:
    oracle = resolve_concurrency(_config({"name": "oracle", "provider": "oracle"}), episodes_available=100)
    assert (oracle.episodes, oracle.model_calls, oracle.judge_calls) == (4, 4, 2)
    fixed = resolve_concurrency(_config(VLLM, episodes=3, model_calls=5, judge_calls=7), episodes_available=100)
    assert (fixed.episodes, fixed.model_calls, fixed.judge_calls) == (3, 5, 7)


ORACLE = {"name": "oracle", "provider": "oracle"}
ACTOR = {"name": "mimo", "provider": "vllm", "server": {"model_path": "/m"}}  # vLLM's default capacity, 256
HOSTED_ACTOR = {"name": "a", "provider": "openai", "model": "gpt", "base_url": "http://x/v1"}


def test_visits_and_episodes_follow_the_actor_server() -> None:
    limits = choose_limits(_config(ORACLE, actor_model=ACTOR), episodes_available=150)
    resolved = limits.concurrency
    assert (resolved.episodes, resolved.visits, resolved.model_calls) == (150, 256, 4)
    assert "actor server batches 256" in limits.reasons["visits"]
    assert "bounded by the 150 episode(s)" in limits.reasons["episodes"]
    # 256 visits, at most 20 a browser (half of a 4096 MB cap at 100 MiB a visit): 13 browsers
    assert resolved.browsers == 13 and "visits a browser" in limits.reasons["browsers"]


def test_a_hosted_actor_keeps_the_default_and_visits_follow_the_episodes() -> None:
    resolved = resolve_concurrency(_config(ORACLE, actor_model=HOSTED_ACTOR), episodes_available=100)
    assert (resolved.episodes, resolved.visits, resolved.browsers) == (4, 4, 4)


def test_the_machine_bounds_visits_by_cores_and_by_memory() -> None:
    by_cores = choose_limits(_config(ORACLE, actor_model=ACTOR), episodes_available=150, machine=SMALL)
    assert by_cores.concurrency.visits == 2 * COSTS.visits_per_core == 32
    assert "2 core(s)" in by_cores.reasons["visits"]
    assert by_cores.concurrency.browsers == 2  # 32 visits fit two browsers' caps; one per core
    tight = Machine(cores=64, memory_mib=4000)
    by_memory = choose_limits(_config(ORACLE, actor_model=ACTOR), episodes_available=150, machine=tight)
    budget = 4000 * COSTS.memory_share - COSTS.runner_mib - 2 * COSTS.build_mib
    per_browser = int(4096 / 2 // COSTS.visit_mib)
    assert by_memory.concurrency.visits == int(budget // (COSTS.visit_mib + COSTS.browser_mib / per_browser)) > 0
    assert "MiB available" in by_memory.reasons["visits"]
    # A smaller browser cap holds fewer visits a browser: more browsers for the same visits.
    small_caps = resolve_concurrency(_config(ORACLE, actor_model=ACTOR, browser={"memory_mb": 1024}),
                                     episodes_available=150, machine=SMALL)
    assert small_caps.visits == 32 and small_caps.browsers == 7  # 5 visits each


def test_without_an_actor_model_each_visit_has_a_browser_of_its_own() -> None:
    """No visit waits on a model: sharing a browser would gain nothing, and a page that wedges its browser would
    cost the other visits on it theirs."""
    limits = choose_limits(_config(ORACLE), episodes_available=150, machine=SMALL)
    assert limits.concurrency.visits == limits.concurrency.browsers == 2
    assert "one visit a browser" in limits.reasons["visits"]
    probe = _config(ORACLE, actor="probe")  # acts without a model: nothing to wait on either
    by_probe = choose_limits(probe, episodes_available=150, machine=SMALL)
    assert by_probe.concurrency.visits == by_probe.concurrency.browsers == 2
    shared = choose_limits(_config(ORACLE, actor_model=ACTOR), episodes_available=150, machine=SMALL)
    assert shared.concurrency.visits > shared.concurrency.browsers  # an actor's model: visits share browsers
    set_visits = resolve_concurrency(_config(ORACLE, visits=6), episodes_available=150, machine=SMALL)
    assert (set_visits.visits, set_visits.browsers) == (6, 2)  # a setting still wins


def test_set_visits_browsers_and_judge_calls_win_over_servers_and_machine() -> None:
    config = _config(ORACLE, {"name": "k", "provider": "vllm", "server": {"model_path": "/k"}}, ACTOR,
                     visits=100, browsers=1, judge_calls=300)
    limits = choose_limits(config, episodes_available=150, machine=SMALL)
    assert (limits.concurrency.visits, limits.concurrency.browsers, limits.concurrency.judge_calls) == (100, 1, 300)
    assert {limits.reasons[name] for name in ("visits", "browsers", "judge_calls")} == {"set"}


def test_judge_calls_are_bounded_by_the_memory_their_requests_hold() -> None:
    judged = _config(ORACLE, {"name": "k", "provider": "vllm", "server": {"model_path": "/k"}})
    assert resolve_concurrency(judged, episodes_available=9).judge_calls == 256
    tight = choose_limits(judged, episodes_available=9, machine=Machine(cores=2, memory_mib=4000))
    assert tight.concurrency.judge_calls == int(4000 * COSTS.memory_share // COSTS.judge_call_mib) < 256
    assert "memory" in tight.reasons["judge_calls"]


def test_visits_and_browsers_do_not_depend_on_the_task_count() -> None:
    """A run opens its browsers before its tasks load: what they are opened with is what its plan prints."""
    for config in (_config(ORACLE), _config(VLLM), _config(ORACLE, actor_model=ACTOR)):
        before = resolve_concurrency(config, episodes_available=None, machine=SMALL)
        after = resolve_concurrency(config, episodes_available=3, machine=SMALL)
        assert (before.visits, before.browsers) == (after.visits, after.browsers)


def test_every_limit_is_printed_with_its_reason() -> None:
    lines = choose_limits(_config(VLLM, actor_model=ACTOR), episodes_available=9, machine=SMALL).lines()
    assert [line.split(" = ")[0] for line in lines] == ["episodes", "model_calls", "visits", "browsers", "builds",
                                                        "judge_calls"]
    assert lines[0] == "episodes = 9: the generator server batches 32 and the actor server batches 256, bounded by " \
                       "the 9 episode(s) there are"
