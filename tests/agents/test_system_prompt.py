"""System messages before the model's first answer become one system prompt; later ones stay where they are."""

from __future__ import annotations

from runner.agents.system_prompt import leading_system_joined


def test_leading_system_messages_join_in_order_at_the_start() -> None:
    messages = [{"role": "system", "content": "A"}, {"role": "user", "content": "Go"},
                {"role": "system", "content": "B"}, {"role": "assistant", "content": "Ok"},
                {"role": "system", "content": "C"}, {"role": "user", "content": "More"}]
    assert leading_system_joined(messages) == [
        {"role": "system", "content": "A\n\nB"}, {"role": "user", "content": "Go"},
        {"role": "assistant", "content": "Ok"}, {"role": "system", "content": "C"}, {"role": "user", "content": "More"}]


def test_a_conversation_with_one_system_message_first_is_unchanged() -> None:
    messages = [{"role": "system", "content": "A"}, {"role": "user", "content": "Go"}]
    assert leading_system_joined(messages) is messages
    assert leading_system_joined([{"role": "user", "content": "Go"}]) == [{"role": "user", "content": "Go"}]


def test_a_lone_system_message_after_the_user_moves_first() -> None:
    assert leading_system_joined([{"role": "user", "content": "Go"}, {"role": "system", "content": "A"}]) == [
        {"role": "system", "content": "A"}, {"role": "user", "content": "Go"}]
