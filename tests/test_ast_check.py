"""BFCL's AST checking rules on hand-written cases, MagicEval-Tool accuracy, and fuzzing that must never raise.

The same rules are cross-checked against bfcl-eval itself on the real data in tests/test_bfcl.py.
"""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magic_envs.core.grammar import ToolCall
from magic_envs.tool_planning.ast_check import Verdict, check_calls, check_value, normalise, tool_accuracy
from magic_envs.tool_planning.bfcl_java import decode_java, encode_java
from magic_envs.tool_planning.bfcl_js import decode_js, encode_js


def tool(name, properties, required=()):
    return {"type": "function", "function": {"name": name, "description": "", "parameters": {
        "type": "object", "properties": properties, "required": list(required)}}}


FLIGHT = tool("book.flight", {
    "city": {"type": "string"}, "seats": {"type": "integer"}, "budget": {"type": "number"},
    "direct": {"type": "boolean"}, "dates": {"type": "array", "items": {"type": "string"}},
    "weights": {"type": "array", "items": {"type": "number"}}, "note": {"type": "string"},
    "filters": {"type": "object", "properties": {"airline": {"type": "string"}, "class": {"type": "string"}}},
    "legs": {"type": "array", "items": {"type": "object"}}}, required=["city", "seats"])
WEATHER = tool("weather", {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["C", "F"]}}, ["city"])
GOLD = [{"book.flight": {
    "city": ["New York", "NYC"], "seats": [2], "budget": [500.0, ""], "direct": [True, ""],
    "dates": [["2024-05-01", "2024-05-03"]], "weights": [[1.5, 2.0]],
    "filters": [{"airline": ["Delta", ""], "class": ["economy"]}, ""],
    "legs": [[{"from": ["NYC"], "to": ["LA"]}], ""]}}]
BASE = {"city": "New York", "seats": 2, "dates": ["2024-05-01", "2024-05-03"], "weights": [1.5, 2.0]}


@pytest.mark.parametrize("change, error_type", [
    ({}, ""),
    ({"city": "new-york"}, ""),  # normalised: " ,./-_*^" dropped, lower case
    ({"city": "N.Y.C."}, ""),
    ({"city": "New York City"}, "value_error:string"),
    ({"seats": "2"}, "type_error:simple"),
    ({"seats": 2.0}, "type_error:simple"),  # a float is no integer
    ({"seats": True}, "type_error:simple"),  # nor is a bool
    ({"seats": 3}, "value_error:others"),
    ({"budget": 500}, ""),  # an int is accepted for a float
    ({"budget": 500.5}, "value_error:others"),
    ({"budget": "500"}, "type_error:simple"),
    ({"direct": True}, ""),
    ({"direct": False}, "value_error:others"),
    ({"direct": "true"}, "type_error:simple"),
    ({"dates": ["2024/05/01", "2024 05 03"]}, ""),  # list items are normalised too
    ({"dates": ["2024-05-03", "2024-05-01"]}, "value_error:list/tuple"),  # but their order counts
    ({"dates": "2024-05-01"}, "type_error:simple"),
    ({"dates": ["2024-05-01", 5]}, "type_error:nested"),
    ({"weights": [1.5, 2.0]}, ""),
    ({"weights": [1.5, 2]}, "type_error:nested"),  # inside a list, an int is no float
    ({"filters": {"class": "Economy"}}, ""),  # "" marks an optional key
    ({"filters": {"class": "economy", "airline": "delta"}}, ""),
    ({"filters": {"class": "business"}}, "value_error:dict_value"),
    ({"filters": {"class": "economy", "meal": "veg"}}, "value_error:dict_key"),
    ({"filters": {"airline": "Delta"}}, "value_error:dict_key"),
    ({"legs": [{"from": "nyc", "to": "L.A."}]}, ""),
    ({"legs": []}, ""),  # BFCL reads the optional marker "" as an empty list of dicts
    ({"legs": [{"from": "NYC"}]}, "value_error:list_dict_count"),  # the last answer tried ("") says why
    ({"legs": [{"from": "NYC", "to": "LA"}, {"from": "LA", "to": "NYC"}]}, "value_error:list_dict_count"),
    ({"note": "window seat"}, "simple_function_checker:unexpected_param"),  # in the schema, not in the gold
    ({"meal": "veg"}, "simple_function_checker:unexpected_param"),
    ({"seats": None}, "type_error:simple"),
])
def test_one_call_rules(change, error_type):
    args = {**BASE, **change}
    verdict = check_calls([("book.flight", args)], GOLD, [FLIGHT], "simple")
    assert (verdict.valid, verdict.error_type) == (error_type == "", error_type), verdict


@pytest.mark.parametrize("drop, error_type", [
    ("city", "simple_function_checker:missing_required"),
    ("dates", "simple_function_checker:missing_optional"),  # not required, but the gold has no ""
])
def test_missing_parameters(drop, error_type):
    args = {k: v for k, v in BASE.items() if k != drop}
    assert check_calls([("book.flight", args)], GOLD, [FLIGHT]).error_type == error_type


def test_an_optional_list_skips_the_item_type_check():
    """BFCL checks item types against list answers only: with "" among them, any items pass that check."""
    gold = [{"book.flight": {**GOLD[0]["book.flight"], "weights": [[1.5, 2.0], ""]}}]
    assert check_calls([("book.flight", {**BASE, "weights": [1.5, 2]})], gold, [FLIGHT]).valid


def test_normalise_is_bfcl_s_standardisation():
    assert normalise("April 1, 2024") == normalise("april 1,2024") == "april12024"
    assert normalise("It's A_B-C/D*E^F.") == 'it"sabcdef'
    assert normalise("tab\there") == "tab\there"  # only the space is dropped, not other blanks


def test_variables_compare_exactly():
    gold = [{"book.flight": {"city": ["dest_city"], "seats": ["n_seats"], "dates": [["a"]]}}]
    named = {"city": "dest_city", "seats": "n_seats", "dates": ["A"]}
    assert check_calls([("book.flight", named)], gold, [FLIGHT]).valid
    # a value of the declared type is compared exactly (no normalisation) when the gold's type differs
    bad = check_calls([("book.flight", {"city": "dest_city", "seats": 2, "dates": ["a"]})], gold, [FLIGHT])
    assert bad.error_type == "value_error:others"


def test_calls_in_every_accepted_form():
    forms = [[("book.flight", BASE)], [ToolCall("book.flight", BASE)], [{"name": "book.flight", "arguments": BASE}],
             [["book.flight", BASE]], (("book.flight", BASE),)]
    assert all(check_calls(calls, GOLD, [FLIGHT]).valid for calls in forms)
    bare = {"name": "book.flight", "parameters": FLIGHT["function"]["parameters"]}
    assert check_calls([("book.flight", BASE)], GOLD, [bare]).valid


def test_categories():
    weather_gold = [{"weather": {"city": ["Paris"], "unit": ["C", ""]}},
                    {"weather": {"city": ["Rome"], "unit": ["C", ""]}}]
    paris, rome = ("weather", {"city": "paris"}), ("weather", {"city": "Rome", "unit": "C"})
    assert check_calls([rome, paris], weather_gold, [WEATHER], "parallel").valid
    assert check_calls([paris, paris], weather_gold, [WEATHER], "parallel").error_type == \
        "parallel_function_checker_no_order:cannot_find_match"
    assert check_calls([paris, rome, rome], weather_gold, [WEATHER], "parallel").error_type == \
        "parallel_function_checker_no_order:wrong_count"
    # multiple: the gold's function among several; simple: the first function, whatever name the gold says
    assert check_calls([("book.flight", BASE)], GOLD, [WEATHER, FLIGHT], "multiple").valid
    assert check_calls([("weather", {"city": "NYC"})], GOLD, [WEATHER, FLIGHT], "multiple").error_type == \
        "simple_function_checker:wrong_func_name"
    renamed = [{"flight": GOLD[0]["book.flight"]}]
    assert check_calls([("book.flight", BASE)], renamed, [FLIGHT], "simple").valid
    assert check_calls([("book.flight", BASE)] * 2, GOLD, [FLIGHT], "simple").error_type == \
        "simple_function_checker:wrong_count"
    assert check_calls([], [], [WEATHER], "irrelevance").valid
    assert check_calls([], [], [WEATHER], "live_irrelevance").valid
    assert not check_calls([paris], [], [WEATHER], "irrelevance").valid


def test_parallel_matching_is_greedy_as_in_bfcl():
    """Each gold call takes the first unmatched call that passes it; a call passing two gold calls can block
    a valid assignment. MagicEval-Tool's argument accuracy uses a maximum matching instead."""
    gold = [{"weather": {"city": ["Paris", "Rome"]}}, {"weather": {"city": ["Paris"]}}]
    first_paris = [("weather", {"city": "Paris"}), ("weather", {"city": "Rome"})]
    assert not check_calls(first_paris, gold, [WEATHER], "parallel").valid
    assert check_calls(first_paris[::-1], gold, [WEATHER], "parallel").valid
    assert tool_accuracy(first_paris, gold, [WEATHER], "parallel") == (1.0, 1.0)


@pytest.mark.parametrize("calls, accuracy", [
    ([("weather", {"city": "Paris"}), ("weather", {"city": "Rome"})], (1.0, 1.0)),
    ([("weather", {"city": "Paris"})], (0.5, 0.5)),
    ([("weather", {"city": "Paris"}), ("weather", {"city": "Rome"}), ("weather", {"city": "Oslo"})], (2 / 3, 2 / 3)),
    ([("weather", {"city": "Oslo"}), ("weather", {"city": "Lima"})], (1.0, 0.0)),
    ([("book.flight", BASE), ("weather", {"city": "Rome"})], (0.5, 0.5)),
    ([], (0.0, 0.0)),
    ([("weather", {"city": "Paris"})] * 5000, (2 / 5000, 1 / 5000)),
])
def test_tool_accuracy(calls, accuracy):
    gold = [{"weather": {"city": ["Paris"]}}, {"weather": {"city": ["Rome"]}}]
    assert tool_accuracy(calls, gold, [WEATHER, FLIGHT], "parallel_multiple") == pytest.approx(accuracy)


def test_tool_accuracy_of_irrelevance():
    assert tool_accuracy([], [], [WEATHER], "irrelevance") == (1.0, 1.0)
    assert tool_accuracy([("weather", {"city": "x"})], [], [WEATHER], "irrelevance") == (0.0, 0.0)


# ---- Java and JavaScript: arguments are source code in strings ------------------------------------------------
JAVA = tool("Repo.update", {
    "id": {"type": "string", "x-bfcl-type": "long"}, "count": {"type": "string", "x-bfcl-type": "integer"},
    "force": {"type": "string", "x-bfcl-type": "boolean"}, "name": {"type": "string", "x-bfcl-type": "String"},
    "tags": {"type": "string", "x-bfcl-type": "ArrayList", "x-bfcl-items-type": "String"},
    "opts": {"type": "string", "x-bfcl-type": "HashMap"}}, ["id"])
JAVA_GOLD = [{"Repo.update": {"id": [42], "count": [3, ""], "force": [True, ""], "name": ["Main", ""],
                              "tags": [["a", "b"], ""], "opts": [{"depth": [2]}, ""]}}]
JS = tool("render", {"rows": {"type": "string", "x-bfcl-type": "array", "x-bfcl-items-type": "integer"},
                     "style": {"type": "string", "x-bfcl-type": "dict"},
                     "big": {"type": "string", "x-bfcl-type": "Bigint"},
                     "title": {"type": "string", "x-bfcl-type": "String"}})
JS_GOLD = [{"render": {"rows": [[1, 2], ""], "style": [{"color": ["red"]}, ""], "big": [10, ""],
                       "title": ["Hello", ""]}}]


@pytest.mark.parametrize("args, error_type", [
    ({"id": "42L"}, ""),
    ({"id": "42L", "count": "3", "force": "true", "name": "main"}, ""),
    ({"id": 42}, "type_error:java"),  # values must be strings of source code
    ({"id": "42"}, "type_error:simple"),  # a long needs its L: "42" stays a string
    ({"id": "43L"}, "value_error:others"),
    ({"id": "42L", "tags": 'new ArrayList<>(Arrays.asList("a", "b"))'}, ""),
    ({"id": "42L", "tags": 'new ArrayList<String>() {{ add("a"); add("b"); }}'}, ""),
    ({"id": "42L", "tags": '["a", "b"]'}, "type_error:simple"),
    ({"id": "42L", "opts": 'new HashMap<String, Object>() {{ put("depth", 2); }}'}, ""),
    ({"id": "42L", "opts": 'new HashMap<String, Object>() {{ put("depth", 3); }}'}, "value_error:dict_value"),
])
def test_java_arguments(args, error_type):
    verdict = check_calls([("Repo.update", args)], JAVA_GOLD, [JAVA], "java", "java")
    assert (verdict.valid, verdict.error_type) == (error_type == "", error_type), verdict


@pytest.mark.parametrize("args, error_type", [
    ({"rows": "[1, 2]", "style": "{color: 'red'}", "big": "10n", "title": "'hello'"}, ""),
    ({"rows": "new Array(1, 2)"}, ""),
    ({"rows": "[2, 1]"}, "value_error:list/tuple"),
    ({"rows": [1, 2]}, "type_error:js"),
    ({"big": "10"}, "type_error:simple"),
    ({"style": "{color: 'blue'}"}, "value_error:dict_value"),
])
def test_javascript_arguments(args, error_type):
    verdict = check_calls([("render", args)], JS_GOLD, [JS], "javascript", "javascript")
    assert (verdict.valid, verdict.error_type) == (error_type == "", error_type), verdict


@pytest.mark.parametrize("value, kind, items", [
    (42, "long", None), (-3, "integer", None), (1.5, "float", None), (1e-05, "float", None), (2.5, "double", None),
    (True, "boolean", None), ("text", "String", None), ([1, 2], "ArrayList", "long"),
    (["a b", "c"], "ArrayList", "String"),
    ([], "ArrayList", "integer"), ([1, 2], "Array", "integer"), (["x", "y"], "Array", "String"),
    ({"k": 1, "s": "v", "b": False, "f": 0.5}, "HashMap", None), ({}, "HashMap", None),
])
def test_java_encoding_round_trips(value, kind, items):
    assert decode_java(encode_java(value, kind, items), kind, items) == value


@pytest.mark.parametrize("value, kind, items", [
    ("text", "String", None), ("'quoted'", "String", None), (7, "integer", None), (1e-07, "float", None),
    (12, "Bigint", None), (False, "Boolean", None), ([1.5, 2.0], "array", "float"), (["a", "b"], "array", "String"),
    ([], "array", "integer"), ({"a": "x", "n": 2, "l": ["p", 1]}, "dict", None), ({}, "dict", None),
])
def test_javascript_encoding_round_trips(value, kind, items):
    assert decode_js(encode_js(value, kind, items), kind, items) == value


def test_decoders_take_linear_time_where_bfcl_backtracks():
    """Inputs on which bfcl-eval's regular expressions run for minutes or longer decode at once here."""
    assert decode_java("new HashMap<>(){" + " " * 100_000, "HashMap") == {}  # the empty-map pattern matches
    body = 'new HashMap<>(){{ put("a", 1);' + " " * 100_000 + "}}"
    assert decode_java(body, "HashMap") == {"a": 1}
    assert decode_java("new ArrayList<>(Arrays.asList(" * 20_000, "ArrayList", "long").startswith("new")
    assert decode_js("[[1]" + ",[1]" * 50_000 + " x", "array") == ["[1"]  # no 2-D match: the 1-D pattern reads "[1"
    assert decode_js("[[1]" + ",[2]" * 50_000 + "]", "array")[-1] == [2]
    assert decode_js("{" + "a" * 100_000 + "}", "dict") == {}


# ---- never raise, never pass by accident -----------------------------------------------------------------------
SECRET = [{"weather": {"city": ["Zq-secret-city"]}}, {"book.flight": {"city": ["Zq-other"], "seats": [7919]}}]
json_value = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                          lambda kids: st.lists(kids, max_size=4)
                          | st.dictionaries(st.text(max_size=5), kids, max_size=4),
                          max_leaves=20)
call = st.one_of(st.tuples(st.sampled_from(["weather", "book.flight", "x"]), st.dictionaries(
    st.sampled_from(["city", "seats", "unit", "zz"]), json_value, max_size=4)), json_value,
    st.builds(ToolCall, st.text(max_size=10), st.dictionaries(st.text(max_size=5), json_value, max_size=3)))
outputs = st.one_of(st.lists(call, max_size=6), json_value, st.text())
categories = st.sampled_from(["simple", "multiple", "parallel", "parallel_multiple", "java", "javascript",
                              "live_simple", "irrelevance"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=outputs, category=categories)
def test_fuzzed_outputs_never_raise_and_never_pass(calls, category):
    language = {"java": "java", "javascript": "javascript"}.get(category, "python")
    gold = SECRET if "parallel" in category else SECRET[:1] if category != "irrelevance" else []
    verdict = check_calls(calls, gold, [WEATHER, FLIGHT], category, language)
    assert isinstance(verdict, Verdict) and isinstance(verdict.error, str)
    assert verdict.valid == (category == "irrelevance" and calls in ([], ()))
    names, arguments = tool_accuracy(calls, gold, [WEATHER, FLIGHT], category, language)
    assert 0.0 <= arguments <= names <= 1.0
    assert arguments == 1.0 if verdict.valid else arguments < 1.0


@settings(max_examples=200, deadline=None)
@given(gold=json_value, functions=json_value, calls=outputs)
def test_malformed_gold_and_functions_never_raise(gold, functions, calls):
    for category in ("simple", "multiple", "parallel"):
        assert isinstance(check_calls(calls, gold, functions, category).valid, bool)
        assert all(0.0 <= x <= 1.0 for x in tool_accuracy(calls, gold, functions, category))
    assert isinstance(check_value(calls, {"type": "array"}, gold).valid, bool)


def deep(n):
    value = "x"
    for _ in range(n):
        value = [value]
    return value


@pytest.mark.parametrize("calls", [
    [("weather", {"city": "x" * 2_000_000})],
    [("weather", {"city": deep(100_000)})],
    [("weather", {"city": {"a": deep(50_000)}})],
    [("weather", {"city": "Zq-secret-city", "unit": deep(100_000)})],
    [("weather", {"city": "Zq-secret-city"})] * 5000,
    [("weather", {f"p{i}": i for i in range(100_000)})],
    [("book.flight", {"city": "Zq-other", "seats": 10 ** 5000})],
])
def test_huge_and_deep_outputs_fail_cleanly(calls):
    for category, gold in (("simple", SECRET[:1]), ("parallel", SECRET), ("java", SECRET[:1])):
        verdict = check_calls(calls, gold, [WEATHER, FLIGHT], category, "java" if category == "java" else "python")
        assert not verdict.valid and len(verdict.error) < 1000
        assert tool_accuracy(calls, gold, [WEATHER, FLIGHT], category)[1] < 1.0


def test_verdicts_are_plain_values():
    verdict = check_calls([("weather", {"city": "Lima"})], SECRET[:1], [WEATHER])
    assert verdict == Verdict(False, verdict.error, "value_error:string")
    assert "Lima" in verdict.error and "Zq-secret-city" in verdict.error
    assert json.dumps({"valid": verdict.valid, "error": verdict.error})
