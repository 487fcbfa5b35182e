"""A tiny random CLIP in a local Hugging Face hub cache under UIClip's repository names, for runs that featurize
with `suite.featurizer=uiclip` (FlowEval §3.3) on a machine without hub access.

The runner reads UIClip as a user's machine would after `hf download`: `snapshot_download(..., local_files_only=True)`
of both repositories (runner/suites/floweval/featurizers.py) from `$HF_HUB_CACHE`. This module writes that cache
layout (refs/<revision> naming a commit, snapshots/<commit>/ holding the files) with a CLIP of the same class and a
few thousand random weights, so the featurizer path (hub lookup, CLIPModel, CLIPImageProcessor, image features) is
the real one and only the numbers are random, like the tiny served models of tests/support/tiny_models.py.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from runner.suites.floweval.featurizers import UICLIP_PROCESSOR_REPO, UICLIP_REPO

IMAGE_SIDE = 32  # the processor's crop: small images keep each trace's features cheap


def _snapshot(cache: Path, repo: str, revision: str) -> Path:
    """The snapshot folder of repo@revision in a hub cache (created), with refs/<revision> pointing at it."""
    folder = cache / ("models--" + repo.replace("/", "--"))
    commit = hashlib.sha1(f"{repo}@{revision}".encode()).hexdigest()
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / revision).write_text(commit)
    snapshot = folder / "snapshots" / commit
    snapshot.mkdir(parents=True, exist_ok=True)
    return snapshot


def write_tiny_uiclip_cache(cache: Path, *, revision: str = "main", seed: int = 0) -> Path:
    """Write the tiny UIClip and its processor into the hub cache folder `cache`; return `cache`."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    torch.manual_seed(seed)
    config = CLIPConfig(
        text_config={"vocab_size": 64, "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "max_position_embeddings": 16, "bos_token_id": 0, "eos_token_id": 1,
                     "pad_token_id": 1},
        vision_config={"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "image_size": IMAGE_SIDE, "patch_size": 16},
        projection_dim=8,
    )
    CLIPModel(config).eval().save_pretrained(_snapshot(cache, UICLIP_REPO, revision))
    CLIPImageProcessor(size={"shortest_edge": IMAGE_SIDE},
                       crop_size={"height": IMAGE_SIDE, "width": IMAGE_SIDE}).save_pretrained(
        _snapshot(cache, UICLIP_PROCESSOR_REPO, revision))
    return cache
