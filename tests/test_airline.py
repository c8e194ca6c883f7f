"""magic/Airline-v0: the oracle over every split and knob, baselines at 0, the policy checks, knobs and splits.

One sweep per split (100 seeds, each under one knob setting of GRID in turn) runs once and is shared by the
tests that read it, so the file stays fast. Every reset already replays the drawn task's oracle against the
scripted customer and keeps the task only when that run scores 1.0 (`AirlineEnv.rejections` counts the
others: a generator bug); the sweep plays the oracle once more through the registered env.
"""

import functools
import json

import gymnasium
import numpy as np
import pytest

import magic_envs  # noqa: F401  (registers the ids)
from magic_envs.core.grammar import format_tool_call
from magic_envs.core.policy import RandomPolicy
from magic_envs.core.rollout import rollout
from magic_envs.procedures import airline_data, airline_rules, airline_tasks, airline_tools
from magic_envs.procedures.airline import AirlineEnv, policy_for
from magic_envs.procedures.airline_data import VOCABULARY
from magic_envs.procedures.airline_rules import RULES, build_airline_db, free_bags
from magic_envs.procedures.airline_tasks import IID_KINDS, OOD_KINDS, VARIANTS

ENV_ID = "magic/Airline-v0"
SEEDS = 100  # per split
PLAY = 4  # the oracle also plays every PLAY-th seed's task through the registered env
GRID = [{"requests": r, "distractors": d, "ambiguous": a} for r in (1, 2, 3) for d in (0, 3) for a in (0.0, 1.0)]
GRID += [{"requests": [1, 3], "size": 2}, {}]  # a bigger airline; the registered defaults
HELLO = "Hello, how can I help?"


@functools.cache
def sweep(split: str):
    """(rows, rejections) of a split: per seed the knobs, the task and, for every PLAY-th seed, how the
    oracle's run through the registered env ended (each reset has already replayed it on a scratch env)."""
    before = AirlineEnv.rejections
    envs = [gymnasium.make(ENV_ID, split=split, **knobs) for knobs in GRID]
    rows = []
    for seed in range(SEEDS):
        env = envs[seed % len(GRID)]
        env.reset(seed=seed)
        row = {"knobs": GRID[seed % len(GRID)], "task": env.unwrapped.task, "reward": 1.0, "terminated": True,
               "info": {}, "instructions": env.unwrapped.instructions()}
        while seed % PLAY == 0:
            _, row["reward"], row["terminated"], truncated, row["info"] = env.step(env.unwrapped.oracle_action())
            if row["terminated"] or truncated:
                break
        rows.append(row)
    return rows, AirlineEnv.rejections - before


def kinds_of(split: str) -> set[str]:
    return {r["kind"] for row in sweep(split)[0] for r in row["task"]["requests"]}


def play(task: dict, script: list[str], reward_mode: str = "magic"):
    """Replay `script` on the pinned task; (reward, terminated, violations) where the episode ended."""
    env = AirlineEnv(reward_mode=reward_mode)
    env.reset(options={"task": task})
    for action in script:
        _, reward, terminated, _, info = env.step(action)
        assert info["valid"], info
        if terminated:
            return reward, True, env.violations()
    return 0.0, False, env.violations()


def find(split: str, test) -> dict:
    """The first swept task that passes `test`."""
    return next(row["task"] for row in sweep(split)[0] if test(row["task"]))


# ---------------------------------------------------------------------------------------------- the oracle

@pytest.mark.parametrize("split", AirlineEnv.splits)
def test_oracle_solves_every_seed_and_knob_setting(split):
    rows, rejections = sweep(split)
    assert rejections == 0, AirlineEnv.last_rejection
    failed = [(i, row["info"]) for i, row in enumerate(rows) if not (row["reward"] == 1.0 and row["terminated"])]
    assert not failed
    assert {json.dumps(row["knobs"]) for row in rows} == {json.dumps(k) for k in GRID}


def test_every_request_kind_occurs():
    assert kinds_of("train") | kinds_of("test") == set(IID_KINDS)
    assert set(OOD_KINDS) <= kinds_of("ood")
    assert {row["task"]["policy"] for row in sweep("ood_policy")[0]} == set(VARIANTS)
    done = {r["done"] for split in ("train", "test") for row in sweep(split)[0] for r in row["task"]["requests"]}
    assert done == {"state", "told", "refused", "transfer"}


def test_every_task_fails_when_nothing_is_done():
    """A refusal, answer or transfer must be said; anything else changes the database."""
    writes = airline_tools.WRITE_TOOLS
    for split in AirlineEnv.splits:
        for row in sweep(split)[0]:
            task = row["task"]
            assert task["communicate"] or any(a["name"] in writes for a in task["actions"])
            for request in task["requests"]:
                assert request["communicate"] or request["done"] == "state"


# -------------------------------------------------------------------------------------------- baselines

class DoNothing:
    name = "hello"

    def act(self, messages, tools):
        return HELLO


@pytest.mark.parametrize("policy", [RandomPolicy("format", seed=0), RandomPolicy("junk", seed=1), DoNothing()],
                         ids=lambda p: p.name)
def test_baselines_score_zero(policy):
    env = gymnasium.make(ENV_ID)
    for seed in range(12):
        episode = rollout(env, policy, seed=seed)
        assert episode.score == 0.0 and not episode.success, (seed, episode.final_info)


# ----------------------------------------------------------------------------------------- policy checks

def confirmed_write(task: dict) -> bool:
    return any("(yes/no)" in action for action in task["oracle"])


def test_a_write_without_confirmation_fails_only_with_the_policy_check():
    task = find("train", lambda t: confirmed_write(t) and len(t["requests"]) == 1)
    k = next(i for i, action in enumerate(task["oracle"]) if "(yes/no)" in action)
    script = task["oracle"][:k] + task["oracle"][k + 1:]  # the question and its "yes" never happen
    assert play(task, script) == (0.0, True, ["write without confirmation"])
    assert play(task, script, "tau2")[:2] == (1.0, True)  # tau2-bench's reward does not see it


def test_one_more_changed_record_fails_in_both_modes():
    def other_trip(task):
        db = build_airline_db(task["db"])
        user = db["users"][task["scenario"]["identity"]["user_id"]]
        touched = {a["arguments"].get("reservation_id") for a in task["actions"]}
        return next((r for r in user["reservations"] if r not in touched and db["reservations"][r]["status"] is None
                     and db["reservations"][r]["passengers"]), None)

    task = find("train", lambda t: confirmed_write(t) and len(t["requests"]) == 1 and other_trip(t))
    rid = other_trip(task)
    passengers = build_airline_db(task["db"])["reservations"][rid]["passengers"]
    changed = [dict(passengers[0], dob="1999-12-31")] + passengers[1:]
    k = next(i for i, action in enumerate(task["oracle"]) if "(yes/no)" in action)
    extra = [f"I will also correct the passengers of reservation {rid}. Shall I proceed (yes/no)?",
             format_tool_call("update_reservation_passengers", {"reservation_id": rid, "passengers": changed})]
    script = task["oracle"][:k] + extra + task["oracle"][k:]
    assert play(task, task["oracle"])[:2] == (1.0, True)
    assert play(task, script)[:2] == (0.0, True)
    assert play(task, script, "tau2")[:2] == (0.0, True)  # the DB hash catches it


def test_acting_for_an_unidentified_customer_fails_only_with_the_policy_check():
    task = find("train", lambda t: t["requests"][0]["kind"] in airline_tasks.LOCATES and len(t["requests"]) == 1)
    assert "user id" in task["oracle"][0] and "get_user_details" in task["oracle"][1]
    script = task["oracle"][2:]  # never asks for the user id
    assert play(task, script) == (0.0, True, ["acting for an unauthenticated user"])
    assert play(task, script, "tau2")[:2] == (1.0, True)


def test_revealing_another_customers_data_fails_only_with_the_policy_check():
    task = find("train", lambda t: len(t["requests"]) == 1)
    db = build_airline_db(task["db"])
    other = next(u for uid, u in db["users"].items() if uid != task["scenario"]["identity"]["user_id"])
    script = [f"Our records also show the address {other['email']}."] + task["oracle"]
    assert play(task, script) == (0.0, True, ["revealed another user's data"])
    assert play(task, script, "tau2")[:2] == (1.0, True)


# ------------------------------------------------------------------------------------ determinism, knobs

def test_same_task_and_seed_give_the_same_transcript():
    def transcript(seed):
        env = gymnasium.make(ENV_ID, render_mode="ansi", requests=3, ambiguous=0.5)
        env.reset(seed=seed)
        while True:
            *_, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
            if terminated or truncated:
                return env.render()

    assert transcript(4) == transcript(4) and transcript(4) != transcript(5)


def test_knobs_change_what_they_say():
    rows = sweep("train")[0]
    for row in rows:
        task, knobs = row["task"], row["knobs"]
        if "requests" in knobs and isinstance(knobs["requests"], int):
            assert len(task["requests"]) == knobs["requests"]
        copies = knobs.get("distractors", 1)
        spec = task["db"].get("distractors")
        assert (spec or {}).get("copies", 0) == copies
        if copies:  # a namesake and look-alikes of the reservations the requests are about
            db = build_airline_db(task["db"])
            user = db["users"][spec["user"]]
            names = [u["name"] for u in db["users"].values()]
            assert names.count(user["name"]) >= 2
            generated = airline_rules.generated_db(task["db"]["seed"], task["db"]["size"], False)
            assert len(db["reservations"]) > len(generated["reservations"])
        for request, said in zip(task["requests"], task["scenario"]["requests"]):
            facts = " ".join(said["facts"].values())
            if knobs.get("ambiguous") == 1.0 and request["kind"] in airline_tasks.LOCATES:
                assert request["ambiguous"] in ("unknown", "wrong") and "The reservation id is" not in facts
                assert "describe the trip" in said["facts"]
            if knobs.get("ambiguous") == 0.0:
                assert request["ambiguous"] == ""
    ambiguous = [r for row in rows if row["knobs"].get("ambiguous") == 1.0 for r in row["task"]["requests"]]
    assert any(r["ambiguous"] == "cities" for r in ambiguous) and any(r["ambiguous"] == "wrong" for r in ambiguous)
    sizes = {len(build_airline_db(row["task"]["db"])["flights"]) for row in rows if row["knobs"].get("size") == 2}
    assert sizes == {80}


def test_an_ambiguous_customer_never_says_the_reservation_id():
    env = AirlineEnv(ambiguous=1.0, requests=1)
    for seed in range(10):
        env.reset(seed=seed)
        task = env.task
        ids = {a["arguments"]["reservation_id"] for a in task["actions"] if "reservation_id" in a["arguments"]}
        if task["requests"][0]["kind"] in airline_tasks.LOCATES:
            said = json.dumps(task["scenario"])
            target = [a["arguments"]["reservation_id"] for a in task["actions"]
                      if a["name"] == "get_reservation_details"][-1]
            assert target in ids and target not in said


# ------------------------------------------------------------------------------------------------ splits

def test_splits_are_disjoint_and_ood_kinds_stay_out_of_train_and_test():
    seen = {}
    for split in AirlineEnv.splits:
        for row in sweep(split)[0]:
            seen.setdefault(json.dumps(row["task"], sort_keys=True), set()).add(split)
    assert all(len(splits) == 1 for splits in seen.values())
    assert not (kinds_of("train") | kinds_of("test")) & set(OOD_KINDS)
    assert not any(row["task"]["policy"] != "base" for s in ("train", "test", "ood") for row in sweep(s)[0])
    for row in sweep("ood")[0]:  # an unseen request kind in every task, unseen names and airports
        task = row["task"]
        assert {r["kind"] for r in task["requests"]} & set(OOD_KINDS) and task["db"]["ood"]
        first = task["scenario"]["identity"]["user_id"].split("_")[0].capitalize()
        assert first in VOCABULARY[True]["first"] and first not in VOCABULARY[False]["first"]


def test_ood_policy_text_differs_and_its_oracle_follows_it():
    base = policy_for("base")
    for variant in VARIANTS:
        assert policy_for(variant) != base
    for row in sweep("ood_policy")[0]:
        task = row["task"]
        assert row["instructions"].endswith(policy_for(task["policy"]) + "\n</policy>")
        request = next(i for i, r in enumerate(task["requests"]) if r["policy_affected"])
        kind = task["requests"][request]["kind"]
        assert kind == VARIANTS[task["policy"]]
        db = build_airline_db(task["db"])
        writes = [a for a in task["actions"] if a["request"] == request and a["name"] in
                  airline_tools.WRITE_TOOLS]
        if task["policy"] == "cancel_48h":  # booked 24-48 hours ago, no other ground: only the variant allows it
            (write,) = writes
            reservation = db["reservations"][write["arguments"]["reservation_id"]]
            assert write["name"] == "cancel_reservation"
            assert not airline_rules.cancel_grounds(db, reservation, "change_of_plan", RULES["base"])
        elif task["policy"] == "certificate_150":
            (write,) = writes
            found = [a["arguments"]["reservation_id"] for a in task["actions"]
                     if a["request"] == request and a["name"] == "get_reservation_details"]
            n = len(db["reservations"][found[-1]]["passengers"])  # the lookups stop at the customer's trip
            assert write["name"] == "send_certificate" and write["arguments"]["amount"] == 150 * n
        else:  # one more free bag per passenger: fewer paid bags than the base policy would charge
            (write,) = writes
            reservation = db["reservations"][write["arguments"]["reservation_id"]]
            user = db["users"][reservation["user_id"]]
            base_paid = max(reservation["nonfree_baggages"], write["arguments"]["total_baggages"]
                            - free_bags(RULES["base"], user["membership"], reservation["cabin"])
                            * len(reservation["passengers"]))
            assert write["arguments"]["nonfree_baggages"] < base_paid


# --------------------------------------------------------------------------------------------- plumbing

@pytest.mark.parametrize("knobs", [{"requests": 0}, {"requests": [3, 1]}, {"distractors": 4}, {"ambiguous": 1.5},
                                   {"size": 0}, {"split": "iid"}, {"reward_mode": "strict"}])
def test_bad_knobs_raise(knobs):
    with pytest.raises(ValueError):
        AirlineEnv(**knobs)


def test_bad_pinned_tasks_raise_and_shared_databases_never_change():
    env = AirlineEnv()
    env.reset(seed=3)
    task = env.task
    for broken in ({**task, "policy": "lenient"}, {**task, "db": {"seed": "x"}},
                   {**task, "db": {**task["db"], "distractors": {"seed": 1, "user": "nobody", "like": []}}}):
        with pytest.raises(ValueError):
            env.reset(options={"task": broken})
    # Episodes start from shared databases (generated once per seed): playing must never change them.
    seed = task["db"]["seed"]
    before = json.dumps(airline_rules.generated_db(seed, 1, False), sort_keys=True)
    built = json.dumps(build_airline_db(task["db"]), sort_keys=True)
    for _ in range(2):
        env.reset(options={"task": task})
        for action in task["oracle"]:
            env.step(action)
    fresh = airline_data.generate_db(np.random.default_rng(seed), 1)
    assert json.dumps(fresh, sort_keys=True) == before == json.dumps(airline_rules.generated_db(seed, 1, False),
                                                                            sort_keys=True)
    assert json.dumps(build_airline_db(task["db"]), sort_keys=True) == built
