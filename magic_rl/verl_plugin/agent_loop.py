"""verl's agent loop for every `magic/` env: the token-faithful runner (magic_rl/runner.py) behind verl's servers.

Registered as `magic_env` through `actor_rollout_ref.rollout.agent.agent_loop_config_path` (configs/agent_loop.yaml).
A row (parquet.py) names its instance in `extra_info`: `env_id`, `env_kwargs` (JSON), `seed` or a pinned `task`
(JSON); verl repeats a row for its group, so every copy plays the same instance. The episode runs in a worker thread
(env steps and templating never block verl's event loop, which drives many episodes at once); each model turn is
one `server_manager.generate` awaited on that loop, with one request id per episode so turns stay on one server and
reuse its prefix cache.

The loop scores its own episode (`reward_score`: the weighted objectives of rewards.py, weights from the config's
`magic.reward`), and always returns the same `reward_extra_info` keys, whatever the env. For the algorithms it also
returns, in `extra_fields`: `think_mask` (response tokens inside <think>), `turn_spans` ([start, end) of each model
turn in the response), `turn_rewards`, `anchors` (GiGPO's state keys) and `objectives`.
"""

from __future__ import annotations

import asyncio
import json
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from uuid import uuid4

import gymnasium
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register

import magic_envs
from magic_rl.rewards import OBJECTIVES, RewardConfig, objectives, scalar
from magic_rl.runner import run_episode

# Env work of every episode on this worker: threads, since envs are Python and mostly wait on the model.
ENV_POOL = ThreadPoolExecutor(int(os.environ.get("MAGIC_ENV_THREADS", "64")), thread_name_prefix="magic-env")
EXTRA_KEYS = (*OBJECTIVES, "success", "score", "turns", "truncated", "family")


def reward_config(config) -> RewardConfig:
    section = (config.get("magic") or {}).get("reward") or {}
    return RewardConfig(**dict(section))


@register("magic_env")
class MagicAgentLoop(AgentLoopBase):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.response_length = self.rollout_config.response_length
        magic = self.config.get("magic") or {}
        self.turn_tokens = int(magic.get("turn_tokens") or self.response_length)
        self.reward = reward_config(self.config)

    async def run(self, sampling_params: dict[str, Any], **kwargs) -> AgentLoopOutput:
        row = dict(kwargs["extra_info"])
        env_id = row["env_id"]
        if env_id not in magic_envs.ENVS:
            raise ValueError(f"row names an unknown env {env_id!r}")
        loop, request_id = asyncio.get_running_loop(), uuid4().hex

        def generate(prompt_ids, params):  # called from the episode's thread; the request runs on verl's loop
            request = self.server_manager.generate(request_id, prompt_ids=list(prompt_ids),
                                                   sampling_params={**sampling_params, **params})
            output = asyncio.run_coroutine_threadsafe(request, loop).result()
            return output.token_ids, output.log_probs or [0.0] * len(output.token_ids)

        def play():
            env = gymnasium.make(env_id, split=row.get("split") or "train", **json.loads(row.get("env_kwargs") or "{}"))
            task = row.get("task")
            options = {"task": json.loads(task)} if task else None
            try:
                trajectory = run_episode(env, generate, self.tokenizer, seed=row.get("seed"), options=options,
                                         turn_tokens=self.turn_tokens, response_tokens=self.response_length)
                limit = env.spec.max_episode_steps or 100
                return trajectory, objectives(trajectory, env.unwrapped.progress_metrics, limit)
            finally:
                env.close()
        trajectory, values = await loop.run_in_executor(ENV_POOL, play)
        n = self.response_length
        info = {**values, "success": float(trajectory.success), "score": trajectory.score,
                "turns": float(len(trajectory.turns)), "truncated": float(bool(trajectory.truncated)),
                "family": magic_envs.ENVS[env_id].family}
        return AgentLoopOutput(
            prompt_ids=trajectory.prompt_ids, response_ids=trajectory.response_ids[:n],
            response_mask=trajectory.response_mask[:n], response_logprobs=trajectory.logprobs[:n],
            reward_score=scalar(values, self.reward), num_turns=2 * len(trajectory.turns) + 1,
            metrics=AgentLoopMetrics(),
            extra_fields={"reward_extra_info": {k: info[k] for k in EXTRA_KEYS},
                          "think_mask": trajectory.think_mask[:n],
                          "turn_spans": [[t["start"], min(t["end"], n)] for t in trajectory.turns if t["start"] < n],
                          "turn_rewards": [t["reward"] for t in trajectory.turns],
                          "anchors": [t["anchor"] for t in trajectory.turns], "objectives": values})
