"""Arena rankings of FlowEval (§4, Table 1; Appendix D, Table 2): pairwise preferences to Elo ratings and
rankings, and how well a metric's ranking and preferences agree with people's.

- `metric_preferences`: a trace metric's values on the pairs people compared become binary preferences
  (§4.1 and Appendix D: "computed the reference-based metrics for each comparison pair and used that to
  create a binary label"): lower DTW / WMD is better, higher eBLEU is better; equal values are a tie.
- `elo_ratings`: online Elo over the preferences in order, as the arena approach FlowEval §4 follows
  (Chiang et al. 2024): initial rating 1000, K = 4, logistic base 10 and scale 400, a tie half a win for
  each side. `bootstrap_elo` takes the median over seeded random orders (online Elo depends on the order).
  `bradley_terry_ratings` is the order-free maximum-likelihood alternative of the same approach, on the
  same scale.
- `agreement`: Table 1's three figures: Spearman rho between the two Elo rankings (scipy), Cohen's kappa
  (scikit-learn) and the agreement rate of the preferences on the same pairs. The rate is "binary" (§4.1):
  pairs where either side is a tie are left out (counted in `excluded_ties`), unless include_ties.
- `median_ranking`: Appendix D's raw ranking: each model's median metric value over its outputs, sorted.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy.stats import rankdata, spearmanr
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score

from runner.metrics.labels import PairwiseLabel, Winner

# Chiang et al. 2024 (Chatbot Arena), which FlowEval §4 follows for its Elo ratings.
INITIAL_RATING = 1000.0
K_FACTOR = 4.0
ELO_BASE = 10.0
ELO_SCALE = 400.0

Direction = Literal["lower", "higher"]
# Which values are better (FlowEval §3.3: DTW and WMD are distances, eBLEU a similarity).
METRIC_DIRECTIONS: dict[str, Direction] = {"dtw": "lower", "wmd": "lower", "ebleu": "higher"}

PairKey = tuple[str, str, str]  # (prompt_id, model_a, model_b)


def _score_a(winner: Winner) -> float:
    return {"a": 1.0, "b": 0.0, "tie": 0.5}[winner]


def elo_ratings(labels: Iterable[PairwiseLabel], *, k: float = K_FACTOR, initial: float = INITIAL_RATING,
                base: float = ELO_BASE, scale: float = ELO_SCALE) -> dict[str, float]:
    """Online Elo over `labels` in order; every model seen starts at `initial`."""
    ratings: dict[str, float] = {}
    for label in labels:
        ra = ratings.setdefault(label.model_a, initial)
        rb = ratings.setdefault(label.model_b, initial)
        expected_a = 1.0 / (1.0 + base ** ((rb - ra) / scale))
        delta = k * (_score_a(label.winner) - expected_a)
        ratings[label.model_a] = ra + delta
        ratings[label.model_b] = rb - delta
    return ratings


def bootstrap_elo(labels: Sequence[PairwiseLabel], *, rounds: int = 1000, seed: int = 0,
                  **elo: float) -> dict[str, float]:
    """The median online-Elo rating of each model over `rounds` seeded random orders of the labels."""
    rng = random.Random(seed)
    samples: dict[str, list[float]] = defaultdict(list)
    order = list(labels)
    for _ in range(rounds):
        rng.shuffle(order)
        for model, rating in elo_ratings(order, **elo).items():
            samples[model].append(rating)
    return {model: statistics.median(values) for model, values in samples.items()}


def bradley_terry_ratings(labels: Sequence[PairwiseLabel], *, initial: float = INITIAL_RATING,
                          base: float = ELO_BASE, scale: float = ELO_SCALE) -> dict[str, float]:
    """Bradley-Terry maximum likelihood on the Elo scale (a tie counts as one win for each side).

    Unregularised logistic regression without intercept on +1/-1 model indicators; the coefficients are
    log-odds, rescaled to `scale` per factor `base` and shifted so the first model in sorted order keeps
    `initial` (the scale's anchor is arbitrary in Bradley-Terry).
    """
    models = sorted({m for label in labels for m in (label.model_a, label.model_b)})
    index = {model: i for i, model in enumerate(models)}
    rows, outcomes = [], []
    for label in labels:
        row = np.zeros(len(models))
        row[index[label.model_a]], row[index[label.model_b]] = 1.0, -1.0
        results = [1, 0] if label.winner == "tie" else [1 if label.winner == "a" else 0]
        for result in results:
            rows.append(row)
            outcomes.append(result)
    if len(set(outcomes)) < 2:
        raise ValueError("Bradley-Terry needs at least one win for each side of the pairs (or a tie)")
    fit = LogisticRegression(fit_intercept=False, C=math.inf, tol=1e-10, max_iter=10000).fit(np.array(rows), outcomes)
    coefficients = fit.coef_[0]
    return {model: float(initial + scale * (coefficients[i] - coefficients[0]) / math.log(base))
            for model, i in index.items()}


def rank(ratings: Mapping[str, float], *, higher_is_better: bool = True) -> dict[str, int]:
    """1 for the best; equal values share the best of their ranks."""
    models = list(ratings)
    values = np.array([ratings[m] for m in models], dtype=float)
    ranks = rankdata(-values if higher_is_better else values, method="min")
    return {model: int(r) for model, r in zip(models, ranks)}


def prefer(value_a: float, value_b: float, direction: Direction) -> Winner:
    """The winner by a metric value (equal values: a tie)."""
    if value_a == value_b:
        return "tie"
    a_better = value_a < value_b if direction == "lower" else value_a > value_b
    return "a" if a_better else "b"


@dataclass
class Preferences:
    labels: list[PairwiseLabel]
    unassessed: list[PairKey] = field(default_factory=list)  # pairs with a missing value on either side


def metric_preferences(pairs: Iterable[PairwiseLabel | PairKey], values: Mapping[tuple[str, str], float | None],
                       *, metric: str, direction: Direction | None = None) -> Preferences:
    """A metric's preference on each pair (prompt, model a, model b), from values keyed (prompt, model).

    A pair whose value is missing (None or absent) on either side gets no preference: it is listed in
    `unassessed`, never decided. Each distinct pair is decided once, in first-seen order.
    """
    chosen = direction or METRIC_DIRECTIONS.get(metric)
    if chosen is None:
        raise ValueError(f"metric {metric!r}: give direction='lower' or 'higher' (known: {sorted(METRIC_DIRECTIONS)})")
    decided, unassessed, seen = [], [], set()
    for pair in pairs:
        key: PairKey = (pair.prompt_id, pair.model_a, pair.model_b) if isinstance(pair, PairwiseLabel) else pair
        if key in seen:
            continue
        seen.add(key)
        prompt, model_a, model_b = key
        value_a, value_b = values.get((prompt, model_a)), values.get((prompt, model_b))
        if value_a is None or value_b is None or math.isnan(value_a) or math.isnan(value_b):
            unassessed.append(key)
            continue
        decided.append(PairwiseLabel(prompt_id=prompt, model_a=model_a, model_b=model_b,
                                     winner=prefer(value_a, value_b, chosen), rater=f"metric:{metric}"))
    return Preferences(decided, unassessed)


def _flip(winner: Winner) -> Winner:
    flipped: dict[str, Winner] = {"a": "b", "b": "a", "tie": "tie"}
    return flipped[winner]


def _oriented(label: PairwiseLabel) -> tuple[PairKey, Winner]:
    """The pair with its models in sorted order, and the winner in that order (a, b swapped if needed)."""
    if label.model_a <= label.model_b:
        return (label.prompt_id, label.model_a, label.model_b), label.winner
    return (label.prompt_id, label.model_b, label.model_a), _flip(label.winner)


@dataclass
class Agreement:
    """Table 1's figures for one metric (or judge) against the human labels."""

    spearman_rho: float | None  # None with fewer than two common models or a constant ranking
    cohen_kappa: float | None
    agreement_rate: float | None  # None when no pair is decided by both
    pairs: int  # human labels compared (each rater's label counts once)
    excluded_ties: int
    unmatched: int  # human labels on a pair the other side did not decide
    human_elo: dict[str, float]
    other_elo: dict[str, float]
    human_rank: dict[str, int]
    other_rank: dict[str, int]


def agreement(human: Sequence[PairwiseLabel], other: Sequence[PairwiseLabel], *, include_ties: bool = False,
              ratings: Literal["elo", "bradley_terry"] = "elo") -> Agreement:
    """Human labels against another rater's preferences on the same pairs (FlowEval §4.1, Table 1).

    `ratings`: "elo" (online Elo in label order) or "bradley_terry", for both sides.
    """
    rate = {"elo": elo_ratings, "bradley_terry": bradley_terry_ratings}[ratings]
    human_elo, other_elo = rate(human), rate(other)
    decided = dict(_oriented(label) for label in other)
    pairs_h, pairs_o = [], []
    excluded = unmatched = 0
    for label in human:
        key, _ = _oriented(label)
        if key not in decided:
            unmatched += 1
            continue
        winner = label.winner
        # The other rater's decision in this label's A/B order (the order the person saw).
        theirs = decided[key] if label.model_a <= label.model_b else _flip(decided[key])
        if not include_ties and "tie" in (winner, theirs):
            excluded += 1
            continue
        pairs_h.append(winner)
        pairs_o.append(theirs)
    kappa = rate_value = None
    if pairs_h:
        rate_value = sum(h == o for h, o in zip(pairs_h, pairs_o)) / len(pairs_h)
        kappa = _kappa(pairs_h, pairs_o)
    common = sorted(set(human_elo) & set(other_elo))
    return Agreement(
        spearman_rho=_spearman([human_elo[m] for m in common], [other_elo[m] for m in common]),
        cohen_kappa=kappa, agreement_rate=rate_value, pairs=len(pairs_h), excluded_ties=excluded,
        unmatched=unmatched, human_elo=human_elo, other_elo=other_elo,
        human_rank=rank(human_elo), other_rank=rank(other_elo),
    )


def _kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa; None where it is undefined (both raters always gave the one same label)."""
    if len(set(a) | set(b)) < 2:
        return None
    return float(cohen_kappa_score(a, b))


def _spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    return float(spearmanr(x, y).statistic)


def median_ranking(values: Iterable[tuple[str, float | None]], *, direction: Direction) -> tuple[dict[str, float], dict[str, int]]:
    """Appendix D: each model's median raw metric value over its outputs, and the ranking of those medians.

    `values`: (model, value) per output; missing values (None, NaN) are left out. Note that Table 2 lists
    eBLEU with "lower is better" (↓); pass direction="lower" to reproduce that ordering.
    """
    by_model: dict[str, list[float]] = defaultdict(list)
    for model, value in values:
        if value is not None and not math.isnan(value):
            by_model[model].append(float(value))
    medians = {model: statistics.median(found) for model, found in by_model.items()}
    return medians, rank(medians, higher_is_better=direction == "higher")


def spearman_of_rankings(reference: Mapping[str, int], other: Mapping[str, int]) -> float | None:
    """Spearman rho between two rankings over their common models (Appendix D: medians vs human Elo rank)."""
    common = sorted(set(reference) & set(other))
    return _spearman([reference[m] for m in common], [other[m] for m in common])
