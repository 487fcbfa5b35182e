"""A web template's node_modules as a Docker volume of the engine, filled once per lockfile hash.

Build containers mount it read-only at /node_modules. A volume lives in the engine, so this works wherever
the runner runs: a bind mount of the runner's cache folder would name a path of the runner's own file system,
which the engine resolves on its host (when the runner itself runs in a container, that path is missing there
and the engine would mount an empty folder in its place).
"""

from __future__ import annotations

import contextlib
import io
import tarfile
import tempfile
from pathlib import Path
from typing import Any

COMPLETE_MARKER = ".genui-complete"
FILL_MOUNT = "/modules"


def volume_name(template: str, template_hash: str) -> str:
    return f"genui-modules-{template}-{template_hash}"


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _marker_tar(content: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        data = content.encode()
        info = _root_owned(tarfile.TarInfo(COMPLETE_MARKER))
        info.size, info.mode = len(data), 0o644
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def ensure_module_volume(client: Any, image: str, modules: Path, name: str, labels: dict[str, str]) -> str:
    """The volume `name` holding a copy of `modules` (a complete install); filled now if it is not yet.

    The copy goes in through a helper container that is created, never started (the archive API writes into
    its volume), and the completion marker goes in last, so a half-filled volume is never taken as done.
    """
    from docker.errors import NotFound

    try:
        client.volumes.get(name)
    except NotFound:
        client.volumes.create(name, labels=labels)
    helper = client.containers.create(image, command=["true"], network_mode="none", labels=labels,
                                      volumes={name: {"bind": FILL_MOUNT, "mode": "rw"}})
    try:
        with contextlib.suppress(NotFound):
            helper.get_archive(f"{FILL_MOUNT}/{COMPLETE_MARKER}")
            return name
        with tempfile.TemporaryFile() as stream:
            with tarfile.open(fileobj=stream, mode="w") as archive:
                for child in sorted(modules.iterdir()):
                    if child.name != COMPLETE_MARKER:
                        archive.add(child, arcname=child.name, filter=_root_owned)
            stream.seek(0)
            if not helper.put_archive(FILL_MOUNT, stream):
                raise RuntimeError(f"could not copy {modules} into the volume {name}")
        if not helper.put_archive(FILL_MOUNT, _marker_tar(modules.parent.name)):
            raise RuntimeError(f"could not mark the volume {name} complete")
        return name
    finally:
        helper.remove(force=True)
