"""Offline models (oracle, null, identity) and the registry, through the real parser."""

from __future__ import annotations

import asyncio
import json

import pytest

from runner.models.base import GenerationRequest, ProviderError
from runner.models.oracle import IdentityModel, NullModel, OracleModel
from runner.models.parse import InvalidOutput, parse_model_output
from runner.errors import ConfigError
from runner.models.registry import build_model
from runner.turns.tasks import Task, TurnSpec

APP1 = "export default function App() { return <h1>One</h1>; }\n"
APP2 = "export default function App() { return <h1>Two ```x``` </h1>; }\n"


def _task() -> Task:
    return Task(
        id="demo-1",
        suite="smoke",
        turns=[
            TurnSpec(index=1, prompt="make one", reference_files={"src/App.jsx": APP1}, reference_text="Made one."),
            TurnSpec(index=2, prompt="make two", reference_files={"src/App.jsx": APP2, "src/x.css": ""}),
            TurnSpec(index=3, prompt="no reference"),
        ],
    )


def _run(model, request):
    return asyncio.run(model.generate(request))


def test_oracle_answers_reference_in_json_contract():
    model = OracleModel({"demo-1": _task()})
    resp = _run(model, GenerationRequest("demo-1", 1, [{"role": "user", "content": "make one"}]))
    assert resp.usage == {"prompt_tokens": 0, "completion_tokens": 0}
    parsed = parse_model_output(resp.text)
    assert parsed.files == {"src/App.jsx": APP1} and parsed.assistant_text == "Made one."
    parsed2 = parse_model_output(_run(model, GenerationRequest("demo-1", 2, [])).text)
    assert parsed2.files == {"src/App.jsx": APP2, "src/x.css": ""}
    assert model.name == "oracle"


def test_oracle_accepts_a_task_list():
    model = OracleModel([_task()])
    assert "Made one." in _run(model, GenerationRequest("demo-1", 1, [])).text


@pytest.mark.parametrize(
    "task_id,turn,match",
    [("demo-1", 3, "demo-1.*turn 3.*no reference"), ("demo-1", 9, "no turn 9"), ("nope", 1, "unknown task 'nope'")],
)
def test_oracle_missing_reference_is_provider_error(task_id, turn, match):
    with pytest.raises(ProviderError, match=match):
        _run(OracleModel({"demo-1": _task()}), GenerationRequest(task_id, turn, []))


def test_null_model_answers_nothing():
    resp = _run(NullModel(), GenerationRequest("x", 1, [{"role": "user", "content": "hi"}]))
    assert resp.text == ""
    with pytest.raises(InvalidOutput, match="empty response"):
        parse_model_output(resp.text)


def test_identity_returns_files_from_latest_user_message():
    older = "### src/App.jsx\n```jsx\nold\n```\n"
    latest = (
        f"Current files:\n\n### src/App.jsx\n```jsx\n{APP1}```\n\n### src/App.css\n```css\nh1{{}}\n```\n\nAdd a button."
    )
    messages = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": older},
        {"role": "assistant", "content": "ok"},
        {
            "role": "user",
            "content": [{"type": "text", "text": latest}, {"type": "image_url", "image_url": {"url": "data:,"}}],
        },
    ]
    resp = _run(IdentityModel(), GenerationRequest("x", 2, messages))
    assert parse_model_output(resp.text).files == {"src/App.jsx": APP1, "src/App.css": "h1{}\n"}


def test_identity_reads_json_payload_files():
    payload = {"current_user_request": "add", "previous_turn_source": {"turn": 1, "files": {"src/App.jsx": APP1}}}
    resp = _run(IdentityModel(), GenerationRequest("x", 2, [{"role": "user", "content": json.dumps(payload)}]))
    assert parse_model_output(resp.text).files == {"src/App.jsx": APP1}


def test_identity_without_files_answers_empty():
    resp = _run(IdentityModel(), GenerationRequest("x", 1, [{"role": "user", "content": "Build a todo app."}]))
    assert resp.text == ""
    assert _run(IdentityModel(), GenerationRequest("x", 1, [])).text == ""


def test_registry_dispatch():
    task = _task()
    assert isinstance(build_model({"name": "oracle", "provider": "oracle"}, tasks={task.id: task}), OracleModel)
    assert isinstance(build_model({"provider": "null"}), NullModel)
    assert isinstance(build_model({"provider": "identity", "name": "identity"}), IdentityModel)


def test_registry_errors_name_the_provider():
    with pytest.raises(ConfigError, match="vllm"):
        build_model({"name": "q", "provider": "vllm"})
    with pytest.raises(ConfigError, match="'antropic'.*oracle"):
        build_model({"provider": "antropic"})
    with pytest.raises(ConfigError, match="tasks"):
        build_model({"provider": "oracle"})
