"""magic/Retail-v0: the oracle over every split and knob, baselines at 0, the policy checks, knobs and splits.

One sweep per split (100 seeds, each under one knob setting of GRID in turn) is run once and shared by the
tests that read it, so the file stays fast. Every reset already plays the oracle's whole conversation on a
RetailEnv against the scripted customer and rejects the draw unless it scores 1.0 (`rejections`, required
empty); every third seed is also replayed through the registered env with `oracle_action()` (3 and len(GRID)
are coprime, so every knob setting is replayed in every split).
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
from magic_envs.core.tasks import fingerprint, roundtrip
from magic_envs.procedures import retail, retail_planner, retail_tasks
from magic_envs.procedures.database import db_hash
from magic_envs.procedures.retail import VARIANTS, RetailEnv, build_store, policy_for
from magic_envs.procedures.retail_planner import IID_KINDS, OOD_KINDS

ENV_ID = "magic/Retail-v0"


def make(**kwargs):
    return gymnasium.make(ENV_ID, disable_env_checker=True, **kwargs)  # check_env runs in test_registry.py

SEEDS = 100  # per split
REPLAY = 3  # replay every third seed through the public API
GRID = [{"requests": r, "distractors": d, "ambiguous": a} for r in (1, 2, 3) for d in (0, 3) for a in (0.0, 1.0)]
GRID += [{"requests": [1, 3], "size": 2}, {}]  # a bigger store; the registered defaults
ORDERLESS = {"user_address", "transfer", "product_info", "gift_card_balance", "refuse_other_user"}
MORE = "Is there anything else I can help you with?"


@functools.cache
def sweep(split: str):
    """(rows, rejections): per seed the knobs, the task, its id, and (every REPLAY-th seed) how the oracle's
    replay through the registered env ended; and every oracle run the generator rejected (expected: none)."""
    envs = [make(split=split, **knobs) for knobs in GRID]
    rows = []
    for seed in range(SEEDS):
        env = envs[seed % len(GRID)]
        row = {"knobs": GRID[seed % len(GRID)], "replayed": seed % REPLAY == 0}
        if not row["replayed"]:  # what reset(seed=seed) draws, oracle run included, without the env's setup
            row["task"] = roundtrip(env.unwrapped.generate(np.random.default_rng(seed)))
            rows.append(dict(row, id=fingerprint(row["task"])))
            continue
        _, info = env.reset(seed=seed)
        row.update(task=env.unwrapped.task, id=info["task_id"], instructions=env.unwrapped.instructions())
        steps = 0
        while True:
            _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
            steps += 1
            if terminated or truncated:
                row.update(reward=reward, terminated=terminated, info=info, steps=steps)
                break
        rows.append(row)
    return rows, [r for env in envs for r in env.unwrapped.rejections]


def kinds_of(split: str) -> set[str]:
    return {r["kind"] for row in sweep(split)[0] for r in row["task"]["requests"]}


@functools.cache
def _store(recipe: str) -> dict:
    return build_store(json.loads(recipe))


def store(task: dict) -> dict:
    """The task's initial database, built once per test session (read only)."""
    return _store(json.dumps(task["db"], sort_keys=True))


def customer(task: dict, db: dict) -> dict:
    """The customer a task is about (its gold lookup finds them)."""
    auth = task["actions"][0]
    return db["users"][retail.retail_tools.call(db, auth["name"], auth["arguments"], quirks=False)]


# ---- the oracle ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("split", RetailEnv.splits)
def test_oracle_solves_every_seed_of_every_split_and_knob_setting(split):
    rows, rejections = sweep(split)
    assert rejections == []  # the generator's scripted run of each of the SEEDS tasks scored 1.0
    assert all(len(row["task"]["oracle"]) <= retail_tasks.MAX_ORACLE_STEPS for row in rows)
    replayed = [row for row in rows if row["replayed"]]
    failed = [(row["id"], row["info"]) for row in replayed
              if (row["reward"], row["terminated"], row["info"]["success"]) != (1.0, True, True)]
    assert failed == []
    settings = {json.dumps(k, sort_keys=True) for k in GRID}
    assert {json.dumps(row["knobs"], sort_keys=True) for row in replayed} == settings
    longest = max(row["steps"] for row in replayed)
    assert longest <= retail_tasks.MAX_ORACLE_STEPS < gymnasium.spec(ENV_ID).max_episode_steps
    assert all(row["info"]["metrics"]["violations"] == 0 for row in replayed)


def test_every_request_kind_is_drawn_and_ood_kinds_only_in_ood():
    iid = kinds_of("train") | kinds_of("test")
    assert iid == set(IID_KINDS)
    assert set(OOD_KINDS) <= kinds_of("ood") and not set(OOD_KINDS) & (iid | kinds_of("ood_policy"))
    assert all(any(set(OOD_KINDS) & {r["kind"] for r in row["task"]["requests"]}) for row in sweep("ood")[0])
    outcomes = {r["done"] for split in RetailEnv.splits for row in sweep(split)[0] for r in row["task"]["requests"]}
    assert outcomes == {"state", "told", "refused", "transfer"}


def test_every_task_fails_an_agent_that_does_nothing_by_construction():
    for split in RetailEnv.splits:
        for row in sweep(split)[0]:
            task = row["task"]
            assert task["communicate"] or any(a["request"] >= 0 and a["name"] in retail.retail_tools.WRITE_TOOLS
                                              for a in task["actions"])


# ---- baselines --------------------------------------------------------------------------------------------

class DoNothing:
    name = "do-nothing"

    def act(self, messages, tools):
        return "Hello, how can I help?"


@pytest.mark.parametrize("split", RetailEnv.splits)
def test_random_and_do_nothing_agents_score_zero(split):
    env = make()
    for k, row in enumerate(sweep(split)[0][:8]):
        for policy in (DoNothing(), RandomPolicy("format", seed=k), RandomPolicy("junk", seed=k)):
            episode = rollout(env, policy, options={"task": row["task"]})
            assert episode.score == 0.0 and not episode.success, (policy.name, k)


# ---- the policy checks: magic catches what tau2's DB x COMMUNICATE does not ---------------------------------

def single_cancel() -> dict:
    """A one-request cancellation by a customer who gives their email, without distractors (GRID[0])."""
    return next(row["task"] for split in RetailEnv.splits for row in sweep(split)[0]
                if row["knobs"] == GRID[0] and row["task"]["requests"][0]["kind"] == "cancel"
                and row["task"]["requests"][0]["done"] == "state")


def play(task: dict, script: list[str], reward_mode: str):
    env = make(reward_mode=reward_mode)
    env.reset(seed=0, options={"task": task})
    for action in script + [MORE] * 10:
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return reward, info, env.unwrapped.violations()
    raise AssertionError("the conversation did not end")


def tampered(how: str) -> tuple[dict, list[str]]:
    task = single_cancel()
    script = list(task["oracle"])
    write = next(i for i, a in enumerate(script) if "cancel_pending_order" in a)
    assert "(yes/no)" in script[write - 1] and "find_user_id_by_email" in script[1]
    if how == "no confirmation":
        del script[write - 1]
    elif how == "unauthenticated":
        del script[:2]
    elif how == "extra record":
        user_id = customer(task, store(task))["user_id"]
        address = {"address1": "1 Test Road", "address2": "Apt 1", "city": "Boston", "country": "USA",
                   "state": "MA", "zip": "02101"}
        script[2:2] = ["Shall I also set your default address to 1 Test Road, Apt 1, Boston, MA 02101, USA (yes/no)?",
                       format_tool_call("modify_user_address", {"user_id": user_id, **address})]
    elif how == "leak":
        db = store(task)
        me = customer(task, db)["user_id"]
        other = next(u for u in db["users"].values() if u["user_id"] != me)
        script[2:2] = [f"Thank you. Note that the account {other['email']} is a different one."]
    return task, script


# how -> (score with reward_mode="magic", score with reward_mode="tau2"): tau2's DB x COMMUNICATE misses all but
# the extra changed record.
TAMPERING = {"no confirmation": (0.0, 1.0), "unauthenticated": (0.0, 1.0), "leak": (0.0, 1.0),
             "extra record": (0.0, 0.0)}
VIOLATION = {"no confirmation": "write without confirmation", "unauthenticated": "acting for an unauthenticated user",
             "leak": "revealed another user's data", "extra record": None}


def test_the_untampered_oracle_scores_one_in_both_modes():
    task = single_cancel()
    for mode in ("magic", "tau2"):
        assert play(task, list(task["oracle"]), mode)[0] == 1.0


@pytest.mark.parametrize("how", TAMPERING)
def test_policy_violations_fail_in_magic_mode_and_tau2_misses_some(how):
    task, script = tampered(how)
    magic_reward, info, violations = play(task, script, "magic")
    tau2_reward, tau2_info, _ = play(task, script, "tau2")
    assert (magic_reward, tau2_reward) == TAMPERING[how]
    # (unauthenticated: reading the order back is also revealing data to someone not yet identified)
    assert VIOLATION[how] in violations if VIOLATION[how] else violations == []
    assert info["metrics"]["db"] == tau2_info["metrics"]["db"] == (0.0 if how == "extra record" else 1.0)


# ---- determinism --------------------------------------------------------------------------------------------

def test_same_task_and_seed_give_the_same_transcript_byte_for_byte():
    def transcript(seed, options=None):
        env = make(requests=3, distractors=2, ambiguous=0.5, render_mode="ansi")
        env.reset(seed=seed, options=options)
        while True:
            _, _, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
            if terminated or truncated:
                return env.render(), env.unwrapped.task

    for seed in (0, 1):
        first, task = transcript(seed)
        assert transcript(seed)[0] == first
        assert transcript(99, {"task": task})[0] == first


# ---- knobs ----------------------------------------------------------------------------------------------------

def test_requests_knob_sets_how_many_requests():
    for split in RetailEnv.splits:
        for row in sweep(split)[0]:
            n = row["knobs"].get("requests")
            if isinstance(n, int):
                assert len(row["task"]["requests"]) == len(row["task"]["scenario"]["requests"]) == n


def test_distractors_add_look_alike_orders_and_a_namesake():
    seen = 0
    for split in ("train", "test"):
        for row in sweep(split)[0]:
            task, knobs = row["task"], row["knobs"]
            if knobs.get("distractors") == 0:
                assert "distractors" not in task["db"]
            if knobs.get("distractors") != 3:
                continue
            spec = task["db"]["distractors"]
            assert len(spec["like"]) == 3 and spec["namesake"]
            plain, db = build_store({k: v for k, v in task["db"].items() if k != "distractors"}), store(task)
            me = customer(task, db)
            added = [o for o in me["orders"] if o not in plain["orders"]]
            assert len(added) == 3
            names = {tuple(sorted(i["name"] for i in db["orders"][o]["items"])) for o in added}
            assert names <= {tuple(sorted(i["name"] for i in db["orders"][o]["items"])) for o in spec["like"]}
            twins = [u for k, u in db["users"].items() if k not in plain["users"]]
            assert len(twins) == 1 and twins[0]["name"] == me["name"]
            assert twins[0]["address"]["zip"] != me["address"]["zip"]
            seen += 1
    assert seen


def test_ambiguous_customers_describe_orders_and_fumble_their_email():
    clear = vague = 0
    for split in ("train", "ood"):
        for row in sweep(split)[0]:
            task, ambiguous = row["task"], row["knobs"].get("ambiguous")
            if ambiguous not in (0.0, 1.0):
                continue
            db = store(task)
            me = customer(task, db)
            text = json.dumps(task["scenario"])
            said = [r["say"] for r in task["scenario"]["requests"]]
            with_order = [s for s, r in zip(said, task["requests"]) if r["kind"] not in ORDERLESS]
            if ambiguous == 1.0:
                assert not any(o in text for o in me["orders"])
                assert all("I don't have the order id" in s for s in with_order)
                assert task["scenario"]["identity"].get("email") != me["email"]
                vague += 1
            else:
                assert all("#W" in s for s in with_order)
                assert task["scenario"]["identity"]["email"] == me["email"]
                clear += 1
    assert clear and vague


@pytest.mark.parametrize("knobs", [{"requests": 0}, {"requests": [2, 1]}, {"requests": 4}, {"distractors": 4},
                                   {"ambiguous": 1.5}, {"size": 0}, {"split": "valid"}])
def test_bad_knobs_are_refused(knobs):
    with pytest.raises(ValueError):
        make(**knobs)


# ---- splits and the policy variants ----------------------------------------------------------------------------

def test_splits_are_disjoint_and_ood_uses_unseen_vocabulary():
    ids = {split: {row["id"] for row in sweep(split)[0]} for split in RetailEnv.splits}
    assert all(len(ids[s]) == SEEDS for s in ids)
    splits = list(ids)
    assert all(not ids[a] & ids[b] for i, a in enumerate(splits) for b in splits[i + 1:])
    for split in RetailEnv.splits:
        assert all(row["task"]["db"]["ood"] == (split == "ood") for row in sweep(split)[0])
        assert all((row["task"]["policy"] != "base") == (split == "ood_policy") for row in sweep(split)[0])


def test_ood_policy_text_differs_and_its_oracle_follows_it():
    base = policy_for("base")
    assert "<<" not in base and "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON." in base
    texts = {v: policy_for(v) for v in VARIANTS}
    assert len(set(texts.values()) | {base}) == len(VARIANTS) + 1
    rows = sweep("ood_policy")[0]
    assert {row["task"]["policy"] for row in rows} == set(VARIANTS)
    followed = {v: 0 for v in VARIANTS}
    for row in rows:
        task, variant = row["task"], row["task"]["policy"]
        if row["replayed"]:
            assert texts[variant] in row["instructions"] and base not in row["instructions"]
        db = store(task)
        writes = [a for a in task["actions"] if a["request"] >= 0]
        if variant == "original_only":  # refunds of returns only to the original method, whatever the customer asks
            for a in writes:
                if a["name"] == "return_delivered_order_items":
                    original = db["orders"][a["arguments"]["order_id"]]["payment_history"][0]["payment_method_id"]
                    assert a["arguments"]["payment_method_id"] == original
                    asked = task["scenario"]["requests"][a["request"]]
                    followed[variant] += "gift card" in asked["facts"]["payment method"]
        elif variant == "cancel_limit":  # no cancellation above the limit: a refusal that names it
            for a in writes:
                if a["name"] == "cancel_pending_order":
                    order = db["orders"][a["arguments"]["order_id"]]
                    assert sum(i["price"] for i in order["items"]) <= retail_planner.CANCEL_LIMIT
            followed[variant] += any(r["kind"] == "cancel" and r["done"] == "refused" and r["communicate"] == ["500"]
                                     for r in task["requests"])
        else:  # no exchanges: each exchange request is refused, pointing to returns
            assert not any(a["name"] == "exchange_delivered_order_items" for a in writes)
            exchanges = [r for r in task["requests"] if r["kind"] == "exchange"]
            assert exchanges and all(r["done"] == "refused" and r["communicate"] == ["return"] for r in exchanges)
            followed[variant] += 1
    assert all(followed.values()), followed


def test_the_model_user_reads_persona_known_and_unknown_info():
    task = sweep("train")[0][1]["task"]  # ambiguous=1.0 in GRID[1]
    text = task["scenario"]["text"]
    assert text.startswith("Persona: ") and "Known info:" in text and "Unknown info: your user id" in text
    assert all(r["say"] in text for r in task["scenario"]["requests"])


def test_tasks_store_the_database_recipe_not_the_database():
    task = sweep("train")[0][0]["task"]
    assert set(task["db"]) <= {"seed", "size", "ood", "distractors"}
    assert db_hash(build_store(task["db"])) == db_hash(build_store(json.loads(json.dumps(task["db"]))))
    assert len(json.dumps(task)) < 20_000
    env = make().unwrapped
    env.generate(np.random.default_rng(0))
    assert env.rejections == []
