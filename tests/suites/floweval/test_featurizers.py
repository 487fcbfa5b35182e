"""FlowEval featurizers: deterministic pixels, the packaged MiniLM model, UIClip from the hub cache, clear errors."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from runner.errors import ConfigError
from runner.suites.floweval.traces import dtw_distance
from runner.suites.floweval import featurizers as fz


def _png(path: Path, colour: tuple[int, int, int], box: tuple[int, int, int, int] | None = None) -> Path:
    image = Image.new("RGB", (64, 48), colour)
    if box:
        image.paste((0, 0, 0), box)
    image.save(path)
    return path


def test_pixels_are_deterministic_area_averages(tmp_path: Path) -> None:
    white = _png(tmp_path / "white.png", (255, 255, 255))
    half = _png(tmp_path / "half.png", (255, 255, 255), (0, 0, 32, 48))  # left half black
    features = fz.get_featurizer("pixels", size=2).featurize([white, half], ["", ""])
    assert features.shape == (2, 12)
    assert features[0] == pytest.approx(np.ones(12))
    # 2x2 grid of the half-black page: left column 0, right column 1 (RGB each)
    assert features[1].reshape(2, 2, 3)[:, 0] == pytest.approx(np.zeros((2, 3)))
    assert features[1].reshape(2, 2, 3)[:, 1] == pytest.approx(np.ones((2, 3)))
    assert np.array_equal(features, fz.get_featurizer("pixels", size=2).featurize([white, half], []))


def test_pixels_empty_trace_and_mismatched_steps(tmp_path: Path) -> None:
    assert fz.get_featurizer("pixels").featurize([], []).shape == (0, 16 * 16 * 3)
    shot = _png(tmp_path / "a.png", (10, 20, 30))
    with pytest.raises(ValueError, match="1 screenshots but 2 texts"):
        fz.get_featurizer("pixels").featurize([shot], ["a", "b"])


def test_registry_names_and_bad_options() -> None:
    assert set(fz.FEATURIZERS) == {"pixels", "minilm_text", "uiclip"}
    with pytest.raises(ConfigError, match="unknown featurizer 'clip'; choose one of minilm_text, pixels, uiclip"):
        fz.get_featurizer("clip")
    with pytest.raises(ConfigError, match="featurizer 'pixels': bad options"):
        fz.get_featurizer("pixels", colour=True)


def test_missing_embeddings_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injected: sentence_transformers not importable (the runner image leaves the extra out)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    fz._minilm_model.cache_clear()
    try:
        with pytest.raises(fz.FeaturizerUnavailable, match=r"pip install 'genui-runner\[embeddings\]'"):
            fz.get_featurizer("minilm_text").featurize([], ["Cart (2 items)"])
    finally:
        fz._minilm_model.cache_clear()


def test_minilm_text_embeds_visible_text_offline() -> None:
    """The packaged all-MiniLM-L6-v2: a paraphrase lies closer than an unrelated page; loaded once."""
    featurizer = fz.get_featurizer("minilm_text")
    texts = ["Your cart: 2 items, total $40. Checkout", "Shopping cart with two products, $40 total, check out",
             "Inbox: 3 unread messages from Alice"]
    vectors = featurizer.featurize([], texts)
    assert vectors.shape == (3, 384)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(np.ones(3), abs=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    assert fz._minilm_model() is fz._minilm_model()
    assert dtw_distance(vectors[:1], vectors[1:2]) < dtw_distance(vectors[:1], vectors[2:3])
    assert featurizer.featurize([], []).shape == (0, 384)


def _hub_snapshot(cache: Path, repo: str, files: dict[str, str] | None = None) -> Path:
    """A hub cache entry in huggingface_hub's layout: models--org--name/{refs/main, snapshots/<commit>/}."""
    root = cache / ("models--" + repo.replace("/", "--"))
    commit = "0" * 40
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text(commit)
    snapshot = root / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for name, text in (files or {}).items():
        (snapshot / name).write_text(text)
    return snapshot


def test_uiclip_without_weights_names_the_pull_command(tmp_path: Path) -> None:
    with pytest.raises(fz.FeaturizerUnavailable) as caught:
        fz.get_featurizer("uiclip", cache_dir=str(tmp_path)).featurize([tmp_path / "a.png"], [])
    message = str(caught.value)
    assert f"hf download {fz.UICLIP_REPO} --revision main --cache-dir {tmp_path}" in message


def test_uiclip_reads_a_clip_model_from_the_hub_cache(tmp_path: Path) -> None:
    """A tiny randomly initialised CLIP saved in the cache layout stands in for the UIClip weights."""
    from tests.support.tiny_uiclip import write_tiny_uiclip_cache

    cache = write_tiny_uiclip_cache(tmp_path / "hub")
    featurizer = fz.get_featurizer("uiclip", cache_dir=str(cache))
    shots = [_png(tmp_path / "a.png", (250, 250, 250)), _png(tmp_path / "b.png", (250, 250, 250), (0, 0, 40, 40))]
    features = featurizer.featurize(shots, ["", ""])
    assert features.shape == (2, 8)
    assert not np.allclose(features[0], features[1])
    assert np.array_equal(features, featurizer.featurize(shots, []))


def test_featurize_by_name_shares_one_instance(tmp_path: Path) -> None:
    shot = _png(tmp_path / "a.png", (0, 0, 255))
    assert fz.featurize("pixels", [shot], ["x"]).shape == (1, 768)
    assert fz._shared("pixels") is fz._shared("pixels")


def test_featurizer_problems_name_what_is_missing_without_loading_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    problems = fz.featurizer_problems("uiclip")
    assert len(problems) == 1 and f"{fz.UICLIP_REPO}@main is not in the local Hugging Face cache" in problems[0]
    assert fz.featurizer_problems("pixels") == []
    for repo in (fz.UICLIP_REPO, fz.UICLIP_PROCESSOR_REPO):  # both snapshots present: nothing is missing
        _hub_snapshot(tmp_path / "hub", repo)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert fz.featurizer_problems("uiclip") == []


def test_the_floweval_preset_stops_in_preflight_when_uiclip_is_missing(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """FlowEval Table 1's featurizer is UIClip (§3.3): never swapped silently for another one."""
    import asyncio

    from huggingface_hub import constants

    from runner.run.preflight import PreflightError, check_run
    from runner.run.validation import validate_config
    from tests.test_presets import composed

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    config = validate_config(composed("+experiment=floweval-table1", "model=oracle", "actor=scripted"))
    with pytest.raises(PreflightError) as caught:
        asyncio.run(check_run(config))
    message = str(caught.value)
    assert "suite.featurizer: 'uiclip': featurizer 'uiclip': " in message and fz.UICLIP_REPO in message
    assert "suite.featurizer=minilm_text" in message  # the explicit way out, said to be not the paper's


def test_the_uiclip_revision_is_pinned_from_the_suite_settings(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`suite.featurizer_options` reach the featurizer: a pinned UIClip commit is what preflight looks up and
    what its pull command fetches; an option the featurizer does not take is refused naming the key."""
    import asyncio

    from huggingface_hub import constants

    from runner.errors import ConfigError
    from runner.run.preflight import PreflightError, check_run
    from runner.run.validation import validate_config
    from tests.test_presets import composed

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    commit = "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c"
    config = validate_config(composed("+experiment=floweval-table1", "model=oracle", "actor=scripted",
                                      f"++suite.featurizer_options.revision={commit}"))
    with pytest.raises(PreflightError) as caught:
        asyncio.run(check_run(config))
    assert f"{fz.UICLIP_REPO}@{commit} is not in the local Hugging Face cache" in str(caught.value)
    assert f"hf download {fz.UICLIP_REPO} --revision {commit}" in str(caught.value)
    with pytest.raises(ConfigError, match=r"featurizer_options.*'uiclip'.*bad options \['revison'\]"):
        validate_config(composed("+experiment=floweval-table1", "model=oracle", "actor=scripted",
                                 "++suite.featurizer_options.revison=main"))
