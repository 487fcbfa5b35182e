"""The MLLM pairwise judge baseline of FlowEval (§4 "Baseline", Appendix C), as a rubric-like component.

For one prompt and two generated sites it asks the run's judge model (any runner Model, through
structured output) for Likert scores 1-5 per criterion for A and for B, as JSON in the shape of
Appendix C: {"1.1": {"A": 1-5, "B": 1-5}, ..., "4.3": {...}}. The request holds the user query (app name
and description), Code A and Code B (the files new or modified relative to the template) and two
screenshots labelled "Initial State A" and "Initial State B" (Appendix C). Which site is A is randomised
per pair with a seeded generator, to mitigate positional bias (Appendix C); the decision sums each side's
criterion scores and prefers the higher sum (Appendix C), an equal sum is a tie.

The criteria follow the structure of the WebDevJudge Likert rubric the paper used (four groups of three,
ids 1.1 to 4.3); their wording here is this project's own. A judge that gives no valid answer leaves the
pair undecided (winner None), never a win for either side.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from runner.judges.llm_bundle import image_data_url
from runner.judges.llm_settings import LLMJudgeSettings
from runner.suites.floweval.pair_labels import PairwiseLabel, Winner
from runner.models.base import Model, ProviderError
from runner.models.fitting import fit_for_model
from runner.models.structured import (MAX_ECHO_CHARS, StructuredMode, StructuredOutputError, TruncatedAnswer,
                                      ask_structured, decoding_schema, failed_call_record)
from runner.models.untrusted import quote, with_rule

VERSION = "1"

CRITERIA: dict[str, str] = {
    "1.1": "Functionality: the features the description implies are present",
    "1.2": "Functionality: controls and navigation do what they promise (as the code and screenshot show)",
    "1.3": "Functionality: data and state are handled consistently (lists, forms, totals, selections)",
    "2.1": "Fidelity: the site matches the app described in the query",
    "2.2": "Fidelity: content is complete and plausible, without placeholders or dead ends",
    "2.3": "Fidelity: no broken, missing or unreachable parts",
    "3.1": "Visual design: layout and spacing are clear and balanced",
    "3.2": "Visual design: typography, colour and components are consistent",
    "3.3": "Visual design: the page looks polished and contemporary",
    "4.1": "Usability: the main tasks are easy to find and to complete",
    "4.2": "Usability: feedback and affordances (hover, active, validation, confirmation) are clear",
    "4.3": "Usability: readable and accessible (contrast, labels, sizes)",
}


class _SideScores(BaseModel):
    model_config = ConfigDict(extra="forbid")

    A: int = Field(ge=1, le=5)
    B: int = Field(ge=1, le=5)


# The verdict: every criterion id a required key holding both sides' scores, no other key (Appendix C's
# shape). Field names are positional, the ids ("1.1") the aliases that validation and the schema use.
PairwiseVerdict = create_model(
    "PairwiseVerdict", __config__=ConfigDict(extra="forbid"),
    **{f"criterion_{index}": (_SideScores, Field(alias=cid)) for index, cid in enumerate(CRITERIA)},
)


@dataclass(frozen=True)
class Candidate:
    """One generated site of a pair."""

    model: str
    files: Mapping[str, str]  # path -> content: the files new or modified relative to the template
    screenshot: Path | None = None  # the initial state after load
    site: str = ""  # an id of the generated site (e.g. "<run dir>::<task>::<turn>"), kept in the label


@dataclass
class PairwiseDecision:
    prompt_id: str
    model_a: str  # the pair in the caller's order, whatever order the judge saw
    model_b: str
    winner: Winner | None  # None: the judge gave no valid answer (unassessed)
    swapped: bool  # True: the judge saw model_b as "A"
    scores: dict[str, dict[str, int]] = field(default_factory=dict)  # criterion -> {"a": .., "b": ..}
    totals: dict[str, int] = field(default_factory=dict)  # {"a": sum, "b": sum}
    error: str = ""
    attempts: int = 0
    request: dict[str, Any] = field(default_factory=dict)  # what the judge's request held, what was fitted out
    # A failed call's (or a call accepted after rejected attempts) record, with what the model wrote in each
    # attempt (runner/models/structured.py, failed_call_record); None when the first answer was accepted.
    failed_call: dict[str, Any] | None = None

    def label(self, rater: str, *, site_a: str = "", site_b: str = "") -> PairwiseLabel | None:
        """The decision as a pairwise label (None when undecided)."""
        if self.winner is None:
            return None
        return PairwiseLabel(prompt_id=self.prompt_id, model_a=self.model_a, model_b=self.model_b,
                             winner=self.winner, rater=rater, site_a=site_a, site_b=site_b)


class PairwiseRubric:
    """Instructions, JSON schema, parser and decision of the pairwise Likert judge (FlowEval Appendix C)."""

    name = "floweval_pairwise"
    version = VERSION
    dimensions = tuple(CRITERIA)

    def instructions(self) -> str:
        lines = "\n".join(f"- {cid}: {text}" for cid, text in CRITERIA.items())
        return (
            "You compare two websites, A and B, generated for the same request. You get the request, the code "
            "of each site and a screenshot of each site's initial state. Score each site from 1 (very poor) "
            "to 5 (excellent) on every criterion, judging each site on its own merits; the order of A and B "
            "means nothing.\n\nCriteria:\n" + lines + "\n\nAnswer with one JSON object only: for every "
            'criterion id, {"A": score, "B": score}.'
        )

    answer_model = PairwiseVerdict  # validates the verdict; its JSON schema is the one sent

    def schema(self) -> dict[str, Any]:
        return decoding_schema(PairwiseVerdict)

    def parse(self, data: Any) -> dict[str, dict[str, int]]:
        """{criterion: {"A": score, "B": score}} for exactly the rubric's criteria; ValueError otherwise."""
        if not isinstance(data, dict):
            raise ValueError(f"invalid scores: expected a JSON object, got {type(data).__name__}")
        missing, unknown = set(CRITERIA) - set(data), set(data) - set(CRITERIA)
        if missing or unknown:
            raise ValueError(f"criteria must be exactly {sorted(CRITERIA)}; missing {sorted(missing)}, "
                             f"unknown {sorted(unknown)}")
        try:
            verdict = PairwiseVerdict.model_validate(data).model_dump(by_alias=True)
        except ValidationError as error:
            raise ValueError(f"invalid scores: {error}") from None
        return {cid: {"A": verdict[cid]["A"], "B": verdict[cid]["B"]} for cid in CRITERIA}

    def decide(self, scores: Mapping[str, Mapping[str, int]]) -> Winner:
        """Sum each side's criterion scores; the higher sum wins (Appendix C), equal sums tie. A/B as shown."""
        total_a = sum(s["A"] for s in scores.values())
        total_b = sum(s["B"] for s in scores.values())
        return "a" if total_a > total_b else "b" if total_b > total_a else "tie"


def presentation_swapped(seed: int, prompt_id: str, model_a: str, model_b: str) -> bool:
    """Whether model_b is shown as "A": a seeded coin per pair, the same on every rerun (Appendix C)."""
    digest = hashlib.sha256(json.dumps([seed, prompt_id, model_a, model_b]).encode()).digest()
    return random.Random(digest).random() < 0.5


def _quoted_files(files: Mapping[str, str], limit: int) -> list[str]:
    """Each file quoted as untrusted data (runner/models/untrusted.py), cut so all of them hold `limit` characters;
    a cut is said outside its block."""
    blocks, remaining = [], limit
    for path, text in sorted(files.items()):
        if remaining <= 0:
            blocks.append(f"[omitted: {len(text)} characters of {json.dumps(path)}; code budget spent]")
            continue
        shown = text[:remaining]
        blocks.append(quote(shown, path) + (f"\n[... truncated: {len(text) - len(shown)} more characters]"
                                             if len(shown) < len(text) else ""))
        remaining -= len(shown)
    return blocks


class PairwiseJudge:
    """Asks a judge model to compare two candidates on a prompt; one structured-output call per pair."""

    def __init__(self, model: Model, *, seed: int = 0, vision: bool = True, mode: StructuredMode = "json_schema",
                 strict: bool = False, max_attempts: int = 3, max_code_chars: int = 40000,
                 screenshot_max_side: int = 2048) -> None:
        self.model = model
        self.rubric = PairwiseRubric()
        self.seed = seed
        self.vision = vision
        self.mode, self.strict, self.max_attempts = mode, strict, max_attempts
        self.max_code_chars = max_code_chars
        self.screenshot_max_side = screenshot_max_side

    @classmethod
    def from_settings(cls, settings: LLMJudgeSettings, model: Model, *, seed: int = 0) -> PairwiseJudge:
        """Under the run's `judge.options` (structured output mode, retries, sizes, vision)."""
        return cls(model, seed=seed, vision=settings.vision, mode=settings.structured_output,
                   strict=settings.strict_schema, max_attempts=settings.max_attempts,
                   max_code_chars=settings.max_source_chars, screenshot_max_side=settings.screenshot_max_side)

    def messages(self, query: str, first: Candidate, second: Candidate) -> list[dict[str, Any]]:
        """The request of Appendix C: query, Code A, Code B, then the two initial-state screenshots."""
        parts: list[dict[str, Any]] = [{"type": "text", "text": f"## User query\n{query}"}]
        for letter, candidate in (("A", first), ("B", second)):
            # Each site's code is the model's text: quoted, so none of it can pass for a heading here; cut (both
            # sides alike) when the context is short.
            code = "\n\n".join(_quoted_files(candidate.files, self.max_code_chars))
            parts.append({"type": "text", "text": f"## Code {letter}\n{code or '(no files)'}", "fit": {"section": "code"}})
        if self.vision:
            shown = [c.screenshot is not None and Path(c.screenshot).is_file() for c in (first, second)]
            # Both screenshots are one pair for the request fitting: a server taking one image gets them side by
            # side (A left, B right), never one of them alone.
            pair = {"pair": "initial states", "sides": ["A", "B"]} if all(shown) else {}
            for (letter, candidate), has_shot in zip((("A", first), ("B", second)), shown):
                if not has_shot:
                    parts.append({"type": "text", "text": f"## Initial State {letter}\n(no screenshot)"})
                    continue
                parts.append({"type": "text", "text": f"## Initial State {letter}", **({"fit": pair} if pair else {})})
                url = image_data_url(Path(candidate.screenshot), max_side=self.screenshot_max_side)
                parts.append({"type": "image_url", "image_url": {"url": url},
                              "fit": {"name": f"initial state {letter}", **pair}})
        return [{"role": "system", "content": with_rule(self.rubric.instructions())}, {"role": "user", "content": parts}]

    async def compare(self, prompt_id: str, query: str, a: Candidate, b: Candidate) -> PairwiseDecision:
        swapped = presentation_swapped(self.seed, prompt_id, a.model, b.model)
        first, second = (b, a) if swapped else (a, b)
        decision = PairwiseDecision(prompt_id=prompt_id, model_a=a.model, model_b=b.model, winner=None,
                                    swapped=swapped)
        schema = self.rubric.schema()
        try:
            fitted = fit_for_model(self.model, self.messages(query, first, second), max_side=self.screenshot_max_side,
                                   trim_order=("code",), schema=schema, attempts=self.max_attempts,
                                   echo_chars=MAX_ECHO_CHARS)
            decision.request = {"role": "judge", "rubric": self.rubric.name, **fitted.record}
            result = await ask_structured(
                self.model, messages=fitted.messages, answer=self.rubric.answer_model,
                validate=self.rubric.parse, name=f"{self.rubric.name}_verdict", mode=self.mode,
                strict=self.strict, max_attempts=self.max_attempts, task_id=prompt_id, role="pairwise_judge",
            )
        except StructuredOutputError as error:  # answers, none valid: what they said is kept, a cut one named
            decision.failed_call = failed_call_record(error, role="pairwise_judge", model=self.model.name,
                                                      task_id=prompt_id, model_a=a.model, model_b=b.model)
            decision.error = f"{'truncated' if isinstance(error, TruncatedAnswer) else type(error).__name__}: {error}"
            return decision
        except ProviderError as error:
            decision.error = f"{type(error).__name__}: {error}"
            return decision
        if result.rejected:
            decision.failed_call = failed_call_record(result, role="pairwise_judge", model=self.model.name,
                                                      task_id=prompt_id, model_a=a.model, model_b=b.model)
        shown = result.value
        # Back to the caller's order: what the judge called "A" is b when swapped.
        own = {"a": "B", "b": "A"} if swapped else {"a": "A", "b": "B"}
        decision.scores = {cid: {side: s[letter] for side, letter in own.items()} for cid, s in shown.items()}
        decision.totals = {side: sum(s[side] for s in decision.scores.values()) for side in ("a", "b")}
        winner_shown = self.rubric.decide(shown)
        flip: dict[Winner, Winner] = {"a": "b", "b": "a", "tie": "tie"}
        decision.winner = flip[winner_shown] if swapped else winner_shown
        decision.attempts = result.attempts
        return decision
