"""Metric costs: masked SSIM on a 1280 x 4000 page and FlowEval's trace metrics on 50-step traces.

    .venv/bin/python bench/metric_costs.py [--height 4000] [--steps 50] [--dim 384] [--repeats 5]

- SSIM (MT-Web2Code eqs. 10-11, runner.suites.web2code.image): masked_ssim of a page against the same page with one
  400 px section recoloured (the common case of a micro turn), and against a page that differs everywhere
  (its content shifted a pixel), each beside scikit-image's structural_similarity over the whole page (the
  reference computation ours equals on a full mask), with the ratio measured in this run;
- traces (FlowEval §3.3, runner.suites.floweval.traces): DTW (eq. 1, Sakoe-Chiba band 10%, and without a band),
  eBLEU (eq. 2) and WMD (eq. 3) of two random `--steps`-step traces of `--dim`-dimensional embeddings
  (all-MiniLM-L6-v2's size).
Prints the median seconds of each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from skimage.metrics import structural_similarity

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner.suites.web2code import image

from runner.suites.floweval import traces  # noqa: E402


def median_seconds(call: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def page(height: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    blocks = rng.integers(0, 256, size=(height // 8, 1280 // 8, 3), dtype=np.uint8)
    return np.repeat(np.repeat(blocks, 8, axis=0), 8, axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--height", type=int, default=4000)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    golden = page(args.height)
    recoloured = golden.copy()
    recoloured[args.height // 2 : args.height // 2 + 400] //= 2
    shifted = np.vstack([np.full((1, 1280, 3), 255, dtype=np.uint8), golden[:-1]])
    mask = np.ones(golden.shape[:2], dtype=bool)
    whole = median_seconds(lambda: structural_similarity(golden, shifted, channel_axis=-1, data_range=255),
                           args.repeats)
    print(f"SSIM, 1280 x {args.height}: skimage over the whole page {whole:.3f} s")
    for name, other in (("one section recoloured", recoloured), ("differs everywhere", shifted)):
        ours = median_seconds(lambda: image.masked_ssim(golden, other, mask), args.repeats)
        print(f"  masked_ssim, {name:22s} {ours:.3f} s  ({whole / ours:.1f}x faster than skimage's whole page)")

    rng = np.random.default_rng(1)
    ref = rng.normal(size=(args.steps, args.dim))
    gen = ref[rng.permutation(args.steps)] + rng.normal(scale=0.3, size=(args.steps, args.dim))
    print(f"traces, {args.steps} steps x {args.dim} dims:")
    for name, call in (("DTW (band 10%)", lambda: traces.dtw_distance(ref, gen)),
                       ("DTW (no band)", lambda: traces.dtw_distance(ref, gen, band_fraction=None)),
                       ("eBLEU", lambda: traces.ebleu(ref, gen)),
                       ("WMD", lambda: traces.wmd_distance(ref, gen))):
        print(f"  {name:16s} {median_seconds(call, args.repeats) * 1000:8.2f} ms")


if __name__ == "__main__":
    main()
