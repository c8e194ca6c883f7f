"""`magic rl`'s rollout speed with and without prefix caching and folded decoding attention, on the same step's
episodes, in one run.

    python -m benchmarks.rl_throughput --model runs/sft/final --tasks calendar.jsonl --envs magic/ToolPlan-v0 \
        [--env-kwargs JSON] [--group-size 4] [--groups-per-family 2] [--turn-tokens 384] [--response-tokens 1536]

Three engines play the trainer's first step (the same tasks and seeds) with the same model: every prompt read whole
with transformers' SDPA; prompts read from the keys and values of the call's earlier prompts (magic_rl/engine.py);
and that with folded decoding attention (benchmarks/policies/folded_attention.py), the trainer's engine. Greedy by
default, so all do the same work (sampled, a last-digit difference in a logit can change a token, and the episode
from there on). Prints prompt tokens read, tokens generated, seconds, speed-ups over the first, and how many episodes
came out token for token as the first's.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from magic_rl.engine import LocalEngine
from magic_rl.tasks import TaskSchedule, load_static
from magic_rl.trainer import EnvPool


def rollout(engine: LocalEngine, schedule: TaskSchedule, args) -> tuple[list, float, int]:
    """One step's episodes: trajectories, seconds, and prompt tokens the model read."""
    episodes = EnvPool().take(schedule.step(0), args.group_size)
    read = []
    sample = engine.sample

    def counting(prompts, caps, round_):  # what each round's prefill reads: cached prefixes excepted
        before = engine.prefixes.read_tokens if engine.prefixes else 0
        out = sample(prompts, caps, round_)
        read.append(engine.prefixes.read_tokens - before + len(prompts) if engine.prefixes
                    else max(map(len, prompts)) * len(prompts))
        return out
    engine.sample = counting
    began = time.perf_counter()
    trajectories = engine.play(episodes, seed=args.seed, turn_tokens=args.turn_tokens,
                               response_tokens=args.response_tokens)
    return trajectories, time.perf_counter() - began, sum(read)


def main(argv: list[str] | None = None) -> int:
    from magic_sft.train import load_model

    parser = argparse.ArgumentParser(prog="python -m benchmarks.rl_throughput", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--envs", default="magic/Calendar-v0", help="comma-separated live envs")
    parser.add_argument("--env-kwargs", default="{}", help="JSON: make kwargs per env id")
    parser.add_argument("--tasks", default="", help="a static dataset mixed in, as `magic rl --tasks`")
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--groups-per-family", type=int, default=2)
    parser.add_argument("--turn-tokens", type=int, default=384)
    parser.add_argument("--response-tokens", type=int, default=1536)
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        schedule = TaskSchedule([e for e in args.envs.split(",") if e], json.loads(args.env_kwargs),
                                load_static(args.tasks) if args.tasks else [], args.groups_per_family, 0)
        model, tokenizer = load_model(args.model, "float32")
    except ValueError as error:
        raise SystemExit(f"rl_throughput: {error}") from error
    results = {}
    for name, cache, folded in (("prompts read whole, SDPA", 0, False), ("prefix caching, SDPA", 32768, False),
                                ("prefix caching, folded decoding (magic rl)", 32768, True)):
        model.set_attn_implementation("sdpa")
        torch.manual_seed(0)
        engine = LocalEngine(model, tokenizer, args.temperature, prefix_cache_tokens=cache, folded_attention=folded)
        results[name] = rollout(engine, schedule, args)
    print("| engine | episodes | prompt tokens read | tokens generated | seconds | speed-up | same episodes |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    first, first_seconds, _ = next(iter(results.values()))
    for name, (trajectories, seconds, read) in results.items():
        generated = sum(sum(t.response_mask) for t in trajectories)
        alike = sum(a.response_ids == b.response_ids for a, b in zip(first, trajectories))
        print(f"| {name} | {len(trajectories)} | {read:,} | {generated:,} | {seconds:.0f} | "
              f"{first_seconds / seconds:.2f}x | {alike}/{len(first)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
