"""The evidence folder: each file has one writer, readers tolerate a log being appended, one JSONL reader."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from runner.turns.evidence_folder import MAX_RAW_RESPONSE_BYTES, EvidenceExistsError, EvidenceFolder, refused_files
from runner.turns.records import read_jsonl
from runner.suites.evogenui import tool_bridge

REPO_RUNNER = Path(__file__).resolve().parents[2] / "runner"


def test_a_file_is_written_once_unless_replaced_on_purpose(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path / "evidence" / "t" / "1")
    folder.write_request([{"role": "user", "content": "hi"}])
    with pytest.raises(EvidenceExistsError, match="request.json"):
        folder.write_request([{"role": "user", "content": "again"}])
    assert json.loads(folder.request.read_text()) == {"messages": [{"role": "user", "content": "hi"}]}
    folder.write_verdict({"passed": False})
    folder.write_verdict({"passed": True})  # the judge's, then the judging phase's final verdict
    assert folder.read_json(folder.VERDICT) == {"passed": True}


def test_a_killed_attempt_is_cleared_but_an_executed_slot_is_kept(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    folder.write_build_log("half")
    folder.write_sources({"src/App.tsx": "x"})
    folder.clear_unfinished()
    assert list(tmp_path.iterdir()) == []
    folder.write_build_log("whole")
    folder.write_packet({"version": 1})
    folder.clear_unfinished()
    assert folder.build_log.read_text() == "whole" and folder.has_packet()


def test_the_tool_bridge_start_replaces_a_killed_attempts_logs(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    folder.tool_log.write_text('{"stale": true}\n')
    folder.start_tool_logs({"n": 1}, resources=True)
    assert folder.read_tool_log() == [] and folder.read_resource_log() == []
    assert folder.read_json(folder.STATE_IN) == {"n": 1}
    assert EvidenceFolder(tmp_path / "none").read_tool_log() is None


def test_logs_are_read_up_to_a_line_being_written(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    folder.tool_log.write_text('{"tool": "a"}\n[1]\n{"tool": "b"}\n{"tool": "to')
    assert folder.read_tool_log() == [{"tool": "a"}, {"tool": "b"}]  # only objects; the torn line left out
    lines = read_jsonl(folder.tool_log)
    assert lines.items == [{"tool": "a"}, [1], {"tool": "b"}]
    assert lines.whole_bytes == len('{"tool": "a"}\n[1]\n{"tool": "b"}\n')


def test_the_runtime_state_is_the_live_one_else_the_carried_snapshot(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    assert folder.read_runtime_state() is None
    folder.write_state_carried({"v": 1})
    assert folder.read_runtime_state() == {"v": 1}
    folder.state.write_text('{"v": 2}')
    assert folder.read_runtime_state() == {"v": 2}


def test_the_artifact_server_names_the_resource_log_as_the_folder_does() -> None:
    # The tool bridge runs inside the sandbox on the standard library alone, so it cannot import the layout.
    assert tool_bridge.RESOURCE_LOG_NAME == EvidenceFolder.RESOURCE_LOG


def test_no_module_spells_an_evidence_file_name_but_the_layout() -> None:
    names = {value for key, value in vars(EvidenceFolder).items() if key.isupper() and isinstance(value, str)}
    names -= {EvidenceFolder.SOURCES, EvidenceFolder.WORKSPACE}  # common words ("src", "workspace")
    allowed = {REPO_RUNNER / "turns" / "evidence_folder.py", REPO_RUNNER / "suites" / "evogenui" / "tool_bridge.py"}
    found = []
    for path in sorted(REPO_RUNNER.rglob("*.py")):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                found.append(f"{path.relative_to(REPO_RUNNER)}:{node.lineno} {node.value!r}")
    assert not found, found


def test_judge_images_are_replaced_when_judged_again_and_only_judge_outputs_go_that_way(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    folder.write_judge_image(folder.CROP_MODEL, b"first")
    folder.write_judge_image(folder.CROP_MODEL, b"second")  # a resumed judging of an uncommitted slot
    assert (tmp_path / folder.CROP_MODEL).read_bytes() == b"second"
    with pytest.raises(ValueError, match="render_model.png"):
        folder.write_judge_image(folder.RENDER_MODEL, b"x")  # frozen in the execution phase: written once
    folder.write_bytes(folder.RENDER_MODEL, b"frozen")
    with pytest.raises(EvidenceExistsError):
        folder.write_bytes(folder.RENDER_MODEL, b"again")
    assert {folder.SCORED_RENDER, folder.CROP_GOLDEN, folder.CROP_MODEL} <= folder.JUDGE_OUTPUTS


FILES = {"src/App.jsx": "export default function App() { return <p>ready</p>; }\n", "src/util.js": "export const x = 1;\n"}


def test_sources_are_stored_once_and_later_copies_refer_to_them(tmp_path: Path) -> None:
    first = EvidenceFolder(tmp_path / "evidence" / "t" / "1")
    first.write_sources(FILES)
    first.write_packet({"version": 1, "files": FILES})
    first.write_episode_state({"files": FILES, "assistant_text": "a", "episode": {"files": FILES, "history": []}})
    packet, saved = first.read_json(first.PACKET), first.read_json(first.EPISODE_STATE)
    assert "files" not in packet and packet["files_in"] == {"folder": "src", "names": sorted(FILES)}
    assert saved["files_in"]["folder"] == saved["episode"]["files_in"]["folder"] == "src"
    assert "ready" not in first.packet.read_text() + first.episode_state.read_text()
    assert first.read_packet_json()["files"] == FILES
    assert first.read_episode_state()["files"] == first.read_episode_state()["episode"]["files"] == FILES

    # A later turn that carries the same files (its own answer was refused) refers to the earlier turn's src/.
    later = EvidenceFolder(tmp_path / "evidence" / "t" / "2")
    later.write_episode_state({"files": FILES, "episode": {"files": FILES}})
    assert later.read_json(later.EPISODE_STATE)["files_in"]["folder"] == "../1/src"
    assert later.read_episode_state()["episode"]["files"] == FILES


def test_files_no_src_holds_stay_inline(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path / "evidence" / "t" / "1")
    folder.write_sources(FILES)
    changed = {**FILES, "src/util.js": "export const x = 2;\n"}
    folder.write_packet({"version": 1, "files": changed})
    assert folder.read_json(folder.PACKET)["files"] == changed == folder.read_packet_json()["files"]


def test_a_run_dir_written_before_references_reads_as_it_did(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path / "evidence" / "t" / "1")
    folder.write_json(folder.PACKET, {"version": 1, "files": FILES})  # the old layout: files inline
    folder.write_json(folder.EPISODE_STATE, {"files": FILES, "episode": {"files": FILES}})
    assert folder.read_packet_json()["files"] == FILES
    assert folder.read_episode_state()["episode"]["files"] == FILES


def test_a_reference_never_leaves_the_tasks_evidence(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path / "evidence" / "t" / "1")
    folder.write_json(folder.PACKET, {"version": 1, "files_in": {"folder": "../../../secrets", "names": ["a"]}})
    with pytest.raises(ValueError, match="leaves the task's evidence"):
        folder.read_packet_json()


def test_a_refused_answer_is_kept_once_capped(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    answer = "A" * (3 * MAX_RAW_RESPONSE_BYTES)
    folder.write_raw_response(answer)
    folder.write_packet({"version": 1, "files": refused_files({"src/App.jsx": answer})})
    assert folder.raw_response.stat().st_size < MAX_RAW_RESPONSE_BYTES + 200
    assert folder.packet.stat().st_size < 1000
    assert str(len(answer)) in folder.read_packet_json()["files"]["src/App.jsx"]


def test_the_workspace_keeps_only_the_build_output(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    (folder.workspace / "src").mkdir(parents=True)
    (folder.workspace / "src" / "App.jsx").write_text("x")
    (folder.workspace / "dist").mkdir()
    (folder.workspace / "dist" / "index.html").write_text("<p>")
    (folder.workspace / "node_modules").symlink_to(tmp_path)
    folder.prune_workspace()
    assert [p.name for p in folder.workspace.iterdir()] == ["dist"] and (folder.workspace / "dist" / "index.html").is_file()
    assert tmp_path.is_dir()  # the link went, not what it points at


# The documented bound of one slot's evidence folder (docs/threat-model.md, "Storage"): the accepted sources
# once, the build output (about their size), raw_response.txt (at most MAX_RAW_RESPONSE_BYTES) and request.json,
# plus a few MiB of browser evidence (screenshots, DOM, logs).
BROWSER_EVIDENCE_BYTES = 4 * 1024 * 1024


def _big_answer(files: int, chars: int) -> dict[str, str]:
    """An app that bundles `files` modules of `chars` characters each and shows "ready"."""
    modules = {f"src/d{i}.js": f"export const d{i} = {json.dumps(chr(65 + i) * chars)};\n" for i in range(files)}
    imports = "".join(f'import {{ d{i} }} from "./d{i}.js";\n' for i in range(files))
    total = " + ".join(f"d{i}.length" for i in range(files))
    return {**modules, "src/App.jsx": f"{imports}export default function App() {{ return <p>ready {{{total}}}</p>; }}\n"}


def _size(folder: Path) -> int:
    return sum(path.lstat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink())


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.build
@pytest.mark.sandbox
def test_a_slot_stays_within_its_documented_bound_and_a_refused_answer_is_kept_once(tmp_path: Path) -> None:
    import subprocess

    import yaml

    from tests.conftest import REPO_ROOT, cli_env, runner_command
    from tests.support.fault_server import FaultServer, completion

    accepted = _big_answer(8, 480 * 1024)  # 3.9 MB, under the 64 x 512 KiB answer cap
    refused = {"src/App.jsx": "export default function App() { return <p>x</p>; }\n// " + "A" * (30 * 1024 * 1024)}
    answers = {"big-accepted": accepted, "big-refused": refused}
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "storage.yaml").write_text(yaml.safe_dump({"tasks": [{
        "id": task_id, "title": task_id, "context": "A page.",
        "turns": [{"index": 1, "prompt": f"storage case {task_id}.", "requirements": [
            {"id": "ready", "description": 'The page shows "ready".',
             "check": {"assert": [{"type": "text_visible", "text": "ready"}]}}]}]} for task_id in answers]}))

    def behaviour(messages: list[dict]) -> tuple[int, str]:
        task_id = next(task_id for task_id in answers if f"storage case {task_id}." in json.dumps(messages))
        return 200, completion(json.dumps({"assistant_text": "Here it is.", "files": answers[task_id]}))

    run_dir = tmp_path / "run"
    with FaultServer(behaviour) as server:
        process = subprocess.run(runner_command(
            "model=local-openai", f"model.base_url={server.base_url}", "model.cache=false", "suite=smoke",
            f"suite.tasks_path={tasks}", "sandbox=local", "actor=probe", "judge=rules", "tracking=off",
            f"hydra.run.dir={run_dir}"), cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=900)
    assert process.returncode == 0, process.stderr[-3000:]
    records = {r["task_id"]: r for r in map(json.loads, (run_dir / "turns.jsonl").read_text().splitlines())}
    assert records["big-accepted"]["status"] == "ok" and records["big-accepted"]["passed"] is True
    assert records["big-refused"]["status"] == "build_failed"

    slot = run_dir / records["big-accepted"]["evidence_dir"]
    answer_bytes = sum(len(text.encode()) for text in accepted.values())
    build_bytes = _size(slot / EvidenceFolder.WORKSPACE)
    assert _size(slot / EvidenceFolder.SOURCES) == answer_bytes  # the one copy of the sources
    assert build_bytes < 1.2 * answer_bytes  # the workspace keeps only the build output
    for name in (EvidenceFolder.PACKET, EvidenceFolder.EPISODE_STATE, "report.html"):
        path = slot / name if name != "report.html" else run_dir / name
        assert path.stat().st_size < 1024 * 1024, (name, path.stat().st_size)
    bound = answer_bytes + build_bytes + MAX_RAW_RESPONSE_BYTES + BROWSER_EVIDENCE_BYTES
    refused_slot = run_dir / records["big-refused"]["evidence_dir"]
    print(f"answer {answer_bytes} B: slot {_size(slot)} B (build {build_bytes} B), bound {bound} B; "
          f"refused 30 MiB answer: slot {_size(refused_slot)} B; report.html {(run_dir / 'report.html').stat().st_size} B")
    assert _size(slot) < bound, (_size(slot), bound)
    assert _size(slot) < 2 * answer_bytes + MAX_RAW_RESPONSE_BYTES + BROWSER_EVIDENCE_BYTES

    assert _size(refused_slot) < MAX_RAW_RESPONSE_BYTES + 256 * 1024, sorted(
        (p.name, p.stat().st_size) for p in refused_slot.rglob("*") if p.is_file())


def test_failed_calls_are_appended_per_phase_and_the_judges_are_a_judge_output(tmp_path) -> None:
    from runner.turns.evidence_folder import EvidenceFolder

    folder = EvidenceFolder(tmp_path)
    folder.append_failed_call({"role": "actor", "attempts": [{"text": "a"}]}, judging=False)
    folder.append_failed_call({"role": "actor", "attempts": [{"text": "b"}]}, judging=False)
    folder.append_failed_call({"role": "judge", "attempts": [{"text": "\t" * 9}]}, judging=True)
    assert [c["attempts"][0]["text"] for c in folder.read_failed_calls(judging=False)] == ["a", "b"]
    assert [c["role"] for c in folder.read_failed_calls()] == ["actor", "actor", "judge"]
    assert EvidenceFolder.JUDGE_FAILED_CALLS in EvidenceFolder.JUDGE_OUTPUTS  # never carried into a re-judged run
    assert EvidenceFolder.FAILED_CALLS not in EvidenceFolder.JUDGE_OUTPUTS
