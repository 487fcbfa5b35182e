"""The phase plan: co-locate when the servers' GPU claims fit, stage otherwise (hand-computed cases)."""

from __future__ import annotations

import json
from pathlib import Path

from runner.run.placement import GpuInfo, ServerClaim, parse_nvidia_smi, phase_roles, plan_phases

H200 = 143771  # MiB, as nvidia-smi reports an H200
EIGHT = [GpuInfo(index=i, memory_mib=H200) for i in range(8)]
ONE = EIGHT[:1]
ROLES = ["generator", "judge", "actor"]


def test_kimi_judge_and_a_generator_do_not_fit_one_node() -> None:
    """Kimi: TP 8 at 0.9 on every GPU; the generator adds 0.85 on GPU 0: 1.75 > 1 -> staged."""
    claims = [ServerClaim("generator", "qwen3-coder", 1, 0.85), ServerClaim("judge", "kimi-k2.6", 8, 0.9)]
    plan = plan_phases("auto", claims, EIGHT, roles=ROLES)
    assert plan.mode == "staged"
    assert "GPU 0: qwen3-coder 0.85 + kimi-k2.6 0.9 = 1.75 > 1" in plan.reason
    assert [phase["name"] for phase in plan.phases] == ["generation", "judging"]
    assert plan.phases[0]["servers"] == ["qwen3-coder"] and plan.phases[1]["servers"] == ["kimi-k2.6"]
    assert plan.warnings == []  # each phase fits on its own


def test_small_judge_generator_and_actor_share_one_gpu() -> None:
    """0.55 + 0.3 (actor) + 0.15 (judge) = 1.0 on GPU 0: fits exactly -> together."""
    claims = [ServerClaim("generator", "g", 1, 0.55), ServerClaim("actor", "a", 1, 0.3), ServerClaim("judge", "j", 1, 0.15)]
    plan = plan_phases("auto", claims, ONE, roles=ROLES)
    assert plan.mode == "together" and plan.reason == "every server fits the GPUs at once"
    assert plan.phases == [{"name": "together", "roles": ["generator", "actor", "judge"], "servers": ["g", "a", "j"]}]


def test_roles_sharing_one_server_claim_its_gpus_once() -> None:
    """Actor and judge on one MiMo server (0.6, same server key) beside a 0.35 generator: 0.95 fits one GPU;
    counted per role it would be 1.55 and staged."""
    claims = [ServerClaim("generator", "g", 1, 0.35), ServerClaim("actor", "mimo", 1, 0.6, server_key="mimo-flags"),
              ServerClaim("judge", "mimo", 1, 0.6, server_key="mimo-flags")]
    assert plan_phases("auto", claims, ONE, roles=ROLES).mode == "together"
    apart = [*claims[:2], ServerClaim("judge", "mimo", 1, 0.6, server_key="other-flags")]
    assert plan_phases("auto", apart, ONE, roles=ROLES).mode == "staged"


def test_unset_fraction_is_vllms_default_and_gpu_ids_are_honoured() -> None:
    # Two servers with vLLM's default 0.9 on GPU 0 do not fit; on GPUs 0 and 1 they do.
    same = [ServerClaim("generator", "g"), ServerClaim("judge", "j")]
    assert plan_phases("auto", same, EIGHT, roles=ROLES).mode == "staged"
    apart = [ServerClaim("generator", "g"), ServerClaim("judge", "j", gpu_ids=(1,))]
    assert plan_phases("auto", apart, EIGHT, roles=ROLES).mode == "together"


def test_no_gpu_runs_together_and_forced_modes_are_kept() -> None:
    claims = [ServerClaim("generator", "g", 1, 0.9), ServerClaim("judge", "j", 1, 0.9)]
    plan = plan_phases("auto", claims, [], roles=ROLES)
    assert plan.mode == "together" and "no GPU" in plan.reason
    assert plan_phases("staged", claims, [], roles=ROLES).mode == "staged"
    forced = plan_phases("together", claims, ONE, roles=ROLES)
    assert forced.mode == "together" and forced.warnings == ["together phase does not fit: GPU 0: g 0.9 + j 0.9 = 1.8 > 1"]


def test_a_phase_that_cannot_fit_is_warned_about() -> None:
    plan = plan_phases("auto", [ServerClaim("generator", "g", 1, 0.5), ServerClaim("judge", "kimi", 8, 0.9)], ONE,
                       roles=ROLES)
    assert plan.mode == "staged"
    assert plan.warnings == ["judging phase does not fit: judge kimi needs 8 GPUs, the machine has 1"]


def test_attached_servers_claim_nothing_and_the_plan_is_written(tmp_path: Path) -> None:
    claims = [ServerClaim("generator", "g", 1, 0.9), ServerClaim("judge", "remote", 8, 0.9, attached=True)]
    plan = plan_phases("auto", claims, ONE, roles=ROLES)
    assert plan.mode == "together"
    plan.concurrency = {"episodes": 4}
    written = json.loads(plan.write(tmp_path).read_text())
    assert written["mode"] == "together" and written["claims"][1]["attached"] is True
    assert "remote (attached)" in plan.describe() and "episodes=4" in plan.describe()


def test_nvidia_smi_rows_are_parsed() -> None:
    output = "0, 143771, NVIDIA H200\n1, 143771, NVIDIA H200\nNo devices were found\n"
    assert parse_nvidia_smi(output) == [GpuInfo(0, 143771, "NVIDIA H200"), GpuInfo(1, 143771, "NVIDIA H200")]


def test_a_suites_own_roles_share_the_generation_phase() -> None:
    """I-WebGenBench's block pipeline: splitter and merger are called while slots are generated, so they are
    placed (and stopped when staged) with the generator: 0.5 + 0.25 + 0.25 fills GPU 0, the judge's 0.5 does
    not fit beside them -> staged, the judge alone in its phase."""
    claims = [ServerClaim("generator", "g", 1, 0.5), ServerClaim("splitter", "s", 1, 0.25),
              ServerClaim("merger", "m", 1, 0.25), ServerClaim("judge", "j", 1, 0.5)]
    roles = ["generator", "judge", "splitter", "merger"]
    assert phase_roles(roles) == (["generator", "splitter", "merger"], ["judge"])
    plan = plan_phases("auto", claims, ONE, roles=roles)
    assert plan.mode == "staged"
    assert plan.phases[0]["roles"] == ["generator", "splitter", "merger"]
    assert plan.phases[0]["servers"] == ["g", "s", "m"] and plan.phases[1]["servers"] == ["j"]
    assert plan.warnings == []
    # Without the judge's claim, the three fit at once: nothing to stage.
    assert plan_phases("auto", claims[:3], ONE, roles=roles[:1] + roles[2:]).mode == "together"
