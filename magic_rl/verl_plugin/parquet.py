"""verl's RL parquet from `(env_id, kwargs, seed)` tasks: train rows from each env's train split, validation rows from
its test split (disjoint pools by the env contract), the same number of rows per family.

    python -m magic_rl.verl_plugin.parquet --env magic/Calendar-v0 --env magic/ToolPlan-v0 \
        --train 4096 --val 256 --out data/magic

Each row is one task; verl repeats it `rollout.n` times for its group, and every copy replays the same instance
(the row pins env, kwargs and seed; a pinned task dict from `--tasks` pins the instance itself). Columns: `prompt`
(the first chat, system with tools and the task, which RLHFDataset measures and filters by length), `data_source`
(the env id), `agent_name` (`magic_env`: agent_loop.py plays it), `reward_model` (verl's schema; the score comes
from the env), and `extra_info` (`env_id`, `env_kwargs`, `seed`, `task`, `split`, `index`). Single-turn rows also
work with verl's plain single-turn loop, scored by `reward.compute_score`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import gymnasium

import magic_envs
from magic_envs.core.chat import Conversation
from magic_rl.tasks import Task, check_env, load_static


def first_chat(env, seed: int | None, options: dict | None) -> list[dict]:
    """The messages of an episode's first prompt, tools in the system message (any template can show them)."""
    observation, info = env.reset(seed=seed, options=options)
    chat = Conversation(info["instructions"], info["tools"], native_tools=False)
    chat.add_observation(observation, info["role"])
    return chat.messages


def rows_for(tasks: list[Task], split: str, start: int = 0) -> list[dict]:
    envs: dict = {}
    rows = []
    for i, task in enumerate(tasks):
        key = (task.env_id, task.kwargs)
        if key not in envs:
            envs[key] = gymnasium.make(task.env_id, split=split, **json.loads(task.kwargs))
        rows.append({
            "data_source": task.env_id, "agent_name": "magic_env", "ability": task.family,
            "prompt": first_chat(envs[key], task.seed, task.reset_options),
            "reward_model": {"style": "rule", "ground_truth": ""},
            "extra_info": {"env_id": task.env_id, "env_kwargs": task.kwargs, "seed": task.seed, "task": task.task,
                           "split": split, "index": start + i},
        })
    return rows


def balanced(envs: list[str], kwargs: dict, count: int, seed_offset: int = 0) -> list[Task]:
    """`count` live tasks, the same number per family, each family's envs in turn, seeds counting up."""
    families: dict[str, list[str]] = {}
    for env_id in envs:
        families.setdefault(magic_envs.ENVS[check_env(env_id)].family, []).append(env_id)
    per_family, tasks = max(1, count // max(1, len(families))), []
    for members in families.values():
        for n in range(per_family):
            env_id = members[n % len(members)]
            knobs = json.dumps(kwargs.get(env_id, {}), sort_keys=True)
            tasks.append(Task(env_id, knobs, seed_offset + n // len(members)))
    return tasks


def write(rows: list[dict], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(".tmp")
    pq.write_table(pa.Table.from_pylist(rows), staging)
    staging.replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m magic_rl.verl_plugin.parquet", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", action="append", default=[], help="a live env id (repeat)")
    parser.add_argument("--env-kwargs", default="{}", help='JSON: make kwargs per env id')
    parser.add_argument("--tasks", help="a static dataset (JSONL / parquet rows: env_id, task or seed, kwargs) "
                                        "added to the train rows")
    parser.add_argument("--train", type=int, default=1024, help="live train rows (split evenly over families)")
    parser.add_argument("--val", type=int, default=128, help="validation rows from the test split")
    parser.add_argument("--out", required=True, help="folder for train.parquet and val.parquet")
    args = parser.parse_args(argv)
    try:
        kwargs = json.loads(args.env_kwargs)
        train = rows_for(balanced(args.env, kwargs, args.train), "train")
        if args.tasks:
            train += rows_for(load_static(args.tasks), "train", start=len(train))
        val = rows_for(balanced(args.env, kwargs, args.val), "test") if args.env and args.val else []
    except ValueError as error:
        raise SystemExit(f"parquet: {error}") from error
    if not train:
        raise SystemExit("parquet: no rows: give --env or --tasks")
    out = Path(args.out)
    write(train, out / "train.parquet")
    if val:
        write(val, out / "val.parquet")
    print(f"parquet: {len(train)} train rows, {len(val)} val rows in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
