"""`python -m runner.pull +experiment=PRESET model=NAME ...` (or `suite=NAME`, `judge=NAME`, ...): download the
papers' data and the pinned weights a run needs, for offline runs.

Takes the same Hydra overrides as `python -m runner` and composes the config. Data: every source the suite
declares under `suite.paper_data` (the authors' released data, runner/suites/paper_data.py) is fetched at its pinned
revision into `data_dir` (default .cache/data), its checksum checked against the pin's and recorded beside the
files; a copy already there, unchanged, is kept. Weights: every vLLM-served model (the generator, and a judge's or
actor's `options.model` when that is provider vllm) with huggingface_hub.snapshot_download at the pinned revision
into the hub cache (`server.hf_cache`, default HF_HUB_CACHE). Later runs read both offline. Prints one
`key: source@revision -> path` line per item; exits 2 with a message naming the key when one fails (the others
are still pulled). The hub token, where a repository is gated, comes from the usual HF_TOKEN environment
variable; nothing is written to the config.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from runner.compose import compose
from runner.errors import ConfigError, UserError, format_validation_error
from runner.kinds import KINDS
from runner.models.vllm_server import VLLMServerSettings, hub_cache_dir
from runner.suites.paper_data import DEFAULT_DATA_DIR, PaperData

def vllm_models(config: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(dotted key, model dict) for every provider-vllm model in the generator, judge and actor sections."""
    model = config.get("model")
    if isinstance(model, dict) and _vllm_served(model):
        yield "model", model
    for group in ("judge", "actor"):
        section = config.get(group) or {}
        inner = (section.get("options") or {}).get("model") if isinstance(section, dict) else None
        if isinstance(inner, dict) and _vllm_served(inner):
            yield f"{group}.options.model", inner


def _vllm_served(model: dict[str, Any]) -> bool:
    kind = KINDS.find("model", str(model.get("provider")))
    return kind is not None and kind.vllm_served


def server_settings(key: str, model: dict[str, Any]) -> VLLMServerSettings:
    raw = model.get("server") or {}
    try:
        return VLLMServerSettings.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, raw, f"{key}.server")) from None


def pull_snapshot(settings: VLLMServerSettings) -> Path:
    """Download (or find, when already complete) the pinned snapshot; returns its local folder."""
    from huggingface_hub import snapshot_download

    if settings.model_path:  # local weights: nothing to download
        return Path(settings.model_path).expanduser().resolve()
    path = snapshot_download(
        repo_id=settings.hf_repo,
        revision=settings.revision,
        cache_dir=str(hub_cache_dir(settings)),
        ignore_patterns=settings.ignore_patterns,
    )
    return Path(path)


def _explain(error: Exception, settings: VLLMServerSettings) -> str:
    from huggingface_hub.errors import (
        GatedRepoError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    what = f"{settings.hf_repo}@{settings.revision}"
    if isinstance(error, GatedRepoError):
        return f"{what} is gated: accept its licence on huggingface.co and set HF_TOKEN"
    if isinstance(error, RepositoryNotFoundError):
        return f"{what}: repository not found (check server.hf_repo, or HF_TOKEN for a private one)"
    if isinstance(error, RevisionNotFoundError):
        return f"{what}: revision not found (server.revision must be a commit of that repository)"
    if isinstance(error, (OfflineModeIsEnabled, LocalEntryNotFoundError)):
        return (
            f"{what} is not in {hub_cache_dir(settings)} and the hub cannot be reached "
            f"(HF_HUB_OFFLINE set, or no network): pull on a machine with hub access and copy the cache over"
        )
    return f"{what}: {type(error).__name__}: {error}"


def paper_data(config: dict[str, Any]) -> tuple[Path, dict[str, PaperData]]:
    """(the data dir, the suite's paper-data sources by name) of a composed config."""
    from runner.suites.registry import validate_suite_options

    settings = validate_suite_options(config.get("suite") or {})
    data_dir = Path(str(config.get("data_dir") or DEFAULT_DATA_DIR)).expanduser()
    return (data_dir if data_dir.is_absolute() else Path.cwd() / data_dir), dict(settings.paper_data)


def pull_data(data_dir: Path, sources: dict[str, PaperData]) -> bool:
    """Fetch each source; prints a line per source. False when one failed (the others are still fetched)."""
    from runner.run.data_pull import pull_paper_data

    ok = True
    for name, data in sources.items():
        key = f"suite.paper_data.{name}"
        try:
            pulled = pull_paper_data(data_dir, name, data)
        except UserError as error:
            print(f"error: {key}: {error}", file=sys.stderr)
            ok = False
            continue
        state = "pulled" if pulled.fetched else "already there, unchanged"
        print(f"{key}: {data.describe()} -> {pulled.folder} ({pulled.files} files, sha256 {pulled.sha256}; {state})")
    return ok


def main(argv: list[str] | None = None) -> int:
    overrides = list(sys.argv[1:] if argv is None else argv)
    if any(arg in ("-h", "--help") for arg in overrides):
        print(__doc__)
        return 0
    try:
        config = compose(overrides)
        targets = [(key, server_settings(key, model)) for key, model in vllm_models(config)]
        data_dir, sources = paper_data(config)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # Hydra's own errors: unknown config name, bad override syntax
        print(f"error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    if not targets and not sources:
        print("nothing to pull: no paper data (suite.paper_data) and no model with provider vllm in this "
              "configuration", file=sys.stderr)
        return 0
    failed = not pull_data(data_dir, sources)
    for key, settings in targets:
        if settings.mode == "attach":
            print(f"{key}: attached to {settings.base_url}; nothing to pull")
            continue
        try:
            path = pull_snapshot(settings)
        except Exception as error:
            print(f"error: {key}: {_explain(error, settings)}", file=sys.stderr)
            failed = True
            continue
        source = settings.model_path or f"{settings.hf_repo}@{settings.revision}"
        print(f"{key}: {source} -> {path}")
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
