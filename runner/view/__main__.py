"""`python -m runner.view RUN_DIR_OR_SWEEP... [--host 127.0.0.1] [--port 8765] [--labels SAMPLE_DIR]
[--export OUT_DIR [--max-pages N]]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner.view.app import ViewState, create_app, serve_until_interrupted
from runner.view.catalog import Catalog
from runner.view.export import DEFAULT_MAX_PAGES, export_site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.view", description=__doc__)
    parser.add_argument("paths", nargs="+", type=Path, help="run dirs, or folders holding run dirs (a sweep)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--labels", type=Path, metavar="SAMPLE_DIR",
                        help="an annotation sample folder (key.jsonl, labels.jsonl): people's labels in the turn lists")
    parser.add_argument("--export", type=Path, metavar="OUT_DIR",
                        help="write the pages as static files into OUT_DIR (opens from file://) instead of serving")
    parser.add_argument("--max-pages", type=int, default=DEFAULT_MAX_PAGES,
                        help=f"with --export: the most pages written (default {DEFAULT_MAX_PAGES})")
    args = parser.parse_args(argv)
    if args.max_pages < 1:
        parser.error("--max-pages must be at least 1")
    try:
        catalog = Catalog.from_paths(args.paths)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    view = ViewState(catalog, labels=args.labels)
    if args.export is not None:
        report = export_site(create_app(view), args.export, max_pages=args.max_pages)
        print(report.summary(), flush=True)
        return 0
    serve_until_interrupted(create_app(view), host=args.host, port=args.port, announce=lambda url: print(
        f"viewer: {url}/  ({len(catalog.runs)} runs; Ctrl-C stops it)", flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
