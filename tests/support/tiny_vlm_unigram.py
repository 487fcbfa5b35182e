"""Write a second tiny random-weight vision-language model, made differently from tests/support/tiny_vlm.py, to a folder.

Run with the vLLM venv's python, which has torch, transformers and tokenizers (the runner's own venv has none):

    .cache/vllm-venv/bin/python tests/support/tiny_vlm_unigram.py OUT_DIR

The same vision architecture (Idefics3, the one the CPU build serves without torchvision besides PaliGemma and
Phi-3-V), but every other choice differs from the first tiny VLM, so a served test that holds on both holds for
more than one model's quirks:

- tokenizer: SentencePiece-style Unigram (`▁` word starts, `<0xNN>` byte fallback) instead of byte-level BPE,
  with Kimi-K2's reasoning and tool-call markers as special tokens (so Kimi-K2.6's shipped server flags,
  `reasoning_parser: kimi_k2` and `tool_call_parser: kimi_k2`, start on it);
- chat template: Gemma's turn markers (`<start_of_turn>user` / `<start_of_turn>model`, `<end_of_turn>`), with no
  system role (a system message is folded into the first user turn, as Gemma 3's template does); asked with
  `chat_template_kwargs: {thinking: true}` the model's turn opens with `<think>`, as a thinking model's does;
- text model: 3 layers, width 192, grouped-query attention (3 query heads, 1 key-value head; head size 64);
- vision tower: width 96, 2 layers; 32 x 32 px images in 8 px patches.

Like the first, the output head reads one large residual dimension as a fixed preference, but another one:
end of text, then `"`, then a TAB, then `}`, `]`, `1`, `,`. Where a grammar admits whitespace between JSON tokens
(vLLM's xgrammar by default), this model writes `{"reason"` and then tabs until the output cap, the loop public
vLLM and xgrammar reports describe for Gemma 4 31B, Qwen3.5-9B and Mistral 7B. Under the runner's compact-JSON
setting (`disable_any_whitespace`) it answers at once, with empty strings, one-digit numbers and no optional
members. Without a schema its answer is empty (end of text first).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script by the vLLM venv's python
from tiny_tokenizer import train_unigram  # noqa: E402
from tiny_vlm import GRID_TOKENS, IMAGE_TOKENS  # noqa: E402  (Idefics3's processor tokens: its architecture needs them)

_CORPUS = [
    "You are an expert evaluator of generated web interfaces. Score presentation, execution and alignment.",
    '{"reason": "the layout is clear", "score": 4, "passed": true, "requirements": {"r1": "failed"}}',
    "function App() { const [items, setItems] = useState([]); return <ul>{items.map(i => <li>{i}</li>)}</ul>; }",
    "<section class=\"card\"><h1>Title</h1><p>Body text of the page.</p><button>Save</button></section>",
    "click fill select press scroll wait finish index text option key summary success thought",
    "Screenshot after the step. The visible text, the elements, the console and the tool log follow.",
] * 25

TURN_TOKENS = ["<start_of_turn>", "<end_of_turn>"]
# Kimi-K2's markers (vllm/parser/kimi_k2.py names them): its reasoning and tool-call parsers look them up.
KIMI_TOKENS = ["<think>", "</think>", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
               "<|tool_call_begin|>", "<|tool_call_end|>", "<|tool_call_argument_begin|>"]

IMAGE_SIDE = 32
PATCH = 8  # 4 x 4 patches ...
SCALE_FACTOR = 2  # ... pixel-shuffled by 2: 4 image tokens per image
IMAGE_SEQ_LEN = (IMAGE_SIDE // PATCH) ** 2 // SCALE_FACTOR**2
TAB = "<0x09>"  # the byte-fallback piece of a tab
PREFERENCE = ["<eos>", '"', TAB, "}", "]", "<0x31>", ","]  # "1" is a byte piece in this vocabulary
PREFERENCE_DIM = 5
PREFERENCE_SIZE = 100.0
CONTEXT = 65536

# Gemma's turns; a system message has no turn of its own and is put in front of the first user turn.
_CHAT_TEMPLATE = (
    "{{ bos_token }}{% set ns = namespace(system='') %}"
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}"
    "{% if message['content'] is string %}{% set ns.system = ns.system + message['content'] + '\n\n' %}"
    "{% else %}{% for part in message['content'] %}{% if part['type'] == 'text' %}"
    "{% set ns.system = ns.system + part['text'] + '\n\n' %}{% endif %}{% endfor %}{% endif %}"
    "{% else %}"
    "<start_of_turn>{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{% if message['role'] == 'user' %}{{ ns.system }}{% set ns.system = '' %}{% endif %}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% elif part['type'] in ['image', 'image_url'] %}<image>{% endif %}{% endfor %}{% endif %}"
    "<end_of_turn>\n"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% if thinking is defined and thinking %}<think>{% endif %}"
    "{% endif %}"
)


def write_tiny_vlm_unigram(out_dir: Path, *, vocab_size: int = 900, seed: int = 11) -> Path:
    import torch
    from transformers import (Idefics3Config, Idefics3ForConditionalGeneration, Idefics3ImageProcessorPil,
                              Idefics3Processor, PreTrainedTokenizerFast)

    out_dir.mkdir(parents=True, exist_ok=True)
    extra = [*TURN_TOKENS, *IMAGE_TOKENS, *GRID_TOKENS, *KIMI_TOKENS]
    tokenizer = train_unigram(_CORPUS, vocab_size=vocab_size, special=["<pad>", "<eos>", "<bos>", "<unk>", *extra])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<bos>", eos_token="<eos>", unk_token="<unk>", pad_token="<pad>",
        additional_special_tokens=extra, model_max_length=CONTEXT,
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
        tie_word_embeddings=False,
        vision_config={
            "hidden_size": 96, "intermediate_size": 192, "num_hidden_layers": 2, "num_attention_heads": 2,
            "image_size": IMAGE_SIDE, "patch_size": PATCH, "num_channels": 3,
        },
        text_config={
            "model_type": "llama", "vocab_size": len(fast), "hidden_size": 192, "intermediate_size": 384,
            "num_hidden_layers": 3, "num_attention_heads": 3, "num_key_value_heads": 1,  # head size 64, GQA
            "max_position_embeddings": CONTEXT, "bos_token_id": fast.bos_token_id,
            "eos_token_id": fast.eos_token_id, "pad_token_id": fast.pad_token_id, "tie_word_embeddings": False,
            "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
        },
    )
    config.pad_token_id = config.text_config.pad_token_id  # vLLM reads the top-level one
    model = Idefics3ForConditionalGeneration(config).to(torch.float32)
    with torch.no_grad():
        model.get_input_embeddings().weight[:, PREFERENCE_DIM] = PREFERENCE_SIZE
        head = model.get_output_embeddings().weight
        head[:, PREFERENCE_DIM] = 0.0
        for rank, token in enumerate(reversed(PREFERENCE), start=1):
            token_id = fast.convert_tokens_to_ids(token)
            if token_id == fast.unk_token_id:
                raise ValueError(f"preferred token {token!r} is not in the vocabulary")
            head[token_id, PREFERENCE_DIM] = float(rank)
    model.save_pretrained(out_dir)
    return out_dir


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: tiny_vlm_unigram.py OUT_DIR")
    print(write_tiny_vlm_unigram(Path(sys.argv[1])))
