"""Task files of the navigation benchmarks FlowEval draws its references from (FlowEval §3 "Source Data"):
REAL v2 (one JSON document per task, its site a hosted replica) and WebVoyager (JSONL: web_name, id, ques,
web; live websites).

Both benchmarks' sites are on the internet and this runner works offline: a site is used only through a
local snapshot the user names (`suite.snapshots: {site id: folder}`), else the run is refused with a message
naming the site and its URL (`resolve_snapshot`).

Their tasks are goals only. A user who writes scripted steps for them (`suite.flow_steps`: a YAML file, site id ->
flow id -> steps in the project's flow format) makes them flows the scripted actor can replay (`add_flow_steps`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from runner.judges.checks import Step
from runner.suites.floweval.flows import FlowSpec
from runner.suites.native import TaskFormatError, describe_validation_error, expand_task_paths, read_document

Benchmark = Literal["real-v2", "webvoyager"]


class LiveSiteRefused(ValueError):
    """A benchmark site that lives on the internet was asked for with no local snapshot of it."""


class RealWebsite(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    similarTo: str = ""
    url: str = Field(min_length=1)


class RealTask(BaseModel):
    """One REAL v2 task file (fields the runner uses; the benchmark's own eval scripts are not run here)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    goal: str = Field(min_length=1)
    website: RealWebsite
    possible: bool = True
    version: str = ""


class WebVoyagerTask(BaseModel):
    """One line of WebVoyager's task JSONL."""

    model_config = ConfigDict(extra="ignore")

    web_name: str = Field(min_length=1)
    id: str = Field(min_length=1)
    ques: str = Field(min_length=1)
    web: str = Field(min_length=1)


@dataclass
class ExternalSite:
    """A benchmark website and its flow tasks (goals only: no scripted reference exists for them)."""

    benchmark: Benchmark
    id: str
    name: str
    description: str
    url: str
    flows: list[FlowSpec] = field(default_factory=list)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _site(sites: dict[str, ExternalSite], benchmark: Benchmark, site_id: str, name: str, description: str,
          url: str) -> ExternalSite:
    return sites.setdefault(site_id, ExternalSite(benchmark, site_id, name, description, url))


def load_real_v2(spec: str | Path) -> list[ExternalSite]:
    """REAL v2 task files (a file, folder or glob of *.json) grouped by website; impossible tasks are left out
    (they have no flow to trace)."""
    sites: dict[str, ExternalSite] = {}
    for path in expand_task_paths(spec, suffixes=(".json",)):
        try:
            task = RealTask.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise TaskFormatError(f"{path}: cannot be read as a REAL v2 task file: {error}") from None
        except ValidationError as error:
            raise TaskFormatError(describe_validation_error(path, error)) from None
        if not task.possible:
            continue
        website = task.website
        like = f" (a site like {website.similarTo})" if website.similarTo else ""
        site = _site(sites, "real-v2", slug(website.id), website.name, f"The {website.name} website{like}.",
                     website.url)
        site.flows.append(FlowSpec(id=slug(task.id), goal=task.goal))
    return sorted(sites.values(), key=lambda site: site.id)


def load_webvoyager(path: str | Path) -> list[ExternalSite]:
    """WebVoyager's JSONL task file grouped by web_name."""
    path = Path(path)
    sites: dict[str, ExternalSite] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise TaskFormatError(f"{path}: cannot be read as a WebVoyager task file: {error}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            task = WebVoyagerTask.model_validate(json.loads(line))
        except json.JSONDecodeError as error:
            raise TaskFormatError(f"{path}: line {number}: not JSON: {error}") from None
        except ValidationError as error:
            raise TaskFormatError(describe_validation_error(path, error, f"line {number}")) from None
        site = _site(sites, "webvoyager", slug(task.web_name), task.web_name, f"The {task.web_name} website.",
                     task.web)
        site.flows.append(FlowSpec(id=slug(task.id), goal=task.ques))
    if not sites:
        raise TaskFormatError(f"{path}: no WebVoyager tasks")
    return sorted(sites.values(), key=lambda site: site.id)


def resolve_snapshot(site: ExternalSite, snapshots: dict[str, str], *, root: Path) -> Path:
    """The local snapshot folder of a benchmark site; refuses a live site with no snapshot, naming it."""
    if site.id not in snapshots:
        raise LiveSiteRefused(
            f"{site.benchmark} site {site.id!r} ({site.name}) lives on the internet at {site.url}; the runner works "
            f"offline and will not browse it. Save a local snapshot of the site and point suite.snapshots.{site.id} "
            "at its folder (it must hold an index.html)."
        )
    folder = Path(snapshots[site.id])
    folder = folder if folder.is_absolute() else root / folder
    if not (folder / "index.html").is_file():
        raise LiveSiteRefused(f"suite.snapshots.{site.id} = {snapshots[site.id]!r}: no index.html in {folder}")
    return folder


_FLOW_STEPS_FILE = TypeAdapter(dict[str, dict[str, list[Step]]])


def add_flow_steps(sites: list[ExternalSite], path: Path) -> list[ExternalSite]:
    """The sites with the scripted steps of `path` (YAML or JSON: site id -> flow id -> steps) on their flows.
    Every site and flow the file names must exist (the error names the file and the id)."""
    try:
        steps = _FLOW_STEPS_FILE.validate_python(read_document(path))
    except ValidationError as error:
        raise TaskFormatError(describe_validation_error(path, error)) from None
    by_id = {site.id: site for site in sites}
    for site_id, flows in steps.items():
        if site_id not in by_id:
            raise TaskFormatError(f"{path}: {site_id}: no such site in the task file (its sites: {sorted(by_id)})")
        site = by_id[site_id]
        known = {flow.id: index for index, flow in enumerate(site.flows)}
        for flow_id, flow_steps in flows.items():
            if flow_id not in known:
                raise TaskFormatError(f"{path}: {site_id}.{flow_id}: no such flow of site {site_id!r} "
                                      f"(its flows: {sorted(known)})")
            flow = site.flows[known[flow_id]]
            site.flows[known[flow_id]] = flow.model_copy(update={"steps": flow_steps})
    return sites
