"""`rollout(env, policy, seed)`: the one loop that runs an episode, for benchmarks, SFT data and tests.

`rollout_async` is the same loop for many concurrent episodes on one event loop: the env's reset and step run
in a worker thread (some engines block for tenths of a second, DESIGN.md §7) and the policy is awaited, so a
server-backed or batching policy serves every episode at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field

import gymnasium as gym

from magic_envs.core.chat import Conversation
from magic_envs.core.policy import act_async


@dataclass
class Episode:
    env_id: str
    seed: int | None
    task_id: str
    messages: list[dict]
    tools: list[dict]
    actions: list[str] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    infos: list[dict] = field(default_factory=list)  # the step infos, in order
    terminated: bool = False
    truncated: bool = False

    @property
    def score(self) -> float:
        return self.infos[-1]["score"] if self.infos else 0.0

    @property
    def success(self) -> bool:
        return bool(self.infos[-1]["success"]) if self.infos else False

    @property
    def final_info(self) -> dict:
        return self.infos[-1] if self.infos else {}

    def to_json(self) -> dict:
        return asdict(self)


class _Run:
    """The bookkeeping both loops share: the chat, the episode record, the step limit."""

    def __init__(self, env: gym.Env, policy, seed, reset_result, native_tools, keep_think, max_steps):
        observation, info = reset_result
        if hasattr(policy, "begin"):
            policy.begin(env)
        # A policy whose chat template cannot render tools asks for them in the system message (chat.py).
        native_tools = getattr(policy, "native_tools", native_tools)
        self.tools = info["tools"]
        self.chat = Conversation(info["instructions"], self.tools, native_tools=native_tools, keep_think=keep_think)
        self.chat.add_observation(observation, info["role"])
        spec = env.spec
        self.episode = Episode(spec.id if spec else type(env.unwrapped).__name__, seed, info["task_id"],
                               self.chat.history, self.tools)
        self.limit = max_steps or (spec.max_episode_steps if spec and spec.max_episode_steps else 100)

    def record(self, action: str, step_result) -> bool:
        """Note one step; True when the episode is over."""
        observation, reward, terminated, truncated, info = step_result
        self.episode.actions.append(action)
        self.episode.rewards.append(float(reward))
        self.episode.infos.append(info)
        if terminated or truncated:
            self.episode.terminated, self.episode.truncated = bool(terminated), bool(truncated)
            return True
        self.chat.add_observation(observation, info["role"])
        return False


def rollout(env: gym.Env, policy, seed: int | None = None, options: dict | None = None,
            native_tools: bool = True, keep_think: bool = True, max_steps: int | None = None) -> Episode:
    """Run one episode of `policy` in `env` through the shared chat formatter.

    Episodes end when the env terminates or its TimeLimit truncates; `max_steps` is a safety net for envs
    made without a TimeLimit.
    """
    run = _Run(env, policy, seed, env.reset(seed=seed, options=options), native_tools, keep_think, max_steps)
    for _ in range(run.limit):
        action = policy.act(run.chat.messages, run.tools)
        run.chat.add_action(action)
        if run.record(action, env.step(action)):
            return run.episode
    run.episode.truncated = True
    return run.episode


async def rollout_async(env: gym.Env, policy, seed: int | None = None, options: dict | None = None,
                        native_tools: bool = True, keep_think: bool = True, max_steps: int | None = None,
                        executor=None) -> Episode:
    """`rollout` for an event loop: env calls run in `executor` (default: the loop's thread pool), the policy's
    `act_async` is awaited (a policy without one runs `act` in the executor too)."""
    loop = asyncio.get_running_loop()
    reset = await loop.run_in_executor(executor, lambda: env.reset(seed=seed, options=options))
    run = _Run(env, policy, seed, reset, native_tools, keep_think, max_steps)
    for _ in range(run.limit):
        action = await act_async(policy, run.chat.messages, run.tools, executor)
        run.chat.add_action(action)
        if run.record(action, await loop.run_in_executor(executor, env.step, action)):
            return run.episode
    run.episode.truncated = True
    return run.episode
