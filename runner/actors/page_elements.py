"""What an LLM actor sees of a page and how its indexed actions are executed.

The interactive elements are listed through one Playwright locator, `page.locator(INTERACTIVE)`, with
`evaluate_all`, so element k of the listing is exactly `locator.nth(original_index)` when the action runs:
no attributes are written into the page (that would count as DOM mutations).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Page

INTERACTIVE = ", ".join(
    [
        "a[href]", "button", "input:not([type=hidden])", "select", "textarea", "summary", "details",
        "[role=button]", "[role=link]", "[role=checkbox]", "[role=radio]", "[role=tab]", "[role=menuitem]",
        "[role=switch]", "[role=slider]", "[role=option]", "[role=combobox]", "[role=textbox]",
        "[role=spinbutton]", "[contenteditable='']", "[contenteditable=true]", "[onclick]",
        "[tabindex]:not([tabindex='-1'])",
    ]
)

# Runs over the locator's matches in Playwright's order; returns the visible ones with their position.
_DESCRIBE_JS = """(elements, maxName) => {
  const clip = (s) => { s = (s || '').replace(/\\s+/g, ' ').trim(); return s.length > maxName ? s.slice(0, maxName) + '…' : s; };
  const implicitRole = (el) => {
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (tag === 'a') return 'link';
    if (tag === 'button' || tag === 'summary') return 'button';
    if (tag === 'select') return el.multiple ? 'listbox' : 'combobox';
    if (tag === 'textarea') return 'textbox';
    if (tag === 'input') {
      if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
      if (type === 'checkbox') return 'checkbox';
      if (type === 'radio') return 'radio';
      if (type === 'range') return 'slider';
      if (type === 'number') return 'spinbutton';
      return 'textbox';
    }
    return '';
  };
  const nameOf = (el) => {
    const aria = el.getAttribute('aria-label');
    if (aria) return aria;
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const text = by.split(/\\s+/).map((id) => document.getElementById(id)).filter(Boolean).map((n) => n.innerText).join(' ');
      if (text.trim()) return text;
    }
    if (el.labels && el.labels.length) return Array.from(el.labels).map((l) => l.innerText).join(' ');
    const text = el.innerText || el.textContent || '';
    if (text.trim()) return text;
    return el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('alt') ||
           (el.tagName === 'INPUT' ? el.value : '') || el.getAttribute('name') || el.id || '';
  };
  const out = [];
  elements.forEach((el, position) => {
    const rect = el.getBoundingClientRect();
    if (rect.width <= 0 || rect.height <= 0) return;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') return;
    if (el.checkVisibility && !el.checkVisibility({ visibilityProperty: true })) return;
    const tag = el.tagName.toLowerCase();
    const item = {
      position, tag, role: el.getAttribute('role') || implicitRole(el), name: clip(nameOf(el)),
      type: el.getAttribute('type') || '', disabled: !!(el.disabled || el.getAttribute('aria-disabled') === 'true'),
      in_viewport: rect.bottom > 0 && rect.top < window.innerHeight,
    };
    if (tag === 'input' || tag === 'textarea') {
      if (['checkbox', 'radio'].includes((item.type || '').toLowerCase())) item.checked = !!el.checked;
      else item.value = clip(el.value);
    }
    if (tag === 'select') {
      item.value = clip(el.options[el.selectedIndex] ? el.options[el.selectedIndex].text : '');
      item.options = Array.from(el.options).slice(0, 20).map((o) => clip(o.text));
    }
    if (el.getAttribute('aria-checked')) item.checked = el.getAttribute('aria-checked') === 'true';
    out.push(item);
  });
  return out;
}"""


@dataclass
class Element:
    index: int  # what the model refers to
    position: int  # nth() of the INTERACTIVE locator
    info: dict[str, Any]

    def describe(self) -> str:
        info = self.info
        text = f"[{self.index}] <{info.get('tag')}>"
        if info.get("role"):
            text += f" role={info['role']}"
        if info.get("type"):
            text += f" type={info['type']}"
        text += f' "{info.get("name", "")}"'
        if "value" in info:
            text += f' value="{info["value"]}"'
        if "checked" in info:
            text += f" checked={str(info['checked']).lower()}"
        if info.get("options"):
            text += " options=" + "|".join(info["options"])
        if info.get("disabled"):
            text += " (disabled)"
        if not info.get("in_viewport", True):
            text += " (below/above the viewport)"
        return text

    def public(self) -> dict[str, Any]:
        return {"index": self.index, **{k: v for k, v in self.info.items() if k != "position"}}


async def list_elements(page: Page, *, max_elements: int, max_name_chars: int = 80) -> list[Element]:
    described = await page.locator(INTERACTIVE).evaluate_all(_DESCRIBE_JS, max_name_chars)
    elements = []
    for item in described[:max_elements]:
        elements.append(Element(index=len(elements), position=int(item["position"]), info=item))
    return elements


class ActionFailed(Exception):
    """The action could not be carried out (unknown index, disabled element, timeout...)."""


async def execute(page: Page, action: dict[str, Any], elements: list[Element], *, timeout_s: float,
                  max_wait_ms: int) -> None:
    """Carry out one action on the page. Raises ActionFailed with a short reason."""
    kind = action["action"]
    timeout_ms = timeout_s * 1000

    def target() -> Any:
        index = action.get("index")
        if index is None or not 0 <= int(index) < len(elements):
            raise ActionFailed(f"no element with index {index!r} (indices 0..{len(elements) - 1})")
        return page.locator(INTERACTIVE).nth(elements[int(index)].position)

    try:
        if kind == "click":
            await target().click(timeout=timeout_ms)
        elif kind == "fill":
            await target().fill(str(action.get("text") or ""), timeout=timeout_ms)
        elif kind == "select":
            await target().select_option(str(action.get("option") or ""), timeout=timeout_ms)
        elif kind == "press":
            key = str(action.get("key") or "")
            if action.get("index") is not None:
                await target().press(key, timeout=timeout_ms)
            else:
                await page.keyboard.press(key)
        elif kind == "scroll":
            await page.mouse.wheel(0, int(action.get("dy") or 0))
        elif kind == "wait":
            await asyncio.sleep(min(max(int(action.get("ms") or 0), 0), max_wait_ms) / 1000)
        else:
            raise ActionFailed(f"not a page action: {kind}")
    except ActionFailed:
        raise
    except Exception as error:  # Playwright timeouts, detached elements, bad keys
        text = str(error).strip().splitlines()
        raise ActionFailed(text[0][:300] if text else type(error).__name__) from error
