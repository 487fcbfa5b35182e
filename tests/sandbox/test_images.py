"""Image tags and labels from resolved package versions (no engine needed; tests/sandbox/test_docker.py builds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.sandbox import images
from runner.sandbox.images import (
    ImageSpec,
    apt_set_hash,
    content_tag,
    debian_upstream_version,
    image_labels,
    parse_simulated_install,
    recipe_hash,
)

SIMULATED = """\
NOTE: This is only a simulation!
Inst libssl3 [3.0.15-1~deb12u1] (3.0.22-1~deb12u2 Debian-Security:12/oldstable-security [amd64])
Inst fonts-liberation (1:1.07.4-11 Debian:12.15/oldstable [all])
Inst chromium-common (156.0.8078.114-1~deb12u1 Debian-Security:12/oldstable-security [amd64])
Inst chromium (156.0.8078.114-1~deb12u1 Debian-Security:12/oldstable-security [amd64])
Conf chromium (156.0.8078.114-1~deb12u1 Debian-Security:12/oldstable-security [amd64])
"""


def _spec(tmp_path: Path) -> ImageSpec:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text('FROM x\nARG APT_PACKAGES="chromium fonts-liberation"\nRUN apt-get install -y ${APT_PACKAGES}\n')
    (tmp_path / "driver.json").write_text('{"version": "1.65.1"}')
    return ImageSpec(name="browser", repository="genui-browser", dockerfile=dockerfile,
                     context={"driver.json": (tmp_path / "driver.json", tmp_path / "driver.json")},
                     fixed_versions={"playwright": "1.65.1"}, recorded_packages=("chromium", "fonts-liberation"))


def test_simulated_install_gives_every_package_with_its_exact_version() -> None:
    assert parse_simulated_install(SIMULATED) == {
        "libssl3": "3.0.22-1~deb12u2", "fonts-liberation": "1:1.07.4-11",
        "chromium-common": "156.0.8078.114-1~deb12u1", "chromium": "156.0.8078.114-1~deb12u1"}


def test_a_different_chromium_gives_a_different_tag(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    recipe = recipe_hash(spec, "sha256:base")
    today = parse_simulated_install(SIMULATED)
    update = {**today, "chromium": "156.0.8078.120-1~deb12u1"}
    library = {**today, "libssl3": "3.0.23-1~deb12u1"}  # a dependency alone moves the tag too
    tags = {content_tag(spec, recipe, today), content_tag(spec, recipe, update), content_tag(spec, recipe, library)}
    assert len(tags) == 3 and all(t.startswith("genui-browser:") and len(t.split(":")[1]) == 16 for t in tags)
    assert content_tag(spec, recipe, dict(reversed(list(today.items())))) == content_tag(spec, recipe, today)
    assert recipe_hash(spec, "sha256:other-base") != recipe, "a rebuilt base is another recipe"


def test_labels_record_the_resolved_versions(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    resolved = parse_simulated_install(SIMULATED)
    labels = image_labels(spec, "r" * 64, resolved)
    assert labels == {
        "org.genui.image": "browser", "org.genui.recipe": "r" * 64, "org.genui.apt-set": apt_set_hash(resolved),
        "org.genui.version.playwright": "1.65.1", "org.genui.version.chromium": "156.0.8078.114-1~deb12u1",
        "org.genui.version.fonts-liberation": "1:1.07.4-11"}


def test_the_dockerfiles_name_packages_without_versions() -> None:
    for name, expected in (("browser", {"chromium-headless-shell", "fonts-liberation", "fonts-dejavu-core"}),
                           ("build", {"python3", "python3-jsonschema"}), ("agent", {"git", "ripgrep"})):
        spec = ImageSpec(name=name, repository=f"genui-{name}", dockerfile=images.IMAGES_DIR / name / "Dockerfile",
                         context={})
        assert expected <= set(spec.apt_packages)
        assert not [p for p in spec.apt_packages if "=" in p]


@pytest.mark.parametrize(("version", "upstream"), [
    ("156.0.8078.114-1~deb12u1", "156.0.8078.114"), ("1:1.07.4-11", "1.07.4"), ("2.37", "2.37")])
def test_debian_upstream_version(version: str, upstream: str) -> None:
    assert debian_upstream_version(version) == upstream


def test_an_unknown_image_is_named_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="no sandbox image named nope; the images are build, browser, agent"):
        images.image_specs(names=["nope"])
