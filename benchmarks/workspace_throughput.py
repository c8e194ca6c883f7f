"""magic/Workspace-v0 throughput on one core: oracle and random steps/s, resets/s, and what checking a call costs.

    python benchmarks/workspace_throughput.py [--seconds 3] [--split train]

Per horizon, side by side: steps of the oracle (every call of whole gold plans, retries of busy services and the
scored final report included) and of the right-format random policy's calls (mostly refused; 120 per episode,
its plain-text reports left out since the first would end the episode), resets of generated tasks (a world
built, sub-goals composed against a scratch copy and replayed on the initial world) and of a pinned task (the
world rebuilt, the plan replayed). Rates are given per CPU second of this process (what one core delivers,
whatever else the machine runs) and per wall-clock second. A last line gives the cost of checking one call's
arguments with jsonschema (the base class's check) and with the env's exact fast check, over the oracle's calls.
"""

from __future__ import annotations

import argparse
import os
import time

import gymnasium
import numpy as np

import magic_envs  # noqa: F401  (registers the ids)
from magic_envs.core.grammar import parse_action
from magic_envs.tool_execution.workspace_tools import fits_schema, registry

TARGET_STEPS = 5000  # per core


class Clock:
    """CPU and wall time spent inside `with` blocks."""

    def __init__(self):
        self.cpu = self.wall = 0.0

    def __enter__(self):
        self._cpu, self._wall = time.process_time(), time.perf_counter()

    def __exit__(self, *exc):
        self.cpu += time.process_time() - self._cpu
        self.wall += time.perf_counter() - self._wall


def steps(env, policy: str, seconds: float) -> tuple[float, float, list]:
    """Steps per CPU second and per wall second of whole episodes; the oracle's actions (for the check table)."""
    clock, n, episode, actions, rng = Clock(), 0, 0, [], np.random.default_rng(0)
    while clock.wall < seconds:
        env.reset(seed=episode % 300)
        episode += 1
        for _ in range(120):
            action = env.oracle_action() if policy == "oracle" else env.random_action(rng)
            while policy == "random" and not parse_action(action).calls:  # its calls only: a report ends the episode
                action = env.random_action(rng)
            if policy == "oracle" and len(actions) < 5000:
                actions.append(action)
            with clock:
                terminated = env.step(action)[2]
            n += 1
            if terminated:
                break
    return n / clock.cpu, n / clock.wall, actions


def resets(env, seconds: float, pinned: dict | None = None) -> tuple[float, float]:
    clock, n = Clock(), 0
    while clock.wall < seconds:
        with clock:
            env.reset(seed=10_000 + n, options={"task": pinned} if pinned else None)
        n += 1
    return n / clock.cpu, n / clock.wall


def check_costs(actions: list[str], repeat: int = 3) -> tuple[float, float]:
    """Microseconds per call: jsonschema's check and the fast check of the same arguments."""
    calls = [c for a in actions for c in parse_action(a).calls]
    tools = registry()
    out = []
    for check in (lambda c: tools[c.name].tool.check(c.arguments),
                  lambda c: fits_schema(tools[c.name].tool.parameters, c.arguments)):
        start = time.process_time()
        for _ in range(repeat):
            for c in calls:
                check(c)
        out.append((time.process_time() - start) / (repeat * len(calls)) * 1e6)
    return out[0], out[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--split", default="train")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the target is stated
    print(f"{'horizon':<8}{'oracle steps/s':>16}{'(wall)':>8}{'random steps/s':>16}{'(wall)':>8}"
          f"{'resets/s':>10}{'(wall)':>8}{'pinned resets/s':>17}{'(wall)':>8}{'oracle/target':>15}")
    actions = []
    for horizon in ("short", "medium", "long"):
        env = gymnasium.make("magic/Workspace-v0", split=args.split, horizon=horizon).unwrapped  # no checking wrappers
        oracle_cpu, oracle_wall, actions = steps(env, "oracle", args.seconds)
        random_cpu, random_wall, _ = steps(env, "random", args.seconds)
        reset_cpu, reset_wall = resets(env, args.seconds)
        env.reset(seed=1)
        pinned_cpu, pinned_wall = resets(env, args.seconds, pinned=env.task)
        print(f"{horizon:<8}{oracle_cpu:>16.0f}{oracle_wall:>8.0f}{random_cpu:>16.0f}{random_wall:>8.0f}"
              f"{reset_cpu:>10.1f}{reset_wall:>8.1f}{pinned_cpu:>17.1f}{pinned_wall:>8.1f}"
              f"{oracle_cpu / TARGET_STEPS:>15.2f}")
    schema_us, fast_us = check_costs(actions)
    print(f"\nargument check per call: jsonschema {schema_us:.1f} us, fast check {fast_us:.1f} us "
          f"({schema_us / fast_us:.0f}x)")


if __name__ == "__main__":
    main()
