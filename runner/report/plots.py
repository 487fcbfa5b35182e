"""The papers' figures as PNGs (matplotlib, Agg backend: no display needed), each only when its data exists.

The figures are the suites' (REPORT_PLOTS, runner/report/sections.py): EvoGenUI-Bench's pass rate by turn,
suite difficulty and failure mechanisms (Figs. 3-5), I-WebGenBench's BSR against IR (Fig. 3 left) and
MT-Web2Code's chain against independent editing (Fig. 4). This module sets up matplotlib for them and saves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before pyplot: headless machines and worker processes have no display
import matplotlib.pyplot as plt  # noqa: E402

from runner.report.collect import RunData  # noqa: E402
from runner.report.sections import plot_sections  # noqa: E402

DPI = 110


def save_figure(figure: Any, path: Path) -> Path:
    """Write the figure as a PNG at `path` (folders made) and close it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    plt.close(figure)
    return path


def make_plots(runs: list[RunData], out_dir: Path) -> dict[str, Path]:
    """Every plot whose data exists, as out_dir/<name>.png."""
    made = {}
    for name, draw in plot_sections().items():
        path = draw(runs, Path(out_dir) / f"{name}.png")
        if path is not None:
            made[name] = path
    return made


__all__ = ["DPI", "make_plots", "plt", "save_figure"]
