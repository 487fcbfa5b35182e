"""A model role's capabilities: ONE default for `vision`, read from one place by every reader; vllm_served from
the provider kind, the batch size from its server (runner/models/role.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from runner.errors import ConfigError
from runner.models.role import VISION_DEFAULT, VLLM_DEFAULT_MAX_NUM_SEQS, ModelCapabilities, declared_vision
from runner.run.roles import run_facts
from runner.run.validation import compose_config
from tests.conftest import REPO_ROOT

ENDPOINT = {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}


def _config(*overrides: str):
    return compose_config(overrides, project_root=REPO_ROOT)


def test_vision_has_one_default_and_a_declared_value_wins() -> None:
    assert VISION_DEFAULT is False
    assert declared_vision({}) is False
    assert declared_vision({"vision": True}) is True and declared_vision({"vision": False}) is False
    assert ModelCapabilities.of({}, vllm_served=False) == ModelCapabilities(vision=False, vllm_served=False,
                                                                            batch_size=None)
    # A provider kind whose sections take no keys (the replays) declares it for all of them; a section's own wins.
    assert ModelCapabilities.of({}, vllm_served=False, kind_vision=True).vision is True
    assert ModelCapabilities.of({"vision": False}, vllm_served=False, kind_vision=True).vision is False


def test_batch_size_comes_from_the_server_of_a_served_model() -> None:
    assert ModelCapabilities.of({"server": {"max_num_seqs": 8}}, vllm_served=True).batch_size == 8
    assert ModelCapabilities.of({"server": {}}, vllm_served=True).batch_size == VLLM_DEFAULT_MAX_NUM_SEQS
    assert ModelCapabilities.of({"server": {"mode": "attach"}}, vllm_served=True).batch_size is None
    assert ModelCapabilities.of({"server": {"max_num_seqs": 8}}, vllm_served=False).batch_size is None


def test_every_reader_takes_the_one_default_for_an_undeclared_model() -> None:
    """The generator, the judge's and the actor's model, a suite's facts, the live check's request shape and
    the actor and judge settings all read `vision` the same way."""
    from runner.actors.llm import LLMActorSettings
    from runner.judges.llm_settings import LLMJudgeSettings
    from runner.run.role_requests import role_requests
    from runner.suites.registry import build_run_suite

    undeclared = _config("suite=evogenui", "model=local-openai", "judge=local-llm", "actor=llm",
                         "~actor.options.model.vision", "~judge.options.model.vision")
    roles = undeclared.model_roles
    assert "vision" not in undeclared.model.model_dump() and "vision" not in undeclared.actor.options["model"]
    assert "vision" not in undeclared.judge.options["model"]
    assert [roles[role].capabilities.vision for role in ("generator", "judge", "actor")] == [VISION_DEFAULT] * 3
    assert run_facts(undeclared).generator.vision is VISION_DEFAULT
    assert run_facts(undeclared).judge_model.vision is VISION_DEFAULT
    assert isinstance(undeclared.actor.settings, LLMActorSettings) and undeclared.actor.settings.vision is False
    assert isinstance(undeclared.judge.settings, LLMJudgeSettings) and undeclared.judge.settings.vision is False
    requests = {request.role: request for request in role_requests(undeclared, build_run_suite(undeclared))}
    assert not requests["generator"].images and not requests["actor"].images

    declared = _config("suite=evogenui", "model=qwen2.5-vl-7b", "actor=llm")
    assert declared.model_roles["generator"].capabilities.vision is True
    assert declared.model_roles["actor"].capabilities.vision is True
    assert run_facts(declared).generator.vision is True


def test_ui_tars_refuses_a_model_that_declares_no_vision() -> None:
    from runner.actors.uitars import UITarsSettings

    with pytest.raises(ConfigError, match=r"actor\.options\.model\.vision = false"):
        UITarsSettings.from_options({"model": dict(ENDPOINT)})
    assert UITarsSettings.from_options({"model": {**ENDPOINT, "vision": True}}).vision is True


def test_web2code_follows_the_declared_vision_or_its_own_explicit_setting() -> None:
    """MT-Web2Code's generator sees the page (§3): the conf/model files say `vision: true`; an undeclared model
    gets the one default (text-only payloads) unless `suite.text_only` says otherwise, explicitly."""
    from runner.suites.registry import build_run_suite

    def text_only(*overrides: str) -> bool:
        config = _config("suite=micro", "actor=none", *overrides)
        suite = build_run_suite(config)
        suite.configure_run(run_facts(config))
        return suite.text_only

    assert text_only("model=qwen2.5-vl-7b") is False
    assert text_only("model=local-openai") is True
    assert text_only("model=oracle") is False  # a replay's kind declares it: its evidence shows the full request
    assert text_only("model=local-openai", "suite.text_only=false") is False
    assert text_only("model=qwen2.5-vl-7b", "suite.text_only=true") is True


PAPER_MODEL_FILES = sorted(path for path in (REPO_ROOT / "conf" / "model").glob("*.yaml")
                           if path.stem not in ("oracle", "null", "identity", "local-openai"))


@pytest.mark.parametrize("path", PAPER_MODEL_FILES, ids=lambda path: path.stem)
def test_every_named_model_declares_its_vision(path: Path) -> None:
    """A named model's config says whether it reads images, so no run depends on the default for it (the
    replays take no keys; local-openai is a template for any server, whose user declares it)."""
    assert isinstance((yaml.safe_load(path.read_text()) or {}).get("vision"), bool), path


@pytest.mark.parametrize("group", ["judge", "actor"])
def test_every_judge_and_actor_model_that_takes_images_declares_it(group: str) -> None:
    """The judges and actors whose papers show the model the page (a VLM judge, the blind actor, UI-TARS) say
    `vision: true`; a text-only one leaves the default."""
    needs = {"judge": {"kimi", "qwen2.5-vl-7b", "qwen2.5-vl-72b"}, "actor": {"llm", "ui-tars"}}[group]
    for name in needs:
        section = yaml.safe_load((REPO_ROOT / "conf" / group / f"{name}.yaml").read_text())
        assert section["options"]["model"].get("vision") is True, f"conf/{group}/{name}.yaml"


def test_no_module_reads_vision_from_a_raw_section() -> None:
    """`vision` is read only through runner/models/role.py (declared_vision, ModelCapabilities): a `.get("vision"`
    elsewhere would bring back a second default."""
    offenders = []
    for path in sorted((REPO_ROOT / "runner").rglob("*.py")):
        if path == REPO_ROOT / "runner" / "models" / "role.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                    and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "vision":
                offenders.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert not offenders, offenders
