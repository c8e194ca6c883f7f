"""Sweep seeds for every `magic/` id and split: the oracle must solve all, baselines must stay near 0.

    python benchmarks/oracle_sweep.py [--seeds 200] [--ids ...]

Prints, per id and split, the oracle's success rate and the mean score of the right-format random policy and
of the junk policy (random text), with standard errors. Exits non-zero if the oracle misses any seed.
"""

from __future__ import annotations

import argparse
import math
import sys

import gymnasium

import magic_envs
from magic_envs.core import OraclePolicy, RandomPolicy, rollout


def rate(values: list[float]) -> str:
    n, mean = len(values), sum(values) / len(values)
    se = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n) if n > 1 else 0.0
    return f"{mean:.3f} ±{se:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--ids", nargs="*", default=list(magic_envs.ENVS))
    args = parser.parse_args()
    failures = 0
    print(f"{'env':<22}{'split':<16}{'oracle':>16}{'random':>16}{'junk':>16}")
    for env_id in args.ids:
        offline = magic_envs.ENVS[env_id].offline  # e.g. the scripted customer instead of a model's
        for split in gymnasium.make(env_id, **offline).unwrapped.splits:
            env = gymnasium.make(env_id, split=split, **offline)
            scores = {"oracle": [], "random": [], "junk": []}
            for seed in range(args.seeds):
                policies = {"oracle": OraclePolicy(), "random": RandomPolicy("format", seed),
                            "junk": RandomPolicy("junk", seed)}
                for name, policy in policies.items():
                    scores[name].append(rollout(env, policy, seed=seed).score)
            failures += sum(s < 1.0 for s in scores["oracle"])
            print(f"{env_id:<22}{split:<16}" + "".join(f"{rate(v):>16}" for v in scores.values()))
    if failures:
        print(f"the oracle failed {failures} episodes", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
