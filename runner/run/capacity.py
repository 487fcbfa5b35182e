"""Default concurrency from the serving model's batch capacity.

A vLLM server batches up to `max_num_seqs` sequences at once; a run that keeps fewer requests in flight
leaves it idle. So unless set, episode and model-call concurrency follow the generator server's capacity
(and judge calls the judge server's), bounded by the number of episodes there are. Models whose capacity
is unknown (hosted endpoints, replay models, an attached server without `max_num_seqs`) keep the fixed
defaults.
"""

from __future__ import annotations

from typing import Any

from runner.config import ConcurrencyConfig
from runner.run.roles import role_model_settings

__all__ = ["DEFAULT_EPISODES", "DEFAULT_JUDGE_CALLS", "VLLM_DEFAULT_MAX_NUM_SEQS", "batch_capacity",
           "resolve_concurrency"]

DEFAULT_EPISODES = 4
DEFAULT_MODEL_CALLS = 4
DEFAULT_JUDGE_CALLS = 2
VLLM_DEFAULT_MAX_NUM_SEQS = 256  # vLLM's --max-num-seqs default for its OpenAI server (1024 only on >= 70 GiB GPUs)


def batch_capacity(model: dict[str, Any] | None) -> int | None:
    """How many requests the model's server batches at once, when the runner knows it."""
    if not model or model.get("provider") != "vllm":
        return None
    server = model.get("server") or {}
    if server.get("max_num_seqs"):
        return int(server["max_num_seqs"])
    if server.get("mode") == "attach":  # someone else's server: its flags are unknown
        return None
    return VLLM_DEFAULT_MAX_NUM_SEQS


def resolve_concurrency(config: Any, *, episodes_available: int) -> ConcurrencyConfig:
    """The limits this run uses: what is set, else the capacity of the serving model, else the defaults."""
    settings = role_model_settings(config)
    limits = config.concurrency
    generator = batch_capacity(settings.get("generator"))
    judge = batch_capacity(settings.get("judge"))
    episodes = limits.episodes or min(generator or DEFAULT_EPISODES, max(1, episodes_available))
    if limits.episodes is None and generator is None:
        episodes = DEFAULT_EPISODES
    model_calls = limits.model_calls or (min(generator, episodes) if generator else DEFAULT_MODEL_CALLS)
    judge_calls = limits.judge_calls or (judge or DEFAULT_JUDGE_CALLS)
    return limits.model_copy(update={"episodes": episodes, "model_calls": model_calls, "judge_calls": judge_calls})
