"""Throughput of peer text envs (reasoning-gym, GEM) on one core, as one JSON line per peer.

    .venv-peers/bin/python benchmarks/peer_envs.py [--seconds 3] rg/calendar_arithmetic gem/game:Sokoban-v0-easy ...

Peers:
* `rg/<dataset>`: a reasoning-gym dataset. Reset = generating item i; step = `score_answer` on its gold answer.
* `gem/rg:<dataset>`: GEM's env over that dataset (its only scheduling, graph and code-reasoning envs). Step =
  `env.step("\\boxed{gold}")`.
* `gem/tool:<dataset>`: GEM's tool env (`ToolEnvWrapper` with `PythonCodeTool`, code run in a fresh interpreter as
  GEM does) over a reasoning-gym arithmetic dataset: the gold episode is a tool call that prints the expression,
  then the boxed answer. `chain_sum` rather than `basic_arithmetic`, whose generator spends ~2 s on rare items
  (e.g. index 14736 at seed 42), which would swamp the tool's cost.
* `gem/game:Sokoban-v0-<level>`: GEM's Sokoban. It keeps no solution, so a breadth-first search finds the shortest
  one after each reset; GEM's generator makes about 1% of its easy rooms need more than their 20 turns.
Peers' gold actions are read or found outside the timer; only their own reset and step calls are timed.
Runs in its own venv (reasoning-gym and gem-llm stay out of the project's), started by env_throughput.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import deque

INSTALL = "python3 -m venv .venv-peers && .venv-peers/bin/pip install reasoning-gym==0.1.23 gem-llm==0.1.0"


class RGPeer:
    def __init__(self, dataset: str):
        import reasoning_gym

        self.data = reasoning_gym.create_dataset(dataset, size=10**9, seed=0)  # items are generated on demand

    def reset(self, seed: int):
        self.entry = self.data[seed]

    def gold(self) -> list[str]:
        return [self.entry["answer"]]

    def step(self, action: str) -> tuple[float, bool]:
        return self.data.score_answer(answer=action, entry=self.entry), True


class GEMPeer:
    def __init__(self, env_id: str):
        import gem

        kind, _, name = env_id.partition(":")
        if kind == "tool":
            from gem.tools.python_code_tool import PythonCodeTool
            from gem.tools.tool_env_wrapper import ToolEnvWrapper

            # GEM's interpreter is the first `python` on PATH: this venv's, as when it is activated.
            os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
            self.env = ToolEnvWrapper(gem.make(f"rg:{name}"), tools=[PythonCodeTool()])
        else:
            self.env = gem.make(env_id)
        self.kind = kind

    def reset(self, seed: int):
        self.env.reset(seed=seed)

    def gold(self) -> list[str]:
        env = self.env.unwrapped
        if self.kind == "game":
            moves = sokoban_solution(env.room_fixed, env.room_state, env.player_position)
            return [f"\\boxed{{{move}}}" for move in moves]
        answer = f"\\boxed{{{env.data['answer']}}}"
        if self.kind == "tool":
            return [f"<python>print({env.data['metadata']['expression']})</python>", answer]
        return [answer]

    def step(self, action: str) -> tuple[float, bool]:
        _, reward, terminated, _, _ = self.env.step(action)
        return float(reward), terminated


def sokoban_solution(room_fixed, room_state, player) -> list[str]:
    """Shortest move sequence that puts every box on a target (GEM's codes: 0 wall, 2 target, 3/4 box, 5 player)."""
    walls = {(int(r), int(c)) for r, c in zip(*(room_fixed == 0).nonzero())}
    targets = frozenset((int(r), int(c)) for r, c in zip(*(room_fixed == 2).nonzero()))
    boxes = frozenset((int(r), int(c)) for r, c in zip(*((room_state == 3) | (room_state == 4)).nonzero()))
    moves = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
    start = ((int(player[0]), int(player[1])), boxes)
    parent = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        (r, c), boxes = state
        if boxes <= targets:
            path = []
            while parent[state]:
                state, move = parent[state]
                path.append(move)
            return path[::-1]
        for move, (dr, dc) in moves.items():
            ahead = (r + dr, c + dc)
            if ahead in walls:
                continue
            pushed = boxes
            if ahead in boxes:
                beyond = (ahead[0] + dr, ahead[1] + dc)
                if beyond in walls or beyond in boxes:
                    continue
                pushed = boxes - {ahead} | {beyond}
            child = (ahead, pushed)
            if child not in parent:
                parent[child] = (state, move)
                queue.append(child)
    raise ValueError("unsolvable room")


def measure(peer, seconds: float) -> dict:
    """Resets/s of fresh items, and steps/s and episodes/s (reset + gold steps) over whole gold episodes."""
    peer.reset(0)  # one untimed episode: imports and shared data load outside the timer
    for action in peer.gold():
        if peer.step(action)[1]:
            break
    seed, elapsed = 1, 0.0
    while elapsed < seconds:
        start = time.perf_counter()
        peer.reset(seed)
        elapsed += time.perf_counter() - start
        seed += 1
    resets = (seed - 1) / elapsed
    steps = episodes = solved = 0
    step_time = episode_time = 0.0
    while episode_time < seconds:
        start = time.perf_counter()
        peer.reset(10**6 + episodes)  # items the reset loop did not see
        episode_time += time.perf_counter() - start
        reward = 0.0
        for action in peer.gold():
            start = time.perf_counter()
            reward, terminated = peer.step(action)
            took = time.perf_counter() - start
            step_time, episode_time, steps = step_time + took, episode_time + took, steps + 1
            if terminated:
                break
        episodes += 1
        solved += reward == 1.0
    return {"resets": resets, "steps": steps / step_time, "episodes": episodes / episode_time,
            "solved": solved / episodes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("peers", nargs="+", help="rg/<dataset> or gem/<env id>")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="peer_envs_") as scratch:
        os.chdir(scratch)  # GEM's code tool and reasoning-gym's codeio write scratch files in the working folder
        for name in args.peers:
            source, _, what = name.partition("/")
            try:
                peer = RGPeer(what) if source == "rg" else GEMPeer(what)
            except ImportError as missing:
                print(json.dumps({"peer": name, "error": f"{missing.name} is missing: {INSTALL}"}), flush=True)
                continue
            print(json.dumps({"peer": name, **measure(peer, args.seconds)}), flush=True)


if __name__ == "__main__":
    main()
