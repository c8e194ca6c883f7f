"""The Policy protocol and the two policies that need no model: the oracle and random baselines."""

from __future__ import annotations

import asyncio
from typing import Protocol, runtime_checkable

import gymnasium as gym
import numpy as np


@runtime_checkable
class Policy(Protocol):
    """Anything that turns the chat so far into the next action text.

    `begin(env)` is called by `rollout` after each reset; policies that need the env (the oracle, format-aware
    random baselines) bind to it there, model-backed policies ignore it.
    """

    def act(self, messages: list[dict], tools: list[dict]) -> str: ...


async def act_async(policy, messages: list[dict], tools: list[dict], executor=None) -> str:
    """The policy's next action on an event loop: its own `act_async` (servers, batching models) when it has
    one, else its `act` in a worker thread so that a slow policy never stalls other episodes."""
    if hasattr(policy, "act_async"):
        return await policy.act_async(messages, tools)
    return await asyncio.get_running_loop().run_in_executor(executor, policy.act, messages, tools)


class OraclePolicy:
    """Takes `env.unwrapped.oracle_action()`: the upper bound every env must reach with score 1.0."""

    name = "oracle"

    def __init__(self):
        self.env: gym.Env | None = None

    def begin(self, env: gym.Env) -> None:
        self.env = env.unwrapped

    def act(self, messages: list[dict], tools: list[dict]) -> str:
        if self.env is None:
            raise RuntimeError("OraclePolicy.act before begin(env): run it through rollout()")
        return self.env.oracle_action()


class RandomPolicy:
    """A baseline that should score near 0.

    mode="format": a random action in the task's answer format (`env.random_action`), the baseline that is
    hard to beat by luck; mode="junk": random printable text from the action space.
    """

    def __init__(self, mode: str = "format", seed: int | None = None):
        if mode not in ("format", "junk"):
            raise ValueError(f"RandomPolicy mode must be 'format' or 'junk', got {mode!r}")
        self.mode, self.rng = mode, np.random.default_rng(seed)
        self.name = f"random-{mode}"
        self.env = None

    def begin(self, env: gym.Env) -> None:
        self.env = env.unwrapped
        self.env.action_space.seed(int(self.rng.integers(2**31)))

    def act(self, messages: list[dict], tools: list[dict]) -> str:
        if self.env is None:
            raise RuntimeError("RandomPolicy.act before begin(env): run it through rollout()")
        if self.mode == "junk":
            return self.env.action_space.sample()
        return self.env.random_action(self.rng)
