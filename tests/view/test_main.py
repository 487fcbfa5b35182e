"""`python -m runner.view` as a user types it: it serves the runs on the port it prints and stops on Ctrl-C; a
path that holds no run is refused naming it."""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, cli_env

pytestmark = [pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox, pytest.mark.slow]


def test_the_command_serves_the_runs_and_stops_on_ctrl_c(view_runs: dict[str, Path]) -> None:
    process = subprocess.Popen([sys.executable, "-m", "runner.view", str(view_runs["oracle"]), "--port", "0"],
                               cwd=REPO_ROOT, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("viewer: http://127.0.0.1:") and "(1 runs;" in line, line + process.stderr.read()
        url = line.split()[1]
        page = urllib.request.urlopen(url, timeout=30).read().decode()
        assert "oracle" in page and "Runs" in page
        rows = urllib.request.urlopen(url + "data/rows.js", timeout=30).read().decode()
        assert rows.startswith("window.GENUI_ROWS = ") and rows.count('"task":"smoke-counter"') == 3  # its 3 turns
    finally:
        process.send_signal(signal.SIGINT)
        # About a second on an idle machine; under the suite's own load (a load average of 9 on two cores) it
        # once took over 30 s.
        assert process.wait(timeout=90) == 0


def test_a_path_without_runs_is_refused_naming_it(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "runner.view", str(tmp_path)], cwd=REPO_ROOT, env=cli_env(),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert str(tmp_path) in done.stderr and "not a run dir" in done.stderr
