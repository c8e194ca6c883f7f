"""magic/ALFWorld-v0: the rules of ALFWorld's engine, our engine against TextWorld's own, splits, official files.

One task per task type is drawn once (`tasks`) and shared; every other test builds what it needs from those,
so the file stays within a few tens of seconds (each new game costs the engine a translation).
"""

import concurrent.futures
import functools
import json
import pickle
import random
import sys

import gymnasium
import numpy as np
import pytest

import magic_envs  # noqa: F401  (registers the ids)
from magic_envs.alfworld import assets, generator, official, scenes
from magic_envs.alfworld.engine import Engine

pytestmark = pytest.mark.skipif(bool(assets.missing()), reason=assets.missing() or "alfworld present")
ENV_ID = "magic/ALFWorld-v0"
# The split each task type is drawn from, and what its plan must contain.
TYPES = {"pick_and_place_simple": ("train", {"move": 1}),
         "look_at_obj_in_light": ("train", {"use": 1}),
         "pick_clean_then_place_in_recep": ("train", {"clean": 1, "move": 1}),
         "pick_cool_then_place_in_recep": ("test", {"cool": 1, "move": 1}),
         "pick_heat_then_place_in_recep": ("ood_task_type", {"heat": 1, "move": 1}),
         "pick_two_obj_and_place": ("ood_task_type", {"move": 2})}


def make(**kwargs):
    return gymnasium.make(ENV_ID, disable_env_checker=True, **kwargs)  # check_env runs in test_registry.py


@functools.cache
def task_of(task_type: str) -> dict:
    env = make(split=TYPES[task_type][0], task_types=[task_type])
    env.reset(seed=1)
    return env.unwrapped.task


def pinned(task_type: str, **kwargs):
    env = make(**kwargs)
    observation, info = env.reset(options={"task": task_of(task_type)})
    return env, observation, info


def play(env, commands):
    return [env.step(command) for command in commands]


@pytest.mark.parametrize("task_type", TYPES)
def test_each_task_type_is_solved_by_the_planners_plan(task_type):
    env, observation, _ = pinned(task_type, admissible_commands=False)
    task = task_of(task_type)
    assert task["task_type"] == task_type and observation.endswith(f"Your task is to: {task['goal']}.")
    plan = env.unwrapped.engine.plan()
    verbs = [command.split()[0] for command in plan]
    assert {verb: verbs.count(verb) for verb in TYPES[task_type][1]} == TYPES[task_type][1]
    *steps, last = play(env, plan)
    assert all(not s[2] and s[4]["valid"] and s[1] == 0.0 for s in steps)
    assert last[1:3] == (1.0, True) and last[4]["success"]
    assert last[4]["metrics"] == {"moves": len(plan), "expert_steps": len(plan)}


# A near miss of each goal: the plan with one step left out ends unsolved, and the oracle finishes from there.
NEAR_MISSES = [("pick_clean_then_place_in_recep", "clean"), ("pick_cool_then_place_in_recep", "cool"),
               ("pick_heat_then_place_in_recep", "heat"), ("look_at_obj_in_light", "use"),
               ("pick_two_obj_and_place", "move")]


@pytest.mark.parametrize(("task_type", "skipped"), NEAR_MISSES)
def test_the_goal_is_met_only_when_every_condition_holds(task_type, skipped):
    env, _, _ = pinned(task_type, admissible_commands=False)
    plan = env.unwrapped.engine.plan()
    cut = max(i for i, command in enumerate(plan) if command.startswith(skipped))  # pick two: the second move
    for _, reward, terminated, _, info in play(env, plan[:cut] + plan[cut + 1:]):
        assert info["valid"] and not terminated and reward == 0.0
    assert not env.unwrapped.engine.won()
    for _ in range(20):  # the oracle replans from where the agent left its plan
        _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
        if terminated:
            break
    assert reward == 1.0 and info["success"]


def test_an_invalid_command_costs_a_step_and_changes_nothing():
    env, _, _ = pinned("pick_and_place_simple")
    engine = env.unwrapped.engine
    before = (engine.admissible(), engine.moves, env.unwrapped.oracle_action())
    for action in ("jump over the fridge", "go to the moon 1", "take " * 3):
        observation, reward, terminated, truncated, info = env.step(action)
        assert observation.startswith("Nothing happens.\n\nAdmissible commands:\n") and not info["valid"]
        assert "not a command the game can carry out" in info["error"] and (reward, terminated) == (0.0, False)
    for action in ('<tool_call>{"name": "look", "arguments": {}}</tool_call>', "<think>hm</think>", ""):
        observation, _, _, _, info = env.step(action)  # no tools here, and an empty action says nothing
        assert observation.startswith("Error:") and not info["valid"]
    assert env._elapsed_steps == 6  # each one used a turn of the TimeLimit
    assert (engine.admissible(), engine.moves, env.unwrapped.oracle_action()) == before
    first = before[2]
    assert env.step("  " + first.upper().replace(" ", "  ") + " ")[4]["valid"]  # case and spacing do not matter


def test_admissible_commands_are_exactly_what_the_game_accepts():
    env, observation, _ = pinned("look_at_obj_in_light")
    quiet, plain, _ = pinned("look_at_obj_in_light", admissible_commands=False)
    text, listed = observation.split("\n\nAdmissible commands:\n")
    assert text == plain and "Admissible commands" not in plain
    listed = listed.split("\n")
    assert listed == env.unwrapped.engine.admissible() and listed == sorted(set(listed)) and "look" in listed
    game = env.unwrapped.engine.game
    for command in listed:  # each listed command is carried out; nothing else is
        engine = Engine(game)
        engine.reset()
        assert engine.step(command)[1], command
    engine = Engine(game)
    engine.reset()
    assert engine.step(listed[0] + " now") == ("Nothing happens.", False)
    observation, *_ = env.step(listed[0])
    assert observation.split("\n\nAdmissible commands:\n")[1].split("\n") == env.unwrapped.engine.admissible()
    assert quiet.step(listed[0])[0] == observation.split("\n\nAdmissible commands:\n")[0]


def test_pickling_mid_episode_rebuilds_the_engine():
    env, _, _ = pinned("pick_two_obj_and_place")
    play(env, ["look", env.unwrapped.oracle_action(), "inventory", env.unwrapped.oracle_action(), "sing"])
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.engine._live is None  # only the game and the commands travel
    assert clone.unwrapped.engine.admissible() == env.unwrapped.engine.admissible()
    for _ in range(30):  # the copy's oracle and game go on exactly as the original's
        action = env.unwrapped.oracle_action()
        assert clone.unwrapped.oracle_action() == action and env.step(action) == (last := clone.step(action))
        if last[2]:
            break
    assert last[4]["success"]


def test_the_oracle_solves_from_any_reachable_state():
    env, _, _ = pinned("pick_clean_then_place_in_recep")
    rng = random.Random(0)
    for _ in range(12):  # wander: open things, carry things off
        env.step(rng.choice(env.unwrapped.engine.admissible()))
    steps = 0
    while True:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        steps += 1
        if terminated or truncated:
            break
    assert reward == 1.0 and steps <= 12


def test_random_commands_rarely_finish_a_task():
    wins = 0
    for seed in range(6):
        env = make(admissible_commands=False)
        env.reset(seed=100 + seed)
        for _ in range(50):
            _, reward, terminated, truncated, _ = env.step(env.unwrapped.random_action(env.unwrapped.np_random))
            if terminated or truncated:
                break
        wins += reward == 1.0
    assert wins <= 1


def test_our_engine_shows_what_alfworld_shows(monkeypatch, tmp_path):
    """TextWorld's PddlEnv with alfworld's AlfredDemangler, step by step on a random walk: same intro, same
    feedback, same admissible commands, same win."""
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))  # importing alfworld creates this folder
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
    from textworld.envs.pddl import PddlEnv

    for task_type, seed in (("pick_cool_then_place_in_recep", 0), ("look_at_obj_in_light", 1)):
        game = official.generated_game(task_of(task_type))
        path = tmp_path / f"{task_type}.tw-pddl"
        path.write_text(json.dumps(game))
        theirs = AlfredDemangler(PddlEnv(textworld.EnvInfos(admissible_commands=True)))
        theirs.load(str(path))
        state = theirs.reset()
        ours = Engine(game)
        assert ours.reset() == state.feedback

        def both(command):
            nonlocal state
            state, _, _ = theirs.step(command)
            feedback, valid = ours.step(command)
            assert feedback == state.feedback and valid == (feedback != "Nothing happens.")
            assert ours.admissible() == state["admissible_commands"] and ours.won() == state["won"]

        rng = random.Random(seed)
        for _ in range(15):  # wander, then finish the task
            both(rng.choice(state["admissible_commands"] + ["dance"]))
        for command in ours.plan():
            both(command)
        assert ours.won() and state["won"]


def test_official_game_files_are_served(monkeypatch, tmp_path):
    written = {}
    for split, task_type in (("train", "pick_and_place_simple"), ("test", "pick_cool_then_place_in_recep"),
                             ("ood", "look_at_obj_in_light")):
        task = task_of(task_type)
        game = official.generated_game(task)
        written[split] = official.write_game(tmp_path, split, task, game, ["look"], f"{split}_1")
    assert (tmp_path / "json_2.1.1" / "valid_unseen").is_dir() and written["test"].parent.parent.parent.name == "valid_seen"
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    for split, path in written.items():
        env = make(source="official", split=split)
        observation, info = env.reset(seed=3)
        relative = path.relative_to(tmp_path).as_posix()
        assert env.unwrapped.task == {"game_file": relative}
        generated = pinned(json.loads(path.parent.joinpath("traj_data.json").read_text())["task_type"])[1]
        assert observation == generated  # the same game, from its file
        other = make(split=split)  # a generated-source env plays a pinned official game too
        assert other.reset(options={"task": {"game_file": relative}})[0] == observation
        while True:
            _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
            if terminated:
                break
        assert reward == 1.0
    picky = make(source="official", split="test", task_types=["pick_two_obj_and_place"])
    with pytest.raises(ValueError, match="no .* games"):
        picky.reset(seed=0)
    broken = written["train"].parent.parent / "trial_broken" / "game.tw-pddl"
    broken.parent.mkdir()
    game = json.loads(written["train"].read_text())
    broken.write_text(json.dumps({**game, "pddl_problem": game["pddl_problem"][:-100]}))  # cut inside the goal
    for bad in ({"game_file": "../etc/passwd"}, {"game_file": "json_2.1.1/train/nothing/game.tw-pddl"},
                {"game_file": relative, "extra": 1}, {"game_file": broken.relative_to(tmp_path).as_posix()}):
        with pytest.raises(ValueError):
            env.reset(options={"task": bad})
    monkeypatch.delenv("ALFWORLD_DATA")
    with pytest.raises(ValueError, match="ALFWORLD_DATA"):
        make(source="official")
    with pytest.raises(ValueError, match="splits"):
        make(source="official", split="ood_task_type", data_dir=tmp_path)


def test_split_pools_are_disjoint():
    c = assets.constants()
    train_plans, ood_plans = set(c.TRAIN_SCENE_NUMBERS), set(c.TEST_SCENE_NUMBERS)
    for split in generator.SPLITS:
        rng = np.random.default_rng(7)
        for _ in range(150):
            task = generator.draw(rng, split, generator.split_types(split))
            kinds = {scenes.receptacle_type(oid) for oid, _ in task["objects"]}
            types = generator.HELD_OUT_TYPES if split == "ood_task_type" else generator.TRAIN_TYPES
            assert task["task_type"] in types
            if split == "ood":  # unseen rooms, and a target of a type no train room holds
                assert task["floor_plan"] in ood_plans and task["object"] in generator.OOD_OBJECTS
            else:
                assert task["floor_plan"] in train_plans and not kinds & generator.OOD_OBJECTS
            holders = {scenes.receptacle_type(r) for oid, r in task["objects"] if oid.startswith(task["object"] + "|")}
            assert task["receptacle"] not in holders  # never solved at the start
    assert not set(generator.HELD_OUT_TYPES) & set(generator.TRAIN_TYPES)
    assert set(generator.HELD_OUT_TYPES) | set(generator.TRAIN_TYPES) == set(generator.TASK_TYPES)


def test_generation_and_plans_are_deterministic():
    first = generator.draw(np.random.default_rng(11), "train", generator.TRAIN_TYPES)
    assert generator.draw(np.random.default_rng(11), "train", generator.TRAIN_TYPES) == first
    game = official.generated_game(task_of("pick_heat_then_place_in_recep"))
    engines = [Engine(game) for _ in range(2)]
    for engine in engines:
        engine.reset()
        engine.step("look")
    assert engines[0].plan() == engines[1].plan()


BAD_TASKS = [{"floor_plan": 31}, {"floor_plan": "1"}, {"task_type": "slice_it"}, {"goal": 'put "x"'},
             {"goal": "#intro#"}, {"object": "Dragon"}, {"receptacle": "Moon"}, {"toggle": "DeskLamp"},
             {"start": [0, 0, 0]}, {"objects": []}, {"objects": [["Apple|+01.00|+00.90|-01.00", "Nowhere|1|2|3"]]},
             {"objects": [["Apple) (holds agent1|+01.00|+00.90|-01.00", "x"]]}, {"extra": True}]


@pytest.mark.parametrize("change", BAD_TASKS)
def test_malformed_pinned_tasks_are_refused(change):
    env = make()
    with pytest.raises(ValueError):
        env.reset(options={"task": {**task_of("pick_and_place_simple"), **change}})


@pytest.mark.parametrize(("kwargs", "error"), [({"source": "web"}, ValueError), ({"split": "valid"}, ValueError),
                                               ({"task_types": ["pick_two_obj_and_place"]}, ValueError),
                                               ({"task_types": []}, ValueError),
                                               ({"admissible_commands": "yes"}, TypeError)])
def test_bad_arguments_are_refused(kwargs, error):
    with pytest.raises(error):
        make(**kwargs)


def test_engines_run_in_a_thread_pool():
    """What an event-loop caller does (DESIGN.md 7): resets in worker threads, each with its own library."""
    argv, stdout = list(sys.argv), sys.stdout
    tasks = [task_of(t) for t in ("pick_and_place_simple", "pick_two_obj_and_place")]

    def episode(task):
        env = make(admissible_commands=False)
        env.reset(options={"task": task})
        for command in env.unwrapped.engine.plan():
            *_, info = env.step(command)
        return info["success"]

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        assert list(pool.map(episode, tasks)) == [True, True]
    assert sys.argv == argv and sys.stdout is stdout  # the translator's global swaps do not leak
