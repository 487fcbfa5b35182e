"""FlowEval's metrics on public implementations of one specification (docs/floweval-metrics.md, "A case").

    .venv/bin/python bench/floweval_case.py [--featurizers minilm_text pixels] [--json OUT]

TodoMVC (npm `todomvc@0.1.1`, MIT; fetched by scripts/fetch-todomvc.sh): its VanillaJS implementation is the static
reference site with four scripted flows (tasks/floweval/todomvc/vanillajs/site.yaml); the analogs are two other
implementations (Mithril, AngularJS), two copies of the reference with one feature removed (the filter links;
editing by double-click) and a blank page. Every flow is traced with the scripted actor (one run: it is
deterministic) through the runner's own sandbox and browser, then scored against the reference's traces by each
featurizer, with the whole visible text (the paper's reading) and with the credits footer left out
(suite.exclude_regions). Prints, per featurizer and reading, each analog's DTW, eBLEU, WMD and completion, whether
each metric orders correct > broken > blank, and what page chrome alone does to the text featurizer (the cosine
distance of the reference's and each correct implementation's first state, with and without the footer).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner.actors.registry import build_actor  # noqa: E402
from runner.run.experiment import open_browsers  # noqa: E402
from runner.run.pull import compose_config  # noqa: E402
from runner.run.roles import run_facts  # noqa: E402
from runner.run.validation import validate_config  # noqa: E402
from runner.sandbox.registry import build_sandbox  # noqa: E402
from runner.suites.base import SuiteContext  # noqa: E402
from runner.suites.floweval.featurizers import get_featurizer  # noqa: E402
from runner.suites.floweval.scoring import score_flows, trace_states  # noqa: E402
from runner.suites.floweval.traces import cosine_similarity_matrix  # noqa: E402
from runner.suites.registry import build_suite  # noqa: E402
from tests.suites.floweval import todomvc  # noqa: E402

KINDS = {**{name: "correct" for name in todomvc.CORRECT}, **{name: "broken" for name in todomvc.BROKEN},
         todomvc.BLANK: "blank"}


def config(exclude: list[str]):
    raw = compose_config(["suite=floweval", "model=oracle", "actor=scripted", "suite.artifact=static",
                          f"suite.sites_path={todomvc.SITES}", "suite.repeats=1", "tracking=off",
                          f"suite.exclude_regions={json.dumps(exclude)}"])
    raw["project_root"] = str(REPO)
    return validate_config(raw)


async def trace_all(folders: dict[str, Path], out: Path) -> tuple[dict[str, list[str]], dict[str, dict[str, list[str]]]]:
    """The reference's traces and every analog's, recorded with the footer's text beside each state."""
    cfg = config([todomvc.FOOTER])
    suite = build_suite(cfg.suite, project_root=REPO)
    suite.configure_run(run_facts(cfg))
    sandbox = build_sandbox(cfg)
    browsers = await open_browsers(cfg, sandbox)
    try:
        suite.bind(SuiteContext(browsers=browsers, sandbox=sandbox, actor=build_actor(cfg.actor)))
        (task,) = await suite.load_tasks()
        turn = task.turns[0]
        reference = await suite.site_traces(task, turn, Path(task.extra["reference"]["folder"]), out / "reference")
        analogs = {name: await suite.site_traces(task, turn, folder, out / name) for name, folder in folders.items()}
        return reference, analogs
    finally:
        await browsers.aclose()
        await sandbox.aclose()


def first_state_distance(reference: str, analog: str, exclude: bool) -> float:
    texts = [trace_states(Path(path), exclude_regions=exclude).texts[0] for path in (reference, analog)]
    vectors = get_featurizer("minilm_text").featurize([], texts)
    return float(1.0 - cosine_similarity_matrix(vectors[:1], vectors[1:])[0, 0])


def orders(rows: dict[str, dict[str, float]], metric: str, lower: bool) -> bool:
    """Whether every correct analog beats every broken one, and every broken one beats the blank page."""
    value = {name: (row[metric] if lower else -row[metric]) for name, row in rows.items()}
    correct = [value[n] for n in todomvc.CORRECT]
    broken = [value[n] for n in todomvc.BROKEN]
    return max(correct) < min(broken) and max(broken) < value[todomvc.BLANK]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--featurizers", nargs="+", default=["minilm_text", "pixels"])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    package = todomvc.fetch()
    with tempfile.TemporaryDirectory() as scratch:
        folders = todomvc.make_analogs(package, Path(scratch) / "analogs")
        reference, analogs = asyncio.run(trace_all(folders, Path(scratch) / "traces"))
        results: dict[str, Any] = {}
        for featurizer in args.featurizers:
            embed = get_featurizer(featurizer).featurize
            for exclude in (False, True):
                if exclude and featurizer != "minilm_text":
                    continue  # only the text featurizer reads state text
                reading = f"{featurizer}{' without ' + todomvc.FOOTER if exclude else ''}"
                rows = {}
                for name, traces in analogs.items():
                    flows = {flow: {"reference": reference[flow], "generated": traces[flow]} for flow in reference}
                    scored = score_flows(flows, embed, exclude_regions=exclude)
                    rows[name] = {**scored["means"], "completion": scored["completion"]["mean"],
                                  "incomplete": scored["completion"]["incomplete"]}
                results[reading] = {"rows": rows, "orders": {
                    "dtw": orders(rows, "dtw", True), "ebleu": orders(rows, "ebleu", False),
                    "wmd": orders(rows, "wmd", True), "completion": orders(rows, "completion", False)}}
        chrome = {name: {"whole text": first_state_distance(reference["add-todos"][0], analogs[name]["add-todos"][0], False),
                         f"without {todomvc.FOOTER}": first_state_distance(reference["add-todos"][0],
                                                                          analogs[name]["add-todos"][0], True)}
                  for name in todomvc.CORRECT}
        first_texts = {name: {reading: trace_states(Path(path), exclude_regions=exclude).texts[0]
                              for reading, exclude in (("whole text", False), (f"without {todomvc.FOOTER}", True))}
                       for name, path in (("vanillajs (reference)", reference["add-todos"][0]),
                                          *((n, analogs[n]["add-todos"][0]) for n in todomvc.CORRECT))}
    for reading, result in results.items():
        print(f"\n{reading}: analog  kind  DTW  eBLEU  WMD  completion  (incomplete flows)")
        for name, row in result["rows"].items():
            print(f"  {name:18} {KINDS[name]:8} {row['dtw']:6.3f} {row['ebleu']:6.3f} {row['wmd']:6.3f} "
                  f"{row['completion']:6.3f}  {','.join(row['incomplete']) or '-'}")
        print("  orders correct > broken > blank: " + ", ".join(f"{m} {'yes' if ok else 'no'}"
                                                              for m, ok in result["orders"].items()))
    print("\npage chrome (minilm_text, cosine distance of the first state to the reference's):")
    for name, values in chrome.items():
        print(f"  {name:10} " + "  ".join(f"{k}: {v:.3f}" for k, v in values.items()))
    print("\nthe first state's text (add-todos, before any step):")
    for name, texts in first_texts.items():
        for reading, text in texts.items():
            print(f"  {name} / {reading}: {text!r}")
    if args.json is not None:
        args.json.write_text(json.dumps({"results": results, "chrome": chrome, "first_texts": first_texts}, indent=2,
                                        default=float) + "\n")


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
