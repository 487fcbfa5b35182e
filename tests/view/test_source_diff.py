"""The source diff between two turns' src/ folders: typed lines with line numbers, files added and removed."""

from __future__ import annotations

from pathlib import Path

from runner.view import source_diff
from runner.view.source_diff import diff_text, diff_trees, read_tree

OLD_APP = "import a\nfunction App() {\n  return <p>Count</p>;\n}\nexport default App;\n"
NEW_APP = "import a\nfunction App() {\n  return <p>Count</p>;\n  // reset\n}\nexport default App;\n"


def test_an_added_line_is_typed_and_numbered_in_the_new_file() -> None:
    lines, added, removed, cut = diff_text(OLD_APP, NEW_APP)
    assert (added, removed, cut) == (1, 0, 0)
    assert lines[0].kind == "hunk" and lines[0].text.startswith("@@ -1,5 +1,6 @@")
    [plus] = [line for line in lines if line.kind == "add"]
    assert (plus.text, plus.old, plus.new) == ("  // reset", None, 4)
    context = [line for line in lines if line.kind == "ctx"]
    assert [(line.old, line.new) for line in context] == [(1, 1), (2, 2), (3, 3), (4, 5), (5, 6)]


def test_a_changed_line_is_one_removal_and_one_addition() -> None:
    lines, added, removed, _ = diff_text("a\nb\nc\n", "a\nB\nc\n", context=0)
    assert (added, removed) == (1, 1)
    assert [(line.kind, line.text, line.old, line.new) for line in lines[1:]] == [("del", "b", 2, None), ("add", "B", None, 2)]


def test_lines_that_look_like_diff_headers_are_content_not_headers() -> None:
    lines, added, removed, _ = diff_text("x\n-- sql comment\n", "x\n++ counter\n")
    assert [line.text for line in lines if line.kind == "del"] == ["-- sql comment"]
    assert [line.text for line in lines if line.kind == "add"] == ["++ counter"]


def test_trees_list_added_removed_changed_and_unchanged_files() -> None:
    old = {"src/App.jsx": OLD_APP, "src/old.css": "p {}\n", "src/same.js": "x\n"}
    new = {"src/App.jsx": NEW_APP, "src/new.css": "b {}\n", "src/same.js": "x\n"}
    files = {f.name: f for f in diff_trees(old, new)}
    assert {name: f.status for name, f in files.items()} == {
        "src/App.jsx": "changed", "src/new.css": "added", "src/old.css": "removed", "src/same.js": "unchanged"}
    assert files["src/new.css"].added == 1 and files["src/new.css"].text == "b {}\n"
    assert files["src/old.css"].removed == 1 and files["src/old.css"].text == ""
    assert files["src/same.js"].lines == [] and files["src/App.jsx"].text == NEW_APP


def test_huge_files_are_listed_not_diffed_and_long_diffs_are_cut(monkeypatch) -> None:
    monkeypatch.setattr(source_diff, "MAX_FILE_CHARS", 100)
    [big] = diff_trees({"a.js": "x"}, {"a.js": "y" * 200})
    assert big.too_large and big.lines == []
    monkeypatch.setattr(source_diff, "MAX_DIFF_LINES", 5)
    lines, added, _, cut = diff_text("", "".join(f"{n}\n" for n in range(20)))
    assert len(lines) == 5 and added == 20 and cut == 16


def test_read_tree_reads_relative_paths_and_skips_symlinks(tmp_path: Path) -> None:
    assert read_tree(tmp_path / "missing") is None
    (tmp_path / "src" / "lib").mkdir(parents=True)
    (tmp_path / "src" / "App.jsx").write_text("app")
    (tmp_path / "src" / "lib" / "util.js").write_text("util")
    (tmp_path / "secret").write_text("no")
    (tmp_path / "src" / "link.js").symlink_to(tmp_path / "secret")
    assert read_tree(tmp_path / "src") == {"App.jsx": "app", "lib/util.js": "util"}
