"""The task generator of magic/Airline-v0 (`airline.AirlineEnv`): tasks, their gold actions and their oracle scripts.

`draw` makes a task. `_Planner.draft` picks the request kinds (weighted `IID_KINDS`; `OOD_KINDS` only in the
ood split; in ood_policy one policy variant of `VARIANTS`/`RULES` and the request kind it changes), how
ambiguously the customer names things, and a customer of a generated database (`build_airline_db`:
`airline_data.generate_db` from a stored seed, plus look-alike distractor reservations and a namesake user)
whose reservations can carry every request. It then serves the requests as a policy-following agent would:
it asks the customer one thing at a time, calls the tools on a working copy of the database (so later
requests see what earlier ones changed), decides by the policy's rules and records every call as a gold
action. The messages and tool calls it wrote are the task's oracle script; the facts it asked for, the
customer's requests and what must be said make the scripted customer's scenario and the COMMUNICATE checks.

The oracle is checked on the way and at the end: every question must reach exactly the fact it asks for,
every request must reach the decision it was drawn for, every oracle tool call must succeed (`_Rejected`
otherwise), and the script must stay within `MAX_ORACLE_STEPS`. Then `replay` plays the script against the
scripted customer on a scratch env; a task is kept only when that run ends with score 1.0 exactly at its last
action. A draw the customer cannot carry is drawn again (`_Redraw`, part of sampling); any other failure is a
generator bug, counted in `AirlineEnv.rejections` and drawn again, never silently dropped.
"""

from __future__ import annotations

import datetime
import functools
import json
from typing import TYPE_CHECKING

import numpy as np

from magic_envs.core.grammar import format_tool_call
from magic_envs.core.tasks import fingerprint, iid_split_of, roundtrip
from magic_envs.procedures import airline_data, airline_tools
from magic_envs.procedures.airline_tools import (
    BAG_PRICE,
    CABINS,
    FREE_BAGS,
    INSURANCE_PRICE,
    NEW_RESERVATION_IDS,
)
from magic_envs.procedures.database import ToolError, fresh_copy
from magic_envs.procedures.service import TRANSFER_TOOL
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
RULES = {"base": {"cancel_hours": 24, "certificate": 100, "bag_bonus": 0},
         "cancel_48h": {"cancel_hours": 48, "certificate": 100, "bag_bonus": 0},
         "certificate_150": {"cancel_hours": 24, "certificate": 150, "bag_bonus": 0},
         "bags_plus_one": {"cancel_hours": 24, "certificate": 100, "bag_bonus": 1}}
TRANSFER_NOTICE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
TODAY, NOW = "2024-05-15", datetime.datetime(2024, 5, 15, 15, 0)
MAX_ORACLE_STEPS = 45  # the registered turn cap is 50
PERSONAS = {False: ("Polite and patient.", "In a hurry; answers briefly.", "Friendly and chatty.",
                    "A little anxious about the trip.", "Direct and matter-of-fact."),
            True: ("Formal and precise.", "Tired after a long week; terse.", "Cheerful, uses many exclamations.",
                   "Skeptical; wants to know exactly what happens.")}
CLOSINGS = {False: ("Thank you, that is all.", "Great, thanks for your help!", "Perfect, that's everything."),
            True: ("Much obliged, that settles it.", "Splendid, nothing else for today.")}
GOALS = ("file a claim for a checked bag that the airline lost on my last trip",
         "arrange wheelchair assistance at the airport for my next trip",
         "book a trip for a group of eight colleagues", "pay for an upgrade with my frequent flyer miles",
         "complain about how the gate staff treated me yesterday")
REASONS = {"change_of_plan": "My plans changed.", "airline_cancelled": "The airline cancelled my flight.",
           "health": "I am sick and my doctor told me not to travel.",
           "weather": "A big storm is forecast at my destination.", "other": "I just don't want to go anymore."}
REASON_WORDS = {"change_of_plan": "a change of plan", "airline_cancelled": "the airline's cancellation",
                "health": "a health reason", "weather": "a weather reason", "other": "a personal reason"}
PREFERENCES = {"cheapest": "The cheapest one, please.", "earliest": "The one that leaves earliest, please.",
               "latest": "The one that leaves latest, please."}


def free_bags(rules: dict, membership: str, cabin: str) -> int:
    """Free checked bags per passenger under a policy variant."""
    return FREE_BAGS[membership][cabin] + rules["bag_bonus"]


# ------------------------------------------------------------------------------------------- the database

@functools.lru_cache(maxsize=16)
def _generated(seed: int, size: int, ood: bool) -> dict:
    """The generated database of a seed, made once per process; shared, so never changed (copy it first)."""
    return airline_data.generate_db(np.random.default_rng(seed), size, ood=ood)


_BUILT: dict[str, dict] = {}  # canonical db spec -> its initial database (shared, never changed)


def build_airline_db(spec: dict) -> dict:
    """The initial database of a task: `generate_db` from the stored seed, plus its distractors. The result
    is shared between the episodes of a task (ServiceEnv never changes its initial database): copy it before
    changing anything."""
    try:
        seed, size, ood = int(spec["seed"]), int(spec.get("size", 1)), bool(spec.get("ood", False))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"an airline task's db needs an integer seed: {spec!r}") from error
    if not 1 <= size <= 8:
        raise ValueError(f"db size must lie in 1..8, got {size}")
    if not spec.get("distractors"):
        return _generated(seed, size, ood)
    key = json.dumps(spec, sort_keys=True)
    if key not in _BUILT:
        db = _shallow(_generated(seed, size, ood))
        try:
            user_id = spec["distractors"]["user"]
            db["users"][user_id] = fresh_copy(db["users"][user_id])  # the one record distractors change
            _add_distractors(db, spec["distractors"])
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
            raise ValueError(f"malformed distractors {spec['distractors']!r}") from error
        if len(_BUILT) >= 16:
            _BUILT.pop(next(iter(_BUILT)))
        _BUILT[key] = db
    return _BUILT[key]


def _shallow(db: dict) -> dict:
    """New tables holding the same records: a copy whose records must be copied before they change."""
    return {table: dict(records) for table, records in db.items()}


def _new_reservation_id(r: np.random.Generator, db: dict, letters_only: bool = False) -> str:
    chars = airline_data.ID_CHARS[:26] if letters_only else airline_data.ID_CHARS
    while True:
        rid = "".join(chars[int(i)] for i in r.integers(len(chars), size=6))
        if rid not in db["reservations"] and rid not in NEW_RESERVATION_IDS:
            return rid


def _add_distractors(db: dict, spec: dict) -> None:
    """Look-alikes of the customer's `like` reservations (same route, trip type, cabin and passengers, on other
    dates), `copies` of each, and a namesake: another user with the customer's first and last name."""
    r = np.random.default_rng(int(spec["seed"]))
    user = db["users"][spec["user"]]
    taken = {_key(db["reservations"][rid]) for rid in user["reservations"]}
    for rid in spec.get("like", []):
        for _ in range(int(spec.get("copies", 1))):
            source = db["reservations"][rid]
            days = [int(s["date"][8:]) for s in source["flights"]]
            low = airline_data.TODAY + 1 if min(days) > airline_data.TODAY else 1
            shifts = [k for k in range(low - min(days), airline_data.DAYS - max(days) + 1)
                      if k and (source["flight_type"], source["origin"], source["destination"],
                                f"2024-05-{days[0] + k:02d}") not in taken]
            if not shifts:
                continue
            shift = shifts[int(r.integers(len(shifts)))]
            clone = json.loads(json.dumps(source))
            for segment, day in zip(clone["flights"], days):
                segment["date"] = f"2024-05-{day + shift:02d}"
                status = db["flights"][segment["flight_number"]]["dates"][segment["date"]]
                if status["status"] == "available":
                    segment["price"] = status["prices"][clone["cabin"]]
            n = len(clone["passengers"])
            insured = clone["insurance"] == "yes"
            amount = (sum(s["price"] for s in clone["flights"]) * n + INSURANCE_PRICE * n * insured
                      + BAG_PRICE * clone["nonfree_baggages"])
            created = min(int(source["created_at"][8:10]) if source["created_at"][5:7] == "05" else 0,
                          days[0] + shift - 1)
            stamp = "2024-04-30" if created == 0 else f"2024-05-{created:02d}"
            clone.update(reservation_id=_new_reservation_id(r, db), status=None,
                         payment_history=[{"payment_id": source["payment_history"][0]["payment_id"], "amount": amount}],
                         created_at=stamp + source["created_at"][10:])
            db["reservations"][clone["reservation_id"]] = clone
            taken.add(_key(clone))
            user["reservations"].insert(int(r.integers(len(user["reservations"]) + 1)), clone["reservation_id"])
    if spec.get("namesake"):
        first, last = user["name"]["first_name"], user["name"]["last_name"]
        donor = list(db["users"].values())[int(r.integers(len(db["users"])))]
        while True:
            number = int(r.integers(1000, 10000))
            user_id = f"{first}_{last}_{number}".lower()
            if user_id not in db["users"]:
                break
        pm_id = f"credit_card_{int(r.integers(10 ** 6, 10 ** 7))}"
        db["users"][user_id] = {
            "user_id": user_id, "name": {"first_name": first, "last_name": last},
            "address": dict(donor["address"], address1=f"{int(r.integers(1, 1000))} "
                                                       f"{donor['address']['address1'].split(' ', 1)[1]}"),
            "email": f"{first}.{last}{number}@example.com".lower(),
            "dob": f"{int(r.integers(1950, 2004))}-{int(r.integers(1, 13)):02d}-{int(r.integers(1, 29)):02d}",
            "payment_methods": {pm_id: {"source": "credit_card", "id": pm_id,
                                        "brand": ("visa", "mastercard")[int(r.integers(2))],
                                        "last_four": str(int(r.integers(1000, 10000)))}},
            "saved_passengers": [dict(p) for p in donor["saved_passengers"][:1]],
            "membership": airline_tools.MEMBERSHIPS[int(r.integers(3))], "reservations": []}


def _key(reservation: dict) -> tuple:
    """What a customer's description of a reservation names: trip type, route and first date."""
    return (reservation["flight_type"], reservation["origin"], reservation["destination"],
            reservation["flights"][0]["date"])


# ---------------------------------------------------------------------------------------- reading the data

def _status(db: dict, segment: dict) -> str:
    return db["flights"][segment["flight_number"]]["dates"][segment["date"]]["status"]


def _flown(db: dict, reservation: dict) -> bool:
    return any(s["date"] <= TODAY and _status(db, s) in ("landed", "flying") for s in reservation["flights"])


def _future(reservation: dict) -> bool:
    return reservation["status"] is None and all(s["date"] > TODAY for s in reservation["flights"])


def _airline_cancelled(db: dict, reservation: dict) -> bool:
    return any(s["date"] <= TODAY and _status(db, s) == "cancelled" for s in reservation["flights"])


def _booked_within(reservation: dict, hours: int) -> bool:
    return reservation["created_at"] >= (NOW - datetime.timedelta(hours=hours)).isoformat()


def _cancel_grounds(db: dict, reservation: dict, reason: str, rules: dict) -> list[str]:
    """The policy's grounds that allow cancelling (empty: not eligible)."""
    grounds = []
    if _booked_within(reservation, rules["cancel_hours"]):
        grounds.append(f"it was booked within the last {rules['cancel_hours']} hours")
    if _airline_cancelled(db, reservation):
        grounds.append("the airline cancelled one of its flights")
    if reservation["cabin"] == "business":
        grounds.append("it is in business class")
    if reservation["insurance"] == "yes" and reason in ("health", "weather"):
        grounds.append(f"it has travel insurance, which covers {REASON_WORDS[reason]}")
    return grounds


def _compensation_grounds(user: dict, reservation: dict) -> list[str]:
    grounds = [f"you are a {user['membership']} member"] if user["membership"] in ("silver", "gold") else []
    if reservation["insurance"] == "yes":
        grounds.append("the reservation has travel insurance")
    if reservation["cabin"] == "business":
        grounds.append("it is in business class")
    return grounds


def _options(found: list, cabin: str, passengers: int) -> list:
    """Search results (flights, or pairs of flights) with seats in `cabin` for every passenger."""
    legs = (lambda o: o if isinstance(o, list) else [o])
    return [o for o in found if all(leg["available_seats"][cabin] >= passengers for leg in legs(o))]


def _price(option, cabin: str) -> int:
    return sum(leg["prices"][cabin] for leg in (option if isinstance(option, list) else [option]))


def _departure(option) -> str:
    return (option[0] if isinstance(option, list) else option)["scheduled_departure_time_est"]


def _minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:5])


def _best(options: list, cabin: str, preference: str):
    """The option a preference picks, or None when two options tie for it."""
    key = {"cheapest": lambda o: _price(o, cabin), "earliest": lambda o: _minutes(_departure(o)),
           "latest": lambda o: -_minutes(_departure(o))}[preference]
    ranked = sorted(options, key=key)
    return ranked[0] if len(ranked) == 1 or key(ranked[0]) != key(ranked[1]) else None


# ---------------------------------------------------------------------------------------------- phrasing

def _day(date: str) -> str:
    return f"May {int(date[8:])}"


def _cabin(cabin: str) -> str:
    return cabin.replace("_", " ")


def _money(amount) -> str:
    return f"${amount:g}" if isinstance(amount, float) else f"${amount}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _person(p: dict) -> str:
    return f"{p['first_name']} {p['last_name']}"


def _segments(reservation: dict) -> str:
    return "; ".join(f"{s['flight_number']} from {s['origin']} to {s['destination']} on {s['date']}"
                     for s in reservation["flights"])


def _option_text(option, cabin: str) -> str:
    legs = option if isinstance(option, list) else [option]
    route = " then ".join(f"{leg['flight_number']} ({leg['origin']} {_clock(leg['scheduled_departure_time_est'])} to "
                          f"{leg['destination']} {_clock(leg['scheduled_arrival_time_est'])})" for leg in legs)
    return f"{route} at {_money(_price(option, cabin))} per passenger"


def _clock(time: str) -> str:
    return time[:5] + (" the next day" if time.endswith("+1") else "")


def _pm_phrase(user: dict, pm_id: str) -> str:
    """How a customer names one of their payment methods."""
    pm = user["payment_methods"][pm_id]
    if pm["source"] == "credit_card":
        return f"my {pm['brand']} credit card ending in {pm['last_four']}"
    return f"my {'gift card' if pm['source'] == 'gift_card' else 'travel certificate'} {pm_id}"


class _Redraw(Exception):
    """The drawn customer cannot carry the drawn requests: draw again (part of sampling, not a rejection)."""


class _Rejected(Exception):
    """The oracle's own run broke a rule it must keep: a generator bug."""


class _Request:
    """One request while it is planned: what the customer says and knows, and how it ends."""

    def __init__(self, index: int, kind: str, target, mode):
        self.index, self.kind, self.target, self.mode = index, kind, target, mode
        self.say, self.facts, self.done, self.communicate = "", {}, "state", []
        self.preference, self.affected, self.unknown = "", False, []
        self.asked: list[tuple[str, str]] = []

    def end(self, done: str, phrase: str) -> None:
        self.done, self.communicate = done, [phrase]


# ------------------------------------------------------------------------------------- the planner (oracle)

HANDLERS = {"cancel_refused": "_cancel", "cancel_flown": "_cancel", "change_basic_refused": "_change_flights",
            "cabin_flown_refused": "_change_cabin", "compensation_refused": "_compensation"}
LOCATES = ("cancel", "cancel_refused", "cancel_flown", "change_flights", "change_basic_refused", "change_cabin",
           "cabin_flown_refused", "add_bags", "update_passenger", "compensation", "compensation_refused",
           "total_paid")  # kinds that act on one of the customer's reservations


class _Planner:
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
        base = _generated(db_seed, env.size, self.ood)
        user, targets = self.choose(base, kinds, modes, affected)
        if env.distractors:
            like = [t for k, t in zip(kinds, targets) if t and k != "other_user_refused"]
            if not like and user["reservations"]:
                like = [self.pick(user["reservations"])]
            spec["distractors"] = {"seed": int(rng.integers(2 ** 31)), "user": user["user_id"], "like": like,
                                   "copies": env.distractors, "namesake": True}
        # The working copy shares its records with the (shared, unchanged) initial database; a write first
        # copies the records it changes (`own`), as copying a whole database per draft costs the most.
        self.db, self.user_id, self.owned = _shallow(build_airline_db(spec)), user["user_id"], set()
        self.script, self.actions, self.seen = [], [], set()
        self.msg("I'd be glad to help. First, could you please tell me your user id?")
        self.call(-1, "get_user_details", user_id=self.user_id)
        self.profile = list(self.db["users"][self.user_id]["reservations"])
        requests, said, unknown = [], [], []
        for index, (kind, target, mode, hit) in enumerate(zip(kinds, targets, modes, affected)):
            req = _Request(index, kind, target, mode)
            req.affected = hit
            getattr(self, HANDLERS.get(kind, "_" + kind))(req)
            self.check_questions(req)
            requests.append({"kind": kind, "done": req.done, "communicate": req.communicate,
                             "ambiguous": mode or "", "policy_affected": hit})
            said.append({"say": req.say, "facts": req.facts})
            unknown += req.unknown
        if len(self.script) > MAX_ORACLE_STEPS:
            raise _Redraw
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
        raise _Redraw

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
        keys = [_key(db["reservations"][r]) for r in user["reservations"]]
        fits = [r for r in user["reservations"] if r not in taken and db["reservations"][r]["status"] is None
                and (mode is None or keys.count(_key(db["reservations"][r])) == 1)
                and self.fits(db, user, kind, db["reservations"][r], hit)]
        return self.pick(fits) if fits else False

    def fits(self, db, user, kind, r, hit) -> bool:
        flown = _flown(db, r)
        if kind in ("cancel_flown", "cabin_flown_refused"):
            return flown
        if kind == "cancel":
            if hit:  # cancel_48h: booked 24 to 48 hours ago, no other ground
                return (not flown and not _cancel_grounds(db, r, "change_of_plan", RULES["base"])
                        and bool(_cancel_grounds(db, r, "change_of_plan", self.rules)))
            return not flown and bool(_cancel_grounds(db, r, "health", self.rules))
        if kind == "cancel_refused":
            return not flown and not _cancel_grounds(db, r, "change_of_plan", self.rules)
        if kind in ("compensation", "compensation_refused"):
            eligible = bool(_compensation_grounds(user, r))
            return _airline_cancelled(db, r) and eligible == (kind == "compensation")
        if kind == "total_paid":
            return True
        if not _future(r):
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

    # ---- acting -----------------------------------------------------------------------------------------
    def msg(self, text: str) -> None:
        self.script.append(text)

    def call(self, index: int, name: str, **arguments):
        arguments = json.loads(json.dumps(arguments))
        self.script.append(format_tool_call(name, arguments))
        self.actions.append({"name": name, "arguments": arguments, "request": index})
        if name in airline_tools.WRITE_TOOLS:
            self.own("users", self.user_id)
            reservation = self.own("reservations", arguments.get("reservation_id"))
            for segment in (reservation or {}).get("flights", []) + arguments.get("flights", []):
                self.own("flights", segment["flight_number"])
        try:
            result = airline_tools.call(self.db, name, json.loads(json.dumps(arguments)), quirks=False)
        except ToolError as error:
            raise _Rejected(f"the oracle's {name} failed: {error}") from error
        try:
            return json.loads(result)
        except ValueError:
            return result

    def own(self, table: str, key):
        """Copy a record of the working database before a write changes it; the record (None if absent)."""
        if key in self.db[table] and (table, key) not in self.owned:
            self.db[table][key] = fresh_copy(self.db[table][key])
            self.owned.add((table, key))
        return self.db[table].get(key)

    def ask(self, req: _Request, text: str, key: str, answer: str) -> None:
        req.facts[key] = answer
        req.asked.append((text, key))
        self.msg(text)

    def confirm(self, details: str) -> None:
        self.msg(f"{details} Shall I proceed (yes/no)?")

    def expect(self, req: _Request, kind: str) -> None:
        """The policy's decision must be the one the request was drawn for."""
        if req.kind != kind:
            raise _Rejected(f"a {req.kind} request was handled as {kind}")

    def check_questions(self, req: _Request) -> None:
        """Each question reaches exactly the fact it asks for, and none reads as a confirmation request."""
        from magic_envs.procedures.user_sim import _ASKS_CONFIRMATION

        for text, key in req.asked:
            low = text.lower()
            matched = {k for k in req.facts if any(w.strip().lower() in low for w in k.split("|"))}
            if matched != {key} or "user id" in low or _ASKS_CONFIRMATION.search(low):
                raise _Rejected(f"the question {text!r} reaches {matched}, not {key!r}")

    def user(self) -> dict:
        return self.db["users"][self.user_id]

    def locate(self, req: _Request) -> dict:
        """Find the request's reservation as an agent does: by the id the customer gives, or among the
        customer's reservations from their description."""
        target, question = self.db["reservations"][req.target], "Could you tell me the reservation id?"
        if req.mode is None:
            self.ask(req, question, "reservation id", f"The reservation id is {req.target}.")
        elif req.mode == "unknown":
            self.ask(req, question, "reservation id", "I don't have the reservation id at hand.")
            lead = "No problem."
        else:  # a wrong id first (letters only, so it never contains a number the agent must say later)
            wrong = _new_reservation_id(self.rng, self.db, letters_only=True)
            self.ask(req, question, "reservation id", f"I think it is {wrong}.")
            lead = f"I could not find {wrong} among the reservations in your profile."
        if req.mode is not None:
            cities = [airline_data.AIRPORT_CITIES[target[end]] for end in ("origin", "destination")]
            req.unknown.append(f"the reservation id of your trip from {cities[0]} to {cities[1]}")
            trip = "one-way trip" if target["flight_type"] == "one_way" else "round trip"
            self.ask(req, f"{lead} Could you describe the trip: where it goes from and to, and the date of its "
                          "first flight?", "describe the trip",
                     f"It is my {trip} from {cities[0]} to {cities[1]}, first flight on "
                     f"{_day(target['flights'][0]['date'])}.")
            for rid in self.profile:
                if rid in self.seen and _key(self.db["reservations"][rid]) != _key(target):
                    continue
                found = self.call(req.index, "get_reservation_details", reservation_id=rid)
                self.seen.add(rid)
                if _key(found) == _key(target):
                    break
        found = self.call(req.index, "get_reservation_details", reservation_id=req.target) \
            if req.mode is None else found
        self.seen.add(req.target)
        if found["reservation_id"] != req.target:
            raise _Rejected(f"the description found {found['reservation_id']}, not {req.target}")
        return found

    def check_flights(self, req: _Request, r: dict) -> None:
        """The status of every flight of the reservation up to today (flown? cancelled by the airline?)."""
        for segment in r["flights"]:
            if segment["date"] <= TODAY:
                self.call(req.index, "get_flight_status", flight_number=segment["flight_number"],
                          date=segment["date"])

    def pay(self, req: _Request, amount: int, question: str) -> str:
        """Ask which card or gift card pays `amount` (negative: receives the refund)."""
        user = self.user()
        usable = [k for k, pm in user["payment_methods"].items() if pm["source"] == "credit_card"
                  or (pm["source"] == "gift_card" and pm["amount"] >= amount)]
        if not usable:
            raise _Redraw
        pm_id = self.pick(usable)
        self.ask(req, question, "payment method", f"Please use {_pm_phrase(user, pm_id)}.")
        return pm_id

    def difference(self, amount: int, pm_id: str) -> str:
        if amount > 0:
            return f"The price difference of {_money(amount)} will be charged to {pm_id}."
        if amount < 0:
            return f"The price difference of {_money(-amount)} will be refunded to {pm_id}."
        return "There is no price difference to pay."

    def trip(self, r: dict) -> str:
        kind = "one-way trip" if r["flight_type"] == "one_way" else "round trip"
        return f"the {kind} from {r['origin']} to {r['destination']}"

    # ---- the request kinds --------------------------------------------------------------------------------
    def _cancel(self, req: _Request) -> None:
        req.say = self.pick(["I need to cancel one of my reservations.", "I'd like to cancel a reservation, please."])
        r = self.locate(req)
        self.check_flights(req, r)
        rid, n = r["reservation_id"], len(r["passengers"])
        if _flown(self.db, r):
            self.expect(req, "cancel_flown")
            self.call(req.index, TRANSFER_TOOL, summary=f"User {self.user_id} wants to cancel reservation {rid}, "
                                                        "part of which has already been flown.")
            self.msg(f"Part of reservation {rid} has already been flown, so its cancellation must be handled by a "
                     f"human agent. {TRANSFER_NOTICE}")
            return req.end("transfer", "transferred to a human agent")
        reason = self.reason(req, r)
        self.ask(req, "What is the reason for the cancellation?", "reason for", REASONS[reason])
        grounds = _cancel_grounds(self.db, r, reason, self.rules)
        if not grounds:
            self.expect(req, "cancel_refused")
            cover = (f"its travel insurance does not cover {REASON_WORDS[reason]}" if r["insurance"] == "yes"
                     else "it has no travel insurance")
            self.msg(f"I'm sorry, but reservation {rid} is not eligible for cancellation: it was booked on "
                     f"{r['created_at'][:10]}, more than {self.rules['cancel_hours']} hours ago; it is in "
                     f"{_cabin(r['cabin'])}; the airline cancelled none of its flights; and {cover}. It stays as it "
                     "is.")
            return req.end("refused", "not eligible")
        self.expect(req, "cancel")
        paid = sum(p["amount"] for p in r["payment_history"])
        self.confirm(f"Reservation {rid} can be cancelled because {grounds[0]}. I will cancel the whole reservation: "
                     f"{self.trip(r)} ({_segments(r)}), {_cabin(r['cabin'])}, {_plural(n, 'passenger')}. The "
                     f"{_money(paid)} paid goes back to the original payment method: at once for a gift card, "
                     "within 5 to 7 business days otherwise.")
        self.call(req.index, "cancel_reservation", reservation_id=rid)
        self.msg(f"Reservation {rid} is now cancelled, and the refund is on its way.")

    def reason(self, req: _Request, r: dict) -> str:
        """A reason the customer gives that leads to the outcome the request was drawn for."""
        if req.kind == "cancel_refused":
            return self.pick(["change_of_plan", "other"] if r["insurance"] == "yes" else
                             ["change_of_plan", "other", "health", "weather"])
        if req.affected:
            return "change_of_plan"
        choices = [k for k in REASONS if _cancel_grounds(self.db, r, k, self.rules)
                   and (k != "airline_cancelled" or _airline_cancelled(self.db, r))]
        return self.pick(choices)

    def _change_flights(self, req: _Request) -> None:
        req.say = "I'd like to move a flight of one of my reservations to another date."
        r = self.locate(req)
        rid, n, cabin = r["reservation_id"], len(r["passengers"]), r["cabin"]
        if cabin == "basic_economy":
            self.expect(req, "change_basic_refused")
            self.msg(f"I'm sorry, but reservation {rid} is in basic economy, and the flights of a basic economy "
                     "reservation cannot be changed.")
            return req.end("refused", "basic economy")
        self.expect(req, "change_flights")
        moves = self.moves(self.db, r)
        if not moves:
            raise _Redraw  # an earlier request of the task took the last seats
        k, date = self.pick(moves)
        old = r["flights"][k]
        part = "flight" if r["flight_type"] == "one_way" else ("outbound flight", "return flight")[k]
        self.ask(req, "Which part of the trip should move, and to what date?", "to what date",
                 f"The {part} on {_day(old['date'])}: I'd like to fly on {_day(date)} instead.")
        found = self.call(req.index, "search_direct_flight", origin=old["origin"], destination=old["destination"],
                          date=date)
        choice = self.offer(req, _options(found, cabin, n), cabin, n,
                            f"Here are the direct flights from {old['origin']} to {old['destination']} on {date} "
                            f"with {_cabin(cabin)} seats for {_plural(n, 'passenger')}")
        price = choice["prices"][cabin]
        diff = (price - old["price"]) * n
        pm_id = self.pay(req, diff, "Which payment method would you like to use for the price difference?")
        flights = [{"flight_number": s["flight_number"], "date": s["date"]} for s in r["flights"]]
        flights[k] = {"flight_number": choice["flight_number"], "date": date}
        self.confirm(f"Here is the change to reservation {rid} ({_cabin(cabin)}, {_plural(n, 'passenger')}): flight "
                     f"{old['flight_number']} on {old['date']} at {_money(old['price'])} per passenger becomes "
                     f"flight {choice['flight_number']} on {date} at {_money(price)} per passenger; the other "
                     f"flights stay as they are. {self.difference(diff, pm_id)}")
        self.call(req.index, "update_reservation_flights", reservation_id=rid, cabin=cabin, flights=flights,
                  payment_id=pm_id)
        self.msg(f"Done: reservation {rid} now has flight {choice['flight_number']} on {date}.")

    def offer(self, req: _Request, options: list, cabin: str, n: int, lead: str, question: str = "Which flight "
              "would you like?"):
        """List the bookable options and take the one the customer's preference picks."""
        prefs = [p for p in PREFERENCES if _best(options, cabin, p) is not None]
        if not prefs:
            raise _Redraw
        preference = req.preference or self.pick(prefs)
        if preference not in prefs:
            raise _Rejected(f"no unique {preference} option")
        req.preference = preference
        self.ask(req, f"{lead}: " + "; ".join(_option_text(o, cabin) for o in options) + f". {question}",
                 "which flight", PREFERENCES[preference])
        return _best(options, cabin, preference)

    def _change_cabin(self, req: _Request) -> None:
        req.say = "I'd like to change the cabin class of one of my reservations."
        r = self.locate(req)
        self.check_flights(req, r)
        rid, n = r["reservation_id"], len(r["passengers"])
        if _flown(self.db, r):
            self.expect(req, "cabin_flown_refused")
            self.msg(f"I'm sorry, but a flight of reservation {rid} has already been flown, so its cabin can no "
                     "longer be changed.")
            return req.end("refused", "flown")
        self.expect(req, "change_cabin")
        cabins = self.new_cabins(self.db, r)
        if not cabins:
            raise _Redraw
        cabin = self.pick(cabins)
        self.ask(req, "Which cabin would you like instead: basic economy, economy or business?", "which cabin",
                 f"{_cabin(cabin).capitalize()}, please.")
        prices = []
        for segment in r["flights"]:
            found = self.call(req.index, "search_direct_flight", origin=segment["origin"],
                              destination=segment["destination"], date=segment["date"])
            prices.append(next(f for f in found if f["flight_number"] == segment["flight_number"])["prices"][cabin])
        diff = (sum(prices) - sum(s["price"] for s in r["flights"])) * n
        pm_id = self.pay(req, diff, "Which payment method would you like to use for the price difference?")
        now = "; ".join(f"{s['flight_number']} at {_money(p)}" for s, p in zip(r["flights"], prices))
        self.confirm(f"Here is the change to reservation {rid}: every flight moves from {_cabin(r['cabin'])} to "
                     f"{_cabin(cabin)} at its current price per passenger ({now}), for {_plural(n, 'passenger')}. "
                     f"{self.difference(diff, pm_id)}")
        flights = [{"flight_number": s["flight_number"], "date": s["date"]} for s in r["flights"]]
        self.call(req.index, "update_reservation_flights", reservation_id=rid, cabin=cabin, flights=flights,
                  payment_id=pm_id)
        self.msg(f"Done: reservation {rid} is now in {_cabin(cabin)}.")

    def _add_bags(self, req: _Request) -> None:
        user, r0 = self.user(), self.db["reservations"][req.target]
        extra = self.pick(self.bag_counts(user, r0, req.affected))
        req.say = f"I'd like to add {_plural(extra, 'checked bag')} to one of my reservations."
        r = self.locate(req)
        rid, n = r["reservation_id"], len(r["passengers"])
        per = free_bags(self.rules, user["membership"], r["cabin"])
        total = r["total_baggages"] + extra
        nonfree = max(r["nonfree_baggages"], total - per * n)
        fee = BAG_PRICE * (nonfree - r["nonfree_baggages"])
        allowance = (f"As a {user['membership']} member in {_cabin(r['cabin'])}, each passenger has "
                     f"{_plural(per, 'free checked bag')}, {per * n} in all for this reservation")
        if fee:
            question = (f"{allowance}, so {_plural(nonfree - r['nonfree_baggages'], 'new bag')} cost "
                        f"{_money(BAG_PRICE)} each: {_money(fee)}. Which payment method would you like to use?")
        else:
            question = f"{allowance}, so the new bags are free. Which payment method would you like to keep on file?"
        pm_id = self.pay(req, fee, question)
        fee_text = f"The fee of {_money(fee)} will be charged to {pm_id}." if fee else "There is no fee."
        self.confirm(f"I will update reservation {rid}: {total} checked bags instead of {r['total_baggages']}, "
                     f"{nonfree} of them paid. {fee_text}")
        self.call(req.index, "update_reservation_baggages", reservation_id=rid, total_baggages=total,
                  nonfree_baggages=nonfree, payment_id=pm_id)
        self.msg(f"Done: reservation {rid} now has {_plural(total, 'checked bag')}.")

    def new_person(self) -> dict:
        return {"first_name": self.pick(self.words["first"]), "last_name": self.pick(self.words["last"]),
                "dob": f"{int(self.rng.integers(1950, 2010))}-{int(self.rng.integers(1, 13)):02d}-"
                       f"{int(self.rng.integers(1, 29)):02d}"}

    def _update_passenger(self, req: _Request) -> None:
        req.say = "I need to change a passenger's details on one of my reservations."
        r = self.locate(req)
        rid, passengers = r["reservation_id"], [dict(p) for p in r["passengers"]]
        k = int(self.rng.integers(len(passengers)))
        old, new = passengers[k], self.new_person()
        if self.rng.random() < 0.5:
            new = dict(old, dob=new["dob"])
            answer = f"{_person(old)}'s date of birth is wrong: it should be {new['dob']}."
        else:
            answer = f"Please replace {_person(old)} with {_person(new)}, born {new['dob']}."
        if new == old:
            raise _Redraw
        passengers[k] = new
        self.ask(req, "Which passenger should change, and what are the new details?", "which passenger", answer)
        self.confirm(f"I will update the passengers of reservation {rid}: {_person(old)} becomes {_person(new)}, "
                     f"born {new['dob']}; the other passengers stay as they are.")
        self.call(req.index, "update_reservation_passengers", reservation_id=rid, passengers=passengers)
        self.msg(f"Done: the passengers of reservation {rid} are updated.")

    def _flight_status(self, req: _Request) -> None:
        flight = self.pick(list(self.db["flights"].values()))
        day = airline_data.TODAY if self.rng.random() < 0.6 else int(self.rng.integers(1, airline_data.TODAY))
        date = f"2024-05-{day:02d}"
        when = "today" if date == TODAY else f"on {_day(date)}"
        req.say = f"Could you check the status of flight {flight['flight_number']} {when}?"
        status = self.call(req.index, "get_flight_status", flight_number=flight["flight_number"], date=date)
        self.msg(f"The status of flight {flight['flight_number']} on {date} is: {status}.")
        req.end("told", status)

    def _total_paid(self, req: _Request) -> None:
        req.say = "How much have I paid in total for one of my reservations?"
        r = self.locate(req)
        total = sum(p["amount"] for p in r["payment_history"])
        self.msg(f"For reservation {r['reservation_id']} you have paid {_money(total)} in total.")
        req.end("told", str(total))

    def _compensation(self, req: _Request) -> None:
        r0 = self.db["reservations"][req.target]
        segment = self.pick([s for s in r0["flights"] if s["date"] <= TODAY and _status(self.db, s) == "cancelled"])
        req.say = (f"My flight {segment['flight_number']} on {_day(segment['date'])} was cancelled, and I would "
                   "like to be compensated for it.")
        r = self.locate(req)
        status = self.call(req.index, "get_flight_status", flight_number=segment["flight_number"],
                           date=segment["date"])
        if status != "cancelled":
            raise _Rejected(f"flight status {status}")
        rid, n, grounds = r["reservation_id"], len(r["passengers"]), _compensation_grounds(self.user(), r)
        if not grounds:
            self.expect(req, "compensation_refused")
            self.msg(f"I'm sorry, but you are not eligible for compensation: you are a regular member, "
                     f"reservation {rid} has no travel insurance, and it is not in business class.")
            return req.end("refused", "not eligible")
        self.expect(req, "compensation")
        amount = self.rules["certificate"] * n
        self.confirm(f"Flight {segment['flight_number']} on {segment['date']} was indeed cancelled by the airline. "
                     f"Because {grounds[0]}, you are eligible for a travel certificate of "
                     f"{_money(self.rules['certificate'])} per passenger: {_money(amount)} for the "
                     f"{_plural(n, 'passenger')} of reservation {rid}, added to your profile.")
        self.call(req.index, "send_certificate", user_id=self.user_id, amount=amount)
        self.msg(f"Done: a travel certificate of {_money(amount)} is now in your profile.")

    def _other_user_refused(self, req: _Request) -> None:
        rid = req.target
        req.say = self.pick([f"Could you cancel reservation {rid}? It is my friend's trip and she asked me to.",
                             f"Could you add a checked bag to reservation {rid}? My colleague booked it.",
                             f"Could you tell me the flights of reservation {rid}? My brother booked it."])
        self.msg(f"I'm sorry, but reservation {rid} is not in your profile, and I can only help with your own "
                 "reservations.")
        req.end("refused", rid)

    def _remove_bags_refused(self, req: _Request) -> None:
        req.say = "I'd like to remove a checked bag from one of my reservations and get a refund for it."
        self.msg("I'm sorry, but checked bags can be added to a reservation, never removed, so I cannot refund it.")
        req.end("refused", "removed")

    def _passenger_count_refused(self, req: _Request) -> None:
        req.say = f"I'd like to add my friend {_person(self.new_person())} as a passenger on one of my reservations."
        self.msg("I'm sorry, but the number of passengers on a reservation cannot change, so I cannot add a "
                 "passenger. Their names and dates of birth can change, though.")
        req.end("refused", "number of passengers")

    def _insurance_refused(self, req: _Request) -> None:
        req.say = "I'd like to add travel insurance to one of my reservations."
        self.msg("I'm sorry, but travel insurance can only be bought with the booking; it cannot be added later.")
        req.end("refused", "insurance")

    def _transfer(self, req: _Request) -> None:
        goal = self.pick(GOALS)
        req.say = f"I'd like to {goal}."
        self.call(req.index, TRANSFER_TOOL, summary=f"User {self.user_id} wants to {goal}; this is outside what "
                                                    "I can do.")
        self.msg(f"That is something a human agent has to handle. {TRANSFER_NOTICE}")
        req.end("transfer", "transferred to a human agent")

    def _book_onestop(self, req: _Request) -> None:
        self._book(req, onestop=True)

    def _book(self, req: _Request, onestop: bool = False) -> None:
        user = self.user()
        trip = self.itinerary(onestop)
        origin, destination, dates = trip["origin"], trip["destination"], trip["dates"]
        cabin, n = trip["cabin"], trip["n"]
        name = (lambda code: airline_data.AIRPORT_CITIES[code]) if req.mode == "cities" else (lambda code: code)
        round_trip, req.preference = len(dates) == 2, trip["preference"]
        req.say = (f"I'd like to book a {'round trip' if round_trip else 'one-way trip'} from {name(origin)} to "
                   f"{name(destination)}, leaving on {_day(dates[0])}"
                   + (f" and coming back on {_day(dates[1])}." if round_trip else "."))
        me = {"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]}
        others = [dict(p) for p in user["saved_passengers"] if p != me]
        passengers = [me] + [others.pop(int(self.rng.integers(len(others)))) if others and self.rng.random() < 0.6
                             else self.new_person() for _ in range(n - 1)]
        listed = [f"{_person(p)}, born {p['dob']}" for p in passengers]
        self.ask(req, "Who will be traveling? Please give me the full name and date of birth of each traveler.",
                 "who will be traveling", f"Just me: {listed[0]}." if n == 1 else
                 f"Me ({listed[0]}) and " + " and ".join(listed[1:]) + ".")
        if req.mode == "cities":
            req.unknown.append("the airport codes of the cities you fly between")
            self.call(req.index, "list_all_airports")
        self.ask(req, "Which cabin would you like: basic economy, economy or business?", "which cabin",
                 f"{_cabin(cabin).capitalize()}, please.")
        chosen, legs = [], [(origin, destination, dates[0])] + ([(destination, origin, dates[1])] if round_trip else [])
        for k, (a, b, date) in enumerate(legs):
            tool = "search_onestop_flight" if onestop else "search_direct_flight"
            found = self.call(req.index, tool, origin=a, destination=b, date=date)
            lead = (f"Here are the {'one-stop connections' if onestop else 'direct flights'} from {a} to {b} on "
                    f"{date} with {_cabin(cabin)} seats for {_plural(n, 'passenger')}")
            chosen.append(self.offer(req, _options(found, cabin, n), cabin, n, lead, "Which flight would you like"
                                     + (" for the return?" if k else "?")))
        flights = [{"flight_number": leg["flight_number"], "date": date} for option, (_, _, date) in zip(chosen, legs)
                   for leg in (option if isinstance(option, list) else [option])]
        if onestop:  # the second leg may leave the next day
            flights = [{"flight_number": leg["flight_number"], "date": leg["date"]} for leg in chosen[0]]
        bags = int(self.rng.choice([0, 0, 1, 2, 3, 4]))
        self.ask(req, "How many checked bags will you bring in total?", "how many checked bags",
                 f"{_plural(bags, 'checked bag')} in total." if bags else "No checked bags.")
        insured = bool(self.rng.random() < 0.5)
        self.ask(req, f"Would you like travel insurance? It costs {_money(INSURANCE_PRICE)} per passenger and gives a "
                      "full refund if you cancel for health or weather reasons.", "travel insurance",
                 "Yes, I'd like travel insurance." if insured else "No travel insurance, thanks.")
        per = free_bags(self.rules, user["membership"], cabin)
        nonfree = max(0, bags - per * n)
        fares = sum(_price(o, cabin) for o in chosen) * n
        total = fares + INSURANCE_PRICE * n * insured + BAG_PRICE * nonfree
        payments, phrase = self.booking_payment(total)
        self.ask(req, "Which payment method would you like to use?", "payment method", phrase)
        paid = " and ".join(f"{_money(p['amount'])} on {p['payment_id']}" for p in payments)
        methods = self.user()["payment_methods"]
        lost = sum(methods[p["payment_id"]]["amount"] - p["amount"] for p in payments
                   if methods[p["payment_id"]]["source"] == "certificate")
        if lost:
            paid += f" (the unused {_money(lost)} of the certificate is not refunded)"
        self.confirm(
            f"Here is the booking: a {'round trip' if round_trip else 'one-way trip'} from {origin} to {destination} "
            f"in {_cabin(cabin)} for {', '.join(_person(p) for p in passengers)}; flights "
            + "; ".join(f"{f['flight_number']} on {f['date']}" for f in flights)
            + f". Fares {_money(fares)} for {_plural(n, 'passenger')}; {_plural(bags, 'checked bag')}, "
            f"{per * n} free ({per} per passenger as a {user['membership']} member), {nonfree} paid at "
            f"{_money(BAG_PRICE)} each; travel insurance {'yes' if insured else 'no'}. The total is {_money(total)}, "
            f"paid {paid}.")
        booked = self.call(req.index, "book_reservation", user_id=self.user_id, origin=origin, destination=destination,
                           flight_type="round_trip" if round_trip else "one_way", cabin=cabin, flights=flights,
                           passengers=passengers, payment_methods=payments, total_baggages=bags,
                           nonfree_baggages=nonfree, insurance="yes" if insured else "no")
        self.msg(f"Your trip is booked: the reservation id is {booked['reservation_id']}.")

    def itinerary(self, onestop: bool) -> dict:
        """A trip the airline can carry: route, dates, cabin and party size with a bookable choice each way."""
        airports = sorted({f["origin"] for f in self.db["flights"].values()})
        for _ in range(60):
            cabin, n = self.pick(CABINS), int(self.rng.choice([1, 1, 2, 2, 3]))
            origin, destination = (str(x) for x in self.rng.choice(airports, size=2, replace=False))
            day = int(self.rng.integers(airline_data.TODAY + 1, airline_data.DAYS - 1))
            dates = [f"2024-05-{day:02d}"]
            if not onestop and self.rng.random() < 0.45:
                dates.append(f"2024-05-{min(airline_data.DAYS, day + int(self.rng.integers(2, 8))):02d}")
            legs = [(origin, destination, dates[0])] + ([(destination, origin, dates[1])] if len(dates) == 2 else [])
            tool = "search_onestop_flight" if onestop else "search_direct_flight"
            found = [_options(json.loads(airline_tools.call(self.db, tool, {"origin": a, "destination": b,
                                                                            "date": d}, quirks=False)), cabin, n)
                     for a, b, d in legs]
            direct = onestop and json.loads(airline_tools.call(
                self.db, "search_direct_flight", {"origin": origin, "destination": destination, "date": dates[0]},
                quirks=False))
            prefs = [p for p in PREFERENCES if all(o and _best(o, cabin, p) is not None for o in found)]
            if prefs and not direct and len(found[0]) <= 6:
                return {"origin": origin, "destination": destination, "dates": dates, "cabin": cabin, "n": n,
                        "preference": self.pick(prefs)}
        raise _Redraw

    def booking_payment(self, total: int) -> tuple[list[dict], str]:
        """How the customer pays a booking, within the policy (one card, or a gift card that covers it, or a
        certificate topped up by a card), and how they say it."""
        user = self.user()
        methods = user["payment_methods"]
        cards = [k for k, pm in methods.items() if pm["source"] == "credit_card"]
        ways = [[(card, total)] for card in cards]
        ways += [[(g, total)] for g, pm in methods.items() if pm["source"] == "gift_card" and pm["amount"] >= total]
        for cert, pm in methods.items():
            if pm["source"] == "certificate":
                used = min(int(pm["amount"]), total)
                ways += [[(cert, used)] + ([(card, total - used)] if total > used else []) for card in cards[:1]]
        way = self.pick(ways)
        phrase = f"Please use {_pm_phrase(user, way[0][0])}" + (
            f" first, and put the rest on {_pm_phrase(user, way[1][0])}." if len(way) == 2 else ".")
        return [{"payment_id": pm_id, "amount": amount} for pm_id, amount in way], phrase


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
        except _Redraw:
            continue
        except _Rejected as error:
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
