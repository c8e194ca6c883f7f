"""magic/Trip-v0: official scoring semantics, generator uniqueness, oracle, prompt-only reader, baselines."""

import json
import random
import re
import time
import warnings

import gymnasium
import numpy as np
import pytest

from magic_envs.scheduling.common import CITIES
from magic_envs.scheduling.trip import TripEnv, check_plan, solve
from magic_envs.scheduling.trip_official import (first_range_end, last_flight, official_score, parse_response,
                                                  plan_text)
from magic_envs.scheduling.trip_reader import read_prompt, solutions, solve_from_prompt

ID = "magic/Trip-v0"

# NATURAL PLAN trip_planning_example_92 and _1088 (prompt_0shot, golden_plan, pred_5shot_pro), as published.
EX92 = {
    "region": "European", "total_days": 12, "stays": [["Riga", 5], ["Vilnius", 7], ["Dublin", 2]], "events": [],
    "flights": [["Dublin", "Riga", False], ["Riga", "Vilnius", True]],
    "cities": ["Dublin", "Riga", "Vilnius"], "durations": [2, 5, 7],
    "prompt": "You plan to visit 3 European cities for 12 days in total. You only take direct flights to commute "
              "between cities. You plan to stay in Riga for 5 days. You plan to stay in Vilnius for 7 days. You "
              "would like to visit Dublin for 2 days.\n\nHere are the cities that have direct flights:\nDublin and "
              "Riga, from Riga to Vilnius.\n\nFind a trip plan of visiting the cities for 12 days by taking direct "
              "flights to commute between them.",
    "golden_plan": "Here is the trip plan for visiting the 3 European cities for 12 days:\n\n**Day 1-2:** Arriving "
                   "in Dublin and visit Dublin for 2 days.\n**Day 2:** Fly from Dublin to Riga.\n**Day 2-6:** Visit "
                   "Riga for 5 days.\n**Day 6:** Fly from Riga to Vilnius.\n**Day 6-12:** Visit Vilnius for 7 days.",
}
EX1088_PROMPT = (
    "You plan to visit 8 European cities for 21 days in total. You only take direct flights to commute between "
    "cities. You plan to stay in Oslo for 5 days. You want to spend 5 days in Stuttgart. You plan to stay in "
    "Reykjavik for 2 days. During day 1 and day 2, you have to attend a conference in Reykjavik. You plan to stay "
    "in Split for 3 days. You plan to stay in Geneva for 2 days. You plan to stay in Porto for 3 days. You have to "
    "attend a workshop in Porto between day 19 and day 21. You want to spend 5 days in Tallinn. You plan to stay "
    "in Stockholm for 3 days. You want to meet a friend in Stockholm between day 2 and day 4.\n\nHere are the "
    "cities that have direct flights:\nfrom Reykjavik to Stuttgart, Stockholm and Tallinn, Stockholm and Oslo, "
    "Stuttgart and Porto, Oslo and Split, Stockholm and Stuttgart, Reykjavik and Oslo, Oslo and Geneva, Stockholm "
    "and Split, Reykjavik and Stockholm, Split and Stuttgart, Tallinn and Oslo, Stockholm and Geneva, Oslo and "
    "Porto, Geneva and Porto, Geneva and Split.\n\nFind a trip plan of visiting the cities for 21 days by taking "
    "direct flights to commute between them.")
EX1088_GOLD = ["Reykjavik", "Stockholm", "Tallinn", "Oslo", "Geneva", "Split", "Stuttgart", "Porto"]
EX1088_PRED = (
    "Here is the trip plan for visiting the 8 European cities for 21 days:\n\n**Day 1-2:** Arriving in Reykjavik "
    "and visit Reykjavik for 2 days.\n**Day 2:** Fly from Reykjavik to Stockholm.\n**Day 2-4:** Visit Stockholm for "
    "3 days.\n**Day 4:** Fly from Stockholm to Oslo.\n**Day 4-8:** Visit Oslo for 5 days.\n**Day 8:** Fly from Oslo "
    "to Split.\n**Day 8-10:** Visit Split for 3 days.\n**Day 10:** Fly from Split to Stuttgart.\n**Day 10-14:** "
    "Visit Stuttgart for 5 days.\n**Day 14:** Fly from Stuttgart to Geneva.\n**Day 14-15:** Visit Geneva for 2 "
    "days.\n**Day 15:** Fly from Geneva to Tallinn.\n**Day 15-19:** Visit Tallinn for 5 days.\n**Day 19:** Fly from "
    "Tallinn to Oslo.\n**Day 19:** Fly from Oslo to Porto.\n**Day 19-21:** Visit Porto for 3 days. \n")


def play(task, answer):
    env = TripEnv()
    env.reset(options={"task": task})
    _, reward, terminated, _, info = env.step(answer)
    return reward, info


def score(answer, task=EX92):
    return play(task, answer)[0]


# ---- the official semantics, on published examples and on answers models write ------------------------------
def test_official_examples():
    assert official_score(EX92["golden_plan"], EX92).plan == [("Dublin", 2), ("Riga", 5), ("Vilnius", 7)]
    assert score(EX92["golden_plan"]) == 1.0
    rules = read_prompt(EX1088_PROMPT)
    assert [list(s) for s in solutions(rules)] == [EX1088_GOLD]
    task = {"region": "European", "total_days": 21, "prompt": EX1088_PROMPT,
            "stays": [[c, n] for c, n in rules["stays"].items()],
            "events": [[c, a, b] for c, (a, b) in rules["events"].items()],
            "flights": [[a, b, (b, a) not in rules["edges"]] for a, b in sorted(rules["edges"])
                        if (b, a) not in rules["edges"] or a < b]}
    env = TripEnv()
    assert env.reset(options={"task": task})[0] == EX1088_PROMPT
    assert env.task["cities"] == EX1088_GOLD and env.task["durations"] == [2, 3, 5, 5, 2, 3, 5, 3]
    reward, info = play(env.task, EX1088_PRED)  # Gemini's answer: Oslo twice, via two 'Day 19' flights
    assert reward == 0.0 and info["metrics"]["stays_matched"] == 2 / 8 and info["metrics"]["violations"] > 0
    assert score(solve_from_prompt(EX1088_PROMPT), env.task) == 1.0


G = EX92["golden_plan"]
PLAIN = G.replace("**", "")
LEGS = ["**Day 2:** Fly from Dublin to Riga.", "**Day 6:** Fly from Riga to Vilnius."]
WRONG = G.replace("Day 2-6", "Day 2-5").replace("Day 6:", "Day 5:").replace("Day 6-12", "Day 5-12")


@pytest.mark.parametrize("answer, expected", [
    (G, 1.0),
    (PLAIN, 1.0),  # "Day 1-2:" without markdown bold
    ("Sure! Let me work it out.\n\n" + G + "\n\nEnjoy your trip! Note: from day 6 on you are in Vilnius.", 1.0),
    ("<think>Maybe Vilnius first?\n" + WRONG + "</think>\n" + G, 1.0),  # thoughts are never scored
    (G + "\n\nAlternatively:\n" + WRONG, 1.0),  # the range ending on day 12 stops the parse: the first plan counts
    (WRONG + "\n\nAlternatively:\n" + G, 0.0),
    (G.split("\n", 2)[2] + "\n\n" + G.split("\n", 2)[2], 0.0),  # no header, no stop: the second plan is read too
    (G.replace("from Dublin to Riga", "from dublin to riga").replace("Riga to Vilnius", "riga to vilnius"), 0.0),
    (G.replace("Fly from Dublin", "Take a flight from Dublin").replace("Fly from Riga", "Take a flight from Riga"),
     1.0),
    ("Day 1-2: Dublin\nDay 2: travelling from Dublin to Riga\nDay 2-6: Riga\nDay 6: from Riga to Vilnius\n"
     "Day 6-12: Vilnius", 1.0),
    (G.replace(LEGS[0] + "\n", "").replace(LEGS[1] + "\n", ""), 0.0),  # no flight lines: nothing parsed
    (G.replace(LEGS[1] + "\n", ""), 0.0),  # one flight missing
    (G.split("\n", 2)[2] + "\n**Day 12:** Fly from Vilnius to Paris.\n**Day 12-12:** Visit Paris.", 1.0),  # extra city
    (G.replace("Fly from Dublin to Riga.", "Fly from Dublin to Riga on Day 2."), 1.0),
    (G.replace("**Day 2:** Fly from Dublin to Riga.", "Fly from Dublin to Riga on Day 2."), 0.0),  # Day after from
    (G.replace("Day 2-6", "Day 2 - 6").replace("Day 6-12", "Day 6 – 12"), 0.0),  # last range unread: stays off
    (G.replace("Day 1-2", "Day 1–2").replace("Day 2-6", "Day 2–6").replace("Day 6-12", "Day 6–12"), 0.0),
    (G.replace("Riga", "Rīga"), 0.0),
    ("旅行计划 🌍\n" + G + "\n¡Buen viaje!", 1.0),
    (G.replace("12 days:", "13 days:"), 1.0),  # a wrong header total only disables the stop
    (json.dumps({"plan": [["Dublin", 2], ["Riga", 5], ["Vilnius", 7]]}), 0.0),
    ("Dublin, Riga, Vilnius", 0.0),
    ("x" * 1_000_000, 0.0),
    (("Day 1-" + "9" * 5000 + " from a to b ") * 100, 0.0),
])
def test_model_answers(answer, expected):
    reward, info = play(EX92, answer)
    assert reward == expected and info["success"] == (expected == 1.0)
    assert set(info["metrics"]) == set(TripEnv.metric_names)


def test_junk_never_raises_and_huge_lines_are_fast():
    env = TripEnv()
    env.reset(seed=1)
    start = time.perf_counter()
    for junk in ["", " ", "\n" * 10_000, "Day " * 300_000, "from " * 300_000 + "to x", "1" * 1_000_000,
                 "Day 1" + "-1" * 300_000, "é" * 500_000, None, 42, "\x00\ud800"]:
        _, reward, _, _, info = env.step(junk)
        assert reward == 0.0 and not info["success"]
        env.reset(seed=1)
    assert time.perf_counter() - start < 5


def test_metrics_of_a_wrong_but_legal_plan():
    _, info = play(EX92, G)
    assert info["metrics"] == {"format_ok": 1.0, "stays_matched": 1.0, "violations": 0.0, "constraint_score": 1.0}
    _, info = play(EX92, plan_text("European cities", ["Vilnius", "Riga", "Dublin"], [7, 5, 2], 12))
    m = info["metrics"]  # Vilnius->Riga breaks the one-way flight; stays and cities are right
    assert m["format_ok"] == 1.0 and m["stays_matched"] == 0.0 and m["violations"] == 1.0
    assert m["constraint_score"] == pytest.approx(1 - 1 / 9)
    _, info = play(EX92, "no plan")
    assert info["metrics"] == {"format_ok": 0.0, "stays_matched": 0.0, "violations": 9.0, "constraint_score": 0.0}


def _reference_parse(response):
    """The official evaluator's parse, with its own regexes (fine on short lines)."""
    days, flights, total = [], [], None
    for line in response.split("\n"):
        if re.findall(r"European cities for (\d+) days", line):
            total = int(re.findall(r"European cities for (\d+) days", line)[0])
        visit = re.findall(r"\d+-\d+", line)
        if visit:
            days.append(visit[0])
            if int(visit[0].split("-")[1]) == total:
                break
        flight = re.findall(r".*Day (\d+).*from (\w+) to (\w+)", line)
        if flight:
            flights.append(flight[0])
    if not days or not flights:
        return []
    cities = [flights[0][1]] + [f[2] for f in flights]
    marks = [1] + [int(f[0]) for f in flights] + [int(days[-1].split("-")[1])]
    return [(c, marks[i + 1] - marks[i] + 1) for i, c in enumerate(cities)]


def test_scanning_matchers_equal_the_official_regexes():
    rng = random.Random(0)
    pieces = ["Day ", "Day", "day ", "3", "12", "٣", "-", "- ", " ", "from ", "from", " to ", "to ", "Riga",
              "x_1", "é", ":", "**", "\r", ".", "European cities for ", " days", "Fly "]
    for _ in range(20_000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        flight = re.findall(r".*Day (\d+).*from (\w+) to (\w+)", line)
        assert last_flight(line) == ((int(flight[0][0]),) + flight[0][1:] if flight else None), line
        visit = re.findall(r"\d+-\d+", line)
        assert first_range_end(line) == (int(visit[0].split("-")[1]) if visit else None), line
        text = "\n".join(rng.choice([line, G, PLAIN, "Day 2: from Riga to Dublin", "1-12"]) for _ in range(3))
        assert parse_response(text)[0] == _reference_parse(text), text


# ---- generator, oracle, reader --------------------------------------------------------------------------------
@pytest.mark.parametrize("split", ["train", "test", "ood"])
def test_oracle_and_reader_solve_every_seed(split):
    env = gymnasium.make(ID, split=split).unwrapped
    vocab = set(CITIES["ood" if split == "ood" else "iid"])
    for seed in range(60):
        prompt, _ = env.reset(seed=seed)
        task = env.task
        assert set(task["cities"]) <= vocab and ("cities around the world" in prompt) == (split == "ood")
        stays, events = dict(task["stays"]), {c: (a, b) for c, a, b in task["events"]}
        assert solve(stays, events, task["flights"], limit=5) == [task["cities"]]  # unique
        assert env.oracle_action() == task["golden_plan"]
        answer = solve_from_prompt(prompt)
        assert answer == task["golden_plan"] and len(solutions(read_prompt(prompt))) == 1
        _, reward, _, _, info = env.step(answer)
        assert reward == 1.0 and info["metrics"]["constraint_score"] == 1.0


def test_big_instances_and_extreme_knobs():
    for kwargs in [dict(cities=10), dict(cities=2), dict(cities=9, flight_density=1.0, events=0.0),
                   dict(cities=[7, 8], flight_density=0.0, events=1.0, max_stay=14)]:
        env = TripEnv(**kwargs)
        for seed in range(3):
            prompt, _ = env.reset(seed=seed)
            assert env.step(solve_from_prompt(prompt))[1] == 1.0


def _swap(text, a, b):
    return text.replace(a, "\0").replace(b, a).replace("\0", b)


def test_perturbed_oracles_score_zero():
    env = TripEnv()
    for seed in range(40):
        env.reset(seed=seed)
        gold, cities = env.oracle_action(), env.task["cities"]
        i, j = sorted(np.random.default_rng(seed).choice(len(cities), 2, replace=False))
        bad_days = gold.replace(f"**Day {sum(env.task['durations'][:1])}:**", "**Day 1:**", 1)
        for answer in (_swap(gold, cities[i], cities[j]), bad_days, gold.replace("Fly from", "Visit", 1)):
            env.reset(seed=seed)
            assert env.step(answer)[1] == 0.0


def test_random_and_constant_baselines_score_near_zero():
    env = TripEnv()
    rng = np.random.default_rng(0)
    rand, const, violations = [], [], []
    for seed in range(100):
        env.reset(seed=seed)
        _, reward, _, _, info = env.step(env.random_action(rng))
        rand.append(reward)
        violations.append(info["metrics"]["violations"])
        task = env.task
        env.reset(seed=seed)
        listed = [c for c, _ in task["stays"]]
        const.append(env.step(plan_text("European cities", listed, [n for _, n in task["stays"]],
                                        task["total_days"]))[1])
    assert np.mean(rand) < 0.05 and np.mean(const) < 0.1 and np.mean(violations) > 2


# ---- knobs, pinned tasks, env checker -------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [dict(cities=1), dict(cities=11), dict(cities=[5, 3]), dict(cities="4"),
                                    dict(max_stay=1), dict(max_stay=15), dict(max_stay=3.5), dict(max_stay=True),
                                    dict(flight_density=1.5), dict(flight_density=-0.1), dict(events="many"),
                                    dict(events=float("nan")), dict(split="validation")])
def test_bad_knobs(kwargs):
    with pytest.raises(ValueError):
        TripEnv(**kwargs)


def test_pinned_round_trip_and_determinism():
    env, other = TripEnv(), TripEnv()
    for seed in range(10):
        prompt, info = env.reset(seed=seed)
        assert other.reset(seed=seed)[0] == prompt
        saved = json.loads(json.dumps(env.task))
        again, info2 = other.reset(options={"task": saved})
        assert again == prompt and info2["task_id"] == info["task_id"] and other.oracle_action() == env.oracle_action()
    bare = {k: v for k, v in EX92.items() if k not in ("cities", "durations", "prompt", "golden_plan")}
    prompt, _ = env.reset(options={"task": bare})  # no gold, no prompt: solved and rendered at setup
    assert env.task["cities"] == EX92["cities"] and "Dublin and Riga, from Riga to Vilnius." in prompt
    assert env.step(solve_from_prompt(prompt))[1] == 1.0


def _broken(**changes):
    task = json.loads(json.dumps(EX92))
    task.update(changes)
    return task


@pytest.mark.parametrize("task", [
    {k: v for k, v in EX92.items() if k != "flights"},
    _broken(stays=[["Riga", 5]], total_days=5),
    _broken(stays=[["Riga", 5], ["Riga", 7], ["Dublin", 2]]),
    _broken(stays=[["Riga", "5"], ["Vilnius", 7], ["Dublin", 2]]),
    _broken(stays=[["New York", 5], ["Vilnius", 7], ["Dublin", 2]]),
    _broken(total_days=14),
    _broken(flights=[["Dublin", "Paris", False], ["Riga", "Vilnius", True]]),
    _broken(flights=[["Dublin", "Riga", "no"], ["Riga", "Vilnius", True]]),
    _broken(flights=[["Dublin", "Riga", False], ["Vilnius", "Riga", True]]),  # the gold flies against it
    _broken(events=[["Riga", 1, 5]]),  # the gold is in Riga on days 2-6
    _broken(events=[["Riga", 0, 3]]),
    _broken(events=[["Paris", 2, 6]]),
    _broken(cities=["Riga", "Dublin", "Vilnius"], durations=[5, 2, 7]),
    _broken(cities=["Dublin", "Riga"], durations=[2, 5]),
    _broken(cities=[1, 2, 3]),
    _broken(golden_plan="Here is nothing."),
    _broken(prompt=""),
    _broken(region="far away"),
    {k: v for k, v in EX92.items() if k not in ("cities", "durations")} | {"flights": [["Dublin", "Riga", True]]},
])
def test_bad_pinned_task(task):
    with pytest.raises(ValueError):
        TripEnv().reset(options={"task": task})


def test_check_env_without_warnings():
    from gymnasium.utils.env_checker import check_env
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gymnasium.make(ID).unwrapped)


def test_strict_checker_counts_each_rule():
    task = dict(EX92, events=[["Vilnius", 6, 12]])
    plan, flights, last = parse_response(plan_text("European cities", ["Dublin", "Riga", "Dublin", "Paris"],
                                                   [2, 5, 7, 2], 13))
    bad, total = check_plan(task, plan, flights, last)
    # Dublin->Paris not listed, Paris unknown, Dublin twice, Vilnius missing, Dublin's and Vilnius's stays,
    # Vilnius's event, 13 days (Riga->Dublin is fine: "Dublin and Riga" flies both ways)
    assert (bad, total) == (8, 10)


def test_published_natural_plan_records_load_and_score_officially():
    import json
    from pathlib import Path

    records = json.loads((Path(__file__).parent / "data" / "natural_plan_records.json").read_text())
    env = gymnasium.make("magic/Trip-v0")
    for name in ("trip_planning_example_92", "trip_planning_example_1088"):
        record = records[name]
        prompt, _ = env.reset(options={"task": record})
        assert prompt == record.get("prompt_5shot", record["prompt_0shot"])
        _, reward, _, _, info = env.step(record["golden_plan"])
        assert reward == 1.0 and info["metrics"]["violations"] == 0.0
        env.reset(options={"task": record})
        assert env.step(env.unwrapped.oracle_action())[1] == 1.0
    env.reset(options={"task": records["trip_planning_example_92"]})
    assert env.step(records["trip_planning_example_92"]["pred_5shot_pro"])[1] == 1.0  # Gemini got this one
    env.reset(options={"task": records["trip_planning_example_1088"]})
    _, reward, _, _, info = env.step(records["trip_planning_example_1088"]["pred_5shot_pro"])
    assert reward == 0.0 and info["metrics"]["stays_matched"] == 2 / 8 and info["metrics"]["violations"] > 0


def test_days_knob_sets_the_total_length():
    env = gymnasium.make("magic/Trip-v0", cities=4, days=[12, 13], max_stay=6).unwrapped
    for seed in range(30):
        env.reset(seed=seed)
        assert len(env.task["cities"]) == 4 and env.task["total_days"] in (12, 13)
        assert all(2 <= d <= 6 for d in env.task["durations"])
    with pytest.raises(ValueError, match="cannot be filled"):
        TripEnv(cities=3, days=30)
