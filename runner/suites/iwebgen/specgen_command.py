"""`python -m runner.specgen PAPER.pdf [--out DIR] [--max-chars N] OVERRIDES...`: an I-WebGenBench specification
drafted from a paper by the run's `spec_writer` model role (I-WebGenBench §3.1, C.1), for review.

The overrides are those of `python -m runner`; the writer is composed like any suite role, e.g.
`+model@roles.spec_writer=kimi` (or a local server: `+model@roles.spec_writer=local-openai
roles.spec_writer.base_url=http://127.0.0.1:8000/v1`). The draft is validated and written to `--out`
(default: ./specgen) as `<id>.yaml`; the last line printed is its path. It is not added to the suite: move a
reviewed draft into tasks/iwebgen/specs/ yourself. Exits 2 with a message naming the file or key on an error.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from runner.compose import compose
from runner.config import RunnerConfig
from runner.errors import ConfigError, UserError
from runner.models.role import role_key
from runner.run.roles import RunRoles
from runner.suites.iwebgen.specgen import DEFAULT_MAX_CHARS, extract_pdf_text, save_draft, write_spec
from runner.run.validation import validate_config

ROLE = "spec_writer"
TASKS_DIR = Path(__file__).resolve().parents[3] / "tasks" / "iwebgen"


def _arguments(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="python -m runner.specgen", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pdf", type=Path, help="the paper (PDF)")
    parser.add_argument("--out", type=Path, default=Path("specgen"), help="review folder (default: ./specgen)")
    parser.add_argument("--max-chars", type=int, default=DEFAULT_MAX_CHARS,
                        help=f"characters of the paper's text the writer reads (default {DEFAULT_MAX_CHARS})")
    return parser.parse_known_args(argv)


def _config(overrides: list[str]) -> RunnerConfig:
    try:
        raw = compose(overrides)
    except Exception as error:  # Hydra's own errors: unknown config name, bad override syntax
        raise ConfigError(f"{type(error).__name__}: {error}") from None
    return validate_config(raw)


async def _draft(pdf: Path, out: Path, max_chars: int, overrides: list[str]) -> Path:
    config = _config(overrides)
    if ROLE not in config.roles:
        raise ConfigError(f"invalid configuration:\n  {role_key(ROLE)}: the spec writer is missing; compose it from "
                          f"conf/model with +model@roles.{ROLE}=<name>")
    text = extract_pdf_text(pdf)  # before any server starts: an unreadable PDF costs nothing
    roles = RunRoles(config, cache=None, log_dir=out / "logs")
    try:
        model = roles.model(ROLE)
        await roles.ensure(ROLE)  # a vLLM-served writer starts here
        draft = await write_spec(model, pdf, text=text, max_chars=max_chars)
    finally:
        await roles.aclose()
    return save_draft(draft, pdf, out, tasks_dir=TASKS_DIR)


def main(argv: list[str] | None = None) -> int:
    args, overrides = _arguments(list(sys.argv[1:] if argv is None else argv))
    if not args.pdf.is_file():
        print(f"error: {args.pdf}: no such file", file=sys.stderr)
        return 2
    try:
        path = asyncio.run(_draft(args.pdf, args.out, args.max_chars, overrides))
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("specification drafted for review (not added to suite=iwebgen; move it to tasks/iwebgen/specs/ once "
          "reviewed):")
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
