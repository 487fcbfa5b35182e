"""CI's skip policy for real, in a child pytest: every skip is listed with its reason, and a missing set-up
component (tests/support/components.py) fails when CI=true but skips elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

SAMPLE = '''
import pytest
from tests.support.components import missing, skip_missing

@pytest.mark.skipif(True, reason=missing("bubblewrap", "bubblewrap is not installed"))
def test_needs_bwrap():
    pass

def test_needs_docker():
    skip_missing("docker", "no Docker engine reachable")

@pytest.mark.parametrize("n", [1, 2])
def test_optional_samples(n):
    pytest.skip("shared samples are absent")

def test_plain():
    assert True
'''
MODULE_SKIP = '''
from tests.support.components import skip_missing
skip_missing("vllm", "no vLLM venv here", allow_module_level=True)

def test_never_collected():
    pass
'''


def _child_pytest(tmp_path: Path, ci: str | None, *, module_skip: bool = False) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import pytest_make_collect_report, pytest_runtest_makereport, pytest_terminal_summary\n")
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    if module_skip:
        (tmp_path / "test_module_skip.py").write_text(MODULE_SKIP)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(REPO_ROOT)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:randomly",
                           str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_outside_ci_component_skips_are_skips_and_each_is_listed(tmp_path: Path) -> None:
    result = _child_pytest(tmp_path, ci=None, module_skip=True)
    assert result.returncode == 0, result.stdout[-3000:]
    out = result.stdout
    assert "1 passed, 5 skipped" in out
    for node in ("test_sample.py::test_needs_bwrap", "test_sample.py::test_needs_docker",
                 "test_sample.py::test_optional_samples[1]", "test_sample.py::test_optional_samples[2]"):
        assert f"SKIPPED {node}: " in out, out[-3000:]
    assert "test_optional_samples[2]: shared samples are absent" in out
    assert "test_module_skip.py: no vLLM venv here [set-up component: vllm]" in out


@pytest.mark.parametrize("ci", ["true", "1"])
def test_in_ci_a_missing_component_fails_and_names_it(tmp_path: Path, ci: str) -> None:
    result = _child_pytest(tmp_path, ci=ci)
    out = result.stdout
    assert result.returncode == 1, out[-3000:]
    # the skipif mark acts at set-up (an error), the call-time skip in the call (a failure)
    assert "1 failed, 1 passed, 2 skipped, 1 error" in out, "other skips stay skips"
    assert "set-up component 'bubblewrap' is missing" in out
    assert "set-up component 'docker' is missing" in out


def test_in_ci_a_module_skipped_for_a_missing_component_is_a_collection_error(tmp_path: Path) -> None:
    result = _child_pytest(tmp_path, ci="true", module_skip=True)
    assert result.returncode == 2, result.stdout[-3000:]
    assert "ERROR collecting test_module_skip.py" in result.stdout
    assert "set-up component 'vllm' is missing" in result.stdout
