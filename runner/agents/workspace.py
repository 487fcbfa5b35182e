"""The workspace an agent works in, and the answer read back from it.

A vite suite's workspace starts as the suite's web template (its package.json, Vite config, entry files) with the
episode's files under src/; a static suite's (MT-Web2Code's pages) holds the episode's files alone. When the agent
stops, the answer is what a model's answer would hold: a vite workspace's files under src/ (the template's own
src/ files only where the agent changed them: the sandbox refuses changed reserved files, as it refuses them in
any answer), a static workspace's every file. Changes elsewhere (package.json, a README) are not part of any
answer: they are listed in the slot's agent.json, never taken.

The agent (a command in its sandbox) may leave anything here: symlinks, fifos, huge or binary files. Nothing is
followed or opened unless it is a regular file inside the folder (O_NOFOLLOW at every step), reads are capped,
and what is left out is said.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from runner.sandbox.web_template import WORKSPACE_GUARD, get_template

__all__ = ["AgentWorkspace", "WorkspaceAnswer", "WorkspaceError", "diff_snapshots"]

SKIPPED_DIRS = frozenset({"node_modules", "dist", ".git"})  # the template's install, build output, a CLI's repo
MAX_ENTRIES = 5000  # a workspace walked for an answer or a snapshot stops here (an agent may write millions)
READ_CAP_BYTES = 4 * 1024 * 1024  # a file read back is cut past this (the sandbox's own cap is far below)
ANSWER_CAP_BYTES = 64 * 1024 * 1024  # an answer read back stops here (the sandbox refuses one over 32 MiB anyway)


class WorkspaceError(ValueError):
    """A path an agent's tool may not touch (outside the workspace, through a link, not a regular file)."""


@dataclass
class WorkspaceAnswer:
    files: dict[str, str]
    notes: list[str] = field(default_factory=list)  # what was left out of the answer, and why


def diff_snapshots(before: dict[str, str], after: dict[str, str]) -> dict[str, list[str]]:
    """Files added, modified and deleted between two snapshots."""
    return {"added": sorted(set(after) - set(before)), "deleted": sorted(set(before) - set(after)),
            "modified": sorted(path for path in set(before) & set(after) if before[path] != after[path])}


class AgentWorkspace:
    """One slot's agent workspace at `root`; `template` None with `static` False is the default template."""

    def __init__(self, root: Path, *, template: str | None = None, static: bool = False) -> None:
        self.root = Path(root)
        self.static = static
        self.template = None if static else get_template(template)

    # -- seeding ------------------------------------------------------------------------------------

    def seed(self, files: dict[str, str]) -> None:
        """A fresh workspace: the template (vite) and the episode's files."""
        if self.root.exists():
            shutil.rmtree(self.root)
        if self.template is not None:
            shutil.copytree(self.template.directory, self.root,
                            ignore=shutil.ignore_patterns("node_modules", "dist"))
            shutil.copy2(WORKSPACE_GUARD, self.root / WORKSPACE_GUARD.name)
        else:
            self.root.mkdir(parents=True)
        for name, content in files.items():
            self.write(name, content)

    # -- reading back -------------------------------------------------------------------------------

    def _walk(self) -> tuple[list[str], list[str]]:
        """Regular files (relative POSIX paths) and notes on what the walk passed over."""
        found: list[str] = []
        notes: list[str] = []
        pending = [""]
        seen = 0
        while pending:
            folder = pending.pop()
            try:
                entries = sorted(os.scandir(self.root / folder) if folder else os.scandir(self.root),
                                 key=lambda entry: entry.name)
            except OSError as error:
                notes.append(f"{folder or '.'}: not read ({error.strerror or error})")
                continue
            for entry in entries:
                seen += 1
                if seen > MAX_ENTRIES:
                    notes.append(f"the workspace holds over {MAX_ENTRIES} entries: the rest were not read")
                    return found, notes
                relative = f"{folder}/{entry.name}" if folder else entry.name
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    if not (folder == "" and entry.name in SKIPPED_DIRS):
                        pending.append(relative)
                elif stat.S_ISREG(mode):
                    found.append(relative)
                elif not (folder == "" and entry.name in SKIPPED_DIRS):
                    kind = "a symlink" if stat.S_ISLNK(mode) else "not a regular file"
                    notes.append(f"{relative}: {kind}, not taken")
        return sorted(found), notes

    def _template_text(self, relative: str) -> bytes | None:
        if self.template is None:
            return None
        path = self.template.directory / relative
        if relative == WORKSPACE_GUARD.name:
            path = WORKSPACE_GUARD
        return path.read_bytes() if path.is_file() else None

    def answer(self, *, max_file_bytes: int = READ_CAP_BYTES) -> WorkspaceAnswer:
        """The workspace's answer (module docstring); a file over `max_file_bytes` is taken cut to one byte past
        it, so the sandbox refuses it for its size. Files outside the answer are read only to compare them with
        the template's own, and the whole read stops at ANSWER_CAP_BYTES."""
        paths, notes = self._walk()
        files: dict[str, str] = {}
        outside: list[str] = []
        read = 0
        for relative in paths:
            in_answer = self.static or relative.startswith("src/")
            template = self._template_text(relative)
            if not in_answer and template is None:
                outside.append(relative)  # no file of the template: changed, whatever it holds
                continue
            if read > ANSWER_CAP_BYTES:
                notes.append(f"the workspace's files past {ANSWER_CAP_BYTES} bytes were not read")
                break
            data = self._read_bytes(relative, limit=max_file_bytes + 1)
            if data is None:
                notes.append(f"{relative}: could not be read as a regular file, not taken")
                continue
            read += len(data)
            unchanged = data == template
            if not in_answer:
                if not unchanged:
                    outside.append(relative)
                continue
            if unchanged:
                continue  # the template's own src/ files, as the template has them
            try:
                files[relative] = data.decode("utf-8")
            except UnicodeDecodeError:
                notes.append(f"{relative}: not UTF-8 text, not taken")
        if outside:
            notes.append(f"changed outside src/, not part of the answer: {', '.join(outside[:20])}"
                         + (f" and {len(outside) - 20} more" if len(outside) > 20 else ""))
        return WorkspaceAnswer(files, notes)

    def snapshot(self) -> dict[str, str]:
        """path -> "size:mtime" of every regular file (node_modules and dist aside): cheap enough to take as each
        of an agent's requests arrives (a file written again shows as modified, even with the same text)."""
        found = {}
        for relative in self._walk()[0]:
            try:
                info = os.stat(self.root / relative, follow_symlinks=False)
            except OSError:
                continue
            found[relative] = f"{info.st_size}:{info.st_mtime_ns}"
        return found

    # -- file tools (the built-in agent's, runner-side) ----------------------------------------------

    def _parts(self, relative: str) -> list[str]:
        text = str(relative).strip()
        if not text or text.startswith("/") or "\\" in text or "\x00" in text:
            raise WorkspaceError(f"{relative!r}: give a path relative to the workspace (e.g. src/App.jsx)")
        parts = [part for part in text.split("/") if part not in ("", ".")]
        if any(part == ".." for part in parts):
            raise WorkspaceError(f"{relative!r}: '..' leaves the workspace")
        if parts and parts[0] in SKIPPED_DIRS:
            raise WorkspaceError(f"{relative!r}: {parts[0]}/ is not part of the workspace's sources")
        return parts

    def _open_dir(self, parts: list[str], *, create: bool = False) -> int:
        """A descriptor of the folder `parts` under the root, every step opened without following links."""
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            for part in parts:
                if create:
                    try:
                        os.mkdir(part, 0o755, dir_fd=fd)
                    except FileExistsError:
                        pass
                try:
                    inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                except OSError as error:
                    raise WorkspaceError(f"{'/'.join(parts)}: not a folder of the workspace "
                                         f"({error.strerror or error})") from None
                os.close(fd)
                fd = inner
            return fd
        except BaseException:
            os.close(fd)
            raise

    def _read_bytes(self, relative: str, *, limit: int) -> bytes | None:
        try:
            return self.read_bytes(relative, limit=limit)
        except (WorkspaceError, OSError):
            return None

    def read_bytes(self, relative: str, *, limit: int = READ_CAP_BYTES) -> bytes:
        """At most `limit` bytes of a regular file of the workspace (WorkspaceError for anything else)."""
        parts = self._parts(relative)
        if not parts:
            raise WorkspaceError(f"{relative!r}: a folder, not a file")
        folder = self._open_dir(parts[:-1])
        try:
            try:
                fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
            except OSError as error:
                raise WorkspaceError(f"{relative}: cannot be read ({error.strerror or error})") from None
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise WorkspaceError(f"{relative}: not a regular file")
                chunks = []
                left = limit
                while left > 0:
                    chunk = os.read(fd, min(left, 1 << 20))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    left -= len(chunk)
                return b"".join(chunks)
            finally:
                os.close(fd)
        finally:
            os.close(folder)

    def write(self, relative: str, content: str) -> None:
        """Write a text file, its folders made as needed; never through a link."""
        parts = self._parts(relative)
        if not parts:
            raise WorkspaceError(f"{relative!r}: a folder, not a file")
        folder = self._open_dir(parts[:-1], create=True)
        try:
            try:
                fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644, dir_fd=folder)
            except OSError as error:
                raise WorkspaceError(f"{relative}: cannot be written ({error.strerror or error})") from None
            with os.fdopen(fd, "wb") as handle:
                handle.write(content.encode("utf-8", "surrogatepass"))
        finally:
            os.close(folder)

    def delete(self, relative: str) -> None:
        parts = self._parts(relative)
        if not parts:
            raise WorkspaceError(f"{relative!r}: the workspace itself cannot be deleted")
        folder = self._open_dir(parts[:-1])
        try:
            try:
                os.unlink(parts[-1], dir_fd=folder)
            except IsADirectoryError:
                raise WorkspaceError(f"{relative}: a folder; delete its files") from None
            except OSError as error:
                raise WorkspaceError(f"{relative}: cannot be deleted ({error.strerror or error})") from None
        finally:
            os.close(folder)

    def listing(self, relative: str = "") -> list[str]:
        """Files under a folder of the workspace (relative to the workspace), node_modules and dist aside."""
        parts = self._parts(relative) if str(relative).strip() not in ("", ".") else []
        os.close(self._open_dir(parts))  # it must be a real folder inside
        prefix = "/".join(parts)
        paths, _ = self._walk()
        return [path for path in paths if not prefix or path == prefix or path.startswith(prefix + "/")]
