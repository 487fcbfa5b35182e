"""The I-WebGenBench specification format: one scientific interactive app, derived from one paper.

I-WebGenBench §3.1: a specification names the paper, holds 3-10 core interaction elements (each with its
controllable parameters, dynamic components and expected responses), and C.2 adds the visual-style
requirements and technical-stack constraints the user prompt carries. A file under tasks/iwebgen/specs/ is
one AppSpec as YAML (.yaml/.yml) or JSON (.json):

    id: bio-lotka-volterra
    domain: Biology                      # Biology | Chemistry | Computer Science | Economics | HCI
    paper_title: "..."
    summary: "..."                       # optional: the concept in one or two sentences
    interactions:                        # 3-10 elements (§3.1)
      - name: Birth rate slider
        description: "..."
        controllable_parameters:
          - {name: alpha, control: slider, min: 0.1, max: 2.0, default: 1.0, unit: "1/day"}
        dynamic_components: ["population chart"]
        expected_responses: ["the prey curve grows faster when alpha rises"]
    visual_style: {theme: light, palette: "...", layout: "...", notes: ["..."]}
    tech_stack: {framework: "...", libraries: [...], forbidden: [...], notes: [...]}

Unknown keys are errors (extra=forbid); `load_spec` raises TaskFormatError naming the file and the field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from runner.suites.native import TaskFormatError

__all__ = [
    "DOMAINS",
    "AppSpec",
    "ControllableParameter",
    "InteractionElement",
    "TechStack",
    "VisualStyle",
    "dump_spec",
    "load_spec",
    "parse_spec",
    "spec_error_message",
]

# I-WebGenBench §3.1: the five domains.
Domain = Literal["Biology", "Chemistry", "Computer Science", "Economics", "HCI"]
DOMAINS: tuple[str, ...] = ("Biology", "Chemistry", "Computer Science", "Economics", "HCI")

# I-WebGenBench §3.1: "Each specification contains 3-10 core interaction elements".
MIN_INTERACTIONS = 3
MAX_INTERACTIONS = 10

_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_SUFFIXES = (".yaml", ".yml", ".json")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class ControllableParameter(_Strict):
    """A value the user sets (a slider, a number field, a toggle, a choice)."""

    name: str = Field(min_length=1)
    control: Literal["slider", "number", "toggle", "select", "button", "text", "drag", "click"]
    min: float | None = None
    max: float | None = None
    default: float | str | bool | None = None
    unit: str | None = None
    options: list[str] | None = None

    @model_validator(mode="after")
    def _range(self) -> ControllableParameter:
        if self.min is not None and self.max is not None and self.min >= self.max:
            raise ValueError(f"min ({self.min}) must be below max ({self.max})")
        if self.control == "select" and not self.options:
            raise ValueError("a select control needs `options`")
        return self


class InteractionElement(_Strict):
    """One core interaction element (§3.1): what the user controls, what moves, what must happen."""

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    controllable_parameters: list[ControllableParameter] = Field(min_length=1)
    dynamic_components: list[str] = Field(min_length=1)
    expected_responses: list[str] = Field(min_length=1)


class VisualStyle(_Strict):
    """Visual-style requirements (C.2)."""

    theme: Literal["light", "dark", "any"] = "any"
    palette: str | None = None
    layout: str | None = None
    notes: list[str] = Field(default_factory=list)


class TechStack(_Strict):
    """Technical-stack constraints (C.2): what the generated app is built with and may not use."""

    framework: str = Field(min_length=1)
    libraries: list[str] = Field(default_factory=list)
    forbidden: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class AppSpec(_Strict):
    """One I-WebGenBench specification (§3.1, C.2)."""

    id: str = Field(pattern=_ID.pattern)  # lower-case letters, digits, '.', '_' and '-' (in the writer's schema too)
    domain: Domain
    paper_title: str = Field(min_length=1)
    summary: str | None = None
    interactions: list[InteractionElement] = Field(min_length=MIN_INTERACTIONS, max_length=MAX_INTERACTIONS)
    visual_style: VisualStyle
    tech_stack: TechStack

    @model_validator(mode="after")
    def _unique_names(self) -> AppSpec:
        names = [element.name for element in self.interactions]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"interaction names must be unique; repeated: {', '.join(duplicates)}")
        return self


def spec_error_message(path: Path | str, error: ValidationError) -> str:
    """`file: field.path: message` lines, one per problem pydantic found."""
    lines = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "(top level)"
        lines.append(f"{path}: {where}: {item['msg']}")
    return "\n".join(lines)


def parse_spec(data: Any, path: Path | str = "<spec>") -> AppSpec:
    """Validate already-parsed YAML/JSON data; errors name `path` and the field."""
    if not isinstance(data, dict):
        raise TaskFormatError(f"{path}: a specification is a mapping, got {type(data).__name__}")
    try:
        return AppSpec.model_validate(data)
    except ValidationError as error:
        raise TaskFormatError(spec_error_message(path, error)) from None


def load_spec(path: Path | str) -> AppSpec:
    """Read one specification file (.yaml, .yml or .json)."""
    path = Path(path)
    if path.suffix not in _SUFFIXES:
        raise TaskFormatError(f"{path}: a specification file ends in {', '.join(_SUFFIXES)}")
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as error:
        raise TaskFormatError(f"{path}: cannot read: {error}") from None
    return parse_spec(data, path)


def dump_spec(spec: AppSpec, path: Path | str) -> Path:
    """Write `spec` as YAML or JSON (by the suffix); what `load_spec` reads back is equal to `spec`."""
    path = Path(path)
    if path.suffix not in _SUFFIXES:
        raise TaskFormatError(f"{path}: a specification file ends in {', '.join(_SUFFIXES)}")
    data = spec.model_dump(mode="json", exclude_none=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110), encoding="utf-8")
    return path
