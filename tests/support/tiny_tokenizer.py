"""The tokenizers the tiny model makers train (tests/support/tiny_*.py), locally and from a small corpus, so nothing
is fetched. Two families, so a test that holds on one tiny model can be run on another made differently:

- `train_byte_level_bpe`: GPT-2 style byte-level BPE (every byte a symbol, merges on top; a space is part of the
  next token, `Ġ`), as SmolVLM and Llama 3 tokenize;
- `train_unigram`: SentencePiece style Unigram (`▁` marks a word start, pieces scored by likelihood, bytes
  outside the vocabulary as `<0xNN>` fallback pieces), as Gemma, T5 and Llama 2 tokenize.

Imported by the makers, which run under the vLLM venv's python (it has `tokenizers`); tests/support/tiny_models.py
keys a made model by this file's source too."""

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


def train_unigram(corpus: Sequence[str], *, vocab_size: int, special: Sequence[str], unk: str = "<unk>") -> Any:
    """A SentencePiece-style Unigram `tokenizers.Tokenizer`: pieces learnt from the corpus, word starts marked with
    `▁`, and the 256 byte pieces `<0x00>`..`<0xFF>` appended so any text (a tab, an emoji) still encodes."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    metaspace = {"replacement": "\u2581", "prepend_scheme": "first", "split": True}
    learner = Tokenizer(models.Unigram())
    learner.pre_tokenizer = pre_tokenizers.Metaspace(**metaspace)
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size - 256, special_tokens=list(special), unk_token=unk,
                                      shrinking_factor=0.75, max_piece_length=12)
    learner.train_from_iterator(corpus, trainer=trainer)
    learnt = learner.get_vocab()  # piece -> id; the trained model's scores are read from its JSON
    import json

    pieces = [(piece, float(score)) for piece, score in json.loads(learner.to_str())["model"]["vocab"]]
    known = {piece for piece, _ in pieces}
    floor = min(score for _, score in pieces) - 1.0
    pieces += [(f"<0x{value:02X}>", floor) for value in range(256) if f"<0x{value:02X}>" not in known]
    tokenizer = Tokenizer(models.Unigram(pieces, unk_id=learnt[unk], byte_fallback=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(**metaspace)
    # Llama 2's decoder: `▁` back to a space, byte pieces back to bytes, the leading space of the text dropped
    tokenizer.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                           decoders.Strip(" ", 1, 0)])
    tokenizer.add_special_tokens(list(special))
    return tokenizer
