"""I-WebGenBench §5 structure on tree-sitter syntax trees, the theme from a background colour, Tables 4 and 5."""

from __future__ import annotations

import pytest

from runner.suites.iwebgen.structure import (
    AppRow, AppStructure, analyze_app, classify_theme, parse_css_rgb, relative_luminance, table4_sidebar,
    table4_state_bins, table5_themes,
)

SIDEBAR_APP = {
    "src/App.tsx": """
import React, { useState, useReducer } from "react";
import Sidebar from "./Sidebar";

type View = "model" | "plot" | "about";

export default function App() {
  const [view, setView] = useState<View>("model");
  const [rate, setRate] = React.useState(0.5);
  const [log, dispatch] = useReducer((s: string[], a: string) => [...s, a], []);
  // useState("in a comment") and "useState(1)" in a string are not declarations
  const label = "onClick sidebar";
  return (
    <div className="layout">
      <Sidebar current={view} onNavigate={setView} />
      <main>
        {view === "model" && <Model rate={rate} onChange={setRate} />}
        {view === "plot" ? <Plot /> : null}
        <button onClick={() => dispatch("reset")}>Reset</button>
      </main>
    </div>
  );
}
""",
    "src/Sidebar.jsx": """
export default function Sidebar({ current, onNavigate }) {
  const items = ["model", "plot", "about"];
  return (
    <nav className={`side-nav ${current}`}>
      {items.map((item) => <button key={item} onClick={() => onNavigate(item)}>{item}</button>)}
    </nav>
  );
}
""",
    "src/legacy.js": """
class Counter extends React.Component {
  state = { count: 0, step: 1 };
  constructor(props) { super(props); this.state = { count: 0 }; }
}
document.getElementById("go").addEventListener("click", () => {});
document.body.addEventListener("keydown", () => {});
document.getElementById("stop").onclick = () => {};
""",
    "src/styles.css": ".sidebar { width: 200px }",
}


def test_counts_state_sidebar_view_switching_and_click_handlers_on_the_tree() -> None:
    structure = analyze_app(SIDEBAR_APP)
    # 3 hooks (useState, React.useState, useReducer) + 2 keys of the state field + 1 of this.state; the comment
    # and the strings that spell useState( are not calls.
    assert structure.state_declarations == 6
    # onClick x2 (Reset, each nav item), addEventListener("click"), .onclick =; keydown is not a click.
    assert structure.click_handlers == 4
    assert structure.has_sidebar  # className token "side-nav"
    assert structure.view_switching and structure.view_state == ["view"]  # rate is compared nowhere
    assert structure.parsed_files == ["src/App.tsx", "src/Sidebar.jsx", "src/legacy.js"]
    assert structure.files_with_errors == []


def test_a_selecting_state_without_a_navigation_setter_is_not_view_switching() -> None:
    app = {"src/App.jsx": """
export default function App() {
  const [tab, setTab] = useState("a");
  useEffect(() => { setTimeout(() => setTab("b"), 1000); }, []);
  return <aside>{tab === "a" ? <A /> : <B />}</aside>;
}
"""}
    structure = analyze_app(app)
    assert structure.has_sidebar  # <aside>
    assert not structure.view_switching  # setTab is reached from no event attribute
    switched = analyze_app({"src/App.jsx": app["src/App.jsx"].replace("<aside>", "<aside onClick={() => setTab('b')}>")})
    assert switched.view_switching and switched.click_handlers == 1


def test_switch_and_lookup_select_views_and_plain_layouts_have_no_sidebar() -> None:
    app = {"src/App.jsx": """
function Body({ page }) { switch (page) { case "a": return <A />; default: return <B />; } }
export default function App() {
  const [page, setPage] = useState("a");
  const [mode, setMode] = useState("x");
  const panels = { x: <X />, y: <Y /> };
  return <div className="main-panel"><select onChange={(e) => setMode(e.target.value)} />{panels[mode]}
    <button onClick={() => setPage("b")}>next</button><Body page={page} /></div>;
}
"""}
    structure = analyze_app(app)
    assert structure.view_state == ["mode", "page"]
    assert not structure.has_sidebar


def test_syntax_errors_are_reported_not_fatal() -> None:
    structure = analyze_app({"src/App.jsx": "export default function App() { const [a, b] = useState(; return <div onClick={b}>"})
    assert structure.files_with_errors == ["src/App.jsx"]
    assert structure.click_handlers == 1


def test_theme_from_the_background_luminance() -> None:
    assert relative_luminance((255, 255, 255)) == pytest.approx(1.0)
    assert relative_luminance((0, 0, 0)) == 0.0
    # sRGB 119 -> ((119/255 + 0.055) / 1.055) ** 2.4, computed by hand: 0.18447
    assert relative_luminance((119, 119, 119)) == pytest.approx(0.18447, abs=1e-4)
    assert classify_theme(parse_css_rgb("rgb(255, 255, 255)")) == "light"
    assert classify_theme(parse_css_rgb("rgb(15, 23, 42)")) == "dark"
    assert classify_theme((119, 119, 119)) == "light" and classify_theme((110, 110, 110)) == "dark"
    assert classify_theme(parse_css_rgb("rgba(0, 0, 0, 0)")) == "light"  # transparent: the white canvas shows
    assert classify_theme((0, 0, 0), threshold=-1.0) == "light"  # the threshold is an option
    with pytest.raises(ValueError, match="'#fff'"):
        parse_css_rgb("#fff")


def row(app_id: str, model: str, states: int, sidebar: bool, clicks: int, switching: bool, score: float | None,
        ir: float | None, theme: str | None, theme_score: float | None) -> AppRow:
    structure = AppStructure(state_declarations=states, has_sidebar=sidebar, click_handlers=clicks,
                             view_switching=switching)
    return AppRow(app_id, model, structure, score=score, interaction_rate=ir, theme=theme, theme_score=theme_score)


def test_tables_4_and_5() -> None:
    rows = [
        row("a", "m1", 1, False, 2, False, 20.0, 0.1, "light", 20.0),
        row("b", "m1", 5, True, 10, True, 40.0, 0.6, "light", 25.0),
        row("c", "m1", 8, False, 6, True, None, 0.4, "dark", 22.0),  # unassessed score
        row("d", "m2", 25, False, 7, False, 30.0, None, None, None),  # theme not captured
    ]
    bins = {entry["state_variables"]: entry for entry in table4_state_bins(rows)}
    assert list(bins) == ["0-2", "3-8", "9-14", "15-20", ">20"]
    assert bins["0-2"] == {"state_variables": "0-2", "apps": 1, "scored_apps": 1, "mean_score": 20.0}
    assert bins["3-8"]["apps"] == 2 and bins["3-8"]["mean_score"] == 40.0  # the unassessed app is not a 0
    assert bins["9-14"]["mean_score"] is None and bins[">20"]["apps"] == 1
    sidebar, plain = table4_sidebar(rows)
    assert sidebar == {"layout": "sidebar", "apps": 1, "share": 0.25, "mean_score": 40.0, "mean_click_handlers": 10,
                       "mean_interaction_rate": 0.6, "view_switching_share": 1.0}
    assert plain["apps"] == 3 and plain["mean_score"] == 25.0 and plain["mean_click_handlers"] == 5
    assert plain["mean_interaction_rate"] == pytest.approx(0.25) and plain["view_switching_share"] == pytest.approx(1 / 3)
    m1, m2 = table5_themes(rows)
    assert m1 == {"model": "m1", "apps": 3, "light_share": pytest.approx(2 / 3), "dark_share": pytest.approx(1 / 3),
                  "mean_score_light": 22.5, "mean_score_dark": 22.0}
    assert m2["apps"] == 0 and m2["light_share"] is None


def test_a_state_that_only_shows_or_hides_one_element_is_not_a_view() -> None:
    app = {"src/App.jsx": """
export default function App() {
  const [overlay, setOverlay] = useState("none");
  const [view, setView] = useState("direct");
  return <div><select onChange={(e) => setOverlay(e.target.value)} />
    <button onClick={() => setView("lb")}>{view === "direct" ? "Show LB" : "Show direct"}</button>
    {overlay !== "none" && <polyline />}{view === "direct" && <g />}</div>;
}
"""}
    assert analyze_app(app).view_state == []  # one guarded element each; the ternary yields text, not JSX
    both = app["src/App.jsx"].replace('{view === "direct" && <g />}', '{view === "direct" && <g />}{view === "lb" && <h />}')
    assert analyze_app({"src/App.jsx": both}).view_state == ["view"]
