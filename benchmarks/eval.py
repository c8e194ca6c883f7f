"""`magic eval`: run policies over envs, append every episode to JSONL, resume after a kill, print a table."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
from pathlib import Path

import gymnasium

import magic_envs
from magic_envs.cli import resolve_env_id
from magic_envs.core import OraclePolicy, RandomPolicy, rollout
from magic_envs.procedures.reward import pass_hat_k

POLICIES = {"oracle": lambda seed: OraclePolicy(), "random": lambda seed: RandomPolicy("format", seed),
            "junk": lambda seed: RandomPolicy("junk", seed)}


def suite_ids(suite: str) -> list[str]:
    ids = [i for i, entry in magic_envs.ENVS.items() if entry.family == suite]
    if not ids:
        families = sorted({e.family for e in magic_envs.ENVS.values()})
        raise SystemExit(f"magic eval: unknown suite {suite!r}; the suites are: {', '.join(families)}")
    return ids


def mean_se(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(var / n)


def load_done(path: Path | None) -> dict[tuple, dict]:
    """Episodes already in the JSONL file (a torn last line from a kill is ignored and rewritten)."""
    done = {}
    if path and path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            done[(row["env_id"], row["split"], row["policy"], row["seed"], row.get("trial", 0))] = row
    return done


def load_tasks(path: Path) -> dict[str, dict]:
    """Pinned tasks by id from a JSON object (id -> task, NATURAL PLAN's layout), a JSON list, or JSONL."""
    if not path.is_file():
        raise SystemExit(f"magic eval: --tasks {path}: no such file")
    text = path.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as e:
            raise SystemExit(f"magic eval: --tasks {path}: neither JSON nor JSONL ({e})") from e
    tasks = data if isinstance(data, dict) else {str(t.get("id", i)): t for i, t in enumerate(data)}
    if not tasks or not all(isinstance(t, dict) for t in tasks.values()):
        raise SystemExit(f"magic eval: --tasks {path}: expected task objects")
    return tasks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="magic eval", description=__doc__)
    parser.add_argument("--env", action="append", default=[], help="env id (repeatable), e.g. magic/Calendar-v0")
    parser.add_argument("--suite", help="every env of a family, e.g. scheduling")
    parser.add_argument("--policy", action="append", default=[], choices=sorted(POLICIES),
                        help="oracle | random (right-format random answers) | junk (repeatable; default oracle)")
    parser.add_argument("--episodes", type=int, default=20, help="episodes per env, split and policy")
    parser.add_argument("--split", action="append", default=[], help="split(s) to run (default test)")
    parser.add_argument("--seed", type=int, default=0, help="first task seed; episodes use seed, seed+1, ...")
    parser.add_argument("--tasks", type=Path, help="run pinned tasks from this file instead of seeds (a JSON "
                        "object id -> task as NATURAL PLAN publishes, a JSON list, or JSONL), e.g. real records")
    parser.add_argument("--trials", type=int, default=1, help="runs of every task (policies that sample differ "
                        "between runs); with more than one the table adds tau2-bench's pass^k for k = 1..trials")
    parser.add_argument("--out", type=Path, help="JSONL file: episodes are appended as they finish, and a rerun "
                        "skips those already there")
    args = parser.parse_args(argv)
    ids = [resolve_env_id(e) for e in args.env] + (suite_ids(args.suite) if args.suite else [])
    if not ids:
        parser.error("give --env ID or --suite NAME")
    if args.episodes < 1 or args.trials < 1:
        parser.error("--episodes and --trials must be at least 1")
    policies, splits = args.policy or ["oracle"], args.split or ["test"]
    tasks = load_tasks(args.tasks) if args.tasks else None
    # Episodes are keyed by seed, or by task id when tasks are pinned from a file.
    keys = list(tasks) if tasks else list(range(args.seed, args.seed + args.episodes))
    done = load_done(args.out)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        _rewrite(args.out, done)
    sink = args.out.open("a") if args.out else None
    ks = range(1, args.trials + 1) if args.trials > 1 else range(0)
    print(f"{'env':<22}{'split':<7}{'policy':<8}{'n':>5}{'success':>16}{'score':>16}"
          + "".join(f"{f'pass^{k}':>9}" for k in ks))
    for env_id in ids:
        for split in splits:
            try:
                env = gymnasium.make(env_id, split=split)
            except ValueError as e:
                raise SystemExit(f"magic eval: {e}") from e
            for name in policies:
                rows, trials = [], {}
                for (i, seed), trial in itertools.product(enumerate(keys), range(args.trials)):
                    key = (env_id, split, name, seed, trial)
                    if key not in done:
                        options = {"task": tasks[seed]} if tasks else None
                        policy = POLICIES[name](i + trial * len(keys))  # each trial its own sampling seed
                        try:
                            episode = rollout(env, policy, seed=i if tasks else seed, options=options)
                        except (ValueError, TypeError) as e:
                            raise SystemExit(f"magic eval: task {seed!r} does not fit {env_id}: {e}") from e
                        done[key] = {"env_id": env_id, "split": split, "policy": name, "seed": seed,
                                     "trial": trial, "task_id": episode.task_id, "score": episode.score, "success": episode.success,
                                     "steps": len(episode.actions), "metrics": episode.final_info.get("metrics", {}),
                                     "actions": episode.actions}
                        if sink:
                            sink.write(json.dumps(done[key], ensure_ascii=False) + "\n")
                            sink.flush()
                    rows.append(done[key])
                    trials.setdefault(seed, []).append(bool(done[key]["success"]))
                (s, s_se), (c, c_se) = mean_se([float(r["success"]) for r in rows]), mean_se([r["score"] for r in rows])
                print(f"{env_id:<22}{split:<7}{name:<8}{len(rows):>5}{s:>10.3f} ±{s_se:.3f}{c:>10.3f} ±{c_se:.3f}"
                      + "".join(f"{pass_hat_k(trials, k):>9.3f}" for k in ks))
    if sink:
        sink.close()
    return 0


def _rewrite(path: Path, done: dict) -> None:
    """Drop a torn line left by a kill, atomically, before appending again."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w") as f:
        for row in done.values():
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
