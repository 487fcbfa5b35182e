"""A blinded, stratified sample of slots for human annotation (EvoGenUI-Bench §4.4).

    python -m runner.validity.sampling RUN_DIR [RUN_DIR ...] --out SAMPLE_DIR [--per-pair 10] [--seed 0]

§4.4: "a blinded sample ... covering all eight generator models and all three suites, with 10 cases per
model-suite pair and stratification by automatic pass/fail outcome". Each (model, suite) pair gives
`per_pair` executed slots, half with a passing and half with a failing automatic decision (the other outcome
fills in where one has too few); the draw and the presentation order come from one seeded generator, so the
same runs and seed give the same sample.

SAMPLE_DIR holds what annotators see and, apart, what they must not:

    sample.json            the item ids in presentation order (shuffled: order says nothing of the outcome)
    items/<item>/item.json the slot's evidence for a person: request, public task text, validation criteria,
                           assistant text, build status, actor trace, tool log, page errors, screenshot names
    items/<item>/*.png     the screenshots (load-time, final, actor steps)
    key.jsonl              item -> run dir, slot, model, judge and its decision; for runner.agreement only

Nothing under items/ names the model or the judge's decision: the packet, its pre-verdict record and the
verdict are never copied.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from runner.errors import UserError
from runner.turns.evidence_folder import EvidenceFolder, read_json_objects
from runner.turns.packets import EvidencePacket, has_packet, read_packet
from runner.turns.records import FailureBucket, RunDirectory, TurnRecord, write_json_atomic
from runner.validity.labels import LabelsError

__all__ = ["ITEMS_DIR", "KEY_FILE", "SAMPLE_FILE", "SampleKey", "draw_sample", "export_item", "read_key",
           "write_sample"]

SAMPLE_FILE = "sample.json"
KEY_FILE = "key.jsonl"
ITEMS_DIR = "items"
ITEM_FILE = "item.json"
DEFAULT_PER_PAIR = 10  # §4.4: "10 cases per model-suite pair"
# Slots with nothing a person could judge: no model answer, an earlier artifact missing, the harness failed.
_NOT_EXECUTED = {FailureBucket.BLOCKED, FailureBucket.PROVIDER_ERROR, FailureBucket.INFRA}


class SampleKey(BaseModel):
    """One line of key.jsonl: what the blinding hides, kept for scoring the labels."""

    model_config = ConfigDict(extra="forbid")

    item: str
    run_dir: str
    task_id: str
    turn: int
    model: str
    suite: str
    judge: str
    judge_passed: bool | None


@dataclass
class Candidate:
    run_dir: Path
    record: TurnRecord

    @property
    def suite(self) -> str:
        return self.record.sub_suite or self.record.suite


def read_key(path: Path) -> dict[str, SampleKey]:
    path = Path(path)
    if path.is_dir():
        path = path / KEY_FILE
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise LabelsError(f"{path}: cannot read the sample key: {error}") from error
    key: dict[str, SampleKey] = {}
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                entry = SampleKey.model_validate_json(line)
            except ValueError as error:
                raise LabelsError(f"{path}:{number}: not a sample key line: {error}") from None
            key[entry.item] = entry
    return key


def candidates(run_dirs: list[Path]) -> list[Candidate]:
    found: list[Candidate] = []
    for run_dir in run_dirs:
        directory = RunDirectory(run_dir)
        records = sorted(directory.load_records(), key=lambda record: record.slot)
        if not records:
            raise LabelsError(f"{run_dir}: no turns.jsonl records; pass the dir of a finished run")
        for record in records:
            if record.status not in _NOT_EXECUTED and has_packet(directory.evidence_dir(*record.slot)):
                found.append(Candidate(Path(run_dir), record))
    return found


def draw_sample(pool: list[Candidate], *, per_pair: int, seed: int) -> list[Candidate]:
    """`per_pair` slots per (model, suite), stratified by the automatic outcome, in a seeded random order."""
    rng = random.Random(seed)
    pairs: dict[tuple[str, str], dict[bool, list[Candidate]]] = {}
    for candidate in pool:
        strata = pairs.setdefault((candidate.record.model, candidate.suite), {True: [], False: []})
        strata[candidate.record.passed is True].append(candidate)
    chosen: list[Candidate] = []
    for pair in sorted(pairs):
        strata = {outcome: rng.sample(members, len(members)) for outcome, members in pairs[pair].items()}
        want = {True: per_pair // 2 + per_pair % 2, False: per_pair // 2}
        for outcome in (True, False):  # the other stratum fills a short one
            short = want[outcome] - len(strata[outcome])
            if short > 0:
                want[outcome] -= short
                want[not outcome] += short
        for outcome in (True, False):
            chosen.extend(strata[outcome][: want[outcome]])
    rng.shuffle(chosen)
    return chosen


def _images(folder: Path, packet: EvidencePacket) -> list[str]:
    names: list[str] = []
    evidence = packet.evidence
    if evidence is not None:
        names += [evidence.screenshot_viewport, evidence.screenshot_full, evidence.final_screenshot_viewport,
                  evidence.final_screenshot_full]
    if packet.trace is not None:
        for step in packet.trace.steps:
            names += [step.screenshot_before, step.screenshot_after]
    return [name for name in dict.fromkeys(names) if name and (folder / name).is_file()]


def export_item(folder: Path, target: Path, *, item: str) -> None:
    """The slot's evidence as a person reads it, without the model's identity or any verdict."""
    packet = read_packet(folder)
    evidence = EvidenceFolder(folder)
    target.mkdir(parents=True, exist_ok=True)
    images = _images(folder, packet)
    for name in images:
        shutil.copy2(folder / name, target / Path(name).name)
    request = evidence.read_json(EvidenceFolder.REQUEST) or {}
    turn = packet.turn
    trace = None
    if packet.trace is not None:
        trace = {"actor_claim": packet.trace.claim, "finished": packet.trace.finished, "steps": [
            {"index": step.index, "action": step.action, "ok": step.ok, "error": step.error,
             "observation": step.observation, "screenshot_before": Path(step.screenshot_before).name or None,
             "screenshot_after": Path(step.screenshot_after).name or None} for step in packet.trace.steps]}
    build = packet.build
    item_json: dict[str, Any] = {
        "item": item, "task_id": packet.task.id, "turn": packet.turn_index, "title": packet.task.title,
        "context": packet.task.context, "prompt": turn.prompt,
        "previous_prompts": [spec.prompt for spec in packet.task.turns if spec.index < packet.turn_index],
        # Annotators judge against the task's validation criteria (people, not the model under test).
        "criteria": [{"id": r.id, "description": r.description} for r in turn.requirements],
        "request": request.get("messages", []),
        "assistant_text": packet.assistant_text,
        "build": {"status": build.status if build else None, "log": (build.log if build else "")[-4000:]},
        "screenshots": [Path(name).name for name in images],
        "trace": trace,
        "tool_log": read_json_objects(evidence.tool_log) if evidence.tool_log.exists() else None,
        "page_errors": (packet.evidence.page_errors if packet.evidence else []) + list(packet.page_errors),
    }
    write_json_atomic(target / ITEM_FILE, item_json)


def write_sample(run_dirs: list[Path], out: Path, *, per_pair: int = DEFAULT_PER_PAIR, seed: int = 0) -> list[SampleKey]:
    out = Path(out)
    if (out / SAMPLE_FILE).exists():
        raise LabelsError(f"{out}: already holds a sample ({SAMPLE_FILE}); choose another --out")
    chosen = draw_sample(candidates([Path(p).resolve() for p in run_dirs]), per_pair=per_pair, seed=seed)
    rng = random.Random(f"item-ids-{seed}")
    keys: list[SampleKey] = []
    for candidate in chosen:
        item = f"s-{rng.getrandbits(40):010x}"
        record = candidate.record
        export_item(RunDirectory(candidate.run_dir).evidence_dir(*record.slot), out / ITEMS_DIR / item, item=item)
        keys.append(SampleKey(item=item, run_dir=str(candidate.run_dir), task_id=record.task_id, turn=record.turn,
                              model=record.model, suite=candidate.suite, judge=record.judge,
                              judge_passed=record.passed))
    (out / KEY_FILE).write_text("".join(key.model_dump_json() + "\n" for key in keys))
    write_json_atomic(out / SAMPLE_FILE, {"seed": seed, "per_pair": per_pair, "items": [key.item for key in keys]})
    return keys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.validity.sampling", description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-pair", type=int, default=DEFAULT_PER_PAIR)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.per_pair < 1:
        parser.error(f"--per-pair must be at least 1, not {args.per_pair}")
    try:
        keys = write_sample(args.run_dirs, args.out, per_pair=args.per_pair, seed=args.seed)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{len(keys)} item(s) in {args.out} (keep {KEY_FILE} away from annotators)", file=sys.stderr)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
