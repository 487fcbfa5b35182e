"""Arena rankings of FlowEval (§4, Table 1; Appendix D, Table 2): pairwise preferences to Elo ratings and
rankings, and how well a metric's ranking and preferences agree with people's.

- `metric_preferences`: a trace metric's values on the pairs people compared become binary preferences
  (§4.1 and Appendix D: "computed the reference-based metrics for each comparison pair and used that to
  create a binary label"): lower DTW / WMD is better, higher eBLEU is better; equal values are a tie.
- Ratings: FlowEval §4 "computed Elo ratings for each code generator model following existing approaches
  Chiang et al. (2024)". Chiang et al. 2024 (Chatbot Arena, §5) report the Bradley-Terry maximum-likelihood
  fit on the Elo scale (base 10, scale 400, the mean at 1000, a tie half a win for each side), not the online
  K = 4 Elo of the arena's early leaderboard, which moves a rating by at most 4 points a comparison: on ~430
  labels it spans about +-130, where FlowEval's Table 1 spans 776-1342 with a mean of 1000 in every column.
  So `bradley_terry_ratings` is the default (`ratings="bradley_terry"`); `elo_ratings` (online, in label
  order, K = 4) stays as `ratings="online_elo"`, and `bootstrap_elo` takes its median over seeded orders.
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

from runner.suites.floweval.pair_labels import PairwiseLabel, Winner

# Chiang et al. 2024 (Chatbot Arena), which FlowEval §4 follows for its Elo ratings.
INITIAL_RATING = 1000.0
K_FACTOR = 4.0
ELO_BASE = 10.0
ELO_SCALE = 400.0

# How pairwise decisions become ratings (module docstring): Chiang et al.'s fit, or online Elo.
Ratings = Literal["bradley_terry", "online_elo"]
RATINGS: tuple[str, ...] = ("bradley_terry", "online_elo")

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
    """Bradley-Terry maximum likelihood on the Elo scale, as Chiang et al. 2024 (Chatbot Arena, §5) compute
    their ratings: P(a beats b) = 1 / (1 + base^((R_b - R_a) / scale)); a win counts 1 for the winner, a tie
    1/2 for each side; the ratings are centred so their mean is `initial` (the fit fixes differences only).

    Unregularised logistic regression without intercept on +1/-1 model indicators, each pair's outcomes as
    weighted rows. A model that won (or lost) every comparison has no finite maximum; the solver then stops at
    a large finite rating, as the arena's own fit does.
    """
    models = sorted({m for label in labels for m in (label.model_a, label.model_b)})
    if not models:
        return {}
    index = {model: i for i, model in enumerate(models)}
    rows, outcomes, weights = [], [], []
    for label in labels:
        row = np.zeros(len(models))
        row[index[label.model_a]], row[index[label.model_b]] = 1.0, -1.0
        won_a = _score_a(label.winner)  # 1, 0 or 1/2
        # Each outcome also as seen from b's side (-x, 1 - y): the same likelihood term, so the fit is
        # unchanged, and both classes are always present, whatever the A/B order of the labels.
        for features, outcome, weight in ((row, 1, won_a), (row, 0, 1.0 - won_a), (-row, 0, won_a), (-row, 1, 1.0 - won_a)):
            if weight:
                rows.append(features)
                outcomes.append(outcome)
                weights.append(weight)
    fit = LogisticRegression(fit_intercept=False, C=math.inf, tol=1e-10, max_iter=10000)
    fit.fit(np.array(rows), outcomes, sample_weight=np.array(weights))
    coefficients = fit.coef_[0] - fit.coef_[0].mean()
    return {model: float(initial + scale * coefficients[i] / math.log(base)) for model, i in index.items()}


def rate(labels: Sequence[PairwiseLabel], ratings: Ratings = "bradley_terry") -> dict[str, float]:
    """Ratings of every model the labels compare, by the named method (module docstring)."""
    if ratings == "bradley_terry":
        return bradley_terry_ratings(labels)
    if ratings == "online_elo":
        return elo_ratings(labels)
    raise ValueError(f"ratings={ratings!r}: expected one of {list(RATINGS)}")


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


SiteKey = tuple[str, str, str, str, str]  # (prompt_id, model_a, model_b, site_a, site_b)


def _oriented_sites(label: PairwiseLabel) -> SiteKey | None:
    """The pair with the two sites shown, models in sorted order (None when the label names no sites)."""
    if not (label.site_a and label.site_b):
        return None
    if label.model_a <= label.model_b:
        return (label.prompt_id, label.model_a, label.model_b, label.site_a, label.site_b)
    return (label.prompt_id, label.model_b, label.model_a, label.site_b, label.site_a)


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
              ratings: Ratings = "bradley_terry") -> Agreement:
    """Human labels against another rater's preferences on the same pairs (FlowEval §4.1, Table 1).

    `ratings`: "bradley_terry" (Chiang et al. 2024's fit, the default) or "online_elo" (in label order,
    K = 4), for both sides.
    """
    human_elo, other_elo = rate(human, ratings), rate(other, ratings)
    # The other rater's decision on the very sites the person saw when both name them, else on the pair of
    # models for the prompt (the first decision of that pair).
    decided: dict[PairKey, Winner] = {}
    decided_on_sites: dict[SiteKey, Winner] = {}
    for label in other:
        key, winner = _oriented(label)
        decided.setdefault(key, winner)
        sites = _oriented_sites(label)
        if sites is not None:
            decided_on_sites.setdefault(sites, winner)
    pairs_h, pairs_o = [], []
    excluded = unmatched = 0
    for label in human:
        key, _ = _oriented(label)
        sites = _oriented_sites(label)
        if sites is not None and sites in decided_on_sites:
            found = decided_on_sites[sites]
        elif key in decided:
            found = decided[key]
        else:
            unmatched += 1
            continue
        winner = label.winner
        # The other rater's decision in this label's A/B order (the order the person saw).
        theirs = found if label.model_a <= label.model_b else _flip(found)
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
