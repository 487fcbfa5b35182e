"""The diagnostic failure taxonomy of EvoGenUI-Bench (EvoGenUI-Bench §6.1 and Appendix D.2.2).

Every executed non-passing turn gets ONE primary mechanism out of six. The label is diagnostic only:
it never changes the pass decision or any metric (D.2.2: "These labels are diagnostic and do not
affect official pass/fail metrics").

The paper labels failures with a separate model-based diagnostic judge. This module is the
deterministic path: a rule-based classifier that reads the evidence the rules judge leaves behind
(which requirement failed, at which step or assertion, whether the expected text exists in the DOM but
is not visible). The LLM judge classifies with its model and can use `Mechanism` / `DEFINITIONS` for
its codebook; `classify_turn` is its fallback when the model gives no valid label.

Rules (first that applies wins; docs/evogenui.md has the table):
1. no evaluable artifact (build failed, page did not load, blank page, no parsable source)
   -> information architecture: the interface presents no readable content at all;
2. failed requirements, each classified, the most frequent wins (ties: first in contract order):
   a. an explicit `mechanism` on the requirement's evidence item (our task-format extension);
   b. a failed tool_called / tool_not_called / state assertion, or a tool/state requirement
      -> external-state grounding;
   c. a step could not act on its control (not found, not visible, not operable)
      -> affordance binding;
   d. a mutation assertion failed (acting on a control changed nothing) -> affordance binding;
   e. a page assertion failed AFTER steps ran (the dependent view did not follow the action)
      -> derived-state propagation;
   f. a static text assertion failed: the text exists in the DOM but is not visible (hidden,
      clipped) -> information architecture; it does not exist at all -> requirement decomposition;
      forbidden text is shown -> domain representation;
   g. a static count / value / attribute assertion failed -> domain representation;
3. no failed requirement, but uncaught page errors -> affordance binding;
4. keywords in the verdict's failure types and reasons (for model-based verdicts);
5. otherwise -> requirement decomposition (a requested constraint was not met, nothing more specific).
A turn whose verdict is undecided (passed=None, nothing failed) is left unclassified: there is no
failure evidence to classify.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from runner.turns.records import FailureBucket, RequirementStatus, TurnRecord, Verdict
from runner.turns.tasks import Requirement, TurnSpec


class Mechanism(StrEnum):
    """The six interface-maintenance mechanisms of §6.1 (values are stable identifiers)."""

    INFORMATION_ARCHITECTURE = "information_architecture"
    """"for poorly organized or unreadable content" (§6.1): requested facts lack a clear hierarchy,
    overlap visually, or appear clipped."""

    DOMAIN_REPRESENTATION = "domain_representation"
    """"for incorrect task-specific abstractions" (§6.1)."""

    REQUIREMENT_DECOMPOSITION = "requirement_decomposition"
    """"for omitted constraints or workflow steps" (§6.1)."""

    AFFORDANCE_BINDING = "affordance_binding"
    """"for visible but unwired controls" (§6.1): controls that appear functional but are not wired to
    behavior."""

    DERIVED_STATE_PROPAGATION = "derived_state_propagation"
    """"for dependent views that remain stale after local state changes" (§6.1)."""

    EXTERNAL_STATE_GROUNDING = "external_state_grounding"
    """"for contradictions between the interface and tool or runtime state" (§6.1)."""


# The codebook, in the paper's words (§6.1), for prompts and reports.
DEFINITIONS: dict[Mechanism, str] = {
    Mechanism.INFORMATION_ARCHITECTURE: "poorly organized or unreadable content",
    Mechanism.DOMAIN_REPRESENTATION: "incorrect task-specific abstractions",
    Mechanism.REQUIREMENT_DECOMPOSITION: "omitted constraints or workflow steps",
    Mechanism.AFFORDANCE_BINDING: "visible but unwired controls",
    Mechanism.DERIVED_STATE_PROPAGATION: "dependent views that remain stale after local state changes",
    Mechanism.EXTERNAL_STATE_GROUNDING: "contradictions between the interface and tool or runtime state",
}
# What the judge is told beyond the definition, where a mechanism needs telling apart (§6.1's elaboration).
_JUDGE_DETAIL: dict[Mechanism, str] = {
    Mechanism.INFORMATION_ARCHITECTURE: "no clear hierarchy, overlap, clipping",
    Mechanism.DOMAIN_REPRESENTATION: "the domain object is modelled wrongly",
}


def judge_wording(mechanism: Mechanism) -> str:
    """The codebook entry an LLM judge reads (runner.suites.evogenui.rubric): the definition, with its detail."""
    detail = _JUDGE_DETAIL.get(mechanism)
    return f"{DEFINITIONS[mechanism]} ({detail})" if detail else DEFINITIONS[mechanism]

_STATE_ASSERTIONS = {"tool_called", "tool_not_called", "state"}
_CONTROL_ACTIONS = {"click", "fill", "select", "press", "check", "uncheck"}
# Statuses of slots that were never executed as a model turn (not part of the taxonomy's population).
_NOT_EXECUTED = {FailureBucket.BLOCKED, FailureBucket.PROVIDER_ERROR, FailureBucket.INFRA}
# Buckets whose failure is the absence of an evaluable artifact.
_NO_ARTIFACT = {FailureBucket.INVALID_OUTPUT, FailureBucket.BUILD_FAILED, FailureBucket.RUNTIME_ERROR}

# Rule 4: keywords of failure types / reasons, checked in this order.
_KEYWORDS: list[tuple[Mechanism, tuple[str, ...]]] = [
    (Mechanism.EXTERNAL_STATE_GROUNDING, ("tool", "backend", "runtime state", "readback", "external", "grounding")),
    (Mechanism.DERIVED_STATE_PROPAGATION, ("stale", "derived", "propagat", "not updated", "out of sync")),
    (Mechanism.AFFORDANCE_BINDING, ("unwired", "not wired", "affordance", "no-op", "does nothing", "broken control")),
    (Mechanism.INFORMATION_ARCHITECTURE, ("layout", "readab", "clipped", "overlap", "hierarchy", "unreadable")),
    (Mechanism.DOMAIN_REPRESENTATION, ("domain", "abstraction", "wrong unit", "incorrect model")),
    (Mechanism.REQUIREMENT_DECOMPOSITION, ("missing", "omitted", "not implemented", "incomplete")),
]


@dataclass(frozen=True)
class Classification:
    mechanism: Mechanism
    basis: str  # the rule and evidence that decided it, for reports


def parse_mechanism(value: Any) -> Mechanism | None:
    """A Mechanism from its value or a loose spelling ("Affordance binding"); None if it is none."""
    if isinstance(value, Mechanism):
        return value
    if not isinstance(value, str):
        return None
    key = re.sub(r"[^a-z]+", "_", value.strip().lower()).strip("_")
    try:
        return Mechanism(key)
    except ValueError:
        return None


def _normalize_space(text: str) -> str:
    return " ".join(text.split())


def dom_text(path: Path) -> str | None:
    """The text content of a saved dom.html (tags, scripts and styles removed), or None if unreadable."""
    try:
        raw = path.read_text(errors="replace")
    except OSError:
        return None
    raw = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", raw)
    return _normalize_space(html.unescape(re.sub(r"(?s)<[^>]+>", " ", raw)))


def _author_hints(turn: TurnSpec) -> dict[str, Mechanism]:
    """Requirement id -> mechanism named by its evidence item (`mechanism`: our format extension)."""
    contract = turn.extra.get("validation_contract")
    if not isinstance(contract, dict):
        return {}
    scenarios = contract.get("validation_scenarios", [contract])
    hints: dict[str, Mechanism] = {}
    for scenario in scenarios if isinstance(scenarios, list) else []:
        items = scenario.get("evidence_requirements", []) if isinstance(scenario, dict) else []
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                mechanism = parse_mechanism(item.get("mechanism"))
                if mechanism is not None:
                    hints[item["id"]] = mechanism
    return hints


def _classify_requirement(
    requirement: Requirement | None, detail: dict[str, Any] | None, reason: str, dom: str | None
) -> Classification:
    """Rules 2b-2g for one failed requirement."""
    check = requirement.check if requirement is not None else None
    steps = (detail or {}).get("steps") or []
    failed_steps = [step for step in steps if isinstance(step, dict) and not step.get("ok", True)]
    assertions = [a for a in (detail or {}).get("assertions") or [] if isinstance(a, dict)]
    failed = [a for a in assertions if a.get("status") == RequirementStatus.FAILED.value]

    if any(a.get("type") in _STATE_ASSERTIONS for a in failed):
        return Classification(Mechanism.EXTERNAL_STATE_GROUNDING, "a tool-log or runtime-state assertion failed")
    if failed_steps:
        action = str(failed_steps[0].get("action", {}).get("action", ""))
        if action in _CONTROL_ACTIONS:
            return Classification(Mechanism.AFFORDANCE_BINDING, f"could not {action} the control: {failed_steps[0].get('error', '')}")
        return Classification(Mechanism.INFORMATION_ARCHITECTURE, f"an awaited element never appeared: {failed_steps[0].get('error', '')}")
    if requirement is not None and requirement.kind in ("tool", "state") and not failed:
        return Classification(Mechanism.EXTERNAL_STATE_GROUNDING, f"a {requirement.kind} requirement failed: {reason}")
    if any(a.get("type") == "mutation" for a in failed):
        return Classification(Mechanism.AFFORDANCE_BINDING, "acting on the control changed nothing on the page")
    if failed:
        first = failed[0]
        acted = bool(steps) or bool(check and check.steps)
        if acted:
            return Classification(Mechanism.DERIVED_STATE_PROPAGATION, f"the view did not follow the action: {first.get('reason', '')}")
        spec = None
        if check is not None and isinstance(first.get("index"), int) and first["index"] < len(check.assertions):
            spec = check.assertions[first["index"]]
        if first.get("type") == "text_visible" and spec is not None:
            if not getattr(spec, "present", True):
                return Classification(Mechanism.DOMAIN_REPRESENTATION, f"shows what it must not: {spec.text!r}")
            if dom is not None and _normalize_space(spec.text) in dom:
                return Classification(Mechanism.INFORMATION_ARCHITECTURE, f"{spec.text!r} is in the DOM but not visible")
            return Classification(Mechanism.REQUIREMENT_DECOMPOSITION, f"{spec.text!r} is not presented at all")
        if first.get("type") == "text_visible":
            return Classification(Mechanism.REQUIREMENT_DECOMPOSITION, first.get("reason", "requested text is missing"))
        return Classification(Mechanism.DOMAIN_REPRESENTATION, f"the content is modelled wrongly: {first.get('reason', '')}")
    keyword = _keyword_match([reason])
    if keyword is not None:
        return keyword
    return Classification(Mechanism.REQUIREMENT_DECOMPOSITION, f"requirement not met: {reason}")


def _keyword_match(texts: list[str]) -> Classification | None:
    joined = " ".join(text.lower() for text in texts if text)
    for mechanism, words in _KEYWORDS:
        for word in words:
            if word in joined:
                return Classification(mechanism, f"evidence mentions {word!r}")
    return None


def classify_turn(
    verdict: Verdict | None,
    turn: TurnSpec | None = None,
    *,
    status: FailureBucket | None = None,
    build_ok: bool = True,
    load_error: str = "",
    blank: bool = False,
    dom: str | None = None,
) -> Classification | None:
    """The primary mechanism of one executed non-passing turn, or None when there is nothing to classify
    (a passing turn, or an undecided verdict with no failure evidence). See the module docstring."""
    passed = verdict.passed if verdict is not None else None
    failure_types = set(verdict.failure_types) if verdict is not None else set()

    # Rule 1: no evaluable artifact.
    if not build_ok or status in _NO_ARTIFACT or "build_failed" in failure_types:
        why = {FailureBucket.INVALID_OUTPUT: "no parsable source"}.get(status, "the artifact did not build")
        if build_ok and status is FailureBucket.RUNTIME_ERROR:
            why = "the page crashed or stayed blank"
        return Classification(Mechanism.INFORMATION_ARCHITECTURE, f"no readable interface: {why}")
    if load_error or blank or failure_types & {"load_error", "blank_page"}:
        return Classification(Mechanism.INFORMATION_ARCHITECTURE, "no readable interface: the page did not load or is blank")
    if verdict is None or passed is True:
        return None

    # Rule 2: failed requirements.
    specs = {requirement.id: requirement for requirement in (turn.requirements if turn is not None else [])}
    hints = _author_hints(turn) if turn is not None else {}
    details = verdict.raw.get("checks", {}) if isinstance(verdict.raw, dict) else {}
    labels: list[Classification] = []
    for result in verdict.requirements:
        if result.status is not RequirementStatus.FAILED:
            continue
        if result.id in hints:
            labels.append(Classification(hints[result.id], f"{result.id}: mechanism named by the task"))
            continue
        label = _classify_requirement(specs.get(result.id), details.get(result.id), result.reason, dom)
        labels.append(Classification(label.mechanism, f"{result.id}: {label.basis}"))
    if labels:
        counts = Counter(label.mechanism for label in labels)
        best = max(counts.values())
        return next(label for label in labels if counts[label.mechanism] == best)

    if passed is None:
        return None  # undecided and nothing failed: no failure evidence

    # Rule 3: uncaught page errors with every requirement met.
    if "page_error" in failure_types:
        return Classification(Mechanism.AFFORDANCE_BINDING, "uncaught page errors while operating the interface")

    # Rule 4: keywords (model-based verdicts have no check details).
    texts = list(verdict.failure_types) + [d.reason for d in verdict.dimensions.values()] + [verdict.summary]
    keyword = _keyword_match(texts)
    if keyword is not None:
        return keyword

    # Rule 5.
    return Classification(Mechanism.REQUIREMENT_DECOMPOSITION, "the turn failed without a more specific signal")


def is_executed_non_passing(record: TurnRecord) -> bool:
    """The taxonomy's population (§6.1: "all ... executed non-passing calls"): a model response exists,
    the slot did not pass, and it was not blocked, a provider failure or a harness (infra) failure."""
    return record.passed is not True and record.model_responded and record.status not in _NOT_EXECUTED


def mechanism_of(record: TurnRecord) -> Mechanism | None:
    """The mechanism recorded for a slot: the verdict's label, else the artifact-level rule for slots
    that never reached a judge (e.g. invalid output)."""
    if record.verdict is not None and record.verdict.mechanism:
        return parse_mechanism(record.verdict.mechanism)
    if record.status in _NO_ARTIFACT:
        result = classify_turn(record.verdict, status=record.status)
        return result.mechanism if result is not None else None
    return None


def mechanism_counts(records: list[TurnRecord]) -> dict[str, dict[str, int]]:
    """Counts of mechanisms over executed non-passing slots, per sub-suite and overall.

    Every mechanism appears (0 when absent); `unclassified` counts slots with no failure evidence
    (e.g. undecided verdicts, timeouts, judge errors)."""
    empty = {mechanism.value: 0 for mechanism in Mechanism} | {"unclassified": 0}
    counts: dict[str, dict[str, int]] = {"overall": dict(empty)}
    for record in records:
        if not is_executed_non_passing(record):
            continue
        mechanism = mechanism_of(record)
        key = mechanism.value if mechanism is not None else "unclassified"
        for group in ("overall", record.sub_suite or "unknown"):
            counts.setdefault(group, dict(empty))[key] += 1
    return counts
