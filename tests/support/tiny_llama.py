"""Write a tiny random-weight Llama (with a byte-level BPE tokenizer and a chat template) to a folder.

Run with the vLLM venv's python, which has torch, transformers and tokenizers (the runner's own venv has none):

    .cache/vllm-venv/bin/python tests/support/tiny_llama.py OUT_DIR

Everything is made locally (no hub access), so vLLM can serve it with HF_HUB_OFFLINE=1. The weights are random:
the text is gibberish, which is all the server tests need. The attention head size is 64 because vLLM's CPU
attention kernels support only a few head sizes.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script by the vLLM venv's python
from tiny_tokenizer import train_byte_level_bpe  # noqa: E402

# Enough text for a few hundred byte-level merges covering code, markup and JSON punctuation.
_CORPUS = [
    'export default function App() { return <div className="app">Hello</div>; }',
    '{"verdict": "pass", "score": 1, "reasons": ["renders", "no errors"]}',
    "import React, { useState } from 'react';\nconst [count, setCount] = useState(0);",
    "<button onClick={() => setCount(count + 1)}>Count: {count}</button>",
    "The quick brown fox jumps over the lazy dog. 0123456789 true false null",
] * 20

_CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% endif %}{% endfor %}{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def write_tiny_llama(out_dir: Path, *, vocab_size: int = 512, seed: int = 0) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out_dir.mkdir(parents=True, exist_ok=True)
    special = ["<s>", "</s>", "<unk>"]
    tokenizer = train_byte_level_bpe(_CORPUS, vocab_size=vocab_size, special=special)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="</s>"
    )
    fast.chat_template = _CHAT_TEMPLATE
    fast.save_pretrained(out_dir)

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,  # head size 128 / 2 = 64
        num_key_value_heads=2,
        max_position_embeddings=32768,  # room for a whole judge bundle (a byte-level vocab is wordy)
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config).to(torch.float32)
    model.save_pretrained(out_dir)
    return out_dir


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: tiny_llama.py OUT_DIR")
    print(write_tiny_llama(Path(sys.argv[1])))
