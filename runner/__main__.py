"""`python -m runner`: compose (Hydra) -> validate (pydantic) -> run -> print the run dir last."""

from __future__ import annotations

import asyncio
import logging
import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.utils import get_original_cwd
from omegaconf import DictConfig, OmegaConf

from runner.config import ConfigError, validate_config


@hydra.main(config_path="../conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    raw = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(raw, dict)
    raw["project_root"] = get_original_cwd()
    try:
        config = validate_config(raw)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    run_dir = HydraConfig.get().runtime.output_dir
    from runner.experiment import run_experiment
    from runner.models.registry import ConfigError as ModelConfigError
    from runner.suites.native import TaskFormatError

    for noisy in ("alembic", "httpx", "mlflow"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        asyncio.run(run_experiment(config, run_dir))
    except (ConfigError, ModelConfigError, TaskFormatError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    print(run_dir)


if __name__ == "__main__":
    main()
