"""The token-faithful episode runner: any `magic/` env, multi-turn, from a token-in/token-out `generate` callable.

    trajectory = run_episode(env, generate, tokenizer, seed=3, turn_tokens=256, response_tokens=2048)

`generate(prompt_ids, sampling_params) -> (token_ids, logprobs)` is the engine (verl's server manager, vLLM, a local
transformers model); `sampling_params["max_tokens"]` carries the budget left. The model's tokens are kept exactly as
generated (mask 1, their logprobs); each observation is templated on its own, as the delta the chat template adds
after the previous turn (mask 0), so the chat is never re-tokenised and RL trains on what the model saw and wrote.
No verl import here (DESIGN.md §7): the verl agent loop and the local trainer share this runner.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from magic_envs.core.chat import END_OF_TURN, Conversation

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
PROBE = [{"role": "system", "content": "x"}, {"role": "user", "content": "x"}]  # a fixed chat to template deltas after


@dataclass
class Trajectory:
    """One episode as token ids: the first prompt, then the response (model and observation tokens interleaved)."""

    prompt_ids: list[int]
    response_ids: list[int] = field(default_factory=list)
    response_mask: list[int] = field(default_factory=list)  # 1: the model wrote it; 0: an observation
    logprobs: list[float] = field(default_factory=list)  # the engine's, for model tokens; 0.0 for observations
    think_mask: list[int] = field(default_factory=list)  # 1: a model token inside <think>...</think>
    # per turn: start/end in response_ids, reward, info, cut (ran out of tokens), anchor (a digest of every observation
    # so far: in a task's group, turns with the same anchor acted in the same state, which GiGPO compares; a digest
    # of the last observation alone would pair an "OK" tool result with any other "OK")
    turns: list[dict] = field(default_factory=list)
    score: float = 0.0
    success: bool = False
    terminated: bool = False
    truncated: str = ""  # why the episode stopped early: "response_tokens", "max_turns" or ""; cut turns are in turns

    @property
    def action_mask(self) -> list[int]:
        """Model tokens outside <think>: the action proper."""
        return [m * (1 - t) for m, t in zip(self.response_mask, self.think_mask)]


class ChatTokens:
    """Token ids of chat pieces in a model's template: the first prompt, and the delta an observation adds."""

    def __init__(self, tokenizer, tools: list[dict], instructions: str):
        self.tokenizer = tokenizer
        self.native = "tools" in (tokenizer.chat_template or "")
        self.chat = Conversation(instructions, tools, native_tools=self.native)

    def text(self, messages: list[dict], generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(messages, tools=self.chat.template_tools(), tokenize=False,
                                                  add_generation_prompt=generation_prompt)

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def first_prompt(self, observation: str, role: str) -> list[int]:
        self.chat.add_observation(observation, role)
        return self.encode(self.text(self.chat.messages, True))

    def observation_delta(self, action: str, observation: str, role: str) -> list[int]:
        """What the template writes after an assistant turn's end-of-turn marker, through the next generation
        prompt: templated after a fixed probe chat, so the earlier turns are never re-tokenised."""
        self.chat.add_action(action)
        new = self.chat.add_observation(observation, role)
        asked = self.text(PROBE, True)  # ends with the assistant header
        after = self.text(PROBE + [{"role": "assistant", "content": "x"}] + new, True)
        ends = [(after.find(m, len(asked)), m) for m in END_OF_TURN if after.find(m, len(asked)) >= 0]
        if not after.startswith(asked) or not ends:
            raise ValueError("the chat template does not render a probe chat's turns in order; cannot template "
                             "observations as deltas")
        at, marker = min(ends)
        return self.encode(after[at + len(marker):])


def think_mask(tokenizer, ids: list[int]) -> list[int]:
    """1 for the tokens of `ids` that lie inside a <think>...</think> block (the block's own tags included)."""
    mask, text, inside = [], "", False
    for token in ids:
        text += tokenizer.decode([token])
        start = THINK_OPEN in text[-(len(THINK_OPEN) + 16):] and not inside
        inside = inside or start
        mask.append(1 if inside else 0)
        if inside and text.rstrip().endswith(THINK_CLOSE):
            inside = False
    return mask


def run_episode(env, generate, tokenizer, seed: int | None = None, options: dict | None = None,
                turn_tokens: int = 512, response_tokens: int = 4096, max_turns: int | None = None,
                sampling_params: dict | None = None) -> Trajectory:
    """Play one episode; budgets: `turn_tokens` per model turn, `response_tokens` for the whole response
    (model and observation tokens), `max_turns` (default: the env's step limit)."""
    observation, info = env.reset(seed=seed, options=options)
    chat = ChatTokens(tokenizer, info["tools"], info["instructions"])
    trajectory = Trajectory(chat.first_prompt(observation, info["role"]))
    anchor = ""
    limit = max_turns or (env.spec.max_episode_steps if env.spec and env.spec.max_episode_steps else 100)
    for _ in range(limit):
        budget = min(turn_tokens, response_tokens - len(trajectory.response_ids))
        if budget <= 0:
            trajectory.truncated = "response_tokens"
            break
        ids, logprobs = generate(trajectory.prompt_ids + trajectory.response_ids,
                                 {**(sampling_params or {}), "max_tokens": budget})
        ids, logprobs = list(ids)[:budget], list(logprobs)[:budget]
        start = len(trajectory.response_ids)
        trajectory.response_ids += ids
        trajectory.response_mask += [1] * len(ids)
        trajectory.logprobs += [float(x) for x in logprobs]
        trajectory.think_mask += think_mask(tokenizer, ids)
        action = tokenizer.decode(ids, skip_special_tokens=True).strip()
        ended = any(tokenizer.decode(ids[-1:]).strip() == m for m in END_OF_TURN) if ids else False
        anchor = hashlib.blake2b(f"{anchor}\0{observation}".encode(), digest_size=8).hexdigest()
        observation, reward, terminated, truncated, info = env.step(action)
        trajectory.turns.append({"start": start, "end": len(trajectory.response_ids), "reward": float(reward),
                                 "info": info, "cut": not ended, "anchor": anchor})
        trajectory.score, trajectory.success = float(info.get("score", 0.0)), bool(info.get("success", False))
        if terminated or truncated:
            trajectory.terminated = bool(terminated)
            trajectory.truncated = "" if terminated else "max_turns"
            break
        delta = chat.observation_delta(action, observation, info["role"])
        # a turn that ran out of tokens is closed as the template would close it, before the observation
        closing = [] if ended else chat.encode(next(m for m in END_OF_TURN if m in chat.text(PROBE, False)))
        trajectory.response_ids += closing + delta
        trajectory.response_mask += [0] * (len(closing) + len(delta))
        trajectory.logprobs += [0.0] * (len(closing) + len(delta))
        trajectory.think_mask += [0] * (len(closing) + len(delta))
    else:
        trajectory.truncated = "max_turns"
    if len(trajectory.response_ids) > response_tokens:  # an observation overran the budget: cut, and say so
        for name in ("response_ids", "response_mask", "logprobs", "think_mask"):
            setattr(trajectory, name, getattr(trajectory, name)[:response_tokens])
        trajectory.truncated = "response_tokens"
    return trajectory
