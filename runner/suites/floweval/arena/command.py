"""`python -m runner.arena RUN_DIR... [--labels FILE] [--rater ID]`: the arena page for people (FlowEval §4).

Serves a local page that shows two generated sites for the same prompt side by side (the description
shown, the task list hidden, the models blinded, the order randomised) and appends each decision to the
labels file (runner/suites/floweval/pair_labels.py). Started again with the same run dirs, seed and rater it resumes
with the first pair that rater has not decided. docs/floweval-metrics.md describes the page and the format.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner.errors import UserError
from runner.suites.floweval.arena.queue import Arena, build_pairs
from runner.suites.floweval.arena.server import ArenaServer
from runner.suites.floweval.arena.sites import collect_sites


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.arena", description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--labels", type=Path, default=None,
                        help="the labels file (JSONL) decisions are appended to; default RUN_DIR/arena_labels.jsonl "
                             "of the first run dir")
    parser.add_argument("--rater", default="rater", help="the rater id written with each decision")
    parser.add_argument("--seed", type=int, default=0, help="the seed of the pair order and the A/B sides")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    try:
        sites = collect_sites(args.run_dirs)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    pairs = build_pairs(sites, seed=args.seed)
    if not pairs:
        print("error: no prompt has built sites from two different models in these run dirs "
              "(a slot's site is evidence/<task>/<turn>/site/index.html)", file=sys.stderr)
        return 2
    labels = args.labels or args.run_dirs[0] / "arena_labels.jsonl"
    arena = Arena(pairs, labels, args.rater)
    server = ArenaServer(arena, host=args.host, port=args.port)
    print(f"arena: {len(pairs)} comparisons, {arena.decided} decided by {args.rater!r}; labels -> {labels}")
    print(f"open {server.url}  (Ctrl-C stops; starting again resumes)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
