"""The run's cost estimate: the bound that sets the rate, the critical path of an episode's turns, the judging
phase, server starts, peak memory; and the estimate of a loaded task set."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.config import ConcurrencyConfig
from runner.run.capacity import COSTS, Machine
from runner.run.estimate import HarnessCosts, Latencies, Workload, estimate_for_config, estimate_run
from runner.compose import compose as compose_config
from runner.run.roles import run_facts
from runner.run.validation import validate_config
from runner.suites.registry import build_suite
from tests.conftest import REPO_ROOT

MACHINE = Machine(cores=2, memory_mib=18_000)
HARNESS = HarnessCosts(slot_s=1.0, slot_cpu_s=2.0, step_s=0.0, step_cpu_s=0.1)
LIMITS = ConcurrencyConfig(episodes=150, model_calls=4, visits=32, browsers=2, judge_calls=2)


def test_the_slowest_bound_sets_the_rate() -> None:
    """Hosted generator at 4 calls: 4 / 90 s = 2.67 slots/min, below the visits, episodes and cores."""
    work = Workload(slots=750, turns_per_episode=5, episodes=150, actor_steps=10, generator_calls=True)
    estimate = estimate_run(work, LIMITS, machine=MACHINE, latencies=Latencies(actor_step_s=4), harness=HARNESS)
    assert estimate.bound == "generator calls"
    assert estimate.slots_per_minute == pytest.approx(60 * 4 / 90)
    assert estimate.rates["visits"] == pytest.approx(60 * 32 / 40)  # 10 steps x 4 s a visit
    assert estimate.rates["cores"] == pytest.approx(60 * 2 / (2.0 + 10 * 0.1))
    assert estimate.hours == pytest.approx(750 / (60 * 4 / 90) / 60)
    more_calls = LIMITS.model_copy(update={"model_calls": 64})
    faster = estimate_run(work, more_calls, machine=MACHINE, latencies=Latencies(actor_step_s=4), harness=HARNESS)
    assert faster.bound == "cores" and faster.hours < estimate.hours  # 40 slots/min on two cores, below 48 by visits


def test_an_episodes_turns_are_a_critical_path() -> None:
    """One task of five turns: never faster than five slots one after another, however many may run at once."""
    work = Workload(slots=5, turns_per_episode=5, episodes=1, actor_steps=0, generator_calls=True)
    estimate = estimate_run(work, LIMITS, machine=MACHINE, latencies=Latencies(generator_s=60), harness=HARNESS)
    assert estimate.generation_hours == pytest.approx(5 * (60 + 1.0) / 3600)
    assert estimate.bound == "episodes"


def test_staged_judging_and_server_starts_add_their_time() -> None:
    together = Workload(slots=100, turns_per_episode=1, episodes=100, judge_calls=True, generator_calls=False)
    staged = Workload(slots=100, turns_per_episode=1, episodes=100, judge_calls=True, generator_calls=False,
                      staged=True, server_starts=2)
    latencies = Latencies(judge_s=30, server_start_s=600)
    a = estimate_run(together, LIMITS, machine=MACHINE, latencies=latencies, harness=HARNESS)
    b = estimate_run(staged, LIMITS, machine=MACHINE, latencies=latencies, harness=HARNESS)
    assert a.bound == "judge calls" and a.slots_per_minute == pytest.approx(60 * 2 / 30)
    assert b.judging_hours == pytest.approx(100 * 30 / 2 / 3600) and b.start_hours == pytest.approx(1200 / 3600)
    assert b.hours == pytest.approx(b.generation_hours + b.judging_hours + b.start_hours)


def test_peak_memory_counts_browsers_open_visits_builds_and_the_runner() -> None:
    work = Workload(slots=64, turns_per_episode=1, episodes=64, visits_per_slot=1, actor_steps=5, generator_calls=False)
    estimate = estimate_run(work, LIMITS, machine=MACHINE, harness=HARNESS)
    assert estimate.peak_memory_mib == pytest.approx(COSTS.runner_mib + 2 * COSTS.build_mib + 2 * COSTS.browser_mib
                                                     + 32 * COSTS.visit_mib)


def _suite_and_config(overrides: list[str]):
    raw = compose_config(["tracking=off", *overrides])
    raw["project_root"] = str(REPO_ROOT)
    config = validate_config(raw)
    suite = build_suite(config.suite, project_root=Path(REPO_ROOT))
    suite.configure_run(run_facts(config))
    return config, suite


def test_the_estimate_of_a_loaded_task_set_with_a_served_actor() -> None:
    """The smoke suite's 3 tasks x 3 turns, oracle generator, MiMo as a served actor (vLLM, 256 at once): the limits
    the run picks on this machine, and a bound the actor's steps set."""
    config, suite = _suite_and_config(["actor=mimo"])
    tasks = asyncio.run(suite.load_tasks())
    estimate, limits = estimate_for_config(config, suite, tasks, machine=MACHINE)
    w = estimate.workload
    assert (w.slots, w.turns_per_episode, w.episodes, w.visits_per_slot) == (9, 3, 3, 1.0)
    assert w.actor_steps == Latencies().actor_steps and not w.generator_calls and not w.judge_calls
    assert w.server_starts == 1  # MiMo's server
    assert (limits.concurrency.episodes, limits.concurrency.visits) == (3, 32)
    assert estimate.bound == "episodes" and estimate.lines()[0].startswith("estimate: 9 slot(s) in about")


def test_floweval_counts_every_flow_and_run_as_a_visit() -> None:
    config, suite = _suite_and_config(["suite=floweval", "actor=scripted", "suite.runs=3"])
    tasks = asyncio.run(suite.load_tasks())
    assert all(suite.visits_per_slot(task) == 3 * len(task.extra["flows"]) for task in tasks)
    estimate, _ = estimate_for_config(config, suite, tasks, machine=MACHINE)
    slots = sum(len(task.turns) for task in tasks)
    assert estimate.workload.visits_per_slot == pytest.approx(
        sum(3 * len(task.extra["flows"]) * len(task.turns) for task in tasks) / slots)
