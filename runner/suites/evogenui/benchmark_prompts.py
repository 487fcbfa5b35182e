"""EvoGenUI-Bench's own prompts, read at run time from the checkout the user points at (`suite.prompts=benchmark`).

Numbers comparable with the paper's Table 2 need the benchmark's generator, actor and evaluator prompts and its
output contract (EvoGenUI-Bench §5.1, Appendix F.1). They are never copied into this project: each run
imports the checkout's prompt modules by file path under private module names (no sys.path change; the
evaluator module's `runtime.types` import resolves through the checkout's registered `runtime` package),
calls the documented functions and records a sha256 of every text in the run's lineage.

    runner/generation/prompts.py   generation_system_prompt() -> str                  (required)
    runner/evaluation/prompts.py   dimension_judge_system_prompt(*, evidence_policy, response_contract=None),
                                   DIMENSION_EVIDENCE_POLICY, DIMENSION_RUBRICS, DIMENSION_SCORE_ANCHORS
    runner/execution/prompts.py    ACTOR_SYSTEM_PROMPT_EXTEND                          (the LLM actor's instructions)
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel, TypeAdapter

from runner.judges.base import Judge
from runner.judges.rubrics import Rubric, RubricOutcome, ScreenshotKind
from runner.suites.evogenui.checkout import BenchmarkCheckout, CheckoutError

GENERATION_MODULE = Path("runner") / "generation" / "prompts.py"
EVALUATION_MODULE = Path("runner") / "evaluation" / "prompts.py"
EXECUTION_MODULE = Path("runner") / "execution" / "prompts.py"
# Our structured verdict schema replaces the benchmark's own response contract (the rules stay its own).
RESPONSE_CONTRACT = ("Return exactly one JSON object that matches the JSON schema of this request; score each "
                     "dimension within [1, 2, 3, 4, 5]; a score >= 4 passes, a score < 4 fails.")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class BenchmarkPrompts:
    generator_system: str
    evaluator_system: str | None = None
    actor_system_extension: str | None = None
    sources: dict[str, str] = field(default_factory=dict)  # role -> file it came from

    def hashes(self) -> dict[str, str]:
        texts = {"generator": self.generator_system, "evaluator": self.evaluator_system,
                 "actor": self.actor_system_extension}
        return {role: sha256_text(text) for role, text in texts.items() if text is not None}

    def version(self) -> str:
        """One string for the lineage's prompt versions: every prompt's hash."""
        return "evogenui-bench:" + ",".join(f"{role}={value[:16]}" for role, value in sorted(self.hashes().items()))


def _import_file(path: Path, alias: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(alias, path)
    if spec is None or spec.loader is None:
        raise CheckoutError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise CheckoutError(f"{path}: import failed: {type(error).__name__}: {error}") from error
    return module


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CheckoutError(f"{where}: expected a non-empty prompt text, got {type(value).__name__}")
    return value


def _evaluator(checkout: BenchmarkCheckout) -> tuple[str | None, str | None]:
    path = checkout.root / EVALUATION_MODULE
    if not path.is_file():
        return None, None
    checkout.runtime_package()
    module = _import_file(path, "_evogenui_bench_evaluation_prompts")
    builder = getattr(module, "dimension_judge_system_prompt", None)
    if not callable(builder):
        raise CheckoutError(f"{path}: dimension_judge_system_prompt() is missing")
    system = _text(builder(evidence_policy=getattr(module, "DIMENSION_EVIDENCE_POLICY", ""),
                           response_contract=RESPONSE_CONTRACT), f"{path}: dimension_judge_system_prompt()")
    # The per-dimension rubrics and score anchors travel with the rules (the benchmark sends them per request).
    extras = {name: getattr(module, name) for name in ("DIMENSION_RUBRICS", "DIMENSION_SCORE_ANCHORS")
              if isinstance(getattr(module, name, None), dict)}
    if extras:
        system += "\n\n" + json.dumps(extras, ensure_ascii=False, indent=2)
    return system, str(path)


def load_benchmark_prompts(checkout: BenchmarkCheckout) -> BenchmarkPrompts:
    """The checkout's prompts; the generator's is required, the others are used when present."""
    generation = checkout.root / GENERATION_MODULE
    if not generation.is_file():
        raise CheckoutError(f"suite.prompts=benchmark: {generation} not found in the checkout")
    module = _import_file(generation, "_evogenui_bench_generation_prompts")
    builder = getattr(module, "generation_system_prompt", None)
    if not callable(builder):
        raise CheckoutError(f"{generation}: generation_system_prompt() is missing")
    sources = {"generator": str(generation)}
    generator = _text(builder(), f"{generation}: generation_system_prompt()")
    evaluator, evaluator_source = _evaluator(checkout)
    if evaluator_source:
        sources["evaluator"] = evaluator_source
    actor = None
    execution = checkout.root / EXECUTION_MODULE
    if execution.is_file():
        value = getattr(_import_file(execution, "_evogenui_bench_execution_prompts"), "ACTOR_SYSTEM_PROMPT_EXTEND", None)
        if isinstance(value, str) and value.strip():
            actor, sources["actor"] = value, str(execution)
    return BenchmarkPrompts(generator, evaluator, actor, sources)


class BenchmarkEvaluatorRubric:
    """A rubric whose instructions are the benchmark's evaluator prompt; schema and parsing stay the rubric's."""

    def __init__(self, rubric: Rubric, instructions: str) -> None:
        self.inner = rubric
        self._instructions = instructions

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def version(self) -> str:
        return self.inner.version

    @property
    def dimensions(self) -> tuple[str, ...]:
        return self.inner.dimensions

    @property
    def default_screenshot(self) -> ScreenshotKind:
        return self.inner.default_screenshot

    def instructions(self) -> str:
        return self._instructions

    def answer_model(self, requirement_ids: list[str]) -> type[BaseModel] | TypeAdapter[Any]:
        return self.inner.answer_model(requirement_ids)

    def schema(self, requirement_ids: list[str]) -> dict[str, Any]:
        return self.inner.schema(requirement_ids)

    def parse(self, data: Any, requirement_ids: list[str]) -> RubricOutcome:
        return self.inner.parse(data, requirement_ids)

    def decide(self, outcome: RubricOutcome | None, *, generation_ok: bool, evaluable: bool) -> bool | None:
        return self.inner.decide(outcome, generation_ok=generation_ok, evaluable=evaluable)


def use_benchmark_evaluator(judge: Judge, instructions: str) -> None:
    """Give a judge that scores with a rubric (an LLM judge) the benchmark's evaluator prompt, once; a judge
    without a rubric is left alone."""
    rubric = judge.rubric
    if rubric is None or rubric.instructions() == instructions:
        return
    judge.use_rubric(BenchmarkEvaluatorRubric(rubric, instructions))
