"""UI-TARS's native action space: parse an answer and map its points from the screenshot to page pixels.

UI-TARS-1.5 (a Qwen2.5-VL model) answers "Thought: ... Action: click(start_box='(x,y)')" with ABSOLUTE
coordinates on the screenshot as the vision encoder saw it: resized by `smart_resize` to sides that are
multiples of 28 with a pixel count in [min_pixels, max_pixels]. The maintained `ui-tars` package parses the
answer and divides each coordinate by that resized side (`model_type="qwen25vl"`), giving a fraction of the
screen; a fraction times the viewport's CSS size is the page point. Parsing and the resize rule are the
package's (ui_tars.action_parser); what is ours is validating the result against the action space we prompt
and turning key names into Playwright's.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from dataclasses import dataclass
from typing import Any

from ui_tars.action_parser import MAX_PIXELS, MIN_PIXELS, parse_action_to_structure_output, smart_resize

__all__ = [
    "ACTION_SPACE",
    "Screen",
    "ScreenAction",
    "UITarsParseError",
    "parse_answer",
    "playwright_keys",
]

# The computer-use actions the actor prompts for and executes (runner/actors/uitars.py).
ACTION_SPACE = ("click", "left_double", "right_single", "drag", "hotkey", "type", "scroll", "wait", "finished")
_POINTED = {"click", "left_double", "right_single", "drag"}
_DIRECTIONS = ("up", "down", "left", "right")
# Servers that keep special tokens in the text (vLLM's skip_special_tokens=false) leave the box markers of
# UI-TARS's coordinate syntax around "(x,y)"; the package's parser expects them removed.
_BOX_TOKENS = re.compile(r"<\|box_start\|>|<\|box_end\|>")


class UITarsParseError(ValueError):
    """The answer is not one action of the prompted action space (it is retried with this message)."""


@dataclass(frozen=True)
class Screen:
    """The screenshot the model saw (image pixels) and the page it shows (viewport CSS pixels)."""

    image_width: int
    image_height: int
    viewport_width: int
    viewport_height: int
    min_pixels: int = MIN_PIXELS  # the package's defaults: UI-TARS-1.5's image processor limits
    max_pixels: int = MAX_PIXELS

    def resized(self) -> tuple[int, int]:
        """(height, width) of the screenshot as the model saw it (ui_tars smart_resize)."""
        return smart_resize(self.image_height, self.image_width, min_pixels=self.min_pixels,
                            max_pixels=self.max_pixels)


@dataclass(frozen=True)
class ScreenAction:
    """One parsed action; points are page CSS pixels."""

    kind: str
    point: tuple[float, float] | None = None
    end_point: tuple[float, float] | None = None
    content: str | None = None  # type / finished
    key: str | None = None  # hotkey, as the model wrote it ("ctrl c")
    direction: str | None = None  # scroll

    def record(self) -> dict[str, Any]:
        """The trace's action record: kind and the arguments it has."""
        fields = {"point": self.point, "end_point": self.end_point, "content": self.content, "key": self.key,
                  "direction": self.direction}
        record: dict[str, Any] = {"kind": self.kind}
        for name, value in fields.items():
            if value is not None:
                record[name] = list(value) if isinstance(value, tuple) else value
        return record


def parse_answer(text: str, screen: Screen) -> tuple[str, list[ScreenAction]]:
    """(thought, actions) of one UI-TARS answer; UITarsParseError when it is not in the action space."""
    cleaned = _BOX_TOKENS.sub("", text or "").strip()
    if "Action:" not in cleaned:
        raise UITarsParseError("no 'Action:' line")
    # The package prints what it cannot parse before raising; the error message carries the same text.
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            parsed = parse_action_to_structure_output(
                cleaned, 1000, screen.image_height, screen.image_width, model_type="qwen25vl",
                max_pixels=screen.max_pixels, min_pixels=screen.min_pixels)
        except (AssertionError, ValueError, SyntaxError, TypeError, IndexError, KeyError) as error:
            raise UITarsParseError(f"the action does not parse: {_short(error)}") from None
    if not parsed:
        raise UITarsParseError("no action found")
    thought = parsed[0].get("thought") or ""
    return thought, [_action(item, screen) for item in parsed]


def _action(item: dict[str, Any], screen: Screen) -> ScreenAction:
    kind = str(item.get("action_type") or "")
    inputs: dict[str, str] = item.get("action_inputs") or {}
    if kind not in ACTION_SPACE:
        raise UITarsParseError(f"{kind or '(none)'}() is not in the action space ({', '.join(ACTION_SPACE)})")
    point = _point(inputs, "start_box", screen)
    end_point = _point(inputs, "end_box", screen)
    if kind in _POINTED and point is None:
        raise UITarsParseError(f"{kind}() needs start_box='(x,y)'")
    if kind == "drag" and end_point is None:
        raise UITarsParseError("drag() needs end_box='(x,y)'")
    if kind == "hotkey":
        key = (inputs.get("key") or inputs.get("hotkey") or "").strip()
        if not key:
            raise UITarsParseError("hotkey() needs key='...'")
        playwright_keys(key)  # an unknown key name is a malformed answer, not a failed step
        return ScreenAction(kind, key=key)
    if kind == "scroll":
        direction = (inputs.get("direction") or "").strip().lower()
        if direction not in _DIRECTIONS:
            raise UITarsParseError(f"scroll() needs direction= one of {', '.join(_DIRECTIONS)}, got {direction!r}")
        return ScreenAction(kind, point=point, direction=direction)
    if kind in ("type", "finished"):
        return ScreenAction(kind, content=inputs.get("content", ""))  # the parser drops empty arguments
    return ScreenAction(kind, point=point, end_point=end_point)


def _point(inputs: dict[str, str], name: str, screen: Screen) -> tuple[float, float] | None:
    """A box argument of the parsed action (fractions of the screenshot, as the package returns them) in
    page pixels; a box is reduced to its centre, as the package's pyautogui conversion does."""
    raw = inputs.get(name)
    if raw is None:
        return None
    try:
        numbers = [float(number) for number in ast.literal_eval(raw)]
    except (ValueError, SyntaxError, TypeError):
        raise UITarsParseError(f"{name} {raw!r} is not a point") from None
    if len(numbers) == 2:
        numbers = numbers * 2
    if len(numbers) != 4:
        raise UITarsParseError(f"{name} {raw!r} is not a point")
    fx, fy = (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
    if not (0.0 <= fx <= 1.0 and 0.0 <= fy <= 1.0):
        height, width = screen.resized()
        raise UITarsParseError(f"{name} lies outside the {width}x{height} screenshot")
    return round(fx * screen.viewport_width, 3), round(fy * screen.viewport_height, 3)


# UI-TARS key names (lower case, space-separated in hotkey) -> Playwright's key names.
_KEYS = {
    "ctrl": "Control", "control": "Control", "shift": "Shift", "alt": "Alt", "option": "Alt",
    "cmd": "Meta", "command": "Meta", "meta": "Meta", "win": "Meta", "super": "Meta",
    "enter": "Enter", "return": "Enter", "esc": "Escape", "escape": "Escape", "tab": "Tab",
    "backspace": "Backspace", "delete": "Delete", "del": "Delete", "insert": "Insert", "space": "Space",
    "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
    "arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft", "arrowright": "ArrowRight",
    "pageup": "PageUp", "pagedown": "PageDown", "home": "Home", "end": "End",
}


def playwright_keys(key: str) -> str:
    """'ctrl shift a' -> 'Control+Shift+a' (one chord for page.keyboard.press)."""
    names = key.replace("+", " ").split()
    if not names:
        raise UITarsParseError("hotkey() needs key='...'")
    chord = []
    for name in names:
        lower = name.lower()
        if lower in _KEYS:
            chord.append(_KEYS[lower])
        elif re.fullmatch(r"f([1-9]|1[0-2])", lower):
            chord.append(lower.upper())
        elif len(name) == 1:
            chord.append(lower)
        else:
            raise UITarsParseError(f"hotkey(): unknown key {name!r}")
    return "+".join(chord)


def _short(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:300]
