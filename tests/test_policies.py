"""Model-backed policies (benchmarks/policies): the grammar <-> native tool-call translation, the OpenAI-compatible
policy against a real vLLM server (tests/servers.py), and the local transformers policy on a tiny Qwen3."""

import asyncio
import json
import re

import gymnasium
import pytest

import magic_envs  # noqa: F401
from benchmarks.policies import Capped, model_policy, policy_factory
from benchmarks.policies.native import reply_to_action, to_openai_messages
from benchmarks.policies.openai_policy import OpenAIPolicy
from benchmarks.policies.streaming import ServerError
from magic_envs.core import format_tool_call, parse_action, rollout, rollout_async
from servers import TINY_MODEL

CALL = format_tool_call("get_weather", {"city": "Paris", "days": 2})
TWO_CALLS = CALL + "\n" + format_tool_call("get_time", {"zone": "CET"})


@pytest.mark.parametrize("messages, roles, native_calls", [
    # one call answered by one tool message: native, with matching ids
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Let me look.\n" + CALL},
      {"role": "tool", "content": "sunny"}], ["user", "assistant", "tool"], [1]),
    # two parallel calls, two answers
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": TWO_CALLS},
      {"role": "tool", "content": "sunny"}, {"role": "tool", "content": "10:00"}],
     ["user", "assistant", "tool", "tool"], [2]),
    # two calls refused with one error message: kept as text, the error reaches the model as a user turn
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": TWO_CALLS},
      {"role": "tool", "content": "Error: bad"}], ["user", "assistant", "user"], [0]),
    # a malformed call: text, and its error as a user turn
    ([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
      {"role": "assistant", "content": '<tool_call>{"name": </tool_call>'}, {"role": "tool", "content": "Error"}],
     ["system", "user", "assistant", "user"], [0]),
])
def test_grammar_calls_become_native_only_when_answered_one_to_one(messages, roles, native_calls):
    out = to_openai_messages(messages)
    assert [m["role"] for m in out] == roles
    assistants = [m for m in out if m["role"] == "assistant"]
    assert [len(m.get("tool_calls") or []) for m in assistants] == native_calls
    for m in assistants:
        ids = [c["id"] for c in m.get("tool_calls") or []]
        answered = [t["tool_call_id"] for t in out if t["role"] == "tool"]
        assert ids == answered[:len(ids)] and len(set(ids)) == len(ids)
        if not ids:  # the text is passed on exactly as the model wrote it
            assert m["content"] in [x["content"] for x in messages]
    assert to_openai_messages(messages) == out  # deterministic ids


@pytest.mark.parametrize("message, calls, text, errors", [
    ({"content": "Hello"}, [], "Hello", 0),
    ({"content": None, "tool_calls": [{"function": {"name": "f", "arguments": '{"a": 1}'}}]}, [("f", {"a": 1})], "", 0),
    ({"content": "", "tool_calls": [{"function": {"name": "f", "arguments": ""}}]}, [("f", {})], "", 0),
    ({"content": "x", "reasoning_content": "think hard",
      "tool_calls": [{"function": {"name": "f", "arguments": "{bad"}}]}, [], "x", 1),
    ({"content": "x", "tool_calls": [{"function": {"name": "f", "arguments": "[1, 2]"}}]}, [], "x", 1),
])
def test_native_replies_become_grammar_actions(message, calls, text, errors):
    parsed = parse_action(reply_to_action(message))
    assert [(c.name, c.arguments) for c in parsed.calls] == calls
    assert parsed.text == text and len(parsed.errors) == errors
    if message.get("reasoning_content"):
        assert parsed.thoughts == (message["reasoning_content"],)


def test_unknown_policies_and_missing_servers_say_what_is_wrong(monkeypatch):
    monkeypatch.delenv("MAGIC_AGENT_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="unknown policy 'gpt'"):
        policy_factory("gpt")
    with pytest.raises(ValueError, match="no checkpoint folder"):
        model_policy("hf:/no/such/model")
    with pytest.raises(ValueError, match="MAGIC_AGENT_BASE_URL"):
        model_policy("openai")


def test_a_suites_sampling_settings_become_request_parameters():
    policy = model_policy("openai:m", base_url="http://127.0.0.1:9/v1", max_new_tokens=256, temperature=0.7, seed=3)
    assert policy.params == {"temperature": 0.7, "max_tokens": 256, "seed": 3} and policy.model == "m"


def test_failures_are_retried_then_raised_and_refusals_are_not_retried():
    dead = OpenAIPolicy(base_url="http://127.0.0.1:9/v1", model="m", retries=2, backoff=0.01, timeout=2)
    with pytest.raises(ServerError) as failure:
        dead.act([{"role": "user", "content": "hi"}], [])
    assert failure.value.retryable and failure.value.status is None


# ---- against the real vLLM server --------------------------------------------------------------------------------
FORCED_CALL = r'<tool_call>\n\{"name": "get_weather", "arguments": \{"city": "Paris"\}\}\n</tool_call>'
WEATHER = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


@pytest.mark.parametrize("stream", [True, False])
def test_server_tool_calls_arrive_in_the_grammar(openai_server, stream):
    # Structured outputs make the random model write a Hermes call; vLLM's parser turns it into native
    # tool_calls, and the policy back into our grammar.
    policy = OpenAIPolicy(base_url=openai_server.base_url, stream=stream,
                          params={"temperature": 0, "max_tokens": 64, "structured_outputs": {"regex": FORCED_CALL}})
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    completion = asyncio.run(policy.complete(messages, WEATHER))
    assert completion.message["tool_calls"], completion.message
    action = policy.act(messages, WEATHER)
    parsed = parse_action(action)
    assert [(c.name, c.arguments) for c in parsed.calls] == [("get_weather", {"city": "Paris"})], action
    assert policy.model == openai_server.model  # asked from /models
    if stream:
        assert completion.ttft is not None and 0 < completion.ttft <= completion.latency
        assert completion.completion_tokens and completion.tpot is not None and completion.tpot > 0
    # the call and its answer go back to the server natively, and it accepts the conversation
    history = messages + [{"role": "assistant", "content": action}, {"role": "tool", "content": '{"sky": "clear"}'}]
    again = asyncio.run(policy.complete(history, WEATHER, max_tokens=8,
                                        structured_outputs={"regex": "The sky is clear\\."}))
    assert again.message["content"] == "The sky is clear."


def test_server_refusals_raise_at_once(openai_server):
    policy = OpenAIPolicy(base_url=openai_server.base_url, retries=5, backoff=10.0,
                          params={"max_tokens": 8, "structured_outputs": {"regex": "("}})  # an invalid regex: 400
    with pytest.raises(ServerError) as failure:
        policy.act([{"role": "user", "content": "hi"}], [])
    assert failure.value.status == 400 and not failure.value.retryable


def test_a_runs_reply_cap_becomes_the_requests_max_tokens(openai_server, monkeypatch):
    factory = policy_factory("openai", base_url=openai_server.base_url, max_new_tokens=64)
    shared, capped = factory(0), factory(1, max_new_tokens=5)
    assert isinstance(capped, Capped) and capped.policy is shared and capped.name == shared.name
    sent = []
    complete = shared.complete

    async def recording(messages, tools, **params):
        completion = await complete(messages, tools, **params)
        sent.append(({**shared.params, **params}["max_tokens"], completion.completion_tokens))
        return completion

    monkeypatch.setattr(shared, "complete", recording)
    messages = [{"role": "user", "content": "Count to one hundred."}]
    assert not isinstance(policy_factory("oracle")(0, max_new_tokens=5), Capped)  # a baseline writes no text
    capped.act(messages, [])
    shared.act(messages, [])
    assert sent[0][0] == 5 and sent[0][1] <= 5 and sent[1][0] == 64, sent


def test_concurrent_episodes_share_one_server_policy(openai_server):
    policy = OpenAIPolicy(base_url=openai_server.base_url, concurrency=3, params={"temperature": 0, "max_tokens": 24})

    async def main():
        envs = [gymnasium.make("magic/ToolCall-v0", split="test") for _ in range(5)]
        episodes = await asyncio.gather(*[rollout_async(env, policy, seed=i) for i, env in enumerate(envs)])
        await policy.aclose()
        return episodes

    episodes = asyncio.run(main())
    assert [e.seed for e in episodes] == list(range(5)) and all(e.terminated or e.truncated for e in episodes)
    assert all(isinstance(a, str) for e in episodes for a in e.actions)


# ---- a local transformers model ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_hf():
    if not (TINY_MODEL / "config.json").is_file():
        pytest.skip(f"no tiny Qwen3 at {TINY_MODEL}: bash .ci/setup builds it")
    pytest.importorskip("torch")
    return model_policy(f"hf:{TINY_MODEL}", max_new_tokens=12, batch_size=4)


def test_hf_policy_renders_tools_natively_and_batches_episodes(tiny_hf):
    assert tiny_hf.native_tools  # Qwen3's template renders `tools` itself
    prompt = tiny_hf.tokenizer.decode(tiny_hf.prompt_ids([{"role": "user", "content": "hi"}], WEATHER))
    assert "get_weather" in prompt and "<tools>" in prompt
    calls_before = tiny_hf._calls

    async def main():
        envs = [gymnasium.make("magic/Calendar-v0", split="test") for _ in range(8)]
        return await asyncio.gather(*[rollout_async(env, tiny_hf, seed=i) for i, env in enumerate(envs)])

    episodes = asyncio.run(main())
    assert len(episodes) == 8 and all(e.actions for e in episodes)
    # 8 episodes of up to 3 steps in batches of up to 4: far fewer generate calls than actions
    actions = sum(len(e.actions) for e in episodes)
    assert tiny_hf._calls - calls_before < actions
    # greedy: an episode played alone makes the same first move as in the batch (up to padding numerics)
    alone = rollout(gymnasium.make("magic/Calendar-v0", split="test"), tiny_hf, seed=0)
    assert isinstance(alone.actions[0], str)


def test_hf_policy_without_template_tools_gets_them_in_the_system_message(tiny_hf, monkeypatch):
    chatml = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
              "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    monkeypatch.setattr(tiny_hf.tokenizer, "chat_template", chatml)
    monkeypatch.setattr(tiny_hf, "native_tools", False)
    env = gymnasium.make("magic/ToolCall-v0", split="test")
    episode = rollout(env, tiny_hf, seed=1)
    system = episode.messages[0]
    assert system["role"] == "system" and "<tools>" in system["content"] and "<tool_call>" in system["content"]
    prompt = tiny_hf.tokenizer.decode(tiny_hf.prompt_ids(episode.messages[:2], episode.tools))
    assert re.search(r"<tools>.*</tools>", prompt, re.S) and json.dumps(episode.tools[0])[:40] in prompt


def test_hf_policy_fits_long_chats_into_its_context(tiny_hf, monkeypatch):
    monkeypatch.setattr(tiny_hf, "context", 200)
    long_chat = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "task"}] + [
        {"role": r, "content": "word " * 40} for r in ("assistant", "user") * 5]
    before = tiny_hf.truncated_prompts
    ids = tiny_hf.prompt_ids(long_chat, [])
    assert len(ids) <= 200 - tiny_hf.max_new_tokens and tiny_hf.truncated_prompts == before + 1
    text = tiny_hf.tokenizer.decode(ids)
    assert "be brief" in text and "task" in text  # the system message and the task stay


def test_each_row_of_a_batch_stops_at_its_own_cap_and_short_caps_go_first(tiny_hf, monkeypatch):
    prompts = [tiny_hf.prompt_ids([{"role": "user", "content": f"Say {word} many times."}], [])
               for word in ("yes", "no")]
    short, long = tiny_hf.generate_ids(prompts, [3, 12])
    both_long = tiny_hf.generate_ids(prompts, [12, 12])
    assert len(short) <= 3 < len(both_long[0]) and long == both_long[1]
    assert both_long[0][:len(short)] == short  # the capped row is the same reply, stopped early
    # a suite run's cap reaches the shared model through the episode's policy (Capped); requests waiting together
    # are served smallest cap first
    served = []
    generate = tiny_hf.generate

    def recording(batch, caps):
        served.append(list(caps))
        return generate(batch, caps)

    monkeypatch.setattr(tiny_hf, "generate", recording)
    monkeypatch.setattr(tiny_hf, "batch_size", 2)

    async def main():
        asks = [Capped(tiny_hf, cap).act_async([{"role": "user", "content": "hi"}], []) for cap in (12, 3, 12, 3)]
        return await asyncio.gather(*asks)

    asyncio.run(main())
    assert served == [[3, 3], [12, 12]]


def test_later_turns_read_only_their_new_tokens_and_reply_the_same(tiny_hf):
    assert tiny_hf.prefixes is not None  # Qwen3's cache is plain full attention
    plain = model_policy(f"hf:{TINY_MODEL}", max_new_tokens=12, prefix_cache_tokens=0)
    assert plain.prefixes is None

    def play(policy):  # three turns of two ALFWorld-like chats of different lengths, batched together
        chats = [[{"role": "system", "content": "You are in a house. " * k}, {"role": "user", "content": "Look."}]
                 for k in (3, 30)]
        replies = []
        for turn in range(3):
            ids = policy.generate_ids([policy.prompt_ids(chat, []) for chat in chats])
            for chat, reply in zip(chats, ids):
                chat += [{"role": "assistant", "content": policy.tokenizer.decode(reply, skip_special_tokens=True)},
                         {"role": "user", "content": f"You see a drawer {turn}."}]
            replies.append(ids)
        return replies

    before = (tiny_hf.prefixes.reused_tokens, tiny_hf.prefixes.read_tokens)
    assert play(tiny_hf) == play(plain)
    reused, read = (a - b for a, b in zip((tiny_hf.prefixes.reused_tokens, tiny_hf.prefixes.read_tokens), before))
    assert reused > read  # later turns skipped what earlier turns had read


def test_folded_decoding_attention_is_transformers_attention_without_the_copies(monkeypatch):
    import types

    import torch
    from transformers import AutoModelForCausalLM

    from benchmarks.policies import folded_attention
    from benchmarks.policies.folded_attention import NAME, use_folded_attention

    folded_calls = []

    def counting(query, key, *args, **kwargs):
        folded_calls.append((query.shape, key.shape))
        return torch.nn.functional.scaled_dot_product_attention(query, key, *args, **kwargs)
    monkeypatch.setattr(folded_attention, "F", types.SimpleNamespace(scaled_dot_product_attention=counting))

    if not (TINY_MODEL / "config.json").is_file():
        pytest.skip(f"no tiny Qwen3 at {TINY_MODEL}: bash .ci/setup builds it")
    models = [AutoModelForCausalLM.from_pretrained(TINY_MODEL, dtype=torch.float32).eval() for _ in range(2)]
    assert use_folded_attention(models[1]) and models[1].config._attn_implementation == NAME  # Qwen3: 4 heads, 2 kv
    torch.manual_seed(0)
    ids = torch.randint(10, 5000, (3, 40))
    mask = torch.ones_like(ids)
    mask[0, :25], mask[2, :7] = 0, 0  # left padding, as in batched generation
    outs = [m.generate(input_ids=ids, attention_mask=mask, max_new_tokens=24, do_sample=False, pad_token_id=0,
                       output_scores=True, return_dict_in_generate=True) for m in models]
    # every decoding step of every layer folded: [3 rows, 2 kv heads, 2 query heads each, 32]
    assert len(folded_calls) == 23 * models[1].config.num_hidden_layers
    assert all(q[:3] == (3, 2, 2) and k[:2] == (3, 2) for q, k in folded_calls)
    assert torch.equal(outs[0].sequences, outs[1].sequences)
    for plain, folded in zip(outs[0].scores, outs[1].scores):
        assert torch.allclose(plain, folded, atol=1e-4)
    eager = AutoModelForCausalLM.from_pretrained(TINY_MODEL, dtype=torch.float32, attn_implementation="eager")
    assert not use_folded_attention(eager) and eager.config._attn_implementation == "eager"
