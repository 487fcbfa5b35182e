"""FlowEval's reference sites (tasks/floweval/sites/<site>/, or any folder of them: `suite.sites_path`): a
site.yaml (name, description, flows) beside either

- the site's sources under src/, written for the suite's web template (`floweval`), so the reference builds
  exactly like a generated site and the oracle can answer with it; or
- a static site (`static:` in site.yaml names its folder): HTML, CSS, JavaScript and assets, third-party code
  included, served as it is with no build. The oracle answers with its text files under `suite.artifact=static`.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from runner.suites.floweval.flows import FlowSpec
from runner.suites.native import TaskFormatError, describe_validation_error, read_document

SITES_DIR = Path(__file__).resolve().parents[3] / "tasks" / "floweval" / "sites"
SITE_FILE = "site.yaml"
SOURCE_SUFFIXES = (".jsx", ".js", ".css")
# The files of a static site an answer's text can carry (STATIC_SUFFIXES less images and fonts).
STATIC_TEXT_SUFFIXES = (".html", ".htm", ".css", ".js", ".svg", ".json", ".txt")


class SiteSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    flows: list[FlowSpec] = Field(min_length=1)
    # A static site: its folder (relative to the site folder, or absolute), served as it is; None: sources (src/).
    static: str | None = Field(None, min_length=1)

    @field_validator("flows")
    @classmethod
    def _unique_ids(cls, flows: list[FlowSpec]) -> list[FlowSpec]:
        ids = [flow.id for flow in flows]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate flow id(s) {duplicates}")
        return flows


@dataclass
class ReferenceSite:
    id: str
    spec: SiteSpec
    # "src/App.jsx" -> source: what the template build takes; for a static site, its text files by path
    files: dict[str, str]
    folder: Path
    static_dir: Path | None = None  # a static site's folder, served as it is

    @property
    def reference(self) -> dict[str, str]:
        """The task's `reference` record: how the reference site is made (suite.py)."""
        if self.static_dir is not None:
            return {"kind": "static", "folder": str(self.static_dir)}
        return {"kind": "sources", "folder": str(self.folder)}


def static_text_files(root: Path) -> dict[str, str]:
    """The text files of a static site an answer can carry, by relative path (images and fonts stay out)."""
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in STATIC_TEXT_SUFFIXES):
        try:
            files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return files


def static_assets(root: Path) -> Path:
    """A folder holding only the files of the static site at `root` that `static_text_files` leaves out (images,
    fonts), made once per site content under the system's temporary folder: what a static answer is served
    beside. The answer's own text files never fall back to the reference's."""
    text = set(static_text_files(root))
    binary = sorted(p for p in root.rglob("*") if p.is_file() and p.relative_to(root).as_posix() not in text)
    digest = hashlib.sha256(str(root).encode())
    for path in binary:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    folder = Path(tempfile.gettempdir()) / "genui-floweval-assets" / digest.hexdigest()[:16]
    if not folder.is_dir():
        staging = Path(tempfile.mkdtemp(prefix="assets-", dir=folder.parent if folder.parent.is_dir()
                                        else _made(folder.parent)))
        for path in binary:
            target = staging / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        try:
            staging.rename(folder)
        except OSError:  # another process made it first: the same content
            shutil.rmtree(staging, ignore_errors=True)
    return folder


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _static_site(folder: Path, spec: SiteSpec, path: Path) -> ReferenceSite:
    assert spec.static is not None
    root = Path(spec.static)
    root = (root if root.is_absolute() else folder / root).resolve()
    if not (root / "index.html").is_file():
        raise TaskFormatError(f"{path}: static: {spec.static!r}: no index.html in {root} (a static reference site "
                              "is a folder served as it is, its entry page index.html at its root)")
    if (folder / "src" / "App.jsx").is_file():
        raise TaskFormatError(f"{path}: both a static site ({spec.static!r}) and sources (src/App.jsx): keep one")
    return ReferenceSite(folder.name, spec, static_text_files(root), folder, static_dir=root)


def load_site(folder: Path) -> ReferenceSite:
    path = folder / SITE_FILE
    if not path.is_file():
        raise TaskFormatError(f"{folder}: no {SITE_FILE}")
    try:
        spec = SiteSpec.model_validate(read_document(path))
    except ValidationError as error:
        raise TaskFormatError(describe_validation_error(path, error)) from None
    if spec.static is not None:
        return _static_site(folder, spec, path)
    sources = sorted(p for p in (folder / "src").rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES)
    files = {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in sources}
    if "src/App.jsx" not in files:
        raise TaskFormatError(f"{folder}: src/App.jsx missing (FlowEval App. A: the main view), and site.yaml names "
                              "no static site (`static: FOLDER`)")
    return ReferenceSite(folder.name, spec, files, folder)


def load_sites(root: Path = SITES_DIR) -> list[ReferenceSite]:
    if not root.is_dir():
        raise TaskFormatError(f"{root}: not a folder of FlowEval reference sites")
    sites = [load_site(folder) for folder in sorted(root.iterdir()) if folder.is_dir()]
    if not sites:
        raise TaskFormatError(f"{root}: no reference sites (folders with a {SITE_FILE})")
    return sites
