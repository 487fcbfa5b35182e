"""build_suite with `suite.task_set=paper`: the suite reads the pulled copy of the paper's data (its
`suite_paths` filled in), or refuses naming the pull command; the project's own tasks stay the default."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.run.data_pull import pull_paper_data
from runner.compose import compose as compose_config
from runner.suites.registry import PaperDataMissing, build_suite, validate_suite_options
from tests.conftest import REPO_ROOT
from tests.support.data_sources import checkout_repo


@pytest.fixture(scope="module")
def pinned(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The overrides that point EvoGenUI-Bench's pin at a local repository of the stand-in checkout."""
    repo = tmp_path_factory.mktemp("src") / "EvoGenUI-Bench"
    revision = checkout_repo(repo)
    return [f"suite.paper_data.evogenui-bench.git.url={repo}",
            f"suite.paper_data.evogenui-bench.git.revision={revision}"]


def _suite_section(*overrides: str) -> dict:
    return compose_config(["suite=evogenui", *overrides])["suite"]


def test_the_paper_set_is_read_from_its_pulled_copy(pinned: list[str], tmp_path: Path) -> None:
    section = _suite_section("suite.task_set=paper", "suite.prompts=benchmark", *pinned)
    settings = validate_suite_options(section)
    with pytest.raises(PaperDataMissing, match=r"is not in .*fetch it with `python -m runner.pull suite=evogenui`"):
        build_suite(section, project_root=REPO_ROOT, data_dir=tmp_path)
    pulled = pull_paper_data(tmp_path, "evogenui-bench", settings.paper_data["evogenui-bench"])
    suite = build_suite(section, project_root=REPO_ROOT, data_dir=tmp_path)
    assert suite.settings.benchmark_path == str(pulled.folder / ".")  # suite_paths: {benchmark_path: .}
    assert suite.web_template == "evogenui" and suite.benchmark_prompts is not None  # its scaffold and prompts
    tasks = asyncio.run(suite.load_tasks())
    assert sorted(task.id for task in tasks) == ["pres_reading_room_hours", "tg_pantry_restock_ledger"]
    assert all(Path(task.source_path).is_relative_to(pulled.folder) for task in tasks)


def test_the_project_set_is_the_default_and_a_path_with_the_paper_set_is_refused(pinned: list[str]) -> None:
    suite = build_suite(_suite_section(*pinned), project_root=REPO_ROOT, data_dir=Path("/nonexistent"))
    assert suite.settings.task_set == "project" and suite.task_source == REPO_ROOT / "tasks" / "evogenui"
    with pytest.raises(ConfigError, match="benchmark_path is set with task_set='paper'"):
        validate_suite_options(_suite_section("suite.task_set=paper", "suite.benchmark_path=/somewhere"))


@pytest.mark.parametrize("suite", ["iwebgen", "floweval", "macro", "micro", "smoke"])
def test_a_suite_whose_authors_released_no_data_has_no_paper_set(suite: str) -> None:
    with pytest.raises(ConfigError, match=f"the authors of suite '{suite}' released no data to pull"):
        validate_suite_options(compose_config([f"suite={suite}", "suite.task_set=paper"])["suite"])
