"""`magic sft`: supervised fine-tuning on the synthetic corpus with transformers, for CPU-sized models.

    magic sft --corpus data/corpus --model smollm2 --out runs/sft-smollm2 [--max-steps 200] [--lr 2e-5] ...

Loss on assistant tokens only, with the chat template evaluation and RL use (data.py); AdamW with the paper's
weight decay 0.01 and betas (0.9, 0.95); linear warm-up then cosine decay; gradient accumulation. Every
`save_every` optimiser steps the model, optimiser, scheduler, RNG and data position are checkpointed atomically,
and a rerun with the same `--out` resumes exactly: the loss curve continues as if never stopped. `DIR/log.jsonl`
holds one line per optimiser step (loss, lr, grad norm, tokens/s); `DIR/final/` is a checkpoint `magic eval
--policy hf:DIR/final` plays.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from magic_sft.data import IGNORE, load_corpus, model_folder, trainable
from magic_sft.moe import Balance, RouterProbe, routers
from magic_sft.runs import parse_config, resume, save, save_final


@dataclass
class SFTConfig:
    corpus: str = ""
    """corpus.jsonl / corpus.parquet from `magic synth`, or their folder"""
    out: str = ""
    """run folder: checkpoints, log.jsonl, final/ (a rerun resumes it)"""
    model: str = "smollm2"
    """`smollm2` (the embedded SmolLM2-135M-Instruct), a checkpoint folder, `tiny-qwen3[-moe][:SIZE]` (random
    weights from a config, SIZE tiny | small | balance; for tests and from-scratch runs) or `tiny-smollm2[:SIZE]`
    (SmolLM2's tokenizer on fewer, narrower layers, random; SIZE tiny | rl)"""
    families: str = ""
    """comma-separated families to keep (e.g. `scheduling,alfworld`); empty keeps all"""
    max_length: int = 2048
    """samples with more tokens are left out (counted in the log)"""
    micro_batch_size: int = 4
    grad_accum: int = 4
    """micro-batches per optimiser step"""
    epochs: int = 1
    max_steps: int = 0
    """optimiser steps; 0: as many as `epochs` give"""
    lr: float = 2e-5
    min_lr_ratio: float = 0.1
    """the cosine decays to lr * min_lr_ratio"""
    warmup_ratio: float = 0.03
    weight_decay: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.95
    max_grad_norm: float = 1.0
    seed: int = 0
    save_every: int = 50
    """optimiser steps between checkpoints"""
    dtype: str = "float32"
    lb_micro: float = 0.0
    """MoE: coefficient of the micro-batch load-balancing loss (moe.py)"""
    lb_global: float = 0.0
    """MoE: coefficient of the global-batch load-balancing loss"""
    lb_sequence: float = 0.0
    """MoE: coefficient of the sequence-level load-balancing loss"""
    lb_variance: float = 0.0
    """MoE: coefficient of the variance loss on expected expert loads"""
    lb_z: float = 0.0
    """MoE: coefficient of the router z-loss"""
    capacity_factor: float = 0.0
    """MoE: expert capacity factor with token dropping; 0 = no capacity limit"""
    threads: int = 0
    """torch CPU threads; 0 keeps torch's default"""


def load_model(spec: str, dtype: str):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = model_folder(spec)
    tokenizer = AutoTokenizer.from_pretrained(spec)
    model = AutoModelForCausalLM.from_pretrained(spec, dtype=getattr(torch, dtype))
    return model, tokenizer


def batches(examples: list[dict], config: SFTConfig, epoch: int) -> list[list[dict]]:
    """The micro-batches of one epoch, in a seeded order (so a resumed run sees the same ones). Length-grouped:
    each window of 64 micro-batches is sorted by length before it is cut, so a micro-batch pads little, and the
    micro-batches are shuffled again."""
    rng, size = random.Random(config.seed * 1000 + epoch), config.micro_batch_size
    order = list(range(len(examples)))
    rng.shuffle(order)
    groups = []
    for k in range(0, len(order), 64 * size):
        window = sorted(order[k:k + 64 * size], key=lambda i: len(examples[i]["input_ids"]))
        groups += [[examples[i] for i in window[j:j + size]] for j in range(0, len(window), size)]
    rng.shuffle(groups)
    return groups


def collate(batch: list[dict], pad: int) -> dict[str, torch.Tensor]:
    width = max(len(e["input_ids"]) for e in batch)
    ids = torch.tensor([e["input_ids"] + [pad] * (width - len(e["input_ids"])) for e in batch])
    labels = torch.tensor([e["labels"] + [IGNORE] * (width - len(e["labels"])) for e in batch])
    mask = torch.tensor([[1] * len(e["input_ids"]) + [0] * (width - len(e["input_ids"])) for e in batch])
    return {"input_ids": ids, "labels": labels, "attention_mask": mask}


def schedule(config: SFTConfig, total: int):
    warmup = max(1, int(config.warmup_ratio * total))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return config.min_lr_ratio + (1 - config.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
    return factor


def balance_of(config: SFTConfig) -> Balance:
    return Balance(micro=config.lb_micro, global_batch=config.lb_global, sequence=config.lb_sequence,
                   variance=config.lb_variance, z=config.lb_z, capacity=config.capacity_factor)


def micro_loss(model, batch: dict, total_targets: int) -> torch.Tensor:
    """Sum of token losses over the optimiser step's targets, divided by their count: every assistant token of
    the step weighs the same, however the micro-batches split them. The output layer runs on target positions
    only: with a 150k-token vocabulary, logits for every position would cost more than the model."""
    hidden = model.base_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])[0][:, :-1]
    labels = batch["labels"][:, 1:]
    targets = labels != IGNORE
    logits = model.get_output_embeddings()(hidden[targets])
    return torch.nn.functional.cross_entropy(logits.float(), labels[targets], reduction="sum") / total_targets


def train(config: SFTConfig) -> Path:
    out = Path(config.out)
    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    model, tokenizer = load_model(config.model, config.dtype)
    families = {f for f in config.families.split(",") if f}
    samples = [s for s in load_corpus(Path(config.corpus)) if not families or s["family"] in families]
    encoded = [(trainable(tokenizer, s, config.max_length), s["family"]) for s in samples]
    examples = [{**e, "family": family} for e, family in encoded if e is not None]
    if not examples:
        raise ValueError(f"no sample of {config.corpus} fits max_length={config.max_length} (and the families)")
    per_epoch = math.ceil(math.ceil(len(examples) / config.micro_batch_size) / config.grad_accum)
    total = config.max_steps or per_epoch * config.epochs
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "norm" not in n]
    rest = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "norm" not in n)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": rest, "weight_decay": 0.0}], lr=config.lr,
                                  betas=(config.beta1, config.beta2))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule(config, total))
    step, saved = resume(out, config, model=model, optimizer=optimizer, scheduler=scheduler)
    if saved:
        torch.set_rng_state(saved["rng"])
    probe = RouterProbe(model, balance_of(config)) if routers(model) else None  # MoE: balancing and MaxVio
    if probe:
        probe.family_counts = saved.get("expert_counts", {})  # the heatmap covers every step, across resumes
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    print(f"magic sft: {len(examples)} samples ({len(samples) - len(examples)} left out), {total} steps of "
          f"{config.micro_batch_size} x {config.grad_accum}, starting at step {step}", file=sys.stderr)
    model.train()
    began = time.perf_counter()
    with (out / "log.jsonl").open("a") as log:
        while step < total:
            epoch, index = divmod(step * config.grad_accum, len(batches(examples, config, 0)))
            order = batches(examples, config, epoch)
            group = [order[(index + k) % len(order)] for k in range(config.grad_accum)]
            micro = [collate(b, pad) for b in group]
            targets = sum(int((m["labels"][:, 1:] != IGNORE).sum()) for m in micro)
            start, loss, parts = time.perf_counter(), 0.0, []
            for batch, m in zip(group, micro):
                if probe:
                    probe.begin(m["attention_mask"], [e["family"] for e in batch])
                part = micro_loss(model, m, targets)
                loss += part.item()
                if probe:
                    balancing, logged = probe.loss()
                    part = part + balancing / len(micro)
                    parts.append(logged)
                part.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            tokens = sum(int(m["attention_mask"].sum()) for m in micro)
            row = {"step": step, "epoch": epoch, "loss": loss, "lr": scheduler.get_last_lr()[0],
                   "grad_norm": float(norm), "tokens": tokens, "tokens_per_s": tokens / (time.perf_counter() - start),
                   "elapsed": time.perf_counter() - began}  # this process's wall time: data, logging, checkpoints
            if probe:
                row |= {name: sum(p[name] for p in parts) / len(parts) for name in parts[0]}
                row["maxvio_global"] = probe.end_step()
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(f"step {step}/{total} loss {loss:.4f} lr {row['lr']:.2e} {row['tokens_per_s']:.0f} tok/s",
                  file=sys.stderr)
            if step % config.save_every == 0 or step == total:
                save(out, config, step, model=model, optimizer=optimizer, scheduler=scheduler,
                     rng=torch.get_rng_state(), **({"expert_counts": probe.family_counts} if probe else {}))
    if probe and probe.family_counts:  # none when a finished run from before counts were saved is reopened
        save_heatmap(out, probe)
    return save_final(out, model, tokenizer)


def save_heatmap(out: Path, probe: RouterProbe) -> None:
    """Expert-selection frequency per task family (rows) and expert (columns), summed over layers and over every
    training step: JSON and PNG."""
    families = sorted(probe.family_counts)
    table = [(probe.family_counts[f].sum(0) / probe.family_counts[f].sum()).tolist() for f in families]
    (out / "expert_heatmap.json").write_text(json.dumps({"families": families, "frequency": table}) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(4, len(table[0]) * 0.35), 1 + 0.4 * len(families)))
    image = ax.imshow(table, aspect="auto", cmap="viridis")
    ax.set_yticks(range(len(families)), families)
    ax.set_xticks(range(len(table[0])))
    ax.set_xlabel("expert")
    fig.colorbar(image, ax=ax, label="selection frequency")
    fig.tight_layout()
    fig.savefig(out / "expert_heatmap.png", dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    config = parse_config(SFTConfig, argv, "magic sft", __doc__, required=("corpus", "out"))
    try:
        final = train(config)
    except ValueError as error:
        raise SystemExit(f"magic sft: {error}") from error
    print(f"magic sft: model in {final} (magic eval --policy hf:{final})")
    return 0
