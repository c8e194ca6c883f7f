"""The task generator of magic/Airline-v0 (`airline.AirlineEnv`): tasks, their gold actions and their oracle scripts.

`draw` makes a task. `_Planner.draft` picks the request kinds (weighted `IID_KINDS`; `OOD_KINDS` only in the
ood split; in ood_policy one policy variant of `VARIANTS`/`RULES` and the request kind it changes), how
ambiguously the customer names things, and a customer of a generated database (`airline_rules.build_airline_db`:
`airline_data.generate_db` from a stored seed, plus look-alike distractor reservations and a namesake user)
whose reservations can carry every request. It then serves the requests as a policy-following agent would
(`airline_requests`, one method per request kind, on the primitives of `airline_script`): it asks the customer
one thing at a time, calls the tools on a working copy of the database (so later requests see what earlier
ones changed), decides by the policy's rules and records every call as a gold action. The messages and tool
calls it wrote are the task's oracle script; the facts it asked for, the customer's requests and what must be
said make the scripted customer's scenario and the COMMUNICATE checks.

The oracle is checked on the way and at the end: every question must reach exactly the fact it asks for,
every request must reach the decision it was drawn for, every oracle tool call must succeed (`Rejected`
otherwise), and the script must stay within `MAX_ORACLE_STEPS`. Then `replay` plays the script against the
scripted customer on a scratch env; a task is kept only when that run ends with score 1.0 exactly at its last
action. A draw the customer cannot carry is drawn again (`Redraw`, part of sampling); any other failure is a
generator bug, counted in `AirlineEnv.rejections` and drawn again, never silently dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from magic_envs.core.tasks import fingerprint, iid_split_of, roundtrip
from magic_envs.procedures import airline_data
from magic_envs.procedures.airline_requests import Requests
from magic_envs.procedures.airline_rules import (
    RULES,
    airline_cancelled,
    build_airline_db,
    cancel_grounds,
    compensation_grounds,
    free_bags,
    generated_db,
    shallow_copy,
    trip_key,
    upcoming,
    was_flown,
)
from magic_envs.procedures.airline_script import Redraw, Rejected, Request
from magic_envs.procedures.airline_tools import CABINS
from magic_envs.procedures.user_sim import scenario_text

if TYPE_CHECKING:
    from magic_envs.procedures.airline import AirlineEnv

# Request kinds and their weights in a draw. Refusals and transfers are kinds of their own: the same ask on a
# reservation the policy does not let the agent act on.
IID_KINDS = {"book": 3, "cancel": 2, "cancel_refused": 2, "cancel_flown": 1, "change_flights": 2,
             "change_basic_refused": 1, "change_cabin": 2, "cabin_flown_refused": 1, "add_bags": 2,
             "remove_bags_refused": 1, "update_passenger": 2, "passenger_count_refused": 1, "flight_status": 1,
             "compensation": 1, "compensation_refused": 1, "other_user_refused": 1, "transfer": 1}
OOD_KINDS = {"book_onestop": 1, "insurance_refused": 1, "total_paid": 1}  # never drawn in train/test
TOLD = ("flight_status", "total_paid")       # answers: at most one per task, first (its fact is then unsaid)
TRANSFERS = ("transfer", "cancel_flown")     # the conversation ends with the transfer: at most one, last
ONCE = (*TOLD, *TRANSFERS, "book", "book_onestop", "remove_bags_refused", "passenger_count_refused",
        "insurance_refused")
# ood_policy: policy variants never seen in train/test, each with the request kind whose handling it changes.
VARIANTS = {"cancel_48h": "cancel", "certificate_150": "compensation", "bags_plus_one": "add_bags"}
MAX_ORACLE_STEPS = 45  # the registered turn cap is 50
PERSONAS = {False: ("Polite and patient.", "In a hurry; answers briefly.", "Friendly and chatty.",
                    "A little anxious about the trip.", "Direct and matter-of-fact."),
            True: ("Formal and precise.", "Tired after a long week; terse.", "Cheerful, uses many exclamations.",
                   "Skeptical; wants to know exactly what happens.")}
CLOSINGS = {False: ("Thank you, that is all.", "Great, thanks for your help!", "Perfect, that's everything."),
            True: ("Much obliged, that settles it.", "Splendid, nothing else for today.")}


# ------------------------------------------------------------------------------------- the planner (oracle)

HANDLERS = {"cancel_refused": "_cancel", "cancel_flown": "_cancel", "change_basic_refused": "_change_flights",
            "cabin_flown_refused": "_change_cabin", "compensation_refused": "_compensation"}
LOCATES = ("cancel", "cancel_refused", "cancel_flown", "change_flights", "change_basic_refused", "change_cabin",
           "cabin_flown_refused", "add_bags", "update_passenger", "compensation", "compensation_refused",
           "total_paid")  # kinds that act on one of the customer's reservations


class _Planner(Requests):
    """Draws one task for `env` from `rng` and serves it as a policy-following agent: the script of messages
    and tool calls (one per action), the gold actions, and the scenario the scripted customer plays."""

    def __init__(self, env: AirlineEnv, rng: np.random.Generator):
        self.env, self.rng = env, rng
        self.variant = sorted(VARIANTS)[int(rng.integers(len(VARIANTS)))] if env.split == "ood_policy" else "base"
        self.rules = RULES[self.variant]
        self.ood = env.split == "ood"
        self.words = airline_data.VOCABULARY[self.ood]

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    # ---- the task ---------------------------------------------------------------------------------------
    def draft(self, db_seed: int) -> dict:
        """The whole task on the database of `db_seed`, oracle script included (not yet replayed)."""
        env, rng = self.env, self.rng
        spec = {"seed": db_seed, "size": env.size, "ood": self.ood}
        kinds, affected = self.kinds()
        modes = [self.mode(kind) for kind in kinds]
        base = generated_db(db_seed, env.size, self.ood)
        user, targets = self.choose(base, kinds, modes, affected)
        if env.distractors:
            like = [t for k, t in zip(kinds, targets) if t and k != "other_user_refused"]
            if not like and user["reservations"]:
                like = [self.pick(user["reservations"])]
            spec["distractors"] = {"seed": int(rng.integers(2 ** 31)), "user": user["user_id"], "like": like,
                                   "copies": env.distractors, "namesake": True}
        # The working copy shares its records with the (shared, unchanged) initial database; a write first
        # copies the records it changes (`own`), as copying a whole database per draft costs the most.
        self.db, self.user_id, self.owned = shallow_copy(build_airline_db(spec)), user["user_id"], set()
        self.script, self.actions, self.seen = [], [], set()
        self.msg("I'd be glad to help. First, could you please tell me your user id?")
        self.call(-1, "get_user_details", user_id=self.user_id)
        self.profile = list(self.db["users"][self.user_id]["reservations"])
        requests, said, unknown = [], [], []
        for index, (kind, target, mode, hit) in enumerate(zip(kinds, targets, modes, affected)):
            req = Request(index, kind, target, mode)
            req.affected = hit
            getattr(self, HANDLERS.get(kind, "_" + kind))(req)
            self.check_questions(req)
            requests.append({"kind": kind, "done": req.done, "communicate": req.communicate,
                             "ambiguous": mode or "", "policy_affected": hit})
            said.append({"say": req.say, "facts": req.facts})
            unknown += req.unknown
        if len(self.script) > MAX_ORACLE_STEPS:
            raise Redraw
        scenario = {"persona": self.pick(PERSONAS[self.ood]), "identity": {"user_id": self.user_id},
                    "requests": said, "closing": self.pick(CLOSINGS[self.ood]), "unknown": unknown}
        # what a model playing the customer reads: the scripted customer's scenario, and what it does not know
        scenario["text"] = scenario_text(scenario) + "".join(f"\nYou do not know {u}." for u in unknown)
        return {"domain": "airline", "policy": self.variant, "db": spec, "scenario": scenario,
                "actions": self.actions, "communicate": [p for r in requests for p in r["communicate"]],
                "reward_basis": ["DB", "COMMUNICATE"], "requests": requests, "oracle": self.script}

    def kinds(self) -> tuple[list[str], list[bool]]:
        """The request kinds in conversation order, and which one the policy variant decides (ood_policy)."""
        low, high = self.env.n_requests
        n = int(self.rng.integers(low, high + 1))
        pool = dict(IID_KINDS, **OOD_KINDS) if self.ood else IID_KINDS
        names, weights = list(pool), np.array(list(pool.values()), float)
        kinds = [self.pick(sorted(OOD_KINDS))] if self.ood else []
        kinds += [VARIANTS[self.variant]] if self.variant != "base" else []
        while len(kinds) < n:
            kind = names[int(self.rng.choice(len(names), p=weights / weights.sum()))]
            clash = ((kind in ONCE and kind in kinds) or (kind in TOLD and set(TOLD) & set(kinds))
                     or (kind in TRANSFERS and set(TRANSFERS) & set(kinds)))
            if not clash:
                kinds.append(kind)
        hit = [self.variant != "base" and k == 0 for k in range(len(kinds))]  # the variant's kind, drawn first
        order = [int(i) for i in self.rng.permutation(len(kinds))]
        order.sort(key=lambda i: 0 if kinds[i] in TOLD else 2 if kinds[i] in TRANSFERS else 1)
        return [kinds[i] for i in order], [hit[i] for i in order]

    def mode(self, kind: str):
        """How an ambiguous customer names the thing: no reservation id, a wrong one first, or cities."""
        if self.rng.random() >= self.env.ambiguous:
            return None
        if kind in LOCATES:
            return self.pick(["unknown", "wrong"])
        return "cities" if kind.startswith("book") else None

    # ---- whom the requests are about ---------------------------------------------------------------------
    def choose(self, db: dict, kinds: list, modes: list, affected: list) -> tuple[dict, list]:
        users = list(db["users"].values())
        for u in self.rng.permutation(len(users)):
            user, chosen = users[int(u)], []
            for kind, mode, hit in zip(kinds, modes, affected):
                target = self.target_for(db, user, kind, mode, hit, chosen)
                if target is False:
                    break
                chosen.append(target)
            else:
                return user, chosen
        raise Redraw

    def target_for(self, db, user, kind, mode, hit, taken):
        """A reservation id the request acts on, None if it needs none, False if this customer cannot carry it."""
        if kind == "other_user_refused":
            others = [r for r, res in db["reservations"].items() if res["user_id"] != user["user_id"]
                      and res["status"] is None]
            return self.pick(others) if others else False
        if kind.startswith("book"):
            return None if any(pm["source"] == "credit_card" for pm in user["payment_methods"].values()) else False
        if kind not in LOCATES:
            return None
        keys = [trip_key(db["reservations"][r]) for r in user["reservations"]]
        fits = [r for r in user["reservations"] if r not in taken and db["reservations"][r]["status"] is None
                and (mode is None or keys.count(trip_key(db["reservations"][r])) == 1)
                and self.fits(db, user, kind, db["reservations"][r], hit)]
        return self.pick(fits) if fits else False

    def fits(self, db, user, kind, r, hit) -> bool:
        flown = was_flown(db, r)
        if kind in ("cancel_flown", "cabin_flown_refused"):
            return flown
        if kind == "cancel":
            if hit:  # cancel_48h: booked 24 to 48 hours ago, no other ground
                return (not flown and not cancel_grounds(db, r, "change_of_plan", RULES["base"])
                        and bool(cancel_grounds(db, r, "change_of_plan", self.rules)))
            return not flown and bool(cancel_grounds(db, r, "health", self.rules))
        if kind == "cancel_refused":
            return not flown and not cancel_grounds(db, r, "change_of_plan", self.rules)
        if kind in ("compensation", "compensation_refused"):
            eligible = bool(compensation_grounds(user, r))
            return airline_cancelled(db, r) and eligible == (kind == "compensation")
        if kind == "total_paid":
            return True
        if not upcoming(r):
            return False
        if kind == "change_flights":
            return r["cabin"] != "basic_economy" and bool(self.moves(db, r))
        if kind == "change_basic_refused":
            return r["cabin"] == "basic_economy"
        if kind == "change_cabin":
            return bool(self.new_cabins(db, r))
        if kind == "add_bags":
            return bool(self.bag_counts(user, r, hit))
        return True  # update_passenger

    def moves(self, db: dict, r: dict) -> list[tuple[int, str]]:
        """(segment index, new date) pairs a flight change can take: same route, trip stays in order, a flight
        with seats in the cabin for everyone that day."""
        shape = (r["flight_type"], len(r["flights"]))
        if shape not in (("one_way", 1), ("round_trip", 2)):
            return []
        days = [int(s["date"][8:]) for s in r["flights"]]
        out = []
        for k, segment in enumerate(r["flights"]):
            if shape[0] == "one_way":
                span = range(airline_data.TODAY + 1, airline_data.DAYS + 1)
            elif k == 0:
                span = range(airline_data.TODAY + 1, days[1] - 1)
            else:
                span = range(days[0] + 2, airline_data.DAYS + 1)
            for day in span:
                date = f"2024-05-{day:02d}"
                if date != segment["date"] and any(
                        f["origin"] == segment["origin"] and f["destination"] == segment["destination"]
                        and f["dates"][date]["available_seats"][r["cabin"]] >= len(r["passengers"])
                        for f in db["flights"].values()):
                    out.append((k, date))
        return out

    def new_cabins(self, db: dict, r: dict) -> list[str]:
        n = len(r["passengers"])
        return [c for c in CABINS if c != r["cabin"] and all(
            db["flights"][s["flight_number"]]["dates"][s["date"]]["available_seats"][c] >= n for s in r["flights"])]

    def bag_counts(self, user: dict, r: dict, hit: bool) -> list[int]:
        """How many bags the customer may add (1-3); with the bag variant, only counts it makes cheaper."""
        allowance = free_bags(RULES["base"], user["membership"], r["cabin"]) * len(r["passengers"])
        return [k for k in (1, 2, 3) if not hit or r["total_baggages"] + k > max(allowance, r["total_baggages"])]


# ------------------------------------------------------------------------------------------- drawing a task

def draw(env: AirlineEnv, rng: np.random.Generator, check_split: bool) -> dict:
    """Draft tasks until one's oracle, replayed on a scratch env, scores 1.0. Train and test share one
    distribution but never a database: the fingerprint of the database's seed decides the split, so two
    tasks of different splits always differ (in that seed)."""
    for attempt in range(1000):
        if attempt % 8 == 0:  # drafts share a database until a few fail (generating one costs the most)
            db_seed = int(rng.integers(2 ** 31))
            while check_split and iid_split_of(fingerprint({"seed": db_seed})) != env.split:
                db_seed = int(rng.integers(2 ** 31))
        try:
            task = roundtrip(_Planner(env, rng).draft(db_seed))
        except Redraw:
            continue
        except Rejected as error:
            env._reject(None, str(error))
            continue
        problem = replay(env._scratch(), task)
        if not problem:
            return task
        env._reject(task, problem)
    raise RuntimeError(f"AirlineEnv could not draw a {env.split!r} task in 1000 tries")


def replay(scratch: AirlineEnv, task: dict) -> str:
    """Why the task's oracle fails against the scripted customer on the fresh env `scratch`, or "" when it
    scores 1.0 exactly at its last action."""
    scratch.reset(options={"task": task})
    script = task["oracle"]
    for k, action in enumerate(script):
        _, reward, terminated, _, info = scratch.step(action)
        if not info["valid"] or (terminated and (k < len(script) - 1 or reward != 1.0)):
            return f"step {k}: reward {reward}, {info['error'] or scratch.violations()}"
    return "" if terminated else "the conversation did not end with the script"
