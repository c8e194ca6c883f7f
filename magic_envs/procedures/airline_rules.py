"""The airline's rules and task databases as the task planner (`airline_tasks`) reads them: the numbers of each
policy variant, a task's database (`airline_data.generate_db` from a stored seed, plus look-alike distractor
reservations and a namesake user), and the policy's tests on a reservation (flown? cancellable? compensable?)."""

from __future__ import annotations

import datetime
import functools
import json

import numpy as np

from magic_envs.procedures import airline_data, airline_tools
from magic_envs.procedures.airline_tools import BAG_PRICE, FREE_BAGS, INSURANCE_PRICE, NEW_RESERVATION_IDS
from magic_envs.procedures.database import fresh_copy

# The numbers of the policy (base) and of its ood_policy variants.
RULES = {"base": {"cancel_hours": 24, "certificate": 100, "bag_bonus": 0},
         "cancel_48h": {"cancel_hours": 48, "certificate": 100, "bag_bonus": 0},
         "certificate_150": {"cancel_hours": 24, "certificate": 150, "bag_bonus": 0},
         "bags_plus_one": {"cancel_hours": 24, "certificate": 100, "bag_bonus": 1}}
TODAY, NOW = "2024-05-15", datetime.datetime(2024, 5, 15, 15, 0)
REASON_WORDS = {"change_of_plan": "a change of plan", "airline_cancelled": "the airline's cancellation",
                "health": "a health reason", "weather": "a weather reason", "other": "a personal reason"}


def free_bags(rules: dict, membership: str, cabin: str) -> int:
    """Free checked bags per passenger under a policy variant."""
    return FREE_BAGS[membership][cabin] + rules["bag_bonus"]


# ------------------------------------------------------------------------------------------- the database

@functools.lru_cache(maxsize=16)
def generated_db(seed: int, size: int, ood: bool) -> dict:
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
        return generated_db(seed, size, ood)
    key = json.dumps(spec, sort_keys=True)
    if key not in _BUILT:
        db = shallow_copy(generated_db(seed, size, ood))
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


def shallow_copy(db: dict) -> dict:
    """New tables holding the same records: a copy whose records must be copied before they change."""
    return {table: dict(records) for table, records in db.items()}


def new_reservation_id(r: np.random.Generator, db: dict, letters_only: bool = False) -> str:
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
    taken = {trip_key(db["reservations"][rid]) for rid in user["reservations"]}
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
            clone.update(reservation_id=new_reservation_id(r, db), status=None,
                         payment_history=[{"payment_id": source["payment_history"][0]["payment_id"], "amount": amount}],
                         created_at=stamp + source["created_at"][10:])
            db["reservations"][clone["reservation_id"]] = clone
            taken.add(trip_key(clone))
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


def trip_key(reservation: dict) -> tuple:
    """What a customer's description of a reservation names: trip type, route and first date."""
    return (reservation["flight_type"], reservation["origin"], reservation["destination"],
            reservation["flights"][0]["date"])


# ---------------------------------------------------------------------------------------- reading the data

def segment_status(db: dict, segment: dict) -> str:
    return db["flights"][segment["flight_number"]]["dates"][segment["date"]]["status"]


def was_flown(db: dict, reservation: dict) -> bool:
    return any(s["date"] <= TODAY and segment_status(db, s) in ("landed", "flying") for s in reservation["flights"])


def upcoming(reservation: dict) -> bool:
    return reservation["status"] is None and all(s["date"] > TODAY for s in reservation["flights"])


def airline_cancelled(db: dict, reservation: dict) -> bool:
    return any(s["date"] <= TODAY and segment_status(db, s) == "cancelled" for s in reservation["flights"])


def booked_within(reservation: dict, hours: int) -> bool:
    return reservation["created_at"] >= (NOW - datetime.timedelta(hours=hours)).isoformat()


def cancel_grounds(db: dict, reservation: dict, reason: str, rules: dict) -> list[str]:
    """The policy's grounds that allow cancelling (empty: not eligible)."""
    grounds = []
    if booked_within(reservation, rules["cancel_hours"]):
        grounds.append(f"it was booked within the last {rules['cancel_hours']} hours")
    if airline_cancelled(db, reservation):
        grounds.append("the airline cancelled one of its flights")
    if reservation["cabin"] == "business":
        grounds.append("it is in business class")
    if reservation["insurance"] == "yes" and reason in ("health", "weather"):
        grounds.append(f"it has travel insurance, which covers {REASON_WORDS[reason]}")
    return grounds


def compensation_grounds(user: dict, reservation: dict) -> list[str]:
    grounds = [f"you are a {user['membership']} member"] if user["membership"] in ("silver", "gold") else []
    if reservation["insurance"] == "yes":
        grounds.append("the reservation has travel insurance")
    if reservation["cabin"] == "business":
        grounds.append("it is in business class")
    return grounds


def bookable(found: list, cabin: str, passengers: int) -> list:
    """Search results (flights, or pairs of flights) with seats in `cabin` for every passenger."""
    legs = (lambda o: o if isinstance(o, list) else [o])
    return [o for o in found if all(leg["available_seats"][cabin] >= passengers for leg in legs(o))]


def price_of(option, cabin: str) -> int:
    return sum(leg["prices"][cabin] for leg in (option if isinstance(option, list) else [option]))


def _departure(option) -> str:
    return (option[0] if isinstance(option, list) else option)["scheduled_departure_time_est"]


def _minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:5])


def best_option(options: list, cabin: str, preference: str):
    """The option a preference picks, or None when two options tie for it."""
    key = {"cheapest": lambda o: price_of(o, cabin), "earliest": lambda o: _minutes(_departure(o)),
           "latest": lambda o: -_minutes(_departure(o))}[preference]
    ranked = sorted(options, key=key)
    return ranked[0] if len(ranked) == 1 or key(ranked[0]) != key(ranked[1]) else None
