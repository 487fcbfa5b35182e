"""What a run costs before it starts: hours, peak memory and the concurrency the runner picks.

From the harness's measured costs (`HarnessCosts`, docs/performance.md) and stated model latencies (`Latencies`:
assumptions about the servers, never measured here), a run's slots flow through five bounds at once, and the
slowest one sets the rate:

- episodes: each runs its turns one after another, a slot taking the generator's answer, the harness and its
  visits (a visit: the actor's steps, each a model call and the page's work);
- generator calls: `model_calls` answers in flight;
- visits: `visits` pages open at once, each for its actor steps;
- the machine's cores: the harness's CPU per slot and per actor step;
- judge calls (judging together with generation): `judge_calls` verdicts in flight.

An episode's turns are sequential, so a run also takes at least `turns x slot time`. A staged run judges after
generation (its own phase, at its own rate), and each model server the runner starts costs its start-up once per
phase. The figures are estimates: a model's latency under load, a generator's output length and an actor's steps
vary by task; set `Latencies` from your own servers' figures.

`estimate_for_config` is the one call a plan makes for the run at hand (tasks loaded, limits chosen as the run
will choose them); `estimate_run` takes the workload and limits directly (docs/performance.md's paper estimates).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runner.config import ConcurrencyConfig
from runner.kinds import KINDS
from runner.run.capacity import COSTS, Costs, Limits, Machine, choose_limits
from runner.models.role import role_model_settings

__all__ = ["Estimate", "HarnessCosts", "Latencies", "Workload", "estimate_for_config", "estimate_run"]


@dataclass(frozen=True)
class Latencies:
    """Stated seconds per model call: assumptions about the servers (set measured ones where you have them).

    Defaults: a hosted generator writing a few thousand tokens of React (about 90 s); a served VLM's actor step with
    a screenshot at a full batch (4 s) for a mean of 12 steps a visit (EvoGenUI-Bench §6.2's case study took 17
    steps of at most 20); a verdict of about a thousand tokens on full-page screenshots (30 s); a large model's
    server start (weights into eight GPUs) 10 minutes."""

    generator_s: float = 90.0
    actor_step_s: float = 4.0
    actor_steps: float = 12.0
    judge_s: float = 30.0
    server_start_s: float = 600.0


@dataclass(frozen=True)
class HarnessCosts:
    """The runner's own seconds per slot, measured on the 2-core machine (docs/performance.md).

    `slot_s`: build, serve, evidence and the rules judge's live checks (bench/harness.py: 0.9 s of overhead and
    0.6 s of checks a smoke turn). `slot_cpu_s`: the CPU of a slot's harness, browsers included (bench/throughput.py:
    1.7-1.9 s a smoke slot with the probe). `step_s` / `step_cpu_s`: an LLM actor step's own work besides the model
    call (screenshot, element list, action, settle; bench/throughput.py --scenario actor)."""

    slot_s: float = 1.5
    slot_cpu_s: float = 1.8
    step_s: float = 0.5
    step_cpu_s: float = 0.1


@dataclass(frozen=True)
class Workload:
    """What a run asks for."""

    slots: int
    turns_per_episode: int  # an episode's turns run in order: the critical path
    episodes: int
    visits_per_slot: float = 1.0  # FlowEval: every flow x run is a visit of its own, all of a slot's at once
    actor_steps: float = 0.0  # model steps a visit (0: no actor model)
    generator_calls: bool = True  # False: an oracle or a replay answers at once
    judge_calls: bool = False  # True: a judge model gives each verdict
    staged: bool = False  # judging in a phase of its own after generation
    server_starts: int = 0  # model servers the runner starts (each once per phase it serves)


@dataclass
class Estimate:
    """Hours, rate, what bounds it, peak memory and the limits that gave them."""

    workload: Workload
    limits: ConcurrencyConfig
    machine: Machine
    latencies: Latencies
    hours: float
    generation_hours: float
    judging_hours: float
    start_hours: float
    slots_per_minute: float
    bound: str
    rates: dict[str, float] = field(default_factory=dict)  # slots per minute each bound allows
    peak_memory_mib: float = 0.0

    def lines(self) -> list[str]:
        w, lat = self.workload, self.latencies
        rates = ", ".join(f"{name} {rate:.1f}" for name, rate in sorted(self.rates.items(), key=lambda x: x[1]))
        stated = ([f"generator {lat.generator_s:g} s a call"] if w.generator_calls else []) + (
            [f"actor {lat.actor_step_s:g} s a step x {w.actor_steps:g} steps a visit"] if w.actor_steps else []) + (
            [f"judge {lat.judge_s:g} s a verdict"] if w.judge_calls else []) + (
            [f"a server start {lat.server_start_s:g} s"] if w.server_starts else [])
        return [
            f"estimate: {w.slots} slot(s) in about {_duration(self.hours)} ({_duration(self.generation_hours)} "
            f"generating and executing at {self.slots_per_minute:.1f} slots/min, bound by {self.bound}"
            + (f"; {_duration(self.judging_hours)} judging apart" if w.staged and w.judge_calls else "")
            + (f"; {_duration(self.start_hours)} starting {w.server_starts} model server(s)" if w.server_starts else "")
            + ")",
            f"  slots/min each bound allows: {rates}",
            f"  peak memory about {self.peak_memory_mib / 1024:.1f} GiB of the "
            f"{self.machine.memory_mib / 1024:.0f} GiB available ({self.machine.cores} cores)",
            "  stated latencies (not measured): " + (", ".join(stated) or "none: no model call waits"),
        ]


def _duration(hours: float) -> str:
    if hours >= 1:
        return f"{hours:.1f} h"
    return f"{hours * 60:.0f} min" if hours * 60 >= 1 else f"{hours * 3600:.0f} s"


def estimate_run(workload: Workload, limits: ConcurrencyConfig, *, machine: Machine, latencies: Latencies = Latencies(),
                 harness: HarnessCosts = HarnessCosts(), costs: Costs = COSTS) -> Estimate:
    """The estimate for `workload` at `limits` (resolved: every limit a number) on `machine`."""
    w = workload
    generator_s = latencies.generator_s if w.generator_calls else 0.0
    judge_s = latencies.judge_s if w.judge_calls else 0.0
    step_s = latencies.actor_step_s + harness.step_s if w.actor_steps else 0.0
    visit_s = w.actor_steps * step_s
    slot_s = generator_s + harness.slot_s + visit_s  # a slot's visits run at once
    cpu_per_slot = harness.slot_cpu_s + w.visits_per_slot * w.actor_steps * harness.step_cpu_s
    episodes = max(1, min(int(limits.episodes or 1), w.episodes))
    per_min: dict[str, float] = {
        "episodes": 60 * episodes / slot_s,
        "cores": 60 * machine.cores / cpu_per_slot,
    }
    if generator_s:
        per_min["generator calls"] = 60 * int(limits.model_calls or 1) / generator_s
    if visit_s:
        per_min["visits"] = 60 * int(limits.visits or 1) / (w.visits_per_slot * visit_s)
    if judge_s and not w.staged:
        per_min["judge calls"] = 60 * int(limits.judge_calls or 1) / judge_s
    bound = min(per_min, key=per_min.__getitem__)
    rate = per_min[bound]
    generation_s = max(60 * w.slots / rate, w.turns_per_episode * slot_s)
    judging_s = (w.slots * judge_s / int(limits.judge_calls or 1)) if judge_s and w.staged else judge_s
    start_s = w.server_starts * latencies.server_start_s
    visits_open = min(int(limits.visits or 1), max(1, int(episodes * w.visits_per_slot)))
    peak = (costs.runner_mib + limits.builds * costs.build_mib + int(limits.browsers or 1) * costs.browser_mib
            + visits_open * costs.visit_mib + (int(limits.judge_calls or 1) * costs.judge_call_mib if judge_s else 0))
    return Estimate(workload=w, limits=limits, machine=machine, latencies=latencies,
                    hours=(generation_s + judging_s + start_s) / 3600, generation_hours=generation_s / 3600,
                    judging_hours=judging_s / 3600, start_hours=start_s / 3600, slots_per_minute=rate, bound=bound,
                    rates=per_min, peak_memory_mib=peak)


def _calls_model(settings: dict[str, Any] | None) -> bool:
    """Whether a role's model takes time to answer: a provider that calls a model (runner/kinds.py `traced`: an
    endpoint or a served model), not an oracle or a replay."""
    if not settings:
        return False
    provider = KINDS.find("model", str(settings.get("provider")))
    return provider is not None and provider.traced


def workload_for(config: Any, suite: Any, tasks: list[Any], *, staged: bool, latencies: Latencies) -> Workload:
    """The run's workload from its loaded tasks and its roles."""
    settings = role_model_settings(config)
    actor = settings.get("actor") if not KINDS.chosen("actor", config.actor).inert else None
    max_steps = float((config.actor.options or {}).get("max_steps") or latencies.actor_steps)
    served = [model for model in settings.values()
              if KINDS.chosen("model", model).vllm_served and (model.get("server") or {}).get("mode") != "attach"]
    # Roles on the same weights share one server when their phases are together; staged, each phase starts its own.
    identities = {((model.get("server") or {}).get("hf_repo") or (model.get("server") or {}).get("model_path"),
                   (model.get("server") or {}).get("revision")) for model in served}
    slots = sum(len(task.turns) for task in tasks)
    return Workload(
        slots=slots,
        turns_per_episode=max((len(task.turns) for task in tasks), default=0),
        episodes=len(tasks),
        visits_per_slot=(sum(suite.visits_per_slot(task) * len(task.turns) for task in tasks) / slots
                         if slots else 1.0),
        actor_steps=min(max_steps, latencies.actor_steps) if _calls_model(actor) else 0.0,
        generator_calls=_calls_model(settings.get("generator")),
        judge_calls=_calls_model(settings.get("judge")) and suite.uses_judge,
        staged=staged,
        server_starts=len(served) if staged else len(identities),
    )


def estimate_for_config(config: Any, suite: Any, tasks: list[Any], *, staged: bool = False,
                        latencies: Latencies | None = None, machine: Machine | None = None) -> tuple[Estimate, Limits]:
    """The estimate for the run at hand: its tasks, its roles, and the limits the run will choose (what a plan
    prints). `staged`: the phase plan's decision (runner/run/placement.py)."""
    latencies = latencies or Latencies()
    limits = choose_limits(config, episodes_available=len(tasks), machine=machine)
    workload = workload_for(config, suite, tasks, staged=staged, latencies=latencies)
    return estimate_run(workload, limits.concurrency, machine=limits.machine or Machine.detect(),
                        latencies=latencies), limits
