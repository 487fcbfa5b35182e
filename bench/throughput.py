"""Model-bound throughput: slots per minute at episode concurrency 1, 2, 4, 8, 16, in one run.

    .venv/bin/python bench/throughput.py [--levels 1,2,4,8,16] [--waves 3] [--latency 2.0]

The generator is a real OpenAI-compatible HTTP server on 127.0.0.1 (its own process) that answers every chat
completion after a fixed latency (2 s) with one small React app; the runner reaches it through provider
openai (response cache off), so every slot waits the full latency. Each slot goes through the whole path:
model call, parse, bubblewrap build, sandboxed serve, browser evidence, probe actor, live checks, packet,
rules verdict (tracking off). Each level runs `waves x level` one-turn episodes (at least 6).

Each level runs min(level, 8) browsers (`--max-browsers`): a slot holds its browser while the page settles
and the probe and checks wait, so two browsers (the run default) would bound the rate instead of the CPU.
Printed per level: slots per minute (from the moment the plan is written, just before work starts, to the
last record; the run's fixed start-up and closing are left out), the speed-up over level 1, and the runner's CPU seconds per slot
(its process and every child it reaped: builds, servers, browser), the share of the cores the runner got
and the machine's load (other processes on a shared machine take CPU the bound assumes is the runner's). CPU per
slot is the machine-wide busy time (/proc/stat) per slot, never less than the runner's process tree: a confined
browser is no reaped child of the runner, so its CPU is not in the tree's figure; run it on an otherwise idle
machine. The runner process's own share (its event loop) is printed too. The CPU bound of this machine is
`cores / cpu_s_per_slot` slots per second; the model bound at level L is `L / latency`. Goals: >= 3.5x from
1 to 8; at 16, >= 80% of the CPU bound (from the level-16 CPU per slot). Peak memory (RSS of the runner's
process tree) at 16 is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import multiprocessing
import os
import resource
import socket
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.experiment import compose_config  # noqa: E402
from bench.proc_memory import process_tree_rss  # noqa: E402

APP = """import { useState } from "react";

export default function App() {
  const [count, setCount] = useState(0);
  return (
    <main>
      <h1>Counter</h1>
      <p>Count: {count}</p>
      <button onClick={() => setCount(count + 1)}>Increment</button>
    </main>
  );
}
"""


def _answer() -> bytes:
    content = json.dumps({"assistant_text": "A counter.", "files": {"src/App.jsx": APP}})
    return json.dumps({
        "id": "bench", "object": "chat.completion", "created": int(time.time()), "model": "bench",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 100, "total_tokens": 200},
    }).encode()


def serve_fixed_latency(port: int, latency_s: float) -> None:
    """The stand-in generator: every POST .../chat/completions answers after `latency_s`, concurrently."""
    body = _answer()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            payload = json.dumps({"object": "list", "data": [{"id": "bench", "object": "model"}]}).encode()
            self._send(payload)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            time.sleep(latency_s)
            self._send(body)

        def _send(self, payload: bytes) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_tasks(folder: Path, count: int) -> None:
    """`count` one-turn copies of the smoke counter task, each its own episode."""
    source = yaml.safe_load((REPO / "tasks" / "smoke" / "counter.yaml").read_text())
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        task = dict(source, id=f"bench-{index:03d}", turns=source["turns"][:1])
        (folder / f"bench-{index:03d}.yaml").write_text(yaml.safe_dump(task, sort_keys=False))


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def own_cpu_seconds() -> float:
    """The runner process alone (its event loop and threads): one core at most for the event loop."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent busy (/proc/stat): on an idle machine, what the run cost, including
    processes that are not the runner's reaped children (a confined browser is started through a namespace
    holder, so its CPU never reaches RUSAGE_CHILDREN)."""
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, Path("/proc/stat").read_text().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class PeakMemory:
    def __init__(self, interval_s: float = 0.25) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, args=(interval_s,), daemon=True)

    def _watch(self, interval_s: float) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(process_tree_rss(os.getpid())))
            self._stop.wait(interval_s)

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_level(level: int, episodes: int, base_url: str, scratch: Path, browsers: int) -> dict[str, float]:
    from rich.console import Console

    from runner.run.experiment import run_experiment

    tasks = scratch / f"tasks-{level}"
    write_tasks(tasks, episodes)
    config = compose_config([
        "model=local-openai", f"model.base_url={base_url}", "model.cache=false", "model.max_retries=0",
        "suite=smoke", f"suite.tasks_path={tasks}", "tracking=off", "run.phases=together",
        f"concurrency.episodes={level}", f"concurrency.model_calls={level}", f"concurrency.browsers={browsers}",
    ])
    run_dir = scratch / f"run-{level}"
    quiet = Console(file=io.StringIO(), width=120)
    cpu0, own0, busy0, wall0 = cpu_seconds(), own_cpu_seconds(), machine_busy_seconds(), time.perf_counter()
    with PeakMemory() as memory:
        asyncio.run(run_experiment(config, run_dir, console=quiet))
    cpu, own = cpu_seconds() - cpu0, own_cpu_seconds() - own0
    busy = machine_busy_seconds() - busy0
    load = os.getloadavg()[0]
    # Slot time: from the plan (printed and written just before work starts) to the last record appended;
    # the run's fixed start-up and its closing summary and viewer are left out.
    wall = (run_dir / "turns.jsonl").stat().st_mtime - (run_dir / "plan.json").stat().st_mtime
    total = time.perf_counter() - wall0
    records = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    statuses = {record["status"] for record in records}
    if len(records) != episodes or statuses != {"ok"}:
        errors = sorted({str(record.get("error"))[:300] for record in records if record["status"] != "ok"})
        raise SystemExit(f"level {level}: {len(records)} records, statuses {statuses}: the harness failed; "
                         f"errors: {errors}")
    return {"slots": len(records), "wall_s": wall, "total_s": total, "per_min": 60 * len(records) / wall,
            "cpu_per_slot": cpu / len(records), "own_cpu_per_slot": own / len(records),
            "machine_cpu_per_slot": busy / len(records), "runner_loop_share": own / total,
            "peak_rss_mib": memory.peak / 2**20,
            "cpu_share": cpu / (total * len(os.sched_getaffinity(0))), "load": load}


def cpu_per_slot(result: dict[str, float]) -> float:
    """The CPU a slot costs: the machine-wide figure (it includes the confined browsers), never below what the
    runner's own process tree accounts for."""
    return max(result["machine_cpu_per_slot"], result["cpu_per_slot"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,2,4,8,16")
    parser.add_argument("--waves", type=int, default=3, help="episodes per level = waves x level (at least 6)")
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--max-browsers", type=int, default=8,
                        help="browsers per level = min(level, this): a slot holds one while it waits on page settling")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    cores = len(os.sched_getaffinity(0))
    port = free_port()
    server = multiprocessing.get_context("spawn").Process(target=serve_fixed_latency, args=(port, args.latency),
                                                          daemon=True)
    server.start()
    base_url = f"http://127.0.0.1:{port}/v1"
    for _ in range(100):  # bounded wait for the server to listen
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    results: dict[int, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="genui-throughput-") as scratch:
            for level in levels:
                browsers = min(level, args.max_browsers)
                results[level] = run_level(level, max(6, args.waves * level), base_url, Path(scratch), browsers)
                r = results[level]
                print(f"concurrency {level:2d} ({browsers} browsers): {r['slots']:3d} slots in {r['wall_s']:6.1f} s = {r['per_min']:6.1f} "
                      f"slots/min; cpu {r['cpu_per_slot']:.2f} s/slot in the runner's tree, {r['machine_cpu_per_slot']:.2f} machine-wide, "
                      f"runner process {r['own_cpu_per_slot']:.2f} (its loop busy {r['runner_loop_share']:.0%}; "
                      f"{r['cpu_share']:.0%} of the cores, machine load "
                      f"{r['load']:.1f}); peak rss {r['peak_rss_mib']:.0f} MiB", flush=True)
    finally:
        server.terminate()
        server.join(timeout=5)
    base = results[levels[0]]["per_min"]
    print(f"\nmodel latency {args.latency:g} s, {cores} CPU core(s)")
    for level in levels:
        r = results[level]
        model_bound = 60 * level / args.latency
        cpu_bound = 60 * cores / cpu_per_slot(r)
        print(f"  {level:2d}: {r['per_min']:6.1f} slots/min, x{r['per_min'] / base:4.2f} vs {levels[0]}; model bound "
              f"{model_bound:6.1f}, cpu bound {cpu_bound:6.1f} ({r['per_min'] / min(model_bound, cpu_bound):.0%} of the lower)")
    if 8 in results and 1 in results:
        print(f"speed-up 1 -> 8: x{results[8]['per_min'] / results[1]['per_min']:.2f} (goal >= 3.5)")
    if 16 in results:
        r = results[16]
        cpu_bound = 60 * cores / cpu_per_slot(r)
        print(f"at 16: {r['per_min']:.1f} slots/min = {r['per_min'] / cpu_bound:.0%} of the CPU bound "
              f"{cpu_bound:.1f} (goal >= 80%); peak memory {r['peak_rss_mib']:.0f} MiB")


if __name__ == "__main__":
    main()
