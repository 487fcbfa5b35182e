"""The task-set record (runner/run/task_set.py): the paper's pinned data, the project's own tasks or files given
elsewhere, said the same way in summary.json, lineage.json, the report, the viewer and the MLflow tags."""

from __future__ import annotations

from pathlib import Path

from runner.run.data_pull import pull_paper_data
from runner.compose import compose as compose_config
from runner.report.task_set import describe_task_set, task_set_record, task_set_tags
from runner.run.task_set import task_set_identity
from runner.run.validation import validate_config
from runner.suites.registry import build_run_suite, validate_suite_options
from tests.conftest import REPO_ROOT
from tests.support.data_sources import checkout_repo

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _config(*overrides: str):
    raw = compose_config(list(overrides))
    raw["project_root"] = str(REPO_ROOT)
    return validate_config(raw)


def _identity(config) -> dict:
    return task_set_identity(config, build_run_suite(config), project_commit=COMMIT)


def test_the_projects_own_tasks_at_the_projects_commit() -> None:
    identity = _identity(_config("+experiment=iwebgen-table2", "judge=gpt-4o"))
    assert identity == {"name": "project", "suite": "iwebgen", "source": "tasks/iwebgen", "revision": COMMIT,
                        "checksum": None, "paper_tasks": 201}
    record = task_set_record(identity, 15)
    assert describe_task_set(record) == \
        "task set: project (tasks/iwebgen at 0123456789): 15 task(s), not the paper's set of 201"
    assert task_set_tags(record) == {"genui.task_set.name": "project", "genui.task_set.suite": "iwebgen",
                                     "genui.task_set.source": "tasks/iwebgen", "genui.task_set.revision": COMMIT,
                                     "genui.task_set.paper_tasks": "201", "genui.task_set.tasks_run": "15"}


def test_files_given_elsewhere_are_local_with_no_revision(tmp_path: Path) -> None:
    sample = REPO_ROOT / "tests" / "suites" / "webgen" / "fixtures" / "test.sample.jsonl"
    identity = _identity(_config("suite=webgen", f"suite.tasks_path={sample}", "+model@roles.tester=oracle"))
    assert identity == {"name": "local", "suite": "webgen", "source": str(sample), "revision": None,
                        "checksum": None, "paper_tasks": 101}
    assert describe_task_set(task_set_record(identity, 5)) == \
        f"task set: local ({sample}): 5 task(s), not the paper's set of 101"


def test_the_papers_data_by_its_pin_and_checksum(tmp_path: Path) -> None:
    repo = tmp_path / "EvoGenUI-Bench"
    revision = checkout_repo(repo)
    config = _config("suite=evogenui", "suite.task_set=paper", f"data_dir={tmp_path / 'data'}",
                     f"suite.paper_data.evogenui-bench.git.url={repo}",
                     f"suite.paper_data.evogenui-bench.git.revision={revision}")
    pulled = pull_paper_data(tmp_path / "data", "evogenui-bench",
                             validate_suite_options(config.suite).paper_data["evogenui-bench"])
    identity = _identity(config)
    assert identity == {"name": "paper", "suite": "evogenui", "source": str(repo), "revision": revision,
                        "checksum": pulled.sha256, "paper_tasks": 150}
    assert describe_task_set(task_set_record(identity, 2)) == \
        f"task set: paper ({repo}@{revision[:12]}): 2 of the paper's 150 task(s)"

