"""What the papers' headline runs cost on one 8-GPU box: EvoGenUI-Bench Table 2 and FlowEval Table 1.

    .venv/bin/python bench/paper_estimate.py [--cores 112] [--memory-gib 1800]

The limits are the ones the runner picks (runner/run/capacity.py) for each paper's preset on the stated machine;
the hours come from runner/run/estimate.py with the harness costs measured on the 2-core machine and the model
latencies stated below (assumptions about the servers, not measurements). Nothing is run.

EvoGenUI-Bench Table 2 (§5.1-5.2, App. D.1): eight generators x 150 tasks x 5 turns (6,000 slots), each generator
its own run (`+experiment=evogenui-table2 model=<generator>`); MiMo-V2.5 served by vLLM on all eight GPUs as the
20-step actor and as the evaluator. FlowEval Table 1 (§3.1-3.3): seven generators x 27 sites x 5 generations
(945 outputs), every flow (147 WebVoyager + 116 REAL tasks over the 27 sites) run 3 times by UI-TARS-1.5-7B (up to
50 steps) on each output and once per run on the reference site.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.experiment import compose_config  # noqa: E402
from runner.run.capacity import Machine, choose_limits  # noqa: E402
from runner.run.estimate import Latencies, Workload, estimate_run  # noqa: E402

# Stated latencies (assumptions). EvoGenUI: hosted generators writing a few thousand tokens of React a turn; MiMo's
# actor step (a screenshot and the page's elements in, about 150 tokens out) at a full batch; MiMo's verdict (full-page
# screenshots in, about a thousand tokens out); MiMo's server start (FP8 weights into eight GPUs).
EVOGENUI = Latencies(generator_s=90.0, actor_step_s=6.0, actor_steps=12.0, judge_s=30.0, server_start_s=900.0)
# FlowEval: one-shot sites are longer answers; UI-TARS-1.5-7B's step carries five full-HD screenshots (about 13,500
# image tokens) in and one short action out; a 7B server starts in a few minutes.
FLOWEVAL = Latencies(generator_s=120.0, actor_step_s=3.0, actor_steps=20.0, judge_s=0.0, server_start_s=180.0)

FLOWS, SITES, RUNS, GENERATIONS = 147 + 116, 27, 3, 5


def evogenui(machine: Machine, *, attached: bool, model_calls: int | None) -> tuple[object, object]:
    overrides = ["+experiment=evogenui-table2", "model=gpt-5.5", "tracking=off"]
    if attached:  # one MiMo server kept up by you, shared by the actor and the evaluator
        overrides += ["actor.options.model.server.mode=attach", "+actor.options.model.server.max_num_seqs=256",
                      "+actor.options.model.server.base_url=http://mimo:8000/v1",
                      "judge.options.model.server.mode=attach", "+judge.options.model.server.max_num_seqs=256",
                      "+judge.options.model.server.base_url=http://mimo:8000/v1"]
    if model_calls:
        overrides.append(f"concurrency.model_calls={model_calls}")
    limits = choose_limits(compose_config(overrides), episodes_available=150, machine=machine)
    work = Workload(slots=750, turns_per_episode=5, episodes=150, actor_steps=EVOGENUI.actor_steps,
                    generator_calls=True, judge_calls=True, staged=not attached, server_starts=0 if attached else 2)
    return limits, estimate_run(work, limits.concurrency, machine=machine, latencies=EVOGENUI)


def floweval(machine: Machine, *, model_calls: int | None) -> tuple[object, object]:
    overrides = ["+experiment=floweval-table1", "model=gpt-5.5", "tracking=off"]
    if model_calls:
        overrides.append(f"concurrency.model_calls={model_calls}")
    limits = choose_limits(compose_config(overrides), episodes_available=SITES, machine=machine)
    per_site = FLOWS / SITES * RUNS  # the flow runs on one output
    # The reference site's runs, once per site and run, count beside the five outputs' own.
    work = Workload(slots=SITES * GENERATIONS, turns_per_episode=GENERATIONS, episodes=SITES,
                    visits_per_slot=per_site * (GENERATIONS + 1) / GENERATIONS, actor_steps=FLOWEVAL.actor_steps,
                    generator_calls=True, judge_calls=False, server_starts=1)
    return limits, estimate_run(work, limits.concurrency, machine=machine, latencies=FLOWEVAL)


def show(title: str, runs: int, limits, estimate) -> None:  # noqa: ANN001
    c = limits.concurrency
    print(f"\n{title}")
    print(f"  limits: episodes {c.episodes}, model_calls {c.model_calls}, visits {c.visits}, browsers {c.browsers}, "
          f"judge_calls {c.judge_calls}")
    for line in estimate.lines():
        print(f"  {line}")
    print(f"  x {runs} generator runs: about {estimate.hours * runs:.1f} h")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", type=int, default=112, help="the box's cores (a DGX H100: 2 x 56)")
    parser.add_argument("--memory-gib", type=int, default=1800, help="memory available to the run")
    args = parser.parse_args()
    machine = Machine(cores=args.cores, memory_mib=args.memory_gib * 1024)
    show("EvoGenUI-Bench Table 2, as the preset runs (MiMo started per phase, staged; hosted generator at the "
         "default 4 calls)", 8, *evogenui(machine, attached=False, model_calls=None))
    show("EvoGenUI-Bench Table 2, concurrency.model_calls=64 (what the generator's API quota allows)", 8,
         *evogenui(machine, attached=False, model_calls=64))
    show("EvoGenUI-Bench Table 2, one MiMo server kept up and attached (max_num_seqs 256), model_calls=64", 8,
         *evogenui(machine, attached=True, model_calls=64))
    show("FlowEval Table 1, as the preset runs (UI-TARS served; hosted generator at 4 calls)", 7,
         *floweval(machine, model_calls=None))
    show("FlowEval Table 1, concurrency.model_calls=27", 7, *floweval(machine, model_calls=27))
    limits, base = evogenui(machine, attached=True, model_calls=64)
    two_visits = limits.concurrency.model_copy(update={"visits": 2})
    before = estimate_run(base.workload, two_visits, machine=machine, latencies=EVOGENUI)
    print(f"\nfor comparison, EvoGenUI-Bench Table 2 with two visits at once (the former bound, two browsers each "
          f"holding one visit): about {before.hours * 8:.1f} h, bound by {before.bound}")


if __name__ == "__main__":
    main()
