"""GRPO, GiGPO and chi-PO: advantages and the policy loss, shared by the local trainer and the verl plugin.

All three score a group of G episodes per task (rewards.py: each objective normalised within the group, then
weighted) and train with PPO's clipped ratio on model tokens only, averaged over every model token of the batch.

  grpo    the episode's group advantage on each of its tokens; optional k3 KL to the reference (`kl`); the ratio
          clipped as verl's default loss does (dual clip included), averaged over tokens ("token-mean").
  gigpo   GRPO's episode advantage plus `step_weight` x a step advantage: the turns of a group that acted in the
          same state (runner anchors: the same observations so far) form a step group, and each turn's
          discounted return (gamma) is normalised within it (Feng et al., 2025). Turns in a state no other
          episode reached get no step advantage.
  chi_po  ours, after the paper's description (token-level entropy regularisation, think-action entropy
          smoothing, an information bottleneck), on GRPO's advantages and clipped loss, plus three terms:
            - think_entropy x the entropy of think tokens, subtracted: keeps the reasoning exploring;
            - smooth x relu(|H_action - H_avg| - band)^2: the batch's mean action-token entropy may drift only
              within `band` of its running average (momentum `ema`), so actions neither collapse nor blow up;
            - bottleneck x the k3 KL of think tokens to the reference policy: the reasoning carries no more
              than it needs away from the reference.
          Each term's coefficient is a setting (0 turns it off) and each is logged. The two think-token terms are
          sums over think tokens divided by the batch's model tokens, as the clipped loss is, so a token weighs the
          same whichever micro-batch or data-parallel rank holds it (verl's "token-mean" does the same).

Think-level and action-level entropies are logged every step for every algorithm (the paper's Figure 8).

`loss_agg_mode` (verl's names) says how the clipped loss averages: "token-mean" weighs every model token of the batch
alike, so a long episode counts for more than a short one; "seq-mean-token-mean" weighs every episode alike, the mean
over its own tokens. The second matters when failures run longer than successes: under token-mean the tokens both
share (a template, a format) are pushed down by the longer failures more than the successes push them up. The local
trainer gets it by scaling each episode's advantages (`episode_weights`), which leaves the micro-batch accounting as
it is; in verl it is the actor's own `loss_agg_mode`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from magic_rl.rewards import normalize_in_groups

ALGORITHMS = ("grpo", "gigpo", "chi_po")
LOSS_AGG_MODES = ("token-mean", "seq-mean-token-mean")


@dataclass
class AlgorithmConfig:
    algorithm: str = "chi_po"
    """grpo | gigpo | chi_po"""
    clip_low: float = 0.2
    """the ratio is clipped to [1 - clip_low, 1 + clip_high]"""
    clip_high: float = 0.2
    clip_c: float = 3.0
    """dual clip: a negative advantage's loss is capped at clip_c x |A| (as verl's default PPO loss)"""
    kl: float = 0.0
    """coefficient of the k3 KL to the reference policy on every model token (GRPO's beta; 0: no reference needed
    unless chi-PO's bottleneck is on)"""
    gamma: float = 0.95
    """GiGPO: discount of step returns"""
    step_weight: float = 1.0
    """GiGPO: weight of the step advantage beside the episode advantage"""
    think_entropy: float = 0.001
    """chi-PO: coefficient of the think-token entropy bonus"""
    smooth: float = 0.1
    """chi-PO: coefficient of the action-entropy band penalty"""
    band: float = 0.05
    """chi-PO: how far (nats) the action entropy may drift from its running average unpenalised"""
    ema: float = 0.9
    """chi-PO: momentum of the running average of action entropy"""
    bottleneck: float = 0.01
    """chi-PO: coefficient of the think tokens' KL to the reference policy"""
    loss_agg_mode: str = "token-mean"
    """token-mean (every model token weighs the same) | seq-mean-token-mean (every episode weighs the same); chi-PO's
    think terms stay token-mean"""

    def __post_init__(self):
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {self.algorithm!r}: choose one of {', '.join(ALGORITHMS)}")
        if self.loss_agg_mode not in LOSS_AGG_MODES:
            raise ValueError(f"unknown loss_agg_mode {self.loss_agg_mode!r}: choose one of {', '.join(LOSS_AGG_MODES)}")
        if self.algorithm != "chi_po":  # chi-PO's terms belong to chi-PO alone
            self.think_entropy = self.smooth = self.bottleneck = 0.0

    @property
    def needs_reference(self) -> bool:
        return self.kl > 0 or self.bottleneck > 0


def step_advantages(turn_rewards: list[list[float]], anchors: list[list[str]], groups: list, gamma: float,
                    normalize_std: bool = True) -> list[list[float]]:
    """GiGPO's step advantages: per episode, per turn, the discounted return normalised among the turns of the same
    task group that share its anchor state; 0 for a turn alone in its state."""
    returns = []
    for rewards in turn_rewards:
        out, running = [0.0] * len(rewards), 0.0
        for t in reversed(range(len(rewards))):
            running = rewards[t] + gamma * running
            out[t] = running
        returns.append(out)
    keys = [(g, a) for g, episode in zip(groups, anchors) for a in episode]
    flat = np.array([r for episode in returns for r in episode], dtype=np.float64)
    counts: dict = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    normalised = normalize_in_groups(flat, keys, normalize_std) if len(flat) else flat
    normalised = np.where([counts[k] > 1 for k in keys], normalised, 0.0)
    out, at = [], 0
    for episode in returns:
        out.append(normalised[at:at + len(episode)].tolist())
        at += len(episode)
    return out


def token_advantages(episode: float, turns: list[tuple[int, int]], steps: list[float] | None, length: int,
                     step_weight: float = 1.0) -> list[float]:
    """Per response token: the episode's advantage (plus the turn's weighted step advantage under GiGPO) on the
    tokens of each model turn `(start, end)`; observation tokens get 0 (their loss mask is 0 anyway)."""
    out = [0.0] * length
    for i, (start, end) in enumerate(turns):
        value = episode + (step_weight * steps[i] if steps else 0.0)
        out[start:min(end, length)] = [value] * (min(end, length) - start)
    return out


def episode_weights(model_tokens: list[int], loss_agg_mode: str) -> list[float]:
    """Per episode, the factor on its advantages under which the token-mean clipped loss becomes `loss_agg_mode`:
    T / (N x L_i) for seq-mean-token-mean (L_i the episode's model tokens, T their sum, N the episodes that have
    any), since the clipped loss is linear in a positive scale of the advantage."""
    if loss_agg_mode == "token-mean":
        return [1.0] * len(model_tokens)
    counted = [n for n in model_tokens if n]
    return [sum(counted) / (len(counted) * n) if n else 0.0 for n in model_tokens]


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum() / mask.sum().clamp(min=1)


def k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """The k3 estimator of KL(pi || ref) per token: exp(ref - logp) - (ref - logp) - 1 >= 0."""
    delta = (ref_logp - logp).clamp(-20, 20)
    return delta.exp() - delta - 1


def policy_loss(config: AlgorithmConfig, logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                model_mask: torch.Tensor, think_mask: torch.Tensor, entropy: torch.Tensor,
                ref_logp: torch.Tensor | None = None, action_entropy_avg: float | None = None
                ) -> tuple[torch.Tensor, dict[str, float]]:
    """The loss of one (micro-)batch ([batch, tokens] tensors; masks are 0/1 floats, think_mask within model_mask)
    and its logged terms. `action_entropy_avg`: chi-PO's running average of action entropy before this optimiser
    step (None: the first step, which is then its own average); the caller moves it with `running_average`."""
    model_mask, think_mask = model_mask.float(), think_mask.float() * model_mask.float()
    action_mask = model_mask - think_mask
    ratio = (logp - old_logp).exp()
    clipped = ratio.clamp(1 - config.clip_low, 1 + config.clip_high)
    pg_tokens = -torch.minimum(ratio * advantages, clipped * advantages)
    pg_tokens = torch.where(advantages < 0, torch.minimum(pg_tokens, -advantages * config.clip_c), pg_tokens)
    pg = masked_mean(pg_tokens, model_mask)
    loss = pg
    think_h, action_h = masked_mean(entropy, think_mask), masked_mean(entropy, action_mask)
    metrics = {"pg_loss": pg.item(), "clip_frac": masked_mean(((ratio - clipped).abs() > 0).float(), model_mask).item(),
               "think_entropy": think_h.item(), "action_entropy": action_h.item(),
               "think_tokens": think_mask.sum().item(), "action_tokens": action_mask.sum().item()}
    if config.kl:
        kl = masked_mean(k3(logp, ref_logp), model_mask)
        loss = loss + config.kl * kl
        metrics["kl"] = kl.item()
    tokens = model_mask.sum().clamp(min=1)
    if config.think_entropy:
        loss = loss - config.think_entropy * (entropy * think_mask).sum() / tokens
    if config.smooth and action_mask.sum() > 0:
        average = action_h.item() if action_entropy_avg is None else action_entropy_avg
        penalty = torch.relu((action_h - average).abs() - config.band) ** 2
        loss = loss + config.smooth * penalty
        metrics["smooth_penalty"] = penalty.item()
    if config.bottleneck:
        kl = k3(logp, ref_logp)
        loss = loss + config.bottleneck * (kl * think_mask).sum() / tokens
        metrics["think_kl"] = masked_mean(kl, think_mask).item()
    metrics["loss"] = loss.item()
    return loss, metrics


def running_average(average: float | None, value: float, ema: float) -> float:
    """chi-PO's running average of action entropy after a step whose batch had `value`."""
    return value if average is None else ema * average + (1 - ema) * value
