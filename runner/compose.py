"""Hydra's composition of conf/, written once: `python -m runner` composes through `@hydra.main`, and every other
command (pull, specgen, the reward service), the benches and the tests compose the same overrides here, so all of
them see exactly the config a run would (`model=null` naming conf/model/null.yaml included).

A leaf of the package (Hydra and OmegaConf only): validation is the caller's (runner/run/validation.py
`compose_config` composes and validates in one call).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["CONF_DIR", "GROUPS", "compose", "quote_null_choices"]

CONF_DIR = Path(__file__).resolve().parents[1] / "conf"
GROUPS = ("model", "suite", "judge", "actor", "sandbox", "tracking")  # the groups whose option may be called null


def quote_null_choices(argv: Sequence[str]) -> list[str]:
    """Let `model=null` name the config conf/model/null.yaml.

    Hydra's override grammar reads a bare `null` as "no config for this group", which is meaningless for
    the runner's required groups; quoting it makes Hydra look up the option called "null" instead.
    """
    rewritten = []
    for argument in argv:
        key, sep, value = argument.partition("=")
        if sep and key.lstrip("~+") in GROUPS and "null" in value.split(","):
            value = ",".join("'null'" if choice == "null" else choice for choice in value.split(","))
            argument = f"{key}={value}"
        rewritten.append(argument)
    return rewritten


def compose(overrides: Sequence[str], *, project_root: Path | str | None = None) -> dict[str, Any]:
    """The resolved config dict `python -m runner OVERRIDES...` would validate: Hydra's own `hydra` key left out,
    `project_root` (what relative paths resolve against) the given folder, else the working dir."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from omegaconf import OmegaConf

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        composed = hydra_compose(config_name="config", overrides=quote_null_choices(list(overrides)))
    raw = OmegaConf.to_container(composed, resolve=True)
    assert isinstance(raw, dict)
    raw.pop("hydra", None)
    raw["project_root"] = str(project_root if project_root is not None else Path.cwd())
    return raw
