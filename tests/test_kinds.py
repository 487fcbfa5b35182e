"""One registration mechanism for every kind a config names (runner/kinds.py): a plugin adds a judge, an actor,
a sandbox and a model provider with no edit in runner/; an unknown kind is refused naming the key, the value and
the known kinds; every kind's options (llm, ui-tars, docker too) are refused before any work starts."""

from __future__ import annotations

import ast
import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from runner.actors.registry import build_actor
from runner.compose import compose
from runner.errors import ConfigError
from runner.judges.registry import build_judge
from runner.kinds import KINDS
from runner.models.base import GenerationRequest
from runner.models.registry import build_model
from runner.run.preflight import check_sandbox
from runner.run.roles import RunRoles
from runner.run.validation import validate_config
from runner.sandbox.registry import build_sandbox
from tests.conftest import REPO_ROOT, cli_env, runner_command

PLUGIN = REPO_ROOT / "tests" / "support" / "plugin_kinds"
PLUGIN_MODULES = [f"tests.support.plugin_kinds.{name}" for name in ("judge", "actor", "sandbox", "provider")]
PLUGIN_KINDS = ["judge=constant", "actor=idle", "sandbox=folder", "model=echo"]


def _composed(*overrides: str) -> dict:
    return compose(overrides, project_root=REPO_ROOT)


def _with_plugin(*overrides: str) -> dict:
    return _composed(f"hydra.searchpath=[file://{PLUGIN / 'conf'}]", f"+plugins=[{','.join(PLUGIN_MODULES)}]",
                     *PLUGIN_KINDS, *overrides)


def test_a_plugins_kinds_validate_and_build_with_no_edit_in_runner(tmp_path: Path) -> None:
    config = validate_config(_with_plugin())
    assert (config.judge.kind, config.actor.kind, config.sandbox.kind, config.model.provider) == \
        ("constant", "idle", "folder", "echo")
    assert build_judge(config.judge).settings.score == 0.5
    assert build_actor(config.actor).settings.wait_ms == 50
    assert build_sandbox(config).settings.workdir == "/tmp"
    model = build_model(config.model)
    request = GenerationRequest(task_id="t", turn=0, messages=[{"role": "user", "content": "hi"}])
    assert asyncio.run(model.generate(request)).text == "echo: hi"
    # Nothing in the package names the plugin: it registered itself when the config's `plugins` were imported.
    assert not [path for path in (REPO_ROOT / "runner").rglob("*.py") if "plugin_kinds" in path.read_text()]


def test_a_plugin_kind_is_asked_by_preflight_and_roles(tmp_path: Path) -> None:
    config = validate_config(_with_plugin(f"sandbox.options.workdir={tmp_path / 'missing'}"))
    problems = check_sandbox(config, suite=None)
    assert [problem.key for problem in problems] == ["sandbox.options.workdir"]
    roles = RunRoles(config, cache=None, log_dir=tmp_path, traced=True)
    assert type(roles.model("generator")).__name__ == "EchoModel"  # not traced: the provider is no endpoint
    assert "actor" not in roles.settings  # the idle actor calls no model


@pytest.mark.parametrize("override, key", [
    ("+judge.options.scorez=1", "judge.options.scorez"),
    ("+actor.options.wait_mz=1", "actor.options.wait_mz"),
    ("+sandbox.options.keeep=true", "sandbox.options.keeep"),
    ("+model.prefx=x", "model.prefx"),
])
def test_a_bad_option_of_a_plugin_kind_is_refused_naming_its_key(override: str, key: str) -> None:
    with pytest.raises(ConfigError, match=rf"{key.replace('.', r'[.]')}: unknown key"):
        validate_config(_with_plugin(override))


def test_a_plugin_kinds_bad_value_names_the_key_and_the_value() -> None:
    with pytest.raises(ConfigError, match=r"judge[.]options[.]score = 2[.]0: Input should be less than or equal"):
        validate_config(_with_plugin("judge.options.score=2.0"))


@pytest.mark.parametrize("override, key, value, known", [
    ("actor.kind=dancer", "actor.kind", "dancer", "llm, none, probe, scripted, uitars"),
    ("judge.kind=oracle", "judge.kind", "oracle", "llm, rules"),
    ("sandbox.kind=vm", "sandbox.kind", "vm", "docker, local"),
    ("model.provider=nope", "model.provider", "nope", "identity, null, openai, oracle, vllm"),
    ("agent.kind=robot", "agent.kind", "robot", "builtin, none"),
])
def test_an_unknown_kind_names_the_key_the_value_and_the_known_kinds(override: str, key: str, value: str,
                                                                       known: str) -> None:
    with pytest.raises(ConfigError) as raised:
        validate_config(_composed(override))
    assert f"{key} = {value!r}: unknown " in str(raised.value)
    choices = str(raised.value).split("choose one of ", 1)[1].splitlines()[0].split(", ")
    assert set(known.split(", ")) <= set(choices)  # and any kind a plugin registered earlier in this process


def test_an_unknown_section_key_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"actor[.]optionz: unknown key"):
        validate_config(_composed("+actor.optionz.max_steps=3"))


def test_a_plugin_module_that_does_not_import_is_named() -> None:
    with pytest.raises(ConfigError, match=r"plugins[.]0 = 'tests[.]support[.]no_such_plugin': cannot be imported"):
        validate_config(_composed("+plugins=[tests.support.no_such_plugin]"))


@pytest.mark.parametrize("overrides, key", [
    (("actor=llm", "+actor.options.max_stepz=3"), "actor.options.max_stepz"),
    (("actor=llm", "actor.options.max_steps=0"), "actor.options.max_steps"),
    (("actor=ui-tars", "+actor.options.history_imagez=2"), "actor.options.history_imagez"),
    (("actor=ui-tars", "+actor.options.model.server.tensor_paralel_size=2"), "actor.options.model.server"),
    (("judge=gpt-4o", "+judge.options.rubrik=evogenui"), "judge.options.rubrik"),
    (("judge=gpt-4o", "judge.options.rubric=nope"), "judge.options.rubric"),
    (("sandbox=docker", "+sandbox.options.cpuz=2"), "sandbox.options.cpuz"),
    (("sandbox=docker", "sandbox.options.memory_mb=-1"), "sandbox.options.memory_mb"),
    (("agent=builtin", "+agent.options.budgett.steps=3"), "agent.options.budgett"),
    (("agent=builtin", "agent.options.budget.steps=0"), "agent.options.budget.steps"),
    (("agent=builtin", "agent.options.tool_choice=always"), "agent.options.tool_choice"),
    (("agent=builtin", "+agent.optionz.x=1"), "agent.optionz"),
])
def test_llm_uitars_and_docker_options_are_refused_before_work_starts(overrides: tuple[str, ...], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", "[.]")):
        validate_config(_composed(*overrides))


def test_every_kind_family_is_registered_with_the_same_decorator() -> None:
    builtin = {"judge": {"llm", "rules"}, "actor": {"llm", "none", "probe", "scripted", "uitars"},
               "sandbox": {"docker", "local"}, "model": {"identity", "null", "openai", "oracle", "vllm"},
               "suite": {"evogenui", "floweval", "iwebgen", "macro", "micro", "smoke", "webgen"},
               "agent": {"none", "builtin"}}
    assert set(KINDS.families) == set(builtin)
    for family, names in builtin.items():
        assert names <= set(KINDS.names(family))  # a plugin test earlier in this process may have added more


def test_validating_a_config_imports_no_implementation_it_does_not_name() -> None:
    # The judge, actor and sandbox kinds register with lazy factories: a config naming the llm actor and the
    # docker sandbox imports their settings, never the other kinds' implementations.
    code = ("import sys; from tests.run.test_validation import _composed; "
            "from runner.run.validation import validate_config; "
            "validate_config(_composed('actor=llm', 'sandbox=docker', 'judge=rules')); "
            "print(sorted(m for m in ('runner.actors.uitars', 'runner.actors.probe', "
            "'runner.sandbox.local', 'runner.sandbox.docker', 'runner.models.vllm_provider', 'mlflow', 'torch') "
            "if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "['runner.sandbox.docker']"


@pytest.mark.parametrize("overrides, key", [
    (("actor=ui-tars", "+actor.options.history_imagez=2"), "actor.options.history_imagez"),
    ((f"hydra.searchpath=[file://{PLUGIN / 'conf'}]", f"+plugins=[{','.join(PLUGIN_MODULES)}]", *PLUGIN_KINDS,
      "+judge.options.scorez=1"), "judge.options.scorez"),
])
def test_the_command_refuses_a_bad_option_before_any_work(tmp_path: Path, overrides: tuple[str, ...],
                                                          key: str) -> None:
    run_dir = tmp_path / "run"
    result = subprocess.run(runner_command(*overrides, "tracking=off", f"hydra.run.dir={run_dir}"), cwd=REPO_ROOT,
                            env=cli_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr[-2000:]
    assert f"{key}: unknown key" in result.stderr
    assert not (run_dir / "config.yaml").exists()  # nothing prepared, nothing recorded


def test_an_agent_changes_the_turns_time_limit_to_its_wall_clock_and_none_changes_nothing() -> None:
    plain = validate_config(_composed("model=local-openai"))
    agent = validate_config(_composed("model=local-openai", "agent=builtin", "agent.options.budget.wall_clock_s=900"))
    assert agent.turn_timeout_s == 900 + 600 and agent.model_timeout_s == plain.model_timeout_s
    assert "agent" not in plain.model_dump()  # a run without an agent dumps (and hashes) as before agents
    assert agent.model_dump()["agent"]["kind"] == "builtin"


def test_the_unknown_agent_option_names_the_choices() -> None:
    result = subprocess.run(runner_command("agent=robot"), cwd=REPO_ROOT, env=cli_env(), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode != 0
    assert "agent/robot" in result.stderr and "builtin" in result.stderr and "none" in result.stderr


# A kind's name is compared only where the kind is defined; elsewhere the run reads what the kind declares (inert,
# vllm_served, runs_images, browser_in_sandbox...; a suite its RunFacts). Left: the config's dump of an unset
# agent (its hash stays that of runs made before agents existed) and the reward service's spare-build default (a
# local sandbox's own option).
NAME_COMPARISONS_LEFT = {"runner/config.py", "runner/reward/service.py"}
KIND_FIELDS = {"kind", "provider"}


def _kind_names() -> set[str]:
    return {name for family in ("judge", "actor", "sandbox", "model", "agent") for name in KINDS.names(family)}


def _compares_a_kind_name(node: ast.Compare, names: set[str]) -> bool:
    def names_a_kind(side: ast.expr) -> bool:
        if isinstance(side, ast.Attribute):
            return side.attr in KIND_FIELDS
        return (isinstance(side, ast.Call) and isinstance(side.func, ast.Attribute) and side.func.attr == "get"
                and bool(side.args) and isinstance(side.args[0], ast.Constant) and side.args[0].value in KIND_FIELDS)

    sides = [node.left, *node.comparators]
    constants = [side.value for side in sides if isinstance(side, ast.Constant) and isinstance(side.value, str)]
    return any(value in names for value in constants) and any(names_a_kind(side) for side in sides)


def test_no_module_outside_a_kind_compares_its_name() -> None:
    found, names = [], _kind_names()
    for path in sorted((REPO_ROOT / "runner").rglob("*.py")):
        relative = path.relative_to(REPO_ROOT).as_posix()
        if path.name == "kinds.py" or relative in NAME_COMPARISONS_LEFT or relative == "runner/models/providers.py":
            continue
        found += [f"{relative}:{node.lineno}" for node in ast.walk(ast.parse(path.read_text()))
                  if isinstance(node, ast.Compare) and _compares_a_kind_name(node, names)]
    assert not found, found


def test_the_name_check_sees_an_attribute_and_a_dict_lookup() -> None:
    compared = [node for source in ('config.sandbox.kind == "docker"', 'model.get("provider") != "vllm"',
                                    'mode == "none"', 'config.agent.kind != other', 'unit.kind == "pair"')
                for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Compare)]
    assert [_compares_a_kind_name(node, _kind_names()) for node in compared] == [True, True, False, False, False]


# -- what suite packages declare: string maps in their `__init__.py`, members of the one registry


def test_every_suite_package_is_found_and_its_entries_load() -> None:
    from runner.judges.rubrics import RUBRICS, rubric_class
    from runner.suites.base import SuiteSettings
    from runner.suites.registry import SUITES
    from runner.turns.generation import STRATEGIES, build_strategy

    assert {"smoke", "macro", "micro", "evogenui"} <= set(SUITES)
    for name, (settings_model, constructor) in SUITES.items():
        assert issubclass(settings_model, SuiteSettings), name
        assert callable(constructor), name
    assert rubric_class("evogenui").__name__ == "EvoGenUIRubric"
    assert "evogenui" in RUBRICS
    assert build_strategy("single_pass").name == "single_pass"
    assert list(STRATEGIES) == ["single_pass", *KINDS.declared("generation")]


def test_suite_package_inits_import_nothing() -> None:
    # Finding the maps must not import suite code: that is what keeps the registry free of cycles.
    for init in sorted((REPO_ROOT / "runner" / "suites").glob("*/__init__.py")):
        tree = ast.parse(init.read_text())
        imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert not imports, f"{init.relative_to(REPO_ROOT)} imports {ast.unparse(imports[0])}"


@pytest.fixture()
def extra_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A suite package of a test's own on the suites path (a plug-in as a user would add one)."""
    import runner.suites

    folder = tmp_path / "suites_extra"
    folder.mkdir()
    monkeypatch.setattr(runner.suites, "__path__", [*runner.suites.__path__, str(folder)])
    KINDS.forget_declarations()
    yield folder
    for name in [name for name in sys.modules if name.startswith("runner.suites.zz_")]:
        del sys.modules[name]
    KINDS.forget_declarations()


def _package(folder: Path, name: str, body: str) -> None:
    (folder / name).mkdir()
    (folder / name / "__init__.py").write_text(body)


def test_a_new_package_contributes_without_touching_a_registry(extra_package: Path) -> None:
    _package(extra_package, "zz_extra", 'GENERATION_STRATEGIES = {"twice": "runner.turns.generation:SinglePass"}\n')
    assert KINDS.declared("generation")["twice"] == "runner.turns.generation:SinglePass"
    assert KINDS.member("generation", "twice")().name == "single_pass"
    assert "twice" in KINDS.members("generation")


def test_a_name_declared_twice_names_both_packages(extra_package: Path) -> None:
    _package(extra_package, "zz_clash", 'SUITES = {"smoke": "runner.suites.smoke.suite:SUITE_ENTRY"}\n')
    with pytest.raises(ConfigError, match=r"'smoke' is declared by both runner\.suites\.smoke and runner\.suites\.zz_clash"):
        KINDS.declared("suite")


def test_a_declared_name_a_module_registers_is_refused(extra_package: Path) -> None:
    _package(extra_package, "zz_default", 'WEB_TEMPLATES = {"default": "runner.sandbox.web_template:DEFAULT"}\n')
    with pytest.raises(ConfigError, match=r"WEB_TEMPLATES\['default'\] of a suite package names a web_template "
                                          r"runner\.sandbox\.web_template:WebTemplate registers"):
        KINDS.member_names("web_template")


def test_a_malformed_reference_names_its_file(extra_package: Path) -> None:
    _package(extra_package, "zz_bad", 'RUBRICS = {"broken": "no_colon_here"}\n')
    with pytest.raises(ConfigError, match=r"zz_bad/__init__.py: RUBRICS\['broken'\]: 'no_colon_here'"):
        KINDS.declared("rubric")


def test_a_map_that_is_not_a_dict_is_refused(extra_package: Path) -> None:
    _package(extra_package, "zz_list", 'SUITES = ["x"]\n')
    with pytest.raises(ConfigError, match="zz_list/__init__.py: SUITES must be a dict"):
        KINDS.declared("suite")


def test_an_unknown_member_names_the_family_and_the_known_names() -> None:
    with pytest.raises(ConfigError, match=r"unknown rubric 'nope'; choose one of \['evogenui', 'iwebgen'\]"):
        KINDS.member("rubric", "nope")
    with pytest.raises(ConfigError, match="'nope' is not a member family"):
        KINDS.member("nope", "x")
