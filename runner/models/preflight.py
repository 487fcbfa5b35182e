"""What a model role needs before its first call, checked in seconds without starting anything: each provider's
preflight hook (runner/models/providers.py). A vLLM-served model: its weights in the hub cache and vLLM (or Docker
and its image) to serve them, or an attached server that answers; an OpenAI-compatible endpoint: its API key
variable set and a loopback endpoint up."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from runner.host_probes import LOOPBACK, docker_client, image_present, tcp_reachable
from runner.models.role import ModelRole
from runner.problems import Problem

if TYPE_CHECKING:
    from runner.models.vllm_provider import VLLMModelSettings

__all__ = ["check_openai_model", "check_vllm_installed", "check_vllm_model", "check_weights"]

_FIND_VLLM = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('vllm') else 1)"


def _pull_fix(role: ModelRole) -> str:
    if role.pull_overrides:
        return f"download it with `python -m runner.pull {' '.join(role.pull_overrides)}` (on a machine with hub access)"
    return f"download it into the hub cache (e.g. `hf download REPO --revision REV`), or set {role.key}.server.model_path"


def check_weights(role: ModelRole, server: Any) -> Problem | None:
    """The pinned snapshot is complete enough to serve (config.json present), without the network."""
    from runner.models.vllm_server import hub_cache_dir

    if server.model_path:
        path = Path(server.model_path).expanduser()
        if not (path / "config.json").is_file():
            return Problem(f"{role.key}.server.model_path", f"{path} holds no config.json (not a model folder)",
                           "point it at a folder with the model's weights")
        return None
    from huggingface_hub import snapshot_download

    cache = hub_cache_dir(server)
    what = f"{role.role} {role.name!r}: {server.hf_repo}@{server.revision}"
    try:
        found = Path(snapshot_download(repo_id=server.hf_repo, revision=server.revision, cache_dir=str(cache),
                                       local_files_only=True))
    except Exception:  # huggingface_hub raises several kinds for "not there"; all mean the same here
        return Problem(role.key, f"{what} is not in the local hub cache {cache}", _pull_fix(role))
    if not (found / "config.json").is_file():
        return Problem(role.key, f"{what} is incomplete in {cache} (no config.json)", _pull_fix(role))
    return None


def check_vllm_installed(role: ModelRole, server: Any) -> Problem | None:
    """The server's program exists: `server.python` has the vllm package, or the `vllm` command is on PATH."""
    fix = (f"install vLLM (docs/vllm.md), or set {role.key}.server.python to a Python that has it, "
           f"or {role.key}.server.mode=attach with base_url of a server you run")
    if server.python is not None:
        python = shutil.which(server.python) or server.python
        if not Path(python).is_file():
            return Problem(f"{role.key}.server.python", f"{server.python} does not exist", fix)
        try:
            found = subprocess.run([python, "-c", _FIND_VLLM], capture_output=True, timeout=20).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            found = False
        return None if found else Problem(f"{role.key}.server.python", f"vllm is not importable by {python}", fix)
    if not server.command or shutil.which(server.command[0]) is None:
        shown = " ".join(server.command) or "(empty)"
        return Problem(f"{role.key}.server.command", f"`{shown}`: {server.command[0] if server.command else 'command'} "
                       "is not on PATH (vLLM is not installed here)", fix)
    return None


def check_vllm_model(role: ModelRole) -> list[Problem]:
    """A vLLM-served role: weights in the hub cache and vLLM (or Docker and its image) to serve them, or an
    attached server that answers."""
    settings: VLLMModelSettings = role.settings  # parsed by config validation (runner/run/validation.py)
    server = settings.server
    if server.mode == "attach":
        assert server.base_url is not None
        if not tcp_reachable(server.base_url):
            return [Problem(f"{role.key}.server.base_url", f"nothing answers at {server.base_url}",
                            "start that server first, or use server.mode=process to let the runner start one")]
        return []
    problems = [p for p in (check_weights(role, server),) if p is not None]
    if server.mode == "process":
        problems += [p for p in (check_vllm_installed(role, server),) if p is not None]
    else:
        client, why = docker_client()
        if client is None:
            problems.append(Problem(f"{role.key}.server.mode", f"docker mode, but no Docker engine is reachable ({why})",
                                    "start the engine (`dockerd &`, docs/docker.md) or use server.mode=process"))
        elif not image_present(client, server.image):
            problems.append(Problem(f"{role.key}.server.image", f"image {server.image} is not present locally",
                                    f"`docker pull {server.image}` on a machine with registry access, then "
                                    "`docker save`/`docker load` it here"))
    return problems


def check_openai_model(role: ModelRole) -> list[Problem]:
    """An OpenAI-compatible role: its API key variable set, a loopback endpoint answering."""
    problems = []
    key_env = role.config.get("api_key_env")
    if key_env and not os.environ.get(key_env):
        problems.append(Problem(f"{role.key}.api_key_env", f"environment variable {key_env} is not set",
                                f"export {key_env}=... (the key itself never goes into a config file)"))
    base_url = str(role.config.get("base_url") or "")
    if urlparse(base_url).hostname in LOOPBACK and not tcp_reachable(base_url):
        problems.append(Problem(f"{role.key}.base_url", f"nothing answers at {base_url}",
                                "start the local server first, or point base_url at a running one"))
    return problems
