"""The presets under conf/experiment/ compose to the papers' settings: each listed key against the paper's value.

Composed the way the command line composes them (`python -m runner +experiment=<preset> model=<generator>`), then
validated; the generator stays the user's choice. The table is the specification: paper, section, setting, key,
value (docs/presets.md prints the same table for users).
"""

from __future__ import annotations

from typing import Any

import pytest
from hydra.errors import ConfigCompositionException

from runner.compose import compose
from runner.run.validation import validate_config
from tests.conftest import REPO_ROOT

MIMO_REVISION = "63651580ca774f8504f676040460aed3e1244ac1"  # conf/judge/mimo.yaml's pin
KIMI_REVISION = "7eb5002f6aadc958aed6a9177b7ed26bb94011bb"  # conf/judge/kimi.yaml's pin
UITARS_REVISION = "683d002dd99d8f95104d31e70391a39348857f4e"  # conf/actor/ui-tars.yaml's pin

# (preset, dotted key, the paper's value, where the paper says so)
PAPER_VALUES: list[tuple[str, str, Any, str]] = [
    ("evogenui-table2", "suite.name", "evogenui", "EvoGenUI-Bench §5.1"),
    ("evogenui-table2", "suite.task_set", "paper", "EvoGenUI-Bench §5.1, App. A: the released 150 tasks"),
    ("evogenui-table2", "suite.paper_data.evogenui-bench.git.url",
     "https://github.com/MAPS-research/EvoGenUI-Bench.git", "EvoGenUI-Bench App. A: the release"),
    ("evogenui-table2", "suite.turns", None, "EvoGenUI-Bench §5.1: five requested turns per task (all of them)"),
    ("evogenui-table2", "suite.sub_suites", [], "EvoGenUI-Bench §5.1: the same 150 tasks, all three suites"),
    ("evogenui-table2", "model.temperature", 0.0, "EvoGenUI-Bench App. D.1"),
    ("evogenui-table2", "model.max_tokens", 32768, "EvoGenUI-Bench App. D.1"),
    ("evogenui-table2", "actor.kind", "llm", "EvoGenUI-Bench §5.2: MiMo-V2.5 as the interaction actor"),
    ("evogenui-table2", "actor.options.model.server.hf_repo", "XiaomiMiMo/MiMo-V2.5", "EvoGenUI-Bench §5.2"),
    ("evogenui-table2", "actor.options.model.server.revision", MIMO_REVISION, "weights pinned"),
    ("evogenui-table2", "actor.options.model.temperature", 0.0, "EvoGenUI-Bench App. D.1"),
    ("evogenui-table2", "actor.options.model.max_tokens", 4096, "EvoGenUI-Bench App. D.1"),
    ("evogenui-table2", "actor.options.max_steps", 20, "EvoGenUI-Bench §6.2: a 17-step trace must fit"),
    ("evogenui-table2", "judge.kind", "llm", "EvoGenUI-Bench §5.2: MiMo-V2.5 as the evaluator"),
    ("evogenui-table2", "judge.options.model.server.hf_repo", "XiaomiMiMo/MiMo-V2.5", "EvoGenUI-Bench §5.2"),
    ("evogenui-table2", "judge.options.model.server.revision", MIMO_REVISION, "weights pinned"),
    ("evogenui-table2", "judge.options.model.temperature", 0.0, "EvoGenUI-Bench App. D.1"),
    ("evogenui-table2", "judge.options.model.max_tokens", 8192, "EvoGenUI-Bench App. D.1"),
    ("evogenui-table2", "judge.options.rubric", "evogenui", "EvoGenUI-Bench §4.2, App. C.1"),
    ("evogenui-table2", "judge.options.screenshot", "full", "EvoGenUI-Bench §5.2: refreshed full-page screenshots"),
    ("evogenui-table2", "judge.options.include_screenshot", True, "EvoGenUI-Bench §5.2"),
    ("evogenui-table2", "repeats", 1, "EvoGenUI-Bench §5.5: one generation per model-task-turn slot"),
    ("evogenui-table2", "suite.diagnosis", "judge", "EvoGenUI-Bench §6.1, App. D.2.2: a separate diagnostic call"),
    ("evogenui-table8", "repeats", 3, "EvoGenUI-Bench App. D.2, Table 8: three independent generations"),
    ("evogenui-table8", "suite.task_set", "paper", "EvoGenUI-Bench §5.1, App. A: the released 150 tasks"),
    ("evogenui-table8", "actor.options.model.server.hf_repo", "XiaomiMiMo/MiMo-V2.5", "EvoGenUI-Bench §5.2"),
    ("evogenui-table8", "judge.options.screenshot", "full", "EvoGenUI-Bench §5.2"),
    ("evogenui-table8", "model.max_tokens", 32768, "EvoGenUI-Bench App. D.1"),
    ("iwebgen-table2", "suite.name", "iwebgen", "I-WebGenBench §4"),
    ("iwebgen-table2", "suite.task_set", "project", "the authors released no specifications: the project's stand in"),
    ("iwebgen-table2", "suite.generation", "single_pass", "I-WebGenBench §4.1: a single pass, no refinement"),
    ("iwebgen-table2", "suite.pipeline", "single", "I-WebGenBench §4.1"),
    ("iwebgen-table2", "suite.domains", [], "I-WebGenBench §3.1: all five domains"),
    ("iwebgen-table2", "model.temperature", 0.0, "I-WebGenBench §4.2: lowest supported temperature"),
    ("iwebgen-table2", "actor.kind", "probe", "I-WebGenBench §4.1, App. B.1: the Interaction Probe"),
    ("iwebgen-table2", "actor.probe.mode", "paper", "I-WebGenBench App. B.1"),
    ("iwebgen-table2", "actor.probe.observe_character_data", False, "I-WebGenBench App. B.1"),
    ("iwebgen-table2", "actor.probe.screenshots", True, "I-WebGenBench App. B.1: the judge's screenshots"),
    ("iwebgen-table2", "judge.options.include_screenshot", True, "I-WebGenBench App. B.1"),
    ("iwebgen-table2", "repeats", 1, "I-WebGenBench §4.1"),
    ("floweval-table1", "suite.name", "floweval", "FlowEval §3"),
    ("floweval-table1", "suite.task_set", "project", "the authors released no sites: the project's stand in"),
    ("floweval-table1", "actor.kind", "uitars", "FlowEval §3.2: UI-TARS-1.5-7B"),
    ("floweval-table1", "actor.options.model.server.hf_repo", "ByteDance-Seed/UI-TARS-1.5-7B", "FlowEval §3.2"),
    ("floweval-table1", "actor.options.model.server.revision", UITARS_REVISION, "weights pinned"),
    ("floweval-table1", "actor.options.model.temperature", 0.7, "FlowEval §3.2"),
    ("floweval-table1", "actor.options.max_steps", 50, "FlowEval §3.2: up to 50 steps"),
    ("floweval-table1", "suite.runs", 3, "FlowEval §3.3: three CUA runs per site and task"),
    ("floweval-table1", "suite.repeats", 5, "FlowEval §3.1: five outputs per prompt"),
    ("floweval-table1", "model.temperature", 1.0, "FlowEval §3.1 gives no temperature for its five independent "
                                                  "generations: the preset states one (docs/presets.md)"),
    ("floweval-table1", "suite.featurizer", "uiclip", "FlowEval §3.3: UIClip"),
    ("floweval-table1", "agent.paper", {"qwen3-coder": "qwen-code", "qwen3-coder-480b-a35b-instruct": "qwen-code",
                                        "gemini-2.5-pro": "gemini-cli"},
     "FlowEval §3.1: each model's official coding agent, for the paper's models configured here"),
    ("web2code-table3-macro", "suite.name", "macro", "MT-Web2Code §4.1"),
    ("web2code-table3-macro", "suite.task_set", "project", "MT-Web2Code's data is not released: the project's"),
    ("web2code-table3-macro", "suite.turns", 5, "MT-Web2Code §4.1"),
    ("web2code-table3-macro", "suite.macro_outbox", "judge", "MT-Web2Code §3.5"),
    ("web2code-table3-macro", "suite.mode", "chain", "MT-Web2Code §5.3"),
    ("web2code-table3-macro", "suite.caption", False, "MT-Web2Code §5.1 (captions are Table 4's ablation)"),
    ("web2code-table3-macro", "judge.kind", "llm", "MT-Web2Code Table 3: Kimi-K2.6 as the judge model"),
    ("web2code-table3-macro", "judge.options.model.server.hf_repo", "moonshotai/Kimi-K2.6", "MT-Web2Code Table 3"),
    ("web2code-table3-macro", "judge.options.model.server.revision", KIMI_REVISION, "weights pinned"),
    ("web2code-table3-macro", "actor.kind", "none", "MT-Web2Code §3.3: static pages"),
    ("web2code-table3-macro", "repeats", 3, "MT-Web2Code Table 3: three independent runs"),
    ("web2code-table3-micro", "suite.name", "micro", "MT-Web2Code §4.1"),
    ("web2code-table3-micro", "suite.task_set", "project", "MT-Web2Code's data is not released: the project's"),
    ("web2code-table3-micro", "suite.turns", 5, "MT-Web2Code §4.1"),
    ("web2code-table3-micro", "suite.k_defects", 3, "MT-Web2Code §4.1"),
    ("web2code-table3-micro", "suite.mode", "chain", "MT-Web2Code §5.3"),
    ("web2code-table3-micro", "judge.kind", "rules", "MT-Web2Code Table 3: micro scored by pixel alignment"),
    ("web2code-table3-micro", "actor.kind", "none", "MT-Web2Code §3.4"),
    ("web2code-table3-micro", "repeats", 3, "MT-Web2Code Table 3: three independent runs"),
]

PRESETS = sorted({preset for preset, *_ in PAPER_VALUES})
# A preset leaves the generator to the user; I-WebGenBench's judge too (B.1 names no VLM).
USER_CHOICES = {"iwebgen-table2": ["judge=gpt-4o"]}


def composed(*overrides: str) -> dict[str, Any]:
    return compose(overrides, project_root=REPO_ROOT)


def preset(name: str, *overrides: str) -> dict[str, Any]:
    """The preset composed with a generator, validated, as a plain dict."""
    raw = composed(f"+experiment={name}", "model=qwen3-coder", *USER_CHOICES.get(name, []), *overrides)
    return validate_config(raw).model_dump(mode="json")


def lookup(config: dict[str, Any], dotted: str) -> Any:
    value: Any = config
    for part in dotted.split("."):
        value = value[part]
    return value


def test_every_results_table_has_a_preset() -> None:
    files = sorted(path.stem for path in (REPO_ROOT / "conf" / "experiment").glob("*.yaml"))
    assert files == PRESETS


@pytest.mark.parametrize("name", PRESETS)
def test_a_preset_sets_the_papers_values(name: str) -> None:
    config = preset(name)
    wrong = [f"{key} = {lookup(config, key)!r}, the paper's is {value!r} ({where})"
             for preset_name, key, value, where in PAPER_VALUES
             if preset_name == name and lookup(config, key) != value]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", PRESETS)
def test_a_preset_leaves_the_generator_to_the_user(name: str) -> None:
    assert lookup(preset(name, "model=glm-4.5-air"), "model.server.hf_repo") == "zai-org/GLM-4.5-Air"
    assert preset(name)["model"]["name"] == "qwen3-coder"


def test_the_papers_decoding_overrides_the_generators_own() -> None:
    # qwen2.5-coder-7b's own config caps output at 8,192; EvoGenUI-Bench App. D.1 caps every generator at 32,768.
    assert preset("evogenui-table2", "model=qwen2.5-coder-7b")["model"]["max_tokens"] == 32768
    # ... and the user can still override it, explicitly.
    assert preset("evogenui-table2", "model.max_tokens=8192")["model"]["max_tokens"] == 8192


def test_a_preset_runs_with_a_replay_generator() -> None:
    # oracle decodes nothing: the preset's temperature and cap are accepted and unused.
    config = validate_config(composed("+experiment=evogenui-table2", "model=oracle"))
    assert config.model.provider == "oracle"


def test_iwebgen_table2_asks_for_the_judge_the_paper_does_not_name() -> None:
    with pytest.raises(ConfigCompositionException, match="You must specify 'judge'"):
        composed("+experiment=iwebgen-table2", "model=qwen3-coder")


def test_the_project_configs_of_the_papers_models_are_pinned_and_shared() -> None:
    mimo_actor = preset("evogenui-table2")["actor"]["options"]["model"]["server"]
    mimo_judge = preset("evogenui-table2")["judge"]["options"]["model"]["server"]
    assert mimo_actor["revision"] == mimo_judge["revision"] == MIMO_REVISION
    assert composed("model=mimo-v2.5")["model"]["server"]["revision"] == MIMO_REVISION


# EvoGenUI-Bench App. D.1 (Table 6): config name -> exact provider identifier; temperature 0, 32,768 tokens each.
APP_D1_GENERATORS = {
    "gpt-5.5": "gpt-5.5",
    "gemini-3.1-pro-preview": "gemini-3.1-pro-preview",
    "gemini-3-flash-preview": "gemini-3-flash-preview",
    "claude-haiku-4-5-20251001": "claude-haiku-4-5-20251001",
    "claude-opus-4-7": "claude-opus-4-7",
    "glm-4.5-air-api": "glm-4.5-air",
    "qwen3.6-plus": "qwen3.6-plus",
    "qwen3-coder-480b-a35b-instruct": "qwen3-coder-480b-a35b-instruct",
}


@pytest.mark.parametrize("name", sorted(APP_D1_GENERATORS))
def test_app_d1_generators_by_exact_identifier_on_an_openai_compatible_endpoint(name: str) -> None:
    model = validate_config(composed(f"model={name}")).model.model_dump()
    assert (model["provider"], model["model"]) == ("openai", APP_D1_GENERATORS[name])
    assert (model["temperature"], model["max_tokens"]) == (0.0, 32768)
    assert model["api_key_env"] and model["base_url"].startswith("https://")
    moved = validate_config(composed(f"model={name}", "model.base_url=http://127.0.0.1:9000/v1",
                                     "model.api_key_env=GATEWAY_KEY")).model.model_dump()
    assert (moved["base_url"], moved["api_key_env"]) == ("http://127.0.0.1:9000/v1", "GATEWAY_KEY")


@pytest.mark.parametrize("name", ["qwen3-coder", "glm-4.5-air"])
def test_the_locally_served_app_d1_generators_have_its_output_cap(name: str) -> None:
    assert validate_config(composed(f"model={name}")).model.model_dump()["max_tokens"] == 32768


@pytest.mark.parametrize(("model", "judge"), [("mimo-v2.5", "mimo"), ("kimi-k2.6", "kimi")])
def test_a_paper_model_as_generator_has_its_judge_configs_weights(model: str, judge: str) -> None:
    as_model = composed(f"model={model}")["model"]["server"]
    as_judge = composed(f"judge={judge}")["judge"]["options"]["model"]["server"]
    assert (as_model["hf_repo"], as_model["revision"]) == (as_judge["hf_repo"], as_judge["revision"])


def test_floweval_names_each_models_agent_and_a_run_without_it_records_the_deviation() -> None:
    from runner.agents.settings import paper_agent_deviation

    def deviation(*overrides: str) -> str | None:
        return paper_agent_deviation(validate_config(composed("+experiment=floweval-table1", *overrides)))

    assert deviation("model=qwen3-coder") == (
        "the paper generated qwen3-coder with its agent qwen-code; this run used agent=none (add agent=qwen-code "
        "for the paper's setting)")
    assert "with its agent gemini-cli; this run used agent=builtin" in deviation("model=gemini-2.5-pro",
                                                                                  "agent=builtin")
    assert deviation("model=gpt-4o") is None  # not one of the paper's models: nothing to compare with
