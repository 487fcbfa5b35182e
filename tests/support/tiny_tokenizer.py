"""The byte-level BPE tokenizer both tiny model makers train (tests/support/tiny_llama.py, tiny_vlm.py), locally
and from a small corpus, so nothing is fetched. Imported by those scripts, which run under the vLLM venv's
python (it has `tokenizers`); tests/support/tiny_models.py keys a made model by this file's source too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def train_byte_level_bpe(corpus: Sequence[str], *, vocab_size: int, special: Sequence[str]) -> Any:
    """A `tokenizers.Tokenizer` whose vocabulary covers every byte, then the merges the corpus gives."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(special), initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    return tokenizer
