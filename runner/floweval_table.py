"""`python -m runner.floweval_table RUN_DIR... --labels LABELS.jsonl [--json OUT]`: FlowEval's Table 1.

FlowEval run dirs of several models on the same prompts and the people's pairwise labels (e.g. from
`python -m runner.arena`) give, per trace metric (DTW, eBLEU, WMD), the Elo ratings and ranks from the
metric's preferences on the labelled pairs, and Spearman rho, Cohen's kappa and the agreement rate against
the people (§4.1, Table 1), plus Appendix D's median-based ranking. docs/floweval-metrics.md, "Table 1".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from runner.errors import ConfigError
from runner.metrics.labels import LabelFormatError
from runner.suites.floweval.table import build_table, load_outputs, read_human_labels, render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.floweval_table", description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--labels", type=Path, required=True, help="the human pairwise labels (JSONL)")
    parser.add_argument("--rater", default=None, help="only this rater's labels (default: every person's)")
    parser.add_argument("--json", type=Path, default=None, help="also write the table as JSON here")
    parser.add_argument("--ratings", choices=("elo", "bradley_terry"), default="elo",
                        help="online Elo in label order (§4, Chiang et al. 2024) or the order-free Bradley-Terry fit")
    parser.add_argument("--include-ties", action="store_true",
                        help="count tied pairs in kappa and agreement (§4.1's rate is binary: ties left out)")
    parser.add_argument("--ebleu-median-lower", action="store_true",
                        help="rank eBLEU medians lower-is-better, as Table 2 marks it (eq. 2 is a similarity)")
    args = parser.parse_args(argv)
    try:
        outputs = load_outputs(args.run_dirs)
        human = read_human_labels(args.labels, outputs, rater=args.rater)
    except (ConfigError, LabelFormatError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    table = build_table(outputs, human, ratings=args.ratings, include_ties=args.include_ties,
                        median_directions={"ebleu": "lower"} if args.ebleu_median_lower else None)
    sys.stdout.write(render(table))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(table.to_json(), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
