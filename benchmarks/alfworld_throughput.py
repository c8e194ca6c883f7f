"""ALFWorld throughput: magic/ALFWorld-v0 beside alfworld's own wrappers, on the same engine and the same games.

    python benchmarks/alfworld_throughput.py [--games 8] [--walk 30]

Generated tasks are written as official ALFWorld game folders in a temporary directory (json_2.1.1/train/...,
what alfworld-download leaves behind) and played by both sides from those files:
* alfworld: its `AlfredTWEnv` (admissible commands on: `init_env(batch_size=1)`, TextWorld's gym env with
  `AlfredDemangler` and `AlfredInfos`), or, with admissible commands off, the same wrappers registered the same
  way with `admissible_commands=False` (AlfredTWEnv always asks for them);
* ours: `gymnasium.make("magic/ALFWorld-v0", source="official", ...)`, each game pinned by its file.
Each game gets one command sequence, replayed on both sides: a seeded random walk over the admissible
commands (one in ten an inadmissible command) and then the planner's commands to the goal. Every observation
is checked to be identical on both sides (ours: plus the admissible list when shown). Steps are timed apart
from resets; a reset loads the game from its file (caches are cleared first: every game is new to both sides).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import tempfile
import time

import gymnasium

import magic_envs  # noqa: F401  (registers the ids)
from magic_envs.alfworld import assets, engine, official


def make_games(root: str, count: int, walk: int) -> dict[str, list[str]]:
    """Write `count` generated train games under `root`; return game file -> command sequence."""
    env = gymnasium.make("magic/ALFWorld-v0").unwrapped
    sequences, rng = {}, random.Random(0)
    for seed in range(count):
        _, info = env.reset(seed=seed)
        path = official.write_game(root, "train", env.task, env.engine.game, env.engine.plan(), info["task_id"])
        play = engine.Engine(env.engine.game)
        play.reset()
        commands = []
        for _ in range(walk):
            command = rng.choice(play.admissible()) if rng.random() > 0.1 else "dance with the fridge"
            commands.append(command)
            play.step(command)
            if play.won():
                break
        commands += play.plan()
        sequences[os.path.relpath(path, root)] = commands
    return sequences


def alfworld_env(root: str, files: list[str], admissible: bool):
    import textworld
    import textworld.gym
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos, AlfredTWEnv

    if admissible:  # alfworld's own setup, as its training scripts build it
        config = {"env": {"goal_desc_human_anns_prob": 0, "task_types": [1, 2, 3, 4, 5, 6],
                          "domain_randomization": False, "expert_type": "handcoded"},
                  "dataset": {"data_path": os.path.join(root, official.ROOT, "train"), "num_train_games": -1},
                  "general": {"training_method": "dqn"}, "rl": {"training": {"max_nb_steps_per_episode": 200}},
                  "logic": {"domain": assets.package_dir() / "data" / "alfred.pddl",
                            "grammar": assets.package_dir() / "data" / "alfred.twl2"}}
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):  # its banners
            return AlfredTWEnv(config, train_eval="train").init_env(batch_size=1)
    infos = textworld.EnvInfos(won=True, admissible_commands=False, extras=["gamefile"])
    env_id = textworld.gym.register_games([os.path.join(root, f) for f in files], infos, batch_size=1,
                                          asynchronous=False, max_episode_steps=200,
                                          wrappers=[AlfredDemangler(shuffle=False), AlfredInfos])
    return textworld.gym.make(env_id)


def run_alfworld(root: str, sequences: dict, admissible: bool) -> tuple[float, float, dict]:
    env = alfworld_env(root, sorted(sequences), admissible)
    resets = steps = 0.0
    transcript: dict[str, list[str]] = {}
    while len(transcript) < len(sequences):
        t = time.perf_counter()
        obs, infos = env.reset()  # the gym env cycles through its games in its own order
        elapsed = time.perf_counter() - t
        game = os.path.relpath(infos["extra.gamefile"][0], root)
        if game in transcript:
            continue
        resets += elapsed
        transcript[game] = []
        for command in sequences[game]:
            t = time.perf_counter()
            obs, _, dones, infos = env.step([command])
            steps += time.perf_counter() - t
            listed = "\n\nAdmissible commands:\n" + "\n".join(infos["admissible_commands"][0]) if admissible else ""
            transcript[game].append(obs[0] + listed)
        assert dones[0] and infos["won"][0], game
    return resets, steps, transcript


def run_ours(root: str, sequences: dict, admissible: bool) -> tuple[float, float, dict]:
    env = gymnasium.make("magic/ALFWorld-v0", source="official", data_dir=root, admissible_commands=admissible,
                         max_episode_steps=500)
    resets = steps = 0.0
    transcript: dict[str, list[str]] = {}
    for game in sorted(sequences):
        t = time.perf_counter()
        env.reset(options={"task": {"game_file": game}})
        resets += time.perf_counter() - t
        transcript[game] = []
        for command in sequences[game]:
            t = time.perf_counter()
            obs, _, terminated, _, info = env.step(command)
            steps += time.perf_counter() - t
            transcript[game].append(obs)
        assert terminated and info["success"], game
    return resets, steps, transcript


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=8, help="generated games (train split seeds 0..N-1)")
    parser.add_argument("--walk", type=int, default=30, help="random commands per game before the planner's")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core for both sides
    with tempfile.TemporaryDirectory() as root:
        os.environ["ALFWORLD_DATA"] = root  # importing alfworld creates this folder; keep it out of $HOME
        sequences = make_games(root, args.games, args.walk)
        total = sum(map(len, sequences.values()))
        print(f"{len(sequences)} games, {total} commands per run\n")
        print(f"{'admissible':<11}{'alfworld steps/s':>17}{'ours':>8}{'ratio':>7}{'alfworld resets/s':>19}{'ours':>7}"
              f"{'ratio':>7}{'alfworld end-to-end':>21}{'ours':>8}{'ratio':>7}  same text")
        for admissible in (True, False):
            engine.clear_caches()
            a_resets, a_steps, theirs = run_alfworld(root, sequences, admissible)
            engine.clear_caches()
            o_resets, o_steps, ours = run_ours(root, sequences, admissible)
            a, o = total / a_steps, total / o_steps
            ar, orr = len(sequences) / a_resets, len(sequences) / o_resets
            ae, oe = total / (a_steps + a_resets), total / (o_steps + o_resets)  # commands/s, resets included
            print(f"{'on' if admissible else 'off':<11}{a:>17.1f}{o:>8.1f}{o / a:>7.2f}{ar:>19.2f}{orr:>7.2f}"
                  f"{orr / ar:>7.2f}{ae:>21.1f}{oe:>8.1f}{oe / ae:>7.2f}  {theirs == ours}")


if __name__ == "__main__":
    main()
