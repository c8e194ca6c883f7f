"""ToolPlan-v0: oracle, baselines and reward hacks per category, the generator's guarantees, fact checks, fuzzing."""

import doctest
import json
import pickle

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magic_envs.core.grammar import format_tool_call
from magic_envs.tool_planning.toolplan import CATEGORIES, MAX_CALLS, ToolPlanEnv, call_arguments, mentions
from magic_envs.tool_planning.toolplan_tasks import holds
from magic_envs.tool_planning.universe import extract, load_universe

ID, ENTRY, STEPS = "magic/ToolPlan-v0", "magic_envs.tool_planning.toolplan:ToolPlanEnv", 24
METRICS = {"name_accuracy", "argument_accuracy", "turns_passed", "answer_ok", "calls"}
SPLITS = ("train", "test", "ood")
U = load_universe()


def make(**kwargs):
    """The registered env, or the same spec where the registry row is not there yet."""
    spec = gymnasium.registry.get(ID) or EnvSpec(ID, entry_point=ENTRY, max_episode_steps=STEPS)
    return gymnasium.make(spec, **kwargs)


def play(env, policy, seed=None, options=None):
    """Run `policy(env, info)` to the end of the episode; the last step's (reward, info)."""
    _, info = env.reset(seed=seed, options=options)
    reward, done = 0.0, False
    while not done:
        _, reward, terminated, truncated, info = env.step(policy(env.unwrapped, info))
        done = terminated or truncated
    return reward, info


def oracle(env, info):
    return env.oracle_action()


def gold_calls(turn):
    return [(name, call_arguments(args)) for call in turn["gold"] for name, args in call.items()]


def scripted(batches_of):
    """A fresh policy that sends the batches `batches_of(env, turn)` of calls, then answers with every fact."""
    queues = {}

    def policy(env, info):
        queue = queues.setdefault(env._turn, None)
        if queue is None:
            queue = queues[env._turn] = list(batches_of(env, env._turns[env._turn]))
        if queue:
            return "\n".join(format_tool_call(n, a) for n, a in queue.pop(0))
        return "Results: " + "; ".join(env._turns[env._turn]["facts"])
    return policy


# ---- the oracle and the baselines ---------------------------------------------------------------------
@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("category", CATEGORIES)
def test_oracle_solves_every_category_and_split(category, split):
    env = make(split=split, category=category)
    for seed in range(50):
        reward, info = play(env, oracle, seed)
        assert reward == 1.0 and info["success"], (seed, info)
        assert info["metrics"]["name_accuracy"] == info["metrics"]["argument_accuracy"] == 1.0
        assert info["metrics"]["turns_passed"] == info["metrics"]["answer_ok"] == 1.0


def first_function(env, info):
    if not env._executed[env._turn]:
        name = env._offered[0]
        return format_tool_call(name, U.sample_call(name, np.random.default_rng(env._turn)).arguments)
    return "Done, here you go."


def random_calls(env, info):
    return env.random_action(env._rng)


def never_call(env, info):
    return "I have taken care of everything you asked."


@pytest.mark.parametrize("category", CATEGORIES)
@pytest.mark.parametrize("baseline", [random_calls, first_function, never_call])
def test_baselines_score_near_zero(category, baseline):
    env = make(category=category)
    env.unwrapped._rng = np.random.default_rng(0)
    scores = [play(env, baseline, seed)[0] for seed in range(40)]
    assert np.mean(scores) <= 0.05


def enum_variants(turn):
    """Each gold call again with every other value of each of its enum parameters."""
    return [(name, {**args, p: v}) for name, args in gold_calls(turn) for p, spec in U.functions[name].params.items()
            for v in spec.get("enum", ()) if v != args.get(p, spec.get("default"))]


@pytest.mark.parametrize("category", CATEGORIES)
def test_reward_hacks_score_zero(category):
    def every_function(env, turn):  # the gold calls plus a call of every other offered function
        gold = gold_calls(turn)
        others = [(n, U.sample_call(n, np.random.default_rng(0)).arguments) for n in env._offered
                  if n not in dict(gold)]
        return [gold + others]

    def every_enum_value(env, turn):  # the gold calls and their variants with every enum value
        calls = gold_calls(turn) + enum_variants(turn)
        return [calls[i:i + MAX_CALLS] for i in range(0, len(calls), MAX_CALLS)]

    def quote_the_calls(env, info):  # the expected calls and every fact, in prose, without calling
        turn = env._turns[env._turn]
        return "I would call " + json.dumps(gold_calls(turn)) + " which gives " + "; ".join(turn["facts"])

    def mute_oracle(env, info):  # the right calls, but an answer that reports nothing
        action = env.oracle_action()
        return action if "<tool_call>" in action else "All done."

    env = make(category=category)
    for seed in range(15):
        env.reset(seed=seed)
        hacks = [scripted(every_function), quote_the_calls, mute_oracle]
        if any(enum_variants(t) for t in env.unwrapped.task["turns"]):
            hacks.append(scripted(every_enum_value))
        for policy in hacks:
            reward, info = play(env, policy, seed)
            assert reward == 0.0 and not info["success"], (seed, policy)
        reward, info = play(env, mute_oracle, seed)
        assert info["metrics"]["answer_ok"] == 0.0 and info["metrics"]["argument_accuracy"] == 1.0


# ---- what the generator guarantees -------------------------------------------------------------------
def tasks(category, split, n=100):
    env = make(split=split, category=category).unwrapped
    for seed in range(n):
        env.reset(seed=seed)
        yield env.task


@pytest.mark.parametrize("split", SPLITS)
def test_dependency_values_come_from_earlier_outputs_and_are_never_stated(split):
    for task in tasks("dependency", split):
        (turn,) = task["turns"]
        calls = gold_calls(turn)
        assert 2 <= len(calls) <= 4 and len(turn["links"]) == len(calls) - 1
        assert {link["call"] for link in turn["links"]} == set(range(1, len(calls)))
        for link in turn["links"]:
            value = calls[link["call"]][1][link["param"]]
            value = value[0] if isinstance(value, list) else value
            source = calls[link["source"][1]]
            assert link["source"][1] < link["call"]
            assert value in extract(U.call(*source, world_seed=task["world_seed"]), link["output"])
            assert str(value).lower() not in turn["request"].lower()
        vocab = [U.functions[n].split for n, _ in calls]
        assert set(vocab[1:]) == {"ood" if split == "ood" else "iid"} and (split == "ood" or vocab[0] == "iid")


@pytest.mark.parametrize("split", SPLITS)
def test_condition_branches_are_balanced_and_follow_the_observation(split):
    taken = []
    for task in tasks("condition", split):
        (turn,) = task["turns"]
        (check, args), (branch, _) = gold_calls(turn)
        c = turn["condition"]
        assert check == c["function"] and c["then"] != c["else"] and branch in (c["then"], c["else"])
        assert {c["then"], c["else"]} <= set(task["functions"])
        observed = extract(U.call(check, args, world_seed=task["world_seed"]), c["path"])[0]
        assert holds(c["op"], observed, c["value"]) == (branch == c["then"])
        taken.append(branch == c["then"])
    assert 0.35 <= np.mean(taken) <= 0.65


@pytest.mark.parametrize("split", SPLITS)
def test_context_inheritance_reuses_earlier_turns_implicitly(split):
    for task in tasks("context_inheritance", split):
        turns = task["turns"]
        assert 2 <= len(turns) <= 3
        for k, turn in enumerate(turns[1:], 1):
            (link,) = turn["links"]
            j = link["source"][0]
            (_, args), = gold_calls(turn)
            (earlier, earlier_args), = gold_calls(turns[j])
            value = args[link["param"]]
            value = value[0] if isinstance(value, list) else value
            assert j < k and str(value).lower() not in turn["request"].lower()
            if "output" in link:
                assert value in extract(U.call(earlier, earlier_args, task["world_seed"]), link["output"])
            else:
                assert earlier_args[link["argument"]] == value


@pytest.mark.parametrize("split", SPLITS)
def test_functions_come_from_the_split(split):
    for category in CATEGORIES:
        for task in tasks(category, split, 30):
            used = {n for t in task["turns"] for n, _ in gold_calls(t)}
            split_of = {U.functions[n].split for n in set(task["functions"]) - used}
            assert split_of <= {"ood" if split == "ood" else "iid"}
            assert len(task["functions"]) - len(used) >= 2 - (category == "condition")  # distractors


@pytest.mark.parametrize("answer, fact, told", [
    ("Your booking id is BK-6X39EP.", "BK-6X39EP", True),
    ("your booking id is bk-6x39ep", "BK-6X39EP", True),
    ("The balance is 5,516.44 USD", "5516.44", True),
    ("The balance is 5516.44 USD", "5,516.44", True),
    ("The balance is 5516.4 USD", "5516.44", False),
    ("The balance is 5 516.44 USD", "5516.44", False),
    ("Temperature 23.4C", "23.4", True),
    ("BK-6X39E", "BK-6X39EP", False),
    ("", "Laura Haddad", False),
    ("Laura   Haddad", "Laura Haddad", False),
])
def test_fact_check(answer, fact, told):
    assert mentions(answer, fact) is told


def test_a_turn_needs_every_fact_and_exactly_the_gold_calls():
    env = make(category="general").unwrapped
    env.reset(seed=4)
    turn = env._turns[0]
    env.step(env.oracle_action())
    _, reward, terminated, _, info = env.step("Results: " + "; ".join(turn["facts"][:-1]))
    assert terminated and reward == 0.0 and info["metrics"]["answer_ok"] == 0.0
    env.reset(seed=4)
    env.step(env.oracle_action())
    env.step(format_tool_call(*gold_calls(turn)[0]))  # one gold call again
    _, reward, _, _, info = env.step(env.oracle_action())
    assert reward == 0.0 and info["metrics"]["calls"] == len(turn["gold"]) + 1 and info["metrics"]["answer_ok"] == 1.0


def test_metrics_pool_turns_and_keep_their_keys():
    env = make(category="context_inheritance").unwrapped
    _, info = env.reset(seed=1)
    n = len(env._turns)
    assert set(info["metrics"]) == METRICS and info["metrics"]["name_accuracy"] == 0.0
    env.step(env.oracle_action())  # the first turn's call and its answer; then no call in any other turn
    _, _, terminated, _, info = env.step(env.oracle_action())
    while not terminated:
        _, reward, terminated, _, info = env.step("No idea.")
        assert set(info["metrics"]) == METRICS
    assert reward == 0.0 and info["metrics"]["turns_passed"] == pytest.approx(1 / n)
    assert info["metrics"]["name_accuracy"] == info["metrics"]["argument_accuracy"] == pytest.approx(1 / n)


def test_invalid_calls_are_retried_and_change_nothing():
    env = make(category="dependency").unwrapped
    env.reset(seed=2)
    name = env._offered[0]
    for action in (format_tool_call("no_such_function", {}), format_tool_call(name, {"bogus": 1}),
                   "\n".join([env.oracle_action()] * (MAX_CALLS + 1))):
        obs, _, terminated, _, info = env.step(action)
        assert not info["valid"] and info["error"] and obs.startswith("<tool_response>") and not terminated
    assert env._executed[0] == [] and play_on(env) == 1.0


def play_on(env):
    while True:
        _, reward, terminated, _, _ = env.step(env.oracle_action())
        if terminated:
            return reward


def test_pickling_mid_episode_keeps_the_episode():
    env = make(category="dependency")
    env.reset(seed=6)
    env.step(env.unwrapped.oracle_action())  # a validated call: the tools now hold jsonschema validators
    clone = pickle.loads(pickle.dumps(env))
    while True:
        action = env.unwrapped.oracle_action()
        assert clone.unwrapped.oracle_action() == action
        step = env.step(action)
        assert clone.step(action) == step
        if step[2]:
            break


def test_parallel_calls_answer_in_call_order():
    env = make(category="general").unwrapped
    env.reset(seed=0)
    obs, _, _, _, info = env.step(env.oracle_action())
    blocks = obs.split("</tool_response>")[:-1]
    assert info["role"] == "tool" and len(blocks) == len(env._turns[0]["gold"]) == info["metrics"]["calls"]


# ---- robustness ----------------------------------------------------------------------------------------
def deep(n):
    return "[" * n + "]" * n


JUNK = st.one_of(
    st.text(max_size=300),
    st.text(max_size=200).map(lambda s: f"<tool_call>{s}</tool_call>"),
    st.tuples(st.text(max_size=30), st.dictionaries(st.text(max_size=10), st.integers())).map(
        lambda t: format_tool_call(*t)),
    st.sampled_from([
        '<tool_call>{"name": "search_flights", "arguments": {"origin": }}</tool_call>',
        '<tool_call>{"name": 5}</tool_call>', "<tool_call>", "</tool_call>", "<think>", "",
        format_tool_call("get_weather_forecast", {"city": "x" * 1_000_000, "date": "2025-01-01"}),
        '<tool_call>{"name": "get_weather_forecast", "arguments": {"city": ' + deep(500) + "}}</tool_call>",
        '<tool_call>{"name": "get_weather_forecast", "arguments": {"x": ' + deep(100_000) + "}}</tool_call>",
        format_tool_call("list_accounts", {}) * 5000,
        "x" * 1_000_000,
    ]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(action=JUNK, seed=st.integers(0, 3))
def test_junk_never_raises_and_never_scores(action, seed):
    env = make()
    env.reset(seed=seed)
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and reward == 0.0 and info["score"] == 0.0 and not info["success"]
        assert set(info["metrics"]) == METRICS and all(isinstance(v, float) for v in info["metrics"].values())
        if terminated or truncated:
            break


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=25)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 3))
def test_junk_calls_of_offered_functions_never_raise_and_never_score(data, seed):
    env = make()
    env.reset(seed=seed)
    name = data.draw(st.sampled_from(env.unwrapped._offered))
    sampled = U.sample_call(name, np.random.default_rng(data.draw(st.integers(0, 9))), True).arguments
    junk = data.draw(st.dictionaries(st.sampled_from(list(U.functions[name].params) + ["x"]), JSON, max_size=5))
    args = {**sampled, **junk} if data.draw(st.booleans()) else junk  # wrong types, or odd values of right ones
    action = "\n".join([format_tool_call(name, args)] * data.draw(st.integers(1, 40)))
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and reward == 0.0 and info["score"] == 0.0 and not info["success"]
        assert set(info["metrics"]) == METRICS
        if terminated or truncated:
            break


# ---- tasks and knobs -------------------------------------------------------------------------------------
def test_pinned_task_round_trip():
    env, other = make(), make(split="ood")
    for seed in range(8):
        obs, info = env.reset(seed=seed)
        task = json.loads(json.dumps(env.unwrapped.task))
        assert other.reset(seed=99, options={"task": task}) == (obs, info)
        assert play(other, oracle, options={"task": task})[0] == 1.0
    bad = [{"not": "a task"}, {**task, "category": "other"}, {**task, "functions": ["nope"]},
           {**task, "turns": []}, {**task, "world_seed": "7"}, {**task, "turns": [{"request": "hi", "facts": []}]},
           {**task, "turns": [{"request": "hi", "facts": [], "gold": [{"send_sms": {}}]}],
            "functions": ["book_flight"]}]
    for broken in bad:
        with pytest.raises(ValueError):
            env.reset(options={"task": broken})


@pytest.mark.parametrize("kwargs", [{"category": "simple"}, {"category": []}, {"category": ["general", "x"]},
                                    {"distractors": -1}, {"distractors": [3, 2]}, {"distractors": "2"},
                                    {"distractors": [1, 99]}, {"optional_rate": 1.5}, {"optional_rate": True},
                                    {"split": "validation"}, {"calls": 0}, {"calls": [3, 2]}, {"calls": "1"},
                                    {"calls": True}, {"category": "condition", "calls": 1},
                                    {"category": ["general", "dependency"], "calls": [5, 6]}])
def test_knob_validation(kwargs):
    with pytest.raises(ValueError):
        ToolPlanEnv(**kwargs)


def test_knobs_shape_the_tasks():
    for n in (0, 4):
        env = make(category="general", distractors=n).unwrapped
        for seed in range(10):
            env.reset(seed=seed)
            assert len(env.task["functions"]) == len(env.task["turns"][0]["gold"]) + n
    plain = make(category="general", optional_rate=0.0).unwrapped
    for seed in range(20):
        plain.reset(seed=seed)
        for name, args in gold_calls(plain.task["turns"][0]):
            assert set(args) <= set(U.functions[name].required)
    mixed = make(category=["condition", "dependency"]).unwrapped
    assert {mixed.reset(seed=s)[0] and mixed.task["category"] for s in range(20)} == {"condition", "dependency"}


def test_calls_set_the_horizon():
    """`calls` narrows each category's size: one general call is a two-step episode the oracle solves; without
    it a general request keeps its 2-4 calls."""
    one = make(category="general", distractors=0, calls=1).unwrapped
    for seed in range(10):
        reward, info = play(one, oracle, seed=seed)
        assert len(one.task["turns"]) == 1 and len(one.task["turns"][0]["gold"]) == 1
        assert reward == 1.0 and info["metrics"]["calls"] == 1
    wide = make(category="general", calls=[3, 4]).unwrapped
    assert {(wide.reset(seed=s), len(wide.task["turns"][0]["gold"]))[1] for s in range(20)} == {3, 4}
    chains = make(category="dependency", calls=[1, 2]).unwrapped  # clipped to the chain's own minimum of two
    assert {(chains.reset(seed=s), len(chains.task["turns"][0]["gold"]))[1] for s in range(10)} == {2}
    default = make(category="general").unwrapped
    assert {(default.reset(seed=s), len(default.task["turns"][0]["gold"]))[1] for s in range(30)} == {2, 3, 4}


def test_docstring_example():
    registered = ID in gymnasium.registry
    if not registered:
        gymnasium.register(ID, entry_point=ENTRY, max_episode_steps=STEPS)
    try:
        runner = doctest.DocTestRunner()
        for test in doctest.DocTestFinder().find(ToolPlanEnv, "ToolPlanEnv", globs={}):
            runner.run(test)
        assert runner.failures == 0 and runner.tries > 0
    finally:
        if not registered:
            del gymnasium.registry[ID]
