"""Evidence and Trace: what was observed of an artifact, and what an actor did to it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class NetworkRequest:
    url: str
    method: str
    resource_type: str
    status: int | None = None
    blocked: bool = False  # refused: by the harness (another origin), the page's CSP, or the browser's namespace
    failure: str = ""
    reason: str = ""  # why it was blocked (who refused it and under which rule)


@dataclass
class Evidence:
    """Observations of one served artifact (paths relative to the evidence dir): the load-time capture,
    and the final capture taken after the actor ran (`final_*`, empty when no actor ran)."""

    url: str
    screenshot_full: str = ""
    screenshot_viewport: str = ""
    dom_path: str = ""
    visible_text: str = ""
    console: list[dict[str, Any]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    network: list[NetworkRequest] = field(default_factory=list)
    blank: bool = False
    load_error: str = ""
    load_s: float = 0.0
    dialogs: list[dict[str, str]] = field(default_factory=list)  # alert/confirm/prompt the page opened
    popups: list[str] = field(default_factory=list)  # windows the page opened (closed at once)
    console_dropped: int = 0  # console messages past the capture cap
    downloads: list[dict[str, str]] = field(default_factory=list)  # downloads the page started (never saved)
    unload_traps: list[str] = field(default_factory=list)  # beforeunload handlers the page set (how)
    # The full-page screenshot shows only the top of a page taller than the capture height (why, in words).
    screenshot_full_clipped: str = ""
    # After the actor (EvoGenUI-Bench §4.2 "the final DOM and screenshot"; §5.2 "refreshed full-page screenshots").
    final_dom_path: str = ""
    final_screenshot_full: str = ""
    final_screenshot_viewport: str = ""
    final_visible_text: str = ""
    final_error: str = ""  # the final capture failed (the load-time capture still stands)
    final_screenshot_full_clipped: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TraceStep:
    index: int
    action: dict[str, Any]  # e.g. {"kind": "click", "target": "button#add", "element": {...}}
    ok: bool = True
    error: str = ""
    dom_changed: bool | None = None
    mutations: int = 0
    observation: str = ""
    screenshot_before: str = ""
    screenshot_after: str = ""
    duration_s: float = 0.0


@dataclass
class Trace:
    actor: str
    steps: list[TraceStep] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    finished: bool = True
    claim: str = ""  # the actor's own success claim: advisory only, never a verdict

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def save(self, path: Path) -> None:
        from runner.turns.records import write_json_atomic

        write_json_atomic(path, self.to_json())
