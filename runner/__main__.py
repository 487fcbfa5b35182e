"""`python -m runner`: compose (Hydra) -> validate (pydantic) -> run -> print the run dir last."""

from __future__ import annotations

import asyncio
import logging
import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.utils import get_original_cwd
from omegaconf import DictConfig, OmegaConf

from runner.compose import quote_null_choices
from runner.run.validation import validate_config


_job_started = False  # set once Hydra has composed the config and called the job


@hydra.main(config_path="../conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    global _job_started
    _job_started = True
    from runner.errors import UserError
    from runner.run import user_errors

    try:
        run_dir = run_job(cfg)
    except UserError as error:
        if user_errors.full_errors_wanted() or _in_multirun():
            raise  # a multirun job must fail as a job: Hydra records it and the sweep goes on
        user_errors.report(error)
        sys.exit(user_errors.EXIT_USER_ERROR)
    if run_dir is not None:  # run.plan=true ran nothing, so there is no run dir to name
        print(run_dir)


def _in_multirun() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def run_job(cfg: DictConfig) -> str | None:
    """Validate, run, and return the run dir (None: `run.plan=true` printed the plan and ran nothing). Expected
    failures raise their own (user-phrased) errors."""
    raw = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(raw, dict)
    raw["project_root"] = get_original_cwd()
    config = validate_config(raw)
    hydra_config = HydraConfig.get()
    from runner.run import preflight

    context = preflight.RunContext(choices={str(k): str(v) for k, v in hydra_config.runtime.choices.items()},
                                   overrides=[str(o) for o in hydra_config.overrides.task])
    if config.run.plan:
        from runner.run.plan import plan_text

        print(asyncio.run(plan_text(config, context)))
        return None
    # Before the heavy imports (MLflow, Playwright): a run that cannot start says so within seconds.
    for note in asyncio.run(preflight.check_run(config, context)):
        logging.getLogger("runner.run.preflight").info("preflight: %s", note)
    from runner.tracking.sweep import attach_to_sweep

    config = attach_to_sweep(config)  # a multirun job nests its MLflow run under the sweep's parent run
    run_dir = hydra_config.runtime.output_dir
    from runner.run.experiment import run_experiment

    for noisy in ("alembic", "httpx", "mlflow"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if config.repeats > 1:  # independent runs in repeat-<i>/, one summary over them (runner/run/repeats.py)
        from pathlib import Path

        from runner.run.repeats import run_repeats

        asyncio.run(run_repeats(config, Path(run_dir), lambda repeat, path: run_experiment(
            repeat, path, run_context=context, preflight_done=True)))
        return str(run_dir)
    asyncio.run(run_experiment(config, run_dir, run_context=context, preflight_done=True))
    return str(run_dir)


if __name__ == "__main__":
    sys.argv = quote_null_choices(sys.argv)
    from runner.tracking.sweep import quiet_schema_matching

    quiet_schema_matching()
    try:
        main()
    except SystemExit as exit_:
        # Hydra exits 1 when it cannot compose the config (unknown option, bad override): the user's to fix.
        if exit_.code == 1 and not _job_started:
            sys.exit(2)
        raise
