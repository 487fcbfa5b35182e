"""The MLLM pairwise judge column of FlowEval's Table 1 (§4 "Baseline", Appendix C): the judge decides every
pair the people compared, once per distinct (prompt, model a, model b), in the people's A/B order.

Each side is one generated site: the one the label names (`site_a` / `site_b`, `<run dir>::<task>::<turn>`)
when it is in the run dirs, else that model's first slot with a packet for the prompt. A candidate's code is
the slot's answer files (new or modified relative to the template), its screenshot the load-time viewport
screenshot, the query the turn's public prompt ("name: description", without the task list).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

from runner.suites.floweval.pair_labels import PairwiseLabel
from runner.turns.evidence_folder import EvidenceFolder
from runner.turns.packets import EvidencePacket, read_packet
from runner.suites.floweval.pairwise import Candidate, PairwiseJudge
from runner.suites.floweval.table import Outputs


@dataclass
class JudgeColumn:
    labels: list[PairwiseLabel]  # the judge's decisions (rater `mllm:<model>`)
    unassessed: int  # pairs it gave no valid answer on, or where a side has no packet
    errors: list[str]
    # Per pair: what the judge's request held and what was fitted out to fit its server (runner/models/fitting.py).
    requests: list[dict[str, Any]] = field(default_factory=list)


def _site(outputs: Outputs, prompt: str, model: str, named: str) -> tuple[str, Path] | None:
    folders = outputs.folders.get((prompt, model), [])
    for site_id, folder in folders:
        if site_id == named:
            return site_id, folder
    return folders[0] if folders else None


def _candidate(model: str, site_id: str, packet: EvidencePacket, folder: Path) -> Candidate:
    shot = packet.evidence.screenshot_viewport if packet.evidence is not None else ""
    return Candidate(model=model, files=packet.files, screenshot=folder / shot if shot else None, site=site_id)


async def judge_pairs(judge: PairwiseJudge, outputs: Outputs, human: list[PairwiseLabel]) -> JudgeColumn:
    rater = f"mllm:{judge.model.name}"
    column = JudgeColumn([], 0, [])
    seen: set[tuple[str, str, str]] = set()
    for label in human:
        key = (label.prompt_id, label.model_a, label.model_b)
        if key in seen:
            continue
        seen.add(key)
        sides = [_site(outputs, label.prompt_id, label.model_a, label.site_a),
                 _site(outputs, label.prompt_id, label.model_b, label.site_b)]
        if None in sides:
            column.unassessed += 1
            column.errors.append(f"{key}: a side has no slot packet")
            continue
        (id_a, folder_a), (id_b, folder_b) = sides  # type: ignore[misc]
        packet_a, packet_b = await asyncio.to_thread(read_packet, folder_a), await asyncio.to_thread(read_packet, folder_b)
        decision = await judge.compare(label.prompt_id, packet_a.turn.prompt,
                                       _candidate(label.model_a, id_a, packet_a, folder_a),
                                       _candidate(label.model_b, id_b, packet_b, folder_b))
        column.requests.append({"prompt_id": label.prompt_id, "model_a": label.model_a, "model_b": label.model_b,
                                **decision.request})
        if decision.failed_call is not None:  # what the judge's model wrote, kept in both sides' evidence
            for folder, site in ((folder_a, id_b), (folder_b, id_a)):
                EvidenceFolder(folder).append_failed_call({**decision.failed_call, "compared_with": site},
                                                          judging=True)
        decided = decision.label(rater, site_a=id_a, site_b=id_b)
        if decided is None:
            column.unassessed += 1
            column.errors.append(f"{key}: {decision.error}")
        else:
            column.labels.append(decided)
    return column
