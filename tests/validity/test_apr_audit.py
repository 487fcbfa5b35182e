"""The App. C.2.1 audit of failed APR transitions: the population (eq. 3's failed retentions), the fixed-seed
blinded sample, Table 5 from a hand-made labels file, and the annotation page's labelling mode in a real browser."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from playwright.async_api import async_playwright, expect

from runner.validity.annotate import Annotation
from runner.browser.launch import BrowserSettings
from runner.turns.evidence import Evidence
from runner.turns.packets import EvidencePacket, write_packet
from runner.turns.records import FailureBucket, ModelCall, RunDirectory, TurnRecord
from runner.sandbox.base import BuildResult
from runner.turns.tasks import Requirement, Task, TurnSpec
from runner.validity.apr_audit import (
    AuditLabel,
    append_audit_label,
    failed_transitions,
    main,
    read_audit_labels,
    table5,
    write_audit_sample,
)
from runner.validity.labels import LabelsError
from runner.validity.sampling import read_key
from tests.validity.handmade import PNG
from tests.validity.test_annotate import serve_annotation

ANSWERED = {"model_responded": True, "model_call": ModelCall.ANSWERED}
# P passed, F failed (answered), I infra, N no response, B blocked
STATUS = {"P": (FailureBucket.OK, True), "F": (FailureBucket.OK, False), "I": (FailureBucket.INFRA, False),
          "N": (FailureBucket.PROVIDER_ERROR, False), "B": (FailureBucket.BLOCKED, False)}


def _records(task_id: str, codes: str, *, sub_suite: str = "interaction") -> list[TurnRecord]:
    records = []
    for turn, code in enumerate(codes, start=1):
        status, passed = STATUS[code]
        call = {"model_call": ModelCall.NO_RESPONSE} if code == "N" else ANSWERED
        records.append(TurnRecord(task_id=task_id, suite="evogenui", sub_suite=sub_suite, turn=turn, status=status,
                                  passed=passed, model="model-secret", judge="judge-secret", **call))
    return records


def test_the_population_is_eq3s_failed_retentions() -> None:
    """a: P F P P F -> 1->2 and 4->5; b: P I P N -> none (infra and no response are outside eq. 3);
    c: F F P P -> none; d: P P P -> none."""
    records = _records("a", "PFPPF") + _records("b", "PIPN") + _records("c", "FFPP") + _records("d", "PPP")
    found = [(t.current.task_id, t.previous.turn, t.current.turn) for t in failed_transitions(records)]
    assert found == [("a", 1, 2), ("a", 4, 5)]


def _write_run(path: Path, episodes: dict[str, str]) -> Path:
    """Records and a frozen packet per slot; each turn's page and request name the task and turn."""
    directory = RunDirectory(path)
    for task_id, codes in episodes.items():
        turns = [TurnSpec(index=i, prompt=f"Turn {i} of {task_id}.",
                          requirements=[Requirement(id=f"req-{i}", description=f"criterion {i}")])
                 for i in range(1, len(codes) + 1)]
        task = Task(id=task_id, suite="evogenui", sub_suite="interaction", title=task_id, turns=turns)
        for record in _records(task_id, codes):
            directory.append(record)
            folder = directory.evidence_dir(task_id, record.turn)
            (folder / "screenshot.png").write_bytes(PNG)
            write_packet(folder, EvidencePacket(
                task=task, turn_index=record.turn, record=record.model_copy(update={"passed": False}), judged=True,
                assistant_text=f"answer {record.turn}", files={"src/App.jsx": "export default () => null"},
                build=BuildResult(status="ok", log="built"),
                evidence=Evidence(url="http://127.0.0.1:1/", screenshot_viewport="screenshot.png")))
    return path


def test_fixed_seed_sample_is_blinded_and_shows_both_turns(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "run", {"t1": "PF", "t2": "PPF", "t3": "PFPF"})  # 4 failed transitions
    first = write_audit_sample([run], tmp_path / "audit", size=3, seed=5)
    again = write_audit_sample([run], tmp_path / "audit-again", size=3, seed=5)
    key, key_again = read_key(tmp_path / "audit"), read_key(tmp_path / "audit-again")
    assert first["mode"] == "apr_audit" and first["failed_transitions"] == 4 and len(first["items"]) == 3
    assert [(key[i].task_id, key[i].turn) for i in first["items"]] == \
        [(key_again[i].task_id, key_again[i].turn) for i in again["items"]], "the same seed draws the same sample"
    item = first["items"][0]
    shown = json.loads((tmp_path / "audit" / "items" / item / "item.json").read_text())
    turn = key[item].turn
    assert shown["prompt"] == f"Turn {turn} of {key[item].task_id}."
    assert shown["previous"]["turn"] == turn - 1
    assert shown["previous"]["prompt"] == f"Turn {turn - 1} of {key[item].task_id}."
    assert shown["previous"]["screenshots"] == ["previous-screenshot.png"]
    assert (tmp_path / "audit" / "items" / item / "previous-screenshot.png").read_bytes() == PNG
    everything = "".join(p.read_text() for p in (tmp_path / "audit" / "items").rglob("item.json"))
    assert "model-secret" not in everything and "judge-secret" not in everything


def test_table5_from_a_labels_file_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Four items. i1: both annotators prior_regression; i2: new_requirement_only; i3: insufficient evidence;
    i4: tied (one each). N = 2 attributable: 1 prior-regression-containing (50.0%), 1 new-requirement-only."""
    run = _write_run(tmp_path / "run", {"t1": "PF", "t2": "PPF", "t3": "PFPF"})
    audit = tmp_path / "audit"
    items = write_audit_sample([run], audit, seed=0)["items"]
    key = read_key(audit)
    votes = {items[0]: ["prior_regression", "prior_regression"], items[1]: ["new_requirement_only"],
             items[2]: ["insufficient_evidence"], items[3]: ["prior_regression", "new_requirement_only"]}
    for item, attributions in votes.items():
        for n, attribution in enumerate(attributions):
            append_audit_label(audit / "labels.jsonl", AuditLabel(
                item=item, task_id=key[item].task_id, turn=key[item].turn, annotator=f"ann{n}",
                attribution=attribution))  # type: ignore[arg-type]
    overall = table5(audit)["groups"]["overall"]
    assert overall["n"] == 2
    assert overall["prior_regression"] == {"count": 1, "share": 0.5}
    assert overall["new_requirement_only"] == {"count": 1, "share": 0.5}
    assert (overall["insufficient_evidence"], overall["tied"], overall["unlabelled"]) == (1, 1, 0)
    assert main(["table", str(audit), "--json", str(tmp_path / "t5.json")]) == 0
    printed = capsys.readouterr().out
    assert "N=2 failed APR transitions" in printed and "Prior-regression-containing" in printed and "50.0%" in printed
    assert json.loads((tmp_path / "t5.json").read_text())["groups"]["interaction"]["n"] == 2
    # A plain annotation sample is refused, naming the file.
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "sample.json").write_text('{"items": []}')
    with pytest.raises(LabelsError, match=r"plain/sample.json: mode is None, not 'apr_audit'"):
        table5(tmp_path / "plain")


@pytest.mark.browser
def test_the_annotation_page_labels_transitions_in_its_audit_mode(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "run", {"t1": "PF", "t2": "PPF"})
    audit = tmp_path / "audit"
    items = write_audit_sample([run], audit, seed=1)["items"]
    key = read_key(audit)
    labels = audit / "labels.jsonl"
    annotation = Annotation(audit, labels)
    with pytest.raises(LabelsError, match="attribution: 'regression' is not one of"):
        annotation.record({"item": items[0], "annotator": "ann-1", "attribution": "regression"})

    async def scenario() -> None:
        settings = BrowserSettings()
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=settings.executable_path,
                                                       args=settings.launch_args)
            page = await browser.new_page()
            with serve_annotation(annotation) as url:
                await page.goto(url + "/annotate")
                await page.locator("#annotator").fill("ann-1")
                await page.locator("#start").click()
                await expect(page.locator("#progress")).to_have_text("0 of 2 labelled by ann-1")
                for attribution in ("prior_regression", "new_requirement_only"):
                    item = await page.locator("#item-id").inner_text()
                    turn = key[item].turn
                    await expect(page.locator("#previous-turn")).to_be_visible()
                    await expect(page.locator("#slot-form")).to_be_hidden()
                    assert await page.locator("#prev-prompt").inner_text() == f"Turn {turn - 1} of {key[item].task_id}."
                    assert await page.locator("#prompt").inner_text() == f"Turn {turn} of {key[item].task_id}."
                    shot = page.locator("#prev-screenshots img").first
                    await page.wait_for_function("() => document.querySelector('#prev-screenshots img')?.complete")
                    assert await shot.evaluate("img => img.complete && img.naturalWidth") == 1
                    assert "model-secret" not in await page.locator("body").inner_text()
                    await page.locator(f"#attr-{attribution}").check()
                    progress = await page.locator("#progress").inner_text()
                    await page.locator("#save").click()
                    await expect(page.locator("#progress")).not_to_have_text(progress)
                await expect(page.locator("#done")).to_be_visible()
            await browser.close()

    asyncio.run(scenario())
    saved = read_audit_labels(labels)
    assert [(label.item, label.attribution) for label in saved] == [(items[0], "prior_regression"),
                                                                     (items[1], "new_requirement_only")]
    assert all(label.turn == key[label.item].turn for label in saved)
    assert table5(audit)["groups"]["overall"]["n"] == 2
