"""Tool schemas (OpenAI function format), argument validation, and tool-result formatting."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property

import jsonschema

from magic_envs.core.grammar import ToolCall, format_tool_call

RESPONSE_OPEN, RESPONSE_CLOSE = "<tool_response>", "</tool_response>"


@dataclass(frozen=True)
class Tool:
    """One function an agent may call: its name, description and JSON schema of parameters."""

    name: str
    description: str
    parameters: dict = field(default_factory=lambda: {"type": "object", "properties": {}})

    def schema(self) -> dict:
        """The OpenAI `tools` entry, as chat templates, verl and vLLM take it."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    @classmethod
    def from_schema(cls, schema: dict) -> "Tool":
        fn = schema.get("function", schema)
        return cls(fn["name"], fn.get("description", ""), fn.get("parameters", {"type": "object"}))

    def __getstate__(self) -> dict:
        # The cached validator holds compiled state that does not pickle; it is rebuilt on first use.
        return {k: v for k, v in self.__dict__.items() if k != "validator"}

    @cached_property
    def validator(self) -> jsonschema.protocols.Validator:
        cls = jsonschema.validators.validator_for(self.parameters, default=jsonschema.Draft202012Validator)
        return cls(self.parameters)

    def check(self, arguments: dict) -> str:
        """'' when `arguments` fit the schema, else one sentence per problem, for the agent to read."""
        problems = sorted(self.validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        return "; ".join(_describe(e) for e in problems[:5])


def _describe(error: jsonschema.ValidationError) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    message = error.message if len(error.message) < 300 else error.message[:300] + "..."
    return f"argument '{where}': {message}" if where else message


def check_call(call: ToolCall, tools: dict[str, Tool]) -> str:
    """'' when `call` names an offered tool with valid arguments, else what is wrong."""
    tool = tools.get(call.name)
    if tool is None:
        offered = ", ".join(sorted(tools)) or "none"
        return f"unknown function '{call.name[:100]}'; the available functions are: {offered}"
    problem = tool.check(call.arguments)
    return f"invalid arguments for {call.name}: {problem}" if problem else ""


def format_tool_responses(results: list) -> str:
    """One `<tool_response>` block per call, in call order (the chat formatter splits them again)."""
    blocks = []
    for result in results:
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        blocks.append(f"{RESPONSE_OPEN}\n{text}\n{RESPONSE_CLOSE}")
    return "\n".join(blocks)


def split_tool_responses(text: str) -> list[str]:
    """The inverse of `format_tool_responses`; text without blocks is one response."""
    parts = text.split(RESPONSE_OPEN)
    if len(parts) == 1:
        return [text]
    return [p.split(RESPONSE_CLOSE, 1)[0].strip("\n") for p in parts[1:]]


GUESSES = ("Paris", "2025-01-01", "alpha", "user@example.com", "10:00", "EUR", "blue", "user42", "n/a")


def random_value(schema: dict, rng, words=GUESSES, depth: int = 0):
    """A value of the schema's JSON type (an enum member where there is one): what a guesser would send."""
    schema = schema if isinstance(schema, dict) else {}
    kind = schema.get("type")
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][int(rng.integers(len(schema["enum"])))]
    if kind == "integer":
        return int(rng.integers(-5, 1000))
    if kind == "number":
        return round(float(rng.uniform(-10, 1000)), 2)
    if kind == "boolean":
        return bool(rng.random() < 0.5)
    if kind == "array" and depth < 2:
        return [random_value(schema.get("items") or {}, rng, words, depth + 1) for _ in range(int(rng.integers(1, 4)))]
    if kind == "object" and depth < 2:
        return {p: random_value(s, rng, words, depth + 1) for p, s in (schema.get("properties") or {}).items()}
    return words[int(rng.integers(len(words)))]


def random_call(tools: list[Tool], rng, optional: float = 0.5, words=GUESSES) -> str:
    """A call of a random tool with right-typed random arguments: every required one, each optional one with
    probability `optional` (a random baseline that gets the format right)."""
    tool = tools[int(rng.integers(len(tools)))]
    props = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or [])
    args = {p: random_value(s, rng, words) for p, s in props.items() if p in required or rng.random() < optional}
    return format_tool_call(tool.name, args)
