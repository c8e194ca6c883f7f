"""Multi-objective rewards and the GRPO / GiGPO / chi-PO advantages and loss (magic_rl/rewards.py, algorithms.py):
hand-computed cases, real episodes of real envs, and verl's own GRPO advantage and PPO loss on the same numbers."""

import json

import gymnasium
import numpy as np
import pytest
import torch

import magic_envs  # noqa: F401
from magic_rl.algorithms import (AlgorithmConfig, episode_weights, policy_loss, running_average, step_advantages,
                                 token_advantages)
from magic_rl.rewards import RewardConfig, group_advantages, objectives, scalar
from magic_rl.runner import run_episode


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from benchmarks.policies.embedded import embedded_checkpoint

    return AutoTokenizer.from_pretrained(embedded_checkpoint())


def scripted(env, tokenizer, actions=None):
    """An engine that writes the oracle's action (or the next of `actions`) and closes the turn."""
    end, queue = tokenizer.convert_tokens_to_ids("<|im_end|>"), list(actions or [])

    def generate(prompt_ids, params):
        text = queue.pop(0) if actions is not None else env.unwrapped.oracle_action()
        ids = tokenizer(text, add_special_tokens=False)["input_ids"] + [end]
        return ids[:params["max_tokens"]], [0.0] * len(ids[:params["max_tokens"]])
    return generate


def play(env_id, tokenizer, actions=None, seed=1, turn_tokens=1024):
    env = gymnasium.make(env_id, split="test")
    trajectory = run_episode(env, scripted(env, tokenizer, actions), tokenizer, seed=seed, turn_tokens=turn_tokens,
                             response_tokens=100_000)
    return trajectory, env


def test_objectives_of_real_episodes(tokenizer):
    solved, env = play("magic/ToolPlan-v0", tokenizer)
    values = objectives(solved, env.unwrapped.progress_metrics, env.spec.max_episode_steps)
    turns = len(solved.turns)
    assert values == {"task": 1.0, "format": 1.0, "progress": 1.0,
                      "efficiency": 1.0 - (turns - 1) / env.spec.max_episode_steps}
    # a broken tool call (invalid), then a wrong answer: no task score, half the turns well formed, no efficiency
    failed, env = play("magic/ToolPlan-v0", tokenizer, ['<tool_call>{"name": 1}</tool_call>', "no idea"])
    values = objectives(failed, env.unwrapped.progress_metrics, env.spec.max_episode_steps)
    assert len(failed.turns) == 2 and failed.terminated
    assert values == {"task": 0.0, "format": 0.5, "efficiency": 0.0, "progress": 0.0}
    # the right function with no arguments: the name is right, the arguments are not
    probe = gymnasium.make("magic/ToolCall-v0", split="test")
    probe.reset(seed=3)
    gold = json.loads(probe.unwrapped.oracle_action().split("<tool_call>")[1].split("</tool_call>")[0])
    partly, env = play("magic/ToolCall-v0", tokenizer, [f'<tool_call>{{"name": "{gold["name"]}", "arguments": {{}}}}'
                                                        '</tool_call>'], seed=3)
    metrics = partly.turns[-1]["info"]["metrics"]
    assert metrics["name_accuracy"] == 1.0 and metrics["argument_accuracy"] == 0.0
    assert objectives(partly, env.unwrapped.progress_metrics, 1)["progress"] == 0.5
    # a turn cut at its token cap is not well formed, even when the env accepts what was written
    cut, env = play("magic/Calendar-v0", tokenizer, ["Here is the proposed time: " + "x " * 50], turn_tokens=8)
    assert cut.turns[0]["cut"] and objectives(cut, (), 5)["format"] == 0.0
    # ALFWorld declares no progress metric: the objective is 0 and adds no advantage
    assert objectives(solved, (), 10)["progress"] == 0.0


def test_objectives_are_normalised_per_group_before_weighting():
    config = RewardConfig(task_weight=1.0, format_weight=0.5, efficiency_weight=0.0, progress_weight=0.0)
    values = [{"task": t, "format": f, "efficiency": 0.0, "progress": 0.0} for t, f in
              [(0.0, 1.0), (0.1, 1.0), (0.0, 0.0), (1.0, 1.0), (0.7, 0.7), (0.7, 0.7)]]
    groups = ["small", "small", "big", "big", "flat", "flat"]
    a = group_advantages(values, groups, config)
    # scores 0 / 0.1 and 0 / 1 get the same +-0.707 (sample std), before and after the format objective is added
    s = 1 / np.sqrt(2)
    assert a[0] == pytest.approx(-s, abs=1e-4) and a[1] == pytest.approx(s, abs=1e-4)
    assert a[2] == pytest.approx(-s - 0.5 * s, abs=1e-4) and a[3] == pytest.approx(s + 0.5 * s, abs=1e-4)
    assert a[4] == a[5] == 0.0  # all alike: nothing to learn from this group
    only_task = dict(format_weight=0, efficiency_weight=0, progress_weight=0)
    centred = group_advantages(values, groups, RewardConfig(**only_task, normalize_std=False))
    assert centred[:2] == pytest.approx([-0.05, 0.05])
    assert group_advantages(values[:1], ["alone"], config) == [0.0]
    assert scalar(values[3], config) == 1.5
    with pytest.raises(ValueError, match="format_weight"):
        RewardConfig(format_weight=-1)


def test_grpo_advantage_is_verls():
    core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")
    rng = np.random.default_rng(0)
    scores = rng.random(12).round(2)
    index = np.array(["a"] * 4 + ["b"] * 4 + ["c"] * 4, dtype=object)
    rewards = torch.zeros(12, 5)
    rewards[:, -1] = torch.tensor(scores)
    theirs, _ = core_algos.compute_grpo_outcome_advantage(rewards, torch.ones(12, 5), index)
    ours = group_advantages([{"task": s} | dict.fromkeys(("format", "efficiency", "progress"), 0.0) for s in scores],
                            list(index), RewardConfig(format_weight=0, efficiency_weight=0, progress_weight=0))
    assert np.allclose(theirs[:, 0].numpy(), ours, atol=1e-5)


def test_gigpo_step_advantages_by_hand():
    # three episodes of one task: the first turn shares the start state; episodes 0 and 1 then reach state "s1"
    rewards = [[0.0, 1.0], [0.0, 0.0], [0.5]]
    anchors = [["s0", "s1"], ["s0", "s1"], ["s0"]]
    steps = step_advantages(rewards, anchors, ["t", "t", "t"], gamma=0.5)
    first = np.array([0.5, 0.0, 0.5])  # discounted returns at s0
    expected = (first - first.mean()) / (first.std(ddof=1) + 1e-6)
    assert np.allclose([steps[0][0], steps[1][0], steps[2][0]], expected)
    assert steps[0][1] == pytest.approx(1 / np.sqrt(2), abs=1e-4) and steps[1][1] == pytest.approx(-1 / np.sqrt(2),
                                                                                                     abs=1e-4)
    # another task's episode in the same state name is another group; a state nobody else reached gets 0
    lone = step_advantages([[1.0, 0.0], [0.0]], [["s0", "x"], ["s0"]], ["t", "u"], gamma=0.9)
    assert lone == [[0.0, 0.0], [0.0]]


def test_token_advantages_cover_model_turns_only():
    out = token_advantages(0.5, [(0, 3), (5, 7)], [1.0, -1.0], 8, step_weight=0.5)
    assert out == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert token_advantages(0.5, [(0, 3), (5, 7)], None, 8) == [0.5] * 3 + [0.0] * 2 + [0.5] * 2 + [0.0]


def batch(seed=0, n=2, t=10):
    g = torch.Generator().manual_seed(seed)
    logp = (-torch.rand(n, t, generator=g)).requires_grad_()
    old = logp.detach() + 0.3 * (torch.rand(n, t, generator=g) - 0.5)
    model = torch.tensor([[1.0] * 6 + [0.0] * 4, [1.0] * 8 + [0.0] * 2])
    think = torch.tensor([[1.0] * 3 + [0.0] * 7, [1.0] * 4 + [0.0] * 6])
    adv = torch.tensor([[0.7] * t, [-1.2] * t])
    return logp, old, adv, model, think


def test_grpo_loss_is_verls_vanilla_ppo_loss():
    core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")
    from omegaconf import OmegaConf

    logp, old, adv, model, think = batch()
    config = OmegaConf.create({"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.28,
                               "clip_ratio_c": 3.0, "global_batch_info": {}})
    theirs, _ = core_algos.compute_policy_loss_vanilla(old, logp, adv, model, "token-mean", config)
    ours, metrics = policy_loss(AlgorithmConfig("grpo", clip_high=0.28), logp, old, adv, model, think,
                                torch.zeros_like(logp))
    assert torch.allclose(ours, theirs) and metrics["pg_loss"] == pytest.approx(theirs.item())


def test_seq_mean_weights_make_every_episode_weigh_the_same_as_verls_seq_mean_token_mean():
    logp, old, adv, model, think = batch()
    lengths = [int(n) for n in model.sum(1)]
    assert len(set(lengths)) > 1  # episodes of different lengths, or the two modes agree
    weights = torch.tensor(episode_weights(lengths, "seq-mean-token-mean"))[:, None]
    config = AlgorithmConfig("grpo")
    ours, _ = policy_loss(config, logp, old, adv * weights, model, think, torch.zeros_like(logp))
    rows = [policy_loss(config, logp[i:i + 1], old[i:i + 1], adv[i:i + 1], model[i:i + 1], think[i:i + 1],
                        torch.zeros_like(logp[i:i + 1]))[0] for i in range(len(lengths))]
    assert ours.item() == pytest.approx(torch.stack(rows).mean().item(), rel=1e-5)
    plain, _ = policy_loss(config, logp, old, adv, model, think, torch.zeros_like(logp))
    assert ours.item() != pytest.approx(plain.item(), rel=1e-3)
    assert episode_weights(lengths, "token-mean") == [1.0] * len(lengths)
    assert episode_weights([4, 0, 2], "seq-mean-token-mean") == [0.75, 0.0, 1.5]  # an empty episode counts for none
    core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")
    from omegaconf import OmegaConf

    verl_config = OmegaConf.create({"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.2,
                                    "clip_ratio_c": 3.0, "global_batch_info": {}})
    theirs, _ = core_algos.compute_policy_loss_vanilla(old, logp, adv, model, "seq-mean-token-mean", verl_config)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-5)
    with pytest.raises(ValueError, match="unknown loss_agg_mode"):
        AlgorithmConfig("grpo", loss_agg_mode="seq-mean")


def test_loss_never_trains_observation_tokens_and_clips():
    logp, _, adv, model, think = batch()
    loss, _ = policy_loss(AlgorithmConfig("grpo"), logp, logp.detach(), adv, model, think, torch.zeros_like(logp))
    loss.backward()
    assert torch.all(logp.grad[model == 0] == 0)
    assert torch.allclose(logp.grad[model == 1], -adv[model == 1] / model.sum())  # ratio 1: the plain gradient
    # a ratio already past 1 + clip for a positive advantage gets no gradient
    far = logp.detach() - 1.0
    logp.grad = None
    policy_loss(AlgorithmConfig("grpo"), logp, far, adv.abs(), model, think, torch.zeros_like(logp))[0].backward()
    assert torch.all(logp.grad == 0)


def test_chi_po_terms():
    logp, old, adv, model, think = batch()
    entropy = torch.full_like(logp, 2.0).requires_grad_()
    entropy.data[think == 0] = 0.5
    ref = logp.detach() - 0.2
    base = AlgorithmConfig("grpo")
    chi = AlgorithmConfig("chi_po", think_entropy=0.1, smooth=1.0, band=0.1, bottleneck=0.5)
    plain, _ = policy_loss(base, logp, old, adv, model, think, entropy, ref)
    loss, m = policy_loss(chi, logp, old, adv, model, think, entropy, ref, action_entropy_avg=0.5)
    assert m["think_entropy"] == pytest.approx(2.0) and m["action_entropy"] == pytest.approx(0.5)
    assert m["smooth_penalty"] == 0.0  # at its running average: inside the band
    think_kl = ((ref - logp).exp() - (ref - logp) - 1)[think == 1].mean()
    assert m["think_kl"] == pytest.approx(think_kl.item(), rel=1e-5)
    share = think.sum() / model.sum()  # think-token terms weigh per model token of the batch
    assert loss.item() == pytest.approx(plain.item() + share.item() * (-0.1 * 2.0 + 0.5 * think_kl.item()), rel=1e-5)
    loss.backward()  # the entropy bonus pulls on think tokens only
    assert torch.allclose(entropy.grad[think == 1], torch.tensor(-0.1 / model.sum()))
    assert torch.all(entropy.grad[(think == 0)] == 0)
    # action entropy 0.5 against an average of 1.0: 0.4 outside the band, and the average moves towards 0.5
    _, m = policy_loss(chi, logp, old, adv, model, think, entropy, ref, action_entropy_avg=1.0)
    assert m["smooth_penalty"] == pytest.approx(0.4 ** 2) and running_average(1.0, 0.5, 0.9) == pytest.approx(0.95)
    assert running_average(None, 0.5, 0.9) == 0.5
    # GRPO and GiGPO carry none of chi-PO's terms, whatever is passed
    assert AlgorithmConfig("gigpo", think_entropy=1.0).think_entropy == 0.0
    assert not AlgorithmConfig("grpo").needs_reference and AlgorithmConfig("chi_po").needs_reference
    with pytest.raises(ValueError, match="unknown algorithm"):
        AlgorithmConfig("ppo")
