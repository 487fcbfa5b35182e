"""The §6.1 / Appendix D.2.2 diagnostic judge: its own model role, with previous-turn context, separate from the
turn evaluator. The evaluator and the diagnostic judge are two OpenAI-compatible servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image

from runner.errors import ConfigError
from runner.models.registry import build_model
from runner.turns.records import Verdict
from runner.run.roles import check_declared_roles
from runner.suites.base import ActorFacts, ModelFacts, RunFacts, SuiteContext
from runner.models.structured import decoding_schema
from runner.suites.evogenui.diagnosis import DiagnosisAnswer
from runner.suites.evogenui.taxonomy import Mechanism
from runner.suites.evogenui.suite import EvoGenUISuite, EvoGenUISuiteSettings
from tests.conftest import REPO_ROOT
from tests.judges.test_llm import Script, judge_for, make_input, verdict_json
from tests.support.fault_server import FaultServer, completion

DIAGNOSIS = json.dumps({"mechanism": "affordance_binding"})


def _suite(diagnosis: str, roles: dict[str, Any]) -> EvoGenUISuite:
    suite = EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui", diagnosis=diagnosis), project_root=REPO_ROOT)
    suite.configure_run(_facts(roles={name: _model(vision=True) for name in roles}))
    suite.bind(SuiteContext(browsers=None, sandbox=None, roles=roles))  # type: ignore[arg-type]
    return suite


def _previous_slot(root: Path) -> None:
    """Turn 1 of the episode passed: its verdict and final screenshot, where the engine leaves them."""
    folder = root / "1"
    folder.mkdir(parents=True)
    (folder / "verdict.json").write_text(json.dumps(
        {"judge": "llm", "passed": True, "requirements": [{"id": "r0-ledger-rows", "status": "passed"}],
         "summary": "PASSED; the ledger lists every row"}))
    Image.new("RGB", (32, 20), (10, 200, 10)).save(folder / "final_screenshot_full.png")


def _judge_turn(evaluator: FaultServer, diagnostic: FaultServer | None, out_dir: Path,
                diagnosis: str = "judge") -> Verdict:
    async def main() -> Verdict:
        roles = {}
        if diagnostic is not None:
            roles["diagnostic"] = build_model({"name": "diag", "provider": "openai", "model": "diag",
                                               "base_url": diagnostic.base_url, "cache": False, "max_retries": 0})
        suite, judge = _suite(diagnosis, roles), judge_for(evaluator)
        try:
            return await suite.judge_turn(judge, make_input(out_dir))
        finally:
            await judge.aclose()
            for model in roles.values():
                await model.aclose()

    return asyncio.run(main())


def _texts(request: dict[str, Any]) -> str:
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content if p["type"] == "text")


def test_the_diagnostic_judge_labels_a_failed_turn_from_current_and_previous_turn_context(tmp_path: Path) -> None:
    _previous_slot(tmp_path / "ledger")
    with FaultServer(Script(verdict_json(5, 3, 5))) as evaluator, FaultServer(Script(DIAGNOSIS)) as diagnostic:
        verdict = _judge_turn(evaluator, diagnostic, tmp_path / "ledger" / "2")
    # The evaluator's own same-call label (derived_state_propagation) is replaced; the decision is not.
    assert verdict.passed is False
    assert verdict.mechanism == "affordance_binding"
    assert "mechanism: affordance_binding (diagnostic judge)" in verdict.summary
    assert (evaluator.calls, diagnostic.calls) == (1, 1)
    request = diagnostic.requests[0]
    # The structured answer's schema is the one generated from the answer model.
    assert request["response_format"]["json_schema"]["schema"] == decoding_schema(DiagnosisAnswer)
    assert request["response_format"]["json_schema"]["schema"]["properties"]["mechanism"]["enum"] == \
        [mechanism.value for mechanism in Mechanism]
    text = _texts(request)
    assert "Add a running total under the ledger." in text  # the current request
    assert "Turn evaluator's verdict on this turn (turn 2)" in text and "total stays stale" in text
    assert "Previous turn (turn 1)" in text and "request: Build a ledger." in text
    assert "requirement r0-ledger-rows: passed" in text  # what the previous artifact had
    images = [p for p in request["messages"][-1]["content"] if p["type"] == "image_url"]
    assert len(images) == 2, "this turn's screenshot and the previous turn's final screenshot"
    assert "affordance_binding" in request["messages"][0]["content"]  # the codebook


def test_a_passing_turn_is_not_diagnosed(tmp_path: Path) -> None:
    with FaultServer(Script(verdict_json(5, 4, 4))) as evaluator, FaultServer(Script(DIAGNOSIS)) as diagnostic:
        verdict = _judge_turn(evaluator, diagnostic, tmp_path / "ledger" / "2")
    assert verdict.passed is True and verdict.mechanism is None and diagnostic.calls == 0


def test_no_valid_diagnosis_leaves_the_turn_unclassified(tmp_path: Path) -> None:
    """A diagnostic judge that never answers in the schema: no label at all, never the evaluator's."""
    with FaultServer(Script(verdict_json(5, 3, 5))) as evaluator, \
            FaultServer(Script('{"mechanism": "bad wiring"}')) as diagnostic:
        verdict = _judge_turn(evaluator, diagnostic, tmp_path / "ledger" / "2")
    assert verdict.passed is False and verdict.mechanism is None
    assert "mechanism: unclassified (diagnostic judge:" in verdict.summary
    assert diagnostic.calls == 3  # diagnosis_max_attempts


def test_the_evaluator_option_keeps_the_same_call_label(tmp_path: Path) -> None:
    with FaultServer(Script(verdict_json(5, 3, 5))) as evaluator:
        verdict = _judge_turn(evaluator, None, tmp_path / "ledger" / "2", diagnosis="evaluator")
    assert verdict.mechanism == "derived_state_propagation"


def test_the_diagnostic_judge_is_a_declared_model_role() -> None:
    assert _suite("auto", {"diagnostic": object()}).required_roles == ("diagnostic",)
    assert _suite("auto", {}).required_roles == ()
    suite = _suite("judge", {})
    assert suite.required_roles == ("diagnostic",)
    assert suite.rubric_versions() == {"evogenui-diagnosis": "evogenui-diagnosis-v1"}
    config = SimpleNamespace(roles={}, suite=SimpleNamespace(name="evogenui"))
    with pytest.raises(ConfigError, match=r"roles\.diagnostic: required by suite 'evogenui'"):
        check_declared_roles(config, suite)  # type: ignore[arg-type]
    summary = suite.summarize([], [])
    assert summary["failure_mechanisms_source"] == "diagnostic_judge"


def _model(*, vision: bool) -> ModelFacts:
    return ModelFacts("judge-vl", {"provider": "openai", "model": "judge-vl", "vision": vision}, vision=vision)


def _facts(*, roles: dict[str, ModelFacts] | None = None, judge_model: ModelFacts | None = None) -> RunFacts:
    """What the run tells the suite (runner/run/roles.py run_facts): its declared roles, an LLM judge's model."""
    return RunFacts(generator=ModelFacts("oracle", {}), actor=ActorFacts("probe"), roles=roles or {},
                    judge_model=judge_model)


def _llm_judge_config(vision: bool) -> SimpleNamespace:
    """A run config with an LLM judge and no `roles.diagnostic`."""
    judge = SimpleNamespace(kind="llm", options={"model": {"provider": "openai", "model": "judge-vl", "vision": vision}})
    return SimpleNamespace(roles={}, judge=judge, suite=SimpleNamespace(name="evogenui"))


def test_without_its_own_role_the_diagnostic_judge_asks_the_evaluators_model(tmp_path: Path) -> None:
    """D.2.2's separate diagnostic call is the default with an LLM judge: the paper names no diagnostic model, so
    the evaluator's model answers it (same server), in a call of its own with previous-turn context."""
    _previous_slot(tmp_path / "ledger")

    def evaluator_then_diagnosis(messages: list[dict[str, Any]]) -> tuple[int, str]:
        diagnosing = "Assign the ONE primary failure mechanism" in json.dumps(messages)
        return 200, completion(DIAGNOSIS if diagnosing else verdict_json(5, 3, 5))

    suite = EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui"), project_root=REPO_ROOT)  # diagnosis: auto
    suite.configure_run(_facts(judge_model=_model(vision=True)))
    assert (suite.diagnosis, suite.diagnostic_model_role, suite.required_roles) == ("judge", "judge", ())
    check_declared_roles(_llm_judge_config(vision=True), suite)  # no roles.diagnostic needed  # type: ignore[arg-type]

    with FaultServer(evaluator_then_diagnosis) as server:
        async def main() -> Verdict:
            judge = judge_for(server)
            model = build_model({"name": "judge-vl", "provider": "openai", "model": "judge-vl",
                                 "base_url": server.base_url, "cache": False, "max_retries": 0, "vision": True})
            suite.bind(SuiteContext(browsers=None, sandbox=None, roles={"judge": model}))  # type: ignore[arg-type]
            try:
                return await suite.judge_turn(judge, make_input(tmp_path / "ledger" / "2"))
            finally:
                await judge.aclose()
                await model.aclose()

        verdict = asyncio.run(main())
        requests = server.requests
    assert verdict.passed is False and verdict.mechanism == "affordance_binding"
    assert len(requests) == 2  # the evaluator's call, then the diagnostic call
    diagnostic = requests[1]
    assert diagnostic["response_format"]["json_schema"]["schema"] == decoding_schema(DiagnosisAnswer)
    assert "Previous turn (turn 1)" in _texts(diagnostic)
    assert len([p for p in diagnostic["messages"][-1]["content"] if p["type"] == "image_url"]) == 2  # vision
    summary = suite.summarize([], [])
    assert summary["failure_mechanisms_source"] == "diagnostic_judge"
    assert summary["failure_mechanisms_model_role"] == "judge"


def test_the_diagnostic_role_wins_over_the_evaluators_model_and_rules_judges_keep_the_evaluator_label() -> None:
    with_role = _facts(judge_model=_model(vision=False), roles={"diagnostic": _model(vision=True)})
    suite = EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui"), project_root=REPO_ROOT)
    suite.configure_run(with_role)
    assert (suite.diagnostic_model_role, suite.required_roles, suite.diagnosis_vision) == \
        ("diagnostic", ("diagnostic",), True)
    suite = EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui"), project_root=REPO_ROOT)
    suite.configure_run(_facts())  # a rules judge calls no model
    assert (suite.diagnosis, suite.required_roles) == ("evaluator", ())
