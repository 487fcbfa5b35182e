"""The post hoc audit of failed APR transitions (EvoGenUI-Bench Appendix C.2.1, Table 5).

    python -m runner.validity.apr_audit sample RUN_DIR [RUN_DIR ...] --out AUDIT_DIR [--size N] [--seed 0]
    python -m runner.annotate AUDIT_DIR                       (the annotation page's labelling mode)
    python -m runner.validity.apr_audit table AUDIT_DIR [--labels FILE] [--json OUT]

C.2.1: "We audit a fixed-seed sample of eligible transitions in which the previous turn passed and the following
turn failed. For each transition, annotators inspect the previous user request, previous passing evidence,
current user request, current failure evidence, generated source and DOM evidence, screenshots, browser
interaction traces, and tool/runtime logs when available." Each attributable transition is
"prior-regression-containing" (something the previous passing artifact supported was removed, contradicted,
disconnected or made stale; a failure on the new requirement may come with it) or "new-requirement-only" (the
previous behaviour is largely intact; the failure is explained by the current turn's new or revised
requirement). Table 5 counts both over the transitions "with sufficient evidence"; an annotator can say a
transition has too little (`insufficient_evidence`). The audit is diagnostic only: it never changes APR.

The population is exactly eq. 3's failed retentions (runner.metrics.reliability): turn t-1 passed, turn t
returned a model response (e = 1), was observed (not infra, judge_error or missing) and did not pass. A
transition whose two slots do not both have a frozen packet cannot be shown and is counted, not sampled. It reads
only that shared metric and the evidence folders, so it audits any suite's runs that have APR (smoke's too), and
stays with the judge validity tools rather than in EvoGenUI's folder.

AUDIT_DIR is a blinded sample like runner.validity.sampling's (sample.json, items/, key.jsonl), with
`"mode": "apr_audit"` in sample.json; each item.json is the current (failed) slot's evidence with the previous
(passed) slot's under `previous` (its screenshots prefixed `previous-`). Labels are one JSON object per line,
one per (item, annotator), a later line replacing an earlier one, like the annotation labels file:

    {"item": "a-0f3a9c", "task_id": "ledger", "turn": 3, "annotator": "ann1",
     "attribution": "prior_regression", "note": ""}
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from runner.errors import UserError
from runner.metrics.reliability import UNOBSERVED, Outcome, outcome_of
from runner.turns.packets import has_packet
from runner.turns.records import RunDirectory, TurnRecord, write_json_atomic
from runner.validity.labels import LabelsError, append_label, read_latest_labels
from runner.validity.sampling import ITEM_FILE, ITEMS_DIR, KEY_FILE, SAMPLE_FILE, SampleKey, export_item, read_key

__all__ = ["ATTRIBUTIONS", "AUDIT_MODE", "AuditLabel", "Transition", "append_audit_label", "failed_transitions",
           "read_audit_labels", "table5", "write_audit_sample"]

AUDIT_MODE = "apr_audit"  # sample.json "mode": the annotation page's labelling mode
PREVIOUS = "previous"
PREVIOUS_PREFIX = "previous-"
Attribution = Literal["prior_regression", "new_requirement_only", "insufficient_evidence"]
ATTRIBUTIONS: tuple[str, ...] = ("prior_regression", "new_requirement_only", "insufficient_evidence")
# Table 5's rows, in the paper's words.
TITLES = {"prior_regression": "Prior-regression-containing", "new_requirement_only": "New-requirement-only"}


class AuditLabel(BaseModel):
    """One annotator's attribution of one failed transition."""

    model_config = ConfigDict(extra="forbid")

    item: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    turn: int = Field(ge=2)  # the failed (current) turn; the passed one is turn - 1
    annotator: str = Field(min_length=1)
    attribution: Attribution
    note: str = ""


def read_audit_labels(path: Path) -> list[AuditLabel]:
    """Every annotator's latest label per item, in file order of first appearance."""
    return read_latest_labels(path, AuditLabel)


def append_audit_label(path: Path, label: AuditLabel) -> None:
    """One whole line with a single write and fsync: a killed page never leaves half a label."""
    append_label(path, label)


@dataclass(frozen=True)
class Transition:
    run_dir: Path
    previous: TurnRecord  # turn t-1: passed
    current: TurnRecord  # turn t: answered, observed, not passed

    @property
    def suite(self) -> str:
        return self.current.sub_suite or self.current.suite


def failed_transitions(records: list[TurnRecord], run_dir: Path = Path(".")) -> list[Transition]:
    """eq. 3's failed retentions among the records (the module docstring), sorted by slot."""
    slots = {record.slot: record for record in records}
    found = []
    for (task_id, turn), current in sorted(slots.items()):
        previous = slots.get((task_id, turn - 1))
        if previous is None or outcome_of(previous) is not Outcome.PASSED:
            continue
        outcome = outcome_of(current)
        if outcome in (Outcome.PASSED, Outcome.NO_RESPONSE) or outcome in UNOBSERVED:
            continue
        found.append(Transition(Path(run_dir), previous, current))
    return found


def _export_previous(folder: Path, target: Path) -> dict[str, Any]:
    """The previous slot's item fields, its screenshots copied beside the current ones with a prefix."""
    scratch = target / f".{PREVIOUS}"
    export_item(folder, scratch, item=PREVIOUS)
    data = json.loads((scratch / ITEM_FILE).read_text())
    renamed = []
    for name in data.get("screenshots", []):
        shutil.move(scratch / name, target / f"{PREVIOUS_PREFIX}{name}")
        renamed.append(f"{PREVIOUS_PREFIX}{name}")
    shutil.rmtree(scratch)
    data["screenshots"] = renamed
    keep = ("turn", "prompt", "criteria", "assistant_text", "build", "screenshots", "trace", "tool_log", "page_errors")
    return {key: data.get(key) for key in keep}


def write_audit_sample(run_dirs: list[Path], out: Path, *, size: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Draw the fixed-seed sample of failed transitions and export it blinded; returns sample.json's content."""
    out = Path(out)
    if (out / SAMPLE_FILE).exists():
        raise LabelsError(f"{out}: already holds a sample ({SAMPLE_FILE}); choose another --out")
    pool: list[Transition] = []
    without_packets = 0
    for run_dir in (Path(p).resolve() for p in run_dirs):
        directory = RunDirectory(run_dir)
        records = directory.load_records()
        if not records:
            raise LabelsError(f"{run_dir}: no turns.jsonl records; pass the dir of a finished run")
        for transition in failed_transitions(records, run_dir):
            if all(has_packet(directory.evidence_dir(*r.slot)) for r in (transition.previous, transition.current)):
                pool.append(transition)
            else:
                without_packets += 1
    rng = random.Random(seed)
    chosen = rng.sample(pool, len(pool) if size is None else min(size, len(pool)))
    ids = random.Random(f"audit-item-ids-{seed}")
    keys: list[SampleKey] = []
    for transition in chosen:
        item = f"a-{ids.getrandbits(40):010x}"
        directory = RunDirectory(transition.run_dir)
        target = out / ITEMS_DIR / item
        export_item(directory.evidence_dir(*transition.current.slot), target, item=item)
        data = json.loads((target / ITEM_FILE).read_text())
        data[PREVIOUS] = _export_previous(directory.evidence_dir(*transition.previous.slot), target)
        write_json_atomic(target / ITEM_FILE, data)
        current = transition.current
        keys.append(SampleKey(item=item, run_dir=str(transition.run_dir), task_id=current.task_id, turn=current.turn,
                              model=current.model, suite=transition.suite, judge=current.judge,
                              judge_passed=current.passed))
    (out / KEY_FILE).write_text("".join(key.model_dump_json() + "\n" for key in keys))
    sample = {"mode": AUDIT_MODE, "seed": seed, "size": size, "failed_transitions": len(pool) + without_packets,
              "without_packets": without_packets, "items": [key.item for key in keys]}
    write_json_atomic(out / SAMPLE_FILE, sample)
    return sample


def _majority(labels: list[AuditLabel]) -> str | None:
    """The item's attribution: the annotators' majority; None on a tie."""
    votes = Counter(label.attribution for label in labels).most_common()
    if len(votes) > 1 and votes[0][1] == votes[1][1]:
        return None
    return votes[0][0]


def table5(audit_dir: Path, labels_path: Path | None = None) -> dict[str, Any]:
    """Table 5 from the audit's labels: counts and shares over the attributable transitions, overall and per
    suite, plus how many items were left out (insufficient evidence, annotators tied, not labelled)."""
    audit_dir = Path(audit_dir)
    try:
        sample = json.loads((audit_dir / SAMPLE_FILE).read_text())
    except (OSError, ValueError) as error:
        raise LabelsError(f"{audit_dir / SAMPLE_FILE}: not an audit sample: {error}") from None
    if sample.get("mode") != AUDIT_MODE:
        raise LabelsError(f"{audit_dir / SAMPLE_FILE}: mode is {sample.get('mode')!r}, not {AUDIT_MODE!r} "
                          "(write one with `python -m runner.validity.apr_audit sample`)")
    key = read_key(audit_dir)
    labels_path = Path(labels_path) if labels_path is not None else audit_dir / "labels.jsonl"
    by_item: dict[str, list[AuditLabel]] = {}
    for label in read_audit_labels(labels_path) if labels_path.exists() else []:
        if label.item not in key:
            raise LabelsError(f"{labels_path}: item {label.item!r} is not in the audit sample {audit_dir}")
        by_item.setdefault(label.item, []).append(label)
    groups: dict[str, Counter[str]] = {"overall": Counter()}
    for item in sample.get("items", []):
        attribution = _majority(by_item[item]) if item in by_item else "unlabelled"
        attribution = attribution or "tied"
        for group in ("overall", key[item].suite):
            groups.setdefault(group, Counter())[attribution] += 1
    result: dict[str, Any] = {"sampled": len(sample.get("items", [])), "seed": sample.get("seed"),
                              "failed_transitions": sample.get("failed_transitions"),
                              "without_packets": sample.get("without_packets"), "groups": {}}
    for name, counts in groups.items():
        attributable = counts["prior_regression"] + counts["new_requirement_only"]
        result["groups"][name] = {
            "n": attributable,
            **{row: {"count": counts[row], "share": counts[row] / attributable if attributable else None}
               for row in TITLES},
            "insufficient_evidence": counts["insufficient_evidence"], "tied": counts["tied"],
            "unlabelled": counts["unlabelled"],
        }
    return result


def render_table5(table: dict[str, Any]) -> str:
    overall = table["groups"]["overall"]
    lines = [f"Table 5 (EvoGenUI-Bench App. C.2.1): attribution of N={overall['n']} failed APR transitions "
             f"with sufficient evidence (sample of {table['sampled']}, seed {table['seed']})",
             f"{'Attribution category':<30} {'Count':>6} {'Share':>7}"]
    for row, title in TITLES.items():
        share = overall[row]["share"]
        lines.append(f"{title:<30} {overall[row]['count']:>6} {'n/a' if share is None else f'{100 * share:.1f}%':>7}")
    lines.append(f"left out: {overall['insufficient_evidence']} insufficient evidence, {overall['tied']} tied, "
                 f"{overall['unlabelled']} unlabelled")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.validity.apr_audit", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sample = commands.add_parser("sample", help="draw the fixed-seed sample of failed APR transitions")
    sample.add_argument("run_dirs", nargs="+", type=Path)
    sample.add_argument("--out", type=Path, required=True)
    sample.add_argument("--size", type=int, default=None, help="transitions to sample (default: all of them)")
    sample.add_argument("--seed", type=int, default=0)
    table = commands.add_parser("table", help="Table 5 from the audit's labels")
    table.add_argument("audit_dir", type=Path)
    table.add_argument("--labels", type=Path, default=None, help="default AUDIT_DIR/labels.jsonl")
    table.add_argument("--json", type=Path, default=None, help="also write the table as JSON here")
    args = parser.parse_args(argv)
    try:
        if args.command == "sample":
            if args.size is not None and args.size < 1:
                parser.error(f"--size must be at least 1, not {args.size}")
            written = write_audit_sample(args.run_dirs, args.out, size=args.size, seed=args.seed)
            print(f"{len(written['items'])} of {written['failed_transitions']} failed transition(s) in {args.out} "
                  f"({written['without_packets']} without packets; keep {KEY_FILE} away from annotators)",
                  file=sys.stderr)
            print(args.out)
            return 0
        result = table5(args.audit_dir, args.labels)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(render_table5(result))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
