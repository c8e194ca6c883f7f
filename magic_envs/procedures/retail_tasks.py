"""The task generator of magic/Retail-v0 (`retail.RetailEnv`): tasks, their gold writes and their oracle scripts.

`generate` draws a task: a store database (`retail_store.build_store`: `retail_data.generate_db` from a stored
seed, plus look-alike distractor orders and a namesake customer), a customer, how they identify, and 1-3
requests of weighted kinds (`retail_planner.IID_KINDS`; `OOD_KINDS` only in the ood split; an ood_policy task
has one request whose right handling its policy variant changes, `VARIANTS`). `retail_planner.Planner` chooses
each request's target order and details, phrases what the customer says and the facts they give when asked,
and computes the gold writes, replaying them on a working copy so that later requests see the state earlier
ones leave.

The oracle script is built by running `retail_oracle.Oracle`, a rule-following agent that knows only what the
customer asks for and reads everything else (ids, statuses, prices, payment methods) from tool results and the
customer's replies, against the scripted customer on a scratch env. It is checked on the way: every value it
passes to a tool must have been observed first, the conversation must end with score 1.0 within
`MAX_ORACLE_STEPS`, and only then are its actions kept as the task's `oracle`. Any other run is a generator bug:
counted in the env's `rejections` and drawn again, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from magic_envs.core.tasks import IID_SPLITS, fingerprint, iid_split_of
from magic_envs.procedures.database import fresh_copy
from magic_envs.procedures.retail_oracle import Oracle
from magic_envs.procedures.retail_planner import Planner, Redraw, Rejected
from magic_envs.procedures.retail_store import add_distractors, build_store
from magic_envs.procedures.service import ServiceEnv

if TYPE_CHECKING:
    from magic_envs.procedures.retail import RetailEnv

MAX_ORACLE_STEPS = 34  # the oracle's longest conversations take ~27 steps; the TimeLimit is 40
PERSONAS = ("Polite and patient.", "In a hurry; answers briefly.", "Friendly and chatty.",
            "A little anxious about the order.", "Direct and matter-of-fact.")


# ------------------------------------------------------------------------------------------------ the task

def generate(env: RetailEnv, rng: np.random.Generator,
             scratch: Callable[[dict, dict], ServiceEnv]) -> tuple[dict, dict]:
    """A task for `env` drawn from `rng`, with its oracle script, and the task's initial database.
    `scratch(task, db)` is a fresh env that plays `task` on `db`, for the oracle's run; a run that does not
    score 1.0 is recorded in `env.rejections` and the task is drawn again."""
    for _ in range(100):
        try:
            return _with_oracle(*_draw_core(env, rng), scratch)
        except Rejected as error:
            env.rejections.append(str(error))
    raise RuntimeError(f"RetailEnv: 100 oracle runs in a row failed; last: {env.rejections[-1]}")


def _draw_core(env: RetailEnv, rng: np.random.Generator) -> tuple[dict, dict]:
    for _ in range(200):
        try:
            return _compose(env, Planner(env, rng))
        except Redraw:
            continue
    raise RuntimeError("RetailEnv: no customer fits the drawn requests in 200 draws")


def _compose(env: RetailEnv, p: Planner) -> tuple[dict, dict]:
    rng = p.rng
    seed = int(rng.integers(2**31))
    # train and test share one distribution but never a store: the store's seed decides the split
    while env.split in IID_SPLITS and iid_split_of(fingerprint({"seed": seed})) != env.split:
        seed = int(rng.integers(2**31))
    spec = {"seed": seed, "size": env.size, "ood": env.split == "ood"}
    db = build_store(spec)
    kinds, hit = p.kinds()
    user, targets = p.targets(db, kinds, hit)
    count = int(rng.integers(env.distractors[0], env.distractors[1] + 1))
    if count:
        own = [t for t, k in zip(targets, kinds) if t and k != "refuse_other_user"] or list(user["orders"])
        spec["distractors"] = {"seed": int(rng.integers(2**31)), "user": user["user_id"], "namesake": True,
                               "like": [own[i % len(own)] for i in range(count)] if own else []}
        add_distractors(db, spec["distractors"])
    work, uid = fresh_copy(db), user["user_id"]
    identity_user = work["users"][uid]
    identity, auth, mode = _identity(env, p, identity_user, work)
    reqs = [p.plan(work, uid, kind, target, affected) for kind, target, affected in zip(kinds, targets, hit)]
    says = [("Hi! " if k == 0 else "Thank you. I have one more request. ") + r["say"] for k, r in enumerate(reqs)]
    persona = p.pick(PERSONAS)
    scenario = {"persona": persona, "identity": identity,
                "requests": [{"say": s, "facts": r["facts"], "confirm": True} for s, r in zip(says, reqs)],
                "closing": "Thank you, that is all I needed."}
    scenario["text"] = _scenario_text(scenario, identity_user, mode, reqs)
    actions = [{"name": auth[0], "arguments": auth[1], "request": -1}]
    actions += [{"name": n, "arguments": a, "request": k} for k, r in enumerate(reqs) for n, a in r["gold"]]
    task = {"domain": "retail", "policy": p.variant, "db": spec, "scenario": scenario, "actions": actions,
            "communicate": list(dict.fromkeys(c for r in reqs for c in r["communicate"])),
            "reward_basis": ["DB", "COMMUNICATE"],
            "requests": [{"kind": r["kind"], "done": r["done"], "communicate": r["communicate"]} for r in reqs]}
    if not task["communicate"] and len(actions) == 1:
        raise Rejected("a task that doing nothing would pass")
    return task, {"reqs": reqs, "db": db}


def _identity(env: RetailEnv, p: Planner, user: dict, work: dict) -> tuple[dict, tuple, str]:
    """What the customer knows about themselves, the gold lookup, and how they identify ("email";
    "no_email": name and zip only; "wrong_email": an unknown address first, then name and zip)."""
    first, last = user["name"]["first_name"], user["name"]["last_name"]
    known = {"first_name": first, "last_name": last, "zip": user["address"]["zip"]}
    mode = p.pick(["no_email", "wrong_email"]) if p.rng.random() < env.ambiguous else "email"
    if mode == "email":
        return {"email": user["email"], **known}, ("find_user_id_by_email", {"email": user["email"]}), mode
    by_name = ("find_user_id_by_name_zip", known)
    if mode == "no_email":
        return known, by_name, mode
    emails = {u["email"] for u in work["users"].values()}
    while True:
        wrong = f"{first}.{last}{int(p.rng.integers(1000, 10000))}@example.com".lower()
        if wrong not in emails:
            return {"email": wrong, **known}, by_name, mode


def _with_oracle(task: dict, plan: dict, scratch: Callable[[dict, dict], ServiceEnv]) -> tuple[dict, dict]:
    """The task with its oracle script (the oracle agent's actions in a scripted conversation on a scratch
    env), and its initial database. Raises Rejected unless that conversation ends with score 1.0 within
    MAX_ORACLE_STEPS."""
    env = scratch(task, plan["db"])
    observation, _ = env.reset(options={"task": task})
    agent = Oracle(task, plan).run(observation)
    script = [next(agent)]
    while True:
        if len(script) > MAX_ORACLE_STEPS:
            raise Rejected(f"the oracle needs more than {MAX_ORACLE_STEPS} steps")
        observation, reward, terminated, _, info = env.step(script[-1])
        if terminated:
            if reward != 1.0:
                raise Rejected(f"the oracle scored {reward}: {info['metrics']} {env.violations()} {info['error']}")
            return {**task, "oracle": script}, plan["db"]
        if not info["valid"]:
            raise Rejected(f"invalid oracle action: {info['error']}")
        try:
            script.append(agent.send(observation))
        except StopIteration:
            raise Rejected("the oracle stopped before the conversation ended") from None
        except (KeyError, IndexError, TypeError, ValueError, RuntimeError) as error:  # a bug, reported as such
            raise Rejected(f"the oracle failed: {error!r}") from error


def _scenario_text(scenario: dict, user: dict, mode: str, reqs: list[dict]) -> str:
    """The scenario as a model playing the customer reads it: persona, known and unknown info, the goal."""
    ident = scenario["identity"]
    known = [f"your name is {ident['first_name']} {ident['last_name']}", f"your zip code is {ident['zip']}"]
    unknown = ["your user id"]
    if mode == "email":
        known.append(f"your email is {ident['email']}")
    elif mode == "wrong_email":
        known.append(f"you think your email is {ident['email']}, but you are not sure it is the one on the "
                     "account; give it first when asked")
    else:
        unknown.append("your email")
    if any(r["describe"] for r in reqs):
        unknown.append("the ids of the orders you describe")
    lines = [f"Persona: {scenario['persona']}", "Known info: " + "; ".join(known) + ".",
             "Unknown info: " + "; ".join(unknown) + ".",
             "Task instructions: you contact the store's customer service. Your requests, one at a time:"]
    for k, request in enumerate(scenario["requests"], 1):
        lines.append(f"{k}. {request['say']}")
        lines += [f"   - if asked about the {keys.split('|')[0]}: {answer}"
                  for keys, answer in request["facts"].items()]
    lines.append("Agree with an explicit 'yes' to each action the agent proposes that does what you asked. If the "
                 "agent says a request cannot be done, accept it and go on to the next one.")
    return "\n".join(lines)
