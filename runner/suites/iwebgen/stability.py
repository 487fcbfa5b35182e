"""Rule & Stability, the deterministic 5 points of the 100-point score (I-WebGenBench B.1).

B.1: "Calculated deterministically by the automated probe. Applications start with 5 points, incurring
penalties for fatal rendering errors (e.g., entirely blank screens) or critical JavaScript exceptions
captured during the interaction cycle." The paper names the start and the kinds of penalty, not their
size; the sizes below are the project's (`StabilityPenalties`, suite options `stability.*`):

- blank screen (nothing visible after load): the whole 5 (B.1's example of a fatal rendering error);
- other fatal rendering errors (the page did not load, or the probe found it unusable and aborted): 3;
- each distinct uncaught JavaScript exception (at load or during probing): 1, at most 2 in all.

The points never go below 0. An app that does not build scores 0 here as on every dimension (C.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from runner.turns.evidence import Evidence, Trace

__all__ = ["MAX_POINTS", "Stability", "StabilityPenalties", "stability"]

MAX_POINTS = 5.0  # B.1: "Rule & Stability (5 pts)"


class StabilityPenalties(BaseModel):
    model_config = ConfigDict(extra="forbid")

    blank_screen: float = Field(5.0, ge=0, le=MAX_POINTS)
    fatal_rendering: float = Field(3.0, ge=0, le=MAX_POINTS)
    per_exception: float = Field(1.0, ge=0, le=MAX_POINTS)
    exceptions_cap: float = Field(2.0, ge=0, le=MAX_POINTS)


@dataclass
class Stability:
    points: float
    penalties: list[str] = field(default_factory=list)  # what was deducted, in words


def _fatal_rendering(evidence: Evidence | None, trace: Trace | None) -> str:
    if evidence is not None and evidence.load_error:
        return f"page did not load: {evidence.load_error}"
    if trace is not None:
        if trace.summary.get("probe_error"):
            return f"probe could not run: {trace.summary['probe_error']}"
        if trace.summary.get("aborted"):
            return f"probe aborted: {trace.summary['aborted']}"
    return ""


def stability(*, built: bool, evidence: Evidence | None, trace: Trace | None, page_errors: list[str],
              penalties: StabilityPenalties | None = None) -> Stability:
    """The Rule & Stability points of one app; `page_errors` are the page's uncaught exceptions (any phase)."""
    p = penalties or StabilityPenalties()
    if not built:
        return Stability(0.0, ["the app did not build (C.3: 0 on every dimension)"])
    points, notes = MAX_POINTS, []
    if evidence is not None and evidence.blank:
        points -= p.blank_screen
        notes.append(f"blank screen: -{p.blank_screen:g}")
    fatal = _fatal_rendering(evidence, trace)
    if fatal:
        points -= p.fatal_rendering
        notes.append(f"fatal rendering error ({fatal}): -{p.fatal_rendering:g}")
    distinct = list(dict.fromkeys([*(evidence.page_errors if evidence is not None else []), *page_errors]))
    if distinct:
        deducted = min(p.per_exception * len(distinct), p.exceptions_cap)
        points -= deducted
        notes.append(f"{len(distinct)} uncaught JavaScript exception(s): -{deducted:g}")
    return Stability(max(points, 0.0), notes)
