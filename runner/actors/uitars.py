"""The UI-TARS actor: UI-TARS-1.5 as a vision-only computer-use agent in its native prompt and action space.

FlowEval §3.2 captures traces with UI-TARS-1.5-7B in a full-screen browser, a screenshot every step, up to
50 steps, the official UI-TARS library's defaults except temperature 0.7. Here the model is any
OpenAI-compatible endpoint (a vLLM server the runner starts, or one it attaches to). Each step it sees only
screenshots, never the DOM: the prompt (the task, UI-TARS's action space), the previous answers, the most recent
screenshots, and answers "Thought: ... Action: ...". The answer is parsed and its coordinates mapped back to
page pixels with the `ui-tars` package (runner/actors/uitars_actions.py); the action runs as real mouse and
keyboard input in the Playwright page.

Trace: per step, `screenshot_before` is the screenshot the model saw, `observation` the page's visible text at
that moment, `action` the parsed action with the model's raw answer; `summary["final_screenshot"]` and
`summary["final_text"]` are the page after the last action. A malformed answer is retried with the parse error
fed back (the rejected answers are kept in the step's action record, and whole in the slot's failed_calls.jsonl);
when no attempt parses, the step is recorded as `invalid_action` (`truncated` when the answer was cut at the
output cap, which is re-asked once) and the trace stops unfinished. `finished(content=...)` ends it; its content
goes to Trace.claim, advisory only.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from ui_tars.action_parser import MAX_PIXELS, MIN_PIXELS

from runner.actors.base import ActorContext
from runner.actors.step_loop import InvalidAnswer, PageUnresponsive, StepHooks, StepLimits, StepLoop
from runner.actors.uitars_actions import Screen, ScreenAction, UITarsParseError, parse_answer, playwright_keys
from runner.errors import ConfigError, format_validation_error
from runner.turns.evidence import Trace, TraceStep
from runner.judges.llm import build_endpoint_model
from runner.judges.llm_bundle import clip, image_data_url
from runner.models.fitting import FitResult, fit_for_model, model_limits
from runner.judges.llm_settings import EndpointSettings
from runner.models.base import GenerationRequest, Model
from runner.models.structured import attempt_record

if TYPE_CHECKING:
    from playwright.async_api import Page

    from runner.browser.session import PageSession

__all__ = ["UITarsActor", "UITarsSettings", "build_messages", "computer_use_prompt"]


class UITarsSettings(EndpointSettings):
    """`actor.options` of a `kind: uitars` actor."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: dict[str, Any]  # the endpoint (provider openai or vllm), with vision: true
    max_steps: int = Field(50, ge=1, le=500)  # FlowEval §3.2: "up to 50 steps"
    # FlowEval §3.2: "a full-screen browser". The paper gives no resolution; 1920x1080 is a full-HD screen.
    # null: keep the session's viewport.
    viewport_width: int | None = Field(1920, gt=0)
    viewport_height: int | None = Field(1080, gt=0)
    # Screenshots in each request: the current one and those of the latest previous steps; older steps
    # stay as their text answers only (the native multi-turn layout). Bounds the prompt: a 1920x1080
    # screenshot is about 2,700 image tokens after smart resize.
    history_images: int = Field(5, ge=1, le=50)
    max_history_answers: int = Field(50, ge=0)  # text-only previous answers kept
    max_answer_chars: int = Field(2000, ge=100)  # one previous answer as repeated in the history
    language: str = "English"  # the language of the Thought part
    # ui-tars smart_resize limits; they must match the server's image processor (UI-TARS-1.5's defaults).
    min_pixels: int = Field(MIN_PIXELS, gt=0)
    max_pixels: int = Field(MAX_PIXELS, gt=0)
    max_attempts: int = Field(3, ge=1, le=10)  # malformed answers are retried, then the trace stops
    step_timeout_s: float = Field(10.0, gt=0)  # one page action
    max_total_s: float = Field(1800.0, gt=0)  # the whole trace, model calls included
    settle_ms: int = Field(500, ge=0)  # after each action, before the next screenshot
    wait_s: float = Field(5.0, ge=0)  # wait(): the action space says it sleeps 5 s
    scroll_px: int = Field(500, gt=0)  # one scroll() in CSS pixels
    max_visible_text_chars: int = Field(20000, ge=0)  # per step observation

    @model_validator(mode="after")
    def _viewport_pair(self) -> "UITarsSettings":
        if (self.viewport_width is None) != (self.viewport_height is None):
            raise ValueError("viewport_width and viewport_height are set together (or both null)")
        if self.min_pixels > self.max_pixels:
            raise ValueError("min_pixels must not exceed max_pixels")
        return self

    @classmethod
    def from_options(cls, options: dict[str, Any], *, prefix: str = "actor.options") -> "UITarsSettings":
        try:
            settings = cls.model_validate(options)
        except ValidationError as error:
            raise ConfigError(format_validation_error(error, options, prefix)) from None
        settings.with_endpoint(prefix=f"{prefix}.model")
        if not settings.vision:
            raise ConfigError(f"invalid configuration:\n  {prefix}.model.vision = false: UI-TARS sees the page "
                              f"only through screenshots; set vision: true")
        return settings


# Written from UI-TARS's documented computer-use format: the output format and the action syntax are the
# model's own (it was trained on them); the coordinate markers are the Qwen2.5-VL box tokens.
_PROMPT = """You are a GUI agent operating a web browser. You get a task, the actions you have already taken \
and screenshots of the screen. Decide on the one next action.

## Output Format
```
Thought: ...
Action: ...
```

## Action Space
click(start_box='<|box_start|>(x1,y1)<|box_end|>')
left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')
right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')
drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
hotkey(key='') # Keys in lower case, separated by spaces, at most three, e.g. 'ctrl a'.
type(content='') # Types into the focused field. End the content with \\n to submit it.
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')
wait() # Pause for 5 seconds, then look at a new screenshot.
finished(content='xxx') # The task is done; say what was achieved.

## Note
- Write the Thought in {language}: a short plan, then one sentence naming the next action and its target.
- Inside content, escape quotes and line breaks as \\', \\" and \\n so it reads as a Python string.

## User Instruction
{instruction}
"""

_SYSTEM = "You are a helpful assistant."  # the system turn of UI-TARS's native conversation


def computer_use_prompt(instruction: str, *, language: str = "English") -> str:
    return _PROMPT.format(language=language, instruction=instruction.strip())


def instruction_for(context: ActorContext) -> str:
    """The User Instruction: the goal to carry out (FlowEval: the flow task's goal text), else the suite's
    instructions, else the turn's request and the requirements to check."""
    if context.goal is not None:
        return context.goal
    if context.instructions is not None:
        return context.instructions
    lines = [f"Use this web app to check that it does what was asked: {context.turn.prompt.strip()}"]
    if context.turn.requirements:
        lines.append("Check in particular:")
        lines += [f"- {requirement.description}" for requirement in context.turn.requirements]
    return "\n".join(lines)


def build_messages(prompt: str, answers: list[str], screenshots: list[str], *,
                   max_history_answers: int) -> list[dict[str, Any]]:
    """UI-TARS's multi-turn layout: the prompt, then each previous answer, the latest ones preceded by their
    screenshots, then the current screenshot. `screenshots` are data URLs of the latest steps, the current one
    last (at most one more than `answers`); older steps keep their answer only."""
    assert 1 <= len(screenshots) <= len(answers) + 1
    messages: list[dict[str, Any]] = [{"role": "system", "content": _SYSTEM},
                                      {"role": "user", "content": prompt}]
    first = max(0, len(answers) - max_history_answers)
    with_image = len(answers) - (len(screenshots) - 1)  # the first previous step still shown
    for index in range(first, len(answers)):
        if index >= with_image:
            messages.append(_image_turn(screenshots[index - with_image]))
        messages.append({"role": "assistant", "content": answers[index]})
    messages.append(_image_turn(screenshots[-1]))
    return messages


def _image_turn(url: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}


class UITarsActor:
    """Implements the Actor protocol; `name` is "ui-tars"."""

    name = "ui-tars"

    def __init__(self, settings: UITarsSettings, *, model: Model | None = None) -> None:
        self.settings = settings
        self._model = model if model is not None else build_endpoint_model(settings)

    async def aclose(self) -> None:
        await self._model.aclose()

    async def act(self, session: "PageSession", context: ActorContext) -> Trace:
        s = self.settings
        out_dir = Path(context.out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        page = session.page
        restore = page.viewport_size
        if s.viewport_width is not None and s.viewport_height is not None:
            await page.set_viewport_size({"width": s.viewport_width, "height": s.viewport_height})
            await session.settle(s.settle_ms)
        try:
            return await self._run(session, context, out_dir)
        finally:
            if restore is not None and restore != page.viewport_size:
                try:
                    await page.set_viewport_size(restore)
                except Exception:  # a crashed page keeps its size; the trace is already written
                    pass

    async def _run(self, session: "PageSession", context: ActorContext, out_dir: Path) -> Trace:
        s = self.settings
        loop: StepLoop[_Answer] = StepLoop(
            actor=self.name, role="actor", model=self._model,
            limits=StepLimits(max_steps=s.max_steps, max_total_s=s.max_total_s, step_timeout_s=s.step_timeout_s,
                              settle_ms=s.settle_ms))
        return await loop.run(session, _UITarsSteps(self, context, out_dir), out_dir)

    async def _ask(self, messages: list[dict[str, Any]], screen: Screen, context: ActorContext,
                   usage: dict[str, int]) -> tuple[str, str, list[ScreenAction], list[dict[str, str]]]:
        """(answer, thought, actions, rejected attempts); _NoValidAnswer after max_attempts malformed ones."""
        conversation = list(messages)
        rejected: list[dict[str, str]] = []
        attempts: list[dict[str, Any]] = []  # every rejected answer whole, as runner/models/structured.py keeps them
        for attempt in range(1, self.settings.max_attempts + 1):
            response = await self._model.generate(
                GenerationRequest(task_id=context.task.id, turn=context.turn.index, messages=conversation))
            for key, value in response.usage.items():
                usage[key] = usage.get(key, 0) + int(value or 0)
            text = response.text or ""
            try:
                thought, actions = parse_answer(text, screen)
            except UITarsParseError as error:
                reason = f"cut at the output cap ({error})" if response.cut else str(error)
                rejected.append({"raw": clip(text, 2000), "error": reason})
                attempts.append(attempt_record(attempt, response, error=reason))
                if response.cut and sum(1 for a in attempts if a.get("cut")) > 1:
                    attempts[-1]["next"] = "not asked again: a second answer was cut too (a cut is re-asked once)"
                    break
                # Fed back so a deterministic (temperature 0) model can answer differently; this correction
                # turn is dropped from later steps' history, which keeps the native layout.
                said = ("That answer was cut off at the output limit before its Action. Keep the Thought short."
                        if response.cut else f"That answer could not be executed: {error}.")
                conversation = [*conversation, {"role": "assistant", "content": clip(text, 2000) or "(empty)"},
                                {"role": "user", "content": f"{said} Answer again with one Thought and one Action "
                                 "from the action space."}]
                continue
            return text, thought, actions, rejected
        raise _NoValidAnswer(rejected, attempts)


@dataclass(frozen=True)
class _Answer:
    """One valid answer: its text, its Thought, the actions parsed from it and the attempts rejected before it."""

    text: str
    thought: str
    actions: list[ScreenAction]
    rejected: list[dict[str, str]]


class _UITarsSteps(StepHooks[_Answer]):
    """One visit's steps: a screenshot each step (the latest ones repeated in the next requests with the previous
    answers, UI-TARS's native layout) and the page's visible text as the step's observation."""

    screenshot_prefix = "uitars"
    always_final_screenshot = True  # the summary names it

    def __init__(self, actor: UITarsActor, context: ActorContext, out_dir: Path) -> None:
        s = actor.settings
        self.actor, self.context, self.out_dir, self.settings = actor, context, out_dir, s
        self.prompt = computer_use_prompt(instruction_for(context), language=s.language)
        self.answers: list[str] = []
        # Data URLs of the latest steps, as sent: no more than the server takes in one prompt (its
        # limit_mm_per_prompt, or the declared limits of a hosted endpoint).
        limits, _ = model_limits(actor._model)
        self.history_images = s.history_images
        if limits.images_per_prompt is not None and s.vision:
            self.history_images = max(1, min(self.history_images, limits.images_per_prompt))
        self.screenshots: deque[str] = deque(maxlen=self.history_images)
        self.screen: Screen | None = None
        self.visible_text = ""
        self.viewport: dict[str, int] = {}

    async def prepare(self, session: "PageSession") -> None:
        # The coordinate system of mouse input; a context made without a fixed viewport reports the window's.
        self.viewport = session.page.viewport_size or await session.evaluate(
            "() => ({width: window.innerWidth, height: window.innerHeight})")

    async def observe(self, session: "PageSession", step_index: int, shot: str) -> None:
        if not shot:
            raise PageUnresponsive("page unresponsive: no screenshot")
        s = self.settings
        with Image.open(self.out_dir / shot) as image:
            width, height = image.size
        self.screen = Screen(width, height, self.viewport["width"], self.viewport["height"], s.min_pixels,
                             s.max_pixels)
        self.screenshots.append(image_data_url(self.out_dir / shot, max_side=0))  # full size: the model's own resize
        self.visible_text = await _visible_text(session, s.max_visible_text_chars)

    def request_notes(self) -> dict[str, Any]:
        if self.history_images < self.settings.history_images:
            return {"history_images": {"configured": self.settings.history_images,
                                       "sent_at_most": self.history_images, "why": "the server's images per prompt"}}
        return {}

    def fit(self, step_index: int, shot: str) -> FitResult:
        messages = build_messages(self.prompt, self.answers, list(self.screenshots),
                                  max_history_answers=self.settings.max_history_answers)
        return fit_for_model(self.actor._model, messages)  # UI-TARS resizes images itself: no size cap

    async def ask(self, messages: list[dict[str, Any]], step_index: int, usage: dict[str, int]) -> _Answer:
        assert self.screen is not None
        try:
            return _Answer(*await self.actor._ask(messages, self.screen, self.context, usage))
        except _NoValidAnswer as failure:  # what every attempt wrote is kept; a cut answer is named
            cut = failure.attempts[-1].get("cut")
            context = self.context
            raise InvalidAnswer(
                action={"kind": "truncated" if cut else "invalid_action", "rejected": failure.rejected,
                        **({"cut": cut} if cut else {})},
                error=failure.rejected[-1]["error"],
                stop_reason=("the model's action was truncated at its output cap" if cut
                             else "the model returned no valid action"),
                failed_call={"role": "actor", "model": self.actor._model.name, "task_id": context.task.id,
                             "turn": context.turn.index, "step": step_index,
                             "outcome": "truncated" if cut else "malformed", "error": failure.rejected[-1]["error"],
                             "attempts": failure.attempts, **({"cut": cut} if cut else {})},
                observation=self.visible_text) from failure

    def begin_step(self, answer: _Answer, step_index: int, shot: str) -> TraceStep:
        record = answer.actions[0].record()
        if len(answer.actions) > 1:
            record["then"] = [action.record() for action in answer.actions[1:]]
        record.update(thought=answer.thought, raw=clip(answer.text, 4000))
        if answer.rejected:
            record["rejected"] = answer.rejected
        return TraceStep(index=step_index, action=record, observation=self.visible_text, screenshot_before=shot)

    async def execute(self, session: "PageSession", answer: _Answer, step: TraceStep) -> bool:
        """Run the actions as mouse and keyboard input; the page settles after them, whatever they were."""
        s = self.settings
        for action in answer.actions:
            try:
                await asyncio.wait_for(perform(session.page, action, s), timeout=s.step_timeout_s + s.wait_s)
            except asyncio.TimeoutError:
                step.ok, step.error = False, f"the page did not respond within {s.step_timeout_s:g} s"
                break
            except Exception as error:  # Playwright errors: a closed page, a navigation mid-input
                step.ok, step.error = False, clip(f"{action.kind}: {error}", 600)
                break
        return True

    def remember(self, answer: _Answer, step: TraceStep) -> None:
        self.answers.append(clip(answer.text, self.settings.max_answer_chars))

    def claim(self, answer: _Answer) -> str | None:
        finished = next((action for action in answer.actions if action.kind == "finished"), None)
        return None if finished is None else finished.content or ""

    async def summary(self, session: "PageSession", trace: Trace, final_shot: str) -> dict[str, Any]:
        screen = self.screen
        resized = screen.resized() if screen is not None else None
        return {
            "final_screenshot": final_shot,
            "final_text": await _visible_text(session, self.settings.max_visible_text_chars),
            "viewport": [self.viewport["width"], self.viewport["height"]],
            "screenshot_size": [screen.image_width, screen.image_height] if screen else None,
            "model_image_size": [resized[1], resized[0]] if resized else None,  # width, height after smart resize
        }


async def perform(page: "Page", action: ScreenAction, settings: UITarsSettings) -> None:
    """One action as real input events at page coordinates."""
    mouse, keyboard = page.mouse, page.keyboard
    kind = action.kind
    if kind in ("click", "left_double", "right_single"):
        assert action.point is not None
        x, y = action.point
        if kind == "click":
            await mouse.click(x, y)
        elif kind == "left_double":
            await mouse.dblclick(x, y)
        else:
            await mouse.click(x, y, button="right")
    elif kind == "drag":
        assert action.point is not None and action.end_point is not None
        await mouse.move(*action.point)
        await mouse.down()
        await mouse.move(*action.end_point, steps=10)  # intermediate moves, as a dragging hand makes
        await mouse.up()
    elif kind == "hotkey":
        await keyboard.press(playwright_keys(action.key or ""))
    elif kind == "type":
        content = action.content or ""
        submit = content.endswith("\n")  # the action space: a trailing \n submits
        await keyboard.type(content[:-1] if submit else content)
        if submit:
            await keyboard.press("Enter")
    elif kind == "scroll":
        if action.point is not None:
            await mouse.move(*action.point)  # the wheel scrolls what is under the pointer
        dx, dy = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}[action.direction or "down"]
        await mouse.wheel(dx * settings.scroll_px, dy * settings.scroll_px)
    elif kind == "wait":
        await asyncio.sleep(settings.wait_s)
    # finished: nothing to do on the page


class _NoValidAnswer(Exception):
    def __init__(self, rejected: list[dict[str, str]], attempts: list[dict[str, Any]]) -> None:
        super().__init__("no valid action")
        self.rejected = rejected
        self.attempts = attempts  # each whole, with its finish reason, tokens and cap (the slot's failed_calls.jsonl)


async def _visible_text(session: "PageSession", limit: int) -> str:
    try:
        return clip(await session.visible_text(), limit)
    except Exception:  # mid-navigation or hung: nothing readable at this moment
        return ""
