"""Expected failures end with a short message naming the key or file and exit code 2, never a traceback."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, cli_env, runner_command


def _run(*overrides: str, full_error: bool = False, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = cli_env()
    env.pop("HYDRA_FULL_ERROR", None)
    if full_error:
        env["HYDRA_FULL_ERROR"] = "1"
    return subprocess.run(runner_command(*overrides), cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _user_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr[-3000:]
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    return result.stderr


def test_unknown_config_option(tmp_path: Path) -> None:
    stderr = _user_error(_run("judge=nope", f"hydra.run.dir={tmp_path / 'run'}"))
    assert "judge/nope" in stderr and "kimi" in stderr  # Hydra names the option and lists the choices


def test_mistyped_key_and_bad_value(tmp_path: Path) -> None:
    stderr = _user_error(_run("+judge.rulez.x=1", "tracking=off", f"hydra.run.dir={tmp_path / 'a'}"))
    assert "judge.rulez" in stderr and "unknown key" in stderr
    stderr = _user_error(_run("turn_timeout_s=-1", "tracking=off", f"hydra.run.dir={tmp_path / 'b'}"))
    assert "turn_timeout_s = -1" in stderr


def test_bad_task_file_names_file_and_path(tmp_path: Path) -> None:
    bad = tmp_path / "tasks.yaml"
    bad.write_text("id: t\ntitle: x\nturns:\n  - index: one\n    prompt: hi\n")
    stderr = _user_error(_run(f"suite.tasks_path={bad}", "tracking=off", f"hydra.run.dir={tmp_path / 'run'}"))
    assert str(bad) in stderr and "turns[0].index" in stderr
    log = tmp_path / "run" / "__main__.log"
    assert f"the traceback is in {log}" in stderr
    assert "Traceback (most recent call last)" in log.read_text()  # kept for whoever debugs it


def test_missing_tool_backend_names_task_and_fixture(tmp_path: Path) -> None:
    empty = tmp_path / "backends"
    empty.mkdir()
    stderr = _user_error(_run("suite=evogenui", f"suite.tool_backends_path={empty}", "tracking=off",
                              f"hydra.run.dir={tmp_path / 'run'}"))
    assert "tg_" in stderr and "fixture id" in stderr and str(empty) in stderr


def test_server_that_does_not_start(tmp_path: Path) -> None:
    weights = tmp_path / "weights"
    weights.mkdir()
    (weights / "config.json").write_text("{}")
    stderr = _user_error(_run(
        "model=qwen3-coder", f"+model.server.model_path={weights}",
        f'+model.server.command=[{sys.executable},-c,"import sys; print(\'out of memory\'); sys.exit(4)"]',
        "+model.server.poll_interval_s=0.1", "tracking=off", f"hydra.run.dir={tmp_path / 'run'}",
    ))
    assert "vLLM server 'qwen3-coder' exited (exit code 4)" in stderr
    assert "out of memory" in stderr and str(tmp_path / "run" / "servers") in stderr


def test_full_error_prints_the_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "tasks.yaml"
    bad.write_text("id: t\nturns: 3\n")
    result = _run(f"suite.tasks_path={bad}", "tracking=off", f"hydra.run.dir={tmp_path / 'run'}", full_error=True)
    assert result.returncode != 0 and "Traceback" in result.stderr and str(bad) in result.stderr


@pytest.mark.parametrize("argument", ["model=qwen3-coder,oracle"])
def test_composition_errors_outside_multirun_are_user_errors(argument: str, tmp_path: Path) -> None:
    stderr = _user_error(_run(argument, f"hydra.run.dir={tmp_path / 'run'}"))
    assert "multirun" in stderr.lower() or "sweep" in stderr.lower()


# The modules that decide what an expected error is and print it; none may reach into a suite for its error types.
_CATCHERS = [REPO_ROOT / "runner" / "errors.py", REPO_ROOT / "runner" / "run" / "user_errors.py"]


@pytest.mark.parametrize("path", _CATCHERS, ids=lambda path: path.name)
def test_the_error_catchers_import_no_suite_module(path: Path) -> None:
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):  # top level, inside functions and under TYPE_CHECKING
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert not {name for name in imported if name == "runner.suites" or name.startswith("runner.suites.")}


def test_importing_the_error_catchers_loads_no_suite_module() -> None:
    probe = ("import sys, runner.errors, runner.run.user_errors; "
             "print(sorted(name for name in sys.modules if name.startswith('runner.suites')))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO_ROOT, env=cli_env(), capture_output=True,
                            text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
