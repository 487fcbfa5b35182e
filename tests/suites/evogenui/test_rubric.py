"""The EvoGenUI rubric lives with its suite: one definition of its dimensions, pass rule and mechanism texts,
registered under the name judge configs give (`rubric: evogenui`), with no import from judges/ into suites/."""

from __future__ import annotations

import ast

import pytest
import yaml

from runner.judges.rubrics import RUBRICS, get_rubric, rubric_class
from runner.suites.evogenui import passing, taxonomy
from runner.suites.evogenui.rubric import MECHANISMS, EvoGenUIRubric
from tests.conftest import REPO_ROOT


def _judgement(presentation: int, execution: int, alignment: int) -> dict:
    return {"presentation": {"score": presentation, "reason": "p"}, "execution": {"score": execution, "reason": "e"},
            "alignment": {"score": alignment, "reason": "a"}, "requirements": {}, "failure_types": [],
            "mechanism": "affordance_binding", "summary": ""}


def test_the_registry_finds_the_suites_rubric_by_its_name() -> None:
    assert rubric_class("evogenui") is EvoGenUIRubric
    assert isinstance(get_rubric("evogenui"), EvoGenUIRubric)
    for path in sorted((REPO_ROOT / "conf" / "judge").glob("*.yaml")):
        name = (yaml.safe_load(path.read_text()).get("options") or {}).get("rubric")
        if name is not None:
            assert name in RUBRICS, path.name
    with pytest.raises(ValueError, match="unknown rubric 'nope'"):
        get_rubric("nope")


def test_dimensions_pass_rule_and_mechanisms_have_one_definition() -> None:
    rubric = EvoGenUIRubric()
    assert rubric.dimensions is passing.DIMENSIONS
    assert list(rubric.schema([])["properties"])[:3] == list(passing.DIMENSIONS)
    assert MECHANISMS == tuple(mechanism.value for mechanism in taxonomy.Mechanism)
    for mechanism in taxonomy.Mechanism:
        assert f"{mechanism.value}: {taxonomy.judge_wording(mechanism)}" in rubric.instructions()
        assert taxonomy.judge_wording(mechanism).startswith(taxonomy.DEFINITIONS[mechanism])
    # The rubric's own decision and the official one are the suite's pass rule (>= 4 on all three, §4.3).
    for scores in [(4, 4, 4), (5, 4, 3), (3, 5, 5), (4, 5, 5)]:
        outcome = rubric.parse(_judgement(*scores), [])
        expected = passing.turn_passes(generation_succeeded=True, artifact_evaluable=True,
                                       scores=dict(zip(passing.DIMENSIONS, scores)))
        assert outcome.passed is expected
        assert rubric.decide(outcome, generation_ok=True, evaluable=True) is expected
        assert rubric.decide(outcome, generation_ok=True, evaluable=False) is False
        assert outcome.mechanism == (None if expected else "affordance_binding")


def test_the_judges_package_imports_no_suite() -> None:
    for path in sorted((REPO_ROOT / "runner" / "judges").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not [m for m in modules if m.startswith("runner.suites")], path.name
