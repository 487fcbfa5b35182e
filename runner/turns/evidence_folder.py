"""The evidence folder of one slot, `evidence/<task>/<turn>/` in the run dir: its file names, writers and readers.

Who writes what, and when (each file once; docs/ARCHITECTURE.md, "Evidence folder"):

    request.json, raw_response.txt      the engine: the payload before the model call, the answer as received
    generation.json                     the engine: every round of the suite's generation strategy; a
      request.roundN.json,                multi-round one's earlier answers, the requests that were not the
      raw_response.roundN.txt,            payload, and the build logs of answers it built before the last
      build.roundN.log
    build.log, src/                     the engine: after the build (src/: the files the sandbox accepted)
    workspace/                          the sandbox: the build's scratch folder (not evidence)
    state_in.json, tool_log.jsonl,      the suite's tool bridge, before serving (the logs start empty);
      resource_log.jsonl                  the artifact server appends one line per call / read
    state.json, runtime_logs.json       the artifact server: the runtime state after every call
    screenshot*.png, dom.html           capture_evidence (runner.browser.capture): the page after load
    trace.json (+ step screenshots)     the actor
    trace.zip                           the browser pool, when the session closes (browser.record_trace only)
    final_*.png, final_dom.html,        capture_final_state: the page the actor left
      evidence.json
    console.json, network.json,         write_visit_logs: the whole visit's logs, dialogs and popups,
      page_errors.json, dialogs.json      once it is over (before the live checks)
    state_carried.json                  the engine: the runtime state the user's interactions left
    episode_state.json                  the engine: what the next turn (or a resume) continues from
    packet.json                         the engine, last: its presence marks the slot as executed
    requests_fitted.jsonl               the actor, tester and generator: one line per model request, what it
                                          held and what was fitted out to fit the server (runner/models/fitting.py)
    verdict.json                        the judging phase (the judge writes it, the phase writes the final one)
    judge_requests.jsonl                the judge: the same record for each of its requests (appended)
    failed_calls.jsonl                  the actor, tester, caption model and the suites' execution roles: each
                                          structured call that failed (malformed or truncated) or was accepted
                                          only after rejected attempts, with every attempt's raw text
    judge_failed_calls.jsonl            the judge, the diagnostic judge and the pairwise judge: the same, appended
    agent.json                          an agent's slot (runner/agents/): who worked, what stopped it, what it spent
    agent_calls.jsonl                   the model proxy: every call of the agent (request, answer, tokens, seconds)
    agent_steps.jsonl                   the agent's transcript: per step its answer, each tool call and result, the
                                          files it changed, the build it tried
    agent_files/                        the agent's own files: step screenshots, build logs, its process's output
    agent_workspace/                    the agent's workspace (scratch, not evidence; removed with the build's)

A file written twice would mean two owners; the writers refuse it (EvidenceExistsError) unless the caller
replaces on purpose: the verdict (a resumed or repeated judging), a killed attempt's tool log.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from runner.turns.records import read_jsonl, write_json_atomic

__all__ = ["MAX_RAW_RESPONSE_BYTES", "EvidenceExistsError", "EvidenceFolder", "read_json_objects", "refused_files"]

MAX_RAW_RESPONSE_BYTES = 1024 * 1024  # a rejected 30 MB answer is kept as its first MiB, once


def refused_files(files: dict[str, str]) -> dict[str, str]:
    """What the packet keeps of an answer the sandbox refused: each file's name and size, not its text (the
    answer is kept once, as raw_response.txt, capped at MAX_RAW_RESPONSE_BYTES)."""
    return {name: f"[refused by the sandbox: {len(content.encode('utf-8', 'surrogatepass'))} bytes, not kept; "
                  f"the answer is in {EvidenceFolder.RAW_RESPONSE}, capped at {MAX_RAW_RESPONSE_BYTES} bytes]"
            for name, content in files.items()}


class EvidenceExistsError(FileExistsError):
    """A writer found its file already written: two owners of one evidence file."""


def read_json_objects(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of an append-only JSONL log (tool, resource); a line still being written is left out."""
    return [entry for entry in read_jsonl(path).items if isinstance(entry, dict)]


class EvidenceFolder:
    """One slot's evidence folder: paths as properties, each file's writer and reader."""

    REQUEST = "request.json"
    RAW_RESPONSE = "raw_response.txt"
    GENERATION = "generation.json"
    BUILD_LOG = "build.log"
    SOURCES = "src"
    SITE = "site"
    WORKSPACE = "workspace"
    STATE_IN = "state_in.json"
    TOOL_LOG = "tool_log.jsonl"
    RESOURCE_LOG = "resource_log.jsonl"  # runner/suites/evogenui/tool_bridge.py names it too (stdlib only, runs in the sandbox)
    STATE = "state.json"
    RUNTIME_LOGS = "runtime_logs.json"  # the artifact server, benchmark layout
    SCREENSHOT_VIEWPORT = "screenshot.png"
    SCREENSHOT_FULL = "screenshot_full.png"
    DOM = "dom.html"
    CONSOLE = "console.json"
    NETWORK = "network.json"
    PAGE_ERRORS = "page_errors.json"
    DIALOGS = "dialogs.json"  # alert/confirm/prompt and popups the page opened, on load and under the actor
    FINAL_SCREENSHOT_VIEWPORT = "final_screenshot.png"
    FINAL_SCREENSHOT_FULL = "final_screenshot_full.png"
    FINAL_DOM = "final_dom.html"
    EVIDENCE = "evidence.json"
    TRACE = "trace.json"
    BROWSER_TRACE = "trace.zip"  # Playwright's trace of the visit (browser.record_trace): `playwright show-trace`
    STATE_CARRIED = "state_carried.json"
    EPISODE_STATE = "episode_state.json"
    PACKET = "packet.json"
    VERDICT = "verdict.json"
    REQUESTS_FITTED = "requests_fitted.jsonl"  # execution roles' requests as fitted (actor, tester, generator)
    JUDGE_REQUESTS = "judge_requests.jsonl"  # the judge's requests as fitted
    FAILED_CALLS = "failed_calls.jsonl"  # execution roles' failed structured calls, with what the model wrote
    JUDGE_FAILED_CALLS = "judge_failed_calls.jsonl"  # the judging roles' (judge, diagnostic, pairwise)
    AGENT = "agent.json"
    AGENT_CALLS = "agent_calls.jsonl"
    AGENT_STEPS = "agent_steps.jsonl"
    AGENT_FILES = "agent_files"
    AGENT_WORKSPACE = "agent_workspace"
    # The runtime state as a judge reads it: the bridge's live state, else the snapshot carried to the next turn.
    RUNTIME_STATES = (STATE, STATE_CARRIED)
    # MT-Web2Code's scoring images: rendered in the execution phase and frozen into the packet (the model's page,
    # and the page the turn started from), then the judge's own copies it scores (render and region crops).
    RENDER_MODEL = "render_model.png"
    RENDER_INPUT = "render_input.png"
    SCORED_RENDER = "render.png"
    CROP_GOLDEN = "crop_golden.png"
    CROP_MODEL = "crop_model.png"
    # Written by judges; never carried into a re-judged run.
    JUDGE_OUTPUTS = frozenset({VERDICT, SCORED_RENDER, CROP_GOLDEN, CROP_MODEL, JUDGE_REQUESTS, JUDGE_FAILED_CALLS})
    NOT_EVIDENCE = frozenset({WORKSPACE, AGENT_WORKSPACE})

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"EvidenceFolder({str(self.path)!r})"

    # -- paths ---------------------------------------------------------------------------------------

    @property
    def request(self) -> Path:
        return self.path / self.REQUEST

    @property
    def raw_response(self) -> Path:
        return self.path / self.RAW_RESPONSE

    @property
    def build_log(self) -> Path:
        return self.path / self.BUILD_LOG

    @property
    def sources(self) -> Path:
        return self.path / self.SOURCES

    @property
    def workspace(self) -> Path:
        return self.path / self.WORKSPACE

    @property
    def agent_workspace(self) -> Path:
        return self.path / self.AGENT_WORKSPACE

    @property
    def agent_files(self) -> Path:
        return self.path / self.AGENT_FILES

    @property
    def state_in(self) -> Path:
        return self.path / self.STATE_IN

    @property
    def tool_log(self) -> Path:
        return self.path / self.TOOL_LOG

    @property
    def resource_log(self) -> Path:
        return self.path / self.RESOURCE_LOG

    @property
    def state(self) -> Path:
        return self.path / self.STATE

    @property
    def dom(self) -> Path:
        return self.path / self.DOM

    @property
    def final_dom(self) -> Path:
        return self.path / self.FINAL_DOM

    @property
    def trace(self) -> Path:
        return self.path / self.TRACE

    @property
    def browser_trace(self) -> Path:
        return self.path / self.BROWSER_TRACE

    @property
    def state_carried(self) -> Path:
        return self.path / self.STATE_CARRIED

    @property
    def episode_state(self) -> Path:
        return self.path / self.EPISODE_STATE

    @property
    def packet(self) -> Path:
        return self.path / self.PACKET

    @property
    def verdict(self) -> Path:
        return self.path / self.VERDICT

    # -- writers -------------------------------------------------------------------------------------

    def _claim(self, path: Path, replace: bool) -> Path:
        if not replace and os.path.lexists(path):
            raise EvidenceExistsError(f"{path}: already written (each evidence file has one writer)")
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def write_json(self, name: str, payload: Any, *, replace: bool = False) -> Path:
        """A JSON file of this folder, atomically (readers never see half a file)."""
        return write_json_atomic(self._claim(self.path / name, replace), payload)

    def write_text(self, name: str, text: str, *, replace: bool = False) -> Path:
        path = self._claim(self.path / name, replace)
        path.write_text(text, encoding="utf-8")
        return path

    def write_bytes(self, name: str, data: bytes, *, replace: bool = False) -> Path:
        path = self._claim(self.path / name, replace)
        path.write_bytes(data)
        return path

    def write_request(self, messages: list[dict[str, Any]], *, round_index: int | None = None) -> Path:
        """The payload (request.json); `round_index`: a generation round's own request (request.roundN.json)."""
        name = self.REQUEST if round_index is None else f"request.round{round_index}.json"
        return self.write_json(name, {"messages": messages})

    def write_raw_response(self, text: str, *, round_index: int | None = None,
                           limit: int = MAX_RAW_RESPONSE_BYTES) -> Path:
        """The model's answer as received, capped; the note says how much was cut and the whole answer's hash.
        `round_index`: an earlier round of a multi-round generation strategy (raw_response.roundN.txt); the
        final answer is raw_response.txt."""
        data = (text or "").encode("utf-8", "surrogatepass")
        if len(data) > limit:
            note = (f"\n... [answer cut: {len(data) - limit} of {len(data)} bytes dropped; "
                    f"sha256 of the whole answer {hashlib.sha256(data).hexdigest()}]\n").encode()
            data = data[:limit] + note
        name = self.RAW_RESPONSE if round_index is None else f"raw_response.round{round_index}.txt"
        return self.write_bytes(name, data)

    def write_generation(self, rounds: dict[str, Any]) -> Path:
        """Every model call of the slot by the suite's generation strategy (runner/turns/generation.py)."""
        return self.write_json(self.GENERATION, rounds)

    def write_build_log(self, log: str, *, round_index: int | None = None) -> Path:
        """The build of the answer (build.log); `round_index`: an earlier round's build (build.roundN.log)."""
        return self.write_text(self.BUILD_LOG if round_index is None else f"build.round{round_index}.log", log)

    def write_sources(self, files: dict[str, str]) -> None:
        """The accepted files of a turn under src/ (callers pass only files the sandbox vetted)."""
        root = self.sources.resolve()
        for name, content in files.items():
            target = (self.sources / name.lstrip("/")).resolve()
            if root in target.parents:  # never write outside the evidence folder
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)

    # -- stored-once sources ---------------------------------------------------------------------------
    #
    # A slot's accepted sources are kept once, in its src/. The later copies a slot used to hold in full
    # (packet.json's `files`, episode_state.json's `files` and `episode.files`) name that folder instead:
    # {"folder": "src" or "../<earlier turn>/src", "names": [...]}, written by `files_entry` and read back by
    # `read_files_entry`. Files no src/ of the episode holds (a suite's own starting files) stay inline.

    def files_entry(self, files: dict[str, str]) -> dict[str, Any]:
        """`files` as stored in this folder's JSON: a reference to the src/ (this slot's, else an earlier turn's
        of the same task) holding exactly these files, else the files themselves. Keys: `files` or `files_in`."""
        if files:
            for folder in [self, *self._earlier_turns()]:
                if folder._sources_hold(files):
                    where = os.path.relpath(folder.sources, self.path)
                    return {"files_in": {"folder": Path(where).as_posix(), "names": sorted(files)}}
        return {"files": files}

    def read_files_entry(self, entry: dict[str, Any]) -> dict[str, str]:
        """The files a `files_entry` stands for (inline ones as they are, for run dirs written before)."""
        ref = entry.get("files_in")
        if not isinstance(ref, dict):
            return dict(entry.get("files") or {})
        folder = (self.path / str(ref["folder"])).resolve()
        tasks_root = self.path.resolve().parent  # evidence/<task>/: a reference never leaves its task
        if tasks_root not in folder.parents:
            raise ValueError(f"{self.path}: source reference {ref['folder']!r} leaves the task's evidence")
        files = {}
        for name in ref.get("names") or []:
            path = folder / str(name).lstrip("/")
            try:
                files[name] = path.read_text(encoding="utf-8")
            except OSError as error:
                raise ValueError(f"{self.path}: the referenced source {path} is unreadable: {error}") from error
        return files

    def _earlier_turns(self) -> list["EvidenceFolder"]:
        """The same task's folders of earlier turns, latest first (turn folders are named by their index)."""
        try:
            turn = int(self.path.name)
            siblings = [entry for entry in self.path.parent.iterdir() if entry.name.isdigit() and entry.is_dir()]
        except (ValueError, OSError):
            return []
        return [EvidenceFolder(entry) for entry in sorted(siblings, key=lambda e: -int(e.name)) if int(entry.name) < turn]

    def _sources_hold(self, files: dict[str, str]) -> bool:
        """src/ holds exactly `files` (the names write_sources writes them under, the same text)."""
        root = self.sources
        if not root.is_dir():
            return False
        stored = {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}
        if stored != {name.lstrip("/") for name in files} or len(stored) != len(files):
            return False
        for name, content in files.items():
            path = root / name.lstrip("/")
            data = content.encode("utf-8", "surrogateescape")
            if path.is_symlink() or path.stat().st_size != len(data) or path.read_bytes() != data:
                return False
        return True

    def prune_workspace(self) -> None:
        """Drop the build's scratch copy of the sources once the slot is executed: only its output (dist/)
        stays, for the suites and reports that serve the built site again. src/ is the sources' one copy; an
        agent's workspace goes whole (its answer is in src/, what it did in agent_steps.jsonl)."""
        if self.agent_workspace.is_dir():
            shutil.rmtree(self.agent_workspace, ignore_errors=True)
        if not self.workspace.is_dir():
            return
        for entry in self.workspace.iterdir():
            if entry.name == "dist" and entry.is_dir() and not entry.is_symlink():
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)

    def start_tool_logs(self, state_in: Any, *, resources: bool) -> None:
        """The bridge's start: the turn's state and empty logs, so "never called" fails instead of being
        unassessed. Replaces what a killed attempt at this slot left."""
        self.write_json(self.STATE_IN, state_in, replace=True)
        self.write_text(self.TOOL_LOG, "", replace=True)
        if resources:
            self.write_text(self.RESOURCE_LOG, "", replace=True)

    def write_state_carried(self, state: Any) -> Path:
        return self.write_json(self.STATE_CARRIED, state)

    def write_episode_state(self, saved: dict[str, Any]) -> Path:
        """What the next turn continues from; its files (the turn's and the episode's) as references to the
        src/ that holds them (`files_entry`)."""
        saved = dict(saved)
        files = saved.pop("files", {})
        saved.update(self.files_entry(files))
        if isinstance(saved.get("episode"), dict):
            episode = dict(saved["episode"])
            episode.update(self.files_entry(episode.pop("files", {})))
            saved["episode"] = episode
        return self.write_json(self.EPISODE_STATE, saved)

    def write_packet(self, packet_json: dict[str, Any]) -> Path:
        """The frozen packet; its `files` as a reference to the src/ that holds them (`files_entry`)."""
        packet_json = dict(packet_json)
        packet_json.update(self.files_entry(packet_json.pop("files", {})))
        return self.write_json(self.PACKET, packet_json)

    def write_verdict(self, verdict_json: dict[str, Any]) -> Path:
        # Replaced on purpose: the judge writes its verdict, the judging phase the final one (a suite may add
        # its diagnosis), and a resumed judging of an uncommitted slot writes it again.
        return self.write_json(self.VERDICT, verdict_json, replace=True)

    def write_judge_image(self, name: str, png: bytes) -> Path:
        """A judge's scoring image (JUDGE_OUTPUTS), replaced like the verdict when the slot is judged again."""
        if name not in self.JUDGE_OUTPUTS:
            raise ValueError(f"{name!r} is not a judge output of the evidence folder ({sorted(self.JUDGE_OUTPUTS)})")
        return self.write_bytes(name, png, replace=True)

    def append_request_record(self, record: dict[str, Any], *, judging: bool, name: str | None = None) -> Path:
        """One model request's fitting record (runner/models/fitting.py), appended: a role asks many times.
        The judge's go to judge_requests.jsonl (a judge output), the execution roles' to requests_fitted.jsonl."""
        path = self.path / (name or (self.JUDGE_REQUESTS if judging else self.REQUESTS_FITTED))
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True, default=str) + "\n")
        return path

    def read_request_records(self, *, judging: bool) -> list[dict[str, Any]]:
        path = self.path / (self.JUDGE_REQUESTS if judging else self.REQUESTS_FITTED)
        return read_json_objects(path) if path.exists() else []

    def append_failed_call(self, record: dict[str, Any], *, judging: bool) -> Path:
        """One structured call that failed, or was accepted after rejected attempts (runner/models/structured.py,
        `failed_call_record`): appended, with every attempt's raw text. The judging roles' go to
        judge_failed_calls.jsonl (a judge output), the execution roles' to failed_calls.jsonl."""
        return self.append_request_record(record, judging=judging, name=self.JUDGE_FAILED_CALLS if judging
                                          else self.FAILED_CALLS)

    def read_failed_calls(self, *, judging: bool | None = None) -> list[dict[str, Any]]:
        """The failed calls kept in this folder: the judging roles', the execution roles', or (None) both."""
        names = {True: [self.JUDGE_FAILED_CALLS], False: [self.FAILED_CALLS],
                 None: [self.FAILED_CALLS, self.JUDGE_FAILED_CALLS]}[judging]
        return [entry for name in names if (self.path / name).exists() for entry in read_json_objects(self.path / name)]

    # -- an agent's slot ----------------------------------------------------------------------------------

    def record_call(self, entry: dict[str, Any]) -> Path:
        """One model call of the slot's agent, as the model proxy saw it (appended: runner/agents/proxy.py)."""
        return self._append(self.AGENT_CALLS, entry)

    def append_agent_step(self, step: dict[str, Any]) -> Path:
        """One step of the agent's transcript (appended)."""
        return self._append(self.AGENT_STEPS, step)

    def write_agent(self, summary: dict[str, Any]) -> Path:
        """The agent's slot in one file: kind, what stopped it, what it spent, notes on its workspace."""
        return self.write_json(self.AGENT, summary)

    def write_agent_file(self, name: str, data: bytes | str) -> Path:
        """One of the agent's own files (a step's screenshot or build log), under agent/; returns its path."""
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"{name!r}: an agent file is named without folders")
        relative = f"{self.AGENT_FILES}/{name}"
        return self.write_bytes(relative, data) if isinstance(data, bytes) else self.write_text(relative, data)

    def read_agent(self) -> dict[str, Any] | None:
        found = self.read_json(self.AGENT)
        return found if isinstance(found, dict) else None

    def read_agent_calls(self) -> list[dict[str, Any]]:
        path = self.path / self.AGENT_CALLS
        return read_json_objects(path) if path.exists() else []

    def read_agent_steps(self) -> list[dict[str, Any]]:
        path = self.path / self.AGENT_STEPS
        return read_json_objects(path) if path.exists() else []

    def _append(self, name: str, entry: dict[str, Any]) -> Path:
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False, sort_keys=True, default=str) + "\n")
        return path

    def clear_unfinished(self) -> None:
        """Remove what a killed execution of this slot left (no packet): the slot is executed anew."""
        if self.has_packet() or not self.path.is_dir():
            return
        for entry in self.path.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)

    # -- readers -------------------------------------------------------------------------------------

    def has_packet(self) -> bool:
        return self.packet.is_file()

    def read_json(self, name: str) -> Any:
        """A JSON file of this folder; None when it is absent or unreadable."""
        try:
            return json.loads((self.path / name).read_text())
        except (OSError, ValueError):
            return None

    def read_tool_log(self) -> list[dict[str, Any]] | None:
        """The artifact's tool calls; None: no tool bridge served this artifact."""
        return read_json_objects(self.tool_log) if self.tool_log.exists() else None

    def read_resource_log(self) -> list[dict[str, Any]] | None:
        """The artifact's resource reads; None: the task serves no resources."""
        return read_json_objects(self.resource_log) if self.resource_log.exists() else None

    def read_runtime_state(self) -> Any:
        """The tool runtime's state (the bridge's live state, else the carried snapshot); None: none recorded."""
        for name in self.RUNTIME_STATES:
            path = self.path / name
            if path.exists():
                try:
                    return json.loads(path.read_text())
                except ValueError:  # a writer mid-replace
                    continue
        return None

    def read_episode_state(self) -> dict[str, Any]:
        """The saved episode state with its files read back (run dirs written before references: as they are)."""
        saved = self.read_json(self.EPISODE_STATE)
        if not isinstance(saved, dict):
            return {}
        saved["files"] = self.read_files_entry(saved)
        saved.pop("files_in", None)
        if isinstance(saved.get("episode"), dict):
            saved["episode"]["files"] = self.read_files_entry(saved["episode"])
            saved["episode"].pop("files_in", None)
        return saved

    def read_packet_json(self) -> dict[str, Any]:
        """packet.json with its files read back; ValueError when it is unreadable or a referenced source is."""
        try:
            data = json.loads(self.packet.read_text())
        except (OSError, ValueError) as error:
            raise ValueError(f"{self.packet}: unreadable evidence packet: {error}") from error
        if not isinstance(data, dict):
            raise ValueError(f"{self.packet}: not a JSON object")
        data["files"] = self.read_files_entry(data)
        data.pop("files_in", None)
        return data
