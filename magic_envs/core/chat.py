"""The one chat formatter: (instructions, tools, observations, actions) -> OpenAI-style messages.

Benchmarks, SFT data and RL rollouts all build messages here, so a model sees the same text in training and
evaluation. Two renderings of tools exist, chosen by the model's chat template:

* native (`native_tools=True`): the template renders `tools` itself (Qwen, Llama 3.1+); tool results are one
  `tool` message per `<tool_response>` block.
* Hermes in the system message (`native_tools=False`): for templates without tool support (SmolLM2's plain
  ChatML) the schemas are written into the system message and tool results reach the model as a user turn
  holding the `<tool_response>` blocks, so every model sees one protocol.
"""

from __future__ import annotations

import json
import re

from magic_envs.core.tools import format_tool_responses, split_tool_responses

_THINK_BLOCK = re.compile(r"<think>.*?</think>\s*", re.S)

HERMES_TOOLS = """# Tools

You may call one or more functions to assist with the user query.

The function signatures are given within <tools></tools> XML tags:
<tools>
{schemas}
</tools>

To call a function, write a JSON object with the function name and arguments within <tool_call></tool_call> \
XML tags, one block per call:
<tool_call>
{{"name": <function-name>, "arguments": <args-json-object>}}
</tool_call>"""


# How chat templates close a turn (ChatML / Qwen, Llama 3, plain text, Llama 2): where a model's turn ends in
# rendered text, for SFT targets and RL token streams.
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|endoftext|>", "</s>")


def hermes_tools_block(tools: list[dict]) -> str:
    return HERMES_TOOLS.format(schemas="\n".join(json.dumps(t, ensure_ascii=False) for t in tools))


def strip_think(text: str) -> str:
    return _THINK_BLOCK.sub("", text)


class Conversation:
    """A growing chat; each `add_*` returns only the new messages (RL templates deltas, never the whole)."""

    def __init__(self, instructions: str, tools: list[dict], native_tools: bool = True, keep_think: bool = True):
        self.tools, self.native_tools, self.keep_think = tools, native_tools, keep_think
        self.history: list[dict] = []  # exactly what was said, produced text verbatim
        system = instructions
        if tools and not native_tools:
            system = f"{instructions}\n\n{hermes_tools_block(tools)}" if instructions else hermes_tools_block(tools)
        if system:
            self.history.append({"role": "system", "content": system})

    @property
    def messages(self) -> list[dict]:
        """The prompt for the next turn. Earlier reasoning stays unless the model was trained without it."""
        if self.keep_think:
            return self.history
        return [{**m, "content": strip_think(m["content"])} if m["role"] == "assistant" else m
                for m in self.history]

    def add_observation(self, text: str, role: str = "user") -> list[dict]:
        if role == "tool" and self.native_tools:
            new = [{"role": "tool", "content": r} for r in split_tool_responses(text)]
        else:
            new = [{"role": "user", "content": text}]
        self.history += new
        return new

    def add_action(self, text: str) -> list[dict]:
        new = [{"role": "assistant", "content": text}]
        self.history += new
        return new

    def template_tools(self) -> list[dict] | None:
        """What to pass as `tools=` to `apply_chat_template` (None when tools are in the system message)."""
        return self.tools if (self.native_tools and self.tools) else None


def without_template_tools(messages: list[dict], tools: list[dict]) -> list[dict]:
    """A chat kept in native form (tools apart, one `tool` message per result) as a model whose template cannot
    render tools sees it: the schemas in the system message, each turn's results in one user message."""
    has_system = bool(messages) and messages[0]["role"] == "system"
    chat = Conversation(messages[0]["content"] if has_system else "", tools, native_tools=False)
    pending: list[str] = []
    for message in messages[1:] if has_system else messages:
        if message["role"] == "tool":
            pending.append(message["content"])
            continue
        if pending:
            chat.add_observation(format_tool_responses(pending), "tool")
            pending = []
        if message["role"] == "assistant":
            chat.add_action(message["content"])
        else:
            chat.history.append(dict(message))
    if pending:
        chat.add_observation(format_tool_responses(pending), "tool")
    return chat.history


def build_messages(instructions: str, tools: list[dict], observations: list[tuple[str, str]], actions: list[str],
                   native_tools: bool = True, keep_think: bool = True) -> list[dict]:
    """Messages for a whole episode: observations[i] = (text, role) precedes actions[i]."""
    chat = Conversation(instructions, tools, native_tools, keep_think)
    for i, (text, role) in enumerate(observations):
        chat.add_observation(text, role)
        if i < len(actions):
            chat.add_action(actions[i])
    return chat.messages
