"""The one place magic_rl extends verl (pinned: verl 0.9.1, its default V1 "sync" trainer and engine workers).

verl hands a registered advantage estimator only rewards, masks and group ids, and a registered policy loss no
entropy and no think/action spans. Our algorithms need the agent loop's per-sample fields (agent_loop.py's
`extra_fields`: objectives, turn spans, turn rewards, GiGPO anchors, think masks), so:

- `MagicPPOTrainer` subclasses verl's `PPOTrainerSync` and overrides two methods: `_compute_advantage` runs verl's
  own (rollout correction, KL-in-reward, its metrics) and then replaces `advantages`/`returns` with ours
  (`batch_advantages`: each objective normalised within its group, GiGPO's step advantages on turn spans) and
  stores `think_mask` beside them; `_setup` hands the actor workers `MagicLoss`.
- `MagicLoss` is verl's `ppo_loss` (clipped ratio, its KL and entropy settings) plus chi-PO's terms
  (magic_rl/algorithms.py: think-token entropy bonus, action-entropy band, think-token KL to the reference), read
  from the `think_mask` the trainer stored, with verl's token-mean aggregation.
- `python -m magic_rl.verl_plugin.extension` is verl's `main_ppo` with this trainer in place of "sync".

The settings come from the config's `magic.algorithm` and `magic.reward` sections (configs/ppo_qwen3.yaml). Both
overridden methods are private verl API: check them when the verl pin moves.
"""

from __future__ import annotations

import numpy as np
import torch

from magic_rl.algorithms import AlgorithmConfig, k3, step_advantages, token_advantages
from magic_rl.rewards import RewardConfig, group_advantages, scalar


def settings(config) -> tuple[RewardConfig, AlgorithmConfig]:
    magic = config.get("magic") or {}
    return RewardConfig(**dict(magic.get("reward") or {})), AlgorithmConfig(**dict(magic.get("algorithm") or {}))


def batch_advantages(uids: list, lengths: list[int], extras: list[dict], reward: RewardConfig,
                     algorithm: AlgorithmConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token advantages and think masks ([rows, longest response]) of a batch of agent-loop outputs. Rows
    without a response token (verl's padding rows, which copy a real row's fields) get zeros and stay out of their
    group's statistics."""
    real = [i for i, n in enumerate(lengths) if n > 0]
    width = max(lengths, default=0)
    advantages, think = torch.zeros(len(lengths), width), torch.zeros(len(lengths), width)
    if not real:
        return advantages, think
    values = [extras[i]["objectives"] for i in real]
    groups = [uids[i] for i in real]
    episode = group_advantages(values, groups, reward)
    steps = None
    if algorithm.algorithm == "gigpo":
        returns = [list(extras[i]["turn_rewards"][:-1]) + [scalar(v, reward)] for i, v in zip(real, values)]
        steps = step_advantages(returns, [list(extras[i]["anchors"]) for i in real], groups, algorithm.gamma,
                                reward.normalize_std)
    for k, i in enumerate(real):
        spans = [tuple(span) for span in extras[i]["turn_spans"]]
        row = token_advantages(float(episode[k]), spans, steps[k] if steps else None, lengths[i],
                               algorithm.step_weight)
        advantages[i, :lengths[i]] = torch.tensor(row)
        mask = list(extras[i]["think_mask"])[:lengths[i]]
        think[i, :len(mask)] = torch.tensor(mask, dtype=torch.float32)
    return advantages, think


class MagicLoss:
    """verl's ppo_loss plus chi-PO's terms; a picklable callable verl's actor workers call per micro-batch."""

    def __init__(self, actor_config, algorithm: AlgorithmConfig):
        self.config, self.algorithm, self.average = actor_config, algorithm, None

    def __call__(self, model_output, data, dp_group=None):
        from verl.trainer.ppo.core_algos import agg_loss
        from verl.workers.utils.losses import ppo_loss
        from verl.workers.utils.padding import no_padding_2_padding

        loss, metrics = ppo_loss(self.config, model_output, data, dp_group)
        a = self.algorithm
        if not (a.think_entropy or a.smooth or a.bottleneck):
            return loss, metrics
        entropy = no_padding_2_padding(model_output["entropy"], data)
        fields = ["response_mask", "think_mask"] + (["ref_log_prob"] if a.bottleneck else [])
        padded = data.select(*fields).to_padded_tensor()
        model = padded["response_mask"].float()
        think = padded["think_mask"].float() * model
        action = model - think
        info = self.config.global_batch_info
        if a.think_entropy:  # summed over think tokens, divided by the batch's model tokens (token-mean)
            loss = loss - a.think_entropy * agg_loss(entropy, think, "token-mean", **info)
        if a.bottleneck:
            logp = no_padding_2_padding(model_output["log_probs"], data)
            loss = loss + a.bottleneck * agg_loss(k3(logp, padded["ref_log_prob"]), think, "token-mean", **info)
        think_h = (entropy * think).sum() / think.sum().clamp(min=1)
        action_h = (entropy * action).sum() / action.sum().clamp(min=1)
        if a.smooth and action.sum() > 0:
            average = action_h.item() if self.average is None else self.average
            loss = loss + a.smooth * torch.relu((action_h - average).abs() - a.band) ** 2
            self.average = a.ema * average + (1 - a.ema) * action_h.item()  # per worker, micro-batch by micro-batch
        metrics.update({"actor/think_entropy": think_h.item(), "actor/action_entropy": action_h.item()})
        return loss, metrics


def trainer_class():
    """`MagicPPOTrainer`, defined on first use so importing this module never imports verl's trainer."""
    import transfer_queue as tq
    from tensordict import TensorDict
    from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync
    from verl.utils.config import omega_conf_to_dataclass
    from verl.workers.utils.padding import response_to_nested

    class MagicPPOTrainer(PPOTrainerSync):
        def _setup(self):
            super()._setup()
            actor = omega_conf_to_dataclass(self.config.actor_rollout_ref.actor)
            self.actor_rollout_wg.set_loss_fn(MagicLoss(actor, settings(self.config)[1]))

        def _compute_advantage(self, batch, metrics):
            batch = super()._compute_advantage(batch, metrics)
            data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id,
                                   select_fields=["uid", "response_mask", "extra_fields"])
            mask = data["response_mask"]
            lengths = [int(n) for n in mask.offsets().diff()]
            real = [int(m.sum()) for m in mask.unbind()]
            advantages, think = batch_advantages(list(data["uid"].tolist()), [n if r else 0 for n, r in
                                                                                zip(lengths, real)],
                                                 list(data["extra_fields"].tolist()), *settings(self.config))
            full = torch.zeros(len(lengths), max(lengths))
            fields = {}
            for name, value in (("advantages", advantages), ("returns", advantages), ("think_mask", think)):
                padded = full.clone()
                padded[:, :value.shape[1]] = value
                fields[name] = response_to_nested(padded, mask)
            metrics["magic/advantage_abs_mean"] = float(np.abs(advantages.numpy()).mean())
            return tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id,
                                   fields=TensorDict(fields, batch_size=len(lengths)))

    return MagicPPOTrainer


def main() -> None:
    """verl's main_ppo (same Hydra config and CLI) with MagicPPOTrainer as its "sync" trainer."""
    import ray
    import verl.trainer.main_ppo as main_ppo

    class Runner(main_ppo.TaskRunnerV1.__ray_actor_class__):
        def run(self, config):
            from verl.trainer.ppo.v1 import trainer_base

            trainer_base.TRAINER_REGISTRY["sync"] = trainer_class()
            return super().run(config)

    main_ppo.TaskRunnerV1 = ray.remote(Runner)
    main_ppo.main()


if __name__ == "__main__":
    main()
