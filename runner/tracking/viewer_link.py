"""What a job run's MLflow page says about the local viewer, and how its experiment opens on the runs table.

The job run's description (`mlflow.note.content`, shown on its MLflow page) tells how to open the run in the
viewer (`python -m runner.view <run dir>`) and the run's page path there. The id is the one the viewer gives a
run opened on its own (runner.view.catalog: url_id of the model / judge / actor label); it is worked out here
from the config, not imported, because the viewer's catalog reads runs through runner.report, which imports
this package (tests/report/test_mlflow_viewer.py checks both agree on a real run).

MLflow 3.17's UI no longer lands by the experiment's `mlflow.experimentKind` tag: its sidebar's workflow switch
(GenAI, the default, or Model training; kept in the browser's local storage) decides, and
`?workflowType=machine_learning` in the experiment's URL selects the runs table. The experiment's description
says so with that link, which also names a shared view of the runs table (`viewStateShareKey`: the UI reads the
view from the experiment tag `mlflow.sharedViewState.<key>`, plain JSON) whose columns are the headline metrics.
The kind tag stays for the MLflow 3 versions that still read it (runner/tracking/traces.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

NOTE_TAG = "mlflow.note.content"  # a run's or an experiment's description in the MLflow UI
RUNS_QUERY = "workflowType=machine_learning"  # MLflow 3.17's UI: this experiment's runs table, not GenAI
# The runs table's shared view the description links to: the headline metrics as columns (a suite without one
# shows "-" there). Column ids as the UI names them: `<group>.`<name>``.
VIEW_KEY = "genui-runs"
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"
VIEW_METRICS = ("turn_pass", "build_success_rate", "interaction_rate")
# The start of the experiment description the runner writes: a description that starts otherwise is a user's.
EXPERIMENT_NOTE_MARK = "Runs of genui-runner."
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")  # as runner.view.catalog.url_id


def viewer_run_id(config: Mapping[str, Any]) -> str:
    """The id the viewer gives this run when opened on its own: its model / judge / actor label, URL-safe."""
    names = [str((config.get(group) or {}).get("name") or "") for group in ("model", "judge", "actor")]
    label = " / ".join(name for name in names if name) or "run"
    return _UNSAFE.sub("_", label).strip("._") or "run"


def run_note(run_dir: str, config: Mapping[str, Any]) -> str:
    """The job run's description: how to open it in the local viewer (Markdown)."""
    run_id = viewer_run_id(config)
    return (
        "**Evidence viewer** (screenshots, DOM, the actor's steps and the verdict of every turn):\n\n"
        f"    python -m runner.view {run_dir}\n\n"
        f"then open `/runs/{run_id}` on the URL it prints (e.g. http://127.0.0.1:8765/runs/{run_id}). "
        f"Static files to share: `python -m runner.view {run_dir} --export OUT_DIR`.\n\n"
        f"Run dir: `{run_dir}`"
    )


def runs_view() -> str:
    """The shared view's state (the experiment tag VIEW_TAG): the runs table with the headline metrics."""
    columns = ["attributes.`Duration`", *(f"metrics.`{name}`" for name in VIEW_METRICS)]
    return json.dumps({"selectedColumns": columns})


def experiment_note(experiment_id: str) -> str:
    """The experiment's description: where its runs table is in MLflow 3.17's UI (Markdown)."""
    return (
        f"{EXPERIMENT_NOTE_MARK} Each job run is one configuration (its metrics: turn_pass and the suite's "
        "figures), with a nested run per task. MLflow's UI opens experiments on the GenAI overview unless its "
        "sidebar switch says Machine learning: "
        f"[open this experiment's runs table]({experiment_runs_path(experiment_id).lstrip('/')}). "
        "Each job run's description says how to open it in the local viewer (`python -m runner.view`)."
    )


def experiment_runs_path(experiment_id: str) -> str:
    """The UI path (after the server's base URL) that opens the experiment on its runs table, metrics shown."""
    return f"/#/experiments/{experiment_id}/runs?{RUNS_QUERY}&viewStateShareKey={VIEW_KEY}"


__all__ = ["EXPERIMENT_NOTE_MARK", "NOTE_TAG", "RUNS_QUERY", "VIEW_METRICS", "VIEW_TAG", "experiment_note",
           "experiment_runs_path", "run_note", "runs_view", "viewer_run_id"]
