"""`run.plan=true` (runner/run/plan.py) on the presets: the slots, each role's calls as an upper bound worked
out here by hand from the paper's settings, the output and input token bounds, the cost bound of a priced role,
the GPU phases and what is present or missing; through the command line it starts nothing and writes nothing
beyond Hydra's own files."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from runner.run import preflight
from runner.run.data_pull import pull_paper_data
from runner.run.plan import RunPlan, build_plan, format_plan
from runner.compose import compose as compose_config
from runner.run.roles import run_facts
from runner.run.validation import validate_config
from runner.suites.registry import build_run_suite, validate_suite_options
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.support.data_sources import checkout_repo

MIMO = "XiaomiMiMo/MiMo-V2.5"
MIMO_REVISION = "63651580ca774f8504f676040460aed3e1244ac1"


def _config(*overrides: str):
    raw = compose_config(list(overrides))
    raw["project_root"] = str(REPO_ROOT)
    return validate_config(raw)


def _plan(*overrides: str, context: preflight.RunContext | None = None) -> RunPlan:
    return asyncio.run(build_plan(_config(*overrides), context))


def _roles(plan: RunPlan) -> dict[str, tuple[int | None, int | None, int | None]]:
    return {role.role: (role.calls, role.output_tokens, role.input_tokens) for role in plan.roles}


def test_evogenui_table2_on_the_project_set_with_a_priced_generator(tmp_path: Path) -> None:
    hub = tmp_path / "hub"  # the actor's weights are here, the evaluator's (another cache) are not
    snapshot = hub / "models--XiaomiMiMo--MiMo-V2.5" / "snapshots" / MIMO_REVISION
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    plan = _plan("+experiment=evogenui-table2", "model=gpt-5.5", "suite.task_set=project",
                 f"++actor.options.model.server.hf_cache={hub}", f"++judge.options.model.server.hf_cache={tmp_path}")
    assert plan.task_set is not None and (plan.task_set["name"], plan.task_set["tasks_run"]) == ("project", 9)
    slots = 9 * 5  # nine tasks of five turns (§5.1)
    assert plan.slots == slots
    assert _roles(plan) == {
        "generator": (slots, slots * 32768, None),  # App. D.1: 32,768 tokens; no context limit in gpt-5.5.yaml
        # a verdict (3 attempts) and §6.1's diagnostic call (3 attempts) on the evaluator's model, per slot
        "judge": (slots * (3 + 3), slots * 6 * 8192, slots * 6 * (65536 - 8192)),
        "actor": (slots * 20 * 3, slots * 60 * 4096, slots * 60 * (65536 - 4096)),  # 20 steps, 3 attempts each
    }
    generator = plan.roles[0]
    assert generator.cost is None and generator.output_cost == pytest.approx(slots * 32768 * 30 / 1e6)
    text = format_plan(plan)
    assert f"output tokens <= ${slots * 32768 * 30 / 1e6:,.2f} ($5 in, $30 out per million tokens); input not " \
           "bounded" in text
    assert f"present actor.options.model (mimo-v2.5): weights {MIMO}@636515" in text
    assert f"missing judge.options.model: judge 'mimo-v2.5': {MIMO}@{MIMO_REVISION} is not in the local hub " \
           f"cache {tmp_path}" in text
    assert "phase together: roles generator, actor, judge" in text or "phase generation" in text
    assert "task set: project (tasks/evogenui" in text and "not the paper's set of 150" in text
    # the concurrency the run will choose and the estimate preflight notes (runner/run/capacity.py, estimate.py)
    assert any(line.startswith("visits = ") for line in plan.limits), plan.limits
    assert plan.estimate and plan.estimate[0].startswith(f"estimate: {slots} slot(s) in about"), plan.estimate
    assert "  concurrency (explicit concurrency.* settings win):" in text and "stated latencies (not measured)" in text


def test_an_explicit_limit_is_the_one_the_plan_prints() -> None:
    plan = _plan("suite=smoke", "concurrency.visits=7", "concurrency.episodes=3")
    assert [line.split(":")[0] for line in plan.limits if line.startswith(("visits", "episodes"))] == \
        ["episodes = 3", "visits = 7"]
    assert plan.estimate[0].startswith("estimate: 9 slot(s) in about")


def test_evogenui_table2_before_and_after_its_data_is_pulled(tmp_path: Path) -> None:
    pin = [f"data_dir={tmp_path / 'data'}", f"suite.paper_data.evogenui-bench.git.url={tmp_path / 'repo'}",
           f"suite.paper_data.evogenui-bench.git.revision={checkout_repo(tmp_path / 'repo')}"]
    context = preflight.RunContext(overrides=["+experiment=evogenui-table2", "model=oracle", "run.plan=true", *pin])
    # the checkout's own prompts too: they come with the data, which is not here yet
    before = _plan("+experiment=evogenui-table2", "model=oracle", "suite.prompts=benchmark", *pin, context=context)
    assert before.slots is None and before.task_set is None and not before.ready
    text = format_plan(before)
    assert "missing suite.paper_data.evogenui-bench" in text
    assert "python -m runner.pull +experiment=evogenui-table2 model=oracle data_dir=" in text  # no run.plan
    assert "the paper's set has 150 task(s)" in text
    assert {role.role: role.calls for role in before.roles} == {"generator": 0, "judge": None, "actor": None}

    config = _config("+experiment=evogenui-table2", "model=oracle", *pin)
    pull_paper_data(tmp_path / "data", "evogenui-bench",
                    validate_suite_options(config.suite).paper_data["evogenui-bench"])
    after = _plan("+experiment=evogenui-table2", "model=oracle", *pin)
    assert after.task_set is not None and after.task_set["name"] == "paper"
    assert (after.tasks, after.slots) == (2, 10)  # the stand-in checkout's two tasks
    assert _roles(after)["judge"][0] == 10 * 6 and _roles(after)["generator"] == (0, 0, None)  # the oracle: a replay
    assert "present suite.paper_data.evogenui-bench" in format_plan(after)
    assert "a replay, no model is called" in format_plan(after)


def test_iwebgen_table2_with_priced_hosted_roles_has_a_cost_bound() -> None:
    plan = _plan("+experiment=iwebgen-table2", "model=gpt-4o", "judge=gpt-4o")
    assert plan.slots == 15  # fifteen specifications, one generation each (§4.1)
    generator, judge = plan.roles
    assert (generator.calls, judge.calls) == (15, 15 * 3)
    # gpt-4o: 128,000-token context, 8,192-token cap; $2.50 in and $10 out per million tokens
    assert generator.cost == pytest.approx((15 * (128000 - 8192) * 2.50 + 15 * 8192 * 10) / 1e6)
    assert judge.cost == pytest.approx((45 * (128000 - 8192) * 2.50 + 45 * 8192 * 10) / 1e6)
    assert f"cost bound of the priced roles: <= ${generator.cost + judge.cost:,.2f}" in format_plan(plan)
    assert "actor" not in _roles(plan)  # the Interaction Probe calls no model


def test_web2code_table3_macro_three_runs_and_floweval_table1_traces() -> None:
    macro = _plan("+experiment=web2code-table3-macro", "model=oracle")
    assert (macro.tasks, macro.slots, macro.repeats) == (12, 60, 3)  # counted without rendering a trajectory
    # per slot: the eq. 8 rubric and the block-by-block S_outbox, two attempts each; three runs (Table 3)
    assert _roles(macro)["judge"][0] == 60 * 2 * 2 * 3

    config = _config("+experiment=floweval-table1", "model=oracle")
    suite = build_run_suite(config)
    suite.configure_run(run_facts(config))
    flows = sum(len(task.extra["flows"]) for task in asyncio.run(suite.load_tasks()))
    floweval = asyncio.run(build_plan(config))
    assert floweval.slots == 3 * 5  # three sites, five generations each (§3.1)
    # every flow 3 times (§3.3) on each of the 5 generations and on the reference site; 50 steps x 3 attempts
    assert _roles(floweval)["actor"][0] == flows * (5 + 1) * 3 * 50 * 3
    assert "judge" not in _roles(floweval)  # scored from the traces


def test_the_command_line_plan_starts_nothing_and_writes_no_run_files(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = subprocess.run(
        runner_command("+experiment=web2code-table3-micro", "model=oracle", "run.plan=true",
                       f"hydra.run.dir={run_dir}", f"tracking.uri=sqlite:///{tmp_path}/mlflow.db",
                       f"cache_dir={tmp_path / 'cache'}"),
        cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("plan (run.plan=true; nothing was started):")
    assert "slots: 60 (12 task(s)) x 3 repeat(s) = 180" in result.stdout
    assert "generator: oracle (oracle): a replay, no model is called" in result.stdout
    assert "ready: yes" in result.stdout
    assert sorted(p.name for p in run_dir.iterdir()) == [".hydra", "__main__.log"]  # Hydra's own, nothing else
    assert not (tmp_path / "mlflow.db").exists() and not (tmp_path / "cache").exists()
