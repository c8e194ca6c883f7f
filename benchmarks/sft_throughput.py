"""`magic sft`'s training speed beside a bare forward/backward loop on the same micro-batches, in one run.

    python -m benchmarks.sft_throughput --corpus DIR [--model smollm2] [--steps 8] [--micro-batch-size 2] ...

The bare loop is what a user would write: the model's own loss (`model(input_ids, labels=...)`, logits at every
position), backward, AdamW, over the micro-batches the trainer draws, timed end to end. The trainer runs the same
steps through `magic_sft.train.train` (data order, assistant-only loss, logging, checkpoints) and is timed by its
own log's wall clock. Bare loop before and after the trainer; the ratio uses their mean.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from magic_sft.data import IGNORE, encode, load_corpus
from magic_sft.train import SFTConfig, batches, collate, load_model, train


def bare_loop(config: SFTConfig) -> tuple[int, float]:
    torch.manual_seed(config.seed)
    model, tokenizer = load_model(config.model, config.dtype)
    encoded = [encode(tokenizer, s, config.max_length) for s in load_corpus(Path(config.corpus))]
    examples = [e for e in encoded if e is not None and any(x != IGNORE for x in e["labels"])]
    order = batches(examples, config, 0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, betas=(config.beta1, config.beta2),
                                  weight_decay=config.weight_decay)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    model.train()
    tokens, start = 0, time.perf_counter()
    for step in range(config.max_steps):
        for k in range(config.grad_accum):
            batch = collate(order[(step * config.grad_accum + k) % len(order)], pad)
            model(**batch).loss.div(config.grad_accum).backward()
            tokens += int(batch["attention_mask"].sum())
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return tokens, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--micro-batch-size", type=int, default=2)
    parser.add_argument("--grad-accum", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        config = SFTConfig(corpus=args.corpus, out=folder, model=args.model, max_steps=args.steps,
                           micro_batch_size=args.micro_batch_size, grad_accum=args.grad_accum,
                           max_length=args.max_length, save_every=10**9)
        first = bare_loop(config)
        train(config)
        rows = [json.loads(line) for line in (Path(folder) / "log.jsonl").read_text().splitlines()]
        second = bare_loop(config)
    trainer = sum(r["tokens"] for r in rows) / rows[-1]["elapsed"]
    bare = (first[0] + second[0]) / (first[1] + second[1])
    print(f"| model | steps x micro-batches | bare loop tokens/s | magic sft tokens/s | ratio |\n|---|---|---:|---:|---:|\n"
          f"| {args.model} | {args.steps} x {args.grad_accum} x {args.micro_batch_size} | {bare:,.0f} | "
          f"{trainer:,.0f} | {trainer / bare:.2f} |")


if __name__ == "__main__":
    main()
