"""Write a second tiny random-weight text model, made differently from tests/support/tiny_llama.py, to a folder.

Run with the vLLM venv's python, which has torch, transformers and tokenizers (the runner's own venv has none):

    .cache/vllm-venv/bin/python tests/support/tiny_qwen3.py OUT_DIR

Every choice the served tests could depend on differs from the tiny Llama's: the architecture (Qwen3: query and key
RMS norms, grouped-query attention with one key-value head, tied embeddings), the tokenizer
(SentencePiece-style Unigram with `<0xNN>` byte fallback instead of byte-level BPE) and the chat template (ChatML's
`<|im_start|>role` ... `<|im_end|>`). The weights are random, as the Llama's: the text is gibberish, which is all
the server tests need (they decode under the runner's grammars). The attention head size is 64 (the CPU kernels
support only a few head sizes). Not Qwen2: transformers 5 loads a `qwen2` model's tokenizer as Qwen2Tokenizer,
which replaces the tokenizer.json's decoder with a byte-level one (a Unigram vocabulary then decodes as `▁` pieces
and xgrammar's view of the tokens no longer matches the text); a `qwen3` model's tokenizer.json is read as written.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script by the vLLM venv's python
from tiny_tokenizer import train_unigram  # noqa: E402

_CORPUS = [
    "export default function App() { const [n, setN] = useState(0); return <button>{n}</button>; }",
    '{"verdict": "pass", "score": 3, "reason": "the page renders", "requirements": {"r1": "passed"}}',
    "<!doctype html><html><head><style>body { margin: 0 }</style></head><body><main></main></body></html>",
    "Evaluate the generated interface against each requirement and answer with one JSON object.",
    "0 1 2 3 4 5 6 7 8 9 true false null [ ] { } : , \" ' ( ) < > / = ; + - * _ .",
] * 25

_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def write_tiny_qwen3(out_dir: Path, *, vocab_size: int = 700, seed: int = 3) -> Path:
    import torch
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    out_dir.mkdir(parents=True, exist_ok=True)
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<unk>"]
    tokenizer = train_unigram(_CORPUS, vocab_size=vocab_size, special=special)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", unk_token="<unk>",
                                   pad_token="<|endoftext|>", additional_special_tokens=["<|im_start|>"])
    fast.chat_template = _CHAT_TEMPLATE
    fast.save_pretrained(out_dir)

    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(fast), hidden_size=128, intermediate_size=320, num_hidden_layers=2, head_dim=64,
        num_attention_heads=2, num_key_value_heads=1,  # head size 64, grouped-query attention
        max_position_embeddings=32768, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id,
        bos_token_id=None, tie_word_embeddings=True, rms_norm_eps=1e-6,
    )
    Qwen3ForCausalLM(config).to(torch.float32).save_pretrained(out_dir)
    return out_dir


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: tiny_qwen3.py OUT_DIR")
    print(write_tiny_qwen3(Path(sys.argv[1])))
