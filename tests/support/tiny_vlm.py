"""Write a tiny random-weight vision-language model of the SmolVLM architecture (Idefics3) to a folder.

Run with the vLLM venv's python, which has torch, transformers and tokenizers (the runner's own venv has none):

    .cache/vllm-venv/bin/python tests/support/tiny_vlm.py OUT_DIR

Everything is made locally (no hub access), so the CPU vLLM build serves it with HF_HUB_OFFLINE=1 and real
images: vLLM's Idefics3 module needs no torchvision (the Qwen2-VL, LLaVA, Gemma 3 and Pixtral modules do, and
PyPI's torchvision wheels do not match the CPU torch build). The weights are random: the answers are gibberish,
which is all the served-for-real tests need, since they decode under the JSON schemas the runner sends.

One thing is not random: every answer is the shortest the decoding constraints admit. The residual stream
carries one large constant dimension, which the output head reads as a fixed preference: end of text first,
then `"`, `}`, `]`, `1`, `,`. Under a JSON schema (greedy decoding, temperature 0, as the shipped judges and
actors use) a string closes as soon as the schema lets it (an empty string where no minLength forbids it),
optional members and array items are left out, numbers stop after one digit; without a schema the answer is
empty. So a request takes a few dozen tokens instead of the output cap, and an answer the schema admits but the
parser refuses shows at once.

Shape: a byte-level BPE tokenizer with Idefics3's image tokens; each image becomes one 64 x 64 global image
(no splitting) of 4 image tokens (a 4 x 4 patch grid, pixel-shuffled by 2); a 2-layer Llama text model whose
attention head size is 64 (the CPU attention kernels support only a few head sizes), with a long context so a
whole judge or actor request fits.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script by the vLLM venv's python
from tiny_tokenizer import train_byte_level_bpe  # noqa: E402

# Enough text for byte-level merges covering code, markup, JSON and the runner's prompt prose.
_CORPUS = [
    'export default function App() { return <div className="app">Hello</div>; }',
    '{"presentation": {"score": 4, "reason": "clear layout"}, "requirements": {"r1": "passed"}}',
    "import React, { useState } from 'react';\nconst [count, setCount] = useState(0);",
    "<button onClick={() => setCount(count + 1)}>Count: {count}</button>",
    "The quick brown fox jumps over the lazy dog. 0123456789 true false null",
    "You are an expert evaluator. Judge the generated interface against the requirements and the evidence.",
    "Screenshot of the page after the interaction. Visible text, DOM, console errors, build log, actor trace.",
] * 20

# Idefics3Processor expands each <image> into <fake_token_around_image><global-img><image>...; <row_i_col_j>
# name the tiles of a split image (unused here, but the processor knows them).
IMAGE_TOKENS = ["<fake_token_around_image>", "<image>", "<global-img>", "<end_of_utterance>"]
GRID_TOKENS = [f"<row_{row}_col_{col}>" for row in range(1, 7) for col in range(1, 7)]

IMAGE_SIDE = 64  # pixels of the one global image each picture is resized to
PATCH = 16  # 4 x 4 patches ...
SCALE_FACTOR = 2  # ... pixel-shuffled by 2: 4 image tokens per image
IMAGE_SEQ_LEN = (IMAGE_SIDE // PATCH) ** 2 // SCALE_FACTOR**2
# The output head's fixed preference, most preferred first (see the module docstring).
PREFERENCE = ["</s>", '"', "}", "]", "1", ","]
PREFERENCE_DIM = 0  # the residual dimension that carries it
PREFERENCE_SIZE = 100.0  # large beside the random weights (std 0.02), so it dominates the final norm
CONTEXT = 65536  # a byte-level vocabulary is wordy: a whole judge bundle plus the output cap fits

# Image parts become <image>: vLLM hands the template OpenAI content parts as {"type": "image"}.
_CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% elif part['type'] in ['image', 'image_url'] %}<image>{% endif %}{% endfor %}{% endif %}"
    "<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def write_tiny_vlm(out_dir: Path, *, vocab_size: int = 1024, seed: int = 0) -> Path:
    import torch
    from transformers import (Idefics3Config, Idefics3ForConditionalGeneration, Idefics3ImageProcessorPil,
                              Idefics3Processor, PreTrainedTokenizerFast)

    out_dir.mkdir(parents=True, exist_ok=True)
    special = ["<s>", "</s>", "<unk>", *IMAGE_TOKENS, *GRID_TOKENS]
    tokenizer = train_byte_level_bpe(_CORPUS, vocab_size=vocab_size, special=special)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="</s>",
        additional_special_tokens=[*IMAGE_TOKENS, *GRID_TOKENS], model_max_length=CONTEXT,
    )
    fast.chat_template = _CHAT_TEMPLATE
    image_processor = Idefics3ImageProcessorPil(
        do_image_splitting=False, size={"longest_edge": IMAGE_SIDE}, max_image_size={"longest_edge": IMAGE_SIDE}
    )
    processor = Idefics3Processor(image_processor=image_processor, tokenizer=fast, image_seq_len=IMAGE_SEQ_LEN,
                                  chat_template=_CHAT_TEMPLATE)
    processor.save_pretrained(out_dir)
    fast.save_pretrained(out_dir)

    torch.manual_seed(seed)
    config = Idefics3Config(
        image_token_id=fast.convert_tokens_to_ids("<image>"),
        scale_factor=SCALE_FACTOR,
        tie_word_embeddings=False,  # the output head reads the preference dimension on its own
        vision_config={
            "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 1, "num_attention_heads": 2,
            "image_size": IMAGE_SIDE, "patch_size": PATCH, "num_channels": 3,
        },
        text_config={
            "model_type": "llama", "vocab_size": len(fast), "hidden_size": 128, "intermediate_size": 256,
            "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,  # head size 64
            "max_position_embeddings": CONTEXT, "bos_token_id": fast.bos_token_id,
            "eos_token_id": fast.eos_token_id, "pad_token_id": fast.pad_token_id, "tie_word_embeddings": False,
        },
    )
    config.pad_token_id = config.text_config.pad_token_id  # vLLM reads the top-level one
    model = Idefics3ForConditionalGeneration(config).to(torch.float32)
    with torch.no_grad():
        model.get_input_embeddings().weight[:, PREFERENCE_DIM] = PREFERENCE_SIZE
        head = model.get_output_embeddings().weight
        head[:, PREFERENCE_DIM] = 0.0
        for rank, token in enumerate(reversed(PREFERENCE), start=1):
            head[fast.convert_tokens_to_ids(token), PREFERENCE_DIM] = float(rank)
    model.save_pretrained(out_dir)
    return out_dir


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: tiny_vlm.py OUT_DIR")
    print(write_tiny_vlm(Path(sys.argv[1])))
