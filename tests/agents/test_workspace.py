"""The agent's workspace: seeded from the template and the episode, read back as an answer, and the file tools
that never leave it, follow no link and open nothing but regular files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runner.agents.workspace import AgentWorkspace, WorkspaceError, diff_snapshots


@pytest.fixture
def workspace(tmp_path: Path) -> AgentWorkspace:
    found = AgentWorkspace(tmp_path / "ws")
    found.seed({"src/App.jsx": "export default function App() { return <p>v1</p>; }\n"})
    return found


def test_the_seed_is_the_template_with_the_episodes_files(workspace: AgentWorkspace) -> None:
    names = workspace.listing()
    assert {"index.html", "package.json", "vite.config.js", "workspace-guard.js", "src/main.jsx",
            "src/App.jsx"} <= set(names)
    assert "node_modules" not in " ".join(names)
    assert workspace.answer().files == {"src/App.jsx": "export default function App() { return <p>v1</p>; }\n"}


def test_the_answer_is_src_with_template_files_only_where_changed(workspace: AgentWorkspace) -> None:
    workspace.write("src/App.jsx", "v2")
    workspace.write("src/parts/Button.jsx", "b")
    workspace.write("src/main.jsx", "changed")  # a reserved file: taken, for the sandbox to refuse
    workspace.write("package.json", "{}")
    workspace.write("README.md", "notes")
    answer = workspace.answer()
    assert answer.files == {"src/App.jsx": "v2", "src/parts/Button.jsx": "b", "src/main.jsx": "changed"}
    assert answer.notes == ["changed outside src/, not part of the answer: README.md, package.json"]


def test_links_special_files_and_non_text_are_left_out_and_said(workspace: AgentWorkspace) -> None:
    root = workspace.root
    os.symlink("/proc/self/environ", root / "src" / "env.js")
    os.symlink("/etc", root / "src" / "etc")
    os.mkfifo(root / "src" / "pipe.js")
    (root / "src" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    answer = workspace.answer()
    assert set(answer.files) == {"src/App.jsx"}
    assert {"src/env.js: a symlink, not taken", "src/etc: a symlink, not taken",
            "src/pipe.js: not a regular file, not taken", "src/logo.png: not UTF-8 text, not taken"} <= set(answer.notes)


def test_a_file_over_the_cap_is_taken_cut_just_past_it(workspace: AgentWorkspace) -> None:
    workspace.write("src/big.js", "x" * 5000)
    assert len(workspace.answer(max_file_bytes=1000).files["src/big.js"]) == 1001


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.txt", "src/../../x", "", "node_modules/react/index.js",
                                  "dist/index.html", "src\\App.jsx", "src/\x00.js"])
def test_the_file_tools_refuse_what_is_not_a_workspace_path(workspace: AgentWorkspace, path: str) -> None:
    for tool in (lambda: workspace.read_bytes(path), lambda: workspace.write(path, "x"),
                 lambda: workspace.delete(path)):
        with pytest.raises(WorkspaceError):
            tool()


def test_no_tool_follows_a_link_left_in_the_workspace(workspace: AgentWorkspace, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    os.symlink(secret, workspace.root / "src" / "secret.js")
    os.symlink(tmp_path, workspace.root / "src" / "up")
    with pytest.raises(WorkspaceError):
        workspace.read_bytes("src/secret.js")
    with pytest.raises(WorkspaceError):
        workspace.read_bytes("src/up/secret.txt")
    with pytest.raises(WorkspaceError):
        workspace.write("src/secret.js", "overwritten")
    with pytest.raises(WorkspaceError):
        workspace.write("src/up/new.txt", "planted")
    with pytest.raises(WorkspaceError):
        workspace.listing("src/up")
    assert secret.read_text() == "SECRET" and not (tmp_path / "new.txt").exists()


def test_write_read_delete_and_list_a_folder(workspace: AgentWorkspace) -> None:
    workspace.write("src/a/b.js", "one")
    assert workspace.read_bytes("src/a/b.js") == b"one"
    assert workspace.read_bytes("src/a/b.js", limit=2) == b"on"
    assert workspace.listing("src/a") == ["src/a/b.js"]
    before = workspace.snapshot()
    workspace.delete("src/a/b.js")
    workspace.write("src/App.jsx", "changed")
    workspace.write("src/new.js", "new")
    assert diff_snapshots(before, workspace.snapshot()) == {
        "added": ["src/new.js"], "deleted": ["src/a/b.js"], "modified": ["src/App.jsx"]}
    with pytest.raises(WorkspaceError, match="a folder"):
        workspace.delete("src/a")


def test_a_static_workspace_holds_the_episodes_files_and_they_are_the_answer(tmp_path: Path) -> None:
    workspace = AgentWorkspace(tmp_path / "page", static=True)
    workspace.seed({"index.html": "<p>hi</p>", "css/site.css": "p{}"})
    workspace.write("notes.txt", "n")
    assert workspace.answer().files == {"index.html": "<p>hi</p>", "css/site.css": "p{}", "notes.txt": "n"}
