"""The official coding-agent CLIs the agent image carries (images/agent/): their exact pins and their install.

images/agent/package.json pins each CLI's npm package exactly and its lockfile pins everything under them (npm
installs this processor's native binaries, checking each one's integrity hash). Like the web template's, the
install is `npm ci` on the host, once per lockfile, into the cache (`<cache>/agent-clis/<hash>/node_modules`), so
the image build itself reaches no npm registry; runner/sandbox/images.py copies it into the image's context.

The install is `npm install` of the lockfile, not `npm ci`: Qwen Code's optional clipboard module names
per-platform packages the registry does not serve, which `npm ci` counts as a lockfile out of sync and refuses
(Qwen Code loads that module only to paste images, and goes without it). What npm installed is then checked
against the lockfile, package by package (version and integrity hash), so the install is the lockfile's all the
same. npm runs no install scripts (`--ignore-scripts`): the image links the native binaries itself.
"""

from __future__ import annotations

import json
from pathlib import Path

from runner.sandbox.web_template import ensure_node_modules, package_set_hash

__all__ = ["CACHE_FOLDER", "CLI_PACKAGES", "CLI_PACKAGES_DIR", "cli_modules_hash", "cli_versions",
           "ensure_cli_modules"]

CLI_PACKAGES_DIR = Path(__file__).resolve().parents[2] / "images" / "agent"
CACHE_FOLDER = "agent-clis"
# The name each CLI's version is recorded under (image labels, lineage) -> its npm package.
CLI_PACKAGES = {
    "claude-code": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini-cli": "@google/gemini-cli",
    "qwen-code": "@qwen-code/qwen-code",
}


def cli_versions() -> dict[str, str]:
    """Each CLI's pinned version, by its recorded name (read from images/agent/package.json)."""
    pins = json.loads((CLI_PACKAGES_DIR / "package.json").read_text())["dependencies"]
    missing = sorted(package for package in CLI_PACKAGES.values() if package not in pins)
    if missing:
        raise RuntimeError(f"{CLI_PACKAGES_DIR / 'package.json'} pins no {', '.join(missing)}")
    return {name: str(pins[package]) for name, package in CLI_PACKAGES.items()}


def cli_modules_hash() -> str:
    """The cache folder's key of the CLIs' install (package.json and its lockfile)."""
    return package_set_hash(CLI_PACKAGES_DIR)


def installed_mismatches(modules: Path, lockfile: Path) -> list[str]:
    """Each package npm installed under `modules` whose version or integrity hash differs from `lockfile`'s, or
    that the lockfile does not hold (npm's own record of the install: node_modules/.package-lock.json)."""
    locked = json.loads(lockfile.read_text())["packages"]
    installed = json.loads((modules / ".package-lock.json").read_text())["packages"]
    problems = []
    for path, entry in sorted(installed.items()):
        pinned = locked.get(path)
        if pinned is None:
            problems.append(f"{path}: not in the lockfile")
        elif (entry.get("version"), entry.get("integrity")) != (pinned.get("version"), pinned.get("integrity")):
            problems.append(f"{path}: {entry.get('version')} installed, {pinned.get('version')} pinned "
                            "(or another integrity hash)")
    return problems


def ensure_cli_modules(cache_root: Path | None = None) -> Path:
    """The CLIs' node_modules, installed into the cache first if needed (about 1 GB: native binaries); raises
    RuntimeError when what is there is not exactly the lockfile's."""
    modules = ensure_node_modules(CLI_PACKAGES_DIR, CACHE_FOLDER, cache_root=cache_root,
                                  what="the coding-agent CLIs (images/agent)",
                                  npm_command=("install", "--ignore-scripts", "--no-save"))
    problems = installed_mismatches(modules, CLI_PACKAGES_DIR / "package-lock.json")
    if problems:
        raise RuntimeError(f"the CLIs installed at {modules} are not {CLI_PACKAGES_DIR / 'package-lock.json'}'s: "
                           + "; ".join(problems[:10]) + f"; remove {modules.parent} and install again")
    return modules
