"""Invariants every `magic/` env must keep (DESIGN.md §8), parametrized over the whole registry."""

import json
import os
import pickle
import warnings
from pathlib import Path

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import MAGIC_IDS, TEST_KWARGS, make_env, splits_of

INFO_KEYS = {"success", "score", "valid", "error", "role", "task_id", "metrics"}
ORACLE_SEEDS = int(os.environ.get("MAGIC_ORACLE_SEEDS", 50))  # per id and split; benchmarks/ sweeps 200
# Ids whose resets cost tenths of a second (a real engine translating a new game) get smaller per-split seed
# budgets for the oracle sweep and the split-overlap check; their own test files and benchmarks/ sweep further.
SEED_BUDGETS = {"magic/ALFWorld-v0": {"oracle": 4, "splits": 8}}
GOLDEN = Path(__file__).parent / "golden"

JUNK = st.one_of(
    st.text(max_size=400),
    st.text(max_size=200).map(lambda s: f"<tool_call>{s}</tool_call>"),
    st.text(max_size=40).map(lambda s: json.dumps({"name": s, "arguments": {}})).map(
        lambda s: f"<tool_call>{s}</tool_call>"),
    st.sampled_from([
        '<tool_call>{"name": 5, "arguments": []}</tool_call>',
        '<tool_call>{"name": "f", "arguments": {"a": }}</tool_call>',
        "<tool_call>", "</tool_call>", "<think>", "<think></think>", "", " \n\t ",
        "Here is the proposed time: Funday, 99:99 - 25:61",
        "SOLUTION: You meet Nobody for 9999 minutes from 25:00PM to 1:00AM.",
        "**Day 1-999:** Visit Atlantis.\n**Day 3:** Fly from Atlantis to Mu.",
        "x" * 1_000_000,
        "日本語の答え、" * 100_000,
        "Monday, 9:00 - 9:30 " * 50_000,
        '<tool_call>{"name": "f", "arguments": {"a": ' + "[" * 3000 + "]" * 3000 + "}}</tool_call>",
    ]),
)


def make(env_id, split=None):
    """The env at its default split (not every env offers "train": BFCL-v0 is a test set only)."""
    return make_env(env_id) if split is None else make_env(env_id, split=split)


def solve(env):
    """Step the oracle until the episode ends (multi-turn envs such as ToolPlan-v0 take several steps)."""
    while True:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        if terminated or truncated:
            return reward, terminated, info


def check_info(info, reset=False):
    expected = INFO_KEYS | ({"tools", "instructions"} if reset else set())
    assert set(info) == expected
    assert isinstance(info["success"], bool) and isinstance(info["score"], float) and 0.0 <= info["score"] <= 1.0
    assert isinstance(info["valid"], bool) and isinstance(info["error"], str) and info["role"] in ("user", "tool")
    assert all(isinstance(v, float) for v in info["metrics"].values())


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_check_env_without_warnings(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(make(env_id).unwrapped)


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_same_seed_same_trajectory(env_id):
    def trajectory():
        env, out = make(env_id), []
        for seed in (1, 2):
            obs, info = env.reset(seed=seed)
            out.append((obs, info))
            for action in ("not an answer", "<tool_call>{}</tool_call>", env.unwrapped.oracle_action()):
                out.append(env.step(action))
        return out

    assert trajectory() == trajectory()


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_oracle_solves_every_split(env_id):
    for split in splits_of(env_id):
        env = make(env_id, split)
        for seed in range(min(ORACLE_SEEDS, SEED_BUDGETS.get(env_id, {}).get("oracle", ORACLE_SEEDS))):
            env.reset(seed=seed)
            reward, terminated, info = solve(env)
            assert (reward, terminated, info["success"], info["valid"]) == (1.0, True, True, True), (split, seed, info)
            # the progress objective of magic_rl: metrics the env declares, full marks when the task is solved
            assert set(env.unwrapped.progress_metrics) <= set(env.unwrapped.metric_names)
            assert all(info["metrics"][m] == 1.0 for m in env.unwrapped.progress_metrics), (split, seed, info)


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_splits_never_share_a_task(env_id):
    seen = {}
    for split in splits_of(env_id):
        env = make(env_id, split)
        for seed in range(SEED_BUDGETS.get(env_id, {}).get("splits", 60)):
            seen.setdefault(env.reset(seed=seed)[1]["task_id"], set()).add(split)
    assert all(len(s) == 1 for s in seen.values())


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_pinned_task_rebuilds_the_instance(env_id):
    env = make(env_id)
    obs, info = env.reset(seed=7)
    task = json.loads(json.dumps(env.unwrapped.task))
    other = make(env_id, splits_of(env_id)[-1])
    assert other.reset(seed=123, options={"task": task}) == (obs, info)
    with pytest.raises((ValueError, TypeError)):
        env.reset(options={"task": {"not": "a task"}})


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_make_vec(env_id):
    vec = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode="sync", **TEST_KWARGS.get(env_id, {}))
    obs, info = vec.reset(seed=[0, 1, 2])
    assert len(obs) == 3 and all(isinstance(o, str) for o in obs)
    finals = {}
    for _ in range(vec.envs[0].spec.max_episode_steps):  # step every copy's oracle until each has ended once
        _, rewards, terminated, truncated, info = vec.step(tuple(e.unwrapped.oracle_action() for e in vec.envs))
        for i in range(3):
            if (terminated[i] or truncated[i]) and i not in finals:
                finals[i] = (float(rewards[i]), bool(terminated[i]), bool(info["success"][i]))
        if len(finals) == 3:
            break
    assert [finals.get(i) for i in range(3)] == [(1.0, True, True)] * 3
    vec.close()


@pytest.mark.parametrize("env_id", MAGIC_IDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(action=JUNK)
def test_junk_actions_never_raise_and_score_zero(env_id, action):
    env = make(env_id)
    _, info = env.reset(seed=0)
    check_info(info, reset=True)
    for _ in range(2):
        obs, reward, terminated, truncated, info = env.step(action)
        check_info(info)
        assert isinstance(obs, str) and reward == 0.0 and info["score"] == 0.0 and not info["success"]
        if terminated or truncated:
            break


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_invalid_actions_leave_the_state_unchanged(env_id):
    env = make(env_id)
    env.reset(seed=5)
    oracle = env.unwrapped.oracle_action()
    junk = ["<think>only thinking</think>", '<tool_call>{"name": </tool_call>']  # invalid in every env
    budget = env.spec.max_episode_steps
    for action in junk[:budget - 1] if budget > 1 else junk[:1]:
        obs, reward, terminated, truncated, info = env.step(action)
        assert not terminated and not info["valid"] and info["error"] and obs.startswith(("Error:", "<tool_response>"))
        assert reward == 0.0 and truncated == (budget == 1)
    if budget > 1:  # the task is still there to solve
        assert env.unwrapped.oracle_action() == oracle
        reward, terminated, info = solve(env)
        assert reward == 1.0 and terminated and info["success"]


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_stepping_after_the_end_is_an_invalid_transition(env_id):
    env = make(env_id).unwrapped
    env.reset(seed=1)
    solve(env)
    _, reward, terminated, _, info = env.step("again")
    check_info(info)
    assert terminated and not info["valid"] and info["score"] == 1.0 and reward == 1.0


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_pickling_keeps_the_episode(env_id):
    env = make(env_id)
    env.reset(seed=3)
    clone = pickle.loads(pickle.dumps(env))
    action = env.unwrapped.oracle_action()
    assert clone.step(action) == env.step(action)


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_golden_first_observation(env_id):
    """Silent drift in generation fails here; a deliberate change bumps the version and the golden file."""
    path = GOLDEN / (env_id.replace("/", "_") + ".json")
    current = {split: make(env_id, split).reset(seed=0)[0] for split in splits_of(env_id)}
    if os.environ.get("MAGIC_UPDATE_GOLDEN"):
        path.write_text(json.dumps(current, indent=1, ensure_ascii=False) + "\n")
    assert path.exists(), f"no golden file; create it with MAGIC_UPDATE_GOLDEN=1 pytest {__file__}"
    assert json.loads(path.read_text()) == current


@pytest.mark.parametrize("env_id", MAGIC_IDS)
def test_ansi_render_shows_the_transcript(env_id):
    env = make_env(env_id, render_mode="ansi")
    prompt, _ = env.reset(seed=2)
    env.step(env.unwrapped.oracle_action())
    text = env.render()
    assert text.startswith("[user]\n" + prompt) and "[assistant]" in text
