"""Expected failures, said plainly: a short message naming the file, key or value and what to do.

A bad config, missing weights or backends, a malformed task file or a server that does not start are the
user's to fix, not the runner's bugs: each such error subclasses `runner.errors.UserError` where it is
defined, and the command line prints the message alone (exit code 2) and keeps the traceback in the run's
log file. `HYDRA_FULL_ERROR=1` prints the traceback as well.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

__all__ = ["EXIT_USER_ERROR", "full_errors_wanted", "report"]

EXIT_USER_ERROR = 2


def full_errors_wanted() -> bool:
    return os.environ.get("HYDRA_FULL_ERROR") == "1"


def _log_files() -> list[Path]:
    return [Path(handler.baseFilename) for handler in logging.getLogger().handlers
            if isinstance(handler, logging.FileHandler)]


def report(error: BaseException) -> None:
    """Print `error: <message>` to stderr; the traceback goes to the log files only (Hydra's run log)."""
    record = logging.LogRecord("runner", logging.ERROR, __file__, 0, "%s: %s", (type(error).__name__, error),
                               (type(error), error, error.__traceback__))
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler):
            handler.handle(record)
    where = ", ".join(str(path) for path in _log_files())
    hint = f"(the traceback is in {where}; HYDRA_FULL_ERROR=1 prints it)" if where else "(HYDRA_FULL_ERROR=1 prints the traceback)"
    print(f"error: {error}\n{hint}", file=sys.stderr)
