"""FlowEval trace metrics (eq. 1-3) against hand-computed small cases and own reference computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment, linprog

from runner.suites.floweval.traces import dtw_distance, ebleu, length_penalty, soft_precisions, wmd_distance

E0 = [1.0, 0.0]
E1 = [0.0, 1.0]
DIAG = [1.0, 1.0]  # cosine 1/sqrt(2) to E0 and to E1


def _t(*rows: list[float]) -> np.ndarray:
    return np.array(rows, dtype=float).reshape(len(rows), 2) if rows else np.zeros((0, 2))


def _brute_dtw(ref: np.ndarray, gen: np.ndarray, radius: float) -> float:
    """Every monotone warping path enumerated (tiny sizes only); inf when none stays inside the band."""
    n, m = len(ref), len(gen)
    unit_r = ref / np.linalg.norm(ref, axis=1)[:, None]
    unit_g = gen / np.linalg.norm(gen, axis=1)[:, None]
    cost = 1.0 - unit_r @ unit_g.T
    best = math.inf

    def walk(i: int, j: int, total: float) -> None:
        nonlocal best
        if abs(i - j) > radius:
            return
        total += cost[i, j]
        if (i, j) == (n - 1, m - 1):
            best = min(best, total)
            return
        for di, dj in ((1, 0), (0, 1), (1, 1)):
            if i + di < n and j + dj < m:
                walk(i + di, j + dj, total)

    walk(0, 0, 0.0)
    return best


# --- DTW (eq. 1) -------------------------------------------------------------------------------


def test_dtw_identical_is_zero() -> None:
    trace = _t(E0, E1, DIAG, E0)
    assert dtw_distance(trace, trace) == pytest.approx(0.0)


def test_dtw_is_an_unnormalised_sum_of_cosine_distances() -> None:
    """ref (E0, E1), gen (DIAG): the only path (1,1),(2,1) costs 2 * (1 - 1/sqrt 2) = 2 - sqrt 2."""
    assert dtw_distance(_t(E0, E1), _t(DIAG), band_fraction=None) == pytest.approx(2 - math.sqrt(2))


def test_dtw_band_limit_is_ten_percent_of_the_reference_length() -> None:
    """n=10: radius 1. One extra step fits the band (cost 1: E1 against E0); two do not: DTW = n = 10."""
    ref = _t(*[E0] * 10)
    assert dtw_distance(ref, _t(*[E0] * 10, E1)) == pytest.approx(1.0)
    assert dtw_distance(ref, _t(*[E0] * 10, E1, E1)) == 10.0
    assert dtw_distance(ref, _t(*[E0] * 10, E1, E1), band_fraction=None) == pytest.approx(2.0)


def test_dtw_band_below_one_step_allows_only_the_diagonal() -> None:
    """n=2: radius 0.2, so unequal lengths have no valid warping (the reference length, 2)."""
    assert dtw_distance(_t(E0, E1), _t(DIAG)) == 2.0
    assert dtw_distance(_t(E0, E1), _t(DIAG, DIAG)) == pytest.approx(2 - math.sqrt(2))


def test_dtw_radius_of_thirty_steps_is_three() -> None:
    """0.1 * 30 in floating point is 3.0000000000000004; three extra steps still fit, four do not."""
    ref = _t(*[E0] * 30)
    assert dtw_distance(ref, _t(*[E0] * 30, E1, E1, E1)) == pytest.approx(3.0)
    assert dtw_distance(ref, _t(*[E0] * 30, E1, E1, E1, E1)) == 30.0


@pytest.mark.parametrize(("n", "m", "fraction"), [(3, 3, None), (4, 3, None), (3, 5, None), (5, 5, 0.2), (10, 9, 0.1)])
def test_dtw_equals_brute_force_over_all_paths(n: int, m: int, fraction: float | None) -> None:
    rng = np.random.default_rng(n * 10 + m)
    ref, gen = rng.normal(size=(n, 3)), rng.normal(size=(m, 3))
    radius = math.inf if fraction is None else fraction * n
    expected = _brute_dtw(ref, gen, radius)
    assert dtw_distance(ref, gen, band_fraction=fraction) == pytest.approx(expected)


def test_dtw_empty_traces() -> None:
    assert dtw_distance(_t(E0, E1, E0), _t()) == 3.0, "an empty generated trace has no warping: n"
    with pytest.raises(ValueError, match="reference trace is empty"):
        dtw_distance(_t(), _t(E0))


def test_dtw_zero_vectors_and_bad_shapes() -> None:
    zero = [0.0, 0.0]
    assert dtw_distance(_t(zero), _t(zero)) == 0.0
    assert dtw_distance(_t(zero), _t(E0)) == 1.0
    with pytest.raises(ValueError, match="dimensions differ"):
        dtw_distance(_t(E0), np.ones((1, 3)))
    with pytest.raises(ValueError, match="2-D"):
        dtw_distance(np.ones(3), _t(E0))


# --- eBLEU (eq. 2) -----------------------------------------------------------------------------


def test_ebleu_identical_is_one() -> None:
    trace = np.random.default_rng(0).normal(size=(6, 4))
    assert len(soft_precisions(trace, trace)) == 4, "k-grams up to 4"
    assert ebleu(trace, trace) == pytest.approx(1.0)


def test_ebleu_soft_precisions_by_hand() -> None:
    """ref (E0, E1), gen (E0, E0): P1 = 1, the bigram (E0,E0)~(E0,E1) = mean(1, 0) = 0.5; sqrt(0.5)."""
    assert soft_precisions(_t(E0, E1), _t(E0, E0)) == pytest.approx([1.0, 0.5])
    assert ebleu(_t(E0, E1), _t(E0, E0)) == pytest.approx(math.sqrt(0.5))
    assert ebleu(_t(E0), _t(DIAG)) == pytest.approx(1 / math.sqrt(2))


def test_ebleu_clips_negative_similarity_to_zero() -> None:
    assert soft_precisions(_t(E0), _t([-1.0, 0.0])) == [0.0]
    assert ebleu(_t(E0), _t([-1.0, 0.0])) == 0.0


def test_ebleu_length_penalty_beyond_fifty_percent() -> None:
    assert length_penalty(3, 2) == 1.0 and length_penalty(2, 4) == 1.0, "within 50% of the reference"
    assert ebleu(_t(E0, E0), _t(E0, E0, E0, E0)) == pytest.approx(math.exp(-1)), "4 vs 2: exp(1 - 4/2)"
    assert ebleu(_t(E0, E0, E0, E0), _t(E0)) == pytest.approx(math.exp(-3)), "1 vs 4: exp(1 - 4/1)"
    assert ebleu(_t(E0, E0, E0, E0), _t(E0, E0)) == pytest.approx(1.0)


def test_ebleu_empty_traces() -> None:
    assert ebleu(_t(E0), _t()) == 0.0
    with pytest.raises(ValueError, match="reference trace is empty"):
        ebleu(_t(), _t(E0))


# --- WMD (eq. 3) -------------------------------------------------------------------------------


def test_wmd_two_by_two_by_hand() -> None:
    """(0,0),(1,0) to (0,1),(1,1): straight up, 1/2 * 1 + 1/2 * 1 = 1 (crossing costs sqrt 2 each)."""
    assert wmd_distance(_t([0, 0], [1, 0]), _t([0, 1], [1, 1])) == pytest.approx(1.0)


def test_wmd_unequal_lengths_by_hand() -> None:
    """All mass at the origin, half of it to (3,4): 1/2 * 5 = 2.5."""
    assert wmd_distance(_t([0, 0]), _t([3, 4], [0, 0])) == pytest.approx(2.5)


def test_wmd_identical_is_zero_and_empty_raises() -> None:
    trace = _t(E0, E1, DIAG)
    assert wmd_distance(trace, trace) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="empty generated trace"):
        wmd_distance(trace, _t())


def test_wmd_equals_assignment_for_equal_lengths() -> None:
    """Uniform masses on equal sizes: the optimal plan is a permutation (Birkhoff), mean assigned cost."""
    rng = np.random.default_rng(3)
    ref, gen = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    cost = np.linalg.norm(ref[:, None, :] - gen[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(cost)
    assert wmd_distance(ref, gen) == pytest.approx(cost[rows, cols].mean())


def test_wmd_equals_linear_program_for_unequal_lengths() -> None:
    rng = np.random.default_rng(4)
    ref, gen = rng.normal(size=(2, 3)), rng.normal(size=(3, 3))
    cost = np.linalg.norm(ref[:, None, :] - gen[None, :, :], axis=2)
    n, m = cost.shape
    rows = [np.kron(np.eye(n)[i], np.ones(m)) for i in range(n)]
    cols = [np.kron(np.ones(n), np.eye(m)[j]) for j in range(m)]
    bounds = list(itertools.repeat((0, None), n * m))
    result = linprog(cost.ravel(), A_eq=np.array(rows + cols), b_eq=[1 / n] * n + [1 / m] * m, bounds=bounds)
    assert wmd_distance(ref, gen) == pytest.approx(result.fun)
