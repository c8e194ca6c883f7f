"""Where RL tasks come from: seeded train-split tasks of live envs, and rows of static datasets, balanced per family.

A task is `(env_id, kwargs, seed)` or a pinned task dict (DESIGN.md §6), so every row rebuilds its instance
exactly. Each step draws the same number of task groups from every family (families with several sources take
turns), so a family with many envs or a large dataset cannot crowd out the others. Train tasks come from the
`train` split; evaluation uses `test`, whose pool is disjoint by the env contract.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import magic_envs


@dataclass(frozen=True)
class Task:
    env_id: str
    kwargs: str = "{}"  # JSON: hashable, and what a parquet row stores
    seed: int | None = None
    task: str | None = None  # a pinned task (JSON) from a static dataset, or None: draw from `seed`

    @property
    def family(self) -> str:
        return magic_envs.ENVS[self.env_id].family

    @property
    def reset_options(self) -> dict | None:
        return {"task": json.loads(self.task)} if self.task else None


def check_env(env_id: str) -> str:
    if env_id not in magic_envs.ENVS:
        raise ValueError(f"unknown env {env_id!r}: `magic list` shows every id")
    return env_id


def load_static(path: str | Path) -> list[Task]:
    """A static dataset: JSONL or parquet rows with `env_id` and either `task` (a pinned task dict or its JSON) or
    `seed`, optionally `kwargs`."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no static dataset at {path}")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    else:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def text(value):
        return value if value is None or isinstance(value, str) else json.dumps(value, sort_keys=True)
    try:
        return [Task(check_env(r["env_id"]), text(r.get("kwargs")) or "{}", r.get("seed"), text(r.get("task")))
                for r in rows]
    except KeyError as error:
        raise ValueError(f"{path}: every row needs {error}") from error


class TaskSchedule:
    """The task groups of each step: `groups_per_family` from every family, deterministic in (seed, step)."""

    def __init__(self, envs: list[str], kwargs: dict[str, dict], static: list[Task], groups_per_family: int,
                 seed: int):
        sources: dict[str, list] = {}
        for env_id in envs:
            sources.setdefault(magic_envs.ENVS[check_env(env_id)].family, []).append(
                ("live", env_id, json.dumps(kwargs.get(env_id, {}), sort_keys=True)))
        for task in static:
            family = sources.setdefault(task.family, [])
            entry = next((s for s in family if s[0] == "static" and s[1] == task.env_id), None)
            if entry is None:
                family.append(entry := ("static", task.env_id, []))
            entry[2].append(task)
        if not sources:
            raise ValueError("no tasks: give envs or a static dataset")
        self.sources, self.groups, self.seed = dict(sorted(sources.items())), groups_per_family, seed

    @property
    def families(self) -> list[str]:
        return list(self.sources)

    def step(self, step: int) -> list[Task]:
        tasks = []
        for sources in self.sources.values():
            for j in range(self.groups):
                n = step * self.groups + j  # the family's n-th group: its sources take turns
                kind, env_id, payload = sources[n % len(sources)]
                k = n // len(sources)
                if kind == "live":
                    tasks.append(Task(env_id, payload, self.seed * 1_000_003 + k))
                else:
                    tasks.append(payload[k % len(payload)])
        return tasks
