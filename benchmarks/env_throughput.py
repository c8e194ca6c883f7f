"""Env throughput on one core: resets/s and scored steps/s for every `magic/` id at its default knobs.

    python benchmarks/env_throughput.py [--ids magic/Calendar-v0 ...] [--seconds 3]

Resets include generation and the exact solver's proof of the answer; a scored step parses the oracle's
answer and runs the official scorer and the strict metric. Targets are printed beside the measurements.
"""

from __future__ import annotations

import argparse
import os
import time

import gymnasium

import magic_envs

# The speed each env must reach at default knobs (resets/s, steps/s); solvers that prove optimality cost more.
TARGETS = {"magic/Calendar-v0": (1000, 10_000), "magic/Meeting-v0": (200, 10_000), "magic/Trip-v0": (200, 10_000)}


def measure(env_id: str, seconds: float) -> tuple[float, float]:
    env = gymnasium.make(env_id, **magic_envs.ENVS[env_id].offline).unwrapped  # without the checking wrappers
    # Every oracle step of whole episodes is timed (a tool call executed, a customer's reply, an answer scored);
    # resets between episodes are not.
    seed, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed)
        seed += 1
    resets = seed / (time.perf_counter() - start)
    steps, elapsed, episode = 0, 0.0, 0
    while elapsed < seconds:
        env.reset(seed=episode % 500)
        episode += 1
        for _ in range(200):
            action = env.oracle_action()
            t = time.perf_counter()
            _, _, terminated, _, _ = env.step(action)
            elapsed += time.perf_counter() - t
            steps += 1
            if terminated:
                break
    return resets, steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ids", nargs="*", default=list(magic_envs.ENVS))
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the targets are stated
    print(f"{'env':<22}{'resets/s':>10}{'target':>8}{'ratio':>7}{'steps/s':>10}{'target':>8}{'ratio':>7}")
    for env_id in args.ids:
        resets, steps = measure(env_id, args.seconds)
        targets = TARGETS.get(env_id)
        if targets:
            r, s = targets
            print(f"{env_id:<22}{resets:>10.0f}{r:>8}{resets / r:>7.2f}{steps:>10.0f}{s:>8}{steps / s:>7.2f}")
        else:
            print(f"{env_id:<22}{resets:>10.0f}{'-':>8}{'-':>7}{steps:>10.0f}{'-':>8}{'-':>7}")


if __name__ == "__main__":
    main()
