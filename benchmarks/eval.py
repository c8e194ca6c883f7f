"""`magic eval`: run policies over envs, append every episode to JSONL, resume after a kill, print a table."""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path

import gymnasium

import magic_envs
from magic_envs.cli import resolve_env_id
from magic_envs.core import OraclePolicy, RandomPolicy, rollout

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
            done[(row["env_id"], row["split"], row["policy"], row["seed"])] = row
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="magic eval", description=__doc__)
    parser.add_argument("--env", action="append", default=[], help="env id (repeatable), e.g. magic/Calendar-v0")
    parser.add_argument("--suite", help="every env of a family, e.g. scheduling")
    parser.add_argument("--policy", action="append", default=[], choices=sorted(POLICIES),
                        help="oracle | random (right-format random answers) | junk (repeatable; default oracle)")
    parser.add_argument("--episodes", type=int, default=20, help="episodes per env, split and policy")
    parser.add_argument("--split", action="append", default=[], help="split(s) to run (default test)")
    parser.add_argument("--seed", type=int, default=0, help="first task seed; episodes use seed, seed+1, ...")
    parser.add_argument("--out", type=Path, help="JSONL file: episodes are appended as they finish, and a rerun "
                        "skips those already there")
    args = parser.parse_args(argv)
    ids = [resolve_env_id(e) for e in args.env] + (suite_ids(args.suite) if args.suite else [])
    if not ids:
        parser.error("give --env ID or --suite NAME")
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")
    policies, splits = args.policy or ["oracle"], args.split or ["test"]
    done = load_done(args.out)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        _rewrite(args.out, done)
    sink = args.out.open("a") if args.out else None
    print(f"{'env':<22}{'split':<7}{'policy':<8}{'n':>5}{'success':>16}{'score':>16}")
    for env_id in ids:
        for split in splits:
            try:
                env = gymnasium.make(env_id, split=split)
            except ValueError as e:
                raise SystemExit(f"magic eval: {e}") from e
            for name in policies:
                rows = []
                for seed in range(args.seed, args.seed + args.episodes):
                    key = (env_id, split, name, seed)
                    if key not in done:
                        episode = rollout(env, POLICIES[name](seed), seed=seed)
                        done[key] = {"env_id": env_id, "split": split, "policy": name, "seed": seed,
                                     "task_id": episode.task_id, "score": episode.score, "success": episode.success,
                                     "steps": len(episode.actions), "metrics": episode.final_info.get("metrics", {}),
                                     "actions": episode.actions}
                        if sink:
                            sink.write(json.dumps(done[key], ensure_ascii=False) + "\n")
                            sink.flush()
                    rows.append(done[key])
                (s, s_se), (c, c_se) = mean_se([float(r["success"]) for r in rows]), mean_se([r["score"] for r in rows])
                print(f"{env_id:<22}{split:<7}{name:<8}{len(rows):>5}{s:>10.3f} ±{s_se:.3f}{c:>10.3f} ±{c_se:.3f}")
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
