"""Sandbox images: content-hash tags (SWE-bench style), builds of missing images, digests for tracking.

An image's tag is a hash of everything that goes into it: its Dockerfile, the base image reference, and
every file COPY'd from the build context (for node_modules: the lockfile it was installed from). So a
changed lockfile or Dockerfile gives a new tag, and an existing tag never needs rebuilding. The image Id
(`docker image inspect`), a digest of the image's config and layers, is what runs record as tags.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner import progress
from runner.sandbox.web_template import TEMPLATE_DIR, ensure_template_modules

log = logging.getLogger(__name__)

IMAGES_DIR = Path(__file__).resolve().parents[2] / "images"
OFFLINE_BASE = "genui-base:bookworm"  # made by images/bootstrap.sh
IMAGE_LABEL = "org.genui.image"
TAG_LENGTH = 16
_BUILD_STEP = re.compile(r"Step (\d+)/(\d+) : (.{0,60})")


@dataclass(frozen=True)
class ImageSpec:
    """One sandbox image: its Dockerfile folder and the files its build context holds."""

    name: str  # "build" | "browser"
    repository: str  # genui-build, genui-browser
    dockerfile: Path
    # context path -> (host source, hash source): the hash source stands for the content (a lockfile for
    # node_modules), so a 45 MB tree is not hashed file by file.
    context: dict[str, tuple[Path, Path]]


@dataclass(frozen=True)
class ImageInfo:
    name: str
    tag: str  # repository:contenthash
    image_id: str  # sha256:... (docker image inspect .Id)
    built: bool  # built in this call (False: it already existed)
    build_s: float = 0.0


def _node_binary() -> Path:
    found = shutil.which("node")
    if found is None:
        raise FileNotFoundError("node is not installed; the build image copies the host's node 20 binary")
    return Path(found).resolve()


def playwright_driver_dir() -> Path:
    import playwright

    return Path(playwright.__file__).resolve().parent / "driver"


def image_specs(cache_root: Path | None = None) -> dict[str, ImageSpec]:
    """The two sandbox images. Installs the template's node_modules on the host if needed (npm ci, once)."""
    modules = ensure_template_modules(cache_root)
    lockfile = TEMPLATE_DIR / "package-lock.json"
    driver = playwright_driver_dir()
    return {
        "build": ImageSpec(
            name="build",
            repository="genui-build",
            dockerfile=IMAGES_DIR / "build" / "Dockerfile",
            context={
                "node": (_node_binary(), _node_binary()),
                "template/package.json": (TEMPLATE_DIR / "package.json", TEMPLATE_DIR / "package.json"),
                "template/package-lock.json": (lockfile, lockfile),
                "template/node_modules": (modules, lockfile),
            },
        ),
        "browser": ImageSpec(
            name="browser",
            repository="genui-browser",
            dockerfile=IMAGES_DIR / "browser" / "Dockerfile",
            # The driver's package.json carries the exact Playwright version; its node binary is hashed too.
            context={"playwright-driver": (driver, driver / "package" / "package.json")},
        ),
    }


def _hash_path(digest: "hashlib._Hash", path: Path) -> None:
    if path.is_dir():
        for child in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(str(child.relative_to(path)).encode())
            digest.update(child.read_bytes())
    else:
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)


def content_tag(spec: ImageSpec, base_image: str) -> str:
    """repository:<hash of Dockerfile + base reference + context contents>."""
    digest = hashlib.sha256()
    digest.update(spec.dockerfile.read_bytes())
    digest.update(f"\0BASE_IMAGE={base_image}\0".encode())
    for dest in sorted(spec.context):
        digest.update(dest.encode() + b"\0")
        _hash_path(digest, spec.context[dest][1])
    return f"{spec.repository}:{digest.hexdigest()[:TAG_LENGTH]}"


def _copy_into(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(".genui-complete"))
    else:
        shutil.copy2(source, target)


def build_image(client: Any, spec: ImageSpec, tag: str, base_image: str, *, timeout_s: float = 1800,
                echo: Callable[[str], None] | None = None) -> str:
    """docker build of one spec into `tag`; returns the image Id. Raises RuntimeError with the log tail."""
    from docker.errors import APIError, BuildError

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
                path=str(context), tag=tag, buildargs={"BASE_IMAGE": base_image}, rm=True, forcerm=True,
                decode=True, labels={IMAGE_LABEL: spec.name}, timeout=int(timeout_s),
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


def base_image_available(client: Any, base_image: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        client.images.get(base_image)
        return True
    except ImageNotFound:
        return False


def ensure_images(client: Any, *, base_image: str = OFFLINE_BASE, names: Iterable[str] = ("build", "browser"),
                  overrides: dict[str, str] | None = None, cache_root: Path | None = None, build_missing: bool = True,
                  echo: Callable[[str], None] | None = None) -> dict[str, ImageInfo]:
    """Each named image by content tag: inspected if present, else built (when allowed).

    `overrides` maps a name to an explicit tag (e.g. a registry image); those are used as they are.
    """
    from docker.errors import ImageNotFound

    overrides = overrides or {}
    wanted = list(names)
    specs = image_specs(cache_root) if any(n not in overrides for n in wanted) else {}
    infos: dict[str, ImageInfo] = {}
    for name in wanted:
        tag = overrides.get(name) or content_tag(specs[name], base_image)
        try:
            infos[name] = ImageInfo(name, tag, client.images.get(tag).id, built=False)
            continue
        except ImageNotFound:
            if name in overrides or not build_missing:
                raise RuntimeError(f"sandbox image {tag} is missing; run scripts/build-images.sh") from None
        if not base_image_available(client, base_image) and base_image == OFFLINE_BASE:
            raise RuntimeError(f"base image {base_image} is missing; run images/bootstrap.sh (or scripts/build-images.sh)")
        started = time.monotonic()
        log.info("building sandbox image %s (base %s)", tag, base_image)
        image_id = build_image(client, specs[name], tag, base_image, echo=echo)
        infos[name] = ImageInfo(name, tag, image_id, built=True, build_s=time.monotonic() - started)
        log.info("built %s in %.0fs", tag, infos[name].build_s)
    return infos


def tracking_tags(infos: dict[str, ImageInfo]) -> dict[str, str]:
    """MLflow tags for a run: each image's content tag and its digest."""
    tags: dict[str, str] = {}
    for name, info in sorted(infos.items()):
        tags[f"sandbox.image.{name}"] = info.tag
        tags[f"sandbox.image.{name}.digest"] = info.image_id
    return tags


def main(argv: list[str] | None = None) -> int:
    """python -m runner.sandbox.images [--base IMAGE] [build|browser ...]: build missing images, print tags."""
    import argparse

    import docker

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--base", default=OFFLINE_BASE, help="BASE_IMAGE build argument (default: %(default)s)")
    parser.add_argument("names", nargs="*", default=["build", "browser"])
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    client = docker.from_env(timeout=1800)
    try:
        infos = ensure_images(client, base_image=args.base, names=args.names)
    finally:
        client.close()
    for info in infos.values():
        state = f"built in {info.build_s:.0f}s" if info.built else "present"
        print(f"{info.name}: {info.tag} {info.image_id} ({state})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
