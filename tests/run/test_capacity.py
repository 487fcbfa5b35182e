"""Default concurrency follows the serving model's batch capacity (vLLM max_num_seqs) unless set."""

from __future__ import annotations

from types import SimpleNamespace

from runner.run.capacity import VLLM_DEFAULT_MAX_NUM_SEQS, batch_capacity, resolve_concurrency
from runner.config import ActorConfig, ConcurrencyConfig, JudgeConfig, ModelConfig


def _config(model: dict, judge_model: dict | None = None, **limits: int) -> SimpleNamespace:
    judge = JudgeConfig(name="j", kind="llm", options={"model": judge_model}) if judge_model else JudgeConfig(name="rules", kind="rules")
    return SimpleNamespace(model=ModelConfig.model_validate(model), judge=judge,
                           actor=ActorConfig(name="none", kind="none"), roles={}, concurrency=ConcurrencyConfig(**limits))


VLLM = {"name": "g", "provider": "vllm", "server": {"model_path": "/w", "max_num_seqs": 32}}


def test_capacity_of_each_kind_of_model() -> None:
    assert batch_capacity(VLLM) == 32
    assert batch_capacity({"provider": "vllm", "server": {"model_path": "/w"}}) == VLLM_DEFAULT_MAX_NUM_SEQS == 256
    assert batch_capacity({"provider": "vllm", "server": {"mode": "attach", "base_url": "http://x"}}) is None
    assert batch_capacity({"provider": "openai"}) is None and batch_capacity(None) is None


def test_episodes_and_calls_follow_the_generator_server_bounded_by_the_episodes() -> None:
    resolved = resolve_concurrency(_config(VLLM), episodes_available=100)
    assert (resolved.episodes, resolved.model_calls, resolved.judge_calls) == (32, 32, 2)
    few = resolve_concurrency(_config(VLLM), episodes_available=9)
    assert (few.episodes, few.model_calls) == (9, 9)
    judged = resolve_concurrency(_config(VLLM, {"name": "k", "provider": "vllm", "server": {"model_path": "/k"}}),
                                 episodes_available=9)
    assert judged.judge_calls == 256


def test_set_values_and_unknown_capacity_keep_their_numbers() -> None:
    oracle = resolve_concurrency(_config({"name": "oracle", "provider": "oracle"}), episodes_available=100)
    assert (oracle.episodes, oracle.model_calls, oracle.judge_calls) == (4, 4, 2)
    fixed = resolve_concurrency(_config(VLLM, episodes=3, model_calls=5, judge_calls=7), episodes_available=100)
    assert (fixed.episodes, fixed.model_calls, fixed.judge_calls) == (3, 5, 7)
