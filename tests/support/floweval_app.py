"""A FlowEval-style generated app (Appendix A: src/App.jsx exporting `App`, Tailwind classes, a FontAwesome
icon) and what its build must contain, shared by the local and the Docker sandbox tests."""

from __future__ import annotations

import re
from pathlib import Path

from runner.sandbox.web_template import ensure_template_modules

APP = """import { useState } from "react";
import { FontAwesomeIcon } from "@fortawesome/react-fontawesome";
import { faCheck } from "@fortawesome/free-solid-svg-icons";

export default function App() {
  const [done, setDone] = useState(false);
  return (
    <main className="min-h-screen bg-blue-500 p-8">
      <button className="rounded-lg px-4 py-2 text-white" onClick={() => setDone(!done)}>
        <FontAwesomeIcon icon={faCheck} /> {done ? "Done" : "Mark done"}
      </button>
    </main>
  );
}
"""
FILES = {"src/App.jsx": APP}


def icon_path(name: str) -> str:
    """The SVG path data of a free-solid icon, read from the template's installed package."""
    source = ensure_template_modules(template="floweval") / "@fortawesome" / "free-solid-svg-icons" / f"{name}.js"
    match = re.search(r"var svgPathData = '([^']+)'", source.read_text())
    assert match, source
    return match.group(1)


def assert_tailwind_and_icon_built(dist: Path) -> None:
    """The used utilities are generated and unused ones purged (content globs reach src/); the icon is bundled."""
    css = "".join(p.read_text() for p in (dist / "assets").glob("*.css"))
    script = "".join(p.read_text() for p in (dist / "assets").glob("*.js"))
    assert ".bg-blue-500{" in css and ".rounded-lg{" in css, css[:500]
    assert ".bg-red-500" not in css and ".grid-cols-7" not in css, "unused utilities are purged"
    assert "@tailwind" not in css, "the directives are expanded"
    assert icon_path("faCheck") in script
    assert icon_path("faXmark") not in script, "only the imported icon is bundled"
    assert "svg-inline--fa" in script  # react-fontawesome renders through fontawesome-svg-core
