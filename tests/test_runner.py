"""The token-faithful runner (magic_rl/runner.py): model tokens kept verbatim, observation deltas templated alone,
masks aligned, budgets reported, on real chat templates (SmolLM2's ChatML, Qwen3's) and a real tiny model."""

import gymnasium
import pytest
from transformers import AutoTokenizer

import magic_envs  # noqa: F401
from magic_rl.runner import run_episode
from servers import TINY_MODEL


@pytest.fixture(scope="module", params=["smollm2", "qwen3"])
def tokenizer(request):
    if request.param == "qwen3":
        if not (TINY_MODEL / "config.json").is_file():
            pytest.skip("no tiny Qwen3: bash .ci/setup builds it")
        return AutoTokenizer.from_pretrained(TINY_MODEL)
    from benchmarks.policies.embedded import embedded_checkpoint

    return AutoTokenizer.from_pretrained(embedded_checkpoint())


def oracle_engine(env, tokenizer):
    """A scripted engine: the env's oracle action as tokens, closed by the end-of-turn token."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")

    def generate(prompt_ids, params):
        ids = tokenizer(env.unwrapped.oracle_action(), add_special_tokens=False)["input_ids"] + [end]
        return ids[:params["max_tokens"]], [-0.5] * min(len(ids), params["max_tokens"])
    return generate


@pytest.mark.parametrize("env_id", ["magic/ToolPlan-v0", "magic/ALFWorld-v0", "magic/Retail-v0"])
def test_the_token_stream_is_the_chat_the_template_renders(tokenizer, env_id):
    env = gymnasium.make(env_id, split="test")
    t = run_episode(env, oracle_engine(env, tokenizer), tokenizer, seed=2, turn_tokens=4096, response_tokens=10**6)
    assert t.success and t.terminated and not t.truncated and len(t.turns) > 1
    n = len(t.response_ids)
    assert len(t.response_mask) == len(t.logprobs) == len(t.think_mask) == n
    text = tokenizer.decode(t.prompt_ids + t.response_ids)
    for turn in t.turns:
        model = t.response_ids[turn["start"]:turn["end"]]
        assert all(t.response_mask[turn["start"]:turn["end"]]) and not turn["cut"]
        assert tokenizer.decode(model).endswith("<|im_end|>")
    # observation tokens are never model tokens: every masked-out span decodes to template text + observations
    observed = tokenizer.decode([i for i, m in zip(t.response_ids, t.response_mask) if m == 0])
    assert "<|im_start|>user" in observed or "<|im_start|>tool" in observed
    assert tokenizer.decode(t.prompt_ids).endswith("<|im_start|>assistant\n")
    assert text.count("<|im_start|>assistant") == len(t.turns)
    assert all(lp == -0.5 for lp, m in zip(t.logprobs, t.response_mask) if m) and \
        all(lp == 0.0 for lp, m in zip(t.logprobs, t.response_mask) if not m)


def test_tokens_equal_a_whole_chat_tokenisation(tokenizer):
    from magic_envs.core import rollout
    from magic_envs.core.policy import OraclePolicy

    env = gymnasium.make("magic/ToolPlan-v0", split="test")
    t = run_episode(env, oracle_engine(env, tokenizer), tokenizer, seed=2, turn_tokens=4096, response_tokens=10**6)
    native = "tools" in (tokenizer.chat_template or "")
    episode = rollout(env, OraclePolicy(), seed=2, native_tools=native)
    whole = tokenizer.apply_chat_template(episode.messages, tools=episode.tools if native else None, tokenize=False)
    ids = tokenizer(whole, add_special_tokens=False)["input_ids"]
    # up to the last model turn (Qwen3's template gives the last assistant turn an empty <think> block the model
    # did not write; SmolLM2's renders it as written)
    stream = t.prompt_ids + t.response_ids[:t.turns[-1]["start"]]
    assert stream == ids[:len(stream)] and len(t.turns) > 1


def test_budgets_cut_turns_and_responses_and_say_so(tokenizer):
    env = gymnasium.make("magic/ToolPlan-v0", split="test")
    t = run_episode(env, oracle_engine(env, tokenizer), tokenizer, seed=2, turn_tokens=5, response_tokens=10**6,
                    max_turns=3)
    assert all(turn["cut"] and turn["end"] - turn["start"] == 5 for turn in t.turns)
    assert t.truncated == "max_turns" and not t.success
    t = run_episode(env, oracle_engine(env, tokenizer), tokenizer, seed=2, turn_tokens=4096, response_tokens=60)
    assert t.truncated == "response_tokens" and len(t.response_ids) <= 60


def test_a_real_model_plays_through_the_runner_with_think_masks():
    if not (TINY_MODEL / "config.json").is_file():
        pytest.skip("no tiny Qwen3: bash .ci/setup builds it")
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(TINY_MODEL)
    model = AutoModelForCausalLM.from_pretrained(TINY_MODEL, dtype=torch.float32).eval()
    think = tokenizer.convert_tokens_to_ids(["<think>", "</think>"])

    def generate(prompt_ids, params):  # the model's own sampled tokens, after a forced <think> ... </think>
        with torch.no_grad():
            out = model.generate(torch.tensor([prompt_ids + [think[0]]]), max_new_tokens=params["max_tokens"] - 2,
                                 do_sample=True, output_scores=True, return_dict_in_generate=True)
        body = out.sequences[0, len(prompt_ids) + 1:].tolist()
        return [think[0]] + body[:3] + [think[1]] + body[3:], [0.0] * (len(body) + 2)

    env = gymnasium.make("magic/Calendar-v0", split="test")
    t = run_episode(env, generate, tokenizer, seed=0, turn_tokens=12, response_tokens=200, max_turns=2)
    first = t.turns[0]
    assert t.think_mask[first["start"]:first["start"] + 5] == [1] * 5 and t.think_mask[first["start"] + 5] == 0
    assert t.action_mask[first["start"] + 5] == 1 and not any(t.action_mask[first["start"]:first["start"] + 5])
