"""magic/BFCL-v0 and our AST checker against bfcl-eval itself, on the real BFCL v3 data.

The agreement test runs every entry of every AST category, answered by its first acceptable answer and by
systematic perturbations of it (benchmarks/checker_throughput.py), through both checkers: verdicts and error
types must be equal. bfcl-eval's checker is loaded with a stand-in for the one module that imports every
provider SDK (see `load_reference`). Skipped without bfcl-eval.
"""

import json
import signal
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import magic_envs  # noqa: F401  (registers the ids)
from benchmarks.checker_throughput import cases, load_reference, reference_verdict
from magic_envs.core.grammar import format_tool_call
from magic_envs.tool_planning import bfcl_java, bfcl_js
from magic_envs.tool_planning.ast_check import check_calls
from magic_envs.tool_planning.bfcl import (
    AST_CATEGORIES,
    CATEGORIES,
    NO_CALL,
    UNSOLVABLE,
    BFCLEnv,
    entries,
    oracle_calls,
)
from magic_envs.tool_planning.bfcl_schema import language_of, to_tool

pytest.importorskip("bfcl_eval")

ast_checker = load_reference()


def make(**kwargs):
    return gymnasium.make("magic/BFCL-v0", **kwargs)


def test_verdicts_equal_bfcl_eval_on_every_entry_and_perturbation():
    n, labels, disagreements = 0, set(), []
    for entry, category, language, tools, label, calls in cases():
        theirs = reference_verdict(ast_checker, entry, calls, category, language)
        ours = check_calls(calls, entry["ground_truth"], tools, category, language)
        n += 1
        labels.add(label)
        # Where bfcl-eval raises, the deliberate difference: a failing verdict of type "checker:error".
        expected_type = "checker:error" if theirs[1].startswith("raised") else theirs[1]
        if theirs[0] != ours.valid or (not ours.valid and expected_type != ours.error_type):
            disagreements.append((entry["id"], label, theirs, ours))
    assert not disagreements, disagreements[:5]
    assert n > 60_000 and labels >= {
        "answer", "wrong_value", "wrong_type", "missing_param", "extra_param", "wrong_function", "dropped_call",
        "duplicated_call", "reordered_calls", "typed_wrong_value", "typed_huge_number"}


def test_oracle_passes_bfcl_eval_exactly_on_the_solvable_entries():
    for category in AST_CATEGORIES:
        language = language_of(category)
        for entry in entries(category):
            valid, why = reference_verdict(ast_checker, entry, oracle_calls(entry, category), category, language)
            assert valid == (entry["id"] not in UNSOLVABLE), (entry["id"], why)


class _Slow(Exception):
    pass


def _raise_slow(*_):
    raise _Slow


TOKENS = ["new", " ", "\n", "ArrayList", "<", ">", "<>", "(", ")", "))", "Arrays.asList(", "{", "}", "{{", "}}",
          "add(", "put(", '"', "'", ",", ":", "HashMap<String, Object>", "[", "]", "int", "Array", "1", "-3", "4.5",
          "5L", "6f", "1e3", "7n", "true", "false", "key", "x", ";", "\u00a0", "٣"]
SHAPES = ["{}", "new ArrayList<>(Arrays.asList({}))", "new ArrayList<Long>() {{{{{}}}}}", "new int[]{{{}}}",
          "new HashMap<String, Object>() {{{{{}}}}}", "[[{}], [{}]]", "new Array([{}], [{}])", "[{}]", "{{{}}}",
          "{{a: {}, b: [{}]}}"]
JAVA_KINDS = [("integer", None), ("long", None), ("float", None), ("double", None), ("boolean", None), ("char", None),
              ("String", None), ("any", None), ("ArrayList", "String"), ("ArrayList", "long"), ("ArrayList", "any"),
              ("ArrayList", "char"), ("Array", "integer"), ("Array", "String"), ("HashMap", None)]
JS_KINDS = [("String", None), ("integer", None), ("float", None), ("Bigint", None), ("Boolean", None), ("dict", None),
            ("array", "String"), ("array", "float"), ("array", "integer"), ("any", None)]
source = st.builds(lambda shape, parts: shape.replace("{}", "".join(parts), 1).replace("{}", "".join(parts[::-1])),
                   st.sampled_from(SHAPES), st.lists(st.sampled_from(TOKENS), max_size=10))


def _outcome(fn, *args):
    """(kind, value) of a call, with BFCL's backtracking given half a second (a stall is skipped)."""
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        return "ok", repr(fn(*args))
    except _Slow:
        return "slow", None
    except Exception:
        return "raised", None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM to bound bfcl-eval's backtracking")
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=source, java=st.sampled_from(JAVA_KINDS), js=st.sampled_from(JS_KINDS))
def test_java_and_javascript_decoders_equal_bfcl_eval(text, java, js):
    from bfcl_eval.eval_checker.ast_eval.type_convertor import (
        js_type_converter as js_module,
    )
    from bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter import (
        java_type_converter,
    )

    previous = signal.signal(signal.SIGALRM, _raise_slow)
    try:
        theirs = _outcome(java_type_converter, text, *java)
        if theirs[0] != "slow":
            assert theirs == _outcome(bfcl_java.decode_java, text, *java)
        theirs = _outcome(js_module.js_type_converter, text, *js)
        if theirs[0] != "slow":
            assert theirs == _outcome(bfcl_js.decode_js, text, *js)
    finally:
        signal.signal(signal.SIGALRM, previous)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_arguments_get_bfcl_eval_s_verdict(data):
    """Arbitrary JSON values for a real entry's parameters: the same verdict as bfcl-eval."""
    category = data.draw(st.sampled_from(AST_CATEGORIES))
    pool = entries(category)
    entry = pool[data.draw(st.integers(0, len(pool) - 1))]
    language = language_of(category)
    calls = oracle_calls(entry, category)
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-2, 2, allow_nan=False),
                     st.sampled_from(["", "x", "true", "5", "1.5", "[1]", "{a: 1}", "new int[]{1}"]))
    value = st.recursive(leaf, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids,
                                                                                          max_size=3), max_leaves=6)
    i = data.draw(st.integers(0, len(calls) - 1))
    name, args = calls[i]
    params = list(args) + ["zq"]
    args = {**args, data.draw(st.sampled_from(params)): data.draw(value)}
    calls[i] = (name, args)
    tools = [to_tool(f, language, rename=False) for f in entry["function"]]
    theirs = reference_verdict(ast_checker, entry, calls, category, language)
    assert check_calls(calls, entry["ground_truth"], tools, category, language).valid == theirs[0]


# ---- the env ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("category", CATEGORIES)
def test_oracle_solves_every_entry(category):
    env = BFCLEnv(category=category)
    for entry in entries(category):
        if entry["id"] in UNSOLVABLE:
            continue
        env.reset(options={"task": {"id": entry["id"]}})
        _, reward, terminated, _, info = env.step(env.oracle_action())
        assert (reward, terminated, info["valid"]) == (1.0, True, True), (entry["id"], info)
        assert info["metrics"]["name_accuracy"] == info["metrics"]["argument_accuracy"] == 1.0


def test_check_env_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for category in (None, "java", "irrelevance"):
            check_env(make(category=category).unwrapped)


def test_reset_draws_by_seed_and_pins_by_id_or_entry():
    env = make()
    first = env.reset(seed=3)
    assert env.reset(seed=3) == first
    drawn = env.unwrapped.task
    assert drawn["id"].rsplit("_", 1)[0] in AST_CATEGORIES and drawn["id"] not in UNSOLVABLE
    other = make(category="javascript")
    assert other.reset(seed=9, options={"task": json.loads(json.dumps(drawn))}) == first
    by_id = other.reset(options={"task": {"id": drawn["id"]}})
    assert by_id[0] == first[0] and by_id[1]["tools"] == first[1]["tools"]
    seen = {BFCLEnv(category=["simple", "java"]).generate(np.random.default_rng(s))["id"]
            .rsplit("_", 1)[0] for s in range(40)}
    assert seen == {"simple", "java"}


@pytest.mark.parametrize("task", [{"id": "simple_99999"}, {"id": "nonsense"}, {"not": "a task"},
                                  {"id": "x_1", "question": [[{"role": "user", "content": "hi"}]], "function": []},
                                  {"id": "simple_1", "question": "hi", "function": [], "ground_truth": []}])
def test_malformed_tasks_are_value_errors(task):
    with pytest.raises(ValueError):
        BFCLEnv().reset(options={"task": task})


def test_knob_and_split_errors():
    with pytest.raises(ValueError, match="category"):
        BFCLEnv(category="multi_turn_base")
    with pytest.raises(ValueError, match="split"):
        BFCLEnv(split="train")


def test_missing_bfcl_eval_is_an_import_error_with_the_pip_command(monkeypatch):
    import importlib.util

    from magic_envs.tool_planning import bfcl

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    bfcl.entries.cache_clear()
    try:
        with pytest.raises(ImportError, match="pip install --no-deps"):
            BFCLEnv()
    finally:
        monkeypatch.undo()
        bfcl.entries.cache_clear()


def test_dotted_names_are_shown_with_underscores_and_either_spelling_scores():
    env = BFCLEnv(category="simple")
    _, info = env.reset(options={"task": {"id": "simple_1"}})
    assert [t["function"]["name"] for t in info["tools"]] == ["math_factorial"]
    for name in ("math_factorial", "math.factorial"):
        env.reset(options={"task": {"id": "simple_1"}})
        assert env.step(format_tool_call(name, {"number": 5}))[1] == 1.0
    env.reset(options={"task": {"id": "simple_1"}})
    assert env.step(format_tool_call("math_factorial", {"number": 6}))[1] == 0.0


def test_java_and_javascript_parameters_are_source_strings():
    env = BFCLEnv(category="java")
    _, info = env.reset(options={"task": {"id": "java_22"}})
    ids = info["tools"][0]["function"]["parameters"]["properties"]["ids"]
    assert ids["type"] == "string" and ids["x-bfcl-type"] == "ArrayList" and ids["x-bfcl-items-type"] == "long"
    assert "Java 8 SDK" in info["tools"][0]["function"]["description"]
    name = info["tools"][0]["function"]["name"]
    good = {"ids": "new ArrayList<Long>(Arrays.asList(101L, 202L, 303L))", "newStatus": "2"}
    assert env.step(format_tool_call(name, good))[1] == 1.0
    env.reset(options={"task": {"id": "java_22"}})
    assert env.step(format_tool_call(name, {**good, "newStatus": 2}))[4]["error"] == ""  # scored, not invalid


def test_system_prompts_become_instructions():
    entry = next(e for e in entries("live_simple") if e["question"][0][0]["role"] == "system")
    obs, info = BFCLEnv(category="live_simple").reset(options={"task": {"id": entry["id"]}})
    assert info["instructions"] == entry["question"][0][0]["content"]
    assert obs == entry["question"][0][1]["content"]


def test_irrelevance_is_answered_by_not_calling():
    env = BFCLEnv(category="irrelevance")
    _, info = env.reset(seed=0)
    assert env.oracle_action() == NO_CALL
    _, reward, _, _, info = env.step("I cannot help with that using these tools.")
    assert reward == 1.0 and info["metrics"] == {"name_accuracy": 1.0, "argument_accuracy": 1.0, "calls": 0.0}
    env.reset(seed=0)
    assert env.step(env.random_action(np.random.default_rng(0)))[1] == 0.0


def test_baselines_and_reward_hacks_score_zero_on_ast_categories():
    env = BFCLEnv()
    rng = np.random.default_rng(0)
    scores = {"random": [], "first_function": [], "every_function": [], "never_call": [], "prose": []}
    for seed in range(150):
        _, info = env.reset(seed=seed)
        tools = info["tools"]
        oracle = env.unwrapped.oracle_action() if hasattr(env, "unwrapped") else env.oracle_action()
        actions = {
            "random": env.random_action(rng),
            "first_function": format_tool_call(tools[0]["function"]["name"], {}),
            "every_function": "\n".join(format_tool_call(t["function"]["name"], {}) for t in tools),
            "never_call": "I would rather not call anything.",
            "prose": "The right call is " + oracle.replace("<tool_call>", "").replace("</tool_call>", ""),
        }
        for name, action in actions.items():
            env.reset(seed=seed)
            scores[name].append(env.step(action)[1])
    means = {name: float(np.mean(s)) for name, s in scores.items()}
    assert all(m < 0.05 for m in means.values()), means


def test_metrics_count_calls_and_partial_matches():
    env = BFCLEnv(category="parallel")
    env.reset(options={"task": {"id": "parallel_0"}})
    calls = env.oracle_action().split("\n</tool_call>\n")
    assert len(calls) > 1
    one = calls[0] + "\n</tool_call>"
    _, reward, _, _, info = env.step(one)
    gold = len(entries("parallel")[0]["ground_truth"])
    assert reward == 0.0 and info["metrics"] == {"name_accuracy": 1 / gold, "argument_accuracy": 1 / gold,
                                                 "calls": 1.0}
