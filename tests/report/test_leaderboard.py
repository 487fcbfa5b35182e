"""runner.report over real run dirs (leaderboard numbers, plots), plus the paper table shapes of suites
whose summaries these quick runs do not produce (built from real metric code on made-up records)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from runner.metrics.reliability import summarize as reliability_summary
from runner.turns.records import FailureBucket, TurnRecord, Verdict
from runner.report.collect import RunData
from runner.report.leaderboard import build_leaderboard, format_cell, to_html, to_markdown
from runner.report.plots import make_plots
from runner.suites.evogenui.table2 import table2
from runner.suites.evogenui.taxonomy import mechanism_counts
from tests.conftest import REPO_ROOT, cli_env


def _png_ok(path: Path) -> None:
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        assert image.width > 200 and image.height > 200


def _table(board: dict, suite: str, table_id: str) -> dict:
    return next(t for t in board["suites"][suite] if t["id"] == table_id)


@pytest.mark.browser
@pytest.mark.build
@pytest.mark.sandbox
@pytest.mark.slow
def test_report_cli_over_two_runs(report_runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "runner.report", str(report_runs["null"]), str(report_runs["probe"]),
                           "--out", str(out)], cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == str(out)
    board = json.loads((out / "leaderboard.json").read_text())
    overview = _table(board, "smoke", "overview")
    rows = {row["run"]: row for row in overview["rows"]}
    assert set(rows) == {"null / rules / probe", "oracle / rules / probe"}
    probe, null = rows["oracle / rules / probe"], rows["null / rules / probe"]
    assert probe["turn_pass"]["value"] == pytest.approx(1 / 3)  # pass, failed requirement, build failure
    assert null["turn_pass"]["value"] == 0.0
    assert probe["bsr"] == pytest.approx(2 / 3) and null["bsr"] == 0.0
    assert probe["slots"] == "3/3" and null["statuses"] == "blocked: 2, invalid_output: 1"
    assert [row["run"] for row in overview["rows"]] == ["oracle / rules / probe", "null / rules / probe"]  # by TP
    table = _table(board, "smoke", "table2")
    first = table["rows"][0]
    assert first["overall.turn_pass"]["value"] == pytest.approx(1 / 3) and first["overall.cpt"]["value"] == 1.0
    assert table["rows"][-1]["run"] == "Aggregate"
    assert table["rows"][-1]["overall.turn_pass"]["value"] == pytest.approx(1 / 6)  # macro-average of the rows
    domains = _table(board, "smoke", "per_domain")
    by_run = {row["run"]: row for row in domains["rows"]}
    assert by_run["oracle / rules / probe"]["testing.bsr"] == pytest.approx(2 / 3)
    assert "utility.bsr" in by_run["null / rules / probe"]
    markdown = (out / "leaderboard.md").read_text()
    assert "| oracle / rules / probe | 1 | 3/3 | 33.3" in markdown
    page = (out / "leaderboard.html").read_text()
    assert "Content-Security-Policy" in page and "data:image/png;base64," in page
    assert sorted(board["plots"]) == ["bsr_vs_ir.png", "pass_by_turn.png"]  # smoke: no sub-suites, mechanisms or modes
    for name in board["plots"]:
        _png_ok(out / name)
    for href in board["viewers"].values():
        assert (out / href).is_file()


# --------------------------------------------------------------------------- paper shapes


def _record(task: str, sub_suite: str, turn: int, passed: bool, mechanism: str | None = None) -> TurnRecord:
    verdict = Verdict(judge="rules", passed=passed, mechanism=mechanism)
    return TurnRecord(task_id=task, suite="evogenui", sub_suite=sub_suite, turn=turn, passed=passed,
                      status=FailureBucket.OK, model_responded=True, verdict=verdict, extra={"build_status": "ok"})


def _evogenui_run(model: str, pattern: dict[str, list[list[bool]]]) -> RunData:
    records = []
    for sub_suite, rows in pattern.items():
        for index, row in enumerate(rows):
            for turn, passed in enumerate(row, start=1):
                mechanism = None if passed else ("affordance_binding" if turn % 2 else "derived_state_propagation")
                records.append(_record(f"{sub_suite[:3]}-{index}", sub_suite, turn, passed, mechanism))
    summary = {"turn_pass": sum(r.passed for r in records) / len(records), "build_success_rate": 1.0,
               "interaction_rate": 0.5, "reliability": reliability_summary(records, 3, n_resamples=200),
               "table2": table2(records, 3, n_resamples=200), "failure_mechanisms": mechanism_counts(records),
               "run": {"suite": "evogenui", "model": model, "judge": "rules", "actor": "probe", "tasks": 4}}
    return RunData(label=model, config={}, summary=summary, records=records)


def test_evogenui_table2_shape_and_figures(tmp_path: Path) -> None:
    strong = _evogenui_run("strong", {"presentation": [[True, True, True], [True, True, False]],
                                      "interaction": [[True, False, False], [True, True, True]]})
    weak = _evogenui_run("weak", {"presentation": [[True, False, False], [False, False, False]],
                                  "interaction": [[False, False, False], [True, False, True]]})
    board = build_leaderboard([weak, strong])
    table = _table(board, "evogenui", "table2")
    labels = [c["label"] for c in table["columns"]]
    assert labels[1:5] == ["Presentation TP", "Presentation TP@3", "Presentation CPT", "Presentation APR"]
    assert labels[-4:] == ["Overall TP", "Overall TP@3", "Overall CPT", "Overall APR"]
    assert [row["run"] for row in table["rows"]] == ["strong", "weak", "Aggregate"]
    strong_row = table["rows"][0]
    assert strong_row["presentation.turn_pass"]["value"] == pytest.approx(5 / 6)
    assert strong_row["presentation.tp_at_k"]["value"] == pytest.approx(0.5)
    lo, hi = strong_row["overall.turn_pass"]["ci"]
    assert lo <= strong_row["overall.turn_pass"]["value"] <= hi
    aggregate = table["rows"][-1]
    # APR pooled over eligible transitions of both models (not the mean of the two APRs).
    terms = [(run.summary["reliability"]["presentation"]["apr_retained"], run.summary["reliability"]["presentation"]["apr_eligible"])
             for run in (strong, weak)]
    assert aggregate["presentation.apr"]["value"] == pytest.approx(sum(r for r, _ in terms) / sum(e for _, e in terms))
    assert format_cell(strong_row["presentation.turn_pass"], "pct_ci").startswith("83.3 [")
    plots = make_plots([strong, weak], tmp_path)
    assert set(plots) == {"pass_by_turn", "suite_difficulty", "failure_mechanisms", "bsr_vs_ir"}
    for path in plots.values():
        _png_ok(path)


def test_web2code_table3_and_chain_vs_independent(tmp_path: Path) -> None:
    table3 = {"overall": {"layout": 0.6, "element": 0.7, "overall": 0.62, "s_inbox": 0.65, "s_outbox": 0.9, "score": 0.7, "turns": 6},
              "chain": {"layout": 0.5, "overall": 0.55, "s_inbox": 0.6, "s_outbox": 0.9, "score": 0.66, "turns": 3},
              "independent": {"layout": 0.7, "overall": 0.7, "s_inbox": 0.7, "s_outbox": 0.9, "score": 0.74, "turns": 3}}
    per_turn = {"chain": [{"turn": 1, "score": 0.8}, {"turn": 2, "score": 0.6}, {"turn": 3, "score": 0.5}],
                "independent": [{"turn": 1, "score": 0.8}, {"turn": 2, "score": 0.75}, {"turn": 3, "score": 0.72}]}
    summary = {"turn_pass": None, "score": 0.7, "build_success_rate": 1.0, "interaction_rate": None,
               "web2code": {"track": "micro", "table3": table3, "per_turn": per_turn},
               "run": {"suite": "micro", "model": "m", "judge": "rules", "actor": "none"}}
    run = RunData(label="m", config={}, summary=summary, records=[])
    board = build_leaderboard([run])
    table = _table(board, "micro", "table3")
    labels = [c["label"] for c in table["columns"]]
    assert labels[:5] == ["level", "model / judge / actor", "mode", "Layout", "Element"]
    assert labels[-5:] == ["Overall", "S_inbox", "S_outbox", "Score", "turns"]
    assert [row["mode"] for row in table["rows"]] == ["overall", "independent", "chain"]
    assert table["rows"][0]["level"] == "Micro-Level"
    assert "| Micro-Level | m | overall | 60.0 | 70.0 | 62.0 | 65.0 | 90.0 | 70.0 | 6 |" in to_markdown(board)
    plots = make_plots([run], tmp_path)
    assert "chain_vs_independent" in plots
    _png_ok(plots["chain_vs_independent"])


def test_floweval_elo_and_agreement_shape() -> None:
    floweval = {"reference": "human",
                "elo": {"human": {"a": 1342, "b": 928}, "wmd": {"a": 1146, "b": 1200}},
                "agreement": {"wmd": {"spearman": 0.96, "kappa": 0.46, "agreement_rate": 0.73}}}
    run = RunData(label="f", config={}, summary={"floweval": floweval, "run": {"suite": "floweval"}}, records=[])
    board = build_leaderboard([run])
    table = _table(board, "floweval", "floweval")
    rows = {row["model"]: row for row in table["rows"]}
    assert rows["a"]["human"] == "1342 (1)" and rows["a"]["wmd"] == "1146 (2)"
    assert rows["Spearman rho"] == {"model": "Spearman rho", "human": "N/A", "wmd": "0.96"}
    assert rows["Agreement rate"]["wmd"] == "73.0%"


def test_html_escapes_run_labels() -> None:
    run = RunData(label="<script>alert(1)</script>", config={}, summary={"turn_pass": 0.5, "run": {"suite": "smoke"}}, records=[])
    page = to_html(build_leaderboard([run]), run_links={run.label: "runs/00/report.html"})
    assert "<script>" not in page and "&lt;script&gt;" in page
