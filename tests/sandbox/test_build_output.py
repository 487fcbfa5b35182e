"""A build's workspace keeps regular files and folders only (runner/sandbox/build_output.py)."""

from __future__ import annotations

import os
from pathlib import Path

from runner.sandbox.build_output import clean_workspace, describe_removed, remove_links


def test_links_and_special_files_are_removed_and_named_regular_files_stay(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    dist = workspace / "dist" / "assets"
    dist.mkdir(parents=True)
    (dist / "app.js").write_text("ok")
    (workspace / "dist" / "index.html").write_text("<p>ok</p>")
    (dist / "env").symlink_to("/proc/self/environ")
    (workspace / "dist" / "root").symlink_to("/", target_is_directory=True)
    (workspace / "dist" / "up").symlink_to("../../..")
    (workspace / "dist" / "inside").symlink_to("index.html")  # even one that stays inside: evidence is files
    os.mkfifo(workspace / "dist" / "pipe")
    locked = workspace / "dist" / "locked"
    locked.mkdir()
    (locked / "passwd").symlink_to("/etc/passwd")
    locked.chmod(0o500)  # the build took its write permission away
    removed = remove_links(workspace)
    assert sorted(removed) == sorted(["dist/assets/env -> /proc/self/environ", "dist/root -> /", "dist/up -> ../../..",
                                      "dist/inside -> index.html", "dist/pipe (fifo)",
                                      "dist/locked/passwd -> /etc/passwd"])
    left = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*"))
    assert left == ["dist", "dist/assets", "dist/assets/app.js", "dist/index.html", "dist/locked"]
    assert Path("/etc/passwd").is_file()  # the link went, not what it named
    assert "removed 6 links or special files" in describe_removed(removed) and describe_removed([]) == ""


def test_the_pipelines_own_node_modules_link_goes_unlisted_a_build_made_one_is_named(tmp_path: Path) -> None:
    modules = tmp_path / "template_modules"
    modules.mkdir()
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for workspace, target in ((ours, modules), (theirs, Path("/etc"))):
        workspace.mkdir()
        (workspace / "node_modules").symlink_to(target, target_is_directory=True)
    assert clean_workspace(ours, modules) == [] and not (ours / "node_modules").exists()
    assert clean_workspace(theirs, modules) == ["node_modules -> /etc"]
    assert list(modules.parent.glob("template_modules")) and Path("/etc").is_dir()
