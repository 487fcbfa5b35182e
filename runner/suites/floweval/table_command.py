"""`python -m runner.floweval_table RUN_DIR... --labels LABELS.jsonl [--json OUT]`: FlowEval's Table 1.

FlowEval run dirs of several models on the same prompts and the people's pairwise labels (e.g. from
`python -m runner.arena`) give, per trace metric (DTW, eBLEU, WMD), the Elo ratings and ranks from the
metric's preferences on the labelled pairs, and Spearman rho, Cohen's kappa and the agreement rate against
the people (§4.1, Table 1), plus Appendix D's median-based ranking; with --pairwise-judge MODEL.yaml also
the MLLM pairwise judge baseline's column (§4, Appendix C). docs/floweval-metrics.md, "Table 1".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import yaml

from runner.errors import ConfigError, UserError
from runner.suites.floweval.pair_labels import PairwiseLabel, write_labels
from runner.suites.floweval.ranking import RATINGS
from runner.models.registry import build_model
from runner.models.role import declared_vision
from runner.suites.floweval.pairwise import PairwiseJudge
from runner.suites.floweval.table import Outputs, build_table, load_outputs, read_human_labels, render
from runner.suites.floweval.table_judge import judge_pairs


def _judge_column(model_file: Path, seed: int, outputs: Outputs, human: list[PairwiseLabel]) -> tuple[list[PairwiseLabel], int]:
    """The MLLM pairwise judge (Appendix C) on the people's pairs, with the model a model config file names."""
    try:
        settings = yaml.safe_load(model_file.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f"{model_file}: cannot read the judge model's settings: {error}") from None
    if not isinstance(settings, dict):
        raise ConfigError(f"{model_file}: expected a mapping of model settings (as conf/model/*.yaml)")
    model = build_model(settings)

    async def run() -> tuple[list[PairwiseLabel], int]:
        try:
            judge = PairwiseJudge(model, seed=seed, vision=declared_vision(settings))
            column = await judge_pairs(judge, outputs, human)
        finally:
            await model.aclose()
        for error in column.errors:
            print(f"judge: unassessed {error}", file=sys.stderr)
        for request in column.requests:  # say what a judge saw when its request had to be fitted to the server
            fitted = request.get("images_fitted") or request.get("sections_trimmed")
            if fitted:
                print(f"judge: request for {request['prompt_id']} ({request['model_a']} vs {request['model_b']}) "
                      f"fitted to the server: {fitted}", file=sys.stderr)
        return column.labels, column.unassessed

    return asyncio.run(run())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.floweval_table", description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--labels", type=Path, required=True, help="the human pairwise labels (JSONL)")
    parser.add_argument("--rater", default=None, help="only this rater's labels (default: every person's)")
    parser.add_argument("--json", type=Path, default=None, help="also write the table as JSON here")
    parser.add_argument("--ratings", choices=RATINGS, default="bradley_terry",
                        help="bradley_terry: the Bradley-Terry fit on the Elo scale that Chiang et al. 2024 report "
                             "(FlowEval §4 follows them; the default); online_elo: online Elo in label order, K = 4")
    parser.add_argument("--pair-values", choices=("rated_sites", "generation_mean"), default="rated_sites",
                        help="what decides a metric's preference on a rated pair: the two sites the label names "
                             "(the default; labels without sites use the mean) or each model's mean over its "
                             "generations of the prompt")
    parser.add_argument("--include-ties", action="store_true",
                        help="count tied pairs in kappa and agreement (§4.1's rate is binary: ties left out)")
    parser.add_argument("--ebleu-median-lower", action="store_true",
                        help="rank eBLEU medians lower-is-better, as Table 2 marks it (eq. 2 is a similarity)")
    parser.add_argument("--pairwise-judge", type=Path, default=None, metavar="MODEL.yaml",
                        help="add the MLLM pairwise judge column (Appendix C) with the model these settings name "
                             "(a model config file, as conf/model/*.yaml)")
    parser.add_argument("--judge-seed", type=int, default=0, help="the seed of the judge's A/B order")
    parser.add_argument("--judge-labels", type=Path, default=None, help="also write the judge's decisions here (JSONL)")
    args = parser.parse_args(argv)
    try:
        outputs = load_outputs(args.run_dirs)
        human = read_human_labels(args.labels, outputs, rater=args.rater)
        judge = None
        if args.pairwise_judge is not None:
            judge = _judge_column(args.pairwise_judge, args.judge_seed, outputs, human)
            if args.judge_labels is not None:
                write_labels(args.judge_labels, judge[0])
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    table = build_table(outputs, human, ratings=args.ratings, include_ties=args.include_ties,
                        median_directions={"ebleu": "lower"} if args.ebleu_median_lower else None, judge=judge,
                        pair_values=args.pair_values)
    sys.stdout.write(render(table))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(table.to_json(), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
