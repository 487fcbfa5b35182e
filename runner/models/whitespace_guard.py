"""A bound on whitespace between JSON tokens, for structured answers from servers whose decoding the runner does not
set.

JSON admits any amount of whitespace between tokens, and a grammar-constrained decoder that allows it can write
`{"reason"` and then whitespace until the output cap (public vLLM and xgrammar reports: Gemma 4 31B, Qwen3.5-9B,
Mistral 7B; reproduced here on a tiny random model, tests/support/tiny_vlm_unigram.py). Where the runner starts
the server it turns that whitespace off (vLLM's `disable_any_whitespace`, docs/vllm.md); elsewhere (a hosted
endpoint, an attached server) the answer is streamed and `WhitespaceRun` says when to stop reading it: once a run
of whitespace outside JSON strings is longer than any formatting needs. Whitespace inside a string (quoted code,
an indented summary) is the answer's content and never counts.
"""

from __future__ import annotations

__all__ = ["DEFAULT_WHITESPACE_RUN_LIMIT", "WhitespaceRun"]

# Pretty-printed JSON breaks a line and indents one level per nesting depth: 64 characters is a 30-deep indent at
# two spaces, far past any answer schema here, and a loop stopped after 64 characters costs a few dozen tokens.
DEFAULT_WHITESPACE_RUN_LIMIT = 64
_WHITESPACE = frozenset(" \t\n\r")


class WhitespaceRun:
    """Reads an answer as it streams in; `feed` says when a run of whitespace outside strings exceeds `limit`."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"whitespace run limit must be at least 1, got {limit}")
        self.limit = limit
        self.run = 0  # whitespace characters in a row, outside strings, at the end of what was fed
        self.longest = 0
        self._in_string = False
        self._escaped = False

    def feed(self, text: str) -> bool:
        """True once the current run outside strings is longer than the limit."""
        for char in text:
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif char == "\\":
                    self._escaped = True
                elif char == '"':
                    self._in_string = False
                continue
            if char in _WHITESPACE:
                self.run += 1
                self.longest = max(self.longest, self.run)
                if self.run > self.limit:
                    return True
                continue
            self.run = 0
            if char == '"':
                self._in_string = True
        return False
