"""The hostile corpus (tests/sandbox/hostile/corpus.py) end to end, against both sandboxes.

One real run per sandbox: the runner starts with an API key in its environment (named by model.api_key_env),
each case is one slot whose answer comes from a real OpenAI-compatible HTTP server, and a TCP and a UDP
listener on the host's 0.0.0.0 stand in for the host's other services (reached at 127.0.0.1, the primary
address or the sandbox network's gateway; pages target only those, never another machine). Every case must land in its bucket with its
evidence, the listeners must receive nothing, and the key must appear in no file of the run dir or the MLflow
store. Docker side: marker `docker`; the images are the ones the runner's own lookup finds (their content tags).

GENUI_HOSTILE_ONLY=PATTERN[,PATTERN...] (shell-style patterns of case ids) runs only those cases, for working on a
few of them; CI runs them all.
"""

from __future__ import annotations

import json
import fnmatch
import os
import re
import socket
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.sandbox.hostile.corpus import CASES, PRIVATE_PATHS, READY, HostileCase
from tests.support.components import skip_missing
from tests.support.fault_server import FaultServer, completion

# One whole run per sandbox happens in the first test that needs it. Its builds run in the floweval template
# (Tailwind's @config runs an answer's script at build time) under a short wall clock, so the build that never
# ends costs BUILD_TIMEOUT_S.
BUILD_TIMEOUT_S = 60
PIDS_LIMIT = 256  # the build's pids cap in both sandboxes (their defaults)
pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox, pytest.mark.timeout(2400)]

SECRET = f"sk-genui-hostile-{uuid.uuid4().hex}"
_ONLY = [pattern for pattern in os.environ.get("GENUI_HOSTILE_ONLY", "").split(",") if pattern]
SELECTED = tuple(case for case in CASES if not _ONLY or any(fnmatch.fnmatch(case.id, p) for p in _ONLY))
PROMPT_PREFIX = "hostile case "


@dataclass
class HostListeners:
    """A TCP and a UDP socket on the host's 0.0.0.0 (127.0.0.1, the primary address, every bridge's gateway);
    whatever reaches them is kept."""

    tcp: socket.socket = field(default_factory=lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    udp: socket.socket = field(default_factory=lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
    received: list[tuple[str, bytes]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> "HostListeners":
        self.tcp.bind(("0.0.0.0", 0))
        self.tcp.listen(16)
        self.udp.bind(("0.0.0.0", 0))
        for sock in (self.tcp, self.udp):
            sock.settimeout(0.1)
        self._thread = threading.Thread(target=self._collect, daemon=True)
        self._thread.start()
        return self

    def _collect(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.tcp.accept()
                with conn:
                    conn.settimeout(1)
                    self.received.append(("tcp", conn.recv(512)))
            except OSError:
                pass
            try:
                self.received.append(("udp", self.udp.recvfrom(512)[0]))
            except OSError:
                pass

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self.tcp.close()
        self.udp.close()


def _task_set(folder: Path, cases: tuple[HostileCase, ...] = SELECTED) -> Path:
    tasks = [{
        "id": f"hostile-{case.id}", "title": case.id, "context": "A page.",
        "turns": [{"index": 1, "prompt": f"{PROMPT_PREFIX}{case.id}",
                   "requirements": list(case.requirements or (READY,))}],
    } for case in cases]
    folder.mkdir(parents=True)
    (folder / "hostile.yaml").write_text(yaml.safe_dump({"tasks": tasks}))
    return folder


def primary_address() -> str:
    """The host's primary IPv4 address: the source address of its default route (no packet is sent)."""
    output = subprocess.run(["ip", "-4", "-o", "route", "get", "203.0.113.7"], capture_output=True, text=True,
                            check=True).stdout.split()
    return output[output.index("src") + 1]


def docker_gateway(label: str | None) -> str:
    """The gateway (a host address) of the docker sandbox's network labelled `label`, else of Docker's default
    bridge; the primary address where there is no Docker engine."""
    import docker

    try:
        client = docker.from_env(timeout=10)
        networks = client.networks.list(filters={"label": f"org.genui.sandbox={label}"}) if label else []
        network = networks[0] if networks else client.networks.get("bridge")
        network.reload()
        return network.attrs["IPAM"]["Config"][0]["Gateway"]
    except Exception:
        return primary_address()


def _answers(listeners: HostListeners, label: str | None):
    def answer(case: HostileCase) -> str:
        # Asked when the model is called: by then the run's sandbox network (and its gateway) exists.
        return case.answer(tcp=listeners.tcp.getsockname()[1], udp=listeners.udp.getsockname()[1],
                           gateway=docker_gateway(label), primary=primary_address())

    def behaviour(messages: list[dict]) -> tuple[int, str]:
        text = json.dumps(messages)
        for case in SELECTED:
            if f"{PROMPT_PREFIX}{case.id}\\" in text or f"{PROMPT_PREFIX}{case.id}\"" in text:
                return 200, completion(answer(case))
        return 500, json.dumps({"error": "unknown case"})

    return behaviour


def _docker_overrides(label: str) -> list[str]:
    """The docker sandbox as a run picks it: the runner looks up the current content-tagged images itself.

    Checked here first (the same lookup, building nothing) so that a missing engine or image is a skip that
    names its set-up step, not 20 infra slots.
    """
    from runner.sandbox.docker import DockerSandboxSettings, DockerSetupError, present_images

    try:
        present_images(DockerSandboxSettings())
    except DockerSetupError as exc:
        skip_missing("docker", f"{exc}; start the engine with scripts/start-dockerd.sh, build with "
                     "scripts/build-images.sh")
    return ["sandbox=docker", "+sandbox.options.browser_memory_mb=1024", "+sandbox.options.build_missing_images=false",
            f"sandbox.options.build_timeout_s={BUILD_TIMEOUT_S}", "sandbox.options.memory_mb=1024",
            f"sandbox.options.label={label}"]


@dataclass
class CorpusRun:
    sandbox: str
    run_dir: Path
    store: Path
    records: dict[str, dict]
    received: list[tuple[str, bytes]]
    ports: tuple[int, int]
    seconds: float
    process: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def corpus_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> CorpusRun:
    label = f"hostile-{uuid.uuid4().hex[:8]}" if request.param == "docker" else None
    sandbox = (["sandbox=local", "browser.memory_mb=1024", f"+sandbox.local.build_timeout_s={BUILD_TIMEOUT_S}"]
               if label is None else _docker_overrides(label))
    tmp = tmp_path_factory.mktemp(f"hostile-{request.param}")
    tasks = _task_set(tmp / "tasks")
    run_dir, store = tmp / "run", tmp / "mlruns"
    env = {**cli_env(), "GENUI_TEST_SECRET": SECRET}
    with HostListeners() as listeners, FaultServer(_answers(listeners, label)) as server:
        started = time.monotonic()
        process = subprocess.run(runner_command(
            "model=local-openai", f"model.base_url={server.base_url}", "model.api_key_env=GENUI_TEST_SECRET",
            "model.cache=false", "suite=smoke", f"suite.tasks_path={tasks}", "suite.web_template=floweval", "actor=probe", "judge=rules",
            f"tracking.uri=sqlite:///{store}/mlflow.db", f"tracking.artifact_root={store}/artifacts",
            f"hydra.run.dir={run_dir}",
            # Sixty pages at once on two cores beside the rest of the suite: the 400,000 px page once took over the
            # default 15 s to load in the browser container. A hang is still a hang at 30 s.
            "browser.nav_timeout_ms=30000", *sandbox,
        ), cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1800)
        seconds = time.monotonic() - started
        time.sleep(0.5)  # anything still in flight to the listeners arrives now
        ports = (listeners.tcp.getsockname()[1], listeners.udp.getsockname()[1])
    assert process.returncode == 0, process.stderr[-4000:]
    records = {}
    for line in (run_dir / "turns.jsonl").read_text().splitlines():
        record = json.loads(line)
        records[record["task_id"].removeprefix("hostile-")] = record
    print(f"hostile corpus, sandbox={request.param}: {len(records)} slots in {seconds:.0f} s")
    return CorpusRun(request.param, run_dir, store, records, list(listeners.received), ports, seconds, process)


def _evidence(run: CorpusRun, case: HostileCase) -> Path:
    return run.run_dir / run.records[case.id]["evidence_dir"]


def _network(folder: Path) -> list[dict]:
    return json.loads((folder / "network.json").read_text())


def _check_rejected(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    record = run.records[case.id]
    assert record["extra"]["build_status"] == "rejected" and record["error"], record
    assert not (folder / "src").exists() and not (folder / "workspace").exists()
    assert (folder / "raw_response.txt").is_file()


def _check_raw_capped(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    assert (folder / "raw_response.txt").stat().st_size < 1_100_000
    assert b"answer cut" in (folder / "raw_response.txt").read_bytes()[-300:]
    assert (folder / "episode_state.json").stat().st_size < 100_000


def _check_csp_blocked(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    blocked = {(entry["url"].split("?")[0], entry["reason"].split(":")[0])
               for entry in _network(folder) if entry["blocked"]}
    tcp = run.ports[0]
    for url in (f"http://127.0.0.1:{tcp}/fetch", "http://203.0.113.7/fetch", f"http://127.0.0.1:{tcp}/beacon",
                "http://203.0.113.7/pixel.png"):
        assert (url, "csp") in blocked, (url, blocked)
    assert all(entry["reason"] for entry in _network(folder) if entry["blocked"])


def _check_webrtc(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    peers = {entry["url"] for entry in _network(folder) if entry["resource_type"] == "webrtc" and entry["blocked"]}
    assert {f"stun:127.0.0.1:{run.ports[1]}", "stun:203.0.113.7:3478"} <= peers, peers


def _check_webrtc_host(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    """Every ICE server on the host's addresses is logged, as stopped, with what stopped it in this sandbox."""
    peers = [entry for entry in _network(folder) if entry["resource_type"] == "webrtc"]
    assert len(peers) == 4 and all(entry["blocked"] for entry in peers), peers
    stopped_by = "no route: the browser's network namespace" if run.sandbox == "local" else "the browser container's firewall"
    assert all(stopped_by in entry["reason"] for entry in peers), peers


def _check_navigation(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    """The attempt to leave is in the network log, and the record says the page left."""
    tcp = run.ports[0]
    tried = [entry for entry in _network(folder) if entry["url"].startswith(f"http://127.0.0.1:{tcp}/")]
    assert tried and all(entry["blocked"] for entry in tried), _network(folder)
    assert "the page navigated away from the artifact" in run.records[case.id]["error"], run.records[case.id]["error"]


def _check_screenshot_clipped(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    from PIL import Image

    from runner.browser.session import MAX_FULL_PAGE_HEIGHT

    evidence = json.loads((folder / "evidence.json").read_text())
    assert str(MAX_FULL_PAGE_HEIGHT) in evidence["screenshot_full_clipped"], evidence["screenshot_full_clipped"]
    assert "ready" in (folder / "dom.html").read_text()
    with Image.open(folder / "screenshot_full.png") as shot:
        assert shot.size[1] == MAX_FULL_PAGE_HEIGHT


def _check_download_and_trap(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    dialogs = json.loads((folder / "dialogs.json").read_text())
    assert [entry["suggested_filename"] for entry in dialogs["downloads"]] == ["payload.bin"], dialogs
    assert sorted(dialogs["unload_traps"]) == ["addEventListener", "onbeforeunload"], dialogs
    assert not list(run.run_dir.rglob("payload.bin"))


def _check_tool_call(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    calls = [entry for entry in _network(folder) if entry["url"].endswith("/__tools/call")]
    assert calls and all(entry["status"] == 404 for entry in calls), calls


def _check_popups(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    assert len(json.loads((folder / "dialogs.json").read_text())["popups"]) == 2


def _check_dialogs(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    dialogs = json.loads((folder / "dialogs.json").read_text())["dialogs"]
    assert [(d["type"], d["message"]) for d in dialogs] == [("alert", "a"), ("confirm", "b"), ("prompt", "c")]


def _check_console(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    console = json.loads((folder / "console.json").read_text())
    assert 0 < len(console) <= 2001 and (folder / "console.json").stat().st_size < 1_000_000
    assert run.records[case.id]["timings"]["evidence"] < 30  # the page's own stage: the build's time is load's


def _build_log(folder: Path) -> str:
    return (folder / "build.log").read_text(errors="replace")


def _check_fork_bomb(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    forked = re.search(r"fork bomb: (\d+) processes, then no more", _build_log(folder))
    assert forked, _build_log(folder)[-2000:]
    # Each child takes one or two of the cap's pids (sh, sleep) beside the build's own threads: about 120 to
    # 130 children here, never as many as the cap.
    assert 10 < int(forked.group(1)) < PIDS_LIMIT


def _check_build_oom(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    assert "OOM: killed by the memory limit" in _build_log(folder), _build_log(folder)[-2000:]


def _check_build_timed_out(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    assert f"timeout: killed after {BUILD_TIMEOUT_S:.1f}s wall clock" in _build_log(folder)
    assert run.records[case.id]["timings"]["total"] < BUILD_TIMEOUT_S + 60


def _check_build_log_capped(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    log = _build_log(folder)
    assert (folder / "build.log").stat().st_size < 2 * 1024 * 1024 and "printed 300 MiB" in log
    if run.sandbox == "local":  # read through the head+tail cap; Docker's engine rotates its log (no count)
        assert "bytes of log dropped" in log, log[-2000:]


def _check_network_capped(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    network = _network(folder)
    assert 100 < len(network) <= 5000 and (folder / "network.json").stat().st_size < 5_000_000
    assert all(entry["status"] in (404, None) for entry in network if entry["url"].endswith("/__tools/call"))
    record = run.records[case.id]
    if record["status"] == "runtime_error":  # the capture's own timeout ended it
        assert any(why in record["error"] for why in ("capture timed out", "Timeout", "did not answer",
                                                      "stopped answering")), record["error"]
    assert record["timings"]["evidence"] < 60


def _check_private_unreachable(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    network = _network(folder)
    origin = urlsplit(next(e["url"] for e in network if urlsplit(e["url"]).path == "/"))
    probes = [e for e in network if urlsplit(e["url"]).netloc == origin.netloc
              and urlsplit(e["url"]).path not in ("/", "/favicon.ico") and "/assets/" not in e["url"]]
    assert len(probes) >= 15, probes  # the browser folds `..` and `%2e%2e`; the rest reach the server
    assert all(e["status"] == 404 for e in probes), [e for e in probes if e["status"] != 404]
    elsewhere = [e for e in network if urlsplit(e["url"]).netloc != origin.netloc]
    assert all(e["blocked"] or not e["status"] for e in elsewhere), elsewhere
    dom = "".join((folder / name).read_text(errors="replace") for name in ("dom.html", "final_dom.html")
                  if (folder / name).is_file())
    for leaked in ("hostile case", "text_visible", "root:x:", "task_id", "PATH="):
        assert leaked not in dom, leaked
    assert len(PRIVATE_PATHS) >= 30


def _check_evidence_unforged(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    evidence = json.loads((folder / "evidence.json").read_text())
    for text in (evidence["visible_text"], evidence["final_visible_text"]):
        assert text == "ready", text
    for name in ("dom.html", "final_dom.html"):
        dom = (folder / name).read_text()
        assert dom.startswith("<!DOCTYPE html>") and "<main>ready</main>" in dom, dom[:300]


def _check_forgery_fails(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    """The dead counter earns what it does: "Count: 0" shows, two clicks on Increment change nothing, and the probe
    finds both buttons, one of which responds (IR 1/2), however the page forged the harness's readers."""
    record = run.records[case.id]
    results = {r["id"]: r for r in record["verdict"]["requirements"]}
    assert results["initial-count"]["status"] == "passed", results
    assert results["increment"]["status"] == "failed", results
    assert "did not change the DOM (0 mutations)" in results["increment"]["reason"], results
    assert record["scores"]["interaction_rate"] == 0.5, record["scores"]


def _check_all_requirements_pass(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    record = run.records[case.id]
    assert all(r["status"] == "passed" for r in record["verdict"]["requirements"]), record["verdict"]["requirements"]


def _special_entries(root: Path) -> list[str]:
    """Every symbolic link and every entry neither a regular file nor a folder under `root`."""
    found = []
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                found.append(str(path.relative_to(root)))
    return found


def _check_no_links_out(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    """The build's planted links and FIFO are gone from the slot's folder, and its log says which it removed;
    the page itself was built and served."""
    assert _special_entries(folder) == [], _special_entries(folder)
    log = _build_log(folder)
    for planted in ("dist/planted/env -> /proc/self/environ", "dist/planted/passwd -> /etc/passwd",
                    "planted/root -> /", "dist/planted/pipe (fifo)"):
        assert planted in log, log[-3000:]


def _check_counter_counts(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    record = run.records[case.id]
    assert all(r["status"] == "passed" for r in record["verdict"]["requirements"]), record["verdict"]["requirements"]
    dialogs = json.loads((folder / "dialogs.json").read_text())["dialogs"]
    assert [(d["type"], d["message"]) for d in dialogs[:3]] == [("alert", "a"), ("confirm", "b"), ("prompt", "c")]


def _check_stopped_answering(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    record = run.records[case.id]
    assert "the page stopped answering" in record["error"], record["error"]
    assert record["timings"]["checks"] < 40, record["timings"]  # the checks after the first hang are not run


def _check_slow_page_is_one_bucket(run: CorpusRun, case: HostileCase, folder: Path) -> None:
    """A slow page passes its checks or is the page's runtime failure: never a slot whose checks timed out
    recorded as a working page that failed them (the run and the reward service saw it differently)."""
    record = run.records[case.id]
    if record["status"] == "ok":
        assert all(r["status"] == "passed" for r in record["verdict"]["requirements"]), record["verdict"]
    else:
        assert "stopped answering" in record["error"] or "timed out" in record["error"], record["error"]


EVIDENCE_CHECKS = {
    "fork_bomb_capped": _check_fork_bomb, "build_oom": _check_build_oom, "build_timed_out": _check_build_timed_out,
    "build_log_capped": _check_build_log_capped, "network_capped": _check_network_capped,
    "private_unreachable": _check_private_unreachable, "evidence_unforged": _check_evidence_unforged,
    "rejected": _check_rejected, "raw_capped": _check_raw_capped, "csp_blocked": _check_csp_blocked,
    "webrtc_recorded": _check_webrtc, "tool_call_refused": _check_tool_call, "popups": _check_popups,
    "dialogs": _check_dialogs, "console_capped": _check_console, "webrtc_host_recorded": _check_webrtc_host,
    "navigation_recorded": _check_navigation, "screenshot_clipped": _check_screenshot_clipped,
    "download_and_trap_recorded": _check_download_and_trap, "forgery_fails": _check_forgery_fails,
    "all_requirements_pass": _check_all_requirements_pass, "no_links_out": _check_no_links_out,
    "counter_counts": _check_counter_counts, "stopped_answering": _check_stopped_answering,
    "slow_page_is_one_bucket": _check_slow_page_is_one_bucket,
}


@pytest.mark.parametrize("case", SELECTED, ids=[case.id for case in SELECTED])
def test_case_lands_in_its_bucket_with_its_evidence(corpus_run: CorpusRun, case: HostileCase):
    record = corpus_run.records[case.id]
    assert record["status"] in (case.bucket, *case.also), (record["status"], record["error"][:500])
    folder = _evidence(corpus_run, case)
    for name in case.evidence:
        try:
            EVIDENCE_CHECKS[name](corpus_run, case, folder)
        except AssertionError as error:  # what the slot's record says is often why its evidence is not there
            raise AssertionError(f"{name}: {error}\nthe slot's error: {record['error'][:1000]}") from error
    if record["status"] not in ("build_failed", "timeout"):  # the page was loaded
        assert (folder / "network.json").is_file() and (folder / "dialogs.json").is_file()


def test_every_slot_is_recorded_once(corpus_run: CorpusRun):
    assert sorted(corpus_run.records) == sorted(case.id for case in SELECTED)
    assert all(record["status"] != "infra" for record in corpus_run.records.values())


def test_nothing_reached_the_hosts_other_ports(corpus_run: CorpusRun):
    assert corpus_run.received == []


def test_no_link_or_special_file_is_left_in_the_run_dir(corpus_run: CorpusRun):
    assert _special_entries(corpus_run.run_dir) == []


def test_the_secret_is_nowhere_in_the_run_dir_or_mlflow(corpus_run: CorpusRun):
    needle = SECRET.encode()
    leaks = [path for root in (corpus_run.run_dir, corpus_run.store) for path in root.rglob("*")
             if path.is_file() and not path.is_symlink() and needle in path.read_bytes()]
    assert leaks == []
    assert SECRET not in corpus_run.process.stdout + corpus_run.process.stderr
