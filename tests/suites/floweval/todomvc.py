"""TodoMVC as a FlowEval case: public implementations of one specification (the npm package `todomvc@0.1.1`, MIT,
fetched by scripts/fetch-todomvc.sh, never committed), the VanillaJS one as the static reference site
(tasks/floweval/todomvc) and, as analogs, two other implementations, two broken copies of the reference and a blank
page. Shared by the tests and bench/floweval_case.py (docs/floweval-metrics.md)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SITES = REPO / "tasks" / "floweval" / "todomvc"
FETCH = REPO / "scripts" / "fetch-todomvc.sh"
CORRECT = ("mithril", "angularjs")  # other implementations of the specification
BROKEN = ("no-filter-links", "no-dblclick-edit")  # copies of the reference with one feature removed
BLANK = "blank"
ANALOGS = (*CORRECT, *BROKEN, BLANK)
FOOTER = "#info"  # the specification's credits footer (page chrome: differs per implementation)


class FetchFailed(RuntimeError):
    pass


def fetch() -> Path:
    """The fetched package folder (.cache/todomvc/<version>); the reference's static/ filled too."""
    done = subprocess.run(["bash", str(FETCH)], cwd=REPO, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise FetchFailed(f"scripts/fetch-todomvc.sh failed (npm registry needed once): {done.stderr[-2000:]}")
    return REPO / done.stdout.strip().splitlines()[-1]


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    if old not in text:
        raise AssertionError(f"{path}: {old!r} not found: the fixture no longer matches the package")
    path.write_text(text.replace(old, new))


def make_analogs(package: Path, into: Path) -> dict[str, Path]:
    """Every analog as a static folder under `into`, by name (ANALOGS)."""
    into.mkdir(parents=True, exist_ok=True)
    examples = package / "examples"
    folders = {}
    for name in CORRECT:
        folders[name] = into / name
        shutil.copytree(examples / name, folders[name], dirs_exist_ok=True)
    reference = examples / "vanillajs"
    folders["no-filter-links"] = into / "no-filter-links"
    shutil.copytree(reference, folders["no-filter-links"], dirs_exist_ok=True)
    _replace(folders["no-filter-links"] / "index.html", """				<ul id="filters">
					<li>
						<a href="#/" class="selected">All</a>
					</li>
					<li>
						<a href="#/active">Active</a>
					</li>
					<li>
						<a href="#/completed">Completed</a>
					</li>
				</ul>
""", "")
    _replace(folders["no-filter-links"] / "js" / "view.js", "qs('#filters .selected').className = '';",
             "if (qs('#filters .selected')) { qs('#filters .selected').className = ''; }")
    _replace(folders["no-filter-links"] / "js" / "view.js", "qs('#filters [href=\"#/' + currentPage + '\"]').className = 'selected';",
             "if (qs('#filters [href=\"#/' + currentPage + '\"]')) { qs('#filters [href=\"#/' + currentPage + '\"]').className = 'selected'; }")
    folders["no-dblclick-edit"] = into / "no-dblclick-edit"
    shutil.copytree(reference, folders["no-dblclick-edit"], dirs_exist_ok=True)
    _replace(folders["no-dblclick-edit"] / "js" / "view.js", "$live('#todo-list li label', 'dblclick'",
             "$live('#todo-list li label', 'no-such-event'")
    folders[BLANK] = into / BLANK
    folders[BLANK].mkdir(exist_ok=True)
    (folders[BLANK] / "index.html").write_text("<!doctype html><html><head><title>Todos</title></head><body></body></html>\n")
    return folders
