"""The one action grammar (Hermes / Qwen style), parsed in one place.

    <think> free reasoning </think>                                  optional, never scored
    <tool_call>{"name": "fn", "arguments": {"k": "v"}}</tool_call>    zero or more; several = parallel calls
    any other text                                                   a message to the user / the final answer

Parsing never raises on model text: problems are collected in `ParsedAction.errors` as sentences an agent
can act on. No model text ever reaches eval or exec; tool arguments are plain JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"

_THINK = re.compile(r"<think>(.*?)</think>", re.S)
_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict

    def to_json(self) -> str:
        return json.dumps({"name": self.name, "arguments": self.arguments}, ensure_ascii=False)


@dataclass(frozen=True)
class ParsedAction:
    """What an action says: thoughts, tool calls in call order, plain text, and any parse errors."""

    raw: str
    thoughts: tuple[str, ...] = ()
    calls: tuple[ToolCall, ...] = ()
    text: str = ""
    errors: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.errors


def parse_action(action) -> ParsedAction:
    if not isinstance(action, str):
        return ParsedAction(raw="", errors=(f"the action must be a string, got {type(action).__name__}",))
    rest, thoughts = action, []
    # Qwen3-style templates open <think> in the prompt, so the model's text may start inside it.
    if THINK_CLOSE in rest and THINK_OPEN not in rest.split(THINK_CLOSE, 1)[0]:
        head, rest = rest.split(THINK_CLOSE, 1)
        thoughts.append(head.strip())
    thoughts += [t.strip() for t in _THINK.findall(rest)]
    rest = _THINK.sub(" ", rest)
    errors = []
    if THINK_OPEN in rest:  # an unclosed <think> swallows the rest: nothing after it is an answer
        rest, tail = rest.split(THINK_OPEN, 1)
        thoughts.append(tail.strip())
        errors.append("a <think> block is never closed with </think>")
    calls = []
    for i, body in enumerate(_CALL.findall(rest), start=1):
        call, error = _parse_call(body)
        if error:
            errors.append(f"tool call {i}: {error}")
        else:
            calls.append(call)
    rest = _CALL.sub(" ", rest)
    if CALL_OPEN in rest:
        errors.append(f"a {CALL_OPEN} is never closed with {CALL_CLOSE}")
        rest = rest.split(CALL_OPEN, 1)[0]
    elif CALL_CLOSE in rest:
        errors.append(f"a {CALL_CLOSE} has no matching {CALL_OPEN}")
        rest = rest.replace(CALL_CLOSE, " ")
    return ParsedAction(action, tuple(thoughts), tuple(calls), rest.strip(), tuple(errors))


def _parse_call(body: str) -> tuple[ToolCall | None, str]:
    body = body.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as e:
        return None, f"invalid JSON ({e.msg} at line {e.lineno} column {e.colno}); write " \
                     '{"name": "<function>", "arguments": {...}}'
    except RecursionError:  # json gives up on nesting around a thousand levels deep
        return None, "the JSON is nested too deeply to read"
    if not isinstance(obj, dict):
        return None, f"expected a JSON object with 'name' and 'arguments', got {type(obj).__name__}"
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return None, "missing the function 'name' (a non-empty string)"
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):  # some models double-encode the arguments
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as e:
            return None, f"'arguments' of {name} is a string that is not valid JSON ({e.msg})"
        except RecursionError:
            return None, f"'arguments' of {name} are nested too deeply to read"
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return None, f"'arguments' of {name} must be a JSON object, got {type(args).__name__}"
    return ToolCall(name, args), ""


def format_tool_call(name: str, arguments: dict) -> str:
    """The text of one call in the grammar, as an oracle or a converted native call writes it."""
    return f"{CALL_OPEN}\n{ToolCall(name, arguments).to_json()}\n{CALL_CLOSE}"
