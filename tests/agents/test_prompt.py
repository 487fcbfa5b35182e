"""What an agent is told: one system message (the preamble, then the suite's own instructions), the payload's
other messages as they are; and the same as one prompt text for a CLI."""

from __future__ import annotations

from runner.agents.prompt import agent_messages, preamble, prompt_text


def test_the_preamble_comes_first_and_the_payload_follows_unchanged() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}
    payload = [{"role": "system", "content": "Reply with fenced files."},
               {"role": "user", "content": [{"type": "text", "text": "Build a page."}, image]}]
    told = agent_messages(payload, static=False)
    assert [m["role"] for m in told] == ["system", "user"]
    assert told[0]["content"].startswith(preamble(static=False))
    assert told[0]["content"].endswith("## The task's instructions\nReply with fenced files.")
    assert told[1] is payload[1]
    text = prompt_text(told)
    assert "Build a page." in text and "[image_url not shown here]" in text and "data:image" not in text
    assert "index.html is the page" in agent_messages(payload, static=True)[0]["content"]
