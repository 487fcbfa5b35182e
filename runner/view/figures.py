"""The papers' figures on a model's page: each suite's report plots (REPORT_PLOTS, runner/report/sections.py:
EvoGenUI-Bench Fig. 3a's metrics by sub-suite, Fig. 3b, Figs. 4-5; I-WebGenBench's BSR vs IR; MT-Web2Code's
chain vs independent) drawn by the suites' own code over that model's runs, so the viewer and the report show
one implementation. Drawn once per model on first request into a folder the app owns, then served as PNGs."""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import weakref
from pathlib import Path

from runner.report.collect import RunData
from runner.report.sections import plot_sections

log = logging.getLogger(__name__)

CAPTIONS = {
    "pass_by_turn": "Pass rate by turn position (EvoGenUI-Bench Fig. 3b)",
    "suite_difficulty": "TP, TP@N, APR and CPT by sub-suite (EvoGenUI-Bench Fig. 3a)",
    "failure_mechanisms": "Diagnostic failure mechanisms of non-passing turns (EvoGenUI-Bench Figs. 4-5)",
    "bsr_vs_ir": "Build success vs interaction rate (I-WebGenBench)",
    "chain_vs_independent": "Chained vs independent turns (MT-Web2Code)",
}


class PaperFigures:
    """The drawn figures of each model, by model id and figure name."""

    def __init__(self) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="genui-view-figures-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._root, True)  # gone with the app
        self._drawn: dict[str, list[str]] = {}
        self._lock = threading.Lock()  # matplotlib's pyplot state is not thread-safe; pages render on a pool

    def names(self, model_id: str, runs: list[RunData]) -> list[str]:
        """The figures this model's runs have data for (drawn on first call)."""
        with self._lock:
            if model_id not in self._drawn:
                folder = self._root / model_id
                folder.mkdir(parents=True, exist_ok=True)
                drawn = []
                for name, draw in plot_sections().items():
                    try:
                        if draw(runs, folder / f"{name}.png") is not None:
                            drawn.append(name)
                    except Exception as error:  # a figure that cannot be drawn leaves the page and the others
                        log.warning("figure %s of model %s not drawn: %s", name, model_id, error)
                self._drawn[model_id] = drawn
            return list(self._drawn[model_id])

    def path(self, model_id: str, name: str) -> Path | None:
        with self._lock:
            if name not in self._drawn.get(model_id, []):
                return None
        return self._root / model_id / f"{name}.png"

    def close(self) -> None:
        self._cleanup()


def caption(name: str) -> str:
    return CAPTIONS.get(name, name.replace("_", " "))


__all__ = ["PaperFigures", "caption"]
