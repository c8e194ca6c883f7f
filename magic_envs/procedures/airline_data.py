"""Procedurally generated airline databases in tau2-bench's schema (see airline_tools for the data model).

`generate_db(rng, size)` draws, from `rng` only, a month of flights (2024-05-01..30, "now" being
2024-05-15 15:00 EST), users and their reservations. At size=1: 40 flights x 30 dates over 10 airports,
40 users, 120 reservations; every count scales with `size` (airports up to the vocabulary's 20).

What holds in every database (tested over many seeds), as in tau2's own db.json (which differs only in
having no cancelled reservation and business segments priced up to 1998):

* every record sits under its own id; flight numbers are HAT001.. in order; every flight has all 30 dates;
* a date's status follows the clock: 05-16..05-30 "available" (seats 0-20, prices basic economy 50-100,
  economy 100-200, business 200-500, ints); 05-01..05-14 "landed" or "cancelled"; 05-15 "landed" if the
  flight arrives by 14:30, "flying" if it left by 14:30 and lands later, else "on time" or "delayed";
  actual and estimated times are the schedule give or take half an hour (delayed: 1 to 5 hours late);
  "+1" arrivals land the next day;
* flights come in route pairs (A->B and B->A), so every flight has a way back;
* a user has 1-2 saved passengers, payment methods (credit cards, gift cards, certificates of 100, 150, 250
  or 500; float amounts; at least one credit or gift card) and the ids of exactly the reservations that
  name them;
* a reservation's flights chain (each leaves from where the previous landed, a connection no earlier than
  the previous arrival, next day after a "+1" arrival); a round trip returns to its origin on a later day;
  it was created (04-30..05-14) before its first flight; its one payment, by one of the user's credit or
  gift cards, is sum(price) x passengers + 30 x passengers if insured + 50 x nonfree_baggages; bags beyond
  the free allowance (membership x cabin, per passenger) are exactly the nonfree ones; a cancelled
  reservation (status "cancelled") also holds the negated payment;
* ids never collide with the ones the tools create (HATHAT.., certificate_3221322..).

Every status tau2 has occurs in every database: each flight-date status, membership, payment source, cabin,
trip type, insurance choice, and both reservation statuses (None and "cancelled").

`ood=True` draws names, streets, cities and airports from a disjoint vocabulary (for the OOD split).
"""

from __future__ import annotations

import numpy as np

from magic_envs.procedures.airline_tools import (
    BAG_PRICE,
    CABINS,
    FREE_BAGS,
    INSURANCE_PRICE,
    MEMBERSHIPS,
    NEW_CERTIFICATE_IDS,
    NEW_RESERVATION_IDS,
    TAU2_AIRPORTS,
)

# ------------------------------------------------------------------------------------------ vocabulary

VOCABULARY = {
    False: {  # in distribution: tau2's airports and names, cities and streets of its kind
        "first": ("Mia", "Mei", "Aarav", "Chen", "Lucas", "Sophia", "Liam", "Olivia", "Noah", "Fatima", "Raj",
                  "Yusuf", "Amelia", "Anya", "Ivan", "Juan", "Omar", "Sofia", "Ethan", "Emma", "Isabella",
                  "Harper", "Lei", "Mohamed", "Yara", "James", "Daiki", "Evelyn", "Ava", "Mason",
                  "Lily", "Amara", "Nia", "Arjun", "Sara", "Chloe", "Mateo"),
        "last": ("Li", "Hernandez", "Nguyen", "Taylor", "Santos", "Smith", "Brown", "Jackson", "Martin", "Ahmed",
                 "Anderson", "Kim", "Lee", "Garcia", "Rossi", "Patel", "Wilson", "Thomas", "Davis", "Lopez",
                 "Gonzalez", "Silva", "Khan", "Ito", "Kovacs", "Moore", "Johnson", "Sanchez", "Muller", "Wang"),
        "streets": ("Sunset Drive", "Main Street", "Oak Street", "Elm Avenue", "Maple Drive", "Cedar Street",
                    "Pine Lane", "Lakeview Drive", "Hillcrest Drive", "Park Avenue", "River Road",
                    "Chestnut Street", "Willow Lane", "Broadway", "Spruce Street", "Highland Drive"),
        "unit": "Suite",
        "cities": (("Austin", "TX", "787"), ("Dallas", "TX", "752"), ("Denver", "CO", "802"),
                   ("Seattle", "WA", "981"), ("Chicago", "IL", "606"), ("New York", "NY", "100"),
                   ("Los Angeles", "CA", "900"), ("San Francisco", "CA", "941"), ("Houston", "TX", "770"),
                   ("Phoenix", "AZ", "850"), ("Philadelphia", "PA", "191"), ("Charlotte", "NC", "282"),
                   ("San Diego", "CA", "921"), ("San Jose", "CA", "951"), ("Columbus", "OH", "432"),
                   ("Jacksonville", "FL", "322"), ("Indianapolis", "IN", "462"), ("Fort Worth", "TX", "761")),
        "airports": TAU2_AIRPORTS,
    },
    True: {  # out of distribution: none of these occurs above
        "first": ("Astrid", "Bjorn", "Chiara", "Dmitri", "Esme", "Farid", "Greta", "Hiroshi", "Ines", "Jasper",
                  "Kalani", "Leif", "Marisol", "Nikolai", "Odette", "Quentin", "Rosalind", "Soren", "Tamsin",
                  "Ulrich", "Valentina", "Wren", "Xiomara", "Yannick", "Zuzana", "Anouk", "Bartholomew",
                  "Cosima", "Desmond", "Elodie"),
        "last": ("Abernathy", "Bergstrom", "Castellano", "Dubois", "Eriksen", "Fairweather", "Galloway",
                 "Haldane", "Iwasaki", "Jablonski", "Kowalczyk", "Lindqvist", "Montague", "Nakamura", "Okonkwo",
                 "Pemberton", "Quinlan", "Rasmussen", "Szabo", "Thorne", "Underwood", "Whitlock", "Yilmaz",
                 "Zielinski"),
        "streets": ("Juniper Way", "Marigold Court", "Quarry Lane", "Thistle Row", "Wren Terrace",
                    "Foxglove Close", "Birchwood Bend", "Heron Point", "Saffron Path", "Copperfield Loop",
                    "Bramble Crescent", "Larkspur Square"),
        "unit": "Unit",
        "cities": (("Boise", "ID", "837"), ("Tucson", "AZ", "857"), ("Omaha", "NE", "681"),
                   ("Madison", "WI", "537"), ("Savannah", "GA", "314"), ("Spokane", "WA", "992"),
                   ("Burlington", "VT", "054"), ("Des Moines", "IA", "503"), ("Reno", "NV", "895"),
                   ("Eugene", "OR", "974"), ("Little Rock", "AR", "722"), ("Louisville", "KY", "402")),
        "airports": (("BNA", "Nashville"), ("PDX", "Portland"), ("SLC", "Salt Lake City"), ("STL", "St. Louis"),
                     ("MSY", "New Orleans"), ("RDU", "Raleigh"), ("SMF", "Sacramento"), ("TPA", "Tampa"),
                     ("BWI", "Baltimore"), ("MCI", "Kansas City"), ("CLE", "Cleveland"), ("PIT", "Pittsburgh"),
                     ("CVG", "Cincinnati"), ("HNL", "Honolulu"), ("ANC", "Anchorage"), ("ABQ", "Albuquerque"),
                     ("BUF", "Buffalo"), ("MKE", "Milwaukee"), ("OKC", "Oklahoma City"), ("RIC", "Richmond")),
    },
}
AIRPORT_CITIES = {code: city for ood in (False, True) for code, city in VOCABULARY[ood]["airports"]}

DAYS = 30  # 2024-05-01..2024-05-30
TODAY = 15  # 2024-05-15, 15:00 EST
NOW_MINUTE = 15 * 60
DATES = tuple(f"2024-05-{day:02d}" for day in range(1, DAYS + 1))
PRICE_RANGES = {"basic_economy": (50, 100), "economy": (100, 200), "business": (200, 500)}
CERTIFICATE_AMOUNTS = (100.0, 150.0, 250.0, 500.0)
ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


class _Draw:
    """Uniform draws from `rng` in blocks: numpy's per-call overhead would dominate thousands of scalar draws."""

    def __init__(self, rng: np.random.Generator):
        def blocks():
            while True:
                yield from rng.random(1024).tolist()

        self.random = blocks().__next__  # a uniform in [0, 1)

    def int(self, low: int, high: int) -> int:  # both ends included
        return low + int(self.random() * (high - low + 1))

    def pick(self, seq):
        return seq[int(self.random() * len(seq))]

    def chance(self, p: float) -> bool:
        return self.random() < p

    def digits(self, n: int) -> str:
        return str(self.int(10 ** (n - 1), 10 ** n - 1))


def _clock(minute: int) -> str:
    """"HH:MM:SS" of a minute of the day; "+1" past midnight, as tau2's schedules print it."""
    return f"{minute // 60 % 24:02d}:{minute % 60:02d}:00" + ("+1" if minute >= 1440 else "")


_DAY_PREFIX = ("2024-04-30T",) + tuple(f"2024-05-{day:02d}T" for day in range(1, DAYS + 2))
_TIME_OF_MINUTE = tuple(f"{m // 60:02d}:{m % 60:02d}:00" for m in range(1440))


def _stamp(day: int, minute: int) -> str:
    """"YYYY-MM-DDTHH:MM:SS" of `minute` (possibly negative or past midnight) after 00:00 of May `day`
    (day 0 is April 30); table lookups, as thousands are formatted per database."""
    extra, minute = divmod(minute, 1440)
    return _DAY_PREFIX[day + extra] + _TIME_OF_MINUTE[minute]


# --------------------------------------------------------------------------------------------- flights

def _schedules(draw: _Draw, count: int) -> list[tuple[int, int]]:
    """(departure, arrival) minutes of `count` flights; the first four are placed so that 05-15 has a landed,
    a flying, an on-time and a delayed flight (the caller shuffles the flight numbers)."""
    placed = [(draw.int(5, 9), draw.int(2, 8)), (draw.int(12, 14), draw.int(6, 10)),
              (draw.int(16, 19), draw.int(2, 8)), (draw.int(16, 19), draw.int(2, 8))]
    out = []
    for i in range(count):
        hour, halves = placed[i] if i < 4 else (draw.int(0, 23), draw.int(2, 12))  # 1 to 6 hours
        out.append((hour * 60, hour * 60 + halves * 30))
    return out


def _today_status(draw: _Draw, departure: int, arrival: int, delayed: bool) -> dict:
    """The 2024-05-15 status of a flight, consistent with its schedule and the 15:00 clock."""
    late = draw.int(-10, 20)
    if arrival <= NOW_MINUTE - 30:
        return {"status": "landed", "actual_departure_time_est": _stamp(TODAY, departure + late),
                "actual_arrival_time_est": _stamp(TODAY, arrival + late + draw.int(-15, 10))}
    if departure <= NOW_MINUTE - 30:
        return {"status": "flying", "actual_departure_time_est": _stamp(TODAY, departure + late),
                "estimated_arrival_time_est": _stamp(TODAY, arrival + late + draw.int(-15, 15))}
    if delayed:
        delay = draw.int(60, 300)
        return {"status": "delayed", "estimated_departure_time_est": _stamp(TODAY, departure + delay),
                "estimated_arrival_time_est": _stamp(TODAY, arrival + delay)}
    early = draw.int(-5, 15)  # departures are on the hour, from 15:00: still at the gate
    return {"status": "on time", "estimated_departure_time_est": _stamp(TODAY, departure + early),
            "estimated_arrival_time_est": _stamp(TODAY, arrival + early)}


def _flights(rng: np.random.Generator, draw: _Draw, airports: list[str], count: int) -> dict:
    codes = list(airports)
    pairs = [(a, b) for i, a in enumerate(codes) for b in codes[i + 1:]]
    routes = [pairs[i] for i in rng.permutation(len(pairs))[:max(1, (count // 2) * 7 // 10)].tolist()]
    while len(routes) < count // 2:  # some routes get a second pair of flights: a choice of times
        routes.append(draw.pick(routes))
    legs = [leg for a, b in routes for leg in ((a, b), (b, a))]
    schedules = _schedules(draw, len(legs))
    numbers = (rng.permutation(len(legs)) + 1).tolist()
    future = DAYS - TODAY
    seats = rng.integers(0, 21, size=(len(legs), future, 3)).tolist()
    low = [PRICE_RANGES[c][0] for c in CABINS]
    high = [PRICE_RANGES[c][1] + 1 for c in CABINS]
    prices = rng.integers(low, high, size=(len(legs), future, 3)).tolist()
    past = rng.random((len(legs), TODAY - 1, 3)).tolist()  # cancelled?, departure and arrival delays

    flights = {}
    for i, ((origin, destination), (departure, arrival)) in enumerate(zip(legs, schedules)):
        dates = {}
        for day in range(1, TODAY):
            cancel, dep_late, arr_late = past[i][day - 1]
            if cancel < 0.08:
                dates[DATES[day - 1]] = {"status": "cancelled"}
                continue
            dep = departure + int(dep_late * 46) - 15
            dates[DATES[day - 1]] = {"status": "landed", "actual_departure_time_est": _stamp(day, dep),
                                     "actual_arrival_time_est": _stamp(day, dep + arrival - departure
                                                                       + int(arr_late * 51) - 20)}
        delayed = i == 3 or (i > 3 and draw.chance(0.35))
        dates[DATES[TODAY - 1]] = _today_status(draw, departure, arrival, delayed)
        for k, day in enumerate(range(TODAY + 1, DAYS + 1)):
            (s1, s2, s3), (p1, p2, p3) = seats[i][k], prices[i][k]
            dates[DATES[day - 1]] = {"status": "available",
                                     "available_seats": {"basic_economy": s1, "economy": s2, "business": s3},
                                     "prices": {"basic_economy": p1, "economy": p2, "business": p3}}
        number = f"HAT{numbers[i]:03d}"
        flights[number] = {"flight_number": number, "origin": origin, "destination": destination,
                           "scheduled_departure_time_est": _clock(departure),
                           "scheduled_arrival_time_est": _clock(arrival), "dates": dates}
    return dict(sorted(flights.items(), key=lambda kv: int(kv[0][3:])))


# ----------------------------------------------------------------------------------------------- users

def _person(draw: _Draw, words: dict) -> dict:
    return {"first_name": draw.pick(words["first"]), "last_name": draw.pick(words["last"]),
            "dob": f"{draw.int(1950, 2003)}-{draw.int(1, 12):02d}-{draw.int(1, 28):02d}"}


def _users(draw: _Draw, words: dict, count: int) -> dict:
    users, pm_ids = {}, set(NEW_CERTIFICATE_IDS)

    def new_id(source: str) -> str:
        while True:
            pm_id = f"{source}_{draw.digits(7)}"
            if pm_id not in pm_ids:
                pm_ids.add(pm_id)
                return pm_id

    while len(users) < count:
        me = _person(draw, words)
        first, last = me["first_name"], me["last_name"]
        user_id = f"{first.lower()}_{last.lower()}_{draw.digits(4)}"
        if user_id in users:
            continue
        i = len(users)
        # the first user holds every kind of payment method, the first three every membership
        kinds = (1, 1, 1) if i == 0 else (draw.int(0, 2), draw.int(0, 2), draw.int(0, 1) + draw.int(0, 1))
        if kinds[0] + kinds[1] == 0:
            kinds = (1, 0, kinds[2])
        methods = {}
        for source, n in zip(("credit_card", "gift_card", "certificate"), kinds):
            for _ in range(n):
                pm_id = new_id(source)
                if source == "credit_card":
                    methods[pm_id] = {"source": source, "id": pm_id, "brand": draw.pick(("visa", "mastercard")),
                                      "last_four": draw.digits(4)}
                else:
                    amount = float(draw.int(0, 300)) if source == "gift_card" else draw.pick(CERTIFICATE_AMOUNTS)
                    methods[pm_id] = {"source": source, "id": pm_id, "amount": amount}
        city, state, zip3 = draw.pick(words["cities"])
        users[user_id] = {
            "user_id": user_id, "name": {"first_name": first, "last_name": last},
            "address": {"address1": f"{draw.int(1, 999)} {draw.pick(words['streets'])}",
                        "address2": f"{words['unit']} {draw.int(100, 999)}", "city": city, "country": "USA",
                        "state": state, "zip": zip3 + draw.digits(2)},
            "email": f"{first.lower()}.{last.lower()}{draw.digits(4)}@example.com", "dob": me["dob"],
            "payment_methods": dict(sorted(methods.items(), key=lambda kv: draw.random())),
            "saved_passengers": [_person(draw, words) for _ in range(draw.int(1, 2))],
            "membership": MEMBERSHIPS[i] if i < 3 else draw.pick(MEMBERSHIPS), "reservations": []}
    return users


# ---------------------------------------------------------------------------------------- reservations

def _arrival_day(flight: dict, day: int) -> int:
    return day + 1 if flight["scheduled_arrival_time_est"].endswith("+1") else day


def _minute(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:5])


def _route(draw: _Draw, by_origin: dict, origin: str, day: int, stops: int, end: str | None = None):
    """[(flight, day)] leaving `origin` on `day`, direct or with one connection that leaves no earlier than
    the first flight lands; it ends at `end` if given, else anywhere but `origin`. None if the draw fails."""
    def arrives(flight: dict, avoid: tuple) -> bool:
        return flight["destination"] == end if end else flight["destination"] not in avoid

    if stops == 0:
        direct = [f for f in by_origin.get(origin, ()) if arrives(f, (origin,))]
        return [(draw.pick(direct), day)] if direct else None
    firsts = [f for f in by_origin.get(origin, ()) if f["destination"] != end]
    for _ in range(3 if firsts else 0):  # a few tries: many first flights have no connection that day
        first = draw.pick(firsts)
        day2, landed = _arrival_day(first, day), _minute(first["scheduled_arrival_time_est"])
        seconds = [f for f in by_origin.get(first["destination"], ())
                   if arrives(f, (origin,)) and _minute(f["scheduled_departure_time_est"]) >= landed]
        if seconds and day2 <= DAYS:
            return [(first, day), (draw.pick(seconds), day2)]
    return None


def _itinerary(draw: _Draw, by_origin: dict, airports: list[str], round_trip: bool):
    """(origin, destination, [(flight, day)]) of a trip, or None when the draw found no connection."""
    origin = draw.pick(airports)
    outbound = _route(draw, by_origin, origin, draw.int(1, DAYS - 2 if round_trip else DAYS),
                      int(draw.chance(0.6)))
    if outbound is None:
        return None
    destination = outbound[-1][0]["destination"]
    if not round_trip:
        return origin, destination, outbound
    arrived = _arrival_day(*outbound[-1])
    if arrived >= DAYS:
        return None
    back_day = arrived + draw.int(1, min(6, DAYS - arrived))
    back = (_route(draw, by_origin, destination, back_day, 1, origin) if draw.chance(0.5) else None) \
        or _route(draw, by_origin, destination, back_day, 0, origin)
    return (origin, destination, outbound + back) if back else None


def _reservations(draw: _Draw, words: dict, flights: dict, users: dict, airports: list[str], count: int) -> dict:
    by_origin = {}
    for flight in flights.values():
        by_origin.setdefault(flight["origin"], []).append(flight)
    user_ids = list(users)
    reservations = {}
    while len(reservations) < count:
        i = len(reservations)
        # the first reservations cover every cabin, trip type and insurance choice; the last is cancelled
        round_trip = i % 2 == 1 if i < 2 else draw.chance(0.48)
        trip = _itinerary(draw, by_origin, airports, round_trip)
        if trip is None:
            continue
        origin, destination, legs = trip
        number = draw.int(0, 36 ** 6 - 1)
        reservation_id = "".join(ID_CHARS[number // 36 ** k % 36] for k in range(6))
        if reservation_id in reservations or reservation_id in NEW_RESERVATION_IDS:
            continue
        user = users[draw.pick(user_ids)]
        cabin = CABINS[i] if i < 3 else draw.pick(CABINS)
        insured = i % 2 == 0 if i < 2 else draw.chance(0.5)

        u = draw.random()
        n = 1 if u < 0.46 else 2 if u < 0.79 else 3 if u < 0.95 else 4
        known = [{"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"],
                  "dob": user["dob"]}] if draw.chance(0.8) else []
        known += [dict(p) for p in user["saved_passengers"] if draw.chance(0.6)]
        passengers = known[:n] + [_person(draw, words) for _ in range(n - len(known[:n]))]

        allowance = FREE_BAGS[user["membership"]][cabin] * n
        extra = draw.int(1, 2) if draw.chance(0.15) else 0
        total_bags = draw.int(0, allowance + extra) if extra or draw.chance(0.5) else 0
        nonfree = max(0, total_bags - allowance)

        segments = []
        for flight, day in legs:
            status = flight["dates"][DATES[day - 1]]
            price = status["prices"][cabin] if status["status"] == "available" and draw.chance(0.5) \
                else draw.int(*PRICE_RANGES[cabin])
            segments.append({"flight_number": flight["flight_number"], "origin": flight["origin"],
                             "destination": flight["destination"], "date": DATES[day - 1], "price": price})
        amount = sum(s["price"] for s in segments) * n + INSURANCE_PRICE * n * insured + BAG_PRICE * nonfree
        payers = [k for k, pm in user["payment_methods"].items() if pm["source"] in ("credit_card", "gift_card")]
        payments = [{"payment_id": draw.pick(payers), "amount": amount}]
        cancelled = i == count - 1 or draw.chance(0.04)
        if cancelled:
            payments.append({"payment_id": payments[0]["payment_id"], "amount": -amount})
        created = draw.int(0, min(TODAY - 1, legs[0][1] - 1))  # day 0 is 04-30: booked before the first flight
        reservations[reservation_id] = {
            "reservation_id": reservation_id, "user_id": user["user_id"], "origin": origin,
            "destination": destination, "flight_type": "round_trip" if round_trip else "one_way", "cabin": cabin,
            "flights": segments, "passengers": passengers, "payment_history": payments,
            "created_at": _stamp(created, draw.int(0, 1439))[:-2] + f"{draw.int(0, 59):02d}",
            "total_baggages": total_bags, "nonfree_baggages": nonfree, "insurance": "yes" if insured else "no",
            "status": "cancelled" if cancelled else None}
        user["reservations"].append(reservation_id)
    return reservations


def generate_db(rng: np.random.Generator, size: int = 1, *, ood: bool = False) -> dict:
    """A fresh airline database in tau2's schema, drawn from `rng` only (see the module docstring)."""
    size = max(1, int(size))
    words = VOCABULARY[bool(ood)]
    draw = _Draw(rng)
    all_codes = [code for code, _ in words["airports"]]
    airports = [all_codes[i] for i in rng.permutation(len(all_codes))[:min(len(all_codes), 6 + 4 * size)]]
    flights = _flights(rng, draw, airports, 40 * size)
    users = _users(draw, words, 40 * size)
    reservations = _reservations(draw, words, flights, users, airports, 120 * size)
    return {"flights": flights, "users": users, "reservations": reservations}
