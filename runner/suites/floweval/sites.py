"""FlowEval's own reference sites (tasks/floweval/sites/<site>/): a site.yaml (name, description, flows)
beside the site's sources under src/, written for the suite's web template (`floweval`), so the reference
builds exactly like a generated site and the oracle can answer with it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from runner.suites.floweval.flows import FlowSpec
from runner.suites.native import TaskFormatError, describe_validation_error, read_document

SITES_DIR = Path(__file__).resolve().parents[3] / "tasks" / "floweval" / "sites"
SITE_FILE = "site.yaml"
SOURCE_SUFFIXES = (".jsx", ".js", ".css")


class SiteSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    flows: list[FlowSpec] = Field(min_length=1)

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
    files: dict[str, str]  # "src/App.jsx" -> source: what the template build takes
    folder: Path


def load_site(folder: Path) -> ReferenceSite:
    path = folder / SITE_FILE
    if not path.is_file():
        raise TaskFormatError(f"{folder}: no {SITE_FILE}")
    try:
        spec = SiteSpec.model_validate(read_document(path))
    except ValidationError as error:
        raise TaskFormatError(describe_validation_error(path, error)) from None
    sources = sorted(p for p in (folder / "src").rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES)
    files = {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in sources}
    if "src/App.jsx" not in files:
        raise TaskFormatError(f"{folder}: src/App.jsx missing (FlowEval App. A: the main view)")
    return ReferenceSite(folder.name, spec, files, folder)


def load_sites(root: Path = SITES_DIR) -> list[ReferenceSite]:
    if not root.is_dir():
        raise TaskFormatError(f"{root}: not a folder of FlowEval reference sites")
    sites = [load_site(folder) for folder in sorted(root.iterdir()) if folder.is_dir()]
    if not sites:
        raise TaskFormatError(f"{root}: no reference sites (folders with a {SITE_FILE})")
    return sites
