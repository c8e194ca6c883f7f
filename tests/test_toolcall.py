"""magic/ToolCall-v0: oracle, baselines, reward-hacking probes, an independent reader, fuzzing, knobs, pinning."""

import json
import string

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magic_envs.core.grammar import format_tool_call
from magic_envs.tool_planning.ast_check import check_calls
from magic_envs.tool_planning.toolcall import ToolCallEnv
from magic_envs.tool_planning.toolcall_tasks import CATEGORIES, could_serve, oracle_calls
from magic_envs.tool_planning.universe import load_universe
from magic_envs.tool_planning.universe.requests import read_surface

ID = "magic/ToolCall-v0"
SPLITS = ("train", "test", "ood")
CALLING = tuple(c for c in CATEGORIES if c != "irrelevance")
U = load_universe()


def make(category="mixed", split="train", **kw) -> ToolCallEnv:
    return gymnasium.make(ID, category=category, split=split, **kw).unwrapped


def score(env, action) -> float:
    _, reward, terminated, _, info = env.step(action)
    assert terminated and info["valid"] and info["score"] == reward
    return reward


def calls_text(calls) -> str:
    return "\n".join(format_tool_call(n, a) for n, a in calls)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("category", CATEGORIES)
def test_oracle_solves_every_category_and_split(category, split):
    env = make(category, split)
    for seed in range(60):
        env.reset(seed=seed)
        assert env.task["category"] == category
        assert score(env, env.oracle_action()) == 1.0, (seed, env.task)


def test_splits_use_their_own_functions_and_mixed_keeps_irrelevance_a_minority():
    iid, ood = {f.name for f in U.functions_for("iid")}, {f.name for f in U.functions_for("ood")}
    seen = {}
    for split in SPLITS:
        env = make(split=split)
        for seed in range(200):
            env.reset(seed=seed)
            assert set(env.task["functions"]) <= (ood if split == "ood" else iid)
            seen.setdefault(split, []).append(env.task["category"])
    shares = {c: seen["train"].count(c) / 200 for c in CATEGORIES}
    assert set(shares) == set(CATEGORIES) and 0.05 < shares["irrelevance"] < 0.25, shares


def _first_offered(env, rng):
    name = env.task["functions"][0]
    return format_tool_call(name, U.sample_call(name, rng, vocab=env.writer.vocab).arguments)


BASELINES = {"random calls": lambda env, rng: env.random_action(rng), "first offered, sampled args": _first_offered,
             "never call": lambda env, rng: "I can't help with that."}


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("category", CATEGORIES)
def test_baselines_score_near_zero(category, split):
    env, rng = make(category, split), np.random.default_rng(0)
    for name, policy in BASELINES.items():
        scores = []
        for seed in range(100):
            env.reset(seed=seed)
            scores.append(score(env, policy(env, rng)))
        expected = 1.0 if (category, name) == ("irrelevance", "never call") else 0.0
        assert abs(np.mean(scores) - expected) <= 0.06, (name, np.mean(scores))


# ---- reward hacking -------------------------------------------------------------------------------------------
def test_calling_every_offered_function_scores_zero():
    rng = np.random.default_rng(1)
    for category in ("multiple", "parallel_multiple", "irrelevance"):
        env = make(category)
        for seed in range(40):
            env.reset(seed=seed)
            gold = oracle_calls(env.task["gold"])
            extra = [(n, U.sample_call(n, rng).arguments) for n in env.task["functions"] if n not in dict(gold)]
            assert extra
            for action in (calls_text(gold + extra), calls_text(extra)):
                env.reset(seed=seed)
                assert score(env, action) == 0.0, (category, seed)


def test_every_enum_value_and_every_boolean_scores_zero():
    probes = 0
    for category in CALLING:
        env = make(category)
        for seed in range(40):
            env.reset(seed=seed)
            gold = oracle_calls(env.task["gold"])
            name, args = gold[0]
            props = U.functions[name].parameters()["properties"]
            for param, prop in props.items():
                options = prop.get("enum") or ([True, False] if prop["type"] == "boolean" else None)
                if options:
                    spread = [(name, dict(args, **{param: v})) for v in options]
                    env.reset(seed=seed)
                    assert score(env, calls_text(spread + gold[1:])) == 0.0, (seed, param)
                    probes += 1
    assert probes > 50


def test_prose_that_quotes_the_expected_call_is_no_call():
    for category in CALLING:
        env = make(category)
        for seed in range(20):
            env.reset(seed=seed)
            quoted = "\n".join(json.dumps({"name": n, "arguments": a}) for n, a in oracle_calls(env.task["gold"]))
            for prose in (f"I would call {quoted}", f"```json\n{quoted}\n```", f"tool_call: {quoted}"):
                env.reset(seed=seed)
                _, reward, _, _, info = env.step(prose)
                assert reward == 0.0 and info["metrics"]["no_call"] == 1.0


def test_irrelevance_offers_nothing_that_could_serve_the_request():
    env = make("irrelevance")
    for seed in range(100):
        env.reset(seed=seed)
        asked = U.functions[env.task["asked"]]
        assert asked.name not in env.task["functions"]
        assert not any(could_serve(U.functions[n], asked) for n in env.task["functions"])


# ---- an independent reader: question text + offered schemas only --------------------------------------------
def _segments(template: str) -> list:
    return [part for lit, field, _, _ in string.Formatter().parse(template)
            for part in ([lit] if lit else []) + ([(field,)] if field is not None else [])]


def _match(segs, text, i, specs):
    """(values, end, literal characters) for every way the segments match text from i."""
    if not segs:
        yield {}, i, 0
        return
    head, rest = segs[0], segs[1:]
    if isinstance(head, str):
        if text[i:i + len(head)].lower() == head.lower():
            yield from ((v, end, n + len(head)) for v, end, n in _match(rest, text, i + len(head), specs))
        return
    nxt = rest[0].lower() if rest and isinstance(rest[0], str) else None
    ends = range(i + 1, len(text) + 1) if nxt is None else \
        [j for j in range(i + 1, len(text)) if text.lower().startswith(nxt, j)]
    for j in ends:
        value = _read(specs[head[0]], text[i:j])
        if value is not _NO:
            for values, end, n in _match(rest, text, j, specs):
                yield {head[0]: value, **values}, end, n


_NO = object()


def _read(spec, text):
    """A surface back to its value (lists and objects by their own grammar), or _NO."""
    if not text or text != text.strip():
        return _NO
    if spec["type"] == "object":
        return next((v for v, end, _ in _match(_segments(spec["say"]), text, 0, spec["props"]) if end == len(text)),
                    _NO)
    if spec["type"] == "array":
        return next(_read_list(spec["items"], text), _NO)
    if spec["type"] == "text" and spec.get("quote", True) and not (len(text) > 1 and text[0] == text[-1] == '"'
                                                                      and '"' not in text[1:-1]):
        return _NO
    try:
        return read_surface(spec, text)
    except (ValueError, StopIteration, IndexError, KeyError):  # BadValue is a ValueError
        return _NO


def _read_list(item, text):
    """'a', 'a and b', 'a, b and c' (items may hold ", " themselves: every split is tried, as a reader
    would, the one with most items first: "pasta and beef" are two ingredients, not one)."""
    for k in (j for j in range(len(text)) if text.startswith(" and ", j)):
        last = _read(item, text[k + 5:])
        if last is not _NO:
            yield from sorted(([*head, last] for head in _read_items(item, text[:k])), key=len, reverse=True)
    one = _read(item, text)
    if one is not _NO:
        yield [one]


def _read_items(item, text):
    one = _read(item, text)
    if one is not _NO:
        yield [one]
    for k in (j for j in range(len(text)) if text.startswith(", ", j)):
        first = _read(item, text[:k])
        if first is not _NO:
            yield from ([first, *rest] for rest in _read_items(item, text[k + 2:]))


def _read_tail(fn, text, after=-1):
    """Optional clauses joined like 'x', 'x and y', 'x, y and z', in the function's parameter order."""
    for index, p in enumerate(fn.optional):
        if index <= after:
            continue
        for template in fn.opt.get(p, ()):
            for values, end, n in _match(_segments(template), text, 0, fn.params):
                if end == len(text):
                    yield values, n
                for sep in (", ", " and "):
                    if text.startswith(sep, end):
                        yield from (({**values, **more}, n + m)
                                    for more, m in _read_tail(fn, text[end + len(sep):], index))


def _read_request(fn, piece):
    """(values, literal characters) of each reading of one request as a call of `fn`."""
    for template in fn.say:
        stop = template[-1] if template[-1] in ".?!" else ""
        if stop and not piece.endswith(stop):
            continue
        body = piece[:-1] if stop else piece
        for values, end, n in _match(_segments(template[:-1] if stop else template), body, 0, fn.params):
            if end == len(body):
                yield values, n
            elif body.startswith(" ", end):
                yield from (({**values, **more}, n + m) for more, m in _read_tail(fn, body[end + 1:]))


def _pieces(question):
    if question.startswith("Please do the following:\n"):
        yield [line.split(". ", 1)[1] for line in question.splitlines()[1:]]
        return
    cuts = [(j, len(w)) for w in (" Also, ", " Then ", " After that, ", " And ") for j in range(len(question))
            if question.startswith(w, j)]
    for mask in sorted(range(1 << len(cuts)), key=lambda m: -m.bit_count()):  # joiners split first
        chosen = sorted(c for b, c in enumerate(cuts) if mask >> b & 1)
        starts, parts = 0, []
        for j, n in chosen:
            parts.append(question[starts:j])
            starts = j + n
        yield parts + [question[starts:]]


def read_calls(question: str, tools: list[dict]):
    """The calls a request asks for, from its text and the offered schemas' names alone (the universe's
    phrasing templates and surface readers are the reader's grammar; no task field, gold or RNG is used)."""
    offered = [U.functions[t["function"]["name"]] for t in tools]
    for parts in _pieces(question):
        calls = []
        for part in parts:
            # The most specific phrasing wins: "What is the prime factorization of 1269?" is a factorisation,
            # though evaluate_expression's "What is {expression}?" would take any text.
            found = [(n, fn.name, v) for fn in offered for v, n in _read_request(fn, part)]
            if not found:
                break
            calls.append(max(found, key=lambda f: f[0])[1:])
        else:
            return calls
    return None


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("category", CALLING)
def test_an_independent_reader_recovers_the_gold_calls_from_the_prompt(category, split):
    env = make(category, split)
    for seed in range(40):
        question, info = env.reset(seed=seed)
        calls = read_calls(question, info["tools"])
        assert calls is not None, (seed, question)
        assert check_calls(calls, env.task["gold"], info["tools"], category).valid, (seed, question, calls)


# ---- fuzzing ---------------------------------------------------------------------------------------------------
def _wrong_type(value):
    if isinstance(value, str):
        return st.one_of(st.integers(), st.floats(allow_nan=False), st.none(), st.lists(st.integers(), max_size=3))
    if isinstance(value, (list, dict)):
        return st.one_of(st.text(max_size=20), st.integers(), st.none())
    return st.one_of(st.text(max_size=20), st.none(), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))


@st.composite
def fuzzed(draw):
    env = make(draw(st.sampled_from(CALLING)), draw(st.sampled_from(SPLITS)))
    env.reset(seed=draw(st.integers(0, 500)))
    gold = oracle_calls(env.task["gold"])
    body = calls_text(gold)
    kind = draw(st.sampled_from(["broken", "unknown", "type", "huge", "deep", "many", "junk"]))
    if kind == "broken":  # a strict prefix of a JSON object is never valid JSON
        one = json.dumps({"name": gold[0][0], "arguments": gold[0][1]})
        action = f"<tool_call>{one[:draw(st.integers(0, len(one) - 1))]}</tool_call>"
    elif kind == "unknown":
        name = draw(st.text(min_size=1, max_size=30).filter(lambda s: s not in dict(gold)))
        action = calls_text([(name, a) for _, a in gold])
    elif kind == "type":
        name, args = gold[0]
        param = draw(st.sampled_from(sorted(args)))
        action = calls_text([(name, dict(args, **{param: draw(_wrong_type(args[param]))}))] + gold[1:])
    elif kind == "huge":
        name, args = gold[0]
        param = draw(st.sampled_from(sorted(args) + ["extra"]))
        action = calls_text([(name, dict(args, **{param: "x" * draw(st.integers(10_000, 1_000_000))}))] + gold[1:])
    elif kind == "deep":
        depth = draw(st.integers(1, 5000))
        nested = json.dumps({"name": gold[0][0], "arguments": {"a": "X"}}).replace('"X"', "[" * depth + "]" * depth)
        action = f"<tool_call>{nested}</tool_call>\n" + body
    elif kind == "many":
        action = "\n".join([body] * draw(st.integers(2, 3000)))
    else:
        action = draw(st.text(max_size=300)).replace("<tool_call>", "") + f"<tool_call>{draw(st.text(max_size=50))}"
    return env, action


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=fuzzed())
def test_fuzzed_actions_never_raise_and_never_score(case):
    env, action = case
    observation, reward, _, _, info = env.step(action)
    assert isinstance(observation, str) and reward == 0.0 and not info["success"]
    assert set(info["metrics"]) == set(ToolCallEnv.metric_names)


@pytest.mark.parametrize("make_action", [
    lambda gold: "\n".join([calls_text(gold)] * 3000),  # thousands of calls, each one right
    lambda gold: calls_text([("f%d" % i, {}) for i in range(3000)]),
    lambda gold: calls_text([(gold[0][0], dict(gold[0][1], extra="x" * 2_000_000))] + gold[1:]),
    lambda gold: calls_text([(gold[0][0], {p: [[[[v]]]] for p, v in gold[0][1].items()})] + gold[1:]),
    lambda gold: calls_text([(gold[0][0], dict(gold[0][1], deep=json.loads("[" * 900 + "]" * 900)))] + gold[1:]),
], ids=["3000 right calls", "3000 unknown calls", "2 MB argument", "wrapped values", "nested 900 deep"])
def test_extreme_actions_score_zero(make_action):
    for category in CALLING:
        env = make(category)
        env.reset(seed=1)
        _, reward, terminated, _, info = env.step(make_action(oracle_calls(env.task["gold"])))
        assert reward == 0.0 and terminated and info["valid"] and not info["success"]


def test_deep_nesting_is_an_invalid_action_not_an_exception():
    env = gymnasium.make(ID, category="simple")
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step('<tool_call>{"name": "f", "arguments": %s}</tool_call>'
                                                      % ("[" * 100_000 + "]" * 100_000))
    assert not info["valid"] and reward == 0.0 and not terminated and truncated


# ---- knobs and pinning ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [
    {"category": "sometimes"}, {"category": None}, {"distractors": -1}, {"distractors": [3, 2]},
    {"distractors": 11}, {"distractors": "2"}, {"parallel_calls": 1}, {"parallel_calls": [2, 9]},
    {"parallel_calls": [2.0, 3]}, {"optional_rate": 1.5}, {"optional_rate": "half"}, {"optional_rate": True},
    {"split": "dev"}])
def test_bad_knobs_raise_clear_errors(kwargs):
    with pytest.raises(ValueError):
        ToolCallEnv(**kwargs)


def test_knobs_shape_the_tasks():
    env = make("parallel_multiple", distractors=0, parallel_calls=5)
    for seed in range(20):
        env.reset(seed=seed)
        gold = env.task["gold"]
        assert len(gold) == 5 and set(env.task["functions"]) == {next(iter(g)) for g in gold}
        assert len(env.task["functions"]) >= 2
    env = make("multiple", distractors=[4, 4])
    assert all(len(env.reset(seed=s)[1]["tools"]) == 5 for s in range(10))
    assert len(make("irrelevance", distractors=0).reset(seed=0)[1]["tools"]) == 1
    for rate, stated in ((0.0, False), (1.0, True)):
        env = make("simple", optional_rate=rate)
        for seed in range(30):
            env.reset(seed=seed)
            name, params = next(iter(env.task["gold"][0].items()))
            fn = U.functions[name]
            if fn.required:  # a function without required parameters always states one optional
                assert all(("" not in params[p]) == stated for p in fn.optional), (rate, seed, params)


def test_pinned_task_round_trips_and_bad_tasks_are_rejected():
    env = make()
    for seed in range(10):
        obs, info = env.reset(seed=seed)
        task = json.loads(json.dumps(env.task))
        other = make("simple", "ood")
        assert other.reset(seed=99, options={"task": task}) == (obs, info)
        assert score(other, env.oracle_action()) == 1.0
    good = env.task
    for bad in ({**good, "category": "sometimes"}, {**good, "functions": ["no_such_function"]},
                {**good, "functions": []}, {**good, "gold": "x"}, {**good, "question": ""},
                {k: v for k, v in good.items() if k != "world_seed"},
                {**good, "category": "irrelevance"} if good["gold"] else {**good, "category": "simple"}):
        with pytest.raises(ValueError):
            env.reset(options={"task": bad})


def test_information_and_metrics_of_an_answer():
    env = make("parallel")
    env.reset(seed=4)
    gold = oracle_calls(env.task["gold"])
    _, _, _, _, info = env.step(calls_text(gold[:1]))
    metrics = info["metrics"]
    assert metrics["calls"] == 1.0 and metrics["no_call"] == 0.0 and info["score"] == 0.0
    assert metrics["name_accuracy"] == metrics["argument_accuracy"] == 1 / len(gold)
    _, info = env.reset(seed=4)
    assert "If none of the functions" in info["instructions"]
    assert [t["function"]["name"] for t in info["tools"]] == env.task["functions"]
