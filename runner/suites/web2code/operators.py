"""The nine atomic micro-level operators of MT-Web2Code (seed paper 003, §3.4, Table 2), page side.

Table 2 groups the operators in five perceptual dimensions. The paper names them; the exact edits are ours:

    dimension  operator      type  what it does to one element (chosen by a seeded parameter)
    layout     alignment     Sty.  text-align changed to another of left/center/right, or text-indent 3em
    elements   removal       Str.  the element is removed from the DOM
    elements   duplication   Str.  a deep clone is inserted right after it
    text       text_content  Str.  one word of its own text replaced, the text truncated, or a word inserted
    text       font          Sty.  font-size x1.5 or x0.7, or font-weight toggled (bold <-> normal)
    color      color         Sty.  foreground colour, or border colour when it has a border, set to a distant hue
    spacing    box_spacing   Sty.  margin-top/-left/-bottom +24..32 px, or padding +16 px on every side
    spacing    sizing        Sty.  width to 60 % of its rendered width, or height +48 px
    spacing    decoration    Sty.  text-decoration-line changed (text), else a 4 px box-shadow ring

"Stylistic operators perturb a single rendered property" (Table 2): they set that one property as an inline
style on the target, so the DOM topology and every other element's style stay as they were. Every edit
registers an undo, so eq. 7's visibility check can reject an invisible edit and resample (§3.4).
Clones made by `duplication` get `<fp>~dup` fingerprints: never targets themselves, but trackable.
"""

from __future__ import annotations

from dataclasses import dataclass

from playwright.async_api import Page


@dataclass(frozen=True)
class Operator:
    name: str
    dimension: str  # one of runner.suites.web2code.image.RUBRIC_DIMENSIONS
    kind: str  # "sty" (one CSS property) or "str" (DOM edit)


OPERATORS: tuple[Operator, ...] = (
    Operator("alignment", "layout", "sty"),
    Operator("removal", "elements", "str"),
    Operator("duplication", "elements", "str"),
    Operator("text_content", "text", "str"),
    Operator("font", "text", "sty"),
    Operator("color", "color", "sty"),
    Operator("box_spacing", "spacing", "sty"),
    Operator("sizing", "spacing", "sty"),
    Operator("decoration", "spacing", "sty"),
)
OPERATOR_BY_NAME = {op.name: op for op in OPERATORS}
STRUCTURAL_OPERATORS = frozenset({"removal", "duplication"})

# Installed once per page as window.__w2c. Boxes are [x, y, w, h] in page coordinates.
HELPERS_JS = r"""
() => {
  if (window.__w2c) return true;
  const W = {};
  const HTML_NS = 'http://www.w3.org/1999/xhtml';
  const SKIP = new Set(['html','head','body','main','script','style','link','meta','title','br','wbr',
                        'template','noscript','base','source','track','option','optgroup','area','map','col','colgroup']);
  const NON_RENDERED = new Set(['script','style','template','link','meta','noscript','base','title']);
  const SEMANTIC = new Set(['header','nav','section','article','aside','footer','main']);
  const q = (fp) => fp ? document.querySelector('[data-fp="' + CSS.escape(fp) + '"]') : null;
  // Exact fingerprint first; else the first element with the same eq. 3 hash (duplicate suffix dropped).
  const find = (fp) => {
    const el = q(fp);
    if (el || !fp) return el;
    const base = fp.split('-')[0].split('~')[0];
    for (const e of document.querySelectorAll('[data-fp]')) {
      if (e.getAttribute('data-fp').split('-')[0] === base) return e;
    }
    return null;
  };
  const ownText = (el) => { let t = ''; for (const n of el.childNodes) if (n.nodeType === 3) t += n.nodeValue;
                            return t.replace(/\s+/g, ' ').trim(); };
  const box = (el) => { const r = el.getBoundingClientRect();
                        return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; };
  const union = (boxes) => {
    const bs = boxes.filter((b) => b && b[2] > 0 && b[3] > 0);
    if (!bs.length) return null;
    const x0 = Math.min(...bs.map((b) => b[0])), y0 = Math.min(...bs.map((b) => b[1]));
    const x1 = Math.max(...bs.map((b) => b[0] + b[2])), y1 = Math.max(...bs.map((b) => b[1] + b[3]));
    return [x0, y0, x1 - x0, y1 - y0];
  };
  const rendered = (el) => el && !NON_RENDERED.has(el.tagName.toLowerCase()) &&
                           getComputedStyle(el).display !== 'none';
  const visible = (el) => {
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.visibility !== 'visible' || parseFloat(cs.opacity) === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width >= 4 && r.height >= 4;
  };
  const prevSib = (el) => { let s = el.previousElementSibling; while (s && !rendered(s)) s = s.previousElementSibling; return s; };
  const nextSib = (el) => { let s = el.nextElementSibling; while (s && !rendered(s)) s = s.nextElementSibling; return s; };
  W.fpOf = (el) => el ? el.getAttribute('data-fp') : null;
  W.neighbours = (fp) => {
    const el = q(fp);
    if (!el) return null;
    return {prev: W.fpOf(prevSib(el)), next: W.fpOf(nextSib(el)), parent: W.fpOf(el.parentElement)};
  };
  // Where something missing goes: the gap between two surviving siblings (eq. 5's a-, a+), else beside
  // the one that is left, else the parent. A gap that reflowed shut gets a band of MIN px.
  W.gapBox = (prevFp, nextFp, parentFp) => {
    const MIN = 12;
    const p = find(prevFp), n = find(nextFp), parent = find(parentFp);
    const pb = p ? box(p) : null, nb = n ? box(n) : null, qb = parent ? box(parent) : null;
    const band = (x, y, w) => [x, y - MIN / 2, Math.max(w, MIN), MIN];
    if (pb && nb) {
      if (nb[1] >= pb[1] + pb[3] - 1) {  // stacked: the vertical gap between them
        const x0 = Math.min(pb[0], nb[0]), x1 = Math.max(pb[0] + pb[2], nb[0] + nb[2]);
        const y0 = pb[1] + pb[3], y1 = nb[1];
        return y1 - y0 >= MIN ? [x0, y0, x1 - x0, y1 - y0] : band(x0, (y0 + y1) / 2, x1 - x0);
      }
      if (nb[0] >= pb[0] + pb[2] - 1) {  // side by side: the horizontal gap
        const y0 = Math.min(pb[1], nb[1]), y1 = Math.max(pb[1] + pb[3], nb[1] + nb[3]);
        const x0 = pb[0] + pb[2], x1 = nb[0];
        return x1 - x0 >= MIN ? [x0, y0, x1 - x0, y1 - y0] : [(x0 + x1) / 2 - MIN / 2, y0, MIN, y1 - y0];
      }
      return union([pb, nb]);
    }
    if (pb) {
      const end = qb ? qb[1] + qb[3] : pb[1] + pb[3] + MIN;
      const y0 = pb[1] + pb[3];
      return end - y0 >= MIN ? [pb[0], y0, pb[2], end - y0] : band(pb[0], y0, pb[2]);
    }
    if (nb) {
      const start = qb ? qb[1] : nb[1] - MIN;
      return nb[1] - start >= MIN ? [nb[0], start, nb[2], nb[1] - start] : band(nb[0], nb[1], nb[2]);
    }
    return qb;
  };
  // The rendered element children of parent strictly between a- and a+ (§3.5: the region "bracketed on
  // the model's page by the surviving anchors"). Returns {found, box, count}.
  W.between = (prevFp, nextFp, parentFp) => {
    const parent = find(parentFp);
    if (!parent) return {found: false, why: 'parent not found', box: null, count: 0};
    const p = prevFp ? find(prevFp) : null, n = nextFp ? find(nextFp) : null;
    if (prevFp && (!p || p.parentElement !== parent)) return {found: false, why: 'anchor a- not found', box: null, count: 0};
    if (nextFp && (!n || n.parentElement !== parent)) return {found: false, why: 'anchor a+ not found', box: null, count: 0};
    const kids = Array.from(parent.children);
    const i0 = p ? kids.indexOf(p) + 1 : 0, i1 = n ? kids.indexOf(n) : kids.length;
    const inside = kids.slice(i0, Math.max(i0, i1)).filter(rendered);
    return {found: true, why: '', box: union(inside.map(box)), count: inside.length};
  };
  // locator: {kind: 'element', fps: [...]} | {kind: 'gap', prev, next, parent} | {kind: 'between', ...}
  W.locate = (loc) => {
    if (!loc) return null;
    if (loc.kind === 'element') return union(loc.fps.map(find).filter((e) => e).map(box));
    if (loc.kind === 'gap') return W.gapBox(loc.prev, loc.next, loc.parent);
    if (loc.kind === 'between') { const r = W.between(loc.prev, loc.next, loc.parent); return r.box; }
    return null;
  };
  W.locateAll = (locs) => locs.map((l) => W.locate(l));
  W.boxOf = (fp) => { const el = q(fp); return el ? box(el) : null; };
  W.describe = (fp) => {
    const el = find(fp);
    if (!el) return null;
    const tag = el.tagName.toLowerCase();
    const cls = el.getAttribute('class');
    const id = el.getAttribute('id');
    const text = (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 60);
    return '<' + tag + (id ? ' id="' + id + '"' : '') + (cls ? ' class="' + cls + '"' : '') + '>' + (text ? ' "' + text + '"' : '');
  };
  W.isTopLevel = (el) => {
    if (!SEMANTIC.has(el.tagName.toLowerCase())) return false;
    let p = el.parentElement;
    while (p && p !== document.body) { if (SEMANTIC.has(p.tagName.toLowerCase()) && p.tagName.toLowerCase() !== 'main') return false; p = p.parentElement; }
    return true;
  };
  const blockish = (cs) => ['block', 'list-item', 'table-cell', 'table-caption', 'flow-root'].includes(cs.display);
  // The fingerprints of el's ancestors, nearest first.
  const ancestry = (el) => {
    const out = [];
    for (let p = el.parentElement; p; p = p.parentElement) { const f = p.getAttribute('data-fp'); if (f) out.push(f); }
    return out;
  };
  // Candidate targets and the operators applicable to each (eq. 7 still decides visibility).
  // `accepted`: [{fp, dimension, structural, ancestors}] already chosen in this step, `ancestors` being the
  // target's ancestry recorded before its edit; `op`: {dimension, structural}. Targets that would break
  // eq. 6 (or our stricter rules, see trajectory.py) are left out. The relation is read from the recorded
  // ancestry, so a target an edit removed from the page still constrains its ancestors (MT-Web2Code eq. 6).
  const independent = (el, op, accepted) => {
    const fp = el.getAttribute('data-fp');
    const mine = new Set(ancestry(el));
    for (const a of accepted) {
      if (a.fp === fp) return false;
      const other = q(a.fp);
      const related = (a.ancestors || []).includes(fp) || mine.has(a.fp)
                      || (!!other && (other.contains(el) || el.contains(other)));
      if (!related) continue;
      if (op.structural || a.structural || op.dimension === a.dimension) return false;
    }
    return true;
  };
  W.candidates = (op, accepted, used) => {
    const usedSet = new Set(used || []);
    const de = document.documentElement;
    const pageArea = Math.max(de.scrollWidth, 1) * Math.max(de.scrollHeight, 1);
    const out = [];
    for (const el of document.body.querySelectorAll('[data-fp]')) {
      const tag = el.tagName.toLowerCase();
      const fp = el.getAttribute('data-fp');
      if (el.namespaceURI !== HTML_NS || SKIP.has(tag) || fp.includes('~') || usedSet.has(fp) || !visible(el)) continue;
      const b = box(el);
      if (b[0] + b[2] <= 0 || b[0] >= de.scrollWidth) continue;
      const cs = getComputedStyle(el);
      const text = ownText(el);
      const hasText = text.replace(/[^\p{L}\p{N}]/gu, '').length >= 2;
      const ops = ['box_spacing', 'decoration'];
      if (hasText) ops.push('text_content', 'font');
      if (hasText && blockish(cs) && b[2] >= 60) ops.push('alignment');
      const hasBorder = ['Top', 'Right', 'Bottom', 'Left'].some((s) => parseFloat(cs['border' + s + 'Width']) > 0 && cs['border' + s + 'Style'] !== 'none');
      if (hasText || hasBorder) ops.push('color');
      if ((cs.display !== 'inline' || tag === 'img') && b[2] >= 40) ops.push('sizing');
      const small = b[2] * b[3] <= 0.2 * pageArea && b[3] <= 400;
      if (small && el.parentElement !== document.body && !W.isTopLevel(el)) {
        ops.push('removal', 'duplication');
      }
      if (op && (!ops.includes(op.name) || !independent(el, op, accepted || []))) continue;
      out.push({fp, tag, ops});
    }
    return out;
  };
  // Ancestor relation of eq. 6: 'anc' if a contains b, 'desc' if b contains a, 'same', or null.
  W.relation = (a, b) => {
    const x = q(a), y = q(b);
    if (!x || !y) return null;
    if (x === y) return 'same';
    if (x.contains(y)) return 'anc';
    if (y.contains(x)) return 'desc';
    return null;
  };
  const keepStyle = (el) => {
    const had = el.hasAttribute('style'), old = el.getAttribute('style');
    return () => { if (had) el.setAttribute('style', old); else el.removeAttribute('style'); };
  };
  const rgb = (s) => { const m = (s || '').match(/[\d.]+/g); return m ? m.slice(0, 3).map(Number) : [0, 0, 0]; };
  const PALETTE = [[214, 40, 40], [29, 78, 216], [21, 128, 61], [147, 51, 234], [234, 88, 12], [8, 145, 178], [250, 204, 21]];
  const farColour = (current, param) => {
    const c = rgb(current);
    for (let i = 0; i < PALETTE.length; i++) {
      const p = PALETTE[(param + i) % PALETTE.length];
      if (Math.abs(p[0] - c[0]) + Math.abs(p[1] - c[1]) + Math.abs(p[2] - c[2]) >= 180) return 'rgb(' + p.join(', ') + ')';
    }
    return 'rgb(' + PALETTE[param % PALETTE.length].join(', ') + ')';
  };
  const WORDS = ['harbour', 'lantern', 'orchard', 'meridian', 'copper', 'quartz', 'saffron', 'willow'];
  const OPS = {
    alignment(el, param) {
      const undo = keepStyle(el);
      const cs = getComputedStyle(el);
      let cur = cs.textAlign; if (cur === 'start') cur = 'left'; if (cur === 'end') cur = 'right';
      const options = ['left', 'center', 'right'].filter((a) => a !== cur).concat(['indent']);
      const pick = options[param % options.length];
      if (pick === 'indent') el.style.setProperty('text-indent', '3em'); else el.style.setProperty('text-align', pick);
      return {undo, detail: pick === 'indent' ? 'text-indent: 3em' : 'text-align: ' + pick + ' (was ' + cur + ')'};
    },
    removal(el) {
      const parent = el.parentNode, next = el.nextSibling;
      el.remove();
      return {undo: () => parent.insertBefore(el, next), detail: 'element removed'};
    },
    duplication(el) {
      const clone = el.cloneNode(true);
      for (const e of [clone, ...clone.querySelectorAll('[data-fp]')]) {
        if (e.hasAttribute('data-fp')) e.setAttribute('data-fp', e.getAttribute('data-fp') + '~dup');
      }
      el.after(clone);
      return {undo: () => clone.remove(), detail: 'element duplicated'};
    },
    text_content(el, param) {
      const nodes = Array.from(el.childNodes).filter((n) => n.nodeType === 3 && n.nodeValue.trim());
      if (!nodes.length) return null;
      const node = nodes.reduce((a, b) => (b.nodeValue.trim().length > a.nodeValue.trim().length ? b : a));
      const old = node.nodeValue;
      const words = old.split(/(\s+)/);
      const idx = words.map((w, i) => (/[\p{L}\p{N}]/u.test(w) ? i : -1)).filter((i) => i >= 0);
      const mode = param % 3, which = idx[Math.floor(param / 3) % idx.length];
      let value;
      if (mode === 0 || idx.length < 2) {
        const replacement = WORDS[param % WORDS.length];
        words[which] = words[which].toLowerCase() === replacement ? WORDS[(param + 1) % WORDS.length] : replacement;
        value = words.join('');
      } else if (mode === 1) {
        const keep = idx[Math.max(0, Math.floor(idx.length / 2) - 1)];
        value = words.slice(0, keep + 1).join('');
      } else {
        words.splice(which, 0, WORDS[param % WORDS.length] + ' ');
        value = words.join('');
      }
      if (value === old) return null;
      node.nodeValue = value;
      return {undo: () => { node.nodeValue = old; }, detail: 'text "' + old.trim().slice(0, 40) + '" -> "' + value.trim().slice(0, 40) + '"'};
    },
    font(el, param) {
      const undo = keepStyle(el);
      const cs = getComputedStyle(el);
      const mode = param % 3, was = cs.fontSize, wasWeight = cs.fontWeight;
      if (mode < 2) {
        const size = Math.round(parseFloat(was) * (mode === 0 ? 1.5 : 0.7) * 10) / 10;
        el.style.setProperty('font-size', size + 'px');
        return {undo, detail: 'font-size: ' + size + 'px (was ' + was + ')'};
      }
      const bold = parseInt(wasWeight, 10) >= 600;
      el.style.setProperty('font-weight', bold ? '400' : '700');
      return {undo, detail: 'font-weight: ' + (bold ? '400' : '700') + ' (was ' + wasWeight + ')'};
    },
    color(el, param) {
      const undo = keepStyle(el);
      const cs = getComputedStyle(el);
      const hasBorder = ['Top', 'Right', 'Bottom', 'Left'].some((s) => parseFloat(cs['border' + s + 'Width']) > 0 && cs['border' + s + 'Style'] !== 'none');
      const hasText = ownText(el).length > 0;
      if (hasBorder && (!hasText || param % 2 === 1)) {
        const was = cs.borderTopColor, c = farColour(was, param);
        el.style.setProperty('border-color', c);
        return {undo, detail: 'border-color: ' + c + ' (was ' + was + ')'};
      }
      const was = cs.color, c = farColour(was, param);
      el.style.setProperty('color', c);
      return {undo, detail: 'color: ' + c + ' (was ' + was + ')'};
    },
    box_spacing(el, param) {
      const undo = keepStyle(el);
      const cs = getComputedStyle(el);
      const mode = param % 4;
      if (mode === 3) {
        for (const s of ['top', 'right', 'bottom', 'left']) {
          el.style.setProperty('padding-' + s, (parseFloat(cs.getPropertyValue('padding-' + s)) + 16) + 'px');
        }
        return {undo, detail: 'padding +16px'};
      }
      const side = ['top', 'left', 'bottom'][mode];
      const add = side === 'left' ? 32 : 24;
      const v = parseFloat(cs.getPropertyValue('margin-' + side)) || 0;
      el.style.setProperty('margin-' + side, (v + add) + 'px');
      if (cs.display === 'inline') el.style.setProperty('display', 'inline-block');
      return {undo, detail: 'margin-' + side + ': ' + (v + add) + 'px (was ' + v + 'px)'};
    },
    sizing(el, param) {
      const undo = keepStyle(el);
      const b = el.getBoundingClientRect();
      if (param % 2 === 0 || el.tagName.toLowerCase() === 'img') {
        const w = Math.round(b.width * 0.6);
        el.style.setProperty('width', w + 'px');
        if (el.tagName.toLowerCase() === 'img') el.style.setProperty('height', 'auto');
        return {undo, detail: 'width: ' + w + 'px (was ' + Math.round(b.width) + 'px)'};
      }
      const h = Math.round(b.height + 48);
      el.style.setProperty('height', h + 'px');
      return {undo, detail: 'height: ' + h + 'px (was ' + Math.round(b.height) + 'px)'};
    },
    decoration(el, param) {
      const undo = keepStyle(el);
      const cs = getComputedStyle(el);
      if (ownText(el).length > 0) {
        const cur = cs.textDecorationLine;
        const options = ['underline', 'line-through', 'overline'].filter((d) => d !== cur);
        const pick = options[param % options.length];
        el.style.setProperty('text-decoration-line', pick);
        return {undo, detail: 'text-decoration-line: ' + pick + ' (was ' + cur + ')'};
      }
      el.style.setProperty('box-shadow', '0 0 0 4px rgb(17, 17, 17)');
      return {undo, detail: 'box-shadow ring added'};
    },
  };
  W._undo = null;
  // Apply one operator; returns {ok, detail, neighbours, ancestors} and keeps an undo for W.undo().
  W.apply = (op, fp, param) => {
    const el = q(fp);
    if (!el || !OPS[op]) return {ok: false, detail: 'no such element or operator'};
    const neighbours = {prev: W.fpOf(prevSib(el)), next: W.fpOf(nextSib(el)), parent: W.fpOf(el.parentElement)};
    const ancestors = ancestry(el);  // before the edit: a removal takes the element out of the page
    const res = OPS[op](el, param);
    if (!res) return {ok: false, detail: 'operator not applicable'};
    W._undo = res.undo;
    return {ok: true, detail: res.detail, neighbours, ancestors};
  };
  W.undo = () => { if (W._undo) { W._undo(); W._undo = null; } };
  W.commit = () => { W._undo = null; };
  // Macro deletion (§3.3): remove a region, returning its anchors a-, a+ (eq. 5) and parent.
  W.removeRegion = (fp) => {
    const el = q(fp);
    if (!el) return null;
    const anchors = {prev: W.fpOf(prevSib(el)), next: W.fpOf(nextSib(el)), parent: W.fpOf(el.parentElement)};
    el.remove();
    return anchors;
  };
  W.hasSurvivingSiblings = (fp) => { const el = q(fp); return !!el && !!(prevSib(el) || nextSib(el)); };
  // Media files a region uses (the "Resource Assets" of §3.3): URLs of img/source/video/svg <image> and
  // every CSS background image in its subtree, as page-relative paths.
  W.assetsOf = (fp) => {
    const root = fp ? q(fp) : document.body;
    if (!root) return [];
    const urls = new Set();
    const add = (u) => { if (!u) return; try { const x = new URL(u, document.baseURI); if (x.origin === location.origin) urls.add(decodeURIComponent(x.pathname.replace(/^\//, ''))); } catch (e) {} };
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const tag = el.tagName.toLowerCase();
      if (tag === 'img' || tag === 'source' || tag === 'video' || tag === 'audio') { add(el.getAttribute('src')); add(el.getAttribute('poster')); }
      for (const attr of ['srcset']) { const v = el.getAttribute(attr); if (v) v.split(',').forEach((part) => add(part.trim().split(/\s+/)[0])); }
      if (tag === 'image' || tag === 'use') add(el.getAttribute('href') || el.getAttribute('xlink:href'));
      const bg = getComputedStyle(el).backgroundImage;
      if (bg && bg !== 'none') for (const m of bg.matchAll(/url\(["']?([^"')]+)["']?\)/g)) add(m[1]);
    }
    return Array.from(urls).filter((u) => u && !u.endsWith('.html')).sort();
  };
  // eq. 3 fingerprints as they WOULD be assigned on this DOM without data-fp: {data-fp: fresh id}.
  W.freshMap = () => {
    const OFFSET = 0xcbf29ce484222325n, PRIME = 0x100000001b3n, MASK = (1n << 64n) - 1n;
    const enc = new TextEncoder();
    const fnv = (s) => { let h = OFFSET; for (const b of enc.encode(s)) { h ^= BigInt(b); h = (h * PRIME) & MASK; } return h.toString(16).padStart(16, '0'); };
    const attrs = (el) => Array.from(el.attributes).filter((a) => a.name !== 'data-fp').map((a) => [a.name, a.value])
      .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    const seen = new Map(), out = {};
    for (const el of document.querySelectorAll('*')) {
      const base = fnv(JSON.stringify([el.tagName.toLowerCase(), ownText(el), attrs(el)]));
      const k = seen.get(base) || 0;
      seen.set(base, k + 1);
      const fp = el.getAttribute('data-fp');
      if (fp) out[fp] = k === 0 ? base : base + '-' + k;
    }
    return out;
  };
  W.serialize = () => {
    const dt = document.doctype;
    let head = '';
    if (dt) head = '<!DOCTYPE ' + dt.name + (dt.publicId ? ' PUBLIC "' + dt.publicId + '"' : '') +
                   (dt.systemId ? (dt.publicId ? '' : ' SYSTEM') + ' "' + dt.systemId + '"' : '') + '>\n';
    return head + document.documentElement.outerHTML + '\n';
  };
  // Executable scripts only: inert data blocks (application/ld+json, ...) never run (HTML spec).
  W.scriptCount = () => Array.from(document.querySelectorAll('script')).filter((s) => {
    const t = (s.getAttribute('type') || '').trim().toLowerCase().split(';')[0].trim();
    return t === '' || t === 'module' || /^(text|application)\/(x-)?(java|ecma|j|live)script[0-9.]*$/.test(t);
  }).length;
  window.__w2c = W;
  return true;
}
"""


async def install_helpers(page: Page) -> None:
    """Install window.__w2c (idempotent)."""
    await page.evaluate(HELPERS_JS)
