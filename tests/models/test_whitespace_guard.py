"""The whitespace bound counts runs between JSON tokens only, never inside strings."""

from __future__ import annotations

import pytest

from runner.models.whitespace_guard import WhitespaceRun


def test_a_run_between_tokens_past_the_limit_stops() -> None:
    guard = WhitespaceRun(8)
    assert not guard.feed('{"reason"')
    assert not guard.feed("\t" * 8)
    assert guard.feed("\t")


def test_whitespace_inside_strings_never_counts_escaped_quotes_included() -> None:
    guard = WhitespaceRun(8)
    assert not guard.feed('{"code": "if (x) {\\n' + " " * 40 + 'return \\"  ' + " " * 40 + '\\";}"')
    assert not guard.feed(",\n    ")  # pretty printing resets at each token
    assert not guard.feed('"b": 1}')
    assert guard.longest == 5  # the newline and indent; the 40-space runs were inside the string


def test_runs_are_counted_across_chunks_and_reset_by_a_token() -> None:
    guard = WhitespaceRun(5)
    for chunk in ("{", "  ", "  ", '"a"', ":", "   ", "1", "}"):
        assert not guard.feed(chunk)
    assert guard.longest == 4
    assert guard.feed(" " * 6)


def test_the_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        WhitespaceRun(0)
