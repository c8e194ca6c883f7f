"""Our verl agent loop on CPU: rows from our parquet builder loaded by verl's own RLHFDataset, played by
MagicAgentLoop against a real tiny Qwen3 behind verl's server interface, then verl's own GRPO advantage and PPO loss
on the batch. Masks align with tokens, env tokens are never trained on, every sample has the same
reward_extra_info keys, and the copies of a row play the same instance."""

import asyncio

import gymnasium
import numpy as np
import pytest
import torch

pytest.importorskip("verl", reason="verl is installed by `bash scripts/install test`")

from magic_rl.verl_plugin import CONFIGS  # noqa: E402
from servers import TINY_MODEL  # noqa: E402

ENVS = ["magic/Calendar-v0", "magic/ToolPlan-v0", "magic/ALFWorld-v0"]


class TinyServer:
    """verl's server-manager interface (`generate(request_id, prompt_ids=..., sampling_params=...)` -> TokenOutput)
    answered by a real transformers model, sampling, with the logprobs of what it sampled."""

    def __init__(self, model):
        self.model, self.requests = model, []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        self.requests.append((request_id, sampling_params))
        torch.manual_seed(len(self.requests))
        with torch.no_grad():
            out = self.model.generate(torch.tensor([prompt_ids]), max_new_tokens=sampling_params["max_tokens"],
                                      do_sample=True, temperature=sampling_params["temperature"], top_k=None,
                                      top_p=1.0, output_scores=True, return_dict_in_generate=True, pad_token_id=0)
        ids = out.sequences[0, len(prompt_ids):].tolist()
        logprobs = [torch.log_softmax(s[0].float(), -1)[t].item() for s, t in zip(out.scores, ids)]
        return TokenOutput(token_ids=ids, log_probs=logprobs)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    if not (TINY_MODEL / "config.json").is_file():
        pytest.skip(f"no tiny Qwen3 at {TINY_MODEL}: bash .ci/setup builds it")
    from hydra import compose, initialize_config_dir
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from magic_rl.verl_plugin.agent_loop import MagicAgentLoop
    from magic_rl.verl_plugin.parquet import main as build

    folder = tmp_path_factory.mktemp("verl-rl")
    assert build([x for env in ENVS for x in ("--env", env)] + ["--train", "3", "--val", "0", "--out", str(folder)]) \
        == 0
    with initialize_config_dir(str(CONFIGS), version_base=None):
        config = compose("ppo_qwen3", overrides=[
            f"data.train_files={folder / 'train.parquet'}", "data.val_files=none", f"actor_rollout_ref.model.path="
            f"{TINY_MODEL}", f"actor_rollout_ref.rollout.agent.agent_loop_config_path={CONFIGS / 'agent_loop.yaml'}",
            "data.max_response_length=160", "magic.turn_tokens=24"])
    tokenizer = AutoTokenizer.from_pretrained(TINY_MODEL)
    rows = RLHFDataset(str(folder / "train.parquet"), tokenizer, config.data)
    server = TinyServer(AutoModelForCausalLM.from_pretrained(TINY_MODEL, dtype=torch.float32).eval())
    loop = MagicAgentLoop(trainer_config=DictConfigWrap(config), server_manager=server, tokenizer=tokenizer,
                          processor=None, dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data))
    params = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}

    async def play_all():  # two copies of every row, all on one event loop, as verl runs them
        return await asyncio.gather(*(loop.run(dict(params), **rows[i]) for i in range(len(rows)) for _ in range(2)))
    outputs = asyncio.run(play_all())
    return [rows[i] for i in range(len(rows)) for _ in range(2)], outputs, tokenizer, server


def test_rows_cover_every_env_and_replay_their_instance(played):
    rows, outputs, _, _ = played
    assert [r["extra_info"]["env_id"] for r in rows[::2]] == ENVS
    for i in range(0, len(outputs), 2):
        assert outputs[i].prompt_ids == outputs[i + 1].prompt_ids  # a group's copies: one instance
        env = gymnasium.make(rows[i]["extra_info"]["env_id"], split="train")
        first, _ = env.reset(seed=int(rows[i]["extra_info"]["seed"]))
        assert rows[i]["raw_prompt"][-1]["content"] == first
    assert len({tuple(o.prompt_ids) for o in outputs}) == len(ENVS)


def test_masks_align_and_env_tokens_are_never_trained(played):
    rows, outputs, tokenizer, server = played
    for output in outputs:
        n = len(output.response_ids)
        assert n <= 160 and len(output.response_mask) == len(output.response_logprobs) == n
        spans = output.extra_fields["turn_spans"]
        inside = np.zeros(n, dtype=int)
        for start, end in spans:
            inside[start:end] = 1
        assert output.response_mask == inside.tolist()  # model tokens are exactly the turns the model wrote
        assert len(output.extra_fields["think_mask"]) == n
        assert all(t <= m for t, m in zip(output.extra_fields["think_mask"], output.response_mask))
        observed = [tok for tok, m in zip(output.response_ids, output.response_mask) if not m]
        if len(spans) > 1:  # a later turn: the observation between turns is env text with mask 0
            assert "<|im_start|>" in tokenizer.decode(observed)
        assert all(lp == 0.0 for lp, m in zip(output.response_logprobs, output.response_mask) if not m)
    assert max(len(o.extra_fields["turn_spans"]) for o in outputs) > 1  # multi-turn episodes were played
    assert len({r for r, _ in server.requests}) == len(outputs)  # one request id per episode, for every turn
    assert all(p["max_tokens"] <= 24 for _, p in server.requests)


def test_every_sample_reports_the_same_extra_keys(played):
    from magic_rl.verl_plugin.agent_loop import EXTRA_KEYS

    _, outputs, _, _ = played
    assert {tuple(o.extra_fields["reward_extra_info"]) for o in outputs} == {EXTRA_KEYS}
    assert all(isinstance(o.reward_score, float) for o in outputs)
    assert {o.extra_fields["reward_extra_info"]["family"] for o in outputs} == {"scheduling", "tool_planning",
                                                                                   "alfworld"}


def test_verls_advantage_and_loss_run_on_the_loops_batch(played):
    from omegaconf import OmegaConf
    from verl.trainer.ppo import core_algos

    rows, outputs, _, _ = played
    width = max(len(o.response_ids) for o in outputs)
    dicts = [o.as_dict() for o in outputs]  # verl's own conversion of a loop output
    mask = torch.stack([torch.nn.functional.pad(d["response_mask"], (0, width - len(d["response_mask"])))
                        for d in dicts])
    rewards = torch.stack([torch.nn.functional.pad(d["rm_scores"], (0, width - len(d["rm_scores"]))) for d in dicts])
    uid = np.array([str(r["index"]) for r in rows], dtype=object)
    advantages, _ = core_algos.compute_grpo_outcome_advantage(rewards, mask, uid)
    assert torch.all(advantages[mask == 0] == 0)
    logprobs = torch.stack([torch.nn.functional.pad(d["rollout_log_probs"], (0, width - len(d["rollout_log_probs"])))
                            for d in dicts])
    config = OmegaConf.create({"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.2, "clip_ratio_c": 3.0,
                               "global_batch_info": {}})
    current = logprobs.clone().requires_grad_()
    loss, _ = core_algos.compute_policy_loss_vanilla(logprobs, current, advantages, mask, "token-mean", config)
    loss.backward()
    assert torch.all(current.grad[mask == 0] == 0)  # observation tokens never get a gradient


def test_compute_score_replays_a_static_answer():
    from magic_rl.verl_plugin.reward import compute_score

    env = gymnasium.make("magic/ToolCall-v0", split="train")
    env.reset(seed=4)
    info = {"env_id": "magic/ToolCall-v0", "env_kwargs": "{}", "seed": 4, "task": None, "split": "train"}
    gold = env.unwrapped.oracle_action()
    assert compute_score("magic/ToolCall-v0", gold, "", info) == {"score": 1.0, "success": 1.0, "valid": 1.0}
    assert compute_score("magic/ToolCall-v0", "<tool_call>{broken", "", info)["score"] == 0.0
    import json

    pinned = {**info, "seed": None, "task": json.dumps(env.unwrapped.task)}
    assert compute_score("magic/ToolCall-v0", gold, "", pinned)["success"] == 1.0


def test_extension_advantages_follow_the_objectives_and_spans(played):
    from magic_rl.algorithms import AlgorithmConfig
    from magic_rl.rewards import RewardConfig, group_advantages
    from magic_rl.verl_plugin.extension import batch_advantages

    rows, outputs, _, _ = played
    uids = [str(r["index"]) for r in rows] + [str(rows[0]["index"])]  # + a verl padding row copying row 0
    lengths = [len(o.response_ids) for o in outputs] + [0]
    extras = [o.extra_fields for o in outputs] + [outputs[0].extra_fields]
    episode = group_advantages([o.extra_fields["objectives"] for o in outputs], uids[:-1], RewardConfig())
    grpo, think = batch_advantages(uids, lengths, extras, RewardConfig(), AlgorithmConfig("grpo"))
    gigpo, _ = batch_advantages(uids, lengths, extras, RewardConfig(), AlgorithmConfig("gigpo"))
    for i, output in enumerate(outputs):
        mask = torch.tensor(output.response_mask, dtype=torch.bool)
        assert torch.allclose(grpo[i, :len(mask)][mask], torch.tensor(float(episode[i])))
        assert torch.all(grpo[i, :len(mask)][~mask] == 0) and torch.all(gigpo[i, :len(mask)][~mask] == 0)
        assert think[i, :len(mask)].tolist() == [float(x) for x in output.extra_fields["think_mask"]]
    assert torch.all(grpo[-1] == 0) and torch.all(gigpo[-1] == 0)  # padding: nothing, and out of the statistics


def test_extension_loss_is_the_local_trainers_loss(played):
    """MagicLoss (verl's ppo_loss plus chi-PO's terms, on verl's nested micro-batch layout) equals
    magic_rl.algorithms.policy_loss on the same numbers: verl and local runs differ only in the engine."""
    from hydra import compose, initialize_config_dir
    from transformers import AutoModelForCausalLM
    from verl.utils import tensordict_utils as tu
    from verl.utils.config import omega_conf_to_dataclass

    from magic_rl.algorithms import AlgorithmConfig, policy_loss
    from magic_rl.rewards import RewardConfig
    from magic_rl.verl_plugin.extension import MagicLoss, batch_advantages

    rows, outputs, _, _ = played
    with initialize_config_dir(str(CONFIGS), version_base=None):
        config = compose("ppo_qwen3", overrides=["data.train_files=t", "data.val_files=v",
                                                 f"actor_rollout_ref.model.path={TINY_MODEL}",
                                                 "actor_rollout_ref.rollout.agent.agent_loop_config_path=a"])
    actor = omega_conf_to_dataclass(config.actor_rollout_ref.actor)
    algorithm = AlgorithmConfig("chi_po", think_entropy=0.1, smooth=1.0, band=0.0, bottleneck=0.5)
    lengths = [len(o.response_ids) for o in outputs]
    advantages, think = batch_advantages([str(r["index"]) for r in rows], lengths,
                                         [o.extra_fields for o in outputs], RewardConfig(), algorithm)
    model = AutoModelForCausalLM.from_pretrained(TINY_MODEL, dtype=torch.float32).eval()
    full_logp, full_entropy, response_logp, response_entropy = [], [], [], []
    with torch.no_grad():
        for o in outputs:  # verl's engine output: position j scores token j + 1 of prompt + response
            ids = torch.tensor(o.prompt_ids + o.response_ids)
            logsm = torch.log_softmax(model(ids[None]).logits[0].float(), -1)
            logp = logsm[:-1].gather(-1, ids[1:, None])[:, 0]
            entropy = -(logsm.exp() * logsm).sum(-1)[:-1]
            full_logp.append(torch.cat([logp, torch.zeros(1)]))
            full_entropy.append(torch.cat([entropy, torch.zeros(1)]))
            response_logp.append(logp[-len(o.response_ids):])
            response_entropy.append(entropy[-len(o.response_ids):])

    def nested(rows_):
        return torch.nested.as_nested_tensor([torch.as_tensor(r, dtype=torch.float32) for r in rows_],
                                             layout=torch.jagged)
    old = [lp + 0.05 * torch.sin(torch.arange(len(lp), dtype=torch.float32)) for lp in response_logp]
    ref = [lp - 0.1 for lp in response_logp]
    total = sum(sum(o.response_mask) for o in outputs)
    data = tu.get_tensordict({
        "prompts": torch.nested.as_nested_tensor([torch.tensor(o.prompt_ids) for o in outputs], layout=torch.jagged),
        "responses": torch.nested.as_nested_tensor([torch.tensor(o.response_ids) for o in outputs],
                                                   layout=torch.jagged),
        "response_mask": nested([o.response_mask for o in outputs]), "old_log_probs": nested(old),
        "advantages": nested([advantages[i, :n] for i, n in enumerate(lengths)]),
        "think_mask": nested([think[i, :n] for i, n in enumerate(lengths)]), "ref_log_prob": nested(ref)},
        {"dp_size": 1, "batch_num_tokens": total, "global_batch_size": len(outputs)})
    output = {"log_probs": nested(full_logp), "entropy": nested(full_entropy)}
    loss_fn = MagicLoss(actor, algorithm)
    loss_fn.average = 0.3  # a running average the batch's action entropy is far from: the band term is on
    theirs, metrics = loss_fn(output, data)

    width = max(lengths)

    def padded(rows_):
        return torch.stack([torch.nn.functional.pad(torch.as_tensor(r, dtype=torch.float32), (0, width - len(r)))
                            for r in rows_])
    ours, _ = policy_loss(algorithm, padded(response_logp), padded(old), advantages,
                          padded([o.response_mask for o in outputs]), think, padded(response_entropy),
                          padded(ref), 0.3)
    assert torch.allclose(torch.as_tensor(theirs, dtype=torch.float32), ours, rtol=1e-4, atol=1e-6), (theirs, ours)
    assert "actor/think_entropy" in metrics and "actor/action_entropy" in metrics


def test_the_extension_overrides_only_what_it_says_on_verls_trainer():
    from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

    from magic_rl.verl_plugin.extension import trainer_class

    trainer = trainer_class()
    assert issubclass(trainer, PPOTrainerSync)
    assert {n for n in vars(trainer) if not n.startswith("__") and n != "_abc_impl"} == {"_setup", "_compute_advantage"}
    assert all(callable(getattr(PPOTrainerSync, name)) for name in ("_setup", "_compute_advantage"))


def test_the_launcher_reads_our_ppo_config():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "magic_rl.verl_plugin.extension", "--config-path", str(CONFIGS),
                          "--config-name", "ppo_qwen3", "--cfg", "job", "data.train_files=t", "data.val_files=v",
                          "actor_rollout_ref.model.path=/m",
                          f"actor_rollout_ref.rollout.agent.agent_loop_config_path={CONFIGS / 'agent_loop.yaml'}"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "default_agent_loop: magic_env" in out.stdout and "algorithm: chi_po" in out.stdout
