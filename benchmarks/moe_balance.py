"""A miniature of the paper's Table 6: MoE load-balancing strategies compared on one budget, from scratch, on CPU.

    magic synth --config magic_sft/configs/table6.toml --out runs/corpus-table6
    python -m benchmarks.moe_balance --corpus runs/corpus-table6 --out runs/table6 [--steps 40] [--episodes 10]

A Qwen3-MoE with 16 experts, top-2 (`tiny-qwen3-moe:balance`, random init) is trained by `magic sft` under each
strategy with the same data order, steps and seed: baseline (no balancing), micro-batch, global-batch and
sequence-level load-balancing losses, the variance loss, router z-loss, expert capacity 1.0 with token dropping, and
global + z-loss. Then each model is scored on held-out test-split tasks of every family in the corpus: assistant-token
loss per family (from `magic synth` on the test split), and success under `magic eval` for the single-turn families
(Calendar, ToolCall, Decompose; a model this small and this briefly trained rarely succeeds, so the loss is the
informative column). How much the families specialise experts is the mean total-variation distance between the
families' expert-selection frequencies over training (0: every family routes alike; 1: disjoint experts). Reported:
the table (Markdown, stdout and OUT/table6.md), MaxVio curves (global batch, per step) in OUT/maxvio.png, and each
strategy's expert-by-family heatmap in OUT/<strategy>/expert_heatmap.png. Every run resumes after a kill.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from dataclasses import replace
from pathlib import Path

import torch

STRATEGIES = {
    "baseline": {},
    "micro": {"lb_micro": 0.01},
    "global": {"lb_global": 0.01},
    "sequence": {"lb_sequence": 0.01},
    "variance": {"lb_variance": 0.01},
    "z-loss": {"lb_z": 0.001},
    "capacity": {"capacity_factor": 1.0},
    "global + z-loss": {"lb_global": 0.01, "lb_z": 0.001},
}
# One env per family for the held-out sets; success is played only on the single-turn ones (on a CPU, a multi-turn
# family's thousands of prompt tokens per turn cost more than the training itself).
HELDOUT_ENVS = {"scheduling": "magic/Calendar-v0", "tool_planning": "magic/ToolCall-v0",
                "decomposition": "magic/Decompose-v0", "procedures": "magic/Retail-v0",
                "tool_execution": "magic/Workspace-v0", "alfworld": "magic/ALFWorld-v0"}
EVAL_ENVS = {f: HELDOUT_ENVS[f] for f in ("scheduling", "tool_planning", "decomposition")}


def heldout(final: Path, corpus: Path, max_length: int) -> tuple[dict, float]:
    """Assistant-token loss per family on held-out samples, and MaxVio over all of their tokens."""
    from magic_sft.data import IGNORE, encode, load_corpus
    from magic_sft.moe import Balance, RouterProbe
    from magic_sft.train import collate, load_model, micro_loss

    model, tokenizer = load_model(str(final), "float32")
    model.eval()
    probe, sums = RouterProbe(model, Balance()), {}
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    with torch.no_grad():
        for sample in load_corpus(corpus):
            example = encode(tokenizer, sample, max_length)
            if example is None:
                continue
            batch = collate([example], pad)
            targets = int((batch["labels"][:, 1:] != IGNORE).sum())
            probe.begin(batch["attention_mask"], [sample["family"]])
            loss = micro_loss(model, batch, 1).item()
            probe.loss()
            total, count = sums.get(sample["family"], (0.0, 0))
            sums[sample["family"]] = (total + loss, count + targets)
    return {f: total / count for f, (total, count) in sorted(sums.items())}, probe.end_step()


def specialisation(heatmap: Path) -> float:
    """Mean total-variation distance between the families' expert-selection frequencies (rows of the heatmap)."""
    rows = json.loads(heatmap.read_text())["frequency"]
    pairs = [(a, b) for i, a in enumerate(rows) for b in rows[i + 1:]]
    return sum(0.5 * sum(abs(x - y) for x, y in zip(a, b)) for a, b in pairs) / max(1, len(pairs))


def success(final: Path, families: list[str], episodes: int, out: Path) -> dict:
    """Success rate per family under `magic eval` (test split, fixed seeds)."""
    from benchmarks.eval import main as magic_eval

    envs = [EVAL_ENVS[f] for f in families if f in EVAL_ENVS]
    args = [x for env in envs for x in ("--env", env)]
    with contextlib.redirect_stdout(io.StringIO()):  # its own tables; the numbers are read back below
        magic_eval([*args, "--policy", f"hf:{final}", "--episodes", str(episodes), "--out", str(out), "--no-progress",
                    "--policy-arg", "max_new_tokens=256"])
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    return {f: sum(r["success"] for r in rows if r["env_id"] == EVAL_ENVS[f]) /
            max(1, sum(r["env_id"] == EVAL_ENVS[f] for r in rows)) for f in families if f in EVAL_ENVS}


def main(argv: list[str] | None = None) -> int:
    from magic_sft.synth import SynthConfig, synthesize
    from magic_sft.train import SFTConfig, train

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, help="the training corpus (magic synth, train split)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--micro-batch-size", type=int, default=4)
    parser.add_argument("--grad-accum", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=2048)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--heldout-samples", type=int, default=60, help="test-split samples for held-out loss")
    parser.add_argument("--episodes", type=int, default=10, help="test episodes per family for success")
    parser.add_argument("--only", nargs="*", help="a subset of the strategies (names as in the table)")
    args = parser.parse_args(argv)
    from magic_sft.data import load_corpus

    families = sorted({s["family"] for s in load_corpus(Path(args.corpus))})
    mixture = {HELDOUT_ENVS[f]: 1.0 for f in families if f in HELDOUT_ENVS}
    synthesize(SynthConfig(mixture=mixture, samples=args.heldout_samples, split="test", tokenizer="none"),
               args.out / "heldout", progress=False)
    base = SFTConfig(corpus=args.corpus, model="tiny-qwen3-moe:balance", max_steps=args.steps,
                     micro_batch_size=args.micro_batch_size, grad_accum=args.grad_accum, max_length=args.max_length,
                     lr=args.lr, warmup_ratio=0.1, save_every=10)
    results = {}
    for name, overrides in STRATEGIES.items():
        if args.only and name not in args.only:
            continue
        folder = args.out / name.replace(" ", "").replace("+", "_")
        final = train(replace(base, out=str(folder), **overrides))
        log = [json.loads(line) for line in (folder / "log.jsonl").read_text().splitlines()]
        losses, maxvio_heldout = heldout(final, args.out / "heldout", args.max_length)
        tail = log[-max(1, len(log) // 5):]
        results[name] = {"log": log, "heldout_loss": losses, "maxvio_heldout": maxvio_heldout,
                         "maxvio_micro": sum(r["maxvio_micro"] for r in tail) / len(tail),
                         "maxvio_global": sum(r["maxvio_global"] for r in tail) / len(tail),
                         "specialisation": specialisation(folder / "expert_heatmap.json"),
                         "success": success(final, families, args.episodes, folder / "eval")}
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    text = table(results, families, args)
    (args.out / "table6.md").write_text(text)
    plot(results, args.out / "maxvio.png")
    print(text, end="")
    return 0


def table(results: dict, families: list[str], args) -> str:
    head = (["strategy"] + [f"{f} loss" for f in families] + [f"{f} success" for f in families if f in EVAL_ENVS] +
            ["MaxVio micro", "MaxVio global", "MaxVio held-out", "family specialisation"])
    lines = [f"Held-out assistant-token loss and success ({args.episodes} test episodes per family), MaxVio over the "
             f"last fifth of {args.steps} steps; tiny-qwen3-moe:balance from scratch.", "",
             "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for name, r in results.items():
        cells = ([f"{r['heldout_loss'].get(f, float('nan')):.3f}" for f in families] +
                 [f"{r['success'][f]:.2f}" for f in families if f in EVAL_ENVS] +
                 [f"{r['maxvio_micro']:.3f}", f"{r['maxvio_global']:.3f}", f"{r['maxvio_heldout']:.3f}",
                  f"{r['specialisation']:.3f}"])
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, r in results.items():
        ax.plot([row["step"] for row in r["log"]], [row["maxvio_global"] for row in r["log"]], label=name)
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("MaxVio (global batch)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
