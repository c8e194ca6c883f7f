"""magic/Workspace-v0: the oracle on every split and knob, baselines at 0, whole-world verification (collateral
damage fails, free fields are free), the sub-goal metric, horizons, ood tools, busy services, pinned tasks and
answers. The tools' own rules are in test_workspace_tools.py."""

import json
import pickle
import re

import gymnasium
import numpy as np
import pytest

import magic_envs  # noqa: F401  (registers the ids)
from magic_envs.core.grammar import format_tool_call, parse_action
from magic_envs.core.policy import RandomPolicy
from magic_envs.core.rollout import rollout
from magic_envs.core.tools import split_tool_responses
from magic_envs.tool_execution.workspace_state import created_keys, fresh
from magic_envs.tool_execution.workspace_tasks import HORIZONS, stated
from magic_envs.tool_execution.workspace_tools import BASE_APPS, OOD_APPS, registry, tools_of

ENV_ID = "magic/Workspace-v0"
SPLITS = ("train", "test", "ood")
OOD_TOOLS = set(tools_of(OOD_APPS))


def make(**kwargs):
    return gymnasium.make(ENV_ID, disable_env_checker=True, **kwargs)  # check_env runs in test_registry.py


def oracle_until_answer(env) -> list[dict]:
    """Step the oracle through every call of the gold plan (retrying busy services); the infos of those steps."""
    infos = []
    while not parse_action(env.unwrapped.oracle_action()).text:
        infos.append(env.step(env.unwrapped.oracle_action())[4])
    return infos


def answer(env):
    _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
    assert terminated
    return reward, info


def all_tools_task(split: str = "train", seed: int = 0, **kwargs) -> dict:
    """A generated task re-pinned with every tool offered, so a test can make any extra change."""
    env = make(split=split, noise=0.0, **kwargs)
    env.reset(seed=seed)
    task = json.loads(json.dumps(env.unwrapped.task))
    task["tools"] = sorted(registry())
    return task


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("horizon", ["short", "medium", "long", [8, 12]])
def test_oracle_solves_every_split_and_knob(split, horizon):
    lo, hi = HORIZONS.get(horizon, horizon) if isinstance(horizon, str) else horizon
    for noise in (0.0, 0.5):
        for distractors in (0, [20, 30]):
            env = make(split=split, horizon=horizon, noise=noise, distractors=distractors)
            for seed in range(2):
                _, info = env.reset(seed=seed)
                task = env.unwrapped.task
                needed = {s["name"] for s in task["plan"]}
                assert lo <= len(task["plan"]) <= hi and needed <= set(task["tools"])
                extra = len(task["tools"]) - len(needed)
                assert extra == 0 if distractors == 0 else 20 <= extra <= 30
                calls = len(oracle_until_answer(env))
                reward, info = answer(env)
                assert (reward, info["success"], info["metrics"]["subgoals"]) == (1.0, True, 1.0), (split, seed)
                # one call per plan step, plus one per busy answer (every failed call but the plan's own refusals)
                refusals = sum(bool(s.get("fails")) for s in task["plan"])
                assert calls + 1 <= env.spec.max_episode_steps and calls == info["metrics"]["calls"]
                assert calls - len(task["plan"]) == info["metrics"]["failed_calls"] - refusals


@pytest.mark.parametrize("split", SPLITS)
def test_random_policy_scores_zero(split):
    env = make(split=split)
    scores = [rollout(env, RandomPolicy("format", seed), seed=seed).score for seed in range(25)]
    assert sum(scores) == 0.0


CHANGES = {  # one change no task asks for, made after the whole gold plan
    "delete an unrelated file": ("delete_path", {"path": "/documents/cv.txt"}),
    "send an extra e-mail": ("send_email", {"to": ["someone@example.org"], "subject": "Hi", "body": "Hello"}),
    "add an extra note": ("create_note", {"title": "Scratch", "body": "x"}),
    "leave an item in the cart": ("add_to_cart", {"sku": None, "quantity": 1}),
    "move money": ("transfer", {"from_account": "savings", "to_account": "checking", "amount": 1.0}),
    "archive an e-mail": ("move_email", {"email_id": None, "folder": "archive"}),
    "complete an unrelated to-do": ("complete_todo", {"todo_id": None}),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_one_unrelated_change_fails_the_task(change):
    name, arguments = CHANGES[change]
    env = make(noise=0.0)
    for seed in range(4):
        env.reset(options={"task": all_tools_task(seed=seed)})
        oracle_until_answer(env)
        world = env.unwrapped.world
        if name == "add_to_cart":
            arguments = {**arguments, "sku": next(s for s, p in world["products"].items() if p["stock"] > 0)}
        if name == "move_email":
            arguments = {**arguments, "email_id": next(k for k, m in world["emails"].items() if m["folder"] == "inbox")}
        if name == "complete_todo":
            arguments = {"todo_id": next(k for k, t in world["todos"].items() if not t["done"])}
        obs, _, _, _, info = env.step(format_tool_call(name, arguments))
        assert info["valid"] and "Error" not in obs, obs
        reward, info = answer(env)
        assert (reward, info["metrics"]["state_match"], info["metrics"]["answer_ok"]) == (0.0, 0.0, 1.0)


def test_free_fields_are_free():
    """Something created and removed again first (a note) shifts every later id and timestamp; still 1.0. So does
    a pre-existing record changed and changed back (its timestamp differs from the gold's)."""
    env = make(noise=0.0)
    for seed in range(4):
        env.reset(options={"task": all_tools_task(seed=seed)})
        _, _, _, _, info = env.step(format_tool_call("create_note", {"title": "Scratch", "body": "x"}))
        env.step(format_tool_call("delete_note", {"note_id": f"n{env.unwrapped.world['seq']}"}))
        note = dict(next(iter(env.unwrapped.world["notes"].values())))
        env.step(format_tool_call("update_note", {"note_id": note["id"], "title": "Renamed"}))
        env.step(format_tool_call("update_note", {"note_id": note["id"], "title": note["title"]}))
        oracle_until_answer(env)
        u = env.unwrapped
        mine, gold = created_keys(u.world, u._ids), created_keys(u._gold.world, u._ids)
        assert mine and mine != gold  # the same records, under other ids
        assert u.world["notes"][note["id"]]["time"] != u._gold.world["notes"][note["id"]]["time"]
        reward, info = answer(env)
        assert reward == 1.0, seed


def _words(value, numbers: bool = True) -> set[str]:
    """The lower-case words and digit runs of a JSON value's texts (and numbers, unless told otherwise)."""
    if isinstance(value, (dict, list)):
        return set().union(set(), *(_words(v, numbers) for v in (value.values() if isinstance(value, dict) else value)))
    if not (isinstance(value, str) or (numbers and not isinstance(value, bool))):
        return set()
    if not numbers and re.fullmatch(r"\d\d:\d\d", value):  # a time found by adding a duration to another
        return set()
    if isinstance(value, float):  # an amount the agent reads as 75.9 it writes as 75.90
        value = f"{value} {value:.2f}"
    return set(re.findall(r"[a-z0-9]+", str(value).lower()))


def test_the_request_and_the_results_carry_everything_the_calls_say():
    """Every word of every text the oracle writes into a call (titles, bodies, paths, ids, dates, times) was in the
    request or in an earlier tool result: nothing the gold needs is hidden from the agent. (What the agent must
    compute, a shortfall to transfer or a meeting's end time, is not checked here.)"""
    for split in SPLITS:
        env = make(split=split, horizon="long", noise=0.2)
        for seed in range(6):
            request, _ = env.reset(seed=seed)
            known = _words(request)
            while True:
                action = env.unwrapped.oracle_action()
                calls = parse_action(action).calls
                for call in calls:
                    said = _words(call.arguments, numbers=False)
                    assert said <= known, (split, seed, call, said - known)
                obs, _, terminated, _, _ = env.step(action)
                for response in split_tool_responses(obs):  # JSON: its strings as the agent's parser reads them
                    known |= _words(json.loads(response) if response.startswith(("{", "[")) else response)
                if terminated:
                    break


def test_subgoal_metric_rises_monotonically_along_the_oracle_path():
    for split in SPLITS:
        env = make(split=split, noise=0.3)
        for seed in range(4):
            env.reset(seed=seed)
            progress = [i["metrics"]["subgoals"] for i in oracle_until_answer(env)]
            reward, info = answer(env)
            progress.append(info["metrics"]["subgoals"])
            assert progress == sorted(progress) and progress[-1] == 1.0 and reward == 1.0
            assert len(set(progress)) == len(env.unwrapped.task["subgoals"]) + (progress[0] == 0)


def test_a_wrong_answer_fails_even_with_the_right_world():
    env = make(noise=0.0)
    seed = next(s for s in range(50) if env.reset(seed=s) and env.unwrapped.task["facts"])
    env.reset(seed=seed)
    oracle_until_answer(env)
    _, reward, _, _, info = env.step("All done.")
    assert (reward, info["metrics"]["state_match"], info["metrics"]["answer_ok"]) == (0.0, 1.0, 0.0)
    assert info["metrics"]["subgoals"] < 1.0  # the question is a sub-goal of its own


def test_answer_facts():
    amount, count, text = {"kind": "amount", "value": 123450}, {"kind": "count", "value": 3}, {"kind": "text",
                                                                                               "value": "Room 4B"}
    assert stated("You spent 1,234.50 EUR.", amount) and stated("1234.5", amount)
    assert not stated("You spent 1234.49 EUR.", amount) and not stated("12345", amount)
    assert stated("There are 3 e-mails.", count) and stated("Three of them.", count) and not stated("33", count)
    assert stated("It is in room 4b.", text) and not stated("Room 4", text)


@pytest.mark.parametrize("horizon", ["short", "medium", "long", [20, 22]])
def test_plans_need_calls_within_the_horizon(horizon):
    lo, hi = HORIZONS[horizon] if isinstance(horizon, str) else horizon
    for split in SPLITS:
        env = make(split=split, horizon=horizon)
        lengths = [len(env.reset(seed=s)[1] and env.unwrapped.task["plan"]) for s in range(12)]
        assert all(lo <= n <= hi for n in lengths) and len(set(lengths)) > 1


def test_ood_tasks_need_tools_train_and_test_never_offer():
    assert len(registry()) >= 40 and len(tools_of(BASE_APPS)) >= 40 and OOD_TOOLS
    for split in ("train", "test"):
        env = make(split=split, distractors=70)  # every tool the split may offer
        for seed in range(15):
            env.reset(seed=seed)
            assert OOD_TOOLS.isdisjoint(env.unwrapped.task["tools"])
    env = make(split="ood")
    for seed in range(15):
        env.reset(seed=seed)
        assert OOD_TOOLS & {s["name"] for s in env.unwrapped.task["plan"]}


def test_knobs_are_checked():
    for bad in ({"horizon": "huge"}, {"horizon": [3, 60]}, {"horizon": [30, 20]}, {"noise": 0.9}, {"noise": True},
                {"distractors": -1}, {"distractors": [5, 2]}, {"split": "ood_apps"}):
        with pytest.raises(ValueError):
            make(**bad)


def test_busy_services_change_nothing_and_the_oracle_retries():
    env, busy = make(noise=0.5, horizon="long"), 0
    for seed in range(3):
        env.reset(seed=seed)
        while True:
            action, before = env.unwrapped.oracle_action(), fresh(env.unwrapped.world)
            obs, reward, terminated, _, info = env.step(action)
            if "is busy" in obs:
                busy += 1
                before["journal"] = env.unwrapped.world["journal"]
                assert env.unwrapped.world == before and env.unwrapped.oracle_action() == action
            if terminated:
                assert reward == 1.0
                break
    assert busy > 10


def test_invalid_calls_are_invalid_actions_that_change_nothing():
    env = make(noise=0.0)
    env.reset(seed=1)
    offered = env.unwrapped.task["tools"]
    before, oracle = fresh(env.unwrapped.world), env.unwrapped.oracle_action()
    missing = next(t for t in sorted(registry()) if t not in offered)
    tool = next(t for t in offered if "query" in registry()[t].tool.parameters["properties"])
    for action, error in ((format_tool_call(tool, {"query": 5}), "5 is not of type 'string'"),
                          (format_tool_call(tool, {"query": "a", "zzz": 1}), "Additional properties"),
                          (format_tool_call(missing, {}), "unknown function")):
        obs, reward, terminated, _, info = env.step(action)
        assert not info["valid"] and error in info["error"] and obs.startswith("<tool_response>") and not terminated
        assert info["metrics"]["calls"] == 0.0
    assert env.unwrapped.world == before and env.unwrapped.oracle_action() == oracle


def test_refused_calls_are_valid_actions_that_change_nothing():
    env = make(noise=0.0)
    env.reset(options={"task": all_tools_task(seed=1)})
    before, oracle = fresh(env.unwrapped.world), env.unwrapped.oracle_action()
    obs, _, _, _, info = env.step(format_tool_call("read_email", {"email_id": "m0"}))
    assert info["valid"] and "Error: no e-mail with id 'm0'" in obs and info["metrics"]["failed_calls"] == 1.0
    assert env.unwrapped.world == before and env.unwrapped.oracle_action() == oracle
    oracle_until_answer(env)
    assert answer(env)[0] == 1.0


def test_odd_argument_values_never_raise():
    """Right-named calls with odd values that still pass the schemas (2.0 for an integer, NaN, infinity, huge or
    non-ASCII text, empty lists): answered or refused, never an exception."""
    env = make(noise=0.2)
    env.reset(options={"task": all_tools_task(seed=3)})
    rng = np.random.default_rng(0)
    odd = [2.0, 0.0, -0.0, 1e308, float("nan"), float("inf"), -1e-9, "", " ", "日本語/ü", "x" * 5000, "/", "//a",
           "#", [], ["", "a@b.co"], True, 0, 10**30]
    tools = [spec.tool for spec in registry().values()]
    for _ in range(600):
        tool = tools[rng.integers(len(tools))]
        props = tool.parameters["properties"]
        arguments = {name: odd[rng.integers(len(odd))] for name in props if rng.random() < 0.7}
        _, _, terminated, _, info = env.step(format_tool_call(tool.name, arguments))
        assert not terminated and set(info) >= {"valid", "metrics"}


def test_pickling_mid_episode_keeps_the_episode():
    env = make(noise=0.3)
    env.reset(seed=2)
    for _ in range(7):
        env.step(env.unwrapped.oracle_action())
    clone = pickle.loads(pickle.dumps(env))
    while True:
        action = env.unwrapped.oracle_action()
        assert clone.unwrapped.oracle_action() == action
        mine, theirs = env.step(action), clone.step(action)
        assert mine == theirs
        if mine[2]:
            assert mine[1] == 1.0
            break


def test_pinned_tasks_are_checked():
    env = make()
    task = all_tools_task()
    for key, value, words in (("plan", [{"name": "no_such_tool", "arguments": {}}], "offered tool"),
                              ("noise", 2, "noise"), ("subgoals", [{"goal": "pay_invoice", "steps": [0, 1]}], "cover"),
                              ("tools", ["no_such_tool"], "known function")):
        with pytest.raises(ValueError, match=words):
            env.reset(options={"task": {**task, key: value}})
    broken = json.loads(json.dumps(task))
    step = next(s for s in broken["plan"] if not s.get("fails"))
    step["arguments"] = {k: v for k, v in step["arguments"].items() if k in
                         registry()[step["name"]].tool.parameters["required"]} | {"zzz": 1}
    with pytest.raises(ValueError, match="invalid arguments"):
        env.reset(options={"task": broken})
    refused = json.loads(json.dumps(task))
    next(s for s in refused["plan"] if not s.get("fails"))["fails"] = True  # said to be refused, but it succeeds
    with pytest.raises(ValueError, match="should be refused"):
        env.reset(options={"task": refused})


def test_same_seed_same_episode_with_noise():
    def episode():
        env = make(noise=0.4, horizon="short")
        env.reset(seed=11)
        out, rng = [], np.random.default_rng(0)
        for i in range(40):
            action = env.unwrapped.oracle_action() if i % 3 else env.unwrapped.random_action(rng)
            out.append(env.step(action)[:3])
            if out[-1][2]:
                break
        return out
    assert episode() == episode()
