"""The base image's mirror and sources come from the machine's apt configuration (one-line and deb822)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from runner.sandbox import apt_sources
from runner.sandbox.apt_sources import image_sources, machine_sources

DEB822 = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://mirror.example.internal/debian/
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://src.example.internal/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://security.example.internal/debian-security
Suites: bookworm-security
Components: main

Enabled: no
Types: deb
URIs: http://disabled.example.internal/debian
Suites: bookworm
Components: main
"""


def _etc(tmp_path: Path, one_line: str = "", deb822: str = "") -> tuple[Path, Path]:
    parts = tmp_path / "sources.list.d"
    parts.mkdir()
    (tmp_path / "sources.list").write_text(one_line)
    if deb822:
        (parts / "debian.sources").write_text(deb822)
    (parts / "vendor.list.disabled").write_text("deb https://vendor.example.internal/apt stable main\n")
    return tmp_path / "sources.list", parts


def test_deb822_sources_give_mirror_updates_and_security(tmp_path: Path) -> None:
    sources = machine_sources(*_etc(tmp_path, deb822=DEB822))
    text, mirror = image_sources("bookworm", sources, env={})
    assert mirror == "http://mirror.example.internal/debian"
    assert text.splitlines() == [
        "deb http://mirror.example.internal/debian bookworm main",
        "deb http://mirror.example.internal/debian bookworm-updates main",
        "deb http://security.example.internal/debian-security bookworm-security main",
    ]


def test_one_line_sources_with_options_and_the_environment_override(tmp_path: Path) -> None:
    one_line = ("# a comment\ndeb-src http://src.example.internal/debian bookworm main\n"
                "deb [arch=amd64 signed-by=/k.gpg] http://one.example.internal/debian bookworm main\n")
    sources = machine_sources(*_etc(tmp_path, one_line=one_line))
    text, mirror = image_sources("bookworm", sources, env={})
    assert mirror == "http://one.example.internal/debian" and text == f"deb {mirror} bookworm main\n"
    text, mirror = image_sources("bookworm", sources, env={"DEBIAN_MIRROR": "http://override.example.internal/d/",
                                                           "DEBIAN_SECURITY_MIRROR": "http://sec.example.internal/s"})
    assert mirror == "http://override.example.internal/d"
    assert "deb http://sec.example.internal/s bookworm-security main" in text


def test_no_source_for_the_suite_names_the_files_and_the_override(tmp_path: Path) -> None:
    sources = machine_sources(*_etc(tmp_path, one_line="deb http://one.example.internal/debian trixie main\n"))
    with pytest.raises(LookupError, match=r"no apt source for 'bookworm main' in .*sources.list; set DEBIAN_MIRROR"):
        image_sources("bookworm", sources, env={})


def test_the_script_runs_with_the_system_python_on_this_machine() -> None:
    # bootstrap.sh runs the file directly, before any venv: it must need nothing beyond the standard library.
    result = subprocess.run([sys.executable, "-I", apt_sources.__file__, "sources"], capture_output=True, text=True,
                            timeout=30)
    expected, _ = image_sources("bookworm", machine_sources(), env={})
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected and "bookworm main" in result.stdout
