"""SFT samples as token ids and labels: the chat template evaluation and RL use, loss on assistant tokens only.

Each sample is rendered whole by the model's chat template (tools natively when the template renders them, else in
the system message as `magic eval` shows them); every token of an assistant turn as rendered (after the template's
assistant header, through its end-of-turn marker) is a target, everything else label -100. Working on the
rendered text, not per-message pieces, stays exact for templates that rewrite history (Qwen3 drops earlier turns'
<think>).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from magic_envs.core.chat import END_OF_TURN, without_template_tools

IGNORE = -100


def model_folder(spec: str) -> str:
    """The checkpoint folder a model name means: `smollm2` (the embedded SmolLM2-135M-Instruct),
    `tiny-qwen3[-moe][:SIZE]` or `tiny-smollm2[:SIZE]` (random weights from a config, built once into the cache),
    or a folder."""
    if spec == "smollm2":
        from benchmarks.policies.embedded import embedded_checkpoint

        return str(embedded_checkpoint())
    name, _, size = spec.partition(":")
    if name in ("tiny-qwen3", "tiny-qwen3-moe", "tiny-smollm2"):
        from benchmarks.policies.embedded import cache_dir
        from benchmarks.tiny_models import SIZES, SMOLLM2_SIZES, build_tiny_qwen3, build_tiny_smollm2

        sizes = SMOLLM2_SIZES if name == "tiny-smollm2" else SIZES
        if (size or "tiny") not in sizes:
            raise ValueError(f"model {spec!r}: sizes are {', '.join(sizes)}")
        folder = cache_dir() / "models" / spec.replace(":", "-")
        if not (folder / "model.safetensors").is_file():  # built whole, then renamed: a kill leaves no half model
            staging = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
            if name == "tiny-smollm2":
                build_tiny_smollm2(staging, size=size or "tiny")
            else:
                build_tiny_qwen3(staging, moe=name.endswith("moe"), size=size or "tiny")
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(staging, folder)
        return str(folder)
    if not Path(spec).is_dir():
        raise ValueError(f"model {spec!r}: not smollm2, tiny-qwen3(-moe), tiny-smollm2 or a checkpoint folder")
    return spec


def load_corpus(path: Path) -> list[dict]:
    """Samples from `corpus.jsonl` or `corpus.parquet` (as `magic synth` writes them), or a folder holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / "corpus.jsonl" if (path / "corpus.jsonl").is_file() else path / "corpus.parquet"
    if not path.is_file():
        raise ValueError(f"no corpus at {path}: give corpus.jsonl, corpus.parquet or their folder (magic synth)")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
        return [{**r, "tools": json.loads(r["tools"]), "kwargs": json.loads(r["kwargs"])} for r in rows]
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSONL: {error}") from error


def render(tokenizer, sample: dict) -> str:
    native = "tools" in (tokenizer.chat_template or "")
    messages = sample["messages"] if native else without_template_tools(sample["messages"], sample["tools"])
    return tokenizer.apply_chat_template(messages, tools=sample["tools"] if native else None, tokenize=False)


def assistant_header(tokenizer) -> str:
    """What the template writes before an assistant turn (e.g. `<|im_start|>assistant\n`)."""
    probe = [{"role": "user", "content": "x"}]
    asked = tokenizer.apply_chat_template(probe, add_generation_prompt=True, tokenize=False)
    return asked[len(tokenizer.apply_chat_template(probe, tokenize=False)):]


def assistant_spans(text: str, header: str, turns: int, ends: tuple[str, ...]) -> list[tuple[int, int]]:
    """Character spans of the `turns` assistant turns in the rendered `text`: after each assistant header, through
    the end-of-turn marker. Whatever the template kept of the turn is the target."""
    spans, cursor = [], 0
    for _ in range(turns):
        at = text.find(header, cursor)
        if at < 0:
            raise ValueError(f"the chat template rendered fewer than {turns} assistant turns")
        start = at + len(header)
        closes = [(text.find(m, start), m) for m in ends if m and text.find(m, start) >= 0]
        stop, marker = min(closes) if closes else (len(text), "")
        spans.append((start, stop + len(marker)))
        cursor = stop + len(marker)
    return spans


def encode(tokenizer, sample: dict, max_length: int) -> dict | None:
    """input_ids and labels of one sample, or None when it is longer than `max_length` tokens."""
    text = render(tokenizer, sample)
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = encoding["input_ids"]
    if len(ids) > max_length:
        return None
    turns = sum(m["role"] == "assistant" for m in sample["messages"])
    spans = assistant_spans(text, assistant_header(tokenizer), turns, END_OF_TURN)
    labels, s = [IGNORE] * len(ids), 0
    for i, (a, b) in enumerate(encoding["offset_mapping"]):
        while s < len(spans) and spans[s][1] <= a:
            s += 1
        if s < len(spans) and a < spans[s][1] and b > spans[s][0]:
            labels[i] = ids[i]
    return {"input_ids": ids, "labels": labels}


def trainable(tokenizer, sample: dict, max_length: int) -> dict | None:
    """`encode`, or None when the sample is too long or has no target token (both trainers leave those out)."""
    example = encode(tokenizer, sample, max_length)
    return example if example is not None and any(x != IGNORE for x in example["labels"]) else None
