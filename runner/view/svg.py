"""Two small server-side SVG charts for the model pages: lines over turn positions (EvoGenUI-Bench Fig. 3b's
shape) and 100% stacked bars of a composition (Figs. 4-5's shape). Every label is escaped; each data point
and bar segment carries a <title> (its tooltip) and data-* attributes with its numbers."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape

PALETTE = ("#0b5cad", "#d1495b", "#2a9d8f", "#e9a03b", "#6a4c93", "#8ab17d", "#577590", "#b5838d", "#4d908e", "#f28482")
MUTED = "#b8bfca"


def _f(value: float) -> str:
    return f"{value:.1f}"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Series:
    label: str
    values: list[float | None]  # one per position 1..n, in the chart's unit (0..1 shown as %)
    highlight: bool = True


def line_chart(series: list[Series], *, title: str, y_label: str, percent: bool = True,
               width: int = 640, height: int = 300) -> Markup:
    """Values by position, one line per series; muted series drawn grey behind the highlighted ones."""
    left, right, top, bottom = 48, 12, 28, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    positions = max((len(s.values) for s in series), default=1)
    top_value = 1.0 if percent else max([v for s in series for v in s.values if v is not None] + [1e-9])
    scale = 100.0 if percent else 1.0

    def x(position: int) -> float:
        return left + (plot_w * (position - 1) / (positions - 1) if positions > 1 else plot_w / 2)

    def y(value: float) -> float:
        return top + plot_h * (1 - value / top_value)

    legend_rows = (len(series) + 1) // 2
    total_h = height + 16 * legend_rows
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {total_h}" '
             f'width="{width}" height="{total_h}" role="img" aria-label="{escape(title)}">',
             f'<text x="{left}" y="16" font-size="13" font-weight="600">{escape(title)}</text>']
    for position in range(2, positions + 1, 2):  # later revisions shaded, as in Fig. 3b
        half = plot_w / max(1, positions - 1) / 2 if positions > 1 else plot_w / 2
        parts.append(f'<rect x="{_f(x(position) - half)}" y="{top}" width="{_f(2 * half)}" height="{plot_h}" fill="#eef0f4"/>')
    for tick in range(5):
        value = top_value * tick / 4
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{_f(y(value))}" y2="{_f(y(value))}" stroke="#e1e5ec"/>')
        parts.append(f'<text x="{left - 6}" y="{_f(y(value) + 4)}" font-size="11" text-anchor="end">{value * scale:.0f}</text>')
    for position in range(1, positions + 1):
        parts.append(f'<text x="{_f(x(position))}" y="{top + plot_h + 16}" font-size="11" text-anchor="middle">{position}</text>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h + 32}" font-size="11" text-anchor="middle">turn position</text>')
    parts.append(f'<text x="12" y="{top + plot_h / 2}" font-size="11" text-anchor="middle" '
                 f'transform="rotate(-90 12 {top + plot_h / 2})">{escape(y_label)}</text>')
    ordered = sorted(enumerate(series), key=lambda item: item[1].highlight)  # highlighted lines on top
    for index, one in ordered:
        colour = PALETTE[index % len(PALETTE)] if one.highlight else MUTED
        points = [(p, v) for p, v in enumerate(one.values, start=1) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{_f(x(p))},{_f(y(v))}" for p, v in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="{2 if one.highlight else 1.2}"/>')
        for p, v in points:
            tip = f"{one.label}: turn {p}: {v * scale:.1f}{'%' if percent else ''}"
            parts.append(f'<circle class="point" cx="{_f(x(p))}" cy="{_f(y(v))}" r="{4 if one.highlight else 3}" '
                         f'fill="{colour}" data-series="{escape(one.label)}" data-turn="{p}" data-value="{v:.4f}">'
                         f'<title>{escape(tip)}</title></circle>')
    for index, one in enumerate(series):
        colour = PALETTE[index % len(PALETTE)] if one.highlight else MUTED
        lx, ly = left + (index % 2) * (plot_w / 2), height + 4 + 16 * (index // 2)
        parts.append(f'<rect x="{_f(lx)}" y="{ly}" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{_f(lx + 14)}" y="{ly + 9}" font-size="11">{escape(_short(one.label, 44))}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


@dataclass
class Bar:
    label: str
    counts: dict[str, int]
    highlight: bool = True


def stacked_bars(bars: list[Bar], categories: list[str], *, title: str, width: int = 640) -> Markup:
    """One 100% bar per row, split by category; n at the end of each bar's label."""
    label_w, right, top, bar_h, gap = 250, 12, 28, 18, 8
    plot_w = width - label_w - right
    legend_rows = (len(categories) + 3) // 4
    height = top + len(bars) * (bar_h + gap) + 24 + 16 * legend_rows
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}">',
             f'<text x="4" y="16" font-size="13" font-weight="600">{escape(title)}</text>']
    colours = {category: PALETTE[i % len(PALETTE)] for i, category in enumerate(categories)}
    for row, bar in enumerate(bars):
        total = sum(bar.counts.values())
        y = top + row * (bar_h + gap)
        weight = ' font-weight="600"' if bar.highlight else ""
        parts.append(f'<text x="{label_w - 6}" y="{y + 13}" font-size="11" text-anchor="end"{weight}>'
                     f'{escape(_short(bar.label, 34))} (n={total})</text>')
        offset = 0.0
        for category in categories:
            count = bar.counts.get(category, 0)
            if not count or not total:
                continue
            share = count / total
            parts.append(f'<rect class="segment" x="{_f(label_w + offset * plot_w)}" y="{y}" width="{_f(share * plot_w)}" '
                         f'height="{bar_h}" fill="{colours[category]}" data-bar="{escape(bar.label)}" '
                         f'data-category="{escape(category)}" data-count="{count}">'
                         f'<title>{escape(f"{bar.label}: {category}: {count} ({share:.0%})")}</title></rect>')
            offset += share
        if not total:
            parts.append(f'<text x="{label_w + 4}" y="{y + 13}" font-size="11" fill="#5f6b7d">none</text>')
    legend_top = top + len(bars) * (bar_h + gap) + 8
    for index, category in enumerate(categories):
        lx, ly = 4 + (index % 4) * (width / 4), legend_top + 16 * (index // 4)
        parts.append(f'<rect x="{_f(lx)}" y="{ly}" width="10" height="10" fill="{colours[category]}"/>')
        parts.append(f'<text x="{_f(lx + 14)}" y="{ly + 9}" font-size="11">{escape(category.replace("_", " "))}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


__all__ = ["Bar", "Series", "line_chart", "stacked_bars"]
