"""`python -m runner.arena RUN_DIR... [--labels FILE] [--rater ID] [--seed N] [--port 8765]`: the arena for
people (FlowEval §4).

Starts the viewer app (runner/view/) with FlowEval's arena mode at /arena (view_mode.py) and with no runs, so
nothing on the page names the models. The page shows two generated sites for the same prompt side by side (the
description shown, the task list hidden, the models blinded, the order randomised) and appends each decision
to the labels file (runner/suites/floweval/pair_labels.py). Started again with the same run dirs, seed and
rater it resumes with the first pair that rater has not decided. docs/floweval-metrics.md describes the page
and the format.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner.errors import UserError
from runner.suites.floweval.arena.queue import Arena, build_pairs
from runner.suites.floweval.arena.server import SiteServers
from runner.suites.floweval.arena.sites import collect_sites
from runner.suites.floweval.arena.view_mode import ArenaMode
from runner.view.app import ViewState, create_app, serve_until_interrupted
from runner.view.catalog import Catalog


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.arena", description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--labels", type=Path, default=None,
                        help="the labels file (JSONL) decisions are appended to; default RUN_DIR/arena_labels.jsonl "
                             "of the first run dir")
    parser.add_argument("--rater", default="rater", help="the rater id written with each decision")
    parser.add_argument("--seed", type=int, default=0, help="the seed of the pair order and the A/B sides")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0: any free port")
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
    mode = ArenaMode(arena, SiteServers(args.host))
    try:
        # No runs in this app: the runs pages would say which model built which site.
        def announce(url: str) -> None:
            print(f"arena: {len(pairs)} comparisons, {arena.decided} decided by {args.rater!r}; labels -> {labels}")
            print(f"open {url}/{mode.name}  (Ctrl-C stops; starting again resumes)", flush=True)

        serve_until_interrupted(create_app(ViewState(Catalog([]), modes={mode.name: mode})), host=args.host,
                                port=args.port, announce=announce)
    finally:
        mode.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
