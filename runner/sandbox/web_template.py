"""The pinned web templates: install their node_modules once, vet model files, lay out a workspace.

A template belongs to a suite (DESIGN.md "Templates"): `default` is the minimal React 19 + Vite 8 one
(smoke and the project's own tasks), here; a suite's own lives in its folder and is declared in its package
(`WEB_TEMPLATES = {"evogenui": "runner.suites.evogenui.web_template:TEMPLATE"}`, runner/kinds.py):
EvoGenUI-Bench's scaffold, FlowEval's harness. Each is content-hashed by its lockfile, so its installs and
their caches follow its pins, wherever its folder is.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from runner import progress
from runner.errors import ConfigError
from runner.kinds import KINDS, register

if TYPE_CHECKING:
    from runner.sandbox.base import BuildResult

log = logging.getLogger(__name__)

TEMPLATE_DIR = Path(__file__).resolve().parent / "web_template"
# The build-time workspace guard (a Vite plugin) every template's vite config loads; copied into each workspace.
WORKSPACE_GUARD = Path(__file__).resolve().parent / "workspace-guard.js"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CACHE_ROOT = REPO_ROOT / ".cache"

RESERVED_FILES: frozenset[str] = frozenset(
    {"index.html", "package.json", "package-lock.json", "vite.config.js", "workspace-guard.js", "src/main.jsx",
     "src/toolClient.js"}
)
# Packages the template's node_modules provides to generated code (subpaths allowed, e.g. react-dom/client).
ALLOWED_PACKAGES: tuple[str, ...] = ("react", "react-dom")
DEFAULT_MAX_FILES = 64
DEFAULT_MAX_FILE_BYTES = 512 * 1024
NPM_CI_TIMEOUT_S = 600


@dataclass(frozen=True)
class WebTemplate:
    """One web template: its folder, the files a model may not write, and the packages it provides."""

    name: str
    directory: Path
    reserved_files: frozenset[str]
    reserved_prefixes: tuple[str, ...] = ()  # whole folders a model may not write into
    allowed_packages: tuple[str, ...] = ALLOWED_PACKAGES

    def is_reserved(self, normal_path: str) -> bool:
        return normal_path in self.reserved_files or normal_path.startswith(self.reserved_prefixes)


DEFAULT_TEMPLATE = "default"
DEFAULT = WebTemplate(DEFAULT_TEMPLATE, TEMPLATE_DIR, RESERVED_FILES)
register("web_template", DEFAULT_TEMPLATE, DEFAULT)


@cache
def _templates() -> dict[str, WebTemplate]:
    """The default template, then each suite's (WEB_TEMPLATES of its package: name -> "module:WebTemplate")."""
    found = {}
    for name in KINDS.member_names("web_template"):
        template = KINDS.member("web_template", name)
        if not isinstance(template, WebTemplate) or template.name != name:
            raise ConfigError(f"web template {name!r} (WEB_TEMPLATES[{name!r}] of a suite package): must be a "
                              f"WebTemplate named {name!r}")
        found[name] = template
    return found


class _Templates(Mapping[str, WebTemplate]):
    """Every web template by name, found when first read (a suite's template module imports this one)."""

    def __getitem__(self, name: str) -> WebTemplate:
        return _templates()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_templates())

    def __len__(self) -> int:
        return len(_templates())


TEMPLATES: Mapping[str, WebTemplate] = _Templates()


def get_template(name: str | None = None) -> WebTemplate:
    """The template of that name (None: the default); an unknown name names the choices."""
    key = name or DEFAULT_TEMPLATE
    if key not in TEMPLATES:
        raise ValueError(f"unknown web template {key!r}; choose from {sorted(TEMPLATES)}")
    return TEMPLATES[key]

# Module specifiers in static imports/re-exports, side-effect imports, dynamic import() and require().
_IMPORT_PATTERNS = (
    re.compile(r"""\b(?:import|export)\b[^'"`;]*?\bfrom\s*(['"])([^'"]+)\1"""),
    re.compile(r"""\bimport\s*(['"])([^'"]+)\1"""),
    re.compile(r"""\bimport\s*\(\s*(['"`])([^'"`]+)\1"""),
    re.compile(r"""\brequire\s*\(\s*(['"`])([^'"`]+)\1"""),
)
# Paths Vite turns into imports at build time: import.meta.glob patterns (a string or an array of them),
# new URL(path, import.meta.url) assets, and url()/@import in stylesheets.
_GLOB_CALL = re.compile(r"""\bimport\.meta\.glob\s*(?:<[^>]*>)?\s*\(\s*(\[[^\]]*\]|(['"`])[^'"`]*\2)""")
_STRING_LITERAL = re.compile(r"""(['"`])([^'"`]*)\1""")
_NEW_URL = re.compile(r"""\bnew\s+URL\s*\(\s*(['"`])([^'"`]+)\1\s*,\s*import\.meta\.url""")
_CSS_REFERENCES = (
    re.compile(r"""@import\s+(?:url\(\s*)?(['"]?)([^'")\s;]+)\1"""),
    re.compile(r"""url\(\s*(['"]?)([^'")\s]+)\1\s*\)"""),
)
NAME_MAX_BYTES = 255  # the longest file or folder name Linux file systems take (NAME_MAX)
_COMMENTS = re.compile(r"/\*.*?\*/|(?<![:'\"\\])//[^\n]*", re.S)
_SCRIPT_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx")


def package_set_hash(directory: Path) -> str:
    """Content hash of a folder's npm pins (package.json and its lockfile): new pins get a new cache folder."""
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update(name.encode())
        digest.update((directory / name).read_bytes())
    return digest.hexdigest()[:16]


def template_hash(template: str | None = None) -> str:
    """Content hash of the template's dependency pins."""
    return package_set_hash(get_template(template).directory)


def ensure_template_modules(cache_root: Path | None = None, template: str | None = None) -> Path:
    """Install the template's node_modules once per lockfile hash and return its path."""
    # The default template keeps its historical folder; others get their own, named by template.
    folder = "web-template" if (template or DEFAULT_TEMPLATE) == DEFAULT_TEMPLATE else f"web-template-{template}"
    return ensure_node_modules(get_template(template).directory, folder, cache_root=cache_root,
                               what="the web template's node_modules")


def node_modules_dir(package_dir: Path, folder: str, *, cache_root: Path | None = None) -> Path:
    """Where `ensure_node_modules` installs the pins of `package_dir`: `<cache>/<folder>/<hash>/node_modules`."""
    return Path(cache_root or DEFAULT_CACHE_ROOT).resolve() / folder / package_set_hash(package_dir) / "node_modules"


def node_modules_installed(package_dir: Path, folder: str, *, cache_root: Path | None = None) -> bool:
    """Whether `ensure_node_modules` has finished installing the pins of `package_dir` (it would not install)."""
    return (node_modules_dir(package_dir, folder, cache_root=cache_root) / ".genui-complete").exists()


def ensure_node_modules(package_dir: Path, folder: str, *, cache_root: Path | None = None,
                        what: str = "node_modules", npm_command: tuple[str, ...] = ("ci",)) -> Path:
    """`npm ci` of the pins in `package_dir`, once per lockfile hash, into `<cache>/<folder>/<hash>/node_modules`;
    returns that path. `npm_command` replaces `ci` (with its own arguments) where npm ci refuses a lockfile.

    Concurrent callers serialise on a lock file; the install happens in a scratch folder that is
    renamed into place, so a half-finished install is never visible.
    """
    cache_root = Path(cache_root or DEFAULT_CACHE_ROOT).resolve()
    pins = package_set_hash(package_dir)
    modules = node_modules_dir(package_dir, folder, cache_root=cache_root)
    if (modules / ".genui-complete").exists():
        return modules
    target_dir = modules.parent
    target_dir.mkdir(parents=True, exist_ok=True)
    with open(target_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (modules / ".genui-complete").exists():  # another caller finished while we waited
            return modules
        _install(cache_root, package_dir, target_dir, modules, pins=pins, what=what, npm_command=npm_command)
    return modules


def _install(cache_root: Path, package_dir: Path, target_dir: Path, modules: Path, *, pins: str, what: str,
             npm_command: tuple[str, ...] = ("ci",)) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="install-", dir=target_dir))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(package_dir / name, scratch / name)
        started = time.monotonic()
        cmd = ["npm", *npm_command, "--no-audit", "--no-fund", "--cache", str(cache_root / "npm")]
        with progress.step(f"installing {what} (npm ci, once per lockfile)", key=f"install-{package_dir.name}"):
            proc = subprocess.run([*cmd, "--prefer-offline"], cwd=scratch, capture_output=True, text=True,
                                  timeout=NPM_CI_TIMEOUT_S)
            if proc.returncode != 0:
                # A package index cached before a pinned version was published makes --prefer-offline fail
                # ("No matching version found"); asking the registry once refreshes it.
                offline = proc
                shutil.rmtree(scratch / "node_modules", ignore_errors=True)
                proc = subprocess.run([*cmd, "--prefer-online"], cwd=scratch, capture_output=True, text=True,
                                      timeout=NPM_CI_TIMEOUT_S)
                if proc.returncode != 0:
                    raise RuntimeError(f"npm {npm_command[0]} of {package_dir} failed ({proc.returncode}), from the "
                                       "cache first:\n"
                                       f"{offline.stderr}\nthen asking the registry:\n{proc.stdout}\n{proc.stderr}")
        (scratch / "node_modules" / ".genui-complete").write_text(pins)
        if modules.exists():  # a stale, incomplete folder from a crashed install
            shutil.rmtree(modules)
        os.rename(scratch / "node_modules", modules)
        log.info("installed %s in %.1fs at %s", what, time.monotonic() - started, modules)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _strip_comments(source: str) -> str:
    return _COMMENTS.sub(" ", source)


def module_specifiers(source: str) -> list[str]:
    """Every module specifier a script imports (static, side-effect, dynamic, require)."""
    text = _strip_comments(source)
    found: list[str] = []
    for pattern in _IMPORT_PATTERNS:
        found.extend(match.group(2) for match in pattern.finditer(text))
    return found


def glob_patterns(source: str) -> list[str]:
    """The patterns of every import.meta.glob call (negations keep their '!')."""
    found: list[str] = []
    for match in _GLOB_CALL.finditer(_strip_comments(source)):
        found.extend(literal.group(2) for literal in _STRING_LITERAL.finditer(match.group(1)))
    return found


def asset_references(source: str, *, stylesheet: bool) -> list[str]:
    """Files a script (new URL(..., import.meta.url)) or a stylesheet (url(), @import) makes Vite bundle."""
    text = _strip_comments(source)
    if not stylesheet:
        return [match.group(2) for match in _NEW_URL.finditer(text)]
    return [match.group(2) for pattern in _CSS_REFERENCES for match in pattern.finditer(text)]


def _workspace_relative(importer: str, specifier: str) -> str | None:
    """A relative or root-relative specifier from `importer` as a normalised path from the workspace root (None:
    a bare package name). The workspace root is the folder that holds src/ (Vite's root); a query (?raw, ?url)
    or a hash is no part of the path, and a leading '/' means that root, as Vite reads it."""
    target = re.split(r"[?#]", specifier.lstrip("!"), maxsplit=1)[0]
    if target.startswith("/"):
        joined = target.lstrip("/")
    elif target.startswith("."):
        joined = posixpath.join(posixpath.dirname(importer), target)
    else:
        return None
    return posixpath.normpath(joined)


def escapes_workspace(importer: str, specifier: str) -> bool:
    """Whether a relative or root-relative specifier from `importer` points outside the workspace."""
    normal = _workspace_relative(importer, specifier)
    return normal is not None and (normal == ".." or normal.startswith("../") or posixpath.isabs(normal))


def reaches_template_modules(importer: str, specifier: str) -> bool:
    """Whether a relative or root-relative specifier from `importer` points into the workspace's node_modules
    (the link to the template's install). By name, a package must be an allowed one; by path it would pass
    unvetted, and where the link resolves differs between sandboxes (the local build sees a host path it cannot
    reach, a container /node_modules), so the same answer would build in one and fail in the other."""
    normal = _workspace_relative(importer, specifier)
    return normal is not None and normal.split("/")[0] == "node_modules"


def _external_url(specifier: str) -> bool:
    return bool(re.match(r"^(?:[a-z][a-z0-9+.-]*:|//)", specifier, re.I)) and not specifier.startswith("data:")


def _reference_problems(path: str, content: str) -> list[str]:
    """Imports, globs and asset references that leave the workspace (or the machine)."""
    reasons: list[str] = []
    stylesheet = path.endswith(".css")
    specs = [] if stylesheet else module_specifiers(content)
    for spec in specs + asset_references(content, stylesheet=stylesheet):
        if escapes_workspace(path, spec):
            reasons.append(f"{path!r}: {spec!r} points outside the workspace")
        elif reaches_template_modules(path, spec):
            reasons.append(f"{path!r}: {spec!r} reaches into node_modules by path (import a package by its name)")
        elif spec not in specs and _external_url(spec):
            reasons.append(f"{path!r}: {spec!r} is an external URL")
    if not stylesheet:
        for pattern in glob_patterns(content):
            if (escapes_workspace(path, pattern) or reaches_template_modules(path, pattern)
                    or not pattern.lstrip("!").startswith((".", "/"))):
                reasons.append(f"{path!r}: import.meta.glob({pattern!r}) reaches outside the workspace")
    return reasons


def name_problems(paths: Iterable[str]) -> list[str]:
    """File names the file system cannot take, or that collide: over-long names and a file that is also a folder."""
    reasons: list[str] = []
    normal = {posixpath.normpath(p): p for p in paths if "\x00" not in p}
    for original in paths:
        for part in original.split("/"):
            if len(part.encode("utf-8", "surrogatepass")) > NAME_MAX_BYTES:
                reasons.append(f"{original[:80]!r}...: a path segment is over {NAME_MAX_BYTES} bytes")
                break
    for path, original in normal.items():
        parent = posixpath.dirname(path)
        while parent and parent != posixpath.dirname(parent):  # stops at "" and at "/" (absolute paths)
            if parent in normal:
                reasons.append(f"{normal[parent]!r}: is a file and also the folder of {original!r}")
            parent = posixpath.dirname(parent)
    return reasons


def _package_of(specifier: str) -> str:
    parts = specifier.split("/")
    return "/".join(parts[:2]) if specifier.startswith("@") else parts[0]


def _is_bare(specifier: str) -> bool:
    return not (specifier.startswith(".") or specifier.startswith("/"))


def _path_problem(path: str, template: WebTemplate | None = None) -> str | None:
    if not path:
        return "empty path"
    if "\\" in path:
        return f"{path!r}: backslashes are not allowed"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return f"{path!r}: absolute paths are not allowed"
    if "\x00" in path:
        return f"{path!r}: NUL byte in path"
    parts = path.split("/")
    if ".." in parts:
        return f"{path!r}: '..' is not allowed"
    normal = posixpath.normpath(path)
    if (template or DEFAULT).is_reserved(normal):
        return f"{path!r}: reserved template file cannot be overwritten"
    if not normal.startswith("src/") or normal == "src":
        return f"{path!r}: files must live under src/"
    if any(part in ("", ".") for part in parts):
        return f"{path!r}: empty or '.' path segment"
    return None


def validate_files(
    files: Mapping[str, str],
    allowed_packages: Iterable[str] = ALLOWED_PACKAGES,
    *,
    max_files: int = DEFAULT_MAX_FILES,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    template: str | None = None,
) -> list[str]:
    """Reasons to reject a model's file set; an empty list means it may be built.

    A non-default template brings its own reserved files and provided packages (EvoGenUI-Bench's
    scaffold: React only; any other bare import is rejected with the reason recorded).
    """
    chosen = get_template(template)
    allowed = set(allowed_packages) if chosen.name == DEFAULT_TEMPLATE else set(chosen.allowed_packages)
    reasons: list[str] = []
    if len(files) > max_files:
        reasons.append(f"too many files: {len(files)} > {max_files}")
    reasons += name_problems(files)
    for path, content in files.items():
        problem = _path_problem(path, chosen)
        if problem:
            reasons.append(problem)
            continue
        size = len(content.encode("utf-8"))
        if size > max_file_bytes:
            reasons.append(f"{path!r}: {size} bytes exceeds the {max_file_bytes}-byte cap")
            continue
        if path.endswith((*_SCRIPT_SUFFIXES, ".css")):
            reasons += _reference_problems(path, content)
        if path.endswith(_SCRIPT_SUFFIXES):
            for spec in module_specifiers(content):
                if _is_bare(spec) and _package_of(spec) not in allowed:
                    reasons.append(f"{path!r}: imports {spec!r}, which the template does not provide")
                elif spec.startswith("/"):
                    reasons.append(f"{path!r}: absolute import {spec!r} is not allowed")
    return reasons


def prepare_workspace(files: Mapping[str, str], workspace: Path, node_modules: Path,
                      template: str | None = None) -> Path:
    """A fresh template copy in `workspace` with the model's files under src/ and node_modules linked.

    The link points at the shared read-only install; the sandbox additionally mounts it read-only.
    """
    spec = get_template(template)
    workspace = Path(workspace)
    if workspace.exists() and any(workspace.iterdir()):  # an empty one is kept: a spare build has it mounted
        shutil.rmtree(workspace)
    shutil.copytree(spec.directory, workspace, ignore=shutil.ignore_patterns("node_modules", "dist"),
                    dirs_exist_ok=True)
    shutil.copy2(WORKSPACE_GUARD, workspace / WORKSPACE_GUARD.name)
    for path, content in files.items():
        problem = _path_problem(path, spec)
        if problem:  # defensive: callers validate first, but never write outside src/
            raise ValueError(problem)
        dest = workspace / posixpath.normpath(path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(content, encoding="utf-8")
    (workspace / "node_modules").symlink_to(Path(node_modules).resolve(), target_is_directory=True)
    return workspace


def rejection(files: Mapping[str, str], allowed_packages: Iterable[str] = ALLOWED_PACKAGES, *,
              max_files: int = DEFAULT_MAX_FILES, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
              template: str | None = None) -> "BuildResult | None":
    """The recorded `rejected` build result for files that break the template's rules, or None if they are fine."""
    from runner.sandbox.base import BuildResult

    started = time.monotonic()
    reasons = validate_files(files, allowed_packages, max_files=max_files, max_file_bytes=max_file_bytes,
                             template=template)
    if not reasons:
        return None
    log_text = "rejected before build:\n" + "\n".join(f"- {r}" for r in reasons)
    return BuildResult("rejected", log=log_text, rejected=reasons, duration_s=time.monotonic() - started)


def accept_build_output(result: "BuildResult", workspace: Path, *, max_output_mb: int,
                        expect_index: bool = True) -> "BuildResult":
    """Check a finished build's output: dist/index.html exists and the workspace stays under the size cap."""
    from runner.sandbox.limits import folder_size_bytes

    if result.status != "ok":
        return result
    dist = Path(workspace) / "dist"
    if expect_index and not (dist / "index.html").is_file():
        result.status = "build_failed"
        result.log += "\n[sandbox] build exited 0 but produced no dist/index.html"
        return result
    size = folder_size_bytes(Path(workspace)) if dist.exists() else 0
    if size > max_output_mb * 1024 * 1024:
        result.status = "build_failed"
        result.log += f"\n[sandbox] output {size / 2**20:.1f} MB exceeds {max_output_mb} MB"
        return result
    result.dist_dir = dist
    return result
