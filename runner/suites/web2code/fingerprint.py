"""Element fingerprints of MT-Web2Code (seed paper 003, §3.2 "Element Fingerprint Injection", eq. 3).

    ID(e) = hash(tag(e), text(e), attr(e))                                   (eq. 3)

A position-agnostic id injected as a custom attribute on every node of the golden page H0, so elements
can be tracked across deletions and reflows (macro anchors a-/a+, eq. 5; micro re-measured boxes b_i,
§3.4), and removed again before the coding agent sees the page (§3.2, "to prevent data leakage").

Exact definition used here (the paper names the three parts; the details are ours):
- tag(e):  the lower-cased tag name (`svg` children keep their names lower-cased too);
- text(e): the element's OWN text, i.e. the concatenation of its direct child text nodes, whitespace
           runs collapsed to one space and trimmed, so a parent's id does not change when a descendant's
           text is edited and source indentation does not matter;
- attr(e): every attribute except `data-fp` itself, as (name, value) pairs sorted by name;
- hash:    64-bit FNV-1a over the UTF-8 bytes of JSON.stringify([tag, text, attrs]) (unambiguous
           framing), written as 16 lower-case hex digits.
Identical elements (same tag, own text and attributes, e.g. two empty <li class="sep">) get the same
hash; they are disambiguated by document (pre-)order: the first keeps the bare hash, the k-th repeat
(k = 1, 2, ...) gets `<hash>-<k>`. Fingerprints are assigned once on H0 and then travel with the DOM;
reassigning on a page always overwrites every `data-fp`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from playwright.async_api import Page

FP_ATTR = "data-fp"

_FNV64_OFFSET = 0xCBF29CE484222325
_FNV64_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1

# Runs in the page; returns the number of elements fingerprinted.
ASSIGN_FINGERPRINTS_JS = r"""
() => {
  const OFFSET = 0xcbf29ce484222325n, PRIME = 0x100000001b3n, MASK = (1n << 64n) - 1n;
  const enc = new TextEncoder();
  const fnv1a64 = (s) => {
    let h = OFFSET;
    for (const b of enc.encode(s)) { h ^= BigInt(b); h = (h * PRIME) & MASK; }
    return h.toString(16).padStart(16, '0');
  };
  const ownText = (el) => {
    let t = '';
    for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) t += n.nodeValue;
    return t.replace(/\s+/g, ' ').trim();
  };
  const attrs = (el) => Array.from(el.attributes)
    .filter((a) => a.name !== 'data-fp')
    .map((a) => [a.name, a.value])
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const seen = new Map();
  const all = document.querySelectorAll('*');
  for (const el of all) {
    const base = fnv1a64(JSON.stringify([el.tagName.toLowerCase(), ownText(el), attrs(el)]));
    const k = seen.get(base) || 0;
    seen.set(base, k + 1);
    el.setAttribute('data-fp', k === 0 ? base : base + '-' + k);
  }
  return all.length;
}
"""

# Boxes in page (document) coordinates = full-page screenshot pixels at device scale factor 1.
ELEMENT_BOXES_JS = r"""
(fps) => {
  const out = {};
  for (const fp of fps) {
    const el = document.querySelector('[data-fp="' + CSS.escape(fp) + '"]');
    if (!el) continue;
    const r = el.getBoundingClientRect();
    out[fp] = [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height];
  }
  return out;
}
"""

# Top-level semantic regions: semantic elements with no semantic ancestor other than <main>/<body>.
SEMANTIC_TAGS = ("header", "nav", "main", "section", "article", "aside", "footer")
TOP_LEVEL_REGIONS_JS = r"""
(tags) => {
  const sem = new Set(tags);
  const out = [];
  for (const el of document.body.querySelectorAll(tags.join(','))) {
    const tag = el.tagName.toLowerCase();
    if (tag === 'main') continue;
    let p = el.parentElement, nested = false;
    while (p && p !== document.body) {
      const pt = p.tagName.toLowerCase();
      if (sem.has(pt) && pt !== 'main') { nested = true; break; }
      p = p.parentElement;
    }
    if (nested) continue;
    const r = el.getBoundingClientRect();
    out.push({tag, fp: el.getAttribute('data-fp'), id: el.id || null,
              box: [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]});
  }
  return out;
}
"""


def fingerprint_hash(tag: str, text: str, attrs: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    """Python twin of the page-side hash (eq. 3), for checks and offline tools.

    `text` is normalised like in the page (whitespace collapsed, trimmed); `data-fp` is ignored.
    """
    pairs = attrs.items() if isinstance(attrs, Mapping) else attrs
    norm_attrs = sorted(([k, v] for k, v in pairs if k != FP_ATTR), key=lambda kv: kv[0])
    norm_text = re.sub(r"\s+", " ", text).strip()
    # JSON.stringify's framing: no spaces, non-ASCII kept as is.
    payload = json.dumps([tag.lower(), norm_text, norm_attrs], separators=(",", ":"), ensure_ascii=False)
    h = _FNV64_OFFSET
    for byte in payload.encode("utf-8"):
        h ^= byte
        h = (h * _FNV64_PRIME) & _MASK64
    return f"{h:016x}"


async def assign_fingerprints(page: Page) -> int:
    """Set `data-fp` on every element of the page (eq. 3); returns how many elements got one."""
    return int(await page.evaluate(ASSIGN_FINGERPRINTS_JS))


async def element_boxes(page: Page, fps: Iterable[str]) -> dict[str, tuple[float, float, float, float]]:
    """Bounding boxes (x, y, w, h) in page coordinates of the elements with these fingerprints.

    Fingerprints not present on the page are left out of the result.
    """
    raw = await page.evaluate(ELEMENT_BOXES_JS, list(fps))
    return {fp: (float(b[0]), float(b[1]), float(b[2]), float(b[3])) for fp, b in raw.items()}


async def top_level_regions(page: Page) -> list[dict]:
    """Top-level semantic regions (candidates for eq. 4's T_sem): tag, fp, id and page box, in order."""
    return list(await page.evaluate(TOP_LEVEL_REGIONS_JS, list(SEMANTIC_TAGS)))


# A start tag, allowing quoted attribute values that contain '>'.
_START_TAG = re.compile(r"<[A-Za-z][^\s/>]*(?:\"[^\"]*\"|'[^']*'|[^'\">])*>")
_FP_ATTRIBUTE = re.compile(
    r"\s+data-fp(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?(?=[\s/>])", re.IGNORECASE
)


def strip_fingerprints(html: str) -> str:
    """Remove every `data-fp` attribute from serialized HTML, so the model never sees them (§3.2).

    Only start tags are touched; text that merely mentions data-fp is left alone.
    """
    return _START_TAG.sub(lambda m: _FP_ATTRIBUTE.sub("", m.group(0)), html)
