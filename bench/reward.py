"""Reward service latency and throughput: MT-Web2Code micro pixel rewards and smoke-check rewards, warm.

    .venv/bin/python bench/reward.py [--calls 12] [--suites micro,smoke] [--json out.json]
                                     [--override KEY=VALUE ...] [--all-evidence]

For each suite the service is opened once (its tasks loaded, the run's browsers up) and warmed by one call;
then `--calls` oracle answers are scored one after another (sequential: the latency of one call) and again
with 4 in flight (concurrency 4, within the run's limits: concurrency.builds and concurrency.browsers of 2
by default). Printed: the median and p90 latency per call and the throughput in rewards per minute of each
mode, and the three reference answers' rewards: the oracle's (the turn's reference: 1.0), the identity's (the
files it was shown, unchanged: MT-Web2Code's no-repair score) and the null answer's (empty: the invalid
bucket, reward 0).

micro: MT-Web2Code micro (§3.4) on `--pages` of tasks/web2code/pages, mode=independent so that every turn starts
from the golden page and needs no state; static pages, scored by pixels (eqs. 9-12). smoke: turn 1 of each
smoke task (a React build), scored by the rules judge's live checks (actor=none).
Goals: median latency of one call under 0.4 s; >= 200 rewards per minute at concurrency 4 on two cores.
`--override` adds config overrides to every suite's (e.g. `+sandbox.local.spare_build=false` or
`+judge.rules.reuse_loaded_page=false`, to measure without them; `--all-evidence` turns the service's lean evidence
off); the machine's load average is printed beside the figures, which move with it. Beside each mode, the CPU
seconds the whole machine spent per call (/proc/stat: the confined builds, servers and browsers are no children of
this process) and the rate those seconds allow on this machine's cores, the bound on rewards per minute that no
concurrency passes. `--cpu-by-process` also samples /proc during the concurrency-4 calls and prints that CPU per call
by kind of process (bench/cpu_sampler.py: Chromium's processes, the builds' Node, the Playwright driver, the
artifact servers, this process).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.cpu_sampler import ProcessCpu  # noqa: E402
from runner.models.base import GenerationRequest  # noqa: E402
from runner.models.oracle import IdentityModel, OracleModel  # noqa: E402
from runner.reward.compose import compose_config  # noqa: E402
from runner.reward.service import RewardService  # noqa: E402

GOAL_S = 0.4
GOAL_PER_MIN = 200.0  # at concurrency 4 on two cores
CONCURRENCY = 4
SUITES = {
    "micro": ["suite=micro", "suite.mode=independent", "suite.turns=3", "actor=none"],
    "smoke": ["suite=smoke", "judge=rules", "actor=none"],
}


def _slots(service: RewardService, suite: str) -> list[tuple[str, int]]:
    """The (task, turn) slots scored without state: every turn in micro's independent mode, turn 1 in smoke."""
    tasks = sorted(service.tasks.values(), key=lambda task: task.id)
    if suite == "micro":
        return [(task.id, turn.index) for task in tasks for turn in task.turns]
    return [(task.id, 1) for task in tasks]


async def _answer(model: Any, service: RewardService, task_id: str, turn: int) -> str:
    messages = await service.prompt(task_id, turn)
    return (await model.generate(GenerationRequest(task_id=task_id, turn=turn, messages=messages))).text


async def _answer_with_state(model: Any, service: RewardService, task_id: str, turn: int, state: Any) -> str:
    messages = await service.prompt(task_id, turn, state=state)
    return (await model.generate(GenerationRequest(task_id=task_id, turn=turn, messages=messages))).text


def machine_cpu_s() -> float:
    """CPU seconds the machine has spent so far (all cores, busy states of /proc/stat's first line)."""
    with open("/proc/stat") as stat:
        user, nice, system, _idle, _iowait, irq, softirq, *_ = (int(v) for v in stat.readline().split()[1:])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _stats(latencies: list[float], wall_s: float, cpu_s: float) -> dict[str, float]:
    ordered = sorted(latencies)
    cpu_per_call = cpu_s / len(ordered)
    return {"calls": len(ordered), "median_s": statistics.median(ordered),
            "p90_s": ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)],
            "rewards_per_min": 60.0 * len(ordered) / wall_s, "machine_cpu_s_per_call": cpu_per_call,
            "cpu_bound_per_min": 60.0 * (os.cpu_count() or 1) / cpu_per_call if cpu_per_call else math.inf}


async def bench_suite(suite: str, calls: int, pages: list[str], extra: list[str], *,
                      lean_evidence: bool = True, cpu_by_process: bool = False) -> dict[str, Any]:
    overrides = ["tracking=off", *SUITES[suite], *extra]
    load_before = os.getloadavg()[0]
    if suite == "micro":
        overrides.append(f"suite.task_ids=[{','.join(pages)}]")
    opened = time.perf_counter()
    async with RewardService.open(compose_config(overrides, project_root=REPO), lean_evidence=lean_evidence) as service:
        open_s = time.perf_counter() - opened
        slots = _slots(service, suite)
        oracle = OracleModel(service.tasks.values())
        answers = {slot: await _answer(oracle, service, *slot) for slot in slots}
        task_id, turn = slots[0]
        oracle_reward = await service.score(task_id, turn, answers[slots[0]])  # also warms sandbox and browsers
        # The identity hands back the files it was shown: MT-Web2Code shows the broken page; a smoke task shows
        # files from turn 2 on (the oracle's turn 1 here), so it answers turn 2 unchanged.
        identity_turn, state = (turn, None) if suite == "micro" else (2, oracle_reward.state)
        identity = await _answer_with_state(IdentityModel(), service, task_id, identity_turn, state)
        references = {
            "oracle": oracle_reward,
            "identity": await service.score(task_id, identity_turn, identity, state=state),
            "null": await service.score(task_id, turn, ""),
        }
        plan = [slots[i % len(slots)] for i in range(calls)]

        shortfalls: list[str] = []  # an oracle answer scores 1.0 unless the machine failed it (e.g. a page timeout)

        async def one(slot: tuple[str, int]) -> float:
            started = time.perf_counter()
            reward = await service.score(slot[0], slot[1], answers[slot])
            if reward.reward is None or reward.reward < 0.99:
                shortfalls.append(f"{slot[0]} turn {slot[1]}: {reward.reward} ({reward.status}: {reward.error[:120]})")
            return time.perf_counter() - started

        started, cpu = time.perf_counter(), machine_cpu_s()
        sequential = [await one(slot) for slot in plan]
        sequential_stats = _stats(sequential, time.perf_counter() - started, machine_cpu_s() - cpu)

        limit = asyncio.Semaphore(CONCURRENCY)

        async def bounded(slot: tuple[str, int]) -> float:
            async with limit:
                return await one(slot)

        sampler = ProcessCpu() if cpu_by_process else None
        with sampler or contextlib.nullcontext():
            started, cpu = time.perf_counter(), machine_cpu_s()
            concurrent = await asyncio.gather(*(bounded(slot) for slot in plan))
            concurrent_stats = _stats(list(concurrent), time.perf_counter() - started, machine_cpu_s() - cpu)
        if sampler is not None:
            concurrent_stats["cpu_s_per_call_by_process"] = {
                kind: seconds / len(plan) for kind, seconds in sampler.by_kind().most_common(8)}
    return {
        "suite": suite, "open_s": open_s, "slots": len(slots), "overrides": extra,
        "lean_evidence": service.lean_evidence,
        "load_average": [load_before, os.getloadavg()[0]],
        "references": {name: {"reward": r.reward, "status": str(r.status),
                              "scores": {k: v for k, v in r.scores.items() if k in ("s_inbox", "s_outbox", "score")}}
                       for name, r in references.items()},
        "sequential": sequential_stats, f"concurrency_{CONCURRENCY}": concurrent_stats, "shortfalls": shortfalls,
    }


def _print(result: dict[str, Any]) -> None:
    load = result["load_average"]
    print(f"== {result['suite']}: opened in {result['open_s']:.1f} s, {result['slots']} slot(s); load average "
          f"{load[0]:.1f} -> {load[1]:.1f}; lean evidence {'on' if result['lean_evidence'] else 'off'}"
          + (f"; overrides {' '.join(result['overrides'])}" if result["overrides"] else ""))
    for name, ref in result["references"].items():
        reward = "None" if ref["reward"] is None else f"{ref['reward']:.4f}"
        print(f"  {name:<9} reward {reward}  status {ref['status']}  {ref['scores'] or ''}")
    for mode in ("sequential", f"concurrency_{CONCURRENCY}"):
        stats = result[mode]
        print(f"  {mode:<14} {stats['calls']} calls: median {stats['median_s']:.3f} s, p90 {stats['p90_s']:.3f} s, "
              f"{stats['rewards_per_min']:.1f} rewards/min; machine CPU {stats['machine_cpu_s_per_call']:.2f} s a call "
              f"(at most {stats['cpu_bound_per_min']:.0f} rewards/min on {os.cpu_count()} cores)")
        for kind, seconds in stats.get("cpu_s_per_call_by_process", {}).items():
            print(f"    {kind:<34} {seconds:.3f} CPU s a call")
    for shortfall in result["shortfalls"]:
        print(f"  oracle answer below 1.0: {shortfall}")
    median = result["sequential"]["median_s"]
    rate = result[f"concurrency_{CONCURRENCY}"]["rewards_per_min"]
    print(f"  goal: one call under {GOAL_S} s (sequential median): {'met' if median < GOAL_S else 'NOT met'}; "
          f">= {GOAL_PER_MIN:g} rewards/min at concurrency {CONCURRENCY}: {'met' if rate >= GOAL_PER_MIN else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=12, help="oracle answers scored per mode")
    parser.add_argument("--suites", default="micro,smoke")
    parser.add_argument("--pages", default="hearth-bakery,ledgerly-saas", help="micro: the pages (task ids)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="a config override for every suite (repeatable)")
    parser.add_argument("--all-evidence", action="store_true",
                        help="capture every call's screenshots and DOM file (the service's lean_evidence off)")
    parser.add_argument("--cpu-by-process", action="store_true",
                        help="also print the concurrency-4 calls' CPU per call by kind of process (/proc sampled)")
    args = parser.parse_args()
    results = []
    for suite in args.suites.split(","):
        result = asyncio.run(bench_suite(suite, args.calls, args.pages.split(","), args.override,
                                         lean_evidence=not args.all_evidence, cpu_by_process=args.cpu_by_process))
        _print(result)
        results.append(result)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
