"""The run's concurrency: what is set, else what the model servers batch, bounded by this machine.

A vLLM server batches up to `max_num_seqs` sequences at once; a run that keeps fewer requests in flight
leaves it idle. So unless set:

- episodes and generator calls follow the generator server's capacity, and episodes also the actor's (each
  episode makes at most one visit at a time, so an actor's server waits on the episodes), bounded by the number
  of episodes there are;
- visits (browser pages open at once, runner/browser/launch.py BrowserPools) follow the capacity of the server
  they wait on: the actor's (an LLM actor, UI-TARS); with no served actor they follow the episodes;
- judge calls follow the judge server's capacity.

Visits and judge calls are then bounded by what the machine holds, from measured costs (`Costs`,
docs/performance.md "Visits that wait"): a waiting visit holds memory (its renderer and artifact server) and no
CPU, a step of its actor takes a little CPU. Browsers follow the visits: enough that each browser's memory cap
keeps half its room for the page at work, and one per core (up to two per build) for the pages' CPU (each
confined browser has a CPU quota). Models whose capacity is unknown (hosted endpoints, replays, an attached server
without `max_num_seqs`) keep the fixed defaults. `choose_limits` says why each number was chosen; preflight and the
run's plan print it.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from runner.config import ConcurrencyConfig, RunnerConfig

__all__ = ["COSTS", "DEFAULT_EPISODES", "DEFAULT_JUDGE_CALLS", "Costs", "Limits",
           "Machine", "choose_limits", "resolve_concurrency"]

DEFAULT_EPISODES = 4
DEFAULT_MODEL_CALLS = 4
DEFAULT_JUDGE_CALLS = 2


@dataclass(frozen=True)
class Costs:
    """What the runner's parts hold, for planning (docs/performance.md "Visits that wait" has the measurements).

    Planning figures are the measured ones with room: a benchmark's artifact is larger than the smoke counter
    the memory was measured on."""

    # A visit waiting on a model: its context's renderer, its artifact server and their sandboxes (PSS). Measured
    # 49 MiB on the smoke counter (bench/visit_memory.py); planned at twice that for the benchmarks' larger apps.
    visit_mib: float = 100.0
    # A launched browser with no page, its Playwright driver included (PSS; measured 216 MiB).
    browser_mib: float = 256.0
    # A build in its sandbox (Node and Vite) and the runner process itself, with room.
    build_mib: float = 300.0
    runner_mib: float = 600.0
    # A judge call in flight: its request (screenshots as base64) and the answer, with room.
    judge_call_mib: float = 32.0
    # Visits one core serves: an actor step costs about 0.1 CPU s (screenshot, element list, action, settle:
    # bench/throughput.py --scenario actor), and a model step of a served VLM takes seconds; 16 per core keeps the
    # steps' CPU under a core at a 2 s step.
    visits_per_core: int = 16
    # The share of the memory available at start the run may plan on (the rest: model servers' host memory,
    # page cache, other work on the machine).
    memory_share: float = 0.75


COSTS = Costs()


@dataclass(frozen=True)
class Machine:
    """The cores and the memory a run may use on this machine."""

    cores: int
    memory_mib: int  # available now (MemAvailable)

    @classmethod
    def detect(cls) -> "Machine":
        """This machine, read once per process: the browsers a run opens and the limits its plan prints come
        from the same reading."""
        return _detected()


@functools.lru_cache(maxsize=1)
def _detected() -> Machine:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return Machine(cores=max(1, cores), memory_mib=_available_mib())


def _available_mib() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return 4096  # no /proc: a small machine's figure, never a crash


@dataclass
class Limits:
    """The resolved limits and, for each, why."""

    concurrency: ConcurrencyConfig
    reasons: dict[str, str] = field(default_factory=dict)
    machine: Machine | None = None

    def lines(self) -> list[str]:
        """One line per limit: `name = value: why`."""
        values = self.concurrency.model_dump()
        return [f"{name} = {values[name]}: {self.reasons.get(name, 'set')}" for name in
                ("episodes", "model_calls", "visits", "browsers", "builds", "judge_calls")]


def choose_limits(config: RunnerConfig, *, episodes_available: int | None, machine: Machine | None = None,
                  costs: Costs = COSTS) -> Limits:
    """The limits this run uses and why: what is set, else the capacity of the serving models, bounded by the
    machine. `episodes_available`: how many episodes the run has (None: not known yet; visits and browsers never
    depend on it, so a run's browsers can be opened before its tasks load)."""
    machine = machine or Machine.detect()
    roles = config.model_roles  # each role's declared capabilities, resolved with the config
    limits = config.concurrency
    generator, actor, judge = (roles[role].capabilities.batch_size if role in roles else None
                               for role in ("generator", "actor", "judge"))
    # An actor whose steps wait on a model (an LLM actor, UI-TARS); the probe and scripted flows never do.
    actor_waits = "actor" in roles
    reasons: dict[str, str] = {}
    available = max(1, episodes_available) if episodes_available is not None else None

    # Episodes: the generator's and the actor's servers both wait on them.
    if limits.episodes is not None:
        wish, reasons["episodes"] = limits.episodes, "set"
        episodes = wish
    else:
        wish, why = DEFAULT_EPISODES, "the default (no served model's capacity known)"
        if generator is not None or actor is not None:
            wish = max(generator or 0, actor or 0)
            why = " and ".join(f"the {role} server batches {cap}" for role, cap in
                               (("generator", generator), ("actor", actor)) if cap is not None)
        episodes = wish if available is None else min(wish, available)
        reasons["episodes"] = why + (f", bounded by the {available} episode(s) there are"
                                     if available is not None and available < wish else "")
    if limits.model_calls is not None:
        model_calls, reasons["model_calls"] = limits.model_calls, "set"
    elif generator is not None:
        model_calls = min(generator, episodes)
        reasons["model_calls"] = f"the generator server batches {generator}" + (
            ", bounded by the episodes" if episodes < generator else "")
    else:
        model_calls = DEFAULT_MODEL_CALLS
        reasons["model_calls"] = ("the default (the generator's capacity is unknown; a hosted generator's calls often "
                                  "bound the whole run: set concurrency.model_calls to what its API quota allows)")

    # Visits: the actor's server waits on them; the machine holds what its memory and cores allow.
    browser_cap_mb = config.browser_settings.memory_mb
    per_browser = max(1, int(browser_cap_mb / 2 // costs.visit_mib))  # half of a browser's cap for the working page
    budget = machine.memory_mib * costs.memory_share - costs.runner_mib - limits.builds * costs.build_mib
    by_memory = max(1, int(budget // (costs.visit_mib + costs.browser_mib / per_browser)))
    by_cores = machine.cores * costs.visits_per_core
    machine_visits = min(by_memory, by_cores)
    machine_why = (f"{machine.memory_mib} MiB available x {costs.memory_share:g} holds {by_memory} at "
                   f"{costs.visit_mib:g} MiB a visit" if by_memory <= by_cores else
                   f"{machine.cores} core(s) x {costs.visits_per_core} visits a core")
    if limits.visits is not None:
        visits, reasons["visits"] = limits.visits, "set"
    else:
        # Never the episode count (unknown while the browsers open): an episode makes one visit at a time anyway.
        if actor is not None:
            wanted, why = actor, f"the actor server batches {actor}"
        else:
            wanted = wish
            why = (f"as many as the episodes may run ({wish}{', set' if limits.episodes is not None else ''})" +
                   ("" if actor_waits else "; no actor waits on a model"))
        visits = min(wanted, machine_visits)
        reasons["visits"] = why + (f", bounded by the machine: {machine_why}" if machine_visits < wanted else "")

    if limits.browsers is not None:
        browsers, reasons["browsers"] = limits.browsers, "set"
    else:
        # Pages work (load, capture, act, check) mostly right after a build: about as many at once as builds
        # finish, each in a browser with a CPU quota of its own (browser.cpus); so one browser per core up to
        # twice the builds, and more only where the visits need more memory caps.
        by_cap = math.ceil(visits / per_browser)
        by_cpu = min(machine.cores, visits, 2 * limits.builds)
        browsers = max(by_cap, by_cpu)
        reasons["browsers"] = (f"{per_browser} visits a browser keep half its {browser_cap_mb} MB cap for the page "
                               f"at work" if by_cap > by_cpu else
                               f"one per core for the pages' CPU ({machine.cores} core(s)), at most one per visit "
                               f"and two per build") + "; each launches when a visit first needs it"
    if limits.visits is None and not actor_waits and visits > browsers:
        # Sharing a browser pays only while visits wait on a model; otherwise one visit a browser, as a page that
        # wedges its browser (floods its process, exhausts its cap) then costs no other slot its visit.
        visits = browsers
        reasons["visits"] = (f"one visit a browser ({browsers}): no actor waits on a model, so sharing a browser "
                             "would gain nothing and let one page's browser failure cost another slot its visit")
    reasons["builds"] = "set (the default)" if limits.builds == ConcurrencyConfig.model_fields["builds"].default \
        else "set"

    # Judge calls: the judge server's capacity, bounded by the memory their requests hold.
    if limits.judge_calls is not None:
        judge_calls, reasons["judge_calls"] = limits.judge_calls, "set"
    else:
        wanted = judge or DEFAULT_JUDGE_CALLS
        by_memory = max(1, int(machine.memory_mib * costs.memory_share // costs.judge_call_mib))
        judge_calls = min(wanted, by_memory)
        reasons["judge_calls"] = (f"the judge server batches {judge}" if judge else
                                  "the default (the judge's capacity is unknown)") + (
            f", bounded by the machine's memory at {costs.judge_call_mib:g} MiB a call" if by_memory < wanted else "")

    resolved = limits.model_copy(update={"episodes": episodes, "model_calls": model_calls, "visits": visits,
                                         "browsers": browsers, "judge_calls": judge_calls})
    return Limits(concurrency=resolved, reasons=reasons, machine=machine)


def resolve_concurrency(config: RunnerConfig, *, episodes_available: int | None,
                        machine: Machine | None = None) -> ConcurrencyConfig:
    """The limits this run uses: what is set, else the capacity of the serving models, bounded by the machine."""
    return choose_limits(config, episodes_available=episodes_available, machine=machine).concurrency
