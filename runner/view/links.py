"""The viewer's URLs of one run's pages and files: plain absolute paths, each segment quoted (static/lists.js
builds the same ones with encodeURIComponent)."""

from __future__ import annotations

from urllib.parse import quote


class Links:
    """The URLs of one run's pages and files (plain absolute paths; each segment quoted)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    def run(self) -> str:
        return f"/runs/{quote(self.run_id, safe='')}"

    def episode(self, task_id: str) -> str:
        return f"{self.run()}/tasks/{quote(task_id, safe='')}"

    def turn(self, task_id: str, turn: int) -> str:
        return f"{self.episode(task_id)}/turns/{turn}"

    def file(self, path: str) -> str:
        return f"/files/{quote(self.run_id, safe='')}/{quote(path)}"

    def thumb(self, path: str, width: int = 320) -> str:
        return f"/thumbs/{width}/{quote(self.run_id, safe='')}/{quote(path)}"
