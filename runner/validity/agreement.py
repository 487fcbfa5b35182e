"""`python -m runner.agreement RUN_DIR [RUN_DIR ...] LABELS`: how well a run's judge agrees with people.

Per suite and overall, like EvoGenUI-Bench §4.4 and Tables 3 and 7: accuracy, precision, recall and F1 of the
judge's official decision against the majority human label (passing is the positive class, Table 3), Cohen's
kappa of the judge against the majority label and Fleiss' kappa among the annotators (§4.4), and the human
agreement of Table 7 (the share of individual annotations that support the automatic decision). For the
failure taxonomy (§6.1): the mean exact-label agreement of the judge's mechanism with each annotator's, the
mean multiclass Cohen's kappa between the judge and individual annotators, and Fleiss' kappa among them.

With several run dirs (the same generations judged with other actors or judges) it adds the actor x judge
grid of Table 7. `--key SAMPLE_DIR/key.jsonl` restricts labels to the items sampled from each run's model
(a sample drawn over several models labels the same slot once per model).

Statistics come from scikit-learn (accuracy, precision, recall, F1, Cohen's kappa) and statsmodels (Fleiss'
kappa). A figure that cannot be computed (no labelled slot, one class only) is null, never 0.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score, precision_score, recall_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from runner.errors import UserError
from runner.turns.records import RunDirectory, TurnRecord
from runner.validity.labels import Label, LabelsError, majority, read_labels
from runner.validity.sampling import SampleKey, read_key

__all__ = ["OVERALL", "LabelledSlot", "agreement_report", "decision_agreement", "fleiss", "labelled_slots",
           "taxonomy_agreement"]

OVERALL = "overall"


@dataclass
class LabelledSlot:
    record: TurnRecord
    labels: list[Label]

    @property
    def group(self) -> str:
        """The suite as the papers report it: EvoGenUI's three suites are this project's sub-suites."""
        return self.record.sub_suite or self.record.suite

    @property
    def judge_passed(self) -> bool:
        # The official decision: an undecided verdict (None) counts as not passed, as in every metric.
        return self.record.passed is True


def _number(value: float) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def fleiss(ratings: list[list[Any]]) -> tuple[float | None, int]:
    """Fleiss' kappa over items rated by the same number of annotators (the most common count, at least 2):
    Fleiss' statistic assumes every item has n ratings. Returns (kappa, items used)."""
    counts = Counter(len(item) for item in ratings if len(item) >= 2)
    if not counts:
        return None, 0
    raters = max(counts, key=lambda n: (counts[n], n))
    used = [item for item in ratings if len(item) == raters]
    categories = sorted({str(value) for item in used for value in item})
    if len(categories) < 2:
        return None, len(used)  # one category only: chance agreement is 1, kappa undefined
    table, _ = aggregate_raters([[categories.index(str(v)) for v in item] for item in used],
                                n_cat=len(categories))
    return _number(fleiss_kappa(table, method="fleiss")), len(used)


def decision_agreement(slots: list[LabelledSlot]) -> dict[str, Any]:
    """The pass/fail figures of one group of labelled slots."""
    decided = [(slot, majority(slot.labels)) for slot in slots]
    pairs = [(slot.judge_passed, human) for slot, human in decided if human is not None]
    judge = [j for j, _ in pairs]
    human = [h for _, h in pairs]
    annotations = [(slot.judge_passed, label.passed) for slot in slots for label in slot.labels]
    kappa, fleiss_items = fleiss([[label.passed for label in slot.labels] for slot in slots])
    result: dict[str, Any] = {
        "slots": len(slots), "compared": len(pairs), "human_ties": len(slots) - len(pairs),
        "judge_undecided": sum(1 for slot in slots if slot.record.passed is None),
        "annotations": len(annotations),
        "accuracy": None, "precision": None, "recall": None, "f1": None, "cohen_kappa": None,
        # Table 7: "the percentage of those annotations that support the automatic decision"
        "human_agreement": (sum(1 for j, h in annotations if j == h) / len(annotations)) if annotations else None,
        "fleiss_kappa": kappa, "fleiss_items": fleiss_items,
    }
    if pairs:
        result["accuracy"] = _number(accuracy_score(human, judge))
        # zero_division=nan: a precision with no predicted pass is undefined, reported as null
        result["precision"] = _number(precision_score(human, judge, pos_label=True, zero_division=math.nan))
        result["recall"] = _number(recall_score(human, judge, pos_label=True, zero_division=math.nan))
        result["f1"] = _number(f1_score(human, judge, pos_label=True, zero_division=math.nan))
        if len(set(judge) | set(human)) > 1:
            result["cohen_kappa"] = _number(cohen_kappa_score(human, judge))
    return result


def taxonomy_agreement(slots: list[LabelledSlot]) -> dict[str, Any]:
    """§6.1: the judge's mechanism against each annotator's, on slots where both gave one."""
    by_annotator: dict[str, list[tuple[str, str]]] = {}
    for slot in slots:
        judged = slot.record.verdict.mechanism if slot.record.verdict is not None else None
        if judged is None:
            continue
        for label in slot.labels:
            if label.mechanism is not None:
                by_annotator.setdefault(label.annotator, []).append((judged, label.mechanism))
    exact: list[float] = []
    kappas: list[float] = []
    for pairs in by_annotator.values():
        exact.append(sum(1 for j, h in pairs if j == h) / len(pairs))
        if len({value for pair in pairs for value in pair}) > 1:
            kappa = _number(cohen_kappa_score([h for _, h in pairs], [j for j, _ in pairs]))
            if kappa is not None:
                kappas.append(kappa)
    among, items = fleiss([[label.mechanism for label in slot.labels if label.mechanism is not None]
                           for slot in slots])
    return {
        "annotators": len(by_annotator), "pairs": sum(len(pairs) for pairs in by_annotator.values()),
        "exact_agreement": sum(exact) / len(exact) if exact else None,
        "cohen_kappa": sum(kappas) / len(kappas) if kappas else None,  # mean over individual annotators
        "fleiss_kappa": among, "fleiss_items": items,
    }


def labelled_slots(run_dir: Path, labels: list[Label], key: dict[str, SampleKey] | None = None) -> list[LabelledSlot]:
    """The run's records that carry labels. With a sample key, a label counts only for the run whose model
    its item was drawn from."""
    records = {record.slot: record for record in RunDirectory(run_dir).load_records()}
    if not records:
        raise LabelsError(f"{run_dir}: no turns.jsonl records; pass the dir of a finished run")
    grouped: dict[tuple[str, int], list[Label]] = {}
    for label in labels:
        record = records.get(label.slot)
        if record is None:
            continue
        if key is not None:
            entry = key.get(label.item)
            if entry is None or entry.model != record.model:
                continue
        grouped.setdefault(label.slot, []).append(label)
    return [LabelledSlot(records[slot], slot_labels) for slot, slot_labels in grouped.items()]


def agreement_report(run_dir: Path, labels: list[Label], key: dict[str, SampleKey] | None = None) -> dict[str, Any]:
    slots = labelled_slots(run_dir, labels, key)
    if not slots:
        raise LabelsError(f"{run_dir}: none of the labelled slots is in this run")
    groups = sorted({slot.group for slot in slots})
    first = slots[0].record
    report: dict[str, Any] = {"run_dir": str(run_dir), "judge": first.judge, "actor": first.actor,
                              "model": first.model, "decision": {}, "taxonomy": {}}
    for group in [*groups, OVERALL]:
        members = slots if group == OVERALL else [slot for slot in slots if slot.group == group]
        report["decision"][group] = decision_agreement(members)
        report["taxonomy"][group] = taxonomy_agreement(members)
    return report


def _cell(value: Any, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}" if percent else f"{value:.3f}"


def _print(console: Console, reports: list[dict[str, Any]]) -> None:
    for report in reports:
        table = Table(title=f"{report['run_dir']}  judge={report['judge']} actor={report['actor']}")
        for column in ("suite", "slots", "acc %", "prec %", "rec %", "F1 %", "Cohen k", "Fleiss k", "agree %",
                       "taxonomy exact %", "taxonomy k"):
            table.add_column(column)
        for group, row in report["decision"].items():
            taxonomy = report["taxonomy"][group]
            table.add_row(group, str(row["compared"]), _cell(row["accuracy"], True), _cell(row["precision"], True),
                          _cell(row["recall"], True), _cell(row["f1"], True), _cell(row["cohen_kappa"]),
                          _cell(row["fleiss_kappa"]), _cell(row["human_agreement"], True),
                          _cell(taxonomy["exact_agreement"], True), _cell(taxonomy["cohen_kappa"]))
        console.print(table)
    if len(reports) > 1:  # Table 7: the actor x evaluator grid, human agreement per suite
        groups = sorted({group for report in reports for group in report["decision"]} - {OVERALL}) + [OVERALL]
        grid = Table(title="actor x judge: human agreement % (EvoGenUI-Bench Table 7)")
        for column in ("actor", "judge", *groups):
            grid.add_column(column)
        for report in reports:
            grid.add_row(report["actor"], report["judge"],
                         *(_cell(report["decision"].get(g, {}).get("human_agreement"), True) for g in groups))
        console.print(grid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.agreement", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, metavar="RUN_DIR ... LABELS")
    parser.add_argument("--key", type=Path, help="the sample's key.jsonl (labels count for their item's model)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if len(args.paths) < 2:
        parser.error("give at least one RUN_DIR and the LABELS file")
    *run_dirs, labels_path = args.paths
    try:
        labels = read_labels(labels_path)
        key = read_key(args.key) if args.key else None
        reports = [agreement_report(run_dir, labels, key) for run_dir in run_dirs]
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    _print(Console(), reports)
    if args.json:
        args.json.write_text(json.dumps(reports if len(reports) > 1 else reports[0], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
