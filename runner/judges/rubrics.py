"""Rubrics an LLM judge can apply: the Rubric protocol, a rubric's parsed outcome, and the registry of rubrics.

A rubric lives with its benchmark: `evogenui` (EvoGenUI-Bench §4.2, Appendix C.1) in runner/suites/evogenui/
rubric.py, beside its pass rule and taxonomy. Another rubric implements the same protocol to be hosted by the
same judge, e.g. I-WebGenBench's 100-point VLM score or MT-Web2Code's five-band macro rubric (MT-Web2Code §3.5
eq. 8): each needs only its own dimensions, answer model (its schema is generated from it), parser and decision. A suite package declares its rubrics
(RUBRICS in its `__init__.py`, runner/kinds.py) as "module:attribute", imported when looked up, so this
package never imports suite code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, TypeAdapter

from runner.kinds import KINDS
from runner.turns.records import DimensionScore, RequirementResult

__all__ = ["RUBRICS", "Rubric", "RubricBase", "RubricOutcome", "ScreenshotKind", "get_rubric", "rubric_class"]

ScreenshotKind = Literal["viewport", "full"]


@dataclass
class RubricOutcome:
    """A parsed, validated verdict of one rubric, before the harness's evaluability gate."""

    dimensions: dict[str, DimensionScore]
    scores: dict[str, float]
    passed: bool | None  # the rubric's own decision, assuming an evaluable artifact; None: it defines none
    requirements: dict[str, RequirementResult] = field(default_factory=dict)  # by requirement id
    failure_types: list[str] = field(default_factory=list)
    mechanism: str | None = None
    summary: str = ""
    notes: list[str] = field(default_factory=list)  # e.g. assessments of unknown requirement ids, dropped


class Rubric(Protocol):
    name: str
    version: str  # recorded in lineage.json (runner.run.lineage.rubric_versions)
    dimensions: tuple[str, ...]
    # The screenshot an LLM judge sends when `judge.options.screenshot` is unset.
    default_screenshot: ScreenshotKind

    def instructions(self) -> str:
        """The judge's system prompt."""

    def answer_model(self, requirement_ids: list[str]) -> type[BaseModel] | TypeAdapter[Any]:
        """The pydantic model a verdict is validated with; the JSON schema sent as response_format is
        generated from it (runner.models.structured.decoding_schema), so the two cannot drift."""

    def schema(self, requirement_ids: list[str]) -> dict[str, Any]:
        """The JSON schema of a verdict (sent as response_format): `decoding_schema(answer_model(ids))`."""

    def parse(self, data: Any, requirement_ids: list[str]) -> RubricOutcome:
        """Validate decoded JSON with `answer_model`; raise ValueError when it is not a valid verdict."""

    def decide(self, outcome: RubricOutcome | None, *, generation_ok: bool, evaluable: bool) -> bool | None:
        """The official pass decision (None: the benchmark defines no pass/fail, as MT-Web2Code)."""


class RubricBase:
    """The defaults of a rubric's optional members; each rubric subclasses this."""

    default_screenshot: ScreenshotKind = "viewport"


# `judge.options.rubric` -> the rubric class, imported when first read (conf/judge/*.yaml name these).
RUBRICS: Mapping[str, type[Rubric]] = KINDS.members("rubric")


def rubric_class(name: str) -> type[Rubric]:
    """The class of a registered rubric (its module is imported now)."""
    return KINDS.member("rubric", name)


def get_rubric(name: str) -> Rubric:
    return rubric_class(name)()
