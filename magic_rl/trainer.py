r"""`magic rl`: the local trainer, multi-objective GRPO / GiGPO / chi-PO on one machine (CPU or one GPU).

    magic rl --model runs/sft/final --envs magic/Calendar-v0 --tasks toolcall.parquet --algorithm chi_po \
        --out runs/rl-chi-po [--steps 40] [--group-size 4] [--groups-per-family 2] ...

Each step draws `groups-per-family` tasks from every family (live envs' train split, and rows of static datasets:
tasks.py), plays `group-size` episodes of each with the policy (runner.py through engine.py: one batched sample
per round), scores every episode on the named objectives (rewards.py), turns them into per-token advantages and
takes one optimiser step on the policy loss (algorithms.py) over every model token of the batch; observation tokens
are never trained on. The reference policy, when the algorithm needs one, is the starting model, frozen.
`OUT/log.jsonl` gets one line per step (rewards per objective and family, success, the groups whose scores differ, loss
terms, think and action entropy, lengths, truncations, lr, times), `OUT/curves.png` their plots; checkpoints every
`save-every` steps, and a rerun with the same `--out` resumes to the same curve (with more `--steps` it extends a
finished run); `OUT/final/` plays under `magic eval --policy hf:`.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import gymnasium
import numpy as np
import torch

from magic_rl.algorithms import (AlgorithmConfig, episode_weights, policy_loss, running_average, step_advantages,
                                 token_advantages)
from magic_rl.engine import LocalEngine
from magic_rl.rewards import OBJECTIVES, RewardConfig, group_advantages, objectives, scalar
from magic_rl.tasks import TaskSchedule, load_static


@dataclass
class RLConfig(RewardConfig, AlgorithmConfig):
    out: str = ""
    """run folder: checkpoints, log.jsonl, curves.png, final/ (a rerun resumes it)"""
    model: str = "smollm2"
    """the policy to start from: a checkpoint folder (e.g. `magic sft`'s RUN/final), `smollm2`, `tiny-smollm2` or
    `tiny-qwen3`"""
    envs: str = "magic/Calendar-v0"
    """comma-separated live envs (train split, seeded tasks)"""
    env_kwargs: str = "{}"
    """JSON: make kwargs per env id, e.g. {"magic/ToolPlan-v0": {"category": "general"}}"""
    tasks: str = ""
    """a static dataset (JSONL or parquet rows: env_id, task or seed, kwargs) mixed into the same steps"""
    steps: int = 20
    groups_per_family: int = 2
    """task groups per family per step"""
    group_size: int = 4
    """episodes per task (the group whose rewards are normalised together)"""
    turn_tokens: int = 384
    """tokens per model turn"""
    response_tokens: int = 1024
    """tokens per episode after the first prompt, model and observation tokens together"""
    temperature: float = 1.0
    """sampling temperature of the episodes; the loss scores tokens at the same temperature, so the trained policy
    is the one that sampled them"""
    lr: float = 1e-6
    warmup_steps: int = 0
    """steps over which the lr rises linearly to `lr`: Adam's first steps move every weight by about the lr, so a
    batch scored by a policy that RL has not yet moved can move it far"""
    weight_decay: float = 0.0
    freeze_embeddings: bool = False
    """leave the token embedding and the output layer (one tied matrix in SmolLM2 and the tiny models) as they are:
    Adam moves every weight it trains by about the lr a step, so on a small batch whose signal is weak the rows of
    the tokens a policy copies (digits, ids) drift at random"""
    updates: int = 1
    """optimiser steps per batch (PPO epochs; 1 is on-policy and needs no second forward pass)"""
    micro_batch_size: int = 4
    """episodes per forward/backward pass"""
    max_grad_norm: float = 1.0
    seed: int = 0
    save_every: int = 5
    threads: int = 0
    """torch CPU threads; 0 keeps torch's default"""

    def __post_init__(self):
        RewardConfig.__post_init__(self)
        AlgorithmConfig.__post_init__(self)
        if self.warmup_steps < 0:
            raise ValueError(f"warmup_steps must be >= 0, not {self.warmup_steps}")
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0 (RL samples its episodes), not {self.temperature}")

    def part(self, cls):
        return cls(**{f.name: getattr(self, f.name) for f in fields(cls)})


class EnvPool:
    """Env instances reused across steps: one per (env id, kwargs) and slot of a step."""

    def __init__(self):
        self.envs: dict[tuple, list] = {}

    def take(self, tasks, copies: int) -> list[tuple]:
        used: dict[tuple, int] = {}
        episodes = []
        for task in tasks:
            key = (task.env_id, task.kwargs)
            for _ in range(copies):
                pool, i = self.envs.setdefault(key, []), used.get(key, 0)
                if i == len(pool):
                    pool.append(gymnasium.make(task.env_id, split="train", **json.loads(task.kwargs)))
                used[key] = i + 1
                episodes.append((pool[i], task.seed, task.reset_options))
        return episodes


def response_stats(model, rows: list[tuple[list[int], list[int]]], pad: int, temperature: float = 1.0
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probability and entropy of every response token ([rows, longest response]; 0 past a row's end) under the
    distribution sampled at `temperature` (as the engine and verl's actor do). The output layer runs on response
    positions only."""
    width = max(len(p) + len(r) for p, r in rows)
    longest = max(len(r) for _, r in rows)
    ids = torch.tensor([p + r + [pad] * (width - len(p) - len(r)) for p, r in rows])
    mask = torch.tensor([[1] * (len(p) + len(r)) + [0] * (width - len(p) - len(r)) for p, r in rows])
    hidden = model.base_model(input_ids=ids, attention_mask=mask)[0]
    # position len(p) - 1 + k predicts response token k
    positions = torch.tensor([[len(p) - 1 + min(k, max(len(r) - 1, 0)) for k in range(longest)] for p, r in rows])
    targets = torch.tensor([r + [pad] * (longest - len(r)) for _, r in rows])
    logits = model.get_output_embeddings()(hidden[torch.arange(len(rows))[:, None], positions]).float() / temperature
    logsm = torch.log_softmax(logits, -1)
    return logsm.gather(-1, targets[..., None])[..., 0], -(logsm.exp() * logsm).sum(-1)


def make_optimizer(model, config: RLConfig) -> torch.optim.Optimizer:
    """AdamW over the weights RL trains: all of them, or all but the embeddings (`freeze_embeddings`)."""
    if config.freeze_embeddings:
        for layer in (model.get_input_embeddings(), model.get_output_embeddings()):
            if layer is not None:
                layer.weight.requires_grad_(False)
    trained = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.AdamW(trained, lr=config.lr, weight_decay=config.weight_decay)


def padded(rows: list[list], width: int) -> torch.Tensor:
    return torch.tensor([list(r) + [0] * (width - len(r)) for r in rows], dtype=torch.float32)


def update(model, reference, optimizer, trajectories, advantages, config: RLConfig, average, pad: int) -> dict:
    """One optimiser step per `updates` on every model token of the batch, each token weighing the same (under
    seq-mean-token-mean the caller has scaled each episode's advantages: `episode_weights`)."""
    algorithm = config.part(AlgorithmConfig)
    order = sorted((i for i, t in enumerate(trajectories) if sum(t.response_mask)),
                   key=lambda i: len(trajectories[i].prompt_ids) + len(trajectories[i].response_ids))
    chunks = [order[k:k + config.micro_batch_size] for k in range(0, len(order), config.micro_batch_size)]
    total = sum(sum(trajectories[i].response_mask) for i in order)
    rows = {i: (trajectories[i].prompt_ids, trajectories[i].response_ids) for i in order}

    def scored(policy, chunk):
        return response_stats(policy, [rows[i] for i in chunk], pad, config.temperature)
    with torch.no_grad():
        old = {tuple(c): scored(model, c)[0] for c in chunks} if config.updates > 1 else {}
        ref = {tuple(c): scored(reference, c)[0] for c in chunks} if reference else {}
    logged: dict[str, float] = {}
    for _ in range(config.updates):
        for chunk in chunks:
            logp, entropy = scored(model, chunk)
            width = logp.shape[1]
            tokens = sum(sum(trajectories[i].response_mask) for i in chunk)
            loss, metrics = policy_loss(
                algorithm, logp, old.get(tuple(chunk), logp.detach()), padded([advantages[i] for i in chunk], width),
                padded([trajectories[i].response_mask for i in chunk], width),
                padded([trajectories[i].think_mask for i in chunk], width), entropy, ref.get(tuple(chunk)), average)
            (loss * tokens / total).backward()
            for name, value in metrics.items():  # token counts add up; the rest are means over the batch's tokens
                weight = 1 if name in ("think_tokens", "action_tokens") else tokens / total
                logged[name] = logged.get(name, 0.0) + value * weight / config.updates
        logged["grad_norm"] = float(torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm))
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return logged


def step_row(step, tasks, trajectories, values, config: RLConfig) -> dict:
    """What one step logs about its episodes: rewards per objective and family, success, the share of groups whose
    scores differ, lengths, truncations."""
    reward = config.part(RewardConfig)
    families = [t.family for t in tasks for _ in range(config.group_size)]
    row = {"step": step, "episodes": len(trajectories), "reward": float(np.mean([scalar(v, reward) for v in values]))}
    row |= {f"objective/{name}": float(np.mean([v[name] for v in values])) for name in OBJECTIVES}
    for family in sorted(set(families)):
        mine = [i for i, f in enumerate(families) if f == family]
        row[f"success/{family}"] = float(np.mean([trajectories[i].success for i in mine]))
        row[f"score/{family}"] = float(np.mean([trajectories[i].score for i in mine]))
        # the groups whose task scores differ: the others give the task objective no advantage to learn from
        groups = [mine[k:k + config.group_size] for k in range(0, len(mine), config.group_size)]
        row[f"mixed_groups/{family}"] = float(np.mean([len({trajectories[i].score for i in g}) > 1 for g in groups]))
    row["response_tokens"] = float(np.mean([sum(t.response_mask) for t in trajectories]))
    row["think_tokens"] = float(np.mean([sum(t.think_mask) for t in trajectories]))
    row["action_tokens"] = row["response_tokens"] - row["think_tokens"]
    row["turns"] = float(np.mean([len(t.turns) for t in trajectories]))
    row["cut_turns"] = sum(turn["cut"] for t in trajectories for turn in t.turns)
    row["truncated"] = sum(bool(t.truncated) for t in trajectories)
    return row


def train(config: RLConfig) -> Path:
    from magic_rl.plots import plot_run
    from magic_sft.runs import resume, save, save_final
    from magic_sft.train import load_model

    out = Path(config.out)
    if config.threads:
        torch.set_num_threads(config.threads)
    schedule = TaskSchedule([e for e in config.envs.split(",") if e], json.loads(config.env_kwargs),
                            load_static(config.tasks) if config.tasks else [], config.groups_per_family, config.seed)
    model, tokenizer = load_model(config.model, "float32")
    reference = None
    if config.part(AlgorithmConfig).needs_reference:
        reference = load_model(config.model, "float32")[0].eval().requires_grad_(False)
    optimizer = make_optimizer(model, config)
    # --steps may change on a rerun: the lr follows the step index alone (no decay), as the tasks do, so more steps
    # extend the curve
    step, saved = resume(out, config, ignore=("threads", "steps"), model=model, optimizer=optimizer)
    average = saved.get("action_entropy_avg")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    engine, pool = LocalEngine(model, tokenizer, config.temperature), EnvPool()
    reward = config.part(RewardConfig)
    print(f"magic rl: {config.algorithm}, families {', '.join(schedule.families)}, {config.steps} steps of "
          f"{config.groups_per_family} x {config.group_size} episodes per family, starting at step {step}",
          file=sys.stderr)
    model.train()
    with (out / "log.jsonl").open("a") as log:
        while step < config.steps:
            began = time.perf_counter()
            tasks = schedule.step(step)
            episodes = pool.take(tasks, config.group_size)
            for group in optimizer.param_groups:
                group["lr"] = config.lr * min(1.0, (step + 1) / max(config.warmup_steps, 1))
            trajectories = engine.play(episodes, seed=config.seed * 1_000_003 + step, turn_tokens=config.turn_tokens,
                                       response_tokens=config.response_tokens)
            played = time.perf_counter()
            groups = [i // config.group_size for i in range(len(trajectories))]
            limits = [env.spec.max_episode_steps or 100 for env, _, _ in episodes]
            values = [objectives(t, env.unwrapped.progress_metrics, limit)
                      for t, (env, _, _), limit in zip(trajectories, episodes, limits)]
            advantage = group_advantages(values, groups, reward)
            steps = None
            if config.algorithm == "gigpo":
                returns = [[turn["reward"] for turn in t.turns[:-1]] + [scalar(v, reward)] if t.turns else []
                           for t, v in zip(trajectories, values)]
                steps = step_advantages(returns, [[turn["anchor"] for turn in t.turns] for t in trajectories], groups,
                                        config.gamma, config.normalize_std)
            per_token = [token_advantages(float(a), [(turn["start"], turn["end"]) for turn in t.turns],
                                          steps[i] if steps else None, len(t.response_ids), config.step_weight)
                         for i, (a, t) in enumerate(zip(advantage, trajectories))]
            weights = episode_weights([sum(t.response_mask) for t in trajectories], config.loss_agg_mode)
            per_token = [[w * a for a in row] for w, row in zip(weights, per_token)]
            metrics = update(model, reference, optimizer, trajectories, per_token, config, average, pad)
            if config.smooth and metrics.get("action_tokens"):
                average = running_average(average, metrics["action_entropy"], config.ema)
            step += 1
            row = step_row(step, tasks, trajectories, values, config)  # its lengths are per episode, not batch totals
            row |= {name: value for name, value in metrics.items() if name not in row}
            generated = sum(sum(t.response_mask) for t in trajectories)
            row |= {"lr": optimizer.param_groups[0]["lr"], "action_entropy_avg": average, "rollout_s": played - began,
                    "update_s": time.perf_counter() - played, "generated_tokens_per_s": generated / (played - began)}
            log.write(json.dumps(row) + "\n")
            log.flush()
            families = " ".join(f"{k.split('/')[1]} {v:.2f}" for k, v in row.items() if k.startswith("success/"))
            print(f"step {step}/{config.steps} reward {row['reward']:.3f} success {families} think H "
                  f"{row['think_entropy']:.3f} action H {row['action_entropy']:.3f} "
                  f"({row['rollout_s']:.0f} s rollout, {row['update_s']:.0f} s update)", file=sys.stderr)
            if step % config.save_every == 0 or step == config.steps:
                save(out, config, step, model=model, optimizer=optimizer, action_entropy_avg=average)
    plot_run(out)
    return save_final(out, model, tokenizer, step)


def main(argv: list[str] | None = None) -> int:
    from magic_sft.runs import parse_config

    try:
        config = parse_config(RLConfig, argv, "magic rl", __doc__, required=("out",))
        final = train(config)
    except ValueError as error:
        raise SystemExit(f"magic rl: {error}") from error
    print(f"magic rl: model in {final} (magic eval --policy hf:{final}); config {json.dumps(asdict(config))}")
    return 0
