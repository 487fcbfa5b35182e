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


_GROUPS = ("model", "suite", "judge", "actor", "sandbox", "tracking")


def quote_null_choices(argv: list[str]) -> list[str]:
    """Let `model=null` name the config conf/model/null.yaml.

    Hydra's override grammar reads a bare `null` as "no config for this group", which is meaningless for
    the runner's required groups; quoting it makes Hydra look up the option called "null" instead.
    """
    rewritten = []
    for argument in argv:
        key, sep, value = argument.partition("=")
        if sep and key.lstrip("~+") in _GROUPS and "null" in value.split(","):
            value = ",".join("'null'" if choice == "null" else choice for choice in value.split(","))
            argument = f"{key}={value}"
        rewritten.append(argument)
    return rewritten


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
    from runner.sweep import attach_to_sweep

    config = attach_to_sweep(config)  # a multirun job nests its MLflow run under the sweep's parent run
    run_dir = HydraConfig.get().runtime.output_dir
    from runner.experiment import run_experiment
    from runner.suites.native import TaskFormatError

    for noisy in ("alembic", "httpx", "mlflow"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        asyncio.run(run_experiment(config, run_dir))
    except (ConfigError, TaskFormatError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    print(run_dir)


if __name__ == "__main__":
    sys.argv = quote_null_choices(sys.argv)
    from runner.sweep import quiet_schema_matching

    quiet_schema_matching()
    main()
