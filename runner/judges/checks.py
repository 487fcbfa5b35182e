"""The declarative check language of the rules judge.

A requirement's check is a list of steps (user actions) followed by assertions on the resulting page,
tool log or runtime state. Steps and assertions locate elements the way a user does: by ARIA role and
accessible name, by label, by visible text, by test id, or (last resort) by CSS.

    check:
      steps:
        - {action: fill, target: {label: "Task"}, value: "Water plants"}
        - {action: click, target: {role: button, name: "Add"}}
      assert:
        - {type: text_visible, text: "Water plants"}
        - {type: count, target: {css: "li.todo"}, equals: 1}
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Target(BaseModel):
    """How to find an element. Exactly one locator kind must be given."""

    model_config = ConfigDict(extra="forbid")

    role: str | None = None
    name: str | None = None  # accessible name, with `role`
    label: str | None = None
    text: str | None = None
    testid: str | None = None
    css: str | None = None
    exact: bool = False
    nth: int = 0

    @model_validator(mode="after")
    def _one_locator(self) -> "Target":
        kinds = [k for k in ("role", "label", "text", "testid", "css") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"a target needs exactly one of role/label/text/testid/css, got {kinds or 'none'}")
        if self.name is not None and self.role is None:
            raise ValueError("`name` is only valid together with `role`")
        return self


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClickStep(_Step):
    action: Literal["click"]
    target: Target


class FillStep(_Step):
    action: Literal["fill"]
    target: Target
    value: str


class SelectStep(_Step):
    action: Literal["select"]
    target: Target
    value: str  # option value or label


class PressStep(_Step):
    action: Literal["press"]
    key: str
    target: Target | None = None  # None: the focused element


class CheckStep(_Step):
    action: Literal["check", "uncheck"]
    target: Target


class WaitStep(_Step):
    action: Literal["wait"]
    ms: int = Field(default=0, ge=0, le=30_000)
    target: Target | None = None  # wait until visible


class DoubleClickStep(_Step):
    action: Literal["dblclick"]
    target: Target


class HoverStep(_Step):
    action: Literal["hover"]
    target: Target


class DragStep(_Step):
    """Press the mouse on `target`, move it onto `to` and release it there (native drag and drop too)."""

    action: Literal["drag"]
    target: Target
    to: Target


class ScrollStep(_Step):
    """Scroll by (dx, dy) CSS pixels: the element `target` when given (else the page); with no offset, bring
    `target` into view. Scrolling is instant (no smooth scrolling), so where it ends does not depend on time."""

    action: Literal["scroll"]
    target: Target | None = None
    dx: int = 0
    dy: int = 0

    @model_validator(mode="after")
    def _somewhere(self) -> "ScrollStep":
        if self.target is None and self.dx == 0 and self.dy == 0:
            raise ValueError("a scroll step needs a target to bring into view, or an offset dx/dy")
        return self


class WaitForTextStep(_Step):
    """Wait until the page's visible text shows `text` (whitespace normalised), or until it no longer does
    (`present: false`); `ms` bounds the wait (0: the step timeout)."""

    action: Literal["wait_for_text"]
    text: str = Field(min_length=1)
    present: bool = True
    ms: int = Field(default=0, ge=0, le=30_000)


Step = Annotated[
    ClickStep | DoubleClickStep | HoverStep | FillStep | SelectStep | PressStep | CheckStep | DragStep | ScrollStep
    | WaitStep | WaitForTextStep,
    Field(discriminator="action"),
]


class _Assertion(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextVisible(_Assertion):
    type: Literal["text_visible"]
    text: str
    present: bool = True  # False: the text must NOT be visible


class CountAssertion(_Assertion):
    type: Literal["count"]
    target: Target
    equals: int | None = None
    min: int | None = None
    max: int | None = None


class AttributeAssertion(_Assertion):
    type: Literal["attribute"]
    target: Target
    name: str
    equals: str | None = None
    contains: str | None = None


class ValueAssertion(_Assertion):
    type: Literal["value"]
    target: Target
    equals: str


class MutationAssertion(_Assertion):
    """The steps of this check changed the DOM (the probe's MutationObserver saw records)."""

    type: Literal["mutation"]
    changed: bool = True


class ToolCalledAssertion(_Assertion):
    """The tool log of this turn holds a call of `tool` whose arguments contain `args_subset`."""

    type: Literal["tool_called"]
    tool: str
    args_subset: dict[str, Any] = Field(default_factory=dict)
    min_calls: int = 1
    ok: bool = True  # the call must have succeeded


class ToolNotCalledAssertion(_Assertion):
    type: Literal["tool_not_called"]
    tool: str


class StateAssertion(_Assertion):
    """The runtime state after the steps has `path` (dot-separated) equal to / containing a value."""

    type: Literal["state"]
    path: str
    equals: Any = None
    contains: Any = None
    exists: bool = True


Assertion = Annotated[
    TextVisible
    | CountAssertion
    | AttributeAssertion
    | ValueAssertion
    | MutationAssertion
    | ToolCalledAssertion
    | ToolNotCalledAssertion
    | StateAssertion,
    Field(discriminator="type"),
]


class Check(BaseModel):
    """An executable check: steps then assertions. `reload` starts it from a freshly loaded page."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    steps: list[Step] = Field(default_factory=list)
    assertions: list[Assertion] = Field(alias="assert", min_length=1)
    reload: bool = True
