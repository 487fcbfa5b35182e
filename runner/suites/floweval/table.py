"""FlowEval's Table 1 end to end (§4.1) and the raw-median ranking of Appendix D (Table 2).

From FlowEval run dirs of several models on the same prompts and a file of human pairwise labels
(runner/suites/floweval/pair_labels.py): for each trace metric (DTW, eBLEU, WMD) its binary preference on every pair the
people compared, the Elo ratings and ranking from those preferences, and against the human labels the
Spearman rho of the rankings, Cohen's kappa and the agreement rate (runner/suites/floweval/ranking.py); plus per
metric each model's median raw value and that ranking's Spearman rho against the human Elo ranking.

Which values decide a pair: the paper "computed the reference-based metrics for each comparison pair and
used that to create a binary label" (FlowEval Appendix D; §4.1, Table 1), and a comparison pair is the two
generated sites the person saw side by side (§4 "Methodology"). So a label that names its sites (`site_a`,
`site_b`: `<run dir>::<task>::<turn>`, as the arena writes them) is decided on those two sites' values, and
each distinct pair of sites once (`pair_values="rated_sites"`, the default). A label that names no sites
(older files) falls back to the model's mean over its generations of the prompt (its assessed slots there;
suite.repeats), counted per column as `decided_by_mean`; `pair_values="generation_mean"` decides every pair
that way (the older reading). A site without the metric (it did not build), or a model without an assessed
slot on the prompt, leaves the pair unassessed, never decided.

Beside the metrics (not the paper's): each model's flow completion (runner/suites/floweval/scoring.py) over the
slots it was compared on, with how many of them have a flow that stopped short; a trace that did not complete is
counted in Table 1 and gets its median in Appendix D's table, so no one reads a metric of a flow that stopped as
if it ran to the end.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any, Literal

from runner.errors import ConfigError
from runner.validity.jsonl_models import read_model_lines
from runner.suites.floweval.pair_labels import LabelFormatError, PairwiseLabel
from runner.suites.floweval.ranking import (
    METRIC_DIRECTIONS, Direction, Preferences, Ratings, agreement, median_ranking, prefer, spearman_of_rankings,
)
from runner.turns.packets import has_packet
from runner.turns.records import RunDirectory
from runner.suites.floweval.scoring import COMPLETION, METRICS

# What decides a metric's preference on a rated pair (module docstring).
PairValues = Literal["rated_sites", "generation_mean"]
# Raters that are not people (labels.py): left out of the human side.
MACHINE_RATERS = ("metric:", "mllm:")
# Column titles as Table 1 prints them.
TITLES = {"human": "Human", "dtw": "DTW", "ebleu": "eBLEU", "wmd": "WMD", "mllm": "MLLM", COMPLETION: "Completion"}


@dataclass
class Outputs:
    """Every slot's metric values, by (prompt, model)."""

    values: dict[tuple[str, str], list[dict[str, float]]] = field(default_factory=dict)
    # (prompt, model) -> (site id as the arena names it, slot folder) of every slot with a packet
    folders: dict[tuple[str, str], list[tuple[str, Path]]] = field(default_factory=dict)
    # site id (`<run dir>::<task>::<turn>`) -> (prompt, model, that slot's metric values)
    sites: dict[str, tuple[str, str, dict[str, float]]] = field(default_factory=dict)
    # (prompt, model) -> each slot's flows that did not complete (a slot without completion: None)
    incomplete: dict[tuple[str, str], list[list[str] | None]] = field(default_factory=dict)

    @property
    def models(self) -> set[str]:
        return {model for _, model in self.values}

    @property
    def prompts(self) -> set[str]:
        return {prompt for prompt, _ in self.values}

    def mean_value(self, prompt: str, model: str, metric: str) -> float | None:
        found = [slot[metric] for slot in self.values.get((prompt, model), []) if metric in slot]
        found = [value for value in found if not math.isnan(value)]
        return mean(found) if found else None

    def find_site(self, site: str) -> str | None:
        """The site id of the run dirs a label's site names: the same id, else the one slot at the same task and
        turn whose run dir has the same folder name (a relative path, or run dirs moved since labelling). None
        when there is no such slot, or more than one."""
        if site in self.sites:
            return site
        directory, _, rest = site.partition("::")
        name = Path(directory).name
        found = [known for known in self.sites
                 if known.partition("::")[2] == rest and name and Path(known.partition("::")[0]).name == name]
        return found[0] if len(found) == 1 else None

    def site_value(self, site: str, metric: str) -> float | None:
        """One generated site's metric value (None: unknown site, or its slot has no value)."""
        found = self.sites.get(site)
        value = found[2].get(metric) if found is not None else None
        return None if value is None or math.isnan(value) else value


def load_outputs(run_dirs: list[Path]) -> Outputs:
    """The FlowEval slots of the run dirs; their model is the record's `model`, else config.yaml `model.name`."""
    outputs = Outputs()
    for run_dir in run_dirs:
        run_dir = Path(run_dir).resolve()
        records_path = run_dir / RunDirectory.RECORDS
        if not records_path.is_file():
            raise ConfigError(f"{run_dir}: not a run directory (no {RunDirectory.RECORDS})")
        default_model = RunDirectory(run_dir).model_name()
        for record in RunDirectory(run_dir).load_records():
            if record.suite != "floweval":
                raise ConfigError(f"{records_path}: slot {record.task_id} turn {record.turn} is from suite "
                                  f"{record.suite!r}, not floweval")
            model = record.model or default_model
            if not model:
                raise ConfigError(f"{records_path}: slot {record.task_id} turn {record.turn} names no model "
                                  f"(`model` empty and no `model.name` in {RunDirectory.CONFIG})")
            scores = record.verdict.scores if record.verdict is not None else {}
            values = {name: float(scores[name]) for name in (*METRICS, COMPLETION) if name in scores}
            outputs.values.setdefault((record.task_id, model), []).append(values)
            reached = (record.verdict.raw or {}).get(COMPLETION) if record.verdict is not None else None
            outputs.incomplete.setdefault((record.task_id, model), []).append(
                list(reached.get("incomplete") or []) if isinstance(reached, dict) else None)
            outputs.sites[f"{run_dir}::{record.task_id}::{record.turn}"] = (record.task_id, model, values)
            if record.evidence_dir and has_packet(run_dir / record.evidence_dir):
                outputs.folders.setdefault((record.task_id, model), []).append(
                    (f"{run_dir}::{record.task_id}::{record.turn}", run_dir / record.evidence_dir))
    return outputs


def read_human_labels(path: Path, outputs: Outputs, *, rater: str | None = None) -> list[PairwiseLabel]:
    """The people's labels of the file (machine raters left out; only `rater` when given), each checked to
    name a prompt and two models the run dirs have outputs for (the error names file, line and field)."""
    labels = []
    for number, label in read_model_lines(Path(path), PairwiseLabel, error=LabelFormatError):
        if label.rater.startswith(MACHINE_RATERS) or (rater is not None and label.rater != rater):
            continue
        if label.prompt_id not in outputs.prompts:
            raise ConfigError(f"{path}:{number}: prompt_id {label.prompt_id!r} is in none of the run dirs "
                              f"(their prompts: {sorted(outputs.prompts)})")
        for name in ("model_a", "model_b"):
            model = getattr(label, name)
            if model not in outputs.models:
                raise ConfigError(f"{path}:{number}: {name} {model!r} is in none of the run dirs "
                                  f"(their models: {sorted(outputs.models)})")
            if (label.prompt_id, model) not in outputs.values:
                raise ConfigError(f"{path}:{number}: {name} {model!r} has no output for prompt "
                                  f"{label.prompt_id!r} in the run dirs")
        sites = {}
        for name, model in (("site_a", label.model_a), ("site_b", label.model_b)):
            site = getattr(label, name)
            if not site:
                continue
            known = outputs.find_site(site)
            if known is None or outputs.sites[known][:2] != (label.prompt_id, model):
                raise ConfigError(f"{path}:{number}: {name} {site!r} is no slot of model {model!r} on prompt "
                                  f"{label.prompt_id!r} in the run dirs (sites are <run dir>::<task>::<turn>)")
            sites[name] = known
        labels.append(label.model_copy(update=sites) if sites else label)
    if not labels:
        raise ConfigError(f"{path}: no human labels" + (f" by rater {rater!r}" if rater else ""))
    return labels


@dataclass
class Column:
    """One column of Table 1: a rater's Elo ratings and ranks and, for a metric, its figures against people."""

    name: str
    elo: dict[str, float]
    rank: dict[str, int]
    spearman_rho: float | None = None
    cohen_kappa: float | None = None
    agreement_rate: float | None = None
    pairs: int = 0  # human labels compared with a decision of this column
    excluded_ties: int = 0
    unassessed: int = 0  # compared pairs this metric could not decide (a value missing on either side)
    decided_by_mean: int = 0  # pairs decided on generation means (the label named no sites)


@dataclass
class MedianRow:
    """Appendix D (Table 2): a metric's median raw value per model, its ranking and rho vs the human ranking."""

    name: str
    direction: Direction
    median: dict[str, float]
    rank: dict[str, int]
    spearman_rho: float | None


@dataclass
class Completion:
    """A model's flow completion over its slots on the compared prompts (not the paper's: shown beside it)."""

    mean: float | None  # mean over slots of the fraction of the flows' steps performed
    slots: int  # slots with completion (scripted flows)
    incomplete: int  # of those, slots with a flow that stopped short


@dataclass
class Table:
    labels: int
    models: list[str]
    human: Column
    metrics: list[Column]
    medians: list[MedianRow]
    completion: dict[str, Completion] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def pair_preferences(outputs: Outputs, human: list[PairwiseLabel], metric: str, *,
                     pair_values: PairValues = "rated_sites") -> tuple[Preferences, int]:
    """A metric's binary label on every rated pair (module docstring), and how many were decided on
    generation means. Each distinct pair (of sites, or of models on a prompt) is decided once, in order."""
    if pair_values not in ("rated_sites", "generation_mean"):
        raise ValueError(f"pair_values={pair_values!r}: expected 'rated_sites' or 'generation_mean'")
    direction = METRIC_DIRECTIONS[metric]
    preferences, by_mean, seen = Preferences([]), 0, set()
    for label in human:
        on_sites = pair_values == "rated_sites" and bool(label.site_a and label.site_b)
        sites = (label.site_a, label.site_b) if on_sites else ("", "")
        key = (label.prompt_id, label.model_a, label.model_b, *sites)
        if key in seen:
            continue
        seen.add(key)
        if on_sites:
            value_a, value_b = outputs.site_value(label.site_a, metric), outputs.site_value(label.site_b, metric)
        else:
            value_a = outputs.mean_value(label.prompt_id, label.model_a, metric)
            value_b = outputs.mean_value(label.prompt_id, label.model_b, metric)
        if value_a is None or value_b is None:
            preferences.unassessed.append((label.prompt_id, label.model_a, label.model_b))
            continue
        by_mean += not on_sites
        preferences.labels.append(PairwiseLabel(
            prompt_id=label.prompt_id, model_a=label.model_a, model_b=label.model_b,
            winner=prefer(value_a, value_b, direction), rater=f"metric:{metric}", site_a=sites[0], site_b=sites[1]))
    return preferences, by_mean


def build_table(outputs: Outputs, human: list[PairwiseLabel], *, ratings: Ratings = "bradley_terry",
                include_ties: bool = False, median_directions: dict[str, Direction] | None = None,
                judge: tuple[list[PairwiseLabel], int] | None = None,
                pair_values: PairValues = "rated_sites") -> Table:
    """Table 1 (and Appendix D's medians) of the metrics against the human labels; `judge`: the MLLM
    judge's decisions and how many pairs it left unassessed, an extra column. `ratings`: how a column's
    decisions become ratings (runner.suites.floweval.ranking: Chiang et al.'s Bradley-Terry fit by default)."""
    human_column: Column | None = None
    columns = []
    for metric in METRICS:
        preferences, by_mean = pair_preferences(outputs, human, metric, pair_values=pair_values)
        figures = agreement(human, preferences.labels, include_ties=include_ties, ratings=ratings)
        if human_column is None:
            human_column = Column("human", figures.human_elo, figures.human_rank)
        columns.append(Column(metric, figures.other_elo, figures.other_rank, figures.spearman_rho,
                              figures.cohen_kappa, figures.agreement_rate, figures.pairs, figures.excluded_ties,
                              len(preferences.unassessed), by_mean))
    assert human_column is not None
    if judge is not None:
        decided, unassessed = judge
        figures = agreement(human, decided, include_ties=include_ties, ratings=ratings)
        columns.append(Column("mllm", figures.other_elo, figures.other_rank, figures.spearman_rho,
                              figures.cohen_kappa, figures.agreement_rate, figures.pairs, figures.excluded_ties,
                              unassessed))
    medians = []
    # Appendix D: "aggregated (median) across all model outputs ... on the comparison pairs rated": every
    # slot of a model on a prompt it was compared on, each counted once.
    compared = {(label.prompt_id, model) for label in human for model in (label.model_a, label.model_b)}
    completion = completion_by_model(outputs, compared)
    directions: dict[str, Direction] = {**METRIC_DIRECTIONS, COMPLETION: "higher"}
    for metric in (*METRICS, COMPLETION) if completion else METRICS:
        direction = (median_directions or {}).get(metric, directions[metric])
        slots = [(model, slot.get(metric)) for (prompt, model), found in sorted(outputs.values.items())
                 if (prompt, model) in compared for slot in found]
        median, ranks = median_ranking(slots, direction=direction)
        medians.append(MedianRow(metric, direction, median, ranks, spearman_of_rankings(human_column.rank, ranks)))
    models = sorted(human_column.elo, key=lambda m: (human_column.rank[m], m))
    return Table(len(human), models, human_column, columns, medians, completion)


def completion_by_model(outputs: Outputs, compared: set[tuple[str, str]]) -> dict[str, Completion]:
    """Each model's completion over its slots on the compared prompts; models with no scripted flows left out."""
    found: dict[str, tuple[list[float], int]] = {}
    for key, slots in sorted(outputs.values.items()):
        if key not in compared:
            continue
        for slot, incomplete in zip(slots, outputs.incomplete.get(key, [])):
            if COMPLETION not in slot:
                continue
            values, stopped = found.setdefault(key[1], ([], 0))
            values.append(slot[COMPLETION])
            found[key[1]] = (values, stopped + bool(incomplete))
    return {model: Completion(mean(values), len(values), stopped) for model, (values, stopped) in found.items()}


def _figure(value: float | None, *, percent: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.1f}%" if percent else f"{value:.2f}"


def render(table: Table) -> str:
    """Table 1's layout (models x raters: Elo (rank), then the agreement figures) and Table 2's medians."""
    columns = [table.human, *table.metrics]
    extra = [TITLES[COMPLETION]] if table.completion else []
    filler = ["-"] * len(extra)
    head = ["model", *(TITLES[c.name] for c in columns), *extra]
    rows = [head]
    for model in table.models:
        rows.append([model, *(f"{c.elo[model]:.0f} ({c.rank[model]})" if model in c.elo else "-" for c in columns),
                     *([completion_cell(table.completion.get(model))] if extra else [])])
    rows.append(["Spearman rho", "N/A", *(_figure(c.spearman_rho) for c in table.metrics), *filler])
    rows.append(["Cohen's kappa", "N/A", *(_figure(c.cohen_kappa) for c in table.metrics), *filler])
    rows.append(["Agreement rate", "N/A", *(_figure(c.agreement_rate, percent=True) for c in table.metrics), *filler])
    rows.append(["pairs compared", str(table.labels), *(str(c.pairs) for c in table.metrics), *filler])
    rows.append(["unassessed", "-", *(str(c.unassessed) for c in table.metrics), *filler])
    lines = [f"Table 1 (FlowEval §4.1): Elo (rank) on {table.labels} human labels", *_aligned(rows)]
    if extra:
        lines.append("Completion (not the paper's): mean share of the flows' steps performed over the compared "
                     "slots; 'k/n incomplete': slots with a flow that stopped short")
    lines.append("")
    arrows = {"lower": "(lower better)", "higher": "(higher better)"}
    medians = [["model", *(f"{TITLES[m.name]} {arrows[m.direction]}" for m in table.medians)]]
    for model in table.models:
        medians.append([model, *(f"{m.median[model]:.3f} ({m.rank[model]})" if model in m.median else "-"
                                 for m in table.medians)])
    medians.append(["Spearman rho vs human rank", *(_figure(m.spearman_rho) for m in table.medians)])
    lines += ["Appendix D (Table 2): median raw values (rank)", *_aligned(medians)]
    return "\n".join(lines) + "\n"


def completion_cell(found: Completion | None) -> str:
    """A model's completion as Table 1 prints it: '1.00' when every flow of every slot ran to its end, else the
    mean and how many slots stopped short ('0.83 (2/5 incomplete)'); '-' where no flow was scripted."""
    if found is None or found.mean is None:
        return "-"
    if not found.incomplete:
        return f"{found.mean:.2f}"
    return f"{found.mean:.2f} ({found.incomplete}/{found.slots} incomplete)"


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
