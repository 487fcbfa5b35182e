"""Merge the shards of one experiment (`suite.shard=I/N` runs) into one run dir, as if it ran unsharded.

The merged dir holds config.yaml (shard removed), turns.jsonl (all shards' records, sorted by slot),
summary.json recomputed with the suite's own `summarize`, lineage.json, merge.json (the sources) and
evidence/ (per-task links into the shards). The shards must share one lineage (same code, config, images,
model revisions, prompt versions), cover every shard index once, hold disjoint tasks and be complete.

    python -m runner.merge RUN_DIR... [--out DIR] [--copy-evidence]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from runner.kinds import KINDS
from runner.run import lineage as lineage_mod
from runner.report.task_set import task_set_record
from runner.errors import ConfigError, UserError
from runner.run.validation import validate_config
from runner.turns.records import RunDirectory, TurnRecord, write_json_atomic
from runner.suites.base import parse_shard

MERGE_FILE = "merge.json"


class MergeError(ValueError, UserError):
    """The given run dirs cannot be merged into one result; the message says why."""


def _load_shard(path: Path) -> tuple[dict[str, Any], dict[str, Any], list[TurnRecord]]:
    config_path = path / RunDirectory.CONFIG
    if not config_path.is_file():
        raise MergeError(f"{path}: not a run dir (no {RunDirectory.CONFIG})")
    if not (path / RunDirectory.SUMMARY).is_file():
        raise MergeError(f"{path}: the run is incomplete (no {RunDirectory.SUMMARY}); finish it with resume=true first")
    lineage = lineage_mod.load_lineage(path)
    if lineage is None:
        raise MergeError(f"{path}: no {lineage_mod.LINEAGE_FILE}; cannot prove it belongs with the other shards")
    config = yaml.safe_load(config_path.read_text()) or {}
    return config, lineage, RunDirectory(path).load_records()


def _check_shard_indices(paths: list[Path], lineages: list[dict[str, Any]]) -> None:
    shards = [lineage.get("shard") for lineage in lineages]
    if all(shard is None for shard in shards):
        return  # runs split some other way (e.g. suite.task_ids): disjointness is checked below
    if any(shard is None for shard in shards):
        unsharded = [str(p) for p, s in zip(paths, shards) if s is None]
        raise MergeError(f"cannot merge sharded and unsharded runs (unsharded: {', '.join(unsharded)})")
    parsed = [parse_shard(shard) for shard in shards]
    counts = {count for _, count in parsed}
    if len(counts) != 1:
        raise MergeError(f"the runs were split into different numbers of shards: {sorted(shards)}")
    count = counts.pop()
    seen: dict[int, Path] = {}
    for path, (index, _) in zip(paths, parsed):
        if index in seen:
            raise MergeError(f"shard {index}/{count} given twice: {seen[index]} and {path}")
        seen[index] = path
    missing = sorted(set(range(count)) - set(seen))
    if missing:
        raise MergeError(f"missing shard(s) {', '.join(f'{i}/{count}' for i in missing)} of {count}")


def _check_lineage(paths: list[Path], lineages: list[dict[str, Any]]) -> None:
    first = lineages[0]
    for path, other in zip(paths[1:], lineages[1:]):
        changed = lineage_mod.diff_lineage(first, other, ignore=("shard", "task_set_hash"))
        if changed:
            raise MergeError(f"{path} does not share the lineage of {paths[0]}: {'; '.join(changed)}")


def _merged_digests(paths: list[Path], lineages: list[dict[str, Any]]) -> dict[str, str]:
    owner: dict[str, Path] = {}
    digests: dict[str, str] = {}
    for path, lineage in zip(paths, lineages):
        for task_id, task_hash in (lineage.get("task_digests") or {}).items():
            if task_id in owner:
                raise MergeError(f"task {task_id!r} is in two runs ({owner[task_id]} and {path}); shards must be disjoint")
            owner[task_id] = path
            digests[task_id] = task_hash
    return digests


def _link_evidence(paths: list[Path], records_by_run: list[list[TurnRecord]], out: Path, *, copy: bool) -> None:
    """evidence/<task> in the merged dir points at (or is a copy of) the shard's folder for that task."""
    target_root = out / "evidence"
    target_root.mkdir(parents=True, exist_ok=True)
    for path, records in zip(paths, records_by_run):
        for folder in sorted({Path(r.evidence_dir).parts[1] for r in records if len(Path(r.evidence_dir).parts) >= 2}):
            source = (path / "evidence" / folder).resolve()
            target = target_root / folder
            if not source.is_dir() or target.exists() or target.is_symlink():
                continue
            if copy:
                shutil.copytree(source, target, symlinks=True)
            else:
                target.symlink_to(source, target_is_directory=True)


def _prepare_out(out: Path) -> None:
    if out.exists() and any(out.iterdir()):
        if not (out / MERGE_FILE).is_file():
            raise MergeError(f"{out} exists and is not an earlier merge; choose another --out")
        shutil.rmtree(out)  # a stale merge of the same shards is rebuilt from scratch
    out.mkdir(parents=True, exist_ok=True)


def merge_runs(run_dirs: Sequence[str | Path], out_dir: str | Path | None = None, *,
               copy_evidence: bool = False) -> Path:
    """Merge shard run dirs into `out_dir` (default: <their common parent>/merged); return the merged dir.

    Raises MergeError naming the offending run when the shards differ in lineage, overlap, miss a shard
    index, are incomplete, or when the suite's tasks changed since the shards ran.
    """
    paths = [Path(p).resolve() for p in run_dirs]
    if not paths:
        raise MergeError("no run dirs given")
    if len(set(paths)) != len(paths):
        raise MergeError("a run dir is given twice")
    loaded = [_load_shard(path) for path in paths]
    configs = [config for config, _, _ in loaded]
    lineages = [lineage for _, lineage, _ in loaded]
    records_by_run = [records for _, _, records in loaded]
    _check_shard_indices(paths, lineages)
    _check_lineage(paths, lineages)
    digests = _merged_digests(paths, lineages)

    merged_raw = json.loads(json.dumps(configs[0]))  # deep copy of plain data
    merged_raw.setdefault("suite", {})["shard"] = None
    if len(paths) > 1 and all(lineage.get("shard") is None for lineage in lineages):
        merged_raw["suite"]["task_ids"] = sorted(digests)  # runs split by task_ids: the union of theirs
    try:
        config = validate_config(merged_raw)
    except ConfigError as error:
        raise MergeError(f"the shards' config no longer validates: {error}") from None
    from runner.suites.registry import build_run_suite

    suite = build_run_suite(config)
    tasks = _run_sync(suite.load_tasks())
    current = {task.id: lineage_mod.task_digest(task) for task in tasks}
    if current != digests:
        changes = lineage_mod.diff_lineage({"task_set_hash": "shards", "task_digests": digests},
                                           {"task_set_hash": "now", "task_digests": current})
        raise MergeError(f"the shards do not add up to the suite's current task set: {'; '.join(changes)}")

    records = sorted((r for rs in records_by_run for r in rs), key=lambda r: (r.task_id, r.turn))
    summary = suite.summarize(records, tasks)
    summary["run"] = {"suite": config.suite.name, "model": config.model.name, "judge": config.judge.name,
                      "actor": config.actor.name, "sandbox": config.sandbox.name, "tasks": len(tasks),
                      "merged_from": [str(p) for p in paths]}
    if not KINDS.chosen("agent", config.agent).inert:
        summary["run"]["agent"] = config.agent.name
    task_set = task_set_record(lineages[0].get("task_set"), len(tasks))
    if task_set is not None:  # the shards share it (a compared lineage item)
        summary["task_set"] = task_set

    out = Path(out_dir).resolve() if out_dir is not None else _common_parent(paths) / "merged"
    if out in paths:
        raise MergeError(f"the merged dir {out} is one of the inputs")
    _prepare_out(out)
    run_dir = RunDirectory(out)
    (out / RunDirectory.CONFIG).write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))
    with run_dir.records_path.open("w") as handle:
        for record in records:
            handle.write(record.model_dump_json() + "\n")
    _link_evidence(paths, records_by_run, out, copy=copy_evidence)
    merged_lineage = {**lineages[0], "shard": None, "task_digests": digests,
                      "task_set_hash": lineage_mod.task_set_hash(digests)}
    lineage_mod.write_lineage(out, merged_lineage)
    write_json_atomic(out / MERGE_FILE, {"sources": [str(p) for p in paths],
                                         "shards": [lineage.get("shard") for lineage in lineages]})
    run_dir.write_json(RunDirectory.SUMMARY, summary)
    return out


def _run_sync(coroutine: Any) -> Any:
    """Run a coroutine to completion, also when the caller is itself inside an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def shard_groups(run_dirs: Sequence[str | Path]) -> list[list[Path]]:
    """Group run dirs into experiments: runs that differ only by shard share a lineage config hash.

    A report over a sharded sweep calls merge_runs on every group with more than one member.
    Run dirs without lineage.json form groups of their own.
    """
    groups: dict[tuple[Any, ...], list[Path]] = {}
    for raw in run_dirs:
        path = Path(raw)
        lineage = lineage_mod.load_lineage(path) or {}
        if lineage.get("shard") is None:
            key: tuple[Any, ...] = ("single", str(path.resolve()))
        else:
            key = (lineage.get("config_hash"), lineage.get("git_commit"), parse_shard(lineage["shard"])[1])
        groups.setdefault(key, []).append(path)
    return list(groups.values())


def _common_parent(paths: list[Path]) -> Path:
    parents = [p.parent for p in paths]
    common = Path(*Path(parents[0]).parts)
    for parent in parents[1:]:
        while common not in (parent, *parent.parents):
            common = common.parent
    return common


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.merge", description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", nargs="+", type=Path, help="the shard run dirs")
    parser.add_argument("--out", type=Path, default=None, help="merged run dir (default: <common parent>/merged)")
    parser.add_argument("--copy-evidence", action="store_true", help="copy evidence instead of linking it")
    args = parser.parse_args(argv)
    try:
        out = merge_runs(args.run_dirs, args.out, copy_evidence=args.copy_evidence)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(out)
    return 0


__all__ = ["MergeError", "merge_runs", "shard_groups"]


if __name__ == "__main__":
    sys.exit(main())
