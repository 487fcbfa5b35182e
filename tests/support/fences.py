"""Reading a prompt the way a model should: which lines lie outside the untrusted blocks (runner/models/untrusted.py)."""

from __future__ import annotations

import re

from runner.models.untrusted import CLOSE, LINE_PREFIX, OPEN


def outside_blocks(text: str) -> list[str]:
    """The lines of `text` no untrusted block holds. Fails on a block line without the prefix or a block that
    never closes (its own id on its closing line)."""
    outside: list[str] = []
    block: str | None = None
    for line in text.split("\n"):
        if block is None:
            opened = re.match(rf"{re.escape(OPEN)} ([0-9a-f]{{16}}) \"", line)
            if opened:
                block = opened.group(1)
            else:
                outside.append(line)
        elif line == f"{CLOSE} {block}>>>":
            block = None
        else:
            assert line.startswith(LINE_PREFIX), f"an unprefixed line inside a block: {line!r}"
    assert block is None, "an untrusted block was never closed"
    return outside
