"""The servers of a run's vLLM-served model roles: starting them lazily, stopping them between phases,
keeping their logs. Which roles a run has, and their models, is runner/run/roles.py's.

A server starts on the first call that needs it (never for a role the run does not use): the engine asks for
the generation roles before the first slot that calls the generator, the judging phase for the judge before
the first verdict that calls it. The start happens outside every per-call and per-turn timeout, so a
multi-minute checkpoint load never turns into timed-out turns.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.models import vllm_server
from runner.tracking.protocol import RunTracker

log = logging.getLogger(__name__)

__all__ = [
    "ROLES",
    "SERVER_LOG_DIR",
    "ServedRoles",
    "log_server_logs",
]

SERVER_LOG_DIR = "servers"  # inside the run directory, and the artifact folder in MLflow
ROLES = ("generator", "judge", "actor")  # the roles `of` takes by keyword; `add` takes a suite's roles too


@dataclass
class ServedRoles:
    """The vLLM-served models of a run, by role (the run built them and says which is which)."""

    models: dict[str, list[Any]] = field(default_factory=dict)  # role -> [VLLMModel]
    log_dir: Path | None = None
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    @classmethod
    def of(cls, *, log_dir: Path, **by_role: Any) -> "ServedRoles":
        """`generator=model, judge=judge_model, actor=actor_model`; models that are not vLLM-served are ignored."""
        from runner.models.vllm_provider import VLLMModel

        vllm_server.set_default_log_dir(log_dir)
        models: dict[str, list[Any]] = {}
        for role, model in by_role.items():
            if role not in ROLES:
                raise ValueError(f"unknown model role {role!r}; roles are {ROLES}")
            if isinstance(model, VLLMModel):
                models.setdefault(role, []).append(model)
        return cls(models=models, log_dir=log_dir)

    def add(self, role: str, model: Any) -> None:
        """Serve `model` (a vLLM-served model, or a wrapper forwarding start()) under `role`."""
        self.models.setdefault(role, []).append(model)

    def names(self, role: str) -> list[str]:
        return [model.name for model in self.models.get(role, [])]

    async def ensure(self, *roles: str) -> None:
        """Start the servers of these roles if they are not up yet (one after another: vLLM sizes its cache
        from the memory free when it starts). A server that cannot start raises ServerStartError."""
        for role in roles:
            lock = self._locks.setdefault(role, asyncio.Lock())
            async with lock:
                for model in self.models.get(role, []):
                    await model.start(log_dir=self.log_dir)

    async def stop(self, *roles: str) -> None:
        """Stop the servers of these roles (the next call would start them again)."""
        for role in roles:
            for model in self.models.get(role, []):
                await model.aclose()


def log_server_logs(tracker: RunTracker, log_dir: Path) -> None:
    """Upload the server logs to the tracker's run (artifact folder `servers/`). Never raises."""
    if tracker.run_id is None or not log_dir.is_dir():
        return
    for path in sorted(log_dir.glob("*.log")):
        try:
            tracker.log_artifact(path, artifact_path=SERVER_LOG_DIR)
        except Exception:  # tracking is secondary to the run dir, which keeps the log
            log.exception("could not upload server log %s", path)
