"""Where a machine's CPU goes, by kind of process: /proc sampled in a thread while a bench runs.

    with ProcessCpu() as cpu:
        ...                      # the work
    cpu.by_kind()                # CPU seconds by kind of process, since the start

Each process's user + system time is read every `interval_s`; a process seen for the first time after the start
counts from zero, one already running counts from its first reading. A process that lives shorter than one interval
is missed, and one's last interval before it exits is lost, so the figures are a lower bound (at 30 ms, a few
percent). The sampler's own thread runs in this process and is counted in it.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def process_kind(comm: str, cmdline: list[str]) -> str:
    """A short name for what a process is: Chromium's by its --type, Node's by script, Python's by module."""
    joined = " ".join(cmdline)
    # By the program, not by any argument: a bench run with `browser.executable_path=...` is no browser.
    program = Path(cmdline[0].split(" ", 1)[0]).name if cmdline else ""
    if "chrom" in comm.lower() or program.startswith("chrom"):
        kind = next((arg.split("=", 1)[1] for arg in joined.split() if arg.startswith("--type=")), "browser")
        return f"chromium {kind}"
    if "playwright" in joined and "node" in joined:
        return "playwright driver"
    if cmdline and cmdline[0].endswith("/node") or comm.startswith("node") or comm == "MainThread":
        return "node (builds)"
    if "server.py" in joined:
        return "artifact server (python)"
    if comm.startswith("python"):
        return "python: " + " ".join(Path(arg).name for arg in cmdline[1:2])
    return comm


class ProcessCpu:
    def __init__(self, interval_s: float = 0.03) -> None:
        self.interval_s = interval_s
        self._first: dict[tuple[str, str], float] = {}
        self._last: dict[tuple[str, str], tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._primed = False

    def __enter__(self) -> "ProcessCpu":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    self._read(pid)
            self._primed = True
            self._stop.wait(self.interval_s)

    def _read(self, pid: str) -> None:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            return
        comm = stat[stat.find("(") + 1:stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2:].split()
        key = (pid, fields[19])  # the pid and its start time: a reused pid is another process
        seconds = (int(fields[11]) + int(fields[12])) / TICKS
        if key not in self._first:
            self._first[key] = seconds if not self._primed else 0.0
        self._last[key] = (process_kind(comm, [arg for arg in cmdline if arg]), seconds - self._first[key])

    def by_kind(self) -> Counter[str]:
        totals: Counter[str] = Counter()
        for kind, seconds in self._last.values():
            totals[kind] += seconds
        return totals
