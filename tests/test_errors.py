"""runner/errors.py: every error a user is expected to fix shares the root UserError and keeps its builtin base,
so the entry points catch one class and code that catches the builtin catches it as before."""

from __future__ import annotations

import errno
import importlib

import pytest

from runner.errors import ConfigError, UserError

# (module, class, builtin base it keeps); the first seven are the ones the entry points once listed by hand.
EXPECTED_ERRORS = [
    ("runner.errors", "ConfigError", ValueError),
    ("runner.suites.native", "TaskFormatError", ValueError),
    ("runner.suites.evogenui.backends", "BackendError", ValueError),
    ("runner.run.preflight", "PreflightError", RuntimeError),
    ("runner.models.vllm_server", "ServerStartError", RuntimeError),
    ("runner.sandbox.docker", "DockerSetupError", RuntimeError),
    ("runner.turns.records", "StorageFullError", OSError),
    ("runner.suites.webgen.format", "WebGenFormatError", ValueError),
    ("runner.suites.floweval.pair_labels", "LabelFormatError", ValueError),
    ("runner.suites.iwebgen.specgen", "SpecgenError", RuntimeError),
    ("runner.run.merge", "MergeError", ValueError),
    ("runner.validity.labels", "LabelsError", ValueError),
    # subclasses of the above, user errors through them
    ("runner.run.lineage", "LineageError", ValueError),
    ("runner.turns.engine", "StageError", ValueError),
    ("runner.suites.evogenui.checkout", "CheckoutError", ValueError),
    ("runner.suites.evogenui.suite", "MissingToolBackendError", ValueError),
    ("runner.suites.evogenui.backends", "MissingBackendError", FileNotFoundError),
]


def _error(module: str, name: str) -> type[BaseException]:
    return getattr(importlib.import_module(module), name)


def _instance(error: type[BaseException]) -> BaseException:
    if error.__name__ == "PreflightError":
        from runner.problems import Problem

        return error([Problem(key="model.weights", message="not found", fix="download them")])
    if issubclass(error, OSError):
        return error(errno.ENOSPC, "the disk is full")
    return error("a message for the user")


@pytest.mark.parametrize(("module", "name", "builtin"), EXPECTED_ERRORS, ids=[name for _, name, _ in EXPECTED_ERRORS])
def test_each_expected_error_is_a_user_error_and_keeps_its_builtin_base(module: str, name: str,
                                                                       builtin: type[BaseException]) -> None:
    error = _instance(_error(module, name))
    assert isinstance(error, UserError) and isinstance(error, builtin)
    assert str(error)  # its message, as the entry points print it


def test_a_storage_full_error_keeps_its_errno() -> None:
    error = _instance(_error("runner.turns.records", "StorageFullError"))
    assert isinstance(error, OSError) and error.errno == errno.ENOSPC


def test_config_error_is_the_configuration_kind_of_user_error() -> None:
    assert issubclass(ConfigError, UserError) and issubclass(ConfigError, ValueError)
    assert not issubclass(UserError, ValueError)  # the root promises a message for the user, not a builtin kind
