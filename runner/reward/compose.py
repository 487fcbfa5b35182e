"""The service's configuration, composed from conf/ by Hydra and validated exactly like a run's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from omegaconf import OmegaConf

from runner.__main__ import quote_null_choices
from runner.config import RunnerConfig
from runner.run.validation import validate_config

__all__ = ["CONF_DIR", "compose_config"]

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def compose_config(overrides: Sequence[str], *, project_root: Path | None = None) -> RunnerConfig:
    """`suite=micro sandbox=docker browser.memory_mb=2048 ...` as `python -m runner` reads them (`model=null`
    names conf/model/null.yaml); relative paths resolve against `project_root` (default: the working dir)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        composed = compose(config_name="config", overrides=quote_null_choices(list(overrides)))
    raw = OmegaConf.to_container(composed, resolve=True)
    assert isinstance(raw, dict)
    raw.pop("hydra", None)
    raw["project_root"] = str(project_root or Path.cwd())
    return validate_config(raw)
