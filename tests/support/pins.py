"""The exact versions the project names, and whether the package sources still serve them.

Distribution packages: `name=version` arguments of `apt-get install` in the Dockerfiles and shell scripts,
checked with `apt-cache madison` against this machine's apt lists. PyPI: every `name==version` in
pyproject.toml and in the scripts' `pip install`s, checked against the package index's simple API (JSON,
PEP 691; `PIP_INDEX_URL` or pypi.org): the version must have a file that is not yanked.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, canonicalize_name, parse_sdist_filename
from packaging.utils import parse_wheel_filename

_APT_INSTALL = re.compile(r"apt-get\s+install\b([^;&|\n]*)")
_APT_PIN = re.compile(r"^([a-z0-9][a-z0-9+.-]+)=(\d[\w.:~+-]*)$")
_PIP_INSTALL = re.compile(r"pip\"?\s+install\b([^;&|\n]*)")
_PIP_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([\w.!+-]+)$")


@dataclass(frozen=True)
class Pin:
    registry: str  # "apt" | "pypi"
    name: str
    version: str
    where: str  # file that names it

    def __str__(self) -> str:
        return f"{self.registry} {self.name}={self.version} (named in {self.where})"


def project_files(root: Path) -> list[Path]:
    """Files that install packages: Dockerfiles, shell scripts, the CI script and the justfile."""
    found = [p for p in root.rglob("Dockerfile*") if ".venv" not in p.parts and ".cache" not in p.parts]
    found += [p for p in root.glob("scripts/*.sh")] + [p for p in root.glob("images/**/*.sh")]
    found += [p for p in (root / ".ci" / "run", root / "justfile") if p.is_file()]
    return sorted(set(found))


def _joined(text: str) -> str:
    return re.sub(r"\\\n", " ", text)  # shell and Dockerfile line continuations


def apt_pins(path: Path, root: Path) -> list[Pin]:
    pins = []
    for args in _APT_INSTALL.findall(_joined(path.read_text())):
        for word in args.split():
            found = _APT_PIN.match(word)
            if found:
                pins.append(Pin("apt", found.group(1), found.group(2), str(path.relative_to(root))))
    return pins


def pip_pins_in_scripts(path: Path, root: Path) -> list[Pin]:
    pins = []
    for args in _PIP_INSTALL.findall(_joined(path.read_text())):
        for word in args.split():
            found = _PIP_PIN.match(word.strip("'\""))
            if found:
                pins.append(Pin("pypi", found.group(1), found.group(2), str(path.relative_to(root))))
    return pins


def pyproject_pins(pyproject: Path, root: Path) -> list[Pin]:
    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = list(project.get("dependencies", []))
    for group in project.get("optional-dependencies", {}).values():
        requirements += group
    pins = []
    for requirement in requirements:
        found = _PIP_PIN.match(requirement.split(";")[0].strip().replace(" ", ""))
        if found:
            pins.append(Pin("pypi", found.group(1), found.group(2), str(pyproject.relative_to(root))))
    return pins


def all_pins(root: Path) -> list[Pin]:
    pins = pyproject_pins(root / "pyproject.toml", root)
    for path in project_files(root):
        pins += apt_pins(path, root) + pip_pins_in_scripts(path, root)
    return pins


def apt_served(name: str) -> set[str]:
    """Versions this machine's apt sources serve for `name` (as of the last apt-get update)."""
    result = subprocess.run(["apt-cache", "madison", name], capture_output=True, text=True, timeout=60)
    return {line.split("|")[1].strip() for line in result.stdout.splitlines() if line.count("|") >= 2}


def _file_version(filename: str) -> str | None:
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[1])
        return str(parse_sdist_filename(filename)[1])
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None


def pypi_served(name: str) -> set[str]:
    """Versions the package index serves for `name` with at least one file that is not yanked."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    reply = httpx.get(f"{index}/{canonicalize_name(name)}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"},
                      timeout=60, follow_redirects=True)
    if reply.status_code == 404:
        return set()
    reply.raise_for_status()
    files = [f for f in reply.json().get("files", []) if not f.get("yanked")]
    return {v for v in (_file_version(f["filename"]) for f in files) if v is not None}


def unavailable(pins: Iterable[Pin], *, workers: int = 8) -> list[str]:
    """One line per pin that its registry does not serve, naming the package and what is served instead."""
    pins = list(pins)
    lookup = {"apt": apt_served, "pypi": pypi_served}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        served = list(pool.map(lambda pin: lookup[pin.registry](pin.name), pins))
    problems = []
    for pin, versions in zip(pins, served):
        if pin.version not in versions:
            newest = ", ".join(sorted(versions)[-3:]) or "nothing"
            problems.append(f"{pin}: not installable; the sources serve {newest}")
    return problems
