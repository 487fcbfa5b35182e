"""A command agent's transcript from the proxy's records: each answer, its tool calls with the results the agent
sent back, and the files changed between two requests."""

from __future__ import annotations

from runner.agents.transcript import steps_from_calls


def _call(index: int, *, new: list[dict], content: str = "", calls: list[dict] | None = None,
          status: int = 200) -> dict:
    message = {"role": "assistant", "content": content, "tool_calls": calls or []}
    return {"call": index, "status": status, "usage": {"prompt_tokens": 5}, "model_seconds": 0.1,
            "request": {"messages_from": 0, "messages": new},
            "response": {"choices": [{"message": message}]} if status == 200 else None}


def test_steps_pair_each_tool_call_with_its_result_and_the_files_it_changed() -> None:
    write = {"id": "t1", "function": {"name": "write_file", "arguments": '{"path": "src/App.jsx"}'}}
    calls = [
        _call(0, new=[{"role": "user", "content": "go"}], content="Writing.", calls=[write]),
        _call(1, new=[{"role": "assistant"}, {"role": "tool", "tool_call_id": "t1", "content": "wrote it"}],
              content="Done."),
        _call(2, new=[{"role": "user", "content": "more"}], status=400),
    ]
    snapshots = {0: {"src/App.jsx": "a"}, 1: {"src/App.jsx": "b", "src/x.js": "x"}, 2: {}}
    steps = steps_from_calls(calls, snapshots, final={"src/App.jsx": "b"})
    assert [step["step"] for step in steps] == [1, 2]
    assert steps[0]["tool_calls"] == [{"id": "t1", "name": "write_file", "arguments": '{"path": "src/App.jsx"}',
                                       "result": "wrote it"}]
    assert steps[0]["files_changed"] == {"added": ["src/x.js"], "modified": ["src/App.jsx"]}
    assert steps[1]["assistant"] == "Done." and steps[1]["files_changed"] == {"deleted": ["src/App.jsx", "src/x.js"]}
