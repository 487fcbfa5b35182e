"""The phase plan: which model servers may be resident at once, decided from the GPU memory they claim.

A run has two phases: generation-and-execution (generator, actor and the suite's own roles resident) and
judging (judge resident, from frozen evidence packets). `run.phases=together` keeps every server of the run
up at once and judges each slot as soon as its packet is frozen; `staged` stops the generation servers before
the judge's starts; `auto` co-locates when the claims fit the machine's GPUs and stages otherwise.

A server claims `gpu_memory_utilization` (vLLM's default 0.9 when unset) of each of the GPUs it runs on:
`gpu_ids` when given, else the first `tensor_parallel_size` visible GPUs (what vLLM itself takes). Claims on
one GPU fit when they add up to at most 1.0. With no GPU the servers run on the CPU and claim no GPU memory.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "DEFAULT_GPU_MEMORY_UTILIZATION",
    "GpuInfo",
    "PhasePlan",
    "ServerClaim",
    "detect_gpus",
    "parse_nvidia_smi",
    "phase_roles",
    "plan_phases",
]

PhaseMode = Literal["auto", "together", "staged"]
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9  # vLLM's --gpu-memory-utilization default
JUDGING_ROLES = ("judge",)
_FIT_EPSILON = 1e-9


@dataclass(frozen=True)
class GpuInfo:
    index: int
    memory_mib: int
    name: str = ""


@dataclass(frozen=True)
class ServerClaim:
    """What one served model asks of the machine."""

    role: str  # generator, judge, actor or a suite's own role
    name: str
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float | None = None
    gpu_ids: tuple[int, ...] | None = None
    attached: bool = False  # mode attach: someone else's server, claims nothing here
    # The server's identity (runner/models/vllm_server.py server_identity): roles of one key share one server,
    # which claims its GPUs once. None: its own server.
    server_key: str | None = None

    @property
    def fraction(self) -> float:
        return self.gpu_memory_utilization or DEFAULT_GPU_MEMORY_UTILIZATION

    def devices(self, gpu_count: int) -> tuple[int, ...]:
        if self.gpu_ids is not None:
            return tuple(self.gpu_ids)
        return tuple(range(min(self.tensor_parallel_size, gpu_count)))


@dataclass
class PhasePlan:
    requested: str
    mode: Literal["together", "staged"]
    reason: str
    gpus: list[GpuInfo]
    claims: list[ServerClaim]
    phases: list[dict[str, Any]] = field(default_factory=list)  # [{name, roles, servers}]
    warnings: list[str] = field(default_factory=list)
    concurrency: dict[str, int] = field(default_factory=dict)  # the resolved limits (filled by the run)
    concurrency_reasons: dict[str, str] = field(default_factory=dict)  # why each (runner/run/capacity.py)

    @property
    def staged(self) -> bool:
        return self.mode == "staged"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["claims"] = [{**asdict(c), "fraction": c.fraction} for c in self.claims]
        return data

    def write(self, run_dir: Path) -> Path:
        path = Path(run_dir) / "plan.json"
        path.write_text(json.dumps(self.to_json(), indent=2, sort_keys=True))
        return path

    def describe(self) -> str:
        """The lines printed before work starts."""
        where = ", ".join(f"GPU{g.index} {g.memory_mib // 1024} GiB" for g in self.gpus) or "no GPU (CPU)"
        lines = [f"plan: run.phases={self.requested} -> {self.mode} ({self.reason}); machine: {where}"]
        for phase in self.phases:
            servers = ", ".join(phase["servers"]) or "no served model"
            lines.append(f"  phase {phase['name']}: roles {', '.join(phase['roles']) or '-'}; servers: {servers}")
        lines += [f"  warning: {w}" for w in self.warnings]
        if self.concurrency:
            lines.append("  concurrency: " + ", ".join(f"{k}={v}" for k, v in sorted(self.concurrency.items())))
            lines += [f"    {name}: {why}" for name, why in sorted(self.concurrency_reasons.items())
                      if name in self.concurrency]
        return "\n".join(lines)


def parse_nvidia_smi(output: str) -> list[GpuInfo]:
    """Rows of `nvidia-smi --query-gpu=index,memory.total,name --format=csv,noheader,nounits`."""
    gpus: list[GpuInfo] = []
    for line in output.strip().splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) < 2 or not parts[0].isdigit():
            continue
        try:
            memory = int(float(parts[1]))
        except ValueError:
            continue
        gpus.append(GpuInfo(index=int(parts[0]), memory_mib=memory, name=parts[2] if len(parts) > 2 else ""))
    return gpus


def detect_gpus() -> list[GpuInfo]:
    """The machine's GPUs from nvidia-smi, else from torch when it is installed; [] means CPU only."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            result = subprocess.run(
                [smi, "--query-gpu=index,memory.total,name", "--format=csv,noheader,nounits"],
                capture_output=True, text=True, timeout=20,
            )
            if result.returncode == 0:
                found = parse_nvidia_smi(result.stdout)
                if found:
                    return found
        except (OSError, subprocess.TimeoutExpired):
            pass
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return []
    try:
        import torch

        if not torch.cuda.is_available():
            return []
        return [
            GpuInfo(index=i, memory_mib=int(torch.cuda.get_device_properties(i).total_memory // 2**20),
                    name=torch.cuda.get_device_name(i))
            for i in range(torch.cuda.device_count())
        ]
    except Exception:  # a broken CUDA install reads as no GPU, never as a crash of the plan
        return []


def _overflow(claims: list[ServerClaim], gpus: list[GpuInfo]) -> list[str]:
    """Why these claims cannot be resident together (empty when they fit)."""
    problems: list[str] = []
    known = {gpu.index for gpu in gpus}
    used: dict[int, list[ServerClaim]] = {}
    shared: set[str] = set()
    for claim in claims:
        if claim.server_key is not None:
            if claim.server_key in shared:
                continue  # another role's server, counted with it
            shared.add(claim.server_key)
        devices = claim.devices(len(gpus))
        if len(devices) < claim.tensor_parallel_size:
            problems.append(f"{claim.role} {claim.name} needs {claim.tensor_parallel_size} GPUs, the machine has {len(gpus)}")
        for index in devices:
            if index not in known:
                problems.append(f"{claim.role} {claim.name} asks for GPU {index}, which is not present")
                continue
            used.setdefault(index, []).append(claim)
    for index, on_gpu in sorted(used.items()):
        total = sum(c.fraction for c in on_gpu)
        if total > 1.0 + _FIT_EPSILON:
            parts = " + ".join(f"{c.name} {c.fraction:g}" for c in on_gpu)
            problems.append(f"GPU {index}: {parts} = {total:g} > 1")
    return problems


def phase_roles(roles: list[str]) -> tuple[list[str], list[str]]:
    """The run's roles split by phase: (generation-and-execution, judging). The judge judges; every other role,
    a suite's own included, is called while slots are generated and executed (I-WebGenBench's splitter and
    merger, WebGen-Bench's tester, MT-Web2Code's caption model while its tasks load), so its server is
    placed, and stopped when staged, with the generator's."""
    return [r for r in roles if r not in JUDGING_ROLES], [r for r in roles if r in JUDGING_ROLES]


def plan_phases(requested: PhaseMode, claims: list[ServerClaim], gpus: list[GpuInfo], *,
                roles: list[str]) -> PhasePlan:
    """Decide together or staged. `claims`: the served models of the roles the run uses."""
    local = [c for c in claims if not c.attached]
    gen_roles, judge_roles = phase_roles(roles)
    generation = [c for c in local if c.role not in JUDGING_ROLES]  # the split phase_roles makes
    judging = [c for c in local if c.role in JUDGING_ROLES]
    warnings: list[str] = []
    if requested == "together":
        mode, reason = "together", "asked for"
    elif requested == "staged":
        mode, reason = "staged", "asked for"
    elif not local:
        mode, reason = "together", "no model server to place"
    elif not gpus:
        mode, reason = "together", "no GPU: served models run on the CPU and claim no GPU memory"
    elif not generation or not judging:
        mode, reason = "together", "no server of one phase: nothing to stage"
    else:
        problems = _overflow(local, gpus)
        mode = "staged" if problems else "together"
        reason = "; ".join(problems) if problems else "every server fits the GPUs at once"
    if gpus:
        checks = [(generation + judging, "together")] if mode == "together" else [(generation, "generation"), (judging, "judging")]
        for group, label in checks:
            for problem in _overflow(group, gpus):
                warnings.append(f"{label} phase does not fit: {problem}")
    names = {c.role: [] for c in claims}
    for claim in claims:
        names[claim.role].append(f"{claim.name}{' (attached)' if claim.attached else ''}")
    phases = [
        {"name": "generation", "roles": gen_roles, "servers": [n for r in gen_roles for n in names.get(r, [])]},
        {"name": "judging", "roles": judge_roles, "servers": [n for r in judge_roles for n in names.get(r, [])]},
    ]
    if mode == "together":
        phases = [{"name": "together", "roles": gen_roles + judge_roles,
                   "servers": phases[0]["servers"] + phases[1]["servers"]}]
    return PhasePlan(requested=requested, mode=mode, reason=reason, gpus=gpus, claims=claims, phases=phases,
                     warnings=warnings)
