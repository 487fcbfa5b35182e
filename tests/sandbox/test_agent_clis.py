"""The official CLIs' pins and install (runner/sandbox/agent_clis.py), and the agent image that carries them: each
CLI answers its `--version` with its pinned version inside the image, with no network, as the image's user."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from runner.sandbox.agent_clis import CLI_PACKAGES, CLI_PACKAGES_DIR, cli_versions, installed_mismatches
from tests.support.components import skip_missing

LOCKFILE = CLI_PACKAGES_DIR / "package-lock.json"


def test_every_cli_is_pinned_exactly_and_locked() -> None:
    versions = cli_versions()
    assert set(versions) == set(CLI_PACKAGES)
    locked = json.loads(LOCKFILE.read_text())["packages"]
    for name, package in CLI_PACKAGES.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", versions[name]), f"{package}: {versions[name]} is no exact version"
        assert locked[f"node_modules/{package}"]["version"] == versions[name]
        assert locked[f"node_modules/{package}"]["integrity"].startswith("sha512-")


def _installed(folder: Path, packages: dict) -> Path:
    modules = folder / "node_modules"
    modules.mkdir()
    (modules / ".package-lock.json").write_text(json.dumps({"packages": packages}))
    return modules


def test_an_install_is_checked_package_by_package_against_the_lockfile(tmp_path: Path) -> None:
    locked = json.loads(LOCKFILE.read_text())["packages"]
    codex = "node_modules/@openai/codex"
    good = {codex: {"version": locked[codex]["version"], "integrity": locked[codex]["integrity"]}}
    (tmp_path / "a").mkdir()
    assert installed_mismatches(_installed(tmp_path / "a", good), LOCKFILE) == []
    other = {codex: {"version": "0.0.1", "integrity": locked[codex]["integrity"]},
             "node_modules/left-pad": {"version": "1.3.0", "integrity": "sha512-x"}}
    (tmp_path / "b").mkdir()
    problems = installed_mismatches(_installed(tmp_path / "b", other), LOCKFILE)
    assert problems == [f"{codex}: 0.0.1 installed, {locked[codex]['version']} pinned (or another integrity hash)",
                        "node_modules/left-pad: not in the lockfile"]


@pytest.mark.docker
def test_the_agent_image_carries_each_cli_at_its_pinned_version() -> None:
    import docker

    from runner.sandbox.images import ensure_images

    try:
        client = docker.from_env(timeout=60)
        info = ensure_images(client, names=["agent"], build_missing=False)["agent"]
    except Exception as error:  # no engine, or no image: the set-up step is named
        skip_missing("docker", f"{error}; build it with `bash scripts/build-images.sh agent`")
    try:
        assert {name: info.versions[name] for name in CLI_PACKAGES} == cli_versions()
        assert info.versions["node"].startswith("24.") and "git" in info.versions and "ripgrep" in info.versions
        script = "for cli in qwen codex gemini claude; do echo \"$cli $($cli --version 2>&1 | tail -1)\"; done; id -u"
        output = client.containers.run(info.tag, ["sh", "-c", script], network_mode="none", remove=True,
                                       environment={"HOME": "/tmp"}).decode()
    finally:
        client.close()
    answered = dict(line.split(" ", 1) for line in output.strip().splitlines()[:4])
    versions = cli_versions()
    assert versions["qwen-code"] in answered["qwen"] and versions["codex"] in answered["codex"]
    assert versions["gemini-cli"] in answered["gemini"] and versions["claude-code"] in answered["claude"]
    assert output.strip().splitlines()[-1] == "10001"
