"""I-WebGenBench §5 structural analysis of generated apps, on tree-sitter syntax trees (never on the raw text).

Per app (its source files): reactive state declarations, sidebar layout, explicit view switching and click
handlers, read from the TSX / TypeScript / JavaScript grammars; light or dark theme from the rendered page's
computed background colour; and the paper's Table 4 (score by state count; sidebar vs. no sidebar) and Table 5
(theme distribution and scores per model).

Definitions on the tree (I-WebGenBench §5 describes them in words; these make them exact):
- reactive state declaration: a call of a state hook (`useState`, `useReducer`, also as `React.useState`), or
  one key of a class component's `state` object (`state = {...}` field, `this.state = {...}`);
- sidebar layout: a JSX `<aside>`, a JSX component whose name contains "sidebar" / "sidenav", or a JSX
  `className` / `id` string with such a class token ("sidebar", "side-bar", "sidenav", "side-nav");
- explicit view switching (§5: "a dedicated state variable controls the active panel and each navigation item
  triggers a transition"): a `[view, setView] = useState(...)` pair whose value selects among at least two
  rendered alternatives (the condition of a `?:` with JSX on both sides; JSX guarded by `&&` or a one-sided
  `?:` for two or more compared values; a `switch` with two or more cases returning JSX; the key of a lookup inside JSX) and whose
  setter is reached from a JSX event attribute (`on*={...}`: a navigation item calls it or receives it as its
  callback). A state that only shows or hides one element is not a view;
- click handler: a JSX `onClick` attribute, an `addEventListener("click", ...)` call, or an `.onclick =`
  assignment.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from statistics import mean
from typing import Any, Literal

import tree_sitter
import tree_sitter_javascript
import tree_sitter_typescript

__all__ = [
    "AppStructure", "AppRow", "analyze_app", "classify_theme", "relative_luminance", "parse_css_rgb",
    "table4_state_bins", "table4_sidebar", "table5_themes", "STATE_BINS",
]

STATE_HOOKS = ("useState", "useReducer")
SIDEBAR_TOKENS = ("sidebar", "side-bar", "sidenav", "side-nav")
SIDEBAR_NAMES = ("sidebar", "sidenav")
# Table 4(a) bins of the state count. The paper names 0-2, 3-8 and "more than 20" (§5); the middle edges are ours.
STATE_BINS: tuple[tuple[int, int | None], ...] = ((0, 2), (3, 8), (9, 14), (15, 20), (21, None))
# Light vs. dark: a background of relative luminance above this is light. The paper gives no threshold; this is
# the luminance whose WCAG 2.x contrast ratio with black equals that with white (sqrt(1.05 * 0.05) - 0.05).
DARK_LUMINANCE_THRESHOLD = (1.05 * 0.05) ** 0.5 - 0.05

Theme = Literal["light", "dark"]
_JSX_TAGS = ("jsx_element", "jsx_self_closing_element", "jsx_fragment")


@cache
def _parser(grammar: str) -> tree_sitter.Parser:
    language = {
        "tsx": tree_sitter_typescript.language_tsx,
        "typescript": tree_sitter_typescript.language_typescript,
        "javascript": tree_sitter_javascript.language,
    }[grammar]()
    return tree_sitter.Parser(tree_sitter.Language(language))


def grammar_for(path: str) -> str | None:
    """The grammar a source file is parsed with; None: not a script (styles, HTML, JSON)."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if suffix == "tsx":
        return "tsx"
    if suffix in ("ts", "mts", "cts"):
        return "typescript"
    if suffix in ("js", "jsx", "mjs", "cjs"):
        return "javascript"  # its grammar includes JSX
    return None


@dataclass
class AppStructure:
    """One app's §5 structure."""

    state_declarations: int = 0
    has_sidebar: bool = False
    view_switching: bool = False
    click_handlers: int = 0
    view_state: list[str] = field(default_factory=list)  # the state variables that switch views
    parsed_files: list[str] = field(default_factory=list)
    files_with_errors: list[str] = field(default_factory=list)  # the parser recovered from syntax errors

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


def _walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    cursor = node.walk()
    while True:
        yield cursor.node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def _text(node: tree_sitter.Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _contains_jsx(node: tree_sitter.Node | None) -> bool:
    return node is not None and any(n.type in _JSX_TAGS for n in _walk(node))


def _identifiers(node: tree_sitter.Node | None) -> set[str]:
    return {_text(n) for n in _walk(node) if n.type == "identifier"} if node is not None else set()


def _callee_name(call: tree_sitter.Node) -> str:
    """`useState` for `useState(...)` and `React.useState(...)`."""
    function = call.child_by_field_name("function")
    if function is None:
        return ""
    if function.type == "member_expression":
        return _text(function.child_by_field_name("property"))
    return _text(function)


def _string_value(node: tree_sitter.Node | None) -> str | None:
    """A string literal's content (fragments joined); None for anything else."""
    if node is None or node.type != "string":
        return None
    return "".join(_text(child) for child in node.named_children if child.type in ("string_fragment", "escape_sequence"))


def _attribute(node: tree_sitter.Node) -> tuple[str, tree_sitter.Node | None]:
    """A jsx_attribute's name and its value node (None: a bare attribute)."""
    children = node.named_children
    name = _text(children[0]) if children else ""
    return name, children[1] if len(children) > 1 else None


def _class_tokens(value: tree_sitter.Node | None) -> list[str]:
    """The whitespace-separated tokens of every string in an attribute's value (literals, template parts)."""
    if value is None:
        return []
    parts = [_text(n) for n in _walk(value) if n.type in ("string_fragment",)]
    return [token.lower() for part in parts for token in part.split()]


@dataclass
class _FileFacts:
    state_declarations: int = 0
    sidebar: bool = False
    click_handlers: int = 0
    state_pairs: dict[str, str] = field(default_factory=dict)  # value variable -> its setter
    selecting: set[str] = field(default_factory=set)  # identifiers that select what is rendered
    guarded: dict[str, set[str]] = field(default_factory=dict)  # identifier -> values guarding JSX with `&&`
    event_reached: set[str] = field(default_factory=set)  # identifiers used inside a JSX on* attribute


def _file_facts(root: tree_sitter.Node) -> _FileFacts:
    facts = _FileFacts()
    for node in _walk(root):
        kind = node.type
        if kind == "call_expression":
            callee = _callee_name(node)
            if callee in STATE_HOOKS:
                facts.state_declarations += 1
                declarator = node.parent
                if declarator is not None and declarator.type == "variable_declarator" and callee == "useState":
                    pattern = declarator.child_by_field_name("name")
                    if pattern is not None and pattern.type == "array_pattern":
                        names = [_text(n) for n in pattern.named_children if n.type == "identifier"]
                        if len(names) == 2:
                            facts.state_pairs[names[0]] = names[1]
            elif callee == "addEventListener":
                arguments = node.child_by_field_name("arguments")
                first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
                if _string_value(first) == "click":
                    facts.click_handlers += 1
        elif kind in ("field_definition", "public_field_definition"):
            name = node.child_by_field_name("property") or node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            if _text(name) == "state" and value is not None and value.type == "object":
                facts.state_declarations += len(value.named_children)
        elif kind == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and left.type == "member_expression":
                target = _text(left.child_by_field_name("object"))
                prop = _text(left.child_by_field_name("property"))
                if target == "this" and prop == "state" and right is not None and right.type == "object":
                    facts.state_declarations += len(right.named_children)
                elif prop.lower() == "onclick":
                    facts.click_handlers += 1
        elif kind == "jsx_attribute":
            name, value = _attribute(node)
            if name == "onClick":
                facts.click_handlers += 1
            if name.startswith("on") and value is not None:
                facts.event_reached |= _identifiers(value)
            if name in ("className", "class", "id"):
                tokens = _class_tokens(value)
                if any(marker in token for token in tokens for marker in SIDEBAR_TOKENS):
                    facts.sidebar = True
        elif kind in ("jsx_opening_element", "jsx_self_closing_element"):
            tag = _text(node.child_by_field_name("name")).lower()
            if tag == "aside" or any(marker in tag for marker in SIDEBAR_NAMES):
                facts.sidebar = True
        elif kind == "ternary_expression":
            # Two rendered alternatives (`view === "a" ? <A /> : <B />`) select between views; one (`: null`)
            # guards a single element, like `&&`.
            compared = _compared(node.child_by_field_name("condition"))
            sides = [_contains_jsx(node.child_by_field_name(name)) for name in ("consequence", "alternative")]
            if all(sides):
                facts.selecting |= {name for name, _ in compared}
            elif any(sides):
                for name, value in compared:
                    facts.guarded.setdefault(name, set()).add(value)
        elif kind == "binary_expression" and _text(node.child_by_field_name("operator")) == "&&":
            # One guarded element each: a view needs at least two values of its state shown this way.
            if _contains_jsx(node.child_by_field_name("right")):
                for name, value in _compared(node.child_by_field_name("left")):
                    facts.guarded.setdefault(name, set()).add(value)
        elif kind == "switch_statement":
            body = node.child_by_field_name("body")
            cases = [c for c in (body.named_children if body is not None else []) if _contains_jsx(c)]
            if len(cases) >= 2:
                facts.selecting |= _identifiers(node.child_by_field_name("value"))
        elif kind == "subscript_expression":
            if any(parent.type == "jsx_expression" for parent in _ancestors(node)):
                facts.selecting |= _identifiers(node.child_by_field_name("index"))
    return facts


def _ancestors(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _compared(condition: tree_sitter.Node | None) -> set[tuple[str, str]]:
    """(identifier, the value it is compared with) for each (in)equality in a condition (`view === "plot"`)."""
    found: set[tuple[str, str]] = set()
    if condition is None:
        return found
    for node in _walk(condition):
        if node.type == "binary_expression" and _text(node.child_by_field_name("operator")) in ("===", "==", "!==", "!="):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            for side, other in ((left, right), (right, left)):
                if side is not None and side.type == "identifier":
                    found.add((_text(side), _text(other)))
    return found


def analyze_app(files: Mapping[str, str]) -> AppStructure:
    """The §5 structure of one app from its source files (path -> text); non-script files are skipped."""
    structure = AppStructure()
    selecting: set[str] = set()
    reached: set[str] = set()
    guarded: dict[str, set[str]] = {}
    pairs: dict[str, str] = {}
    for path in sorted(files):
        grammar = grammar_for(path)
        if grammar is None:
            continue
        tree = _parser(grammar).parse(files[path].encode("utf-8"))
        structure.parsed_files.append(path)
        if tree.root_node.has_error:
            structure.files_with_errors.append(path)
        facts = _file_facts(tree.root_node)
        structure.state_declarations += facts.state_declarations
        structure.click_handlers += facts.click_handlers
        structure.has_sidebar |= facts.sidebar
        selecting |= facts.selecting
        for name, values in facts.guarded.items():
            guarded.setdefault(name, set()).update(values)
        reached |= facts.event_reached
        pairs.update(facts.state_pairs)
    selecting |= {name for name, values in guarded.items() if len(values) >= 2}
    structure.view_state = sorted(value for value, setter in pairs.items() if value in selecting and setter in reached)
    structure.view_switching = bool(structure.view_state)
    return structure


# -- theme -----------------------------------------------------------------------------------------------------


def parse_css_rgb(value: str) -> tuple[float, float, float, float]:
    """A computed CSS colour ("rgb(r, g, b)" / "rgba(r, g, b, a)", as getComputedStyle gives it) -> (r, g, b, a)."""
    text = value.strip().lower()
    head, _, rest = text.partition("(")
    if head not in ("rgb", "rgba") or not rest.endswith(")"):
        raise ValueError(f"background colour {value!r}: expected rgb(...) or rgba(...) as getComputedStyle returns")
    parts = [part.strip() for part in rest[:-1].replace("/", ",").replace(",", " ").split()]
    try:
        numbers = [float(part) for part in parts]
    except ValueError:
        raise ValueError(f"background colour {value!r}: non-numeric component") from None
    if len(numbers) not in (3, 4):
        raise ValueError(f"background colour {value!r}: expected 3 or 4 components")
    r, g, b = numbers[:3]
    return r, g, b, numbers[3] if len(numbers) == 4 else 1.0


def relative_luminance(rgb: Sequence[float]) -> float:
    """WCAG 2.x relative luminance of an sRGB colour with 0-255 channels."""
    def linear(channel: float) -> float:
        c = max(0.0, min(255.0, channel)) / 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def classify_theme(rgba: Sequence[float], *, threshold: float = DARK_LUMINANCE_THRESHOLD) -> Theme:
    """Light or dark from the page's computed background (r, g, b[, a]); a translucent background is composited
    over the white canvas a browser paints under an unstyled page (I-WebGenBench §5: the theme of the rendered
    page, not its class names)."""
    r, g, b = rgba[:3]
    alpha = rgba[3] if len(rgba) > 3 else 1.0
    alpha = max(0.0, min(1.0, float(alpha)))
    composited = [alpha * c + (1 - alpha) * 255.0 for c in (r, g, b)]
    return "light" if relative_luminance(composited) > threshold else "dark"


# -- tables ----------------------------------------------------------------------------------------------------


@dataclass
class AppRow:
    """One app's row for the tables: its structure and the numbers the suite measured (None: unassessed)."""

    app_id: str
    model: str
    structure: AppStructure
    score: float | None = None  # the 100-point score (B.1)
    interaction_rate: float | None = None  # IR (§3.2)
    theme: Theme | None = None  # classify_theme of the captured background
    theme_score: float | None = None  # Table 5's score, on its 30-point scale


def _mean_or_none(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return mean(present) if present else None


def _bin_label(low: int, high: int | None) -> str:
    return f">{low - 1}" if high is None else f"{low}-{high}"


def table4_state_bins(rows: Sequence[AppRow], *, bins: Sequence[tuple[int, int | None]] = STATE_BINS) -> list[dict[str, Any]]:
    """Table 4(a): apps and average score per bin of reactive state declarations."""
    out = []
    for low, high in bins:
        members = [r for r in rows if r.structure.state_declarations >= low
                   and (high is None or r.structure.state_declarations <= high)]
        scores = [r.score for r in members if r.score is not None]
        out.append({"state_variables": _bin_label(low, high), "apps": len(members), "scored_apps": len(scores),
                    "mean_score": mean(scores) if scores else None})
    return out


def table4_sidebar(rows: Sequence[AppRow]) -> list[dict[str, Any]]:
    """Table 4(b): sidebar vs. no sidebar: share, mean score, click handlers, IR, view-switching share."""
    out = []
    for label, flag in (("sidebar", True), ("no sidebar", False)):
        members = [r for r in rows if r.structure.has_sidebar is flag]
        out.append({
            "layout": label,
            "apps": len(members),
            "share": len(members) / len(rows) if rows else None,
            "mean_score": _mean_or_none(r.score for r in members),
            "mean_click_handlers": mean(r.structure.click_handlers for r in members) if members else None,
            "mean_interaction_rate": _mean_or_none(r.interaction_rate for r in members),
            "view_switching_share": (sum(r.structure.view_switching for r in members) / len(members)
                                     if members else None),
        })
    return out


def table5_themes(rows: Sequence[AppRow]) -> list[dict[str, Any]]:
    """Table 5: per model, the share of light and dark apps (of those whose theme was captured) and the mean
    30-point score of each."""
    out = []
    for model in sorted({r.model for r in rows}):
        members = [r for r in rows if r.model == model and r.theme is not None]
        light = [r for r in members if r.theme == "light"]
        dark = [r for r in members if r.theme == "dark"]
        out.append({
            "model": model,
            "apps": len(members),
            "light_share": len(light) / len(members) if members else None,
            "dark_share": len(dark) / len(members) if members else None,
            "mean_score_light": _mean_or_none(r.theme_score for r in light),
            "mean_score_dark": _mean_or_none(r.theme_score for r in dark),
        })
    return out
