"""The env contract's building blocks: grammar, tools, chat formatting, task identity, light imports."""

import json
import subprocess
import sys

import pytest

from magic_envs.core import Conversation, Tool, build_messages, fingerprint, parse_action, split_tool_responses
from magic_envs.core.grammar import format_tool_call
from magic_envs.core.tasks import iid_split_of, roundtrip
from magic_envs.core.tools import check_call, format_tool_responses

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


@pytest.mark.parametrize("action, thoughts, calls, text, n_errors", [
    ("Monday, 9:00 - 9:30", 0, 0, "Monday, 9:00 - 9:30", 0),
    ("<think>hmm</think>  the answer  ", 1, 0, "the answer", 0),
    ("reasoning first</think>answer", 1, 0, "answer", 0),  # Qwen3 opens <think> in the prompt
    ("<think>a</think>x<think>b</think>y", 2, 0, "x y", 0),
    (CALL, 0, 1, "", 0),
    (f"  {CALL}\n\n{CALL} ", 0, 2, "", 0),  # several calls = parallel calls, whitespace tolerated
    ('<tool_call>\n```json\n{"name": "f", "arguments": {}}\n```\n</tool_call>', 0, 1, "", 0),
    ('<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>', 0, 1, "", 0),  # double-encoded
    ('<tool_call>{"name": "f", "arguments": {"a": }</tool_call>', 0, 0, "", 1),
    ('<tool_call>["f"]</tool_call>', 0, 0, "", 1),
    ('<tool_call>{"arguments": {}}</tool_call>', 0, 0, "", 1),
    ('<tool_call>{"name": "f", "arguments": [1]}</tool_call>', 0, 0, "", 1),
    ('<tool_call>{"name": "f"', 0, 0, "", 1),
    ('text </tool_call>', 0, 0, "text", 1),
    ("<think>never closed", 1, 0, "", 1),
    ('<tool_call>{"name": "f", "arguments": {"a": ' + "[" * 5000 + "]" * 5000 + "}}</tool_call>", 0, 0, "", 1),
    ('<tool_call>{"name": "f", "arguments": "' + "[" * 5000 + '"}</tool_call>', 0, 0, "", 1),
    ("", 0, 0, "", 0),
])
def test_parse_action_table(action, thoughts, calls, text, n_errors):
    parsed = parse_action(action)
    assert (len(parsed.thoughts), len(parsed.calls), parsed.text, len(parsed.errors)) == (thoughts, calls, text, n_errors)


def test_broken_json_error_says_where_and_how_to_fix():
    error = parse_action('<tool_call>{"name": "f", "arguments": {"a": }</tool_call>').errors[0]
    assert "tool call 1" in error and "invalid JSON" in error and "line 1 column" in error and '"name"' in error


def test_parse_action_never_raises_on_non_strings():
    assert parse_action(None).errors and parse_action(b"bytes").errors


def test_format_tool_call_round_trips():
    text = format_tool_call("book", {"city": "Zürich", "n": 2})
    assert parse_action(text).calls[0].arguments == {"city": "Zürich", "n": 2}


WEATHER = Tool("get_weather", "Weather for a city", {
    "type": "object", "additionalProperties": False, "required": ["city"],
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1},
                   "unit": {"type": "string", "enum": ["c", "f"]}}})


@pytest.mark.parametrize("arguments, problem", [
    ({"city": "Paris"}, ""),
    ({"city": "Paris", "days": 3, "unit": "c"}, ""),
    ({}, "'city' is a required property"),
    ({"city": 3}, "argument 'city': 3 is not of type 'string'"),
    ({"city": "Paris", "unit": "k"}, "argument 'unit': 'k' is not one of ['c', 'f']"),
    ({"city": "Paris", "days": 0}, "argument 'days': 0 is less than the minimum of 1"),
    ({"city": "Paris", "extra": 1}, "Additional properties are not allowed ('extra' was unexpected)"),
])
def test_tool_argument_validation(arguments, problem):
    assert WEATHER.check(arguments) == problem


def test_check_call_names_unknown_tools_and_lists_available():
    call = parse_action('<tool_call>{"name": "get_wether", "arguments": {}}</tool_call>').calls[0]
    assert check_call(call, {"get_weather": WEATHER}) == \
        "unknown function 'get_wether'; the available functions are: get_weather"


def test_tool_schema_round_trip():
    assert Tool.from_schema(WEATHER.schema()) == WEATHER


def test_tool_responses_split_back_in_call_order():
    text = format_tool_responses(["first", {"temp": 21}])
    assert split_tool_responses(text) == ["first", '{"temp": 21}']
    assert split_tool_responses("plain text") == ["plain text"]


def test_chat_native_tools_one_message_per_tool_response():
    chat = Conversation("Be brief.", [WEATHER.schema()], native_tools=True)
    chat.add_observation("What is the weather?", "user")
    chat.add_action(f"<think>call it</think>{CALL}{CALL}")
    new = chat.add_observation(format_tool_responses(["sunny", "rainy"]), "tool")
    assert [m["role"] for m in chat.messages] == ["system", "user", "assistant", "tool", "tool"]
    assert [m["content"] for m in new] == ["sunny", "rainy"]
    assert chat.template_tools() == [WEATHER.schema()]


def test_chat_hermes_tools_in_system_for_templates_without_tool_support():
    chat = Conversation("Be brief.", [WEATHER.schema()], native_tools=False)
    chat.add_observation("Weather?", "user")
    chat.add_action(CALL)
    chat.add_observation(format_tool_responses(["sunny"]), "tool")
    system = chat.messages[0]["content"]
    assert system.startswith("Be brief.") and "<tools>" in system and json.dumps(WEATHER.schema()) in system
    assert "<tool_call>" in system and chat.template_tools() is None
    assert chat.messages[-1] == {"role": "user", "content": "<tool_response>\nsunny\n</tool_response>"}


def test_chat_think_policy():
    msgs = build_messages("", [], [("q1", "user"), ("q2", "user")], ["<think>a</think>x", "<think>b</think>y"],
                          keep_think=False)
    assert [m["content"] for m in msgs if m["role"] == "assistant"] == ["x", "y"]
    chat = Conversation("", [], keep_think=False)
    chat.add_observation("q", "user")
    chat.add_action("<think>a</think>x")
    assert chat.history[-1]["content"] == "<think>a</think>x"  # what was produced stays verbatim
    assert chat.messages[-1]["content"] == "x"


def test_fingerprint_is_stable_and_order_free():
    a = {"b": [1, 2], "a": {"y": 1, "x": "é"}}
    b = {"a": {"x": "é", "y": 1}, "b": (1, 2)}
    assert fingerprint(a) == fingerprint(roundtrip(b)) and len(fingerprint(a)) == 16
    assert {iid_split_of(fingerprint({"i": i})) for i in range(50)} == {"train", "test"}


def test_import_magic_envs_is_light():
    code = ("import sys, gymnasium, magic_envs; env = gymnasium.make('magic/Calendar-v0'); env.reset(seed=0); "
            "from magic_envs import cli; "
            "heavy = [m for m in ('torch', 'transformers', 'verl', 'vllm') if m in sys.modules]; "
            "assert not heavy, heavy; print('light')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "light", out.stderr
