"""`rollout(env, policy, seed)`: the one loop that runs an episode, for benchmarks, SFT data and tests."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import gymnasium as gym

from magic_envs.core.chat import Conversation


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


def rollout(env: gym.Env, policy, seed: int | None = None, options: dict | None = None,
            native_tools: bool = True, keep_think: bool = True, max_steps: int | None = None) -> Episode:
    """Run one episode of `policy` in `env` through the shared chat formatter.

    Episodes end when the env terminates or its TimeLimit truncates; `max_steps` is a safety net for envs
    made without a TimeLimit.
    """
    observation, info = env.reset(seed=seed, options=options)
    if hasattr(policy, "begin"):
        policy.begin(env)
    tools = info["tools"]
    chat = Conversation(info["instructions"], tools, native_tools=native_tools, keep_think=keep_think)
    chat.add_observation(observation, info["role"])
    spec = env.spec
    episode = Episode(spec.id if spec else type(env.unwrapped).__name__, seed, info["task_id"], chat.history, tools)
    limit = max_steps or (spec.max_episode_steps if spec and spec.max_episode_steps else 100)
    for _ in range(limit):
        action = policy.act(chat.messages, tools)
        chat.add_action(action)
        observation, reward, terminated, truncated, info = env.step(action)
        episode.actions.append(action)
        episode.rewards.append(float(reward))
        episode.infos.append(info)
        if terminated or truncated:
            episode.terminated, episode.truncated = terminated, truncated
            break
        chat.add_observation(observation, info["role"])
    else:
        episode.truncated = True
    return episode
