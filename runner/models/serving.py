"""What the experiment does for models that run their own server: start them up front, keep their logs.

Starting up front (before the first turn) keeps a multi-minute checkpoint load out of the per-call timeouts,
and makes a server that cannot start fail the run at once with its log, instead of every turn failing.
The generator model, and the models held by a judge or an actor (their `_model`/`model` attribute), are found
here, so the experiment needs no knowledge of which components are served by vLLM.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from runner.models import vllm_server

log = logging.getLogger(__name__)

__all__ = ["SERVER_LOG_DIR", "log_server_logs", "served_models", "start_served_models"]

SERVER_LOG_DIR = "servers"  # inside the run directory, and the artifact folder in MLflow


def served_models(*components: Any) -> list[Any]:
    """Every VLLMModel among the components or held directly by one of them (a judge's or actor's model)."""
    from runner.models.vllm_provider import VLLMModel

    found: list[Any] = []
    for component in components:
        candidates = [component]
        if component is not None and hasattr(component, "__dict__"):
            candidates += list(vars(component).values())
        for candidate in candidates:
            if isinstance(candidate, VLLMModel) and all(candidate is not seen for seen in found):
                found.append(candidate)
    return found


async def start_served_models(*components: Any, log_dir: Path) -> list[Any]:
    """Start every served model's server, one after another (they may share a GPU). Returns them.

    `log_dir` also becomes the default log folder for servers started later in this process.
    """
    vllm_server.set_default_log_dir(log_dir)
    models = served_models(*components)
    for model in models:
        await model.start(log_dir=log_dir)
    return models


def log_server_logs(tracker: Any, log_dir: Path) -> None:
    """Upload the server logs to the tracker's run (artifact folder `servers/`). Never raises."""
    client = getattr(tracker, "client", None)
    run_id = getattr(tracker, "run_id", None)
    if client is None or run_id is None or not log_dir.is_dir():
        return
    for path in sorted(log_dir.glob("*.log")):
        try:
            client.log_artifact(run_id, str(path), artifact_path=SERVER_LOG_DIR)
        except Exception:  # tracking is secondary to the run dir, which keeps the log
            log.exception("could not upload server log %s", path)
