"""Trace similarity metrics of FlowEval (§3.3): DTW (eq. 1), eBLEU (eq. 2) and WMD (eq. 3).

A trace is a sequence of step embeddings, a numpy array of shape (steps, dim) (FlowEval §3.3,
"Featurization"). Every function takes the reference trace first and the generated trace second.

Best values: a trace compared with itself gives DTW 0, eBLEU 1 and WMD 0. DTW and WMD are distances
(lower is better), eBLEU a similarity (higher is better).

Empty traces (the paper does not say; the choices here):
- an empty *reference* trace is an error for every metric: there is nothing to compare against;
- an empty *generated* trace has no valid warping, so DTW is the reference length (eq. 1's fallback);
  it has no candidate n-grams, so eBLEU is 0 (BLEU's convention for a zero precision); WMD is undefined
  (no mass to transport) and raises, so a caller decides explicitly how to count it.

Zero vectors have no direction: their cosine distance is taken as 0 to another zero vector and 1 to any
other vector (similarity 1 and 0), instead of scipy's NaN.
"""

from __future__ import annotations

import math

import numpy as np

# FlowEval §3.3.1: "Sakoe-Chiba bands of 10% of the reference trace length".
DEFAULT_BAND_FRACTION = 0.1
# FlowEval §3.3.2: "k-grams up to length 4", following eBLEU.
DEFAULT_MAX_N = 4
# FlowEval §3.3.2: the length penalty applies to "sequences with over a 50% difference in length".
LENGTH_TOLERANCE = 0.5


def _trace(value: np.ndarray, name: str) -> np.ndarray:
    """Validate one trace: a finite 2-D float array (steps, dim)."""
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} trace must be a 2-D array (steps, dim), got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} trace holds non-finite values")
    return array


def _pair(ref: np.ndarray, gen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate a (reference, generated) pair: same embedding dimension, a non-empty reference."""
    ref_array, gen_array = _trace(ref, "reference"), _trace(gen, "generated")
    if ref_array.shape[0] == 0:
        raise ValueError("the reference trace is empty: there is nothing to compare against")
    if gen_array.shape[0] and ref_array.shape[1] != gen_array.shape[1]:
        raise ValueError(
            f"embedding dimensions differ: reference {ref_array.shape[1]}, generated {gen_array.shape[1]}"
        )
    return ref_array, gen_array


def _unit_rows(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows scaled to unit length, and a mask of the rows that were zero vectors."""
    norms = np.linalg.norm(array, axis=1)
    zero = norms == 0.0
    return array / np.where(zero, 1.0, norms)[:, None], zero


def cosine_similarity_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity, shape (len(a), len(b)); zero vectors as in the module docstring."""
    unit_a, zero_a = _unit_rows(a)
    unit_b, zero_b = _unit_rows(b)
    similarity = np.clip(unit_a @ unit_b.T, -1.0, 1.0)
    similarity[zero_a[:, None] & zero_b[None, :]] = 1.0
    return similarity


def dtw_distance(ref: np.ndarray, gen: np.ndarray, band_fraction: float | None = DEFAULT_BAND_FRACTION) -> float:
    """DTW with cosine cost inside a Sakoe-Chiba band (FlowEval eq. 1, §3.3.1).

    Returns the minimal *sum* of cosine distances c(x_i, y_j) = 1 - cos(x_i, y_j) over the cells of a
    warping path from (1, 1) to (n, m) with steps (1, 0), (0, 1), (1, 1); eq. 1 does not normalise by the
    path length. The band keeps cells with |i - j| <= band_fraction * n, n the reference length (not
    rescaled to the diagonal of an n x m grid, so traces whose lengths differ by more than the band have
    no valid warping). Without a valid warping the value is n, the reference length (§3.3.1).
    band_fraction=None switches the band off (a deviation from the paper, for diagnostics).
    """
    ref_array, gen_array = _pair(ref, gen)
    n, m = ref_array.shape[0], gen_array.shape[0]
    if m == 0:
        return float(n)
    if band_fraction is not None and band_fraction < 0:
        raise ValueError(f"band_fraction must be >= 0 or None, got {band_fraction}")
    # Rounded so that 10% of 30 steps is a radius of 3, not 2.9999999999999996.
    radius = math.inf if band_fraction is None else round(band_fraction * n, 9)
    cost = (1.0 - cosine_similarity_matrix(ref_array, gen_array)).tolist()
    # previous[j], current[j]: the cheapest path to cell (i-1, j-1) of rows i-1 and i; index 0 is the virtual
    # start. Python floats in lists: the recursion is cell by cell, where numpy scalar indexing costs ~10x.
    previous = [0.0] + [math.inf] * m
    for i in range(1, n + 1):
        lo = max(1, math.ceil(i - radius)) if radius != math.inf else 1
        hi = min(m, math.floor(i + radius)) if radius != math.inf else m
        current = [math.inf] * (m + 1)
        row = cost[i - 1]
        for j in range(lo, hi + 1):
            current[j] = row[j - 1] + min(previous[j], current[j - 1], previous[j - 1])
        previous = current
    total = previous[m]
    return float(n) if math.isinf(total) else float(total)


def _ngram_similarity(step_similarity: np.ndarray, k: int) -> np.ndarray:
    """Similarity of every candidate k-gram to every reference k-gram, shape (c-k+1, r-k+1).

    A k-gram is the concatenation of its k unit-length step vectors; the cosine of two such
    concatenations is the mean of the k per-step cosines, computed here from the step matrix.
    """
    rows, cols = step_similarity.shape[0] - k + 1, step_similarity.shape[1] - k + 1
    total = np.zeros((rows, cols))
    for offset in range(k):
        total += step_similarity[offset : offset + rows, offset : offset + cols]
    return total / k


def length_penalty(candidate_len: int, reference_len: int) -> float:
    """b of FlowEval eq. 2: 1 within a 50% length difference, BLEU's exponential penalty beyond it.

    The difference is relative to the reference length; beyond the tolerance b = exp(1 - L/l), L the
    longer and l the shorter length, so both too short and too long candidates are penalised (a soft
    precision alone does not penalise a candidate that repeats matching steps).
    """
    if candidate_len == 0:
        return 0.0
    if abs(candidate_len - reference_len) <= LENGTH_TOLERANCE * reference_len:
        return 1.0
    longer, shorter = max(candidate_len, reference_len), min(candidate_len, reference_len)
    return math.exp(1.0 - longer / shorter)


def soft_precisions(ref: np.ndarray, gen: np.ndarray, max_n: int = DEFAULT_MAX_N) -> list[float]:
    """P_k(x, y) for k = 1..min(max_n, len(gen), len(ref)) (FlowEval eq. 2).

    P_k is the mean, over the generated (candidate) trace's k-grams, of the maximum similarity to any
    reference k-gram, each similarity clipped to [0, 1] (a negative cosine counts as no match).
    """
    ref_array, gen_array = _pair(ref, gen)
    if max_n < 1:
        raise ValueError(f"max_n must be >= 1, got {max_n}")
    if gen_array.shape[0] == 0:
        return []
    step_similarity = cosine_similarity_matrix(gen_array, ref_array)
    orders = min(max_n, gen_array.shape[0], ref_array.shape[0])
    precisions = []
    for k in range(1, orders + 1):
        similarity = np.clip(_ngram_similarity(step_similarity, k), 0.0, 1.0)
        precisions.append(float(similarity.max(axis=1).mean()))
    return precisions


def ebleu(ref: np.ndarray, gen: np.ndarray, max_n: int = DEFAULT_MAX_N) -> float:
    """eBLEU of a generated trace against a reference trace (FlowEval eq. 2, §3.3.2).

    b * exp(sum_k w_k log P_k) with uniform weights w_k. Orders longer than either trace have no k-grams;
    they are left out and the weights spread uniformly over the orders that exist (a short flow would
    otherwise always score 0). Any zero precision gives 0, as in BLEU. Range [0, 1]; identical traces
    give 1.
    """
    ref_array, gen_array = _pair(ref, gen)
    precisions = soft_precisions(ref_array, gen_array, max_n)
    if not precisions or min(precisions) == 0.0:
        return 0.0
    weight = 1.0 / len(precisions)
    mean_log = sum(weight * math.log(p) for p in precisions)
    return length_penalty(gen_array.shape[0], ref_array.shape[0]) * math.exp(mean_log)


def wmd_distance(ref: np.ndarray, gen: np.ndarray) -> float:
    """Word Mover's Distance between two traces (FlowEval eq. 3, §3.3.3).

    Each trace is a uniform distribution over its steps (mass 1/n and 1/m, as in Kusner et al.); the
    value is the minimal transport cost sum_ij T_ij c(x_i, y_j) with Euclidean cost, solved exactly by
    POT's network simplex (`ot.emd2`).
    """
    ref_array, gen_array = _pair(ref, gen)
    if gen_array.shape[0] == 0:
        raise ValueError("WMD is undefined for an empty generated trace (no mass to transport)")
    import ot  # POT imports torch and scikit-learn when present (seconds): only where WMD is computed

    cost = ot.dist(ref_array, gen_array, metric="euclidean")
    ref_mass = np.full(ref_array.shape[0], 1.0 / ref_array.shape[0])
    gen_mass = np.full(gen_array.shape[0], 1.0 / gen_array.shape[0])
    return float(ot.emd2(ref_mass, gen_mass, cost))
