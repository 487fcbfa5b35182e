"""Model-bound throughput: slots per minute as more wait on a served model at once, in one run.

    .venv/bin/python bench/throughput.py [--levels 1,2,4,8,16] [--waves 3] [--latency 2.0]
    .venv/bin/python bench/throughput.py --scenario actor [--levels 1,8,16,32,64] [--steps 5] [--latency 2.0]
    .venv/bin/python bench/throughput.py --scenario same-summaries [--copies 4] [--in-flight 32]

Scenario `generator` (the default): the generator is the model the slots wait on, episode concurrency 1 to 16.

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

Scenario `actor`: the actor is the model the slots wait on (EvoGenUI-Bench's LLM actor, UI-TARS in FlowEval).
The generator is the oracle (no model wait); the actor is `actor=llm` (a screenshot each step, as a VLM) against a
stand-in model on 127.0.0.1 (bench/stand_in_actor.py, its own process) that answers each step after `--latency`
seconds: `--steps - 1` scrolls, then finish. Each level L runs `waves x L` one-turn episodes (at least 4) with
`concurrency.episodes=L concurrency.visits=L` and the browsers the runner picks (one per core here), so up to L
visits wait on the actor at once, sharing the browsers. Printed per level: slots per minute, the most actor
requests the stand-in had in flight at once, the peak memory (PSS of the runner's process tree, sampled each
second; the machine's used memory and swap), CPU seconds per slot (the runner's reaped process tree, and the
machine's busy time, which on a shared machine includes other work) and the load average. The memory a waiting
visit adds is the PSS slope between the lowest and the highest level. Goals on the 2-core, 24 GB machine: >= 32
actor requests in flight without swapping; slots per minute from 1 to 32 in flight >= 12x; <= 150 MiB per waiting
visit.

Scenario `same-summaries`: correctness at any concurrency. EvoGenUI-Bench's tasks (`--copies` copies of each, two
turns), oracle generator, rules judge, the stand-in actor, run once with one visit at a time and once with
`--in-flight` (episodes and visits); the two summary.json files must be equal (timings aside), slot by slot.
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
from bench.proc_memory import process_tree_pss, process_tree_rss  # noqa: E402

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


def generator_scenario(args: argparse.Namespace) -> None:
    levels = [int(x) for x in (args.levels or "1,2,4,8,16").split(",")]
    waves = args.waves or 3
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
                results[level] = run_level(level, max(6, waves * level), base_url, Path(scratch), browsers)
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



# ---- the actor-bound scenario ---------------------------------------------------------------------------------

GOAL_ACTOR_IN_FLIGHT, GOAL_ACTOR_SPEEDUP, GOAL_VISIT_MIB = 32, 12.0, 150.0


class MemoryWatch:
    """Peaks, sampled in a thread: PSS of this process's tree (each second), the machine's used memory and swap."""

    def __init__(self) -> None:
        self.pss = self.used = self.swap = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._swapped_out = _swapped_out()

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.pss = max(self.pss, process_tree_pss(os.getpid()))
            info = _meminfo()
            self.used = max(self.used, info["MemTotal"] - info["MemAvailable"])
            self.swap = max(self.swap, info["SwapTotal"] - info["SwapFree"])
            self._stop.wait(1.0)

    @property
    def pages_swapped_out(self) -> int:
        return _swapped_out() - self._swapped_out

    def __enter__(self) -> "MemoryWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _meminfo() -> dict[str, int]:
    """/proc/meminfo in bytes."""
    values = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        name, _, rest = line.partition(":")
        values[name] = int(rest.split()[0]) * 1024
    return values


def _swapped_out() -> int:
    for line in Path("/proc/vmstat").read_text().splitlines():
        if line.startswith("pswpout "):
            return int(line.split()[1])
    return 0


def _get_json(url: str) -> dict:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 (the bench's own loopback server)
        return json.loads(response.read())


def run_actor_level(level: int, episodes: int, base_url: str, scratch: Path, steps: int) -> dict[str, float]:
    from rich.console import Console

    from bench.stand_in_actor import actor_overrides
    from runner.run.experiment import run_experiment

    tasks = scratch / f"actor-tasks-{level}"
    write_tasks(tasks, episodes)
    config = compose_config([
        "model=oracle", "suite=smoke", f"suite.tasks_path={tasks}", "judge=rules", "tracking=off",
        "run.phases=together", *actor_overrides(base_url, steps=steps),
        f"concurrency.episodes={level}", f"concurrency.visits={level}",
    ])
    run_dir = scratch / f"actor-run-{level}"
    stats_url = base_url.rsplit("/v1", 1)[0] + "/stats"
    _get_json(stats_url + "?reset=1")
    cpu0, busy0 = cpu_seconds(), machine_busy_seconds()
    with MemoryWatch() as memory:
        asyncio.run(run_experiment(config, run_dir, console=Console(file=io.StringIO(), width=120)))
    cpu, busy = cpu_seconds() - cpu0, machine_busy_seconds() - busy0
    stats = _get_json(stats_url)
    plan = json.loads((run_dir / "plan.json").read_text())
    wall = (run_dir / "turns.jsonl").stat().st_mtime - (run_dir / "plan.json").stat().st_mtime
    records = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    bad = [r for r in records if r["status"] != "ok"]
    if len(records) != episodes or bad:
        errors = sorted({str(r.get("error"))[:300] for r in bad})
        raise SystemExit(f"level {level}: {len(records)} records, {len(bad)} not ok: the harness failed; "
                         f"errors: {errors}")
    steps_taken = [json.loads((run_dir / r["evidence_dir"] / "trace.json").read_text())["summary"]["steps"]
                   for r in records]
    if set(steps_taken) != {steps}:
        raise SystemExit(f"level {level}: actor traces of {sorted(set(steps_taken))} steps, expected {steps}")
    return {"slots": len(records), "wall_s": wall, "per_min": 60 * len(records) / wall,
            "in_flight": stats["peak"], "answered": stats["answered"], "browsers": plan["concurrency"]["browsers"],
            "cpu_per_slot": cpu / len(records), "machine_cpu_per_slot": busy / len(records),
            "pss_mib": memory.pss / 2**20, "used_mib": memory.used / 2**20, "swap_mib": memory.swap / 2**20,
            "swapped_out": memory.pages_swapped_out, "load": os.getloadavg()[0]}


def start_stand_in(latency: float, steps: int) -> tuple[multiprocessing.Process, str]:
    from bench.stand_in_actor import serve_stand_in_actor, wait_listening

    port = free_port()
    server = multiprocessing.get_context("spawn").Process(target=serve_stand_in_actor, args=(port, latency, steps),
                                                          daemon=True)
    server.start()
    wait_listening(port)
    return server, f"http://127.0.0.1:{port}/v1"


def actor_scenario(args: argparse.Namespace) -> None:
    from runner.run.capacity import Machine, choose_limits

    levels = [int(x) for x in (args.levels or "1,8,16,32,64").split(",")]
    waves = args.waves or 2
    server, base_url = start_stand_in(args.latency, args.steps)
    results: dict[int, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="genui-actor-throughput-") as scratch:
            for level in levels:
                r = results[level] = run_actor_level(level, max(4, waves * level), base_url, Path(scratch), args.steps)
                print(f"in flight {level:2d}: {r['slots']:3d} slots in {r['wall_s']:6.1f} s = {r['per_min']:6.1f} "
                      f"slots/min; actor requests in flight at most {r['in_flight']:2d}; {r['browsers']} browsers; "
                      f"cpu {r['cpu_per_slot']:.2f} s/slot in the runner's tree, {r['machine_cpu_per_slot']:.2f} "
                      f"machine-wide; peak PSS {r['pss_mib']:.0f} MiB, machine used {r['used_mib']:.0f} MiB, "
                      f"swap {r['swap_mib']:.0f} MiB ({r['swapped_out']} pages out); load {r['load']:.1f}",
                      flush=True)
    finally:
        server.terminate()
        server.join(timeout=5)
    cores = len(os.sched_getaffinity(0))
    low, high = levels[0], levels[-1]
    print(f"\nactor step latency {args.latency:g} s x {args.steps} steps a visit, {cores} CPU core(s), "
          f"load average now {os.getloadavg()[0]:.1f}")
    for level in levels:
        r = results[level]
        print(f"  {level:2d}: {r['per_min']:6.1f} slots/min, x{r['per_min'] / results[low]['per_min']:5.2f} vs {low}; "
              f"model bound {60 * level / (args.latency * args.steps):6.1f}; in flight {r['in_flight']}")
    most = max(r["in_flight"] for r in results.values())
    swapped = sum(r["swapped_out"] for r in results.values())
    print(f"actor requests in flight: at most {most} (goal >= {GOAL_ACTOR_IN_FLIGHT}); pages swapped out: {swapped}; "
          f"peak swap used {max(r['swap_mib'] for r in results.values()):.0f} MiB")
    if 32 in results and low == 1:
        print(f"speed-up 1 -> 32 in flight: x{results[32]['per_min'] / results[1]['per_min']:.2f} "
              f"(goal >= {GOAL_ACTOR_SPEEDUP:g})")
    if high > low:
        slope = (results[high]["pss_mib"] - results[low]["pss_mib"]) / (high - low)
        print(f"memory per waiting visit (PSS slope {low} -> {high}): {slope:.1f} MiB (goal <= {GOAL_VISIT_MIB:g})")
    limits = choose_limits(compose_config(["model=oracle", "actor=mimo", "tracking=off"]), episodes_available=150,
                           machine=Machine.detect())
    print("what the runner picks here for EvoGenUI-Bench with a vLLM-served actor (150 episodes):")
    for line in limits.lines():
        print(f"  {line}")


# ---- the same summaries at any concurrency -------------------------------------------------------------------

def write_evogenui_copies(folder: Path, copies: int) -> None:
    """`copies` copies of each of the project's EvoGenUI-Bench tasks (ids suffixed), for more episodes at once."""
    source = REPO / "tasks" / "evogenui"
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.json")):
        task = json.loads(path.read_text())
        for copy in range(copies):
            key = "task_id" if "task_id" in task else "episode_id"
            (folder / f"{path.stem}_{copy}.json").write_text(json.dumps(dict(task, **{key: f"{task[key]}_{copy}"})))


def _without_timings(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items()
                if not (k.endswith("_s") or any(word in k for word in ("timing", "seconds", "duration")))}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def same_summaries_scenario(args: argparse.Namespace) -> None:
    from rich.console import Console

    from bench.stand_in_actor import actor_overrides
    from runner.run.experiment import run_experiment

    server, base_url = start_stand_in(args.latency, args.steps)
    outcomes = {}
    try:
        with tempfile.TemporaryDirectory(prefix="genui-same-summaries-") as scratch_name:
            scratch = Path(scratch_name)
            write_evogenui_copies(scratch / "tasks", args.copies)
            for in_flight in (1, args.in_flight):
                config = compose_config([
                    "model=oracle", "suite=evogenui", f"suite.tasks_path={scratch / 'tasks'}",
                    f"suite.tool_backends_path={REPO / 'tasks' / 'evogenui' / 'backends'}", "suite.turns=2",
                    "judge=rules", "tracking=off", *actor_overrides(base_url, steps=args.steps),
                    f"concurrency.episodes={in_flight}", f"concurrency.visits={in_flight}",
                ])
                run_dir = scratch / f"run-{in_flight}"
                started = time.perf_counter()
                asyncio.run(run_experiment(config, run_dir, console=Console(file=io.StringIO(), width=120)))
                records = sorted((json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()),
                                 key=lambda r: (r["task_id"], r["turn"]))
                stats = _get_json(base_url.rsplit("/v1", 1)[0] + "/stats?reset=1")
                outcomes[in_flight] = {
                    "summary": _without_timings(json.loads((run_dir / "summary.json").read_text())),
                    "slots": [(r["task_id"], r["turn"], r["status"], r["passed"], _without_timings(r["scores"]))
                              for r in records],
                    "seconds": time.perf_counter() - started, "in_flight": stats["peak"],
                }
                print(f"{in_flight:2d} in flight: {len(records)} slots in {outcomes[in_flight]['seconds']:.0f} s, "
                      f"actor requests in flight at most {stats['peak']}, load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        server.terminate()
        server.join(timeout=5)
    one, many = outcomes[1], outcomes[args.in_flight]
    differing = [a[:2] for a, b in zip(one["slots"], many["slots"]) if a != b]
    same = one["summary"] == many["summary"] and not differing and len(one["slots"]) == len(many["slots"])
    print(f"summaries at 1 and {args.in_flight} in flight: {'equal' if same else 'DIFFERENT'}"
          + (f"; slots that differ: {differing}" if differing else ""))
    if not same:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=("generator", "actor", "same-summaries"), default="generator")
    parser.add_argument("--levels", default=None, help="generator: 1,2,4,8,16; actor: 1,8,16,32,64")
    parser.add_argument("--waves", type=int, default=None,
                        help="episodes per level = waves x level (generator: 3, at least 6; actor: 2, at least 4)")
    parser.add_argument("--latency", type=float, default=2.0, help="seconds the stand-in model takes per answer")
    parser.add_argument("--max-browsers", type=int, default=8,
                        help="generator: browsers per level = min(level, this)")
    parser.add_argument("--steps", type=int, default=10, help="actor: model steps per visit")
    parser.add_argument("--copies", type=int, default=4, help="same-summaries: copies of each EvoGenUI task")
    parser.add_argument("--in-flight", type=int, default=32, help="same-summaries: episodes and visits at once")
    args = parser.parse_args()
    {"generator": generator_scenario, "actor": actor_scenario, "same-summaries": same_summaries_scenario}[
        args.scenario](args)


if __name__ == "__main__":
    main()
