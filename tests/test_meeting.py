"""magic/Meeting-v0: NATURAL PLAN's meeting-planning scorer semantics, generator, oracle and prompt reader."""

from __future__ import annotations

import json
import re

import gymnasium
import numpy as np
import pytest

import magic_envs  # noqa: F401
from magic_envs.scheduling.common import PEOPLE, TOWNS
from magic_envs.scheduling.meeting import FORMAT, HEADER, MeetingEnv, best_order
from magic_envs.scheduling.meeting_official import official_score, parse_clock, parse_text_plan
from magic_envs.scheduling.meeting_reader import solve_from_prompt

ID = "magic/Meeting-v0"
SEEDS = range(50)

# A hand-written task in the style of NATURAL PLAN's Financial District example (notes §4c).
DIST = {"Marina": {"Chinatown": 5, "Sunset": 23}, "Chinatown": {"Marina": 5, "Sunset": 23},
        "Sunset": {"Marina": 26, "Chinatown": 23}}
CONSTRAINTS = [["Marina", "9:00AM"], ["Kenneth", "Chinatown", "12:00PM to 3:00PM", 90],
               ["Barbara", "Sunset", "8:15AM to 7:00PM", 45]]
PROMPT = (HEADER.format(town="San Francisco") + "\n\nTravel distances (in minutes):\n"
          + "\n".join(f"{a} to {b}: {n}." for a, row in DIST.items() for b, n in row.items())
          + "\n\nCONSTRAINTS: You arrive at Marina at 9:00AM. Kenneth will be at Chinatown from 12:00PM to 3:00PM. "
          "You'd like to meet Kenneth for a minimum of 90 minutes. Barbara will be at Sunset from 8:15AM to 7:00PM. "
          "You'd like to meet Barbara for a minimum of 45 minutes.\n\n" + FORMAT)
HAND = {"town": "San Francisco", "num_people": 2, "constraints": CONSTRAINTS, "dist_matrix": DIST, "prompt": PROMPT}

START = "You start at Marina at 9:00AM."
TO_CHINA = "You travel to Chinatown in 5 minutes and arrive at 9:05AM."
WAIT_NOON = "You wait until 12:00PM."
KENNETH = "You meet Kenneth for 90 minutes from 12:00PM to 1:30PM."
TO_SUNSET = "You travel to Sunset in 23 minutes and arrive at 1:53PM."
BARBARA = "You meet Barbara for 45 minutes from 1:53PM to 2:38PM."
GOLD = " ".join([START, TO_CHINA, WAIT_NOON, KENNETH, TO_SUNSET, BARBARA])
# Barbara first, as Gemini answered the real example.
ALT = ("You start at Marina at 9:00AM. You travel to Sunset in 23 minutes and arrive at 9:23AM. You meet Barbara "
       "for 45 minutes from 9:23AM to 10:08AM. You travel to Chinatown in 23 minutes and arrive at 10:31AM. You "
       "wait until 12:00PM. You meet Kenneth for 90 minutes from 12:00PM to 1:30PM.")

# (why, response, friends met by the official simulation, stated_errors: only accepted steps are checked)
TABLE = [
    ("gold plan, no space after the prefix", "SOLUTION:" + GOLD, 2, 0),
    ("other optimal order", "SOLUTION: " + ALT + " \n", 2, 0),
    ("prose before SOLUTION is cut off", "Let me think about several schedules.\n\nSOLUTION: " + GOLD, 2, 0),
    ("prose after the plan costs nothing", "SOLUTION: " + GOLD + " This meets everyone. Enjoy", 2, 0),
    ("no SOLUTION: the preamble is an unknown step", "Here is my plan. " + GOLD, 0, 0),
    ("newline-separated sentences", "SOLUTION:\n" + GOLD.replace(". ", ".\n"), 2, 0),
    ("markdown list items are unknown steps", "SOLUTION:\n- " + GOLD.replace(". ", ".\n- "), 0, 0),
    ("start sentence is never read", "SOLUTION: You start at Sunset at 9:00 AM. " + GOLD[len(START) + 1:], 2, 1),
    ("'12:00 PM' with a space: the wait is invalid", "SOLUTION: " + GOLD.replace("until 12:00PM", "until 12:00 PM"),
     0, 0),
    ("24-hour wait is invalid", "SOLUTION: " + GOLD.replace("until 12:00PM", "until 12:00"), 0, 0),
    ("lower-case pm is accepted (strptime)", "SOLUTION: " + GOLD.replace("until 12:00PM", "until 12:00pm"), 2, 0),
    ("wait not later than now", "SOLUTION: " + " ".join([START, TO_CHINA, "You wait until 9:05AM.", KENNETH]), 0, 0),
    ("travel to the current place", "SOLUTION: You travel to Marina in 0 minutes and arrive at 9:00AM. " + GOLD,
     0, 0),
    ("unknown place", "SOLUTION: You travel to Nowhere in 5 minutes and arrive at 9:05AM. " + BARBARA, 0, 0),
    ("meet before the window opens", "SOLUTION: " + " ".join([START, TO_CHINA, KENNETH]), 0, 0),
    ("meet past the window's end", "SOLUTION: " + ALT.replace("until 12:00PM", "until 1:45PM"), 1, 0),
    ("meet at the wrong place", "SOLUTION: " + " ".join([START, TO_CHINA, "You meet Barbara for 45 minutes."]), 0, 0),
    ("meeting someone twice stops the plan", "SOLUTION: " + " ".join(
        [START, TO_CHINA, WAIT_NOON, KENNETH, KENNETH, TO_SUNSET, BARBARA]), 1, 0),
    ("unknown person", "SOLUTION: " + " ".join([START, TO_CHINA, WAIT_NOON, "You meet Bob for 90 minutes", KENNETH]),
     0, 0),
    ("non-ASCII name", "SOLUTION: " + GOLD.replace("meet Kenneth", "meet Kénneth"), 0, 0),
    ("lower-case sentence is an unknown step", "SOLUTION: " + GOLD.replace("You travel", "you travel"), 0, 0),
    ("stated numbers are ignored by the official scorer", "SOLUTION: " + GOLD.replace("in 5 minutes", "in 9 minutes")
     .replace("for 90 minutes", "for 60 minutes"), 2, 2),
    ("the first of several candidate plans counts",
     "SOLUTION: " + " ".join([START, TO_CHINA, WAIT_NOON, KENNETH]) + "\n\nSOLUTION: " + ALT, 1, 0),
    ("a later better plan cannot rescue it", "SOLUTION: " + GOLD + "\nSOLUTION: " + ALT, 2, 0),
    ("detours are allowed", "SOLUTION: " + " ".join(
        [START, "You travel to Sunset in 23 minutes and arrive at 9:23AM.",
         "You travel to Chinatown in 23 minutes and arrive at 9:46AM.", WAIT_NOON, KENNETH, TO_SUNSET, BARBARA]), 2, 0),
    ("bare prefix", "SOLUTION:", 0, 0),
    ("unicode junk", "SOLUTION: 你好。 ✓ " * 50, 0, 0),
]


@pytest.fixture
def hand_env():
    env = gymnasium.make(ID)
    env.reset(options={"task": HAND})
    return env


@pytest.mark.parametrize("why,response,met,errors", TABLE, ids=[row[0] for row in TABLE])
def test_scorer_table(why, response, met, errors, hand_env):
    _, reward, terminated, _, info = hand_env.step(response)
    assert terminated and info["valid"]
    assert info["metrics"]["friends_met"] == met, why
    assert info["metrics"]["gold_friends"] == 2
    assert info["metrics"]["stated_errors"] == errors, why
    assert reward == float(met == 2) == info["score"]
    assert info["metrics"]["constraint_score"] == pytest.approx(met / 2 * (0.5 if errors else 1.0))


def test_hand_task_gold_and_reader(hand_env):
    assert hand_env.unwrapped._gold == 2
    assert official_score(solve_from_prompt(PROMPT), {**HAND, "gold_count": 2})["correct"]
    _, reward, *_ = hand_env.step(hand_env.unwrapped.oracle_action())
    assert reward == 1.0


def test_think_block_is_not_the_answer(hand_env):
    _, reward, _, _, info = hand_env.step("<think>SOLUTION: " + GOLD + "</think>SOLUTION: " + START)
    assert reward == 0.0 and info["metrics"]["friends_met"] == 0


@pytest.mark.parametrize("action", ["", "   ", "<think>only thoughts</think>"])
def test_empty_answer_is_invalid_not_terminal(action, hand_env):
    _, reward, terminated, _, info = hand_env.step(action)
    assert reward == 0.0 and not terminated and not info["valid"]


def test_huge_and_garbage_answers(hand_env):
    for junk in ["x" * (1 << 20), "SOLUTION: " + "You meet " * 100000, "." * (1 << 20), "SOLUTION: You travel",
                 "SOLUTION: You wait until 99:99PM. You wait", "SOLUTION: You meet Kenneth for " + "9" * 5000,
                 "SOLUTION: You start at Marina at 9:00AM. You travel to Chinatown in " + "9" * 5000 + " minutes"]:
        env = gymnasium.make(ID)
        env.reset(options={"task": HAND})
        _, reward, terminated, _, info = env.step(junk)
        assert reward == 0.0 and terminated


def test_metric_format_ok(hand_env):
    _, _, _, _, info = hand_env.step("Here is my plan. " + GOLD)
    assert info["metrics"]["format_ok"] == 0.0
    env = gymnasium.make(ID)
    env.reset(options={"task": HAND})
    assert env.step("SOLUTION: " + START)[4]["metrics"]["format_ok"] == 1.0


def test_official_record_example_389():
    """Notes §4d: Gemini's plan fails Thomas's window at 6:56PM and scores 2 against the gold's 3."""
    record = {
        "constraints": [["Haight-Ashbury", "9:00AM"], ["Sarah", "Fisherman's Wharf", "2:45PM to 5:30PM", 105],
                        ["Mary", "Richmond District", "1:00PM to 7:15PM", 75],
                        ["Helen", "Mission District", "9:45PM to 10:30PM", 30],
                        ["Thomas", "Bayview", "3:15PM to 6:45PM", 120]],
        # only the legs the two plans use (the official matrix is larger)
        "dist_matrix": {"Haight-Ashbury": {"Fisherman's Wharf": 23, "Richmond District": 10},
                        "Fisherman's Wharf": {"Richmond District": 18, "Bayview": 26},
                        "Richmond District": {"Mission District": 20, "Fisherman's Wharf": 18},
                        "Bayview": {"Mission District": 13}},
        "golden_plan": ["You start at Haight-Ashbury at 9:00AM.",
                        "You travel to Fisherman's Wharf in 23 minutes and arrive at 9:23AM.", "You wait until 2:45PM.",
                        "You meet Sarah for 105 minutes from 2:45PM to 4:30PM.",
                        "You travel to Richmond District in 18 minutes and arrive at 4:48PM.",
                        "You meet Mary for 75 minutes from 4:48PM to 6:03PM.",
                        "You travel to Mission District in 20 minutes and arrive at 6:23PM.", "You wait until 9:45PM.",
                        "You meet Helen for 30 minutes from 9:45PM to 10:15PM."],
    }
    pred = ("SOLUTION: You start at Haight-Ashbury at 9:00AM. You travel to Richmond District in 10 minutes and "
            "arrive at 9:10AM. You wait until 1:00PM. You meet Mary for 75 minutes from 1:00PM to 2:15PM. You travel "
            "to Fisherman's Wharf in 18 minutes and arrive at 2:33PM. You wait until 2:45PM. You meet Sarah for 105 "
            "minutes from 2:45PM to 4:30PM. You travel to Bayview in 26 minutes and arrive at 4:56PM. You meet Thomas "
            "for 120 minutes from 4:56PM to 6:56PM. You travel to Mission District in 13 minutes and arrive at "
            "7:09PM. You wait until 9:45PM. You meet Helen for 30 minutes from 9:45PM to 10:15PM. \n")
    verdict = official_score(pred, record)
    assert (verdict["count"], verdict["gold"], verdict["correct"]) == (2, 3, False)
    assert official_score("SOLUTION:" + " ".join(record["golden_plan"]), record)["correct"]


def test_official_record_pins_with_prompt_0shot():
    """An official record (golden_plan list, prompt_0shot, no gold_count) pins; its gold is its plan's score."""
    record = {"num_people": 2, "constraints": CONSTRAINTS, "dist_matrix": DIST, "prompt_0shot": PROMPT,
              "golden_plan": [s + "." for s in GOLD.split(". ")][:-1] + [BARBARA]}
    env = gymnasium.make(ID)
    obs, _ = env.reset(options={"task": record})
    assert obs == PROMPT and env.unwrapped._gold == 2
    assert env.step("SOLUTION:" + ALT)[1] == 1.0


def test_parse_helpers():
    assert parse_text_plan("junk SOLUTION: A. B.. SOLUTION: C.") == ["A", "B", "SOLUTION: C"]
    assert [parse_clock(s) for s in ("9:00AM", "09:05am", "12:00AM", "12:30PM", "1:5PM", "9:00 AM", "13:00PM",
                                     "0:30AM", "9:00")] == [540, 545, 0, 750, 785, None, None, None, None]


# ---- generated tasks ------------------------------------------------------------------------------------


@pytest.mark.parametrize("split", ["train", "test", "ood"])
def test_oracle_and_reader_solve_every_seed(split):
    env = gymnasium.make(ID, split=split)
    town, hoods = TOWNS["iid" if split != "ood" else "ood"]
    names = set(PEOPLE["iid" if split != "ood" else "ood"])
    lo, hi = (2, 6) if split != "ood" else (6, 8)
    for seed in SEEDS:
        obs, _ = env.reset(seed=seed)
        task = env.unwrapped.task
        assert task["town"] == town and lo <= task["num_people"] <= hi and task["gold_count"] >= 1
        assert {c[0] for c in task["constraints"][1:]} <= names
        places = [task["constraints"][0][0]] + [c[1] for c in task["constraints"][1:]]
        assert len(set(places)) == len(places) and set(places) <= set(hoods)
        dist = task["dist_matrix"]
        for a in places:  # already shortest: detours never beat a direct leg
            for b in places:
                for c in places:
                    if len({a, b, c}) == 3:
                        assert dist[a][c] <= dist[a][b] + dist[b][c]
        for _, _, window, need in task["constraints"][1:]:
            opens, closes = (parse_clock(x.strip()) for x in window.split(" to "))
            assert 420 <= opens < closes <= 1350 and opens % 15 == closes % 15 == 0 and need in range(15, 121, 15)
        _, reward, _, _, info = env.step(env.unwrapped.oracle_action())
        assert reward == 1.0 and info["metrics"]["stated_errors"] == 0 and info["metrics"]["constraint_score"] == 1
        verdict = official_score(solve_from_prompt(obs), task)
        assert verdict["correct"], (split, seed)


def test_gold_is_maximal_by_brute_force():
    from itertools import permutations

    env = gymnasium.make(ID, friends=[1, 5], tightness=0.8)
    for seed in range(30):
        env.reset(seed=seed)
        task = env.unwrapped.task
        start, dist = task["constraints"][0][0], task["dist_matrix"]
        people = [(c[1], *(parse_clock(x.strip()) for x in c[2].split(" to ")), c[3]) for c in task["constraints"][1:]]
        best = 0
        for order in permutations(people):
            here, now, met = start, 540, 0
            for loc, opens, closes, need in order:
                now = max(now + dist[here][loc], opens) + need
                if now > closes:
                    break
                here, met = loc, met + 1
            best = max(best, met)
        assert best == task["gold_count"]


@pytest.mark.parametrize("split", ["train", "ood"])
def test_perturbed_oracle_scores_zero(split):
    env = gymnasium.make(ID, split=split)
    checked = 0
    for seed in SEEDS:
        env.reset(seed=seed)
        plan = env.unwrapped.oracle_action()
        sentences = re.split(r"(?<=\.) ", plan[len("SOLUTION: "):])
        meets = [i for i, s in enumerate(sentences) if s.startswith("You meet")]
        variants = [sentences[:i] + sentences[i + 1:] for i in meets]  # one meeting dropped
        waits = [i for i, s in enumerate(sentences) if s.startswith("You wait")]
        variants += [sentences[:i] + sentences[i + 1:] for i in waits]  # meet before the window opens
        variants += [[s.replace("AM.", " AM.").replace("PM.", " PM.") if s.startswith("You wait") else s
                      for s in sentences]] if waits else []
        first_travel = next(i for i, s in enumerate(sentences) if s.startswith("You travel"))
        variants.append(sentences[:first_travel] + ["You travel to Atlantis in 5 minutes."] + sentences[first_travel:])
        for variant in variants:
            env.reset(seed=seed)
            assert env.step("SOLUTION: " + " ".join(variant))[1] == 0.0, (seed, variant)
            checked += 1
    assert checked > 100


def test_random_and_constant_baselines_score_near_zero():
    env = gymnasium.make(ID)
    rng = np.random.default_rng(0)
    rewards, constant = [], []
    for seed in range(100):
        obs, _ = env.reset(seed=seed)
        action = env.unwrapped.random_action(rng)
        assert action.startswith("SOLUTION: You start at ")
        rewards.append(env.step(action)[1])
        for const in ["SOLUTION:", "SOLUTION: You start at X at 9:00AM.", obs, "I cannot meet anyone."]:
            env.reset(seed=seed)
            constant.append(env.step(const)[1])
    assert np.mean(rewards) < 0.1 and max(constant) == 0.0


def test_tightness_controls_how_many_fit():
    def all_met(tightness):
        env = gymnasium.make(ID, friends=[3, 5], tightness=tightness)
        out = []
        for seed in range(40):
            env.reset(seed=seed)
            out.append(env.unwrapped.task["gold_count"] == env.unwrapped.task["num_people"])
        return np.mean(out)

    assert all_met(1.0) == 0.0 and all_met(0.5) < 0.5 < all_met(0.0)


@pytest.mark.parametrize("kwargs", [{"friends": 0}, {"friends": 11}, {"friends": [5, 3]}, {"friends": "3"},
                                    {"friends": [2, 3, 4]}, {"tightness": -0.1}, {"tightness": 1.5},
                                    {"tightness": True}, {"tightness": "0.5"}, {"split": "validation"}])
def test_knob_validation(kwargs):
    with pytest.raises(ValueError):
        MeetingEnv(**kwargs)


def test_knobs_honoured():
    env = gymnasium.make(ID, friends=10, tightness=0.0)
    env.reset(seed=3)
    assert env.unwrapped.task["num_people"] == 10
    assert env.step(env.unwrapped.oracle_action())[1] == 1.0


def test_pinned_round_trip():
    env = gymnasium.make(ID, split="ood")
    obs, info = env.reset(seed=7)
    saved = json.loads(json.dumps(env.unwrapped.task))
    other = gymnasium.make(ID)
    obs2, info2 = other.reset(options={"task": saved})
    assert obs2 == obs and info2["task_id"] == info["task_id"]
    assert other.step(env.unwrapped.oracle_action())[1] == 1.0


def _broken(**change):
    task = json.loads(json.dumps(HAND))
    for key, value in change.items():
        if value is None:
            del task[key]
        else:
            task[key] = value
    return task


@pytest.mark.parametrize("task", [
    _broken(constraints=None), _broken(dist_matrix=None), _broken(prompt=None),
    _broken(constraints=[["Marina", "9:00AM"]]),
    _broken(constraints=[["Marina", "9 AM"], *CONSTRAINTS[1:]]),
    _broken(constraints=[CONSTRAINTS[0], ["Kenneth", "Chinatown", "noon to 3:00PM", 90], CONSTRAINTS[2]]),
    _broken(constraints=[CONSTRAINTS[0], ["Kenneth", "Chinatown", "12:00PM to 3:00PM", "90"], CONSTRAINTS[2]]),
    _broken(constraints=[*CONSTRAINTS, CONSTRAINTS[1]]),
    _broken(dist_matrix={"Marina": {"Chinatown": 5}}),
    _broken(dist_matrix={**DIST, "Sunset": {"Marina": -1, "Chinatown": 23}}),
    _broken(gold_count=1),
    _broken(golden_plan="SOLUTION: nothing"),
])
def test_bad_pinned_task(task):
    with pytest.raises(ValueError):
        gymnasium.make(ID).reset(options={"task": task})


def test_best_order_reports_a_feasible_order():
    friends = [(1, 600, 700, 60), (2, 600, 700, 60)]  # two friends in the same hour: only one fits
    assert len(best_order([[0, 10, 10], [10, 0, 10], [10, 10, 0]], 540, friends)) == 1
