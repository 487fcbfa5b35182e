"""BrowserConfinement: a loopback-only network namespace and a memory cgroup, for real (bubblewrap, cgroups)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys

import pytest

from runner.browser.confine import BrowserConfinement, socket_in_namespace

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")]


@pytest.fixture
def confinement():
    confined = BrowserConfinement(memory_mb=256, max_processes=64)
    confined.start()
    yield confined
    confined.close()


def test_a_socket_in_the_namespace_is_not_on_the_hosts_loopback(confinement):
    with socket_in_namespace(confinement.netns) as inside:
        inside.bind(("127.0.0.1", 0))
        inside.listen(1)
        port = inside.getsockname()[1]
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            pass  # the host's 127.0.0.1 has no such listener
        with socket_in_namespace(confinement.netns) as peer:
            peer.settimeout(2)
            peer.connect(("127.0.0.1", port))  # but the namespace's own loopback does


def test_the_wrapper_runs_its_command_inside_the_namespace_and_the_cgroup(confinement, tmp_path):
    script = tmp_path / "probe"
    script.write_text("#!/bin/sh\ncat /proc/self/cgroup; cut -d: -f1 /proc/self/net/dev | tail -n +3; echo ARGS \"$@\"\n")
    script.chmod(0o755)
    out = subprocess.run([confinement.wrapper(str(script)), "a b", "c"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert confinement.cgroups is not None and confinement.cgroups.name in out.stdout
    interfaces = {line.strip() for line in out.stdout.splitlines() if ":" not in line and "ARGS" not in line}
    assert interfaces == {"lo"}, out.stdout  # nothing but its own loopback
    assert "ARGS a b c" in out.stdout


def test_the_wrapped_command_gets_the_browsers_cpu_share(tmp_path):
    confined = BrowserConfinement(memory_mb=256, cpus=0.5)
    confined.start()
    try:
        cpu = confined.cgroups.cpu if confined.cgroups else None
        if cpu is None:
            pytest.skip(f"no cgroup v1 cpu controller here: {confined.cgroups and confined.cgroups.warnings}")
        period = int((cpu / "cpu.cfs_period_us").read_text())
        assert int((cpu / "cpu.cfs_quota_us").read_text()) == period // 2
        script = tmp_path / "probe"
        script.write_text("#!/bin/sh\ncat /proc/self/cgroup\n")
        script.chmod(0o755)
        out = subprocess.run([confined.wrapper(str(script))], capture_output=True, text=True, timeout=30)
        cpu_lines = [line for line in out.stdout.splitlines() if line.split(":")[1] in ("cpu", "cpu,cpuacct")]
        assert out.returncode == 0 and cpu_lines and cpu_lines[0].endswith(confined.cgroups.name), out.stdout
    finally:
        confined.close()
    assert not cpu.exists()


def test_close_removes_the_namespace_holder_and_the_cgroup(tmp_path):
    confined = BrowserConfinement(memory_mb=128)
    confined.start()
    netns, cgroups = confined.netns, confined.cgroups
    confined.close()
    assert confined.netns == "" and confined.cgroups is None
    with pytest.raises(FileNotFoundError):
        open(netns).close()
    assert cgroups is not None and all(not path.exists() for path in (cgroups.memory, cgroups.pids) if path)


def test_it_starts_without_cap_net_admin_as_in_a_container_with_dockers_default_capabilities():
    # Docker drops CAP_NET_ADMIN: bubblewrap then cannot bring up `lo` in a namespace owned by the runner's own
    # user namespace ("loopback: Failed RTM_NEWADDR"); the holder's own user namespace gives it that capability.
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    script = ("from runner.browser.confine import BrowserConfinement, socket_in_namespace\n"
              "c = BrowserConfinement(memory_mb=128)\nc.start()\n"
              "with socket_in_namespace(c.netns) as s:\n    s.bind(('127.0.0.1', 0)); s.listen(1)\n"
              "c.close()\nprint('confined')\n")
    out = subprocess.run(["setpriv", "--bounding-set", "-net_admin", "--", sys.executable, "-c", script],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "confined" in out.stdout, out.stderr[-2000:]
