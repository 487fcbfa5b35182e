"""FlowEval §4 / Appendix D figures on a small hand-made labels file, against hand-computed values."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from runner.suites.floweval.pair_labels import LabelFormatError, PairwiseLabel, append_label, read_labels
from runner.suites.floweval.ranking import (
    agreement,
    bootstrap_elo,
    bradley_terry_ratings,
    elo_ratings,
    median_ranking,
    metric_preferences,
    prefer,
    rank,
    spearman_of_rankings,
)

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[3]
# WMD per (prompt, model) on the pairs of labels_small.jsonl (lower is better).
WMD = {("p1", "A"): 0.2, ("p1", "B"): 0.5, ("p1", "C"): 0.4, ("p2", "A"): 0.1, ("p2", "B"): 0.1,
       ("p2", "C"): 0.3, ("p3", "B"): 0.6, ("p3", "C"): 0.2}


@pytest.fixture
def human() -> list[PairwiseLabel]:
    return read_labels(FIXTURES / "labels_small.jsonl")


def test_labels_file_reads_in_order(human: list[PairwiseLabel]) -> None:
    assert [(x.prompt_id, x.winner_model) for x in human] == [("p1", "A"), ("p1", "B"), ("p2", "A"), ("p2", None),
                                                               ("p3", "B")]


def test_shipped_example_is_valid() -> None:
    labels = read_labels(REPO / "tasks" / "floweval" / "labels.example.jsonl")
    assert len(labels) >= 3 and {x.winner for x in labels} == {"a", "b", "tie"}


def test_bad_label_lines_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"prompt_id": "p", "model_a": "A", "model_b": "B", "winner": "a", "rater": "r"}\n'
                    '{"prompt_id": "p", "model_a": "A", "model_b": "B", "winner": "left", "rater": "r"}\n')
    with pytest.raises(LabelFormatError, match=r"(?s)labels.jsonl:2: .*winner = 'left'"):
        read_labels(path)
    path.write_text('{"prompt_id": "p", "model_a": "A", "model_b": "A", "winner": "a", "rater": "r"}\n')
    with pytest.raises(LabelFormatError, match="both 'A'"):
        read_labels(path)


def test_append_label_round_trips(tmp_path: Path) -> None:
    label = PairwiseLabel(prompt_id="p", model_a="A", model_b="B", winner="tie", rater="r", site_a="run1::p::1")
    append_label(tmp_path / "l.jsonl", label)
    append_label(tmp_path / "l.jsonl", label)
    assert read_labels(tmp_path / "l.jsonl") == [label, label]


def test_online_elo_by_hand(human: list[PairwiseLabel]) -> None:
    """K=4, 1000 each: A beats B at even odds (+2/-2); then B (998) beats C (1000):
    E_B = 1 / (1 + 10^(2/400)) = 0.4971216, B += 4 * 0.5028784 = 2.0115136."""
    assert elo_ratings(human[:1]) == {"A": 1002.0, "B": 998.0}
    after_two = elo_ratings(human[:2])
    assert after_two["B"] == pytest.approx(1000.0115136, abs=1e-6)
    assert after_two["C"] == pytest.approx(997.9884864, abs=1e-6)
    final = elo_ratings(human)
    assert sum(final.values()) == pytest.approx(3000.0), "Elo is zero-sum"
    assert rank(final) == {"A": 1, "B": 2, "C": 3}


def test_bootstrap_elo_is_seeded(human: list[PairwiseLabel]) -> None:
    first = bootstrap_elo(human, rounds=50, seed=7)
    assert first == bootstrap_elo(human, rounds=50, seed=7)
    assert rank(first)["A"] == 1


def _labels(games: list[tuple[str, str, str]]) -> list[PairwiseLabel]:
    return [PairwiseLabel(prompt_id=f"p{i}", model_a=a, model_b=b, winner=w, rater="r")  # type: ignore[arg-type]
            for i, (a, b, w) in enumerate(games)]


def test_bradley_terry_by_hand() -> None:
    """Chiang et al. 2024's fit, the ratings' mean at 1000. A beats B 3 times, B beats A once: P(A) = 3/4,
    so R_A - R_B = 400 log10 3 = 190.85: A 1095.42, B 904.58."""
    ratings = bradley_terry_ratings(_labels([("A", "B", "a")] * 3 + [("B", "A", "a")]))
    assert ratings["A"] == pytest.approx(1000 + 200 * math.log10(3), abs=1e-3)
    assert ratings["B"] == pytest.approx(1000 - 200 * math.log10(3), abs=1e-3)
    # A tie is half a win for each side: 2 wins, 1 loss, 1 tie: P(A) = 2.5 / 4, R_A - R_B = 400 log10(5/3).
    tied = bradley_terry_ratings(_labels([("A", "B", "a"), ("A", "B", "a"), ("A", "B", "b"), ("A", "B", "tie")]))
    assert tied["A"] - tied["B"] == pytest.approx(400 * math.log10(5 / 3), abs=1e-3)


def test_bradley_terry_three_models_by_hand() -> None:
    """Odds A:B = 2:1, B:C = 2:1, A:C = 4:1 are consistent, so the fit matches every pair exactly:
    R_A - R_B = R_B - R_C = 400 log10 2 = 120.41; mean 1000: A 1120.41, B 1000, C 879.59. The labels'
    A/B order does not matter (every label here names the winner as model_a)."""
    games = [("A", "B", "a")] * 2 + [("B", "A", "a")] + [("B", "C", "a")] * 2 + [("C", "B", "a")]
    games += [("A", "C", "a")] * 4 + [("C", "A", "a")]
    ratings = bradley_terry_ratings(_labels(games))
    step = 400 * math.log10(2)
    assert ratings == pytest.approx({"A": 1000 + step, "B": 1000.0, "C": 1000 - step}, abs=1e-3)


def test_the_default_rating_is_bradley_terry_not_online_elo() -> None:
    """The same three-model set through `agreement` (Table 1's path): the default gives the fit above, whose
    spread (240.8) online K = 4 Elo cannot reach on 12 comparisons (it moves at most 4 points each)."""
    games = [("A", "B", "a")] * 2 + [("B", "A", "a")] + [("B", "C", "a")] * 2 + [("C", "B", "a")]
    games += [("A", "C", "a")] * 4 + [("C", "A", "a")]
    labels = _labels(games)
    default = agreement(labels, labels)
    assert default.human_elo["A"] - default.human_elo["C"] == pytest.approx(800 * math.log10(2), abs=1e-3)
    online = agreement(labels, labels, ratings="online_elo")
    assert online.human_elo == pytest.approx(elo_ratings(labels))
    assert max(online.human_elo.values()) - min(online.human_elo.values()) < 4 * len(labels)
    with pytest.raises(ValueError, match="ratings='elo'"):
        agreement(labels, labels, ratings="elo")  # type: ignore[arg-type]


def test_metric_values_to_preferences(human: list[PairwiseLabel]) -> None:
    prefs = metric_preferences(human, WMD, metric="wmd")
    assert [(x.model_a, x.model_b, x.winner) for x in prefs.labels] == [
        ("A", "B", "a"), ("B", "C", "b"), ("A", "C", "a"), ("A", "B", "tie"), ("C", "B", "a")]
    assert {x.rater for x in prefs.labels} == {"metric:wmd"}
    ebleu = metric_preferences([("p1", "A", "B")], {("p1", "A"): 0.2, ("p1", "B"): 0.5}, metric="ebleu")
    assert ebleu.labels[0].winner == "b", "higher eBLEU is better"
    missing = metric_preferences([("p1", "A", "B"), ("p1", "A", "C")], {("p1", "A"): 0.2, ("p1", "B"): None},
                                 metric="dtw")
    assert missing.labels == [] and missing.unassessed == [("p1", "A", "B"), ("p1", "A", "C")]
    assert prefer(1.0, 1.0, "lower") == "tie"
    with pytest.raises(ValueError, match="direction"):
        metric_preferences([], {}, metric="bleu")


def test_table1_figures_by_hand(human: list[PairwiseLabel]) -> None:
    """Pairs in the human's A/B order: human a, a, a, tie, b; WMD a, b, a, tie, a.
    Binary: the tie pair is left out; agreement 2/4. Kappa on (a,a,a,b) vs (a,b,a,a): p_o = 1/2,
    p_e = 3/4 * 3/4 + 1/4 * 1/4 = 5/8, kappa = (1/2 - 5/8) / (3/8) = -1/3.
    Elo ranks: human A, B, C; WMD A, C, B: d^2 = 0 + 1 + 1, rho = 1 - 6 * 2 / (3 * 8) = 0.5."""
    result = agreement(human, metric_preferences(human, WMD, metric="wmd").labels)
    assert result.pairs == 4 and result.excluded_ties == 1 and result.unmatched == 0
    assert result.agreement_rate == pytest.approx(0.5)
    assert result.cohen_kappa == pytest.approx(-1 / 3)
    assert result.human_rank == {"A": 1, "B": 2, "C": 3}
    assert result.other_rank == {"A": 1, "C": 2, "B": 3}
    assert result.spearman_rho == pytest.approx(0.5)
    with_ties = agreement(human, metric_preferences(human, WMD, metric="wmd").labels, include_ties=True)
    assert with_ties.pairs == 5 and with_ties.agreement_rate == pytest.approx(3 / 5)


def test_agreement_matches_pairs_in_either_order(human: list[PairwiseLabel]) -> None:
    """The same decisions with A and B swapped in the other rater's file agree just as well."""
    flipped = [PairwiseLabel(prompt_id=x.prompt_id, model_a=x.model_b, model_b=x.model_a,
                             winner={"a": "b", "b": "a", "tie": "tie"}[x.winner], rater="m") for x in human]
    result = agreement(human, flipped)
    assert result.agreement_rate == 1.0 and result.cohen_kappa == pytest.approx(1.0)


def test_median_ranking_appendix_d() -> None:
    """X: median of 1, 2, 3 = 2; Y: of 0.5, 4 = 2.25; Z: 1.5 (the missing value is left out). Lower first."""
    values = [("X", 1.0), ("X", 2.0), ("X", 3.0), ("Y", 0.5), ("Y", 4.0), ("Z", None), ("Z", 1.5)]
    medians, ranks = median_ranking(values, direction="lower")
    assert medians == {"X": 2.0, "Y": 2.25, "Z": 1.5}
    assert ranks == {"Z": 1, "X": 2, "Y": 3}
    assert median_ranking(values, direction="higher")[1] == {"Y": 1, "X": 2, "Z": 3}
    # against a reference ranking Z, Y, X: d = 0, 1, 1 -> rho = 0.5
    assert spearman_of_rankings({"Z": 1, "Y": 2, "X": 3}, ranks) == pytest.approx(0.5)
