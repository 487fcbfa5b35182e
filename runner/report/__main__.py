"""`python -m runner.report RUN_DIR... [--out DIR] [--mlflow-experiment NAME --tracking-uri URI]`

Writes, into --out: leaderboard.md, leaderboard.json, leaderboard.html, the plots (PNG) and one evidence
viewer per run (runs/<n>/report.html). Run dirs may be single runs, shards of one experiment (merged
first), or a multirun sweep dir (every run dir below it). With --mlflow-experiment the runs come from
that MLflow experiment instead (or as well). With a tracking URI, the leaderboard and plots are also
logged to MLflow: as artifacts of the runs' common parent (a sweep's parent run) when they share one,
otherwise of a new run tagged genui.kind=report in the experiment. The last line printed is --out.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from runner.report.collect import RunData, load_mlflow_experiment, load_runs, unique_labels
from runner.report.leaderboard import build_leaderboard, to_html, to_markdown
from runner.report.plots import make_plots

log = logging.getLogger(__name__)
REPORT_DIR_ARTIFACT = "report"


def _default_out(run_dirs: list[Path]) -> Path:
    if len(run_dirs) == 1:
        return run_dirs[0] / "report"
    return Path("reports") / datetime.now().strftime("%Y-%m-%d_%H-%M-%S")


def write_report(runs: list[RunData], out: Path, *, viewers: bool = True) -> dict[str, Path]:
    """Leaderboard files, plots and per-run viewers under `out`; returns name -> path of what was written."""
    from runner.report.viewer import write_run_report

    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    board = build_leaderboard(runs)
    plots = make_plots(runs, out)
    written.update({f"{name}.png": path for name, path in plots.items()})
    run_links: dict[str, str] = {}
    if viewers:
        for position, run in enumerate(runs):
            if run.path is None:
                continue
            try:
                page = write_run_report(run.path, out / "runs" / f"{position:02d}" / "report.html")
            except Exception:  # one unreadable run must not cost the whole report
                log.exception("could not write the viewer of %s", run.path)
                continue
            run_links[run.label] = page.relative_to(out).as_posix()
            written[f"runs/{position:02d}/report.html"] = page
    board["viewers"] = run_links
    board["plots"] = sorted(f"{name}.png" for name in plots)
    (out / "leaderboard.json").write_text(json.dumps(board, indent=2, default=str))
    (out / "leaderboard.md").write_text(to_markdown(board))
    uris = {name: "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode() for name, path in plots.items()}
    (out / "leaderboard.html").write_text(to_html(board, plots=uris, run_links=run_links))
    for name in ("leaderboard.json", "leaderboard.md", "leaderboard.html"):
        written[name] = out / name
    return written


def log_report(runs: list[RunData], written: dict[str, Path], *, tracking_uri: str, experiment: str | None) -> str | None:
    """Log the report's files to MLflow; returns the run id they went to (None when nothing was logged)."""
    from mlflow import MlflowClient

    from runner.tracking.tracker import KIND_TAG, PARENT_TAG, quiet_mlflow_logs

    quiet_mlflow_logs()
    client = MlflowClient(tracking_uri=tracking_uri)
    for run in runs:  # run dirs know their job run (tracking.json); its parent is in the store
        if run.run_id and run.parent_run_id is None:
            try:
                job = client.get_run(run.run_id)
            except Exception:  # a run logged to another store
                continue
            run.parent_run_id = job.data.tags.get(PARENT_TAG)
            run.experiment_id = run.experiment_id or job.info.experiment_id
    parents = {run.parent_run_id for run in runs}
    target: str | None = parents.pop() if len(parents) == 1 else None
    if target is None:
        experiment_ids = {run.experiment_id for run in runs if run.experiment_id}
        if experiment:
            found = client.get_experiment_by_name(experiment)
            experiment_id = found.experiment_id if found else client.create_experiment(experiment)
        elif len(experiment_ids) == 1:
            experiment_id = experiment_ids.pop()
        else:
            log.warning("runs span several MLflow experiments and none was named: the report is not logged")
            return None
        created = client.create_run(experiment_id, tags={KIND_TAG: "report"}, run_name="report")
        target = created.info.run_id
        for run in runs:
            if run.run_id:
                client.set_tag(target, f"genui.report.run.{run.run_id[:12]}", run.label[:250])
        client.set_terminated(target)
    for name, path in sorted(written.items()):
        folder = Path(REPORT_DIR_ARTIFACT, name).parent.as_posix()
        client.log_artifact(target, str(path), artifact_path=folder)
    return target


def _resolve_uri(uri: str) -> str:
    from runner.tracking.tracker import resolve_tracking_uri

    return resolve_tracking_uri(uri, Path.cwd())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", nargs="*", type=Path, help="run dirs, shard run dirs or multirun sweep dirs")
    parser.add_argument("--out", type=Path, default=None, help="report folder (default: RUN_DIR/report for one run, else reports/<time>)")
    parser.add_argument("--mlflow-experiment", default=None, help="report the job runs of this MLflow experiment")
    parser.add_argument("--tracking-uri", default=None, help="MLflow tracking URI (reading --mlflow-experiment; logging the report)")
    parser.add_argument("--no-viewers", action="store_true", help="skip the per-run evidence viewers")
    parser.add_argument("--no-log", action="store_true", help="do not log the report to MLflow")
    args = parser.parse_args(argv)
    if not args.run_dirs and not args.mlflow_experiment:
        parser.error("give run dirs and/or --mlflow-experiment")
    uri = _resolve_uri(args.tracking_uri or "sqlite:///mlruns/mlflow.db") if (args.tracking_uri or args.mlflow_experiment) else None
    out = args.out or (_default_out(args.run_dirs) if args.run_dirs else Path("reports") / str(args.mlflow_experiment))
    runs: list[RunData] = []
    try:
        if args.run_dirs:
            runs += load_runs(args.run_dirs, merge_dir=out / "merged")
        if args.mlflow_experiment:
            assert uri is not None
            runs += load_mlflow_experiment(args.mlflow_experiment, uri, download_dir=Path(tempfile.mkdtemp(prefix="genui-report-")))
    except (FileNotFoundError, LookupError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not runs:
        print("error: no runs found", file=sys.stderr)
        return 2
    unique_labels(runs)
    written = write_report(runs, out, viewers=not args.no_viewers)
    if uri is not None and not args.no_log:
        try:
            target = log_report(runs, written, tracking_uri=uri, experiment=args.mlflow_experiment)
            if target:
                print(f"logged to MLflow run {target}", file=sys.stderr)
        except Exception:  # the files on disk are the report; MLflow is a copy
            log.exception("logging the report to MLflow failed")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
