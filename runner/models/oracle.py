"""Offline models for running the whole pipeline with no endpoint.

- `OracleModel` answers each turn with the task's private reference solution, rendered in the JSON
  output contract so it goes through the same parser as any real model (a passing baseline).
- `NullModel` answers nothing (every slot lands in `invalid_output`).
- `IdentityModel` hands back the files it was shown (tests "no change" against the turn's requests).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from runner.models.base import GenerationRequest, ModelBase, ModelResponse, ProviderError
from runner.models.parse import extract_json_contract, extract_markdown_files, render_json_output
from runner.turns.tasks import Task

__all__ = ["IdentityModel", "NullModel", "OracleModel"]

_ZERO_USAGE = {"prompt_tokens": 0, "completion_tokens": 0}


class OracleModel(ModelBase):
    name = "oracle"

    def __init__(self, tasks: Mapping[str, Task] | Iterable[Task]) -> None:
        self._tasks: dict[str, Task] = dict(tasks) if isinstance(tasks, Mapping) else {t.id: t for t in tasks}

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        task = self._tasks.get(request.task_id)
        if task is None:
            raise ProviderError(f"oracle: unknown task {request.task_id!r}")
        if not 1 <= request.turn <= len(task.turns):
            raise ProviderError(f"oracle: task {request.task_id!r} has no turn {request.turn}")
        spec = task.turn(request.turn)
        if spec.reference_files is None:
            raise ProviderError(f"oracle: task {request.task_id!r} turn {request.turn} has no reference files")
        text = render_json_output(spec.reference_text, dict(spec.reference_files))
        return ModelResponse(text=text, usage=dict(_ZERO_USAGE))

    async def aclose(self) -> None:
        return None


class NullModel(ModelBase):
    name = "null"

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        return ModelResponse(text="", usage=dict(_ZERO_USAGE))

    async def aclose(self) -> None:
        return None


class IdentityModel(ModelBase):
    """Returns the files found in the latest user message: fenced file sections first (the
    markdown half of the parser), else a JSON object with a `files` member; "" when there are none."""

    name = "identity"

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        text = _latest_user_text(request.messages)
        _, files = extract_markdown_files(text)
        if not files:
            contract, _ = extract_json_contract(text)
            files = contract.files if contract is not None else {}
        answer = render_json_output("No changes.", files) if files else ""
        return ModelResponse(text=answer, usage=dict(_ZERO_USAGE))

    async def aclose(self) -> None:
        return None


def _latest_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):  # multimodal parts: keep the text ones
            return "\n".join(
                part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
            )
        return ""
    return ""
