"""Evidence ablation (EvoGenUI-Bench Table 3, Appendix D.2.1): a copied packet with one or more sources removed.

D.2.1: "We rerun the evaluator on each frozen artifact with full evidence or with one source removed:
generated code, screenshot, actor trace, or private evaluation reference. Removing the actor trace leaves
the final DOM, screenshot, and runtime logs; removing the private reference leaves public task context and
observable artifacts." `python -m runner.rejudge RUN_DIR judge=NAME judge.ablate=[actor_trace]` applies this
to the packets it copies into the new run dir (never to the source run: copies are hard links, and every
change here replaces or unlinks a file, it never writes into one).

What each source removes, from packet.json and from the folder beside it:

    source             the files (packet `files`, src/), the raw answers (raw_response*.txt) and the
                       generation log that names them; the assistant's prose stays
    screenshot         every screenshot: load-time, final and the actor steps' (packet fields emptied, PNGs
                       removed); the DOM stays
    actor_trace        the trace (packet `trace`, trace.json) and its step screenshots; the final DOM and
                       screenshot, the tool log and the runtime state stay
    private_reference  every turn's requirements, reference files and text, the private `extra` material of
                       the task and its turns, and the outcomes of the contract's live checks

packet.json then records `ablated`: each removed source with the fields and files it took.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runner.errors import ConfigError
from runner.turns.evidence_folder import EvidenceFolder
from runner.turns.packets import EvidencePacket
from runner.turns.records import write_json_atomic

__all__ = ["ABLATED_KEY", "SOURCES", "ablate_folder", "validate_sources"]

SOURCES = ("source", "screenshot", "actor_trace", "private_reference")  # Table 3's rows, in its order
ABLATED_KEY = "ablated"
_SCREENSHOT_FIELDS = ("screenshot_full", "screenshot_viewport", "final_screenshot_full", "final_screenshot_viewport")


def validate_sources(value: Any) -> list[str]:
    """judge.ablate as given on the command line: a list of known sources, each once."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigError(f"judge.ablate = {value!r}: give a list, e.g. judge.ablate=[actor_trace]; "
                          f"allowed: {list(SOURCES)}")
    unknown = [item for item in value if item not in SOURCES]
    if unknown:
        raise ConfigError(f"judge.ablate: unknown evidence source {unknown[0]!r}; allowed: {list(SOURCES)}")
    return [source for source in SOURCES if source in value]


def _remove(folder: Path, names: list[str]) -> list[str]:
    removed = []
    for name in dict.fromkeys(names):
        if not name:
            continue
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.is_file() or path.is_symlink():
            path.unlink()
        else:
            continue
        removed.append(name)
    return removed


def _step_screenshots(packet: dict[str, Any]) -> list[str]:
    steps = (packet.get("trace") or {}).get("steps") or []
    return [step.get(key) or "" for step in steps for key in ("screenshot_before", "screenshot_after")]


def _ablate_source(folder: Path, packet: dict[str, Any]) -> dict[str, Any]:
    files = sorted(packet.get("files") or (packet.get("files_in") or {}).get("names") or [])
    packet["files"] = {}
    packet.pop("files_in", None)  # the reference to src/ (EvidenceFolder.files_entry) goes with it
    raw = sorted(path.name for path in folder.glob("raw_response*.txt"))
    return {"fields": ["files"], "packet_files": files,
            "removed": _remove(folder, [EvidenceFolder.SOURCES, *raw, EvidenceFolder.GENERATION])}


def _ablate_screenshot(folder: Path, packet: dict[str, Any]) -> dict[str, Any]:
    names: list[str] = []
    fields: list[str] = []
    evidence = packet.get("evidence")
    if evidence is not None:
        for key in _SCREENSHOT_FIELDS:
            names.append(evidence.get(key) or "")
            evidence[key] = ""
            fields.append(f"evidence.{key}")
    summary_file = folder / EvidenceFolder.EVIDENCE  # the evidence summary beside the packet names them too
    if summary_file.is_file():
        summary = json.loads(summary_file.read_text())
        if isinstance(summary, dict):
            write_json_atomic(summary_file, {**summary, **{key: "" for key in _SCREENSHOT_FIELDS if key in summary}})
    names += _step_screenshots(packet)
    for step in (packet.get("trace") or {}).get("steps") or []:
        step["screenshot_before"] = step["screenshot_after"] = ""
    if packet.get("trace") is not None:
        fields.append("trace.steps[].screenshot_before/after")
        trace_file = folder / EvidenceFolder.TRACE
        if trace_file.is_file():  # the trace file names the step screenshots too
            write_json_atomic(trace_file, packet["trace"])
    return {"fields": fields, "removed": _remove(folder, names)}


def _ablate_actor_trace(folder: Path, packet: dict[str, Any]) -> dict[str, Any]:
    names = [EvidenceFolder.TRACE, *_step_screenshots(packet)]
    packet["trace"] = None
    return {"fields": ["trace"], "removed": _remove(folder, names)}


def _ablate_private_reference(folder: Path, packet: dict[str, Any]) -> dict[str, Any]:
    task = packet["task"]
    requirements = [r["id"] for turn in task["turns"] for r in turn.get("requirements") or []]
    for turn in task["turns"]:
        turn["requirements"] = []
        turn["reference_files"] = None
        turn["reference_text"] = ""
        turn["extra"] = {}
    task["extra"] = {}
    packet["checks"] = None
    return {"fields": ["task.turns[].requirements", "task.turns[].reference_files", "task.turns[].reference_text",
                       "task.turns[].extra", "task.extra", "checks"], "requirements": requirements, "removed": []}


_ABLATORS = {"source": _ablate_source, "screenshot": _ablate_screenshot, "actor_trace": _ablate_actor_trace,
             "private_reference": _ablate_private_reference}


def ablate_folder(folder: Path, sources: Sequence[str]) -> dict[str, Any]:
    """Remove `sources` from the copied packet in `folder`; returns (and records in packet.json) what went."""
    folder = Path(folder)
    path = EvidenceFolder(folder).packet
    packet = json.loads(path.read_text())
    done: dict[str, Any] = dict(packet.get(ABLATED_KEY) or {})
    for source in validate_sources(list(sources)):
        if source not in done:
            done[source] = _ABLATORS[source](folder, packet)
    packet[ABLATED_KEY] = done
    EvidencePacket.from_json(packet, where=path)  # the ablated packet is still one the judging phase reads
    write_json_atomic(path, packet)  # a new file (rename): the source run's hard-linked packet is untouched
    return done
