"""What an actor step changed on the page, in words a judge can check (EvoGenUI-Bench §4.2: the evaluator
reads "actor observations"; a mutation count alone cannot tell a working control from a flickering one).

A PageState is read before and after a step: the page's visible text lines, the state of every form control
and disclosure (value, checked, selected option, aria-expanded/-pressed/-selected, open, disabled) and the
number of elements, plus which document it is and where it is scrolled (so one read also tells an actor
whether the step loaded a new document and where the view is). `describe_change` says which text appeared or disappeared, which controls changed and
how the element count moved. Reading the state never writes to the page, so mutation counts stay exact, and
it is read in the harness world (PageSession.observe), so the page cannot show a step another change than it made.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.browser.session import PageSession

MAX_TEXT_LINES = 3000  # lines of visible text kept per read
MAX_CONTROLS = 400

# Controls are keyed by tag plus the first of id, name, aria-label, placeholder and their own text, and a
# running number among equal keys, so the same control has the same key before and after a step.
_PAGE_STATE_JS = """([maxLines, maxControls]) => {
  const body = document.body;
  const lines = body ? (body.innerText || '').split('\\n').map((l) => l.replace(/\\s+/g, ' ').trim())
                                             .filter((l) => l).slice(0, maxLines) : [];
  const controls = {};
  const seen = new Map();
  const nodes = document.querySelectorAll(
    'input, select, textarea, button, details, dialog, [aria-expanded], [aria-pressed], [aria-selected], [aria-checked]');
  for (const el of nodes) {
    if (Object.keys(controls).length >= maxControls) break;
    const tag = el.tagName.toLowerCase();
    if (tag === 'input' && el.type === 'hidden') continue;
    const label = el.id ? '#' + el.id : (el.getAttribute('name') || el.getAttribute('aria-label')
      || el.getAttribute('placeholder') || (el.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 30));
    let key = tag + (tag === 'input' ? '[' + el.type + ']' : '') + (label ? ' "' + label + '"' : '');
    const n = (seen.get(key) || 0) + 1;
    seen.set(key, n);
    if (n > 1) key += ' #' + n;
    const parts = [];
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) parts.push('checked=' + el.checked);
    else if (tag === 'input' || tag === 'textarea') parts.push('value=' + JSON.stringify(el.value.slice(0, 80)));
    if (tag === 'select') parts.push('selected=' + JSON.stringify((el.selectedOptions[0] || {}).text || ''));
    if (tag === 'details' || tag === 'dialog') parts.push('open=' + el.open);
    for (const a of ['aria-expanded', 'aria-pressed', 'aria-selected', 'aria-checked']) {
      if (el.hasAttribute(a)) parts.push(a + '=' + el.getAttribute(a));
    }
    if (el.disabled) parts.push('disabled');
    controls[key] = parts.join(' ');
  }
  return {lines, controls, elements: document.getElementsByTagName('*').length,
          document: performance.timeOrigin, scroll: [window.scrollX, window.scrollY]};
}"""


@dataclass
class PageState:
    lines: list[str] = field(default_factory=list)
    controls: dict[str, str] = field(default_factory=dict)
    elements: int = 0
    document: float | None = None  # performance.timeOrigin: a new document has another one
    scroll: tuple[float, float] | None = None  # window.scrollX, window.scrollY


async def read_page_state(session: "PageSession") -> PageState | None:
    """The page's state now; None when the page does not answer (crashed, navigating, hung)."""
    try:
        raw = await session.observe(_PAGE_STATE_JS, [MAX_TEXT_LINES, MAX_CONTROLS])
    except Exception:  # any failure to read means "unknown", never "unchanged"
        return None
    if not isinstance(raw, dict):
        return None
    scroll = raw.get("scroll")
    return PageState(lines=[str(x) for x in raw.get("lines", [])],
                     controls={str(k): str(v) for k, v in (raw.get("controls") or {}).items()},
                     elements=int(raw.get("elements") or 0),
                     document=float(raw["document"]) if isinstance(raw.get("document"), (int, float)) else None,
                     scroll=(float(scroll[0]), float(scroll[1])) if isinstance(scroll, list) and len(scroll) == 2
                     else None)


def _quote(text: str, limit: int) -> str:
    return '"' + (text if len(text) <= limit else text[: limit - 1] + "…") + '"'


def _listed(items: list[str], max_items: int) -> str:
    shown = ", ".join(items[:max_items])
    return shown + (f" (+{len(items) - max_items} more)" if len(items) > max_items else "")


def describe_change(before: PageState | None, after: PageState | None, *, max_items: int = 6,
                    max_chars: int = 80) -> str:
    """One line saying what the step changed: text added/removed, controls changed, element count."""
    if before is None or after is None:
        return "page state unknown (the page did not answer)"
    parts = []
    old, new = Counter(before.lines), Counter(after.lines)
    added = [line for line in after.lines if new[line] > old.get(line, 0)]
    removed = [line for line in before.lines if old[line] > new.get(line, 0)]
    # A line that appears k more times is listed once, like a diff of the two multisets.
    added = list(dict.fromkeys(added))
    removed = list(dict.fromkeys(removed))
    if added:
        parts.append("text added: " + _listed([_quote(x, max_chars) for x in added], max_items))
    if removed:
        parts.append("text removed: " + _listed([_quote(x, max_chars) for x in removed], max_items))
    changed = []
    for key in sorted(set(before.controls) | set(after.controls)):
        was, now = before.controls.get(key), after.controls.get(key)
        if was == now:
            continue
        if was is None:
            changed.append(f"{key} appeared ({now})" if now else f"{key} appeared")
        elif now is None:
            changed.append(f"{key} disappeared")
        else:
            changed.append(f"{key}: {was} -> {now}")
    if changed:
        parts.append("controls: " + _listed(changed, max_items))
    if after.elements != before.elements:
        parts.append(f"elements: {before.elements} -> {after.elements}")
    return "; ".join(parts) if parts else "no visible change (same text, controls and element count)"
