"""Where RL tasks come from: seeded train-split tasks of live envs, and rows of static datasets, balanced per family.

A task is `(env_id, kwargs, seed)` or a pinned task dict (DESIGN.md §6), so every row rebuilds its instance
exactly. Each step draws the same number of task groups from every family (families with several sources take
turns), so a family with many envs or a large dataset cannot crowd out the others. Train tasks come from the
`train` split; evaluation uses `test`, whose pool is disjoint by the env contract.

A static dataset is a file of such rows (JSONL or parquet; `magic synth`'s corpus is one). This module writes one
of pinned train-split tasks, so the dataset stays the same whatever later versions of a generator draw:

    python -m magic_rl.tasks --env magic/Calendar-v0 --count 512 --first-seed 500000 --out data/calendar.jsonl

or of the train-split tasks on which a policy's samples disagree, screened from a `magic eval --split train --trials
N` run of that policy (a group whose episodes all score alike has no advantage to learn from; where a policy solves
few tasks, most groups are such):

    python -m magic_rl.tasks --screen runs/eval-toolplan-train-t0.7 --on success --out data/toolplan-mixed.jsonl

(several screens of the same env and policy, over other seeds, merge into one file; `--on argument_accuracy --on
success` keeps the tasks that differ in either).
"""

from __future__ import annotations

import argparse
import json
import os
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

    def seed(value):  # parquet corpora store seeds as text
        return None if value is None else int(value)
    try:
        return [Task(check_env(r["env_id"]), text(r.get("kwargs")) or "{}", seed(r.get("seed")), text(r.get("task")))
                for r in rows]
    except KeyError as error:
        raise ValueError(f"{path}: every row needs {error}") from error
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from error


def pinned_rows(env_id: str, kwargs: dict, seeds: range, split: str = "train") -> list[dict]:
    """Static-dataset rows of the tasks `env_id` draws at `seeds`, each with its task dict pinned."""
    import gymnasium

    env = gymnasium.make(check_env(env_id), split=split, **kwargs)
    rows = []
    for seed in seeds:
        env.reset(seed=seed)
        rows.append({"env_id": env_id, "kwargs": json.dumps(kwargs, sort_keys=True), "seed": seed,
                     "task": env.unwrapped.task})
    return rows


def disagreeing_seeds(eval_dirs: list[str | Path], on: list[str]) -> tuple[str, dict, list[int], int]:
    """The train-split seeds of one or more `magic eval --trials N` runs of one policy on one env whose trials differ
    in any of `on` (`success`, `score` or metrics the env reports): `(env_id, kwargs, seeds, tasks screened)`. Runs
    that share a seed pool its trials."""
    from benchmarks.report import value_of

    rows = []
    for eval_dir in eval_dirs:
        path = Path(eval_dir) / "episodes.jsonl"
        if not path.is_file():
            raise ValueError(f"no episodes.jsonl in {eval_dir}: screen the folder a `magic eval --out` wrote")
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path = ", ".join(str(Path(d) / "episodes.jsonl") for d in eval_dirs)
    runs = {(r["env_id"], json.dumps(r["kwargs"], sort_keys=True), r["split"], r["policy"]) for r in rows}
    if len(runs) != 1:
        raise ValueError(f"{path} hold {len(runs)} runs; screen one env, kwargs and policy at a time")
    env_id, kwargs, split, _ = runs.pop()
    if split != "train":
        raise ValueError(f"{path} is the {split} split: screen train-split tasks, never held-out ones")
    values: dict[int, list[tuple]] = {}
    for r in rows:
        if not isinstance(r["key"], int):
            raise ValueError(f"{path}: task {r['key']!r} is not a seed; screen an eval run over seeds")
        values.setdefault(r["key"], []).append(tuple(value_of(r, name) for name in on))
    for i, name in enumerate(on):
        if any(trial[i] is None for trials in values.values() for trial in trials):
            raise ValueError(f"{path}: {env_id} episodes do not all report {name!r}")
    if max(len(v) for v in values.values()) < 2:
        raise ValueError(f"{path} has one trial a task: run the eval with --trials 2 or more")
    seeds = sorted(k for k, v in values.items() if len(set(v)) > 1)
    if not seeds:
        raise ValueError(f"the trials of all {len(values)} tasks in {path} agree in {' and '.join(on)}")
    return env_id, json.loads(kwargs), seeds, len(values)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m magic_rl.tasks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--env", help="the env id whose train-split tasks are pinned")
    source.add_argument("--screen", type=Path, nargs="+", metavar="EVAL_DIR",
                        help="pin the tasks of these `magic eval --split train --trials N` runs (one env and policy) "
                        "whose trials disagree")
    parser.add_argument("--on", action="append", help="with --screen: the value the trials differ in (success, "
                        "score or one of the env's metrics; repeated, tasks that differ in any; default success)")
    parser.add_argument("--kwargs", default="{}", help="JSON: the env's make kwargs")
    parser.add_argument("--count", type=int, default=512, help="rows (one task per seed)")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed, first-seed + 1, ...")
    parser.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    args = parser.parse_args(argv)
    try:
        if args.screen:
            on = args.on or ["success"]
            env_id, kwargs, seeds, screened = disagreeing_seeds(args.screen, on)
            print(f"{len(seeds)} of {screened} tasks of {' '.join(map(str, args.screen))} disagree in "
                  f"{' or '.join(on)}")
            rows = pinned_rows(env_id, kwargs, seeds)
        else:
            rows = pinned_rows(args.env, json.loads(args.kwargs), range(args.first_seed, args.first_seed + args.count))
    except (ValueError, TypeError) as error:
        raise SystemExit(f"python -m magic_rl.tasks: {error}") from error
    args.out.parent.mkdir(parents=True, exist_ok=True)
    staging = args.out.with_name(args.out.name + ".tmp")
    staging.write_text("".join(json.dumps(row) + "\n" for row in rows))
    os.replace(staging, args.out)
    print(f"{len(rows)} pinned {rows[0]['env_id']} tasks in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
