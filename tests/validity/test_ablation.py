"""Evidence ablation on a hand-made packet copied as runner.rejudge copies it (hard links): the copy lacks each
removed source, records what went, still reads as a packet, and the source folder is untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.turns.packets import copy_packet_folder, read_packet
from runner.validity.ablation import SOURCES, ablate_folder, validate_sources
from tests.validity.handmade import record, write_slot


@pytest.fixture
def copied(tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "source"
    source.mkdir()
    write_slot(source, record("t1", True))
    target = tmp_path / "target"
    copy_packet_folder(source, target)
    return source, target


def test_every_source_removed_leaves_a_packet_without_it(copied: tuple[Path, Path]) -> None:
    source, target = copied
    before = {path.name: path.read_bytes() for path in source.rglob("*") if path.is_file()}
    ablated = ablate_folder(target, list(SOURCES))
    packet = read_packet(target)
    data = json.loads((target / "packet.json").read_text())
    assert sorted(data["ablated"]) == sorted(SOURCES) and data["ablated"] == ablated
    # source code
    assert packet.files == {} and not (target / "src").exists() and not (target / "raw_response.txt").exists()
    assert packet.assistant_text == "Here is your page."  # the prose stays
    # screenshots
    assert not list(target.glob("*.png"))
    assert packet.evidence is not None and packet.evidence.screenshot_full == packet.evidence.final_screenshot_viewport == ""
    # actor trace
    assert packet.trace is None and not (target / "trace.json").exists()
    # private reference
    turn = packet.turn
    assert turn.requirements == [] and turn.reference_files is None and turn.reference_text == ""
    assert turn.extra == {} and packet.task.extra == {} and packet.checks is None
    assert turn.prompt == "Build the page of t1." and packet.task.context == "A public context."  # public stays
    assert ablated["private_reference"]["requirements"] == ["req-1"]
    # the source run is untouched (the copy was hard links)
    assert {path.name: path.read_bytes() for path in source.rglob("*") if path.is_file()} == before
    assert read_packet(source).trace is not None and read_packet(source).files


def test_removing_the_screenshots_keeps_the_trace_without_its_images(copied: tuple[Path, Path]) -> None:
    _, target = copied
    ablate_folder(target, ["screenshot"])
    packet = read_packet(target)
    assert packet.trace is not None and [s.observation for s in packet.trace.steps] == ["text added: 1"]
    assert all(not s.screenshot_before and not s.screenshot_after for s in packet.trace.steps)
    assert json.loads((target / "trace.json").read_text())["steps"][0]["screenshot_after"] == ""
    assert packet.files and packet.turn.requirements  # nothing else went


def test_judge_ablate_takes_only_known_sources() -> None:
    assert validate_sources(["private_reference", "source"]) == ["source", "private_reference"]
    assert validate_sources(None) == []
    with pytest.raises(ConfigError, match="unknown evidence source 'dom'.*allowed"):
        validate_sources(["dom"])
    with pytest.raises(ConfigError, match="give a list"):
        validate_sources("source")
