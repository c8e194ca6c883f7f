"""The one contract every MagicAgent env follows (see each module's docstring)."""

from magic_envs.core.chat import Conversation, build_messages, hermes_tools_block, strip_think
from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.core.grammar import ParsedAction, ToolCall, format_tool_call, parse_action
from magic_envs.core.policy import OraclePolicy, Policy, RandomPolicy, act_async
from magic_envs.core.rollout import Episode, rollout, rollout_async
from magic_envs.core.spaces import MAX_TEXT_CHARS, AnyText
from magic_envs.core.tasks import TaskSpec, fingerprint
from magic_envs.core.tools import Tool, check_call, format_tool_responses, split_tool_responses

__all__ = ["AnyText", "Conversation", "Episode", "MAX_TEXT_CHARS", "MagicEnv", "OraclePolicy", "Outcome",
           "ParsedAction", "Policy", "RandomPolicy", "TaskSpec", "Tool", "ToolCall", "act_async", "build_messages",
           "check_call", "fingerprint", "format_tool_call", "format_tool_responses", "hermes_tools_block",
           "parse_action", "rollout", "rollout_async", "split_tool_responses", "strip_think"]
