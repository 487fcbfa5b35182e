"""`python -m runner.reward serve suite=micro [overrides ...] [--host H] [--port P] [--queue-size N]`.

The overrides compose conf/ exactly as `python -m runner` does (suite, sandbox, browser, judge, actor,
concurrency, timeouts); the `--` options are the HTTP server's own. docs/reward.md.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path


EXIT_USER_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m runner.reward", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve rewards over HTTP")
    serve.add_argument("overrides", nargs="*", help="Hydra overrides, as for `python -m runner` (suite=micro ...), "
                                                    "before, between or after the options")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--queue-size", type=int, default=16,
                       help="answers that may wait beyond those scored at once (concurrency.episodes); more: 429")
    serve.add_argument("--episodes", type=int, default=1024, help="held episodes kept (least recently used go)")
    serve.add_argument("--work-dir", type=Path, default=None,
                       help="where each call's slot folder goes (default: a temporary folder, removed on exit)")
    serve.add_argument("--all-evidence", action="store_true",
                       help="capture the load-time screenshots and DOM file in every call, also where nothing "
                            "reads them (default: only for keep_evidence, or where the judge or suite reads them)")
    return parser


async def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from runner.run.capacity import resolve_concurrency
    from runner.reward.compose import compose_config
    from runner.reward.http import ServiceHolder, create_app
    from runner.reward.service import RewardService

    config = compose_config(args.overrides)
    parallel = resolve_concurrency(config, episodes_available=sys.maxsize).episodes
    holder = ServiceHolder(lambda: RewardService.open(config, work_dir=args.work_dir, episode_capacity=args.episodes,
                                                      lean_evidence=not args.all_evidence))
    app = create_app(holder, queue_size=args.queue_size, parallel=parallel)
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="info", lifespan="on"))

    def failed(error: str) -> None:
        logging.getLogger("runner.reward").error("the reward service could not start: %s", error)
        server.should_exit = True

    holder.on_failure = failed
    await server.serve()
    return EXIT_USER_ERROR if holder.error else 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args, rest = parser.parse_known_args(argv)
    unknown = [item for item in rest if item.startswith("-")]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.overrides = [*args.overrides, *rest]  # overrides after an option
    if args.queue_size < 0:
        print("--queue-size: must be 0 or more", file=sys.stderr)
        return EXIT_USER_ERROR
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("alembic", "httpx", "mlflow"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    from hydra.errors import HydraException

    from runner.errors import UserError
    from runner.run import user_errors

    try:
        return asyncio.run(_serve(args))
    except (UserError, HydraException) as error:  # a bad override or config: say which
        user_errors.report(error)
        return EXIT_USER_ERROR


if __name__ == "__main__":
    sys.exit(main())
