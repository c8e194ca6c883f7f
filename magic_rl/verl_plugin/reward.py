"""`compute_score` for static datasets under verl's reward loading (`reward.custom_reward_function.path` = this file,
`name` = compute_score): the row's single answer is replayed in its env and scored by the env's own verifier.

Multi-turn rows are played and scored by the agent loop itself (agent_loop.py); this is for single-answer rows that
verl's plain single-turn loop generates (NATURAL PLAN, ToolCall, Decompose, BFCL records).
"""

from __future__ import annotations

import json

import gymnasium

import magic_envs  # noqa: F401  (registers the ids)


def compute_score(data_source: str, solution_str: str, ground_truth, extra_info: dict | None = None, **kwargs) -> dict:
    """{"score": the env's task score of `solution_str` as the first action, "success", "valid"}; never raises on the
    model's text."""
    info = dict(extra_info or {})
    env = gymnasium.make(info.get("env_id") or data_source, split=info.get("split") or "train",
                         **json.loads(info.get("env_kwargs") or "{}"))
    task = info.get("task")
    env.reset(seed=info.get("seed"), options={"task": json.loads(task)} if task else None)
    _, reward, terminated, truncated, step_info = env.step(solution_str)
    env.close()
    done = terminated or truncated
    return {"score": float(reward) if done else 0.0, "success": float(bool(step_info["success"]) and done),
            "valid": float(step_info["valid"])}
