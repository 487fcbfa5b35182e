"""The version of the real system Chromium (recorded in lineage.json as the host's browser)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from runner.browser.launcher import FULL_CHROMIUM, HEADLESS_SHELL
from runner.browser.version import executable_version
from tests.support.components import skip_missing


@pytest.mark.parametrize(("executable", "package"), [(HEADLESS_SHELL, "chromium-headless-shell"),
                                                     (FULL_CHROMIUM, "chromium")])
def test_system_chromium_version_matches_its_debian_package(tmp_path, executable: str, package: str) -> None:
    if not shutil.which(executable):
        skip_missing("chromium", f"system Chromium not installed at {executable} (scripts/setup.sh installs it)")
    version = executable_version(executable)
    assert version is not None and re.fullmatch(r"\d+\.\d+\.\d+\.\d+", version)
    package = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True)
    if package.returncode == 0:  # Debian's build: the package version starts with the browser's
        assert package.stdout.startswith(version + "-")
    not_a_browser = tmp_path / "fake"
    not_a_browser.write_text("#!/bin/sh\necho no version here\n")
    not_a_browser.chmod(0o755)
    assert executable_version(str(not_a_browser)) is None
    assert executable_version(str(tmp_path / "missing")) is None
    assert executable_version(None) is None
