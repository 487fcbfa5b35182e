"""FlowEval end to end with the real parts: the oracle answers with the reference shop's source, the Vite build
runs in the sandbox, the scripted actor replays the flows in Chromium on both sites, the traces are scored.

What it must show (FlowEval §3.3, issue "What it must show"): the reference site scored against itself gives the
best value of all three metrics; a copy with one flow's key control removed scores clearly worse on all three.
One site and two flows keep it cheap; the `pixels` featurizer needs no model.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from runner.run.experiment import open_browsers, run_experiment
from runner.compose import compose as compose_config
from runner.run.roles import run_facts
from runner.sandbox.registry import build_sandbox
from runner.actors.registry import build_actor
from runner.suites.base import SuiteContext
from runner.suites.floweval.featurizers import get_featurizer
from runner.suites.floweval.scoring import score_flows
from runner.suites.registry import build_suite
from runner.run.validation import validate_config
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.browser, pytest.mark.build, pytest.mark.slow]

OVERRIDES = ["suite=floweval", "model=oracle", "actor=scripted", "suite.limit=1", "suite.task_ids=[shop]",
             "suite.repeats=1", "suite.flows=[checkout,search]", "suite.featurizer=pixels", "tracking=off"]
ADD_TO_CART = """<button className="rounded bg-emerald-600 px-4 py-2 text-white" onClick={() => onAdd(product.id)}>Add to cart</button>"""


def _config():
    raw = compose_config(OVERRIDES)
    raw["project_root"] = str(REPO_ROOT)
    return validate_config(raw)


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("floweval") / "run"
    asyncio.run(run_experiment(_config(), run_dir))
    return run_dir


def test_oracle_run_scores_the_reference_against_itself_best(oracle_run: Path) -> None:
    (record,) = [json.loads(line) for line in (oracle_run / "turns.jsonl").read_text().splitlines()]
    assert record["status"] == "ok" and record["passed"] is None  # continuous scores, no pass decision
    scores = record["verdict"]["scores"]
    assert scores["dtw"] == pytest.approx(0.0, abs=1e-9)
    assert scores["ebleu"] == pytest.approx(1.0, abs=1e-9)
    assert scores["wmd"] == pytest.approx(0.0, abs=1e-4)  # ot.dist: sqrt of a rounding-level square
    evidence = oracle_run / record["evidence_dir"]
    assert (evidence / "site" / "index.html").is_file()  # the built site, kept for the arena page
    assert (evidence / "reference" / "flows" / "checkout" / "run_1" / "final.png").is_file()  # self-contained
    trace = json.loads((evidence / "flows" / "checkout" / "run_1" / "trace.json").read_text())
    assert [step["action"]["kind"] for step in trace["steps"]] == ["click"] * 4 + ["fill"] * 3 + ["click"]
    assert all(step["ok"] and step["screenshot_before"] and step["observation"] for step in trace["steps"])
    assert "Thank you, Ada Lovelace!" in trace["summary"]["final_text"]
    assert trace["summary"]["final_screenshot"] == "final.png"
    summary = json.loads((oracle_run / "summary.json").read_text())
    assert summary["floweval"]["wmd"]["slots"] == 1


def test_removing_a_flows_key_control_scores_worse_on_all_three(oracle_run: Path, tmp_path: Path) -> None:
    async def broken_traces() -> dict[str, list[str]]:
        config = _config()
        suite = build_suite(config.suite, project_root=REPO_ROOT)
        suite.configure_run(run_facts(config))
        sandbox = build_sandbox(config)
        browsers = await open_browsers(config, sandbox)
        try:
            suite.bind(SuiteContext(browsers=browsers, sandbox=sandbox, actor=build_actor(config.actor)))
            (task,) = await suite.load_tasks()
            turn = task.turns[0]
            files = dict(turn.reference_files)
            assert ADD_TO_CART in files["src/App.jsx"]
            files["src/App.jsx"] = files["src/App.jsx"].replace(ADD_TO_CART, "")
            return await suite.source_traces(task, turn, files, tmp_path / "broken")
        finally:
            await browsers.aclose()
            await sandbox.aclose()

    broken = asyncio.run(broken_traces())
    reference = oracle_run / "reference" / "shop" / "flows"
    flows = {flow: {"reference": [str(reference / flow / "run_1" / "trace.json")], "generated": broken[flow]}
             for flow in ("checkout", "search")}
    result = score_flows(flows, get_featurizer("pixels").featurize)
    hurt, untouched = result["flows"]["checkout"], result["flows"]["search"]
    # The flow stops at its second step: no valid warping (DTW = the reference length, 9 states), eBLEU's
    # length penalty (3 states against 9), and mass moved to the product page (WMD).
    assert hurt["dtw"] == pytest.approx(9.0) and hurt["ebleu"] < 0.5 and hurt["wmd"] > 0.5, hurt
    means = result["means"]  # the site's score: clearly off the best values (0, 1, 0)
    assert means["dtw"] > 1.0 and means["ebleu"] < 0.8 and means["wmd"] > 0.2, means
    # The search flow completes; only its last page (the product page) lost the button.
    assert untouched["dtw"] < hurt["dtw"] and untouched["ebleu"] > hurt["ebleu"] and untouched["wmd"] < hurt["wmd"]
