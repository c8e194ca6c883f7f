"""magic/BFCLMultiTurn-v0 against bfcl-eval itself, on every BFCL v3 multi-turn entry.

The agreement test plays scripted call sequences (the gold calls and systematic perturbations of them) through
our env and through bfcl-eval's own pipeline: its multi-turn inference loop (`BaseHandler.
inference_multi_turn_FC`, driven by a handler that replays the script instead of querying a model, and
executing the calls with BFCL's eval-based executor), the force-termination check of its runner and its
`multi_turn_checker`. Verdicts and error types must be equal. Skipped without bfcl-eval (and `overrides`,
which bfcl-eval's handler module imports).
"""

import contextlib
import copy
import decimal
import io
import itertools
import json
import pickle

import gymnasium
import pytest

import magic_envs  # noqa: F401  (registers the ids)
from magic_envs.core.grammar import format_tool_call
from magic_envs.tool_execution import bfcl_backends as backends
from magic_envs.tool_execution.bfcl_multi_turn import (
    ADDED_FUNCTIONS,
    CATEGORIES,
    MAX_STEPS,
    UNSOLVABLE,
    BFCLMultiTurnEnv,
)

pytest.importorskip("bfcl_eval")
JUNK = ("no_such_function", {})  # a call that runs, fails and changes nothing, in both executors


def all_entries():
    return [e for c in CATEGORIES for e in backends.entries(c)]


def gold_of(entry):
    return [[backends.parse_gold_call(c, entry["involved_classes"]) for c in turn] for turn in entry["ground_truth"]]


ENV = BFCLMultiTurnEnv()


def play(entry_id, script, env=ENV):
    """Our verdict (valid, error type) for a script: per user turn, a list of steps, each a list of calls."""
    env.reset(options={"task": {"id": entry_id}})
    for steps in script:
        for calls in steps + [[]]:  # the turn's steps, then a plain-text answer ends it
            action = "\n".join(format_tool_call(n, a) for n, a in calls) or "Done."
            terminated = env.step(action)[2]
            if terminated:
                return env.verdict[:2]
    raise AssertionError(f"{entry_id}: the episode outlived its script")


# ---- bfcl-eval's side -------------------------------------------------------------------------------------
def bfcl_pipeline():
    """bfcl-eval's inference loop and checker, or a skip where they cannot be imported."""
    pytest.importorskip("overrides")
    import mpmath
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import (
        multi_turn_checker,
    )
    from bfcl_eval.model_handler.base_handler import BaseHandler

    class ScriptedHandler(BaseHandler):
        """A function-calling 'model' that answers each step with the script's calls (BFCL's call text)."""

        def __init__(self, name, script):
            super().__init__(name, temperature=0)
            self.is_fc_model, self.script, self.turn, self.step = True, script, -1, 0

        def _pre_query_processing_FC(self, data, entry):
            return data

        def _compile_tools(self, data, entry):  # the function docs matter only to a real model
            return data

        def add_first_turn_message_FC(self, data, messages):
            self.turn, self.step = 0, 0
            return data

        def _add_next_turn_user_message_FC(self, data, messages):
            self.turn, self.step = self.turn + 1, 0
            return data

        def _query_FC(self, data):
            steps = self.script[self.turn] if self.turn < len(self.script) else []
            calls = steps[self.step] if self.step < len(steps) else []
            self.step += 1
            # What bfcl-eval's convert_to_function_call makes of a native call: name(key=repr(value), ...).
            return [f"{n}({','.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls], 0.0

        def _parse_query_response_FC(self, response):
            return {"model_responses": response, "input_token": 0, "output_token": 0}

        def _add_assistant_message_FC(self, data, response):
            return data

        def _add_execution_results_FC(self, data, results, response):
            return data

        def decode_execute(self, result):
            return result

    names = itertools.count()

    def verdict(entry, script):
        name = f"scripted_{next(names)}"
        precision = mpmath.mp.dps, decimal.getcontext().prec
        test_entry = {**copy.deepcopy(entry), "function": []}
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # the loop prints every step
                responses, _ = ScriptedHandler(name, script).inference_multi_turn_FC(test_entry, False, True)
            # multi_turn_runner: a result with another number of turns than the gold answer was force-terminated;
            # it decodes every step and drops the empty ones.
            if len(responses) != len(entry["ground_truth"]):
                return False, "multi_turn:force_terminated"
            decoded = [[step for step in turn if step] for turn in responses]
            result = multi_turn_checker(decoded, entry["ground_truth"], entry, backends.category_of(entry["id"]),
                                        name)
            return result["valid"], result.get("error_type", "")
        finally:  # bfcl-eval keeps every backend object it built in its module globals, by model name
            for key in [k for k in vars(multi_turn_utils) if k.startswith(name + "_")]:
                delattr(multi_turn_utils, key)
            mpmath.mp.dps, decimal.getcontext().prec = precision  # its MathAPI leaves them changed

    return verdict


# ---- the scripts --------------------------------------------------------------------------------------------
def changes_state(entry):
    """Per gold turn, per call: whether running it changes some backend object's public state."""
    run = backends.Backends(entry["involved_classes"], entry["initial_config"], "long_context" in entry["id"])
    flags = []
    for turn in gold_of(entry):
        flags.append([])
        for name, arguments in turn:
            before = pickle.dumps(run.state())  # a snapshot far cheaper than a deep copy
            run.call(name, arguments)
            flags[-1].append(pickle.dumps(run.state()) != before)
    return flags


def perturbations(entry, step_cap=True):
    """(label, script) pairs: the gold calls as BFCL runs them, and ways of getting them wrong. `step_cap`
    adds the two scripts that pad a turn with failing calls up to 20 and 21 steps (the slowest to run)."""
    gold, turns = gold_of(entry), len(entry["question"])
    gold = (gold + [[]] * turns)[:turns]  # the script follows the user turns (multi_turn_base_154 has one less)
    one_step = [[calls] if calls else [] for calls in gold]
    yield "gold", one_step
    yield "call_per_step", [[[c] for c in calls] for calls in gold]
    flags = changes_state(entry)
    where = [(t, i) for t, calls in enumerate(gold) for i in range(len(calls))]
    writes = [(t, i) for t, i in where if t < len(flags) and flags[t][i]]
    reads = [(t, i) for t, i in where if (t, i) not in writes]
    for label, picked in (("drop_write", writes[:1]), ("drop_read", reads[:1]),
                          ("extra_write", writes[-1:]), ("changed_argument", where[len(where) // 2:][:1])):
        for t, i in picked:
            calls = [list(c) for c in gold]
            if label.startswith("drop"):
                del calls[t][i]
            elif label == "extra_write":
                calls[t].insert(i + 1, calls[t][i])
            else:
                calls[t][i] = (calls[t][i][0], changed(calls[t][i][1]))
            yield label, [[c] if c else [] for c in calls]
    active = [t for t, calls in enumerate(gold) if calls]
    if active:
        t = active[0]
        silent = [list(s) for s in one_step]
        silent[t] = []
        yield "silent_turn", silent
        if t + 1 < turns:
            late = [list(s) for s in one_step]
            late[t], late[t + 1] = [], [gold[t] + gold[t + 1]]
            yield "late_turn", late
            # The gold step then makes 20 steps (passes) or 21 (fails).
            for junk in (MAX_STEPS - 1, MAX_STEPS) if step_cap else ():
                capped = [list(s) for s in one_step]
                capped[t] = [[JUNK]] * junk + capped[t]
                yield f"steps_{junk + 1}", capped


def changed(arguments):
    """The arguments with two values of one type swapped, or else the first value altered."""
    pairs = [(a, b) for a, b in itertools.combinations(arguments, 2)
             if type(arguments[a]) is type(arguments[b]) and arguments[a] != arguments[b]]
    out = dict(arguments)
    if pairs:
        a, b = pairs[0]
        out[a], out[b] = arguments[b], arguments[a]
    elif arguments:
        key = next(iter(arguments))
        value = arguments[key]
        out[key] = (not value if isinstance(value, bool) else value + 1 if isinstance(value, (int, float))
                    else value + "_x" if isinstance(value, str) else value[:-1] if isinstance(value, list) else {})
    return out


# ---- tests --------------------------------------------------------------------------------------------------
def test_gold_calls_pass_every_entry_and_dropping_a_state_change_fails_it():
    dropped = redundant = 0
    for entry in all_entries():
        expected = (False, "multi_turn:force_terminated") if entry["id"] in UNSOLVABLE else (True, "")
        gold = gold_of(entry)[:len(entry["question"])]
        assert play(entry["id"], [[calls] if calls else [] for calls in gold]) == expected, entry["id"]
        if entry["id"] in UNSOLVABLE:
            continue
        for t, flags in enumerate(changes_state(entry)):
            for i in (i for i, changes in enumerate(flags) if changes):
                calls = [list(c) for c in gold]
                del calls[t][i]
                # A later call of the turn can redo what the dropped one did (echo writes the file touch made):
                # the turn then still ends in the gold state and fails only if a gold result goes missing.
                passed = play(entry["id"], [[c] if c else [] for c in calls])[0]
                assert not passed or end_state(entry, calls[:t + 1]) == end_state(entry, gold[:t + 1])
                dropped, redundant = dropped + 1, redundant + passed
    assert dropped > 2000 and redundant < 0.01 * dropped


def end_state(entry, turns):
    run = backends.Backends(entry["involved_classes"], entry["initial_config"], "long_context" in entry["id"])
    for calls in turns:
        for name, arguments in calls:
            run.call(name, arguments)
    return run.state()


def test_verdicts_equal_bfcl_eval_on_every_entry_and_perturbation():
    bfcl_verdict = bfcl_pipeline()
    labels, disagreements, n = set(), [], 0
    for k, entry in enumerate(all_entries()):
        for label, script in perturbations(entry, step_cap=k % 5 == 0):
            ours, theirs = play(entry["id"], script), bfcl_verdict(entry, script)
            n += 1
            labels.add((label, ours[0]))
            if ours != theirs and not forced_in_last_turn(script):
                disagreements.append((entry["id"], label, ours, theirs))
    assert not disagreements, disagreements[:5]
    assert n > 5000
    # Every kind of perturbation occurs; each deliberate mistake fails, where BFCL says so too.
    assert {lab for lab, _ in labels} >= {"gold", "call_per_step", "drop_write", "drop_read", "extra_write",
                                          "changed_argument", "silent_turn", "late_turn", "steps_20", "steps_21"}
    assert {lab for lab, ok in labels if ok} >= {"gold", "call_per_step", "steps_20"}
    assert not {lab for lab, ok in labels if ok} & {"drop_write", "drop_read", "silent_turn", "late_turn", "steps_21"}


def forced_in_last_turn(script):
    """BFCL's runner sees a force-quit only as a missing turn, so one in the last turn goes unnoticed there;
    here more than 20 call steps in any turn fail (test_step_cap_in_the_last_turn_differs_deliberately)."""
    return len(script[-1]) > MAX_STEPS


def test_step_cap_in_the_last_turn_differs_deliberately():
    entry = backends.find_entry("multi_turn_base_0")
    script = [[calls] for calls in gold_of(entry)]
    script[-1] = [[JUNK]] * MAX_STEPS + script[-1]
    assert play(entry["id"], script) == (False, "multi_turn:force_terminated")
    assert bfcl_pipeline()(entry, script) == (True, "")


def test_miss_func_holds_functions_back_until_their_turn():
    entry = backends.find_entry("multi_turn_miss_func_0")  # {"3": ["sort"]}
    env = gymnasium.make("magic/BFCLMultiTurn-v0", category="multi_turn_miss_func")
    _, info = env.reset(options={"task": {"id": entry["id"]}})
    offered = [t["function"]["name"] for t in info["tools"]]
    assert "sort" not in offered and "mv" in offered
    observation = ""
    while not observation.startswith(ADDED_FUNCTIONS) and env.unwrapped._turn < 3:
        observation, *_ = env.step(env.unwrapped.oracle_action())
    assert env.unwrapped._turn == 3 and observation.startswith(ADDED_FUNCTIONS + "\n\n<tools>\n")
    added = [json.loads(line) for line in observation.split("<tools>\n")[1].split("\n</tools>")[0].splitlines()]
    assert [a["function"]["name"] for a in added] == ["sort"]
    assert added[0]["function"]["parameters"]["type"] == "object"


def test_miss_param_turn_is_not_checked_and_oracle_declines():
    env = BFCLMultiTurnEnv(category="multi_turn_miss_param")
    env.reset(options={"task": {"id": "multi_turn_miss_param_0"}})  # turn 3 lacks a parameter
    for _ in range(3):
        env.step(env.oracle_action())
        env.step(env.oracle_action())
    assert env._turn == 3 and "please tell me what is missing" in env.oracle_action()
    assert env.step(env.oracle_action())[0].startswith("The specific file is")


def test_long_context_loads_the_long_content():
    short, long = (BFCLMultiTurnEnv(category=c) for c in ("multi_turn_base", "multi_turn_long_context"))
    short.reset(options={"task": {"id": "multi_turn_base_0"}})
    long.reset(options={"task": {"id": "multi_turn_long_context_0"}})
    calls = format_tool_call("cd", {"folder": "document"}) + format_tool_call("ls", {"a": True})
    assert len(long.step(calls)[0]) > 2 * len(short.step(calls)[0])  # long_context adds files


def test_calls_run_by_name_errors_are_results_and_state_is_kept_across_turns():
    env = BFCLMultiTurnEnv()
    env.reset(options={"task": {"id": "multi_turn_base_0"}})
    observation, _, terminated, _, info = env.step(
        format_tool_call("cd", {"folder": "nowhere"}) + format_tool_call("__class__", {})
        + format_tool_call("cd", {"folder": "document", "extra": 1}) + format_tool_call("mkdir", {"dir_name": "t"}))
    assert info["valid"] and not terminated and info["role"] == "tool"
    assert observation.count("<tool_response>") == 4
    assert "No such directory" in observation and "name '__class__' is not defined" in observation
    assert "unexpected keyword argument 'extra'" in observation
    assert info["metrics"] == {"turns_passed": 0.0, "calls": 4.0, "failed_calls": 3.0}
    assert "t" in env._model.instances["GorillaFileSystem"].root.contents  # state changed


def test_costly_math_is_refused_and_precision_does_not_leak():
    import mpmath
    run = backends.Backends(["MathAPI"], {}, False)
    before = (mpmath.mp.dps, decimal.getcontext().prec)
    assert "mpf('3.0" in run.call("logarithm", {"value": 8, "base": 2, "precision": 50})  # BFCL's str() of it
    assert "Decimal('1.41421" in run.call("square_root", {"number": 2, "precision": 30})
    assert (mpmath.mp.dps, decimal.getcontext().prec) == before  # both calls set them process-wide
    assert run.call("power", {"base": 2, "exponent": 10}) == '{"result": 1024}'
    for name, arguments, why in (("power", {"base": 10, "exponent": 10**9}, "the result would be too large"),
                                 ("multiply", {"a": "x", "b": 10**12}, "the result would be too large"),
                                 ("logarithm", {"value": 2, "base": 3, "precision": 10**9}, "precision must"),
                                 ("round_number", {"number": 5, "decimal_places": -10**9}, "decimal_places must")):
        assert run.call(name, arguments).startswith(backends.ERROR + why), name


def test_replaying_an_entry_gives_the_same_verdict():
    """Backends keep argument objects in their state (post_tweet's `mentions`, extended by `mention`): the
    cached gold calls must never be shared with them."""
    entry = backends.find_entry("multi_turn_base_147")
    script = [[calls] for calls in gold_of(entry)]
    assert [play(entry["id"], script) for _ in range(3)] == [(True, "")] * 3


def test_pickled_env_continues_the_episode_with_the_same_backends():
    env = BFCLMultiTurnEnv()
    env.reset(options={"task": {"id": "multi_turn_long_context_3"}})
    env.step(env.oracle_action())
    clone = pickle.loads(pickle.dumps(env))
    while env.verdict is None:
        action = env.oracle_action()
        assert clone.step(action) == env.step(action)
    assert clone.verdict == env.verdict == (True, "", "")


def test_pinned_entries_and_knobs():
    env = BFCLMultiTurnEnv()
    entry = json.loads(json.dumps(backends.find_entry("multi_turn_base_3")))
    assert env.reset(options={"task": entry})[0] == env.reset(options={"task": {"id": "multi_turn_base_3"}})[0]
    for bad in ({"id": "multi_turn_base_9999"}, {"id": 3}, {**entry, "involved_classes": ["Nope"]},
                {**entry, "ground_truth": [["os.system('ls')"]]}, {**entry, "question": [[]]},
                {**entry, "missed_function": {"0": ["no_such_function"]}}, {**entry, "missed_function": {"9": ["cd"]}},
                {**entry, "ground_truth": [["cd(folder=('a', 'b'))"]]}, {**entry, "ground_truth": [["cd(**x)"]]}):
        with pytest.raises(ValueError):
            env.reset(options={"task": bad})
    with pytest.raises(ValueError, match="category"):
        BFCLMultiTurnEnv(category="simple")
    with pytest.raises(ValueError, match="split"):
        BFCLMultiTurnEnv(split="train")
    drawn = {BFCLMultiTurnEnv(category="multi_turn_miss_func").reset(seed=s)[1]["task_id"] for s in range(20)}
    assert len(drawn) > 10


def test_missing_bfcl_eval_is_an_import_error_with_the_pip_command(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    backends.entries.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"BFCLMultiTurn-v0.*pip install --no-deps .*bfcl-eval.* mpmath"):
            BFCLMultiTurnEnv()
    finally:
        monkeypatch.undo()
        backends.entries.cache_clear()
