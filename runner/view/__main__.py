"""`python -m runner.view RUN_DIR_OR_SWEEP... [--host 127.0.0.1] [--port 8765] [--labels SAMPLE_DIR] [--export OUT_DIR]`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from runner.view.app import ViewState, create_app, serve
from runner.view.catalog import Catalog


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.view", description=__doc__)
    parser.add_argument("paths", nargs="+", type=Path, help="run dirs, or folders holding run dirs (a sweep)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--labels", type=Path, metavar="SAMPLE_DIR",
                        help="an annotation sample folder (key.jsonl, labels.jsonl): people's labels in the turn lists")
    args = parser.parse_args(argv)
    try:
        catalog = Catalog.from_paths(args.paths)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    with serve(create_app(ViewState(catalog, labels=args.labels)), host=args.host, port=args.port) as url:
        print(f"viewer: {url}/  ({len(catalog.runs)} runs; Ctrl-C stops it)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
