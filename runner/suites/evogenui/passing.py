"""The official turn-pass rule of EvoGenUI-Bench for model-based (LLM) verdicts.

EvoGenUI-Bench §4.3: p_{T,t} "equals 1 only if generation succeeds, the returned source yields an evaluable
artifact, and the Presentation, Execution, and Alignment scores are each at least 4."
Appendix C.1: "Each uses a 1–5 scale and passes at scores of 4 or 5."

A pure function, so the LLM judge and the tests apply exactly the same rule. A missing or unparsable
score never passes (it is not evidence of a score >= 4).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from runner.turns.records import Verdict

DIMENSIONS = ("presentation", "execution", "alignment")  # §4.2, Appendix C.1
PASS_THRESHOLD = 4  # §4.3 / C.1: "passes at scores of 4 or 5"
SCORE_RANGE = (1, 5)  # C.1: "Each uses a 1–5 scale"


def _score(value: Any) -> float | None:
    """A usable score, or None when it is missing, not a number, NaN or outside 1..5."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    if math.isnan(value) or not SCORE_RANGE[0] <= value <= SCORE_RANGE[1]:
        return None
    return value


def turn_passes(
    *,
    generation_succeeded: bool,
    artifact_evaluable: bool,
    scores: Mapping[str, Any],
    threshold: float = PASS_THRESHOLD,
) -> bool:
    """p_{T,t} of §4.3: True iff generation succeeded, the artifact was evaluable and every one of
    Presentation, Execution and Alignment scored at least `threshold` (4) on the 1-5 scale.

    `scores` maps the dimension names of DIMENSIONS (case-insensitive) to numbers; extra keys are
    ignored, a missing or invalid score fails the turn.
    """
    if not generation_succeeded or not artifact_evaluable:
        return False
    normalised = {str(key).lower(): value for key, value in scores.items()}
    for dimension in DIMENSIONS:
        score = _score(normalised.get(dimension))
        if score is None or score < threshold:
            return False
    return True


def verdict_scores(verdict: Verdict) -> dict[str, float | None]:
    """The three dimension scores of a verdict (None where absent or unassessed)."""
    return {name: (verdict.dimensions[name].score if name in verdict.dimensions else None) for name in DIMENSIONS}


def verdict_passes(verdict: Verdict, *, generation_succeeded: bool = True, artifact_evaluable: bool = True) -> bool:
    """`turn_passes` applied to a Verdict whose dimensions are named presentation/execution/alignment."""
    return turn_passes(
        generation_succeeded=generation_succeeded,
        artifact_evaluable=artifact_evaluable,
        scores=verdict_scores(verdict),
    )
