"""How long a model call may take: a limit that fits the output cap of the model it calls.

A generator asked for up to 32,768 tokens (EvoGenUI-Bench App. D.1) by a served model that decodes slowly but
correctly can take far longer than a fixed 300 s. Cutting it there records "no response" (e = 0 in
EvoGenUI-Bench §4.3's APR), a failure of the server that never happened. So, unless a limit is given, a call
may take

    limit = max(FLOOR_S, ALLOWANCE_S + max_tokens / MIN_TOKENS_PER_S)

seconds: the whole output cap decoded at the slowest rate a healthy server still counts as working, after an
allowance for the prompt's prefill and queueing. 32,768 tokens give 1,758.4 s; 16,384 give 939.2 s; 4,096 give
324.8 s; a model without a cap (replay providers) gets FLOOR_S. The same rule sizes one HTTP attempt of an
endpoint model whose `timeout_s` is null, and the run's `model_timeout_s` and `turn_timeout_s` when they are null
(resolved by runner/run/validation.py): an explicit number is always used as given.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ALLOWANCE_S", "FLOOR_S", "MIN_TOKENS_PER_S", "TURN_REST_S", "generation_time_limit_s",
           "model_call_limit_s", "turn_limit_s"]

MIN_TOKENS_PER_S = 20.0  # the slowest decoding (tokens/s per sequence) of a loaded but healthy server
ALLOWANCE_S = 120.0  # prefill of a long multi-turn payload and time queued before the first token
FLOOR_S = 300.0  # never below the fixed limit the runner used before the rule
TURN_REST_S = 600.0  # the rest of a turn besides its model call: build, serve, actor, judge (the old turn limit)


def generation_time_limit_s(max_tokens: int | None) -> float:
    """Seconds a call that may produce `max_tokens` tokens is given (the module's rule)."""
    if max_tokens is None:
        return FLOOR_S
    return max(FLOOR_S, ALLOWANCE_S + int(max_tokens) / MIN_TOKENS_PER_S)


def model_call_limit_s(explicit: float | None, model: dict[str, Any]) -> float:
    """The run's limit on one generator call (all its retries): `explicit` when given, else the rule on the
    generator's output cap. An endpoint whose own per-attempt `timeout_s` is longer gets at least that."""
    if explicit is not None:
        return float(explicit)
    limit = generation_time_limit_s(model.get("max_tokens"))
    attempt = model.get("timeout_s")
    return max(limit, float(attempt)) if attempt is not None else limit


def turn_limit_s(explicit: float | None, model_call_s: float) -> float:
    """The limit on one turn: `explicit` when given, else the model call's limit plus the rest of the turn."""
    return float(explicit) if explicit is not None else model_call_s + TURN_REST_S
