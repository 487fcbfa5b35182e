"""Lineage: recorded per run, and `resume` refuses to mix results when any item changed, naming it."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import runner.suites.payload as payload
from runner.browser.launch import BrowserSettings
from runner.sandbox.images import IMAGE_CHROMIUM_PACKAGE
from runner.run import lineage as lineage_mod
from runner.errors import ConfigError
from runner.run.validation import compose_config as validated
from runner.config import RunnerConfig
from runner.run.experiment import prepare_run_dir
from runner.turns.records import RunDirectory
from runner.suites.registry import build_suite
from runner.suites.smoke.suite import SmokeSuite
from tests.conftest import REPO_ROOT, cli_env, runner_command


def compose_config(*overrides: str) -> RunnerConfig:
    return validated(overrides, project_root=REPO_ROOT)


def _lineage(config: RunnerConfig) -> dict:
    suite = build_suite(config.suite, project_root=REPO_ROOT)
    return lineage_mod.compute_lineage(config, asyncio.run(suite.load_tasks()), suite=suite)


def _started_run(tmp_path: Path, config: RunnerConfig, lineage: dict) -> RunDirectory:
    run_dir = RunDirectory(tmp_path / "run")
    prepare_run_dir(config, run_dir, lineage)
    run_dir.records_path.write_text('{"partial": true}\n')  # any bytes: "holds results"
    return run_dir


def test_lineage_records_every_item() -> None:
    lineage = _lineage(compose_config())
    assert set(lineage_mod.COMPARED) <= set(lineage)
    assert lineage["prompt_versions"] == {"suite:smoke": payload.PROMPT_VERSION}
    assert lineage["model_revisions"]["model"] == {"name": "oracle", "provider": "oracle"}
    assert sorted(lineage["task_digests"]) == ["smoke-converter", "smoke-counter", "smoke-todo"]
    assert len(lineage["git_commit"]) == 40 or lineage["git_commit"] == "unknown"
    tags = lineage_mod.lineage_tags(lineage)
    assert tags["genui.lineage.task_set_hash"] == lineage["task_set_hash"]
    # Neutral keys and the shard do not move the config hash; a result-relevant key does.
    assert _lineage(compose_config("concurrency.episodes=1", "suite.shard=0/2"))["config_hash"] == lineage["config_hash"]
    assert _lineage(compose_config("seed=1"))["config_hash"] != lineage["config_hash"]


def test_resume_refuses_a_changed_prompt_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = compose_config()
    run_dir = _started_run(tmp_path, config, _lineage(config))
    monkeypatch.setattr(SmokeSuite, "prompt_version", "webapp-v999")
    with pytest.raises(ConfigError, match=r"lineage changed \(prompt versions \(suite:smoke\)\)"):
        prepare_run_dir(config, run_dir, _lineage(config))


def test_every_suites_prompt_and_every_rubrics_version_is_recorded() -> None:
    from runner.suites.evogenui.rubric import EvoGenUIRubric
    from runner.suites.evogenui.payload import PROMPT_VERSION as EVOGENUI_PROMPT
    from runner.suites.web2code.observation import PROMPT_VERSION as WEB2CODE_PROMPT
    from runner.suites.web2code.rubric import RegionRubric

    config = compose_config("suite=evogenui", "judge=gpt-4o")
    suite = build_suite(config.suite, project_root=REPO_ROOT)
    assert lineage_mod.prompt_versions(suite, config) == {
        "suite:evogenui": EVOGENUI_PROMPT, "rubric:evogenui": EvoGenUIRubric.version}
    macro = compose_config("suite=macro")
    versions = lineage_mod.prompt_versions(build_suite(macro.suite, project_root=REPO_ROOT), macro)
    assert versions["suite:macro"] == WEB2CODE_PROMPT and versions["rubric:web2code-region"] == RegionRubric.version
    micro = compose_config("suite=micro")
    assert lineage_mod.prompt_versions(build_suite(micro.suite, project_root=REPO_ROOT), micro) == {
        "suite:micro": WEB2CODE_PROMPT}


def test_a_missing_prompt_or_rubric_version_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.suites.evogenui.rubric import EvoGenUIRubric

    config = compose_config()
    suite = build_suite(config.suite, project_root=REPO_ROOT)
    monkeypatch.setattr(SmokeSuite, "prompt_version", None)
    with pytest.raises(lineage_mod.LineageError, match="suite 'smoke' declares no prompt_version"):
        lineage_mod.compute_lineage(config, [], suite=suite)
    monkeypatch.undo()
    judged = compose_config("judge=gpt-4o")
    monkeypatch.delattr(EvoGenUIRubric, "version")
    with pytest.raises(lineage_mod.LineageError, match="rubric 'evogenui' declares no version"):
        lineage_mod.prompt_versions(suite, judged)
    monkeypatch.setattr(lineage_mod, "PROMPT_VERSION_MODULES", ["runner.turns.records"])
    with pytest.raises(lineage_mod.LineageError, match="module runner.turns.records declares no PROMPT_VERSION"):
        lineage_mod.prompt_versions(suite)


def test_resume_refuses_a_changed_commit_and_image(tmp_path: Path) -> None:
    config = compose_config()
    before = _lineage(config)
    run_dir = _started_run(tmp_path, config, before)
    after = {**before, "git_commit": "f" * 40, "image_digests": {"genui-sandbox": "sha256:new"}}
    with pytest.raises(ConfigError) as error:
        prepare_run_dir(config, run_dir, after)
    message = str(error.value)
    assert f"git commit ({before['git_commit'][:12]} -> ffffffffffff)" in message
    assert "image digests (genui-sandbox)" in message


def test_resume_with_the_same_lineage_is_accepted(tmp_path: Path) -> None:
    config = compose_config()
    run_dir = _started_run(tmp_path, config, _lineage(config))
    assert prepare_run_dir(config, run_dir, _lineage(config)) is True
    assert json.loads((run_dir.path / "lineage.json").read_text())["config_hash"] == _lineage(config)["config_hash"]


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.sandbox
def test_cli_resume_refuses_an_edited_task_naming_it(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(REPO_ROOT / "tasks" / "smoke", tasks)
    run_dir = tmp_path / "run"
    common = ["model=null", f"suite.tasks_path={tasks}", "suite.turns=1", "tracking=off", "concurrency.browsers=1",
              f"hydra.run.dir={run_dir}"]
    first = subprocess.run(runner_command(*common), cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True,
                           timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    assert json.loads((run_dir / "lineage.json").read_text())["shard"] is None
    counter = tasks / "counter.yaml"
    counter.write_text(counter.read_text().replace("Build a counter.", "Build a tally counter.", 1))
    second = subprocess.run(runner_command(*common, "resume=true"), cwd=REPO_ROOT, env=cli_env(),
                            capture_output=True, text=True, timeout=300)
    assert second.returncode == 2
    assert "lineage changed (task set (edited: smoke-counter))" in second.stderr, second.stderr[-2000:]


def test_lineage_records_the_host_browser_and_an_image_browser_beside_it() -> None:
    from runner.browser.version import executable_version

    lineage = _lineage(compose_config())
    host = executable_version(BrowserSettings().executable_path)
    assert lineage["browser_versions"] == {"host": host or "unknown", "used": "host"}
    assert lineage["browser"] == f"host {host or 'unknown'}", "the browser that renders is compared on resume"
    assert json.loads(lineage_mod.lineage_tags(lineage)["genui.lineage.browser_versions"]) == lineage["browser_versions"]
    assert lineage["image_digests"] == {} and lineage["image_versions"] == {}
    images = {"browser": {"tag": "genui-browser:0123456789abcdef", "digest": "sha256:b",
                          "versions": {IMAGE_CHROMIUM_PACKAGE: "157.0.1.2-1~deb12u1"}}}
    recorded = lineage_mod.browser_versions(compose_config(), images)
    assert recorded == {"host": host or "unknown", "image": "157.0.1.2", "used": "image"}
    assert lineage_mod.image_digests(images) == {"genui-browser:0123456789abcdef": "sha256:b"}


def test_an_agent_is_in_the_lineage_and_none_leaves_it_as_before() -> None:
    from runner.agents.prompt import AGENT_PROMPT_VERSION

    plain = _lineage(compose_config())
    agent = _lineage(compose_config("agent=builtin", "model=local-openai"))
    assert agent["prompt_versions"] == {"suite:smoke": payload.PROMPT_VERSION, "agent:builtin": AGENT_PROMPT_VERSION}
    assert "agent_deviation" not in plain and "agent_deviation" not in agent
    assert _lineage(compose_config("agent=none"))["config_hash"] == plain["config_hash"]  # none: as before agents
    # An agent kind's images (an official CLI's) are recorded and compared like the sandbox's.
    from runner.kinds import register_kind

    register_kind("agent", "imaged-test", settings="runner.agents.builtin:BuiltinAgentSettings",
                  images=lambda config: {"agent-cli": {"tag": "genui-agent:abc", "digest": "sha256:1",
                                                       "versions": {"cli": "1.0"}}})(lambda settings, *, config: None)
    imaged = _lineage(compose_config("agent=builtin", "agent.kind=imaged-test", "model=local-openai"))
    assert imaged["image_digests"]["genui-agent:abc"] == "sha256:1"
    assert imaged["image_versions"]["agent-cli"] == {"cli": "1.0"}


def test_a_preset_models_run_without_the_papers_agent_records_the_deviation() -> None:
    lineage = _lineage(compose_config("+experiment=floweval-table1", "model=qwen3-coder"))
    assert "agent qwen-code; this run used agent=none" in lineage["agent_deviation"]
    assert "qwen-code" in lineage_mod.lineage_tags(lineage)["genui.lineage.agent_deviation"]
