"""The project's own specifications and reference apps, and the loader's errors."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from runner.suites.iwebgen.loader import load_tasks, spec_of
from runner.suites.iwebgen.prompts import SYSTEM_PROMPT, generation_messages
from runner.suites.iwebgen.spec import DOMAINS
from runner.suites.native import TaskFormatError
from tests.conftest import REPO_ROOT

OWN = REPO_ROOT / "tasks" / "iwebgen"


def test_own_specifications_cover_every_domain_three_times_with_five_references() -> None:
    tasks = load_tasks(OWN)
    assert Counter(task.domain for task in tasks) == {domain: 3 for domain in DOMAINS}
    with_reference = [task for task in tasks if task.turns[0].reference_files]
    assert len(with_reference) >= 5
    for task in with_reference:
        assert "src/App.jsx" in task.turns[0].reference_files
    for task in tasks:
        assert 3 <= len(spec_of(task).interactions) <= 10
        assert task.sub_suite == task.domain and task.title == spec_of(task).paper_title


def test_payload_is_the_system_prompt_plus_the_specification() -> None:
    task = next(task for task in load_tasks(OWN) if task.id == "econ-cobweb")
    system, user = generation_messages(spec_of(task))
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    text = user["content"]
    assert "The Cobweb Theorem" in text and "## Visual style" in text and "## Technical stack" in text
    for element in spec_of(task).interactions:
        assert element.name in text
    assert "App.jsx" not in text.split("## Technical stack")[0], "no reference material reaches the generator"


def test_id_must_match_the_file_name(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(OWN / "specs" / "econ-cobweb.yaml", specs / "renamed.yaml")
    with pytest.raises(TaskFormatError, match=r"renamed.yaml: id: 'econ-cobweb' must equal"):
        load_tasks(tmp_path)


def test_an_empty_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="no specification file"):
        load_tasks(tmp_path)
