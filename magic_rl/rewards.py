"""Multi-objective rewards: named objectives per episode, normalised per objective within each task group, then
weighted, so a family whose objective varies in [0, 0.1] counts as much as one varying in [0, 1].

    values = [objectives(t, env.unwrapped.progress_metrics, max_turns) for t in trajectories]
    advantages = group_advantages(values, group_ids, RewardConfig())

Objectives (each in [0, 1]):
  task        the env's task score (its verifier's terminal reward; the official metric where one exists)
  format      the fraction of turns that were valid actions (`info["valid"]`) and ended before their token cap
  efficiency  1 - (turns - 1) / max_turns for a solved episode, 0 otherwise (fewer turns, only when it works)
  progress    the mean of the env's `progress_metrics` at the episode's end (e.g. argument accuracy, constraint
              score, sub-goals reached); 0 where an env declares none, which then adds no advantage
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

OBJECTIVES = ("task", "format", "efficiency", "progress")


@dataclass
class RewardConfig:
    task_weight: float = 1.0
    """weight of the task score"""
    format_weight: float = 0.1
    """weight of format validity"""
    efficiency_weight: float = 0.05
    """weight of turn efficiency"""
    progress_weight: float = 0.2
    """weight of the env's progress metrics"""
    normalize_std: bool = True
    """divide each objective's group-centred values by the group's standard deviation (GRPO); False only centres"""

    def weights(self) -> dict[str, float]:
        return {name: getattr(self, f"{name}_weight") for name in OBJECTIVES}

    def __post_init__(self):
        bad = [f"{name}_weight" for name, w in self.weights().items() if not w >= 0]
        if bad:
            raise ValueError(f"reward weights must be >= 0: {', '.join(bad)}")


def objectives(trajectory, progress_metrics: tuple[str, ...], max_turns: int) -> dict[str, float]:
    """The objectives of one episode (a runner Trajectory)."""
    turns = trajectory.turns
    final = turns[-1]["info"] if turns else {}
    metrics = final.get("metrics", {})
    well_formed = [bool(t["info"].get("valid", False)) and not t["cut"] for t in turns]
    return {
        "task": float(trajectory.score),
        "format": sum(well_formed) / len(turns) if turns else 0.0,
        "efficiency": max(0.0, 1.0 - (len(turns) - 1) / max_turns) if trajectory.success else 0.0,
        "progress": float(np.mean([metrics.get(m, 0.0) for m in progress_metrics])) if progress_metrics else 0.0,
    }


def scalar(values: dict[str, float], config: RewardConfig) -> float:
    """The weighted sum of one episode's objectives: the reward logged and the return GiGPO discounts."""
    return sum(w * values[name] for name, w in config.weights().items())


def normalize_in_groups(x: np.ndarray, groups: list, normalize_std: bool, eps: float = 1e-6) -> np.ndarray:
    """x minus its group's mean, over the group's sample std (+ eps) as verl's GRPO does: a group whose members all
    score alike gets 0, and so does a group of one (verl would pass its raw score on)."""
    out = np.zeros_like(x, dtype=np.float64)
    index: dict = {}
    keys = np.array([index.setdefault(g, len(index)) for g in groups])
    for key in range(len(index)):
        members = keys == key
        if members.sum() < 2:
            continue
        centred = x[members] - x[members].mean()
        out[members] = centred / (x[members].std(ddof=1) + eps) if normalize_std else centred
    return out


def group_advantages(values: list[dict[str, float]], groups: list, config: RewardConfig) -> np.ndarray:
    """One advantage per episode: each objective normalised within its task group, then the weighted sum."""
    total = np.zeros(len(values))
    for name, weight in config.weights().items():
        if weight:
            column = np.array([v[name] for v in values], dtype=np.float64)
            total += weight * normalize_in_groups(column, groups, config.normalize_std)
    return total
