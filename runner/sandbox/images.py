"""Sandbox images: content-hash tags (SWE-bench style), builds of missing images, digests for tracking.

An image is made from a recipe (its Dockerfile, the base image's Id, every file COPY'd from the build context;
for node_modules: the lockfile it was installed from) and from the distribution packages the machine's package
sources serve on the day it is built. Distribution packages carry no pinned versions in the project, because
Debian's security archive withdraws superseded builds within days. Instead each build goes:

1. resolve: a throw-away container of the base image runs `apt-get update` and `apt-get install --simulate` of
   the Dockerfile's `APT_PACKAGES`; the simulation names every package (dependencies included) with the exact
   version that would be installed today;
2. tag: repository:sha256(recipe, resolved set)[:16], so a different Chromium (or font, or library) gives a
   different tag, and an existing tag always holds what it was built from;
3. build: when that tag is missing, `docker build` with `APT_PACKAGES` pinned to exactly the resolved set
   (apt then installs those versions or fails: never something else under this tag), and labels recording
   the recipe, the resolved set's hash and the versions a result can depend on (Chromium, fonts, Node, Python).

At run time an image is found by its recipe label, newest first, without asking the package sources; the
run records the image's tag, Id (`docker image inspect`) and version labels.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner import progress
from runner.browser.launcher import HEADLESS_SHELL, HEADLESS_SHELL_PACKAGE, launcher_script
from runner.sandbox.agent_clis import CLI_PACKAGES_DIR, cli_versions, ensure_cli_modules
from runner.sandbox.build_node import ensure_build_node
from runner.sandbox.web_template import DEFAULT_CACHE_ROOT, TEMPLATE_DIR, ensure_template_modules

log = logging.getLogger(__name__)

IMAGES_DIR = Path(__file__).resolve().parents[2] / "images"
OFFLINE_BASE = "genui-base:bookworm"  # made by images/bootstrap.sh
IMAGE_LABEL = "org.genui.image"  # build | browser | agent
RECIPE_LABEL = "org.genui.recipe"  # hash of everything but the resolved packages
APT_SET_LABEL = "org.genui.apt-set"  # hash of the resolved package set
VERSION_LABEL_PREFIX = "org.genui.version."  # org.genui.version.chromium-headless-shell = 156.0.8078.114-1~deb12u1
TAG_LENGTH = 16
_BUILD_STEP = re.compile(r"Step (\d+)/(\d+) : (.{0,60})")
# Proxy variables are Docker's predefined build arguments: passed through, never part of the image history.
PROXY_ARGS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
_APT_PACKAGES_ARG = re.compile(r'^ARG\s+APT_PACKAGES="([^"]*)"', re.MULTILINE)
_SIMULATED_INSTALL = re.compile(r"^Inst (\S+) (?:\[\S+\] )?\((\S+) ", re.MULTILINE)
# Debian's Chromium headless shell in the browser image: the build a local run renders with (BrowserSettings), its
# package's version recorded as the image's chromium version.
IMAGE_CHROMIUM = HEADLESS_SHELL
IMAGE_CHROMIUM_PACKAGE = HEADLESS_SHELL_PACKAGE
# The browser image's launcher (runner/browser/launcher.py): the executablePath the runner sends, so the
# container's Chromium gets one merged --disable-features= (Playwright's list and the runner's), as a local one.
IMAGE_LAUNCHER = "/opt/genui/chromium"


@dataclass(frozen=True)
class ImageSpec:
    """One sandbox image: its Dockerfile folder and the files its build context holds."""

    name: str  # "build" | "browser"
    repository: str  # genui-build, genui-browser
    dockerfile: Path
    # context path -> (host source, hash source): the hash source stands for the content (a lockfile for
    # node_modules), so a 45 MB tree is not hashed file by file.
    context: dict[str, tuple[Path, Path]]
    # Versions known before the build (the copied node binary, the Playwright driver): labels and recipe.
    fixed_versions: dict[str, str] = field(default_factory=dict)
    # Distribution packages whose resolved versions become labels (the rest are hashed only).
    recorded_packages: tuple[str, ...] = ()
    # Another image of this project to build FROM (its tag is the BASE_IMAGE, its Id part of the recipe), instead
    # of the base image every other image starts from.
    base: str | None = None

    @property
    def apt_packages(self) -> list[str]:
        """Package names from the Dockerfile's `ARG APT_PACKAGES="..."` (its single source)."""
        found = _APT_PACKAGES_ARG.search(self.dockerfile.read_text())
        return found.group(1).split() if found else []


@dataclass(frozen=True)
class ImageInfo:
    name: str
    tag: str  # repository:contenthash
    image_id: str  # sha256:... (docker image inspect .Id)
    built: bool  # built in this call (False: it already existed)
    build_s: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)  # from the image's org.genui.version.* labels


def _node_version(node: Path) -> str:
    return subprocess.run([str(node), "--version"], capture_output=True, text=True, check=True,
                          timeout=30).stdout.strip().lstrip("v")


def playwright_driver_dir() -> Path:
    import playwright

    return Path(playwright.__file__).resolve().parent / "driver"


def _playwright_version(driver: Path) -> str:
    return str(json.loads((driver / "package" / "package.json").read_text())["version"])


def browser_launcher_file(cache_root: Path | None = None) -> Path:
    """The browser image's launcher script, written under the cache root for its build context. Its content
    depends on nothing but the launcher's code, so the image's recipe (and tag) changes exactly when that does."""
    script = launcher_script(IMAGE_CHROMIUM)
    path = Path(cache_root or DEFAULT_CACHE_ROOT).resolve() / "images" / "browser" / "chromium-launcher"
    current = path.read_text() if path.is_file() else None
    if current != script or path.stat().st_mode & 0o777 != 0o755:
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f".{path.name}.{os.getpid()}")  # renamed into place: never seen half-written
        scratch.write_text(script)
        scratch.chmod(0o755)  # the legacy builder keeps the context file's mode: executable for uid 10001
        os.replace(scratch, path)
    return path


def _build_spec(cache_root: Path | None) -> ImageSpec:
    modules = ensure_template_modules(cache_root)
    lockfile = TEMPLATE_DIR / "package-lock.json"
    node = ensure_build_node(cache_root)  # the pinned build Node the local sandbox runs too
    return ImageSpec(
        name="build",
        repository="genui-build",
        dockerfile=IMAGES_DIR / "build" / "Dockerfile",
        context={
            "node": (node, node),
            "template/package.json": (TEMPLATE_DIR / "package.json", TEMPLATE_DIR / "package.json"),
            "template/package-lock.json": (lockfile, lockfile),
            "template/node_modules": (modules, lockfile),
        },
        fixed_versions={"node": _node_version(node)},
        recorded_packages=("python3", "python3-jsonschema", "iptables"),
    )


def _browser_spec(cache_root: Path | None) -> ImageSpec:
    launcher = browser_launcher_file(cache_root)
    driver = playwright_driver_dir()
    return ImageSpec(
        name="browser",
        repository="genui-browser",
        dockerfile=IMAGES_DIR / "browser" / "Dockerfile",
        # The driver's package.json carries the exact Playwright version; its node binary is hashed too.
        context={"playwright-driver": (driver, driver / "package" / "package.json"),
                 "chromium-launcher": (launcher, launcher)},
        fixed_versions={"playwright": _playwright_version(driver)},
        recorded_packages=(IMAGE_CHROMIUM_PACKAGE, "fonts-liberation", "fonts-dejavu-core", "fontconfig"),
    )


def _agent_spec(cache_root: Path | None) -> ImageSpec:
    # The official coding-agent CLIs (runner/sandbox/agent_clis.py): `npm ci` of images/agent's lockfile on the
    # host, so the image build needs no npm registry; built FROM the build image (its Node, the template's
    # node_modules, Python), so an agent can build the app it writes.
    modules = ensure_cli_modules(cache_root)
    lockfile = CLI_PACKAGES_DIR / "package-lock.json"
    return ImageSpec(
        name="agent",
        repository="genui-agent",
        dockerfile=IMAGES_DIR / "agent" / "Dockerfile",
        context={"clis/package.json": (CLI_PACKAGES_DIR / "package.json", CLI_PACKAGES_DIR / "package.json"),
                 "clis/package-lock.json": (lockfile, lockfile),
                 "clis/node_modules": (modules, lockfile)},
        fixed_versions=cli_versions(),
        recorded_packages=("git", "ripgrep"),
        base="build",
    )


_SPECS: dict[str, Callable[[Path | None], ImageSpec]] = {"build": _build_spec, "browser": _browser_spec,
                                                           "agent": _agent_spec}
IMAGE_NAMES = tuple(_SPECS)


def image_specs(cache_root: Path | None = None, names: Iterable[str] = ("build", "browser")) -> dict[str, ImageSpec]:
    """The named sandbox images' specs. Installs what their build contexts hold on the host if needed (npm ci of
    the template's, or the agent CLIs', node_modules, once per lockfile)."""
    unknown = sorted(set(names) - set(_SPECS))
    if unknown:
        raise ValueError(f"no sandbox image named {', '.join(unknown)}; the images are {', '.join(IMAGE_NAMES)}")
    return {name: _SPECS[name](cache_root) for name in names}


def _hash_path(digest: "hashlib._Hash", path: Path) -> None:
    if path.is_dir():
        for child in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(str(child.relative_to(path)).encode())
            digest.update(child.read_bytes())
    else:
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)


def recipe_hash(spec: ImageSpec, base_id: str) -> str:
    """Hash of what the project decides: Dockerfile, base image Id, context contents, fixed versions."""
    digest = hashlib.sha256()
    digest.update(spec.dockerfile.read_bytes())
    digest.update(f"\0BASE_IMAGE={base_id}\0".encode())
    for dest in sorted(spec.context):
        digest.update(dest.encode() + b"\0")
        _hash_path(digest, spec.context[dest][1])
    digest.update(json.dumps(spec.fixed_versions, sort_keys=True).encode())
    return digest.hexdigest()


def apt_set_hash(resolved: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(resolved, sort_keys=True).encode()).hexdigest()


def content_tag(spec: ImageSpec, recipe: str, resolved: dict[str, str]) -> str:
    """repository:<hash of the recipe and the resolved package set>."""
    digest = hashlib.sha256(f"{recipe}\0{apt_set_hash(resolved)}".encode())
    return f"{spec.repository}:{digest.hexdigest()[:TAG_LENGTH]}"


def parse_simulated_install(output: str) -> dict[str, str]:
    """`apt-get install --simulate` output -> {package: version} of every package it would install."""
    return {name.split(":")[0]: version for name, version in _SIMULATED_INSTALL.findall(output)}


def logs_after_exit(container: Any, *, settle_s: float = 5.0) -> bytes:
    """An exited container's log. Right after `wait` returns the engine may not have copied the log yet
    (measured: `dpkg-query` output read back as b'' about one time in three), so read until it holds something."""
    deadline = time.monotonic() + settle_s
    while not (output := container.logs(stdout=True, stderr=True)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return bytes(output)


def resolve_packages(client: Any, base_image: str, packages: list[str], *, timeout_s: float = 600) -> dict[str, str]:
    """The exact versions the machine's package sources serve today for `packages` and their dependencies,
    resolved in a throw-away container of the base image (the sources the build itself will use)."""
    if not packages:
        return {}
    script = ("apt-get update -qq >/dev/null && "
              f"apt-get install --simulate -qq --no-install-recommends {' '.join(packages)}")
    # As root: an image built FROM another of ours (the agent image) starts as that image's user.
    container = client.containers.create(base_image, command=["sh", "-c", script], environment=_proxy_env(),
                                         labels={IMAGE_LABEL: "resolve"}, user="0")
    try:
        container.start()
        status = container.wait(timeout=timeout_s)
        output = logs_after_exit(container).decode(errors="replace")
    finally:
        container.remove(force=True)
    resolved = parse_simulated_install(output)
    missing = [name for name in packages if name not in resolved]
    if status.get("StatusCode") != 0 or missing:
        raise RuntimeError(f"resolving {' '.join(packages)} in {base_image} failed"
                           f"{' (not served: ' + ', '.join(missing) + ')' if missing else ''}:\n{output[-2000:]}")
    return resolved


def _proxy_env() -> dict[str, str]:
    return {name: os.environ[name] for name in PROXY_ARGS if os.environ.get(name)}


def debian_upstream_version(version: str) -> str:
    """1:1.07.4-11 -> 1.07.4; 156.0.8078.114-1~deb12u1 -> 156.0.8078.114 (no epoch, no Debian revision)."""
    upstream = version.split(":", 1)[-1]
    return upstream.rsplit("-", 1)[0] if "-" in upstream else upstream


def image_labels(spec: ImageSpec, recipe: str, resolved: dict[str, str]) -> dict[str, str]:
    labels = {IMAGE_LABEL: spec.name, RECIPE_LABEL: recipe, APT_SET_LABEL: apt_set_hash(resolved)}
    versions = {**spec.fixed_versions, **{name: resolved[name] for name in spec.recorded_packages if name in resolved}}
    labels.update({VERSION_LABEL_PREFIX + name: value for name, value in versions.items()})
    return labels


def image_versions(image: Any) -> dict[str, str]:
    """{name: version} from an image's org.genui.version.* labels."""
    labels = (image.attrs.get("Config") or {}).get("Labels") or {}
    return {key[len(VERSION_LABEL_PREFIX):]: value for key, value in sorted(labels.items())
            if key.startswith(VERSION_LABEL_PREFIX)}


def _copy_into(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(".genui-complete"))
    else:
        shutil.copy2(source, target)


def build_image(client: Any, spec: ImageSpec, tag: str, base_image: str, *, resolved: dict[str, str],
                labels: dict[str, str], timeout_s: float = 1800, echo: Callable[[str], None] | None = None) -> str:
    """docker build of one spec into `tag`, its packages pinned to `resolved`; returns the image Id.
    Raises RuntimeError with the log tail."""
    from docker.errors import APIError, BuildError

    pins = " ".join(f"{name}={version}" for name, version in sorted(resolved.items()))
    with contextlib.ExitStack() as stack:
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"genui-image-{spec.name}-"))
        context = Path(scratch)
        shutil.copy2(spec.dockerfile, context / "Dockerfile")
        for dest, (source, _) in spec.context.items():
            _copy_into(source, context / dest)
        lines: list[str] = []
        shown = stack.enter_context(progress.step(f"building sandbox image {tag}", key=f"image-{spec.name}"))
        try:
            stream = client.api.build(
                path=str(context), tag=tag, buildargs={"BASE_IMAGE": base_image, "APT_PACKAGES": pins, **_proxy_env()},
                rm=True, forcerm=True, decode=True, labels=labels, timeout=int(timeout_s),
            )
            for chunk in stream:
                text = chunk.get("stream") or chunk.get("status") or ""
                if "error" in chunk:
                    raise BuildError(chunk["error"], lines)
                if text.strip():
                    lines.append(text.rstrip())
                    step_of = _BUILD_STEP.match(text.strip())
                    if step_of:  # the classic builder's "Step 3/12 : RUN ..."
                        shown.update(done=int(step_of.group(1)) - 1, total=int(step_of.group(2)), detail=step_of.group(3))
                    if echo is not None:
                        echo(text.rstrip())
        except (BuildError, APIError) as exc:
            tail = "\n".join(lines[-30:])
            raise RuntimeError(f"building {tag} from {spec.dockerfile} failed: {exc}\n{tail}") from exc
    return client.images.get(tag).id


def base_image_id(client: Any, base_image: str) -> str | None:
    from docker.errors import ImageNotFound

    try:
        return str(client.images.get(base_image).id)
    except ImageNotFound:
        return None


def find_built(client: Any, spec: ImageSpec, recipe: str) -> Any | None:
    """The newest image built from this recipe (any resolved package set), or None."""
    found = client.images.list(filters={"label": [f"{RECIPE_LABEL}={recipe}", f"{IMAGE_LABEL}={spec.name}"]})
    tagged = [image for image in found if any(t.startswith(spec.repository + ":") for t in image.tags)]
    return max(tagged, key=lambda image: image.attrs.get("Created", ""), default=None)


def _content_tag_of(image: Any, spec: ImageSpec) -> str:
    return sorted(t for t in image.tags if t.startswith(spec.repository + ":"))[0]


def ensure_images(client: Any, *, base_image: str = OFFLINE_BASE, names: Iterable[str] = ("build", "browser"),
                  overrides: dict[str, str] | None = None, cache_root: Path | None = None, build_missing: bool = True,
                  refresh: bool = False, echo: Callable[[str], None] | None = None) -> dict[str, ImageInfo]:
    """Each named image: the newest one built from its recipe, else (when allowed) resolved and built.

    `refresh` resolves the packages even when an image of the recipe exists and builds a new one when the
    package sources now serve other versions (the old image keeps its tag). `overrides` maps a name to an
    explicit tag (e.g. a registry image); those are used as they are.
    """
    from docker.errors import ImageNotFound

    overrides = overrides or {}
    wanted = list(names)
    infos: dict[str, ImageInfo] = {}
    for name in [n for n in wanted if n in overrides]:
        try:
            image = client.images.get(overrides[name])
        except ImageNotFound:
            raise RuntimeError(f"sandbox image {overrides[name]} is missing; run scripts/build-images.sh") from None
        infos[name] = ImageInfo(name, overrides[name], image.id, built=False, versions=image_versions(image))
    remaining = [n for n in wanted if n not in overrides]
    if not remaining:
        return infos
    base_id = base_image_id(client, base_image)
    if base_id is None:
        hint = "run images/bootstrap.sh (or scripts/build-images.sh)" if base_image == OFFLINE_BASE else "pull it"
        raise RuntimeError(f"base image {base_image} is missing; {hint}")
    specs = image_specs(cache_root, remaining)
    for name in remaining:
        if name in infos:  # built already, as another image's base
            continue
        spec = specs[name]
        if spec.base is not None and spec.base not in infos:  # the image it is built FROM comes first
            infos.update(ensure_images(client, base_image=base_image, names=[spec.base], overrides=overrides,
                                       cache_root=cache_root, build_missing=build_missing, refresh=refresh, echo=echo))
        from_image, from_id = ((infos[spec.base].tag, infos[spec.base].image_id) if spec.base is not None
                               else (base_image, base_id))
        recipe = recipe_hash(spec, from_id)
        present = find_built(client, spec, recipe)
        if present is not None and not refresh:
            infos[name] = ImageInfo(name, _content_tag_of(present, spec), present.id, built=False,
                                    versions=image_versions(present))
            continue
        if present is None and not build_missing:
            raise RuntimeError(f"no {spec.repository} image of this recipe ({recipe[:12]}) is present; "
                               "run scripts/build-images.sh")
        started = time.monotonic()
        resolved = resolve_packages(client, from_image, spec.apt_packages)
        tag = content_tag(spec, recipe, resolved)
        try:
            image = client.images.get(tag)
            infos[name] = ImageInfo(name, tag, image.id, built=False, versions=image_versions(image))
            continue
        except ImageNotFound:
            pass
        log.info("building sandbox image %s (from %s)", tag, from_image)
        image_id = build_image(client, spec, tag, from_image, resolved=resolved,
                               labels=image_labels(spec, recipe, resolved), echo=echo)
        image = client.images.get(image_id)
        infos[name] = ImageInfo(name, tag, image_id, built=True, build_s=time.monotonic() - started,
                                versions=image_versions(image))
        log.info("built %s in %.0fs", tag, infos[name].build_s)
    return {name: infos[name] for name in wanted}


def tracking_tags(infos: dict[str, ImageInfo]) -> dict[str, str]:
    """MLflow tags for a run: each image's content tag, its digest and its recorded versions."""
    tags: dict[str, str] = {}
    for name, info in sorted(infos.items()):
        tags[f"sandbox.image.{name}"] = info.tag
        tags[f"sandbox.image.{name}.digest"] = info.image_id
        for package, version in info.versions.items():
            tags[f"sandbox.image.{name}.{package}"] = version
    return tags


def main(argv: list[str] | None = None) -> int:
    """python -m runner.sandbox.images [--base IMAGE] [--refresh] [--tag] [build|browser|agent ...]:
    build missing images (or, with --refresh, images of newer packages) and print their tags."""
    import argparse

    import docker

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--base", default=OFFLINE_BASE, help="BASE_IMAGE build argument (default: %(default)s)")
    parser.add_argument("--refresh", action="store_true",
                        help="resolve the packages again; build a new image if the sources serve other versions")
    parser.add_argument("--tag", action="store_true", help="print only the tags of the present images (no build)")
    parser.add_argument("names", nargs="*", default=["build", "browser"],
                        help=f"images of {', '.join(IMAGE_NAMES)} (default: build browser)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    client = docker.from_env(timeout=1800)
    try:
        infos = ensure_images(client, base_image=args.base, names=args.names, refresh=args.refresh and not args.tag,
                              build_missing=not args.tag)
    finally:
        client.close()
    for info in infos.values():
        if args.tag:
            print(info.tag)
            continue
        state = f"built in {info.build_s:.0f}s" if info.built else "present"
        versions = " ".join(f"{k}={v}" for k, v in info.versions.items())
        print(f"{info.name}: {info.tag} {info.image_id} ({state}) {versions}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
