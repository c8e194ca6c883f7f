"""Our action grammar <-> OpenAI's native tool calls, for servers that speak chat completions with `tools`.

Episodes store assistant turns as the exact text of the grammar (DESIGN.md §3). A server with native tool
calling wants them as `tool_calls` with ids, each answered by a `tool` message carrying that id, and answers
in the same form; these two functions translate both ways without losing anything an env scores.

    >>> reply = {"content": "Checking.", "tool_calls": [{"id": "c1", "type": "function",
    ...          "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}]}
    >>> print(reply_to_action(reply))
    Checking.
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>
    >>> [m["role"] for m in to_openai_messages([{"role": "user", "content": "Weather?"},
    ...     {"role": "assistant", "content": reply_to_action(reply)}, {"role": "tool", "content": "sunny"}])]
    ['user', 'assistant', 'tool']
"""

from __future__ import annotations

import json

from magic_envs.core.grammar import CALL_OPEN, format_tool_call, parse_action


def to_openai_messages(messages: list[dict]) -> list[dict]:
    """Chat messages of the shared formatter, with grammar tool calls turned into native `tool_calls`.

    An assistant turn becomes native only when the tool messages after it answer each of its calls one to
    one; otherwise (a malformed call the env refused with one error message) the turn stays as text and the
    env's answer reaches the model as a user message, which every server accepts.
    """
    out, turn, answered = [], 0, set()
    for i, message in enumerate(messages):
        role, content = message["role"], message.get("content") or ""
        if i in answered:
            continue  # a tool answer already sent with its call id
        if role == "assistant" and CALL_OPEN in content:
            parsed = parse_action(content)
            answers = _tool_messages_after(messages, i)
            if parsed.calls and not parsed.errors and answers == len(parsed.calls):
                turn += 1
                ids = [f"call_{turn}_{k}" for k in range(len(parsed.calls))]
                text = content[:content.index(CALL_OPEN)].strip()
                out.append({"role": "assistant", "content": text or None, "tool_calls": [
                    {"id": call_id, "type": "function",
                     "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
                    for call_id, call in zip(ids, parsed.calls)]})
                out += [{"role": "tool", "tool_call_id": call_id, "content": messages[i + 1 + k]["content"]}
                        for k, call_id in enumerate(ids)]
                answered.update(range(i + 1, i + 1 + answers))
                continue
        out.append({"role": "user" if role == "tool" else role, "content": content})
    return out


def _tool_messages_after(messages: list[dict], i: int) -> int:
    n = 0
    while i + 1 + n < len(messages) and messages[i + 1 + n]["role"] == "tool":
        n += 1
    return n


def reply_to_action(message: dict) -> str:
    """The action text of a server's assistant message: reasoning as `<think>`, content, then each native tool
    call in the grammar. Arguments that are not valid JSON are passed on as a string, so the env tells the agent
    what is wrong instead of the harness guessing."""
    parts = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning:
        parts.append(f"<think>\n{reasoning.strip()}\n</think>")
    if message.get("content"):
        parts.append(message["content"].strip())
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        raw = function.get("arguments")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
        except json.JSONDecodeError:
            arguments = raw
        if isinstance(arguments, dict):
            parts.append(format_tool_call(str(function.get("name", "")), arguments))
        else:
            body = json.dumps({"name": function.get("name", ""), "arguments": arguments}, ensure_ascii=False)
            parts.append(f"{CALL_OPEN}\n{body}\n</tool_call>")
    return "\n".join(parts)
