"""Identifier types: how ids look, what they encode, and how a request can draw one that exists.

World records are found by their id alone, so ids encode their key (a flight id names its route, date and
number) and which records exist does not depend on the world seed: a request generator can then name a
valid id without a world, and any world answers for it (its attributes are what vary per world).
Ids that tools create (bookings, orders) are a prefix and a 6-character reference drawn from the call.
"""

from __future__ import annotations

import re

from magic_envs.tool_planning.universe import pools, words
from magic_envs.tool_planning.universe.etypes import BadValue, _date_sample, date_canon, etype, pick
from magic_envs.tool_planning.universe.hashing import _ALPHABET, stable_hash

# Every key has at least this many records, so drawn ids with n <= MIN exist in every world.
MIN_COUNT = {"flight": 3, "hotel": 8, "restaurant": 8, "place": 4, "doctor": 3}
PLACE_TYPES = {"cafe": "CAF", "restaurant": "RES", "pharmacy": "PHA", "museum": "MUS", "park": "PRK",
               "supermarket": "SUP", "gas_station": "GAS", "atm": "ATM", "hospital": "HOS"}
SPECIALTY_CODES = {s: s[:3].upper() for s in words.SPECIALTIES}
ACCOUNTS = {"CHK-1001": "checking", "SAV-2002": "savings", "CRD-3003": "credit_card", "BUS-4004": "business"}
N_RECIPES, N_TRACKS, N_MOVIES, N_INBOX = 60, 120, 60, 50
CREATED = {"booking_id": "BK", "reservation_id": "RV", "order_id": "ORD", "appointment_id": "AP",
           "playlist_id": "PLS", "transaction_id": "TX", "reminder_id": "RM", "automation_id": "AU",
           "log_id": "LOG", "share_id": "SH", "sms_id": "SMS"}


def count(kind: str, *key) -> int:
    """How many records a key holds (world-independent): MIN_COUNT[kind] to MIN_COUNT[kind] + 5."""
    return MIN_COUNT[kind] + stable_hash("count", kind, *key) % 6


def _bad(kind: str, value) -> BadValue:
    return BadValue(f"no {kind.replace('_', ' ')} {str(value)[:60]!r} exists")


def _city(code: str) -> str:
    return pools.CITY_BY_CODE[code]["name"]


def _codes(vocab):
    return [c["code"] for c in pools.CITIES if c["vocab"] == vocab]


def _parse(pattern: str, kind: str):
    """A canon that checks an id against its regex and returns it upper-cased (ids are case-insensitive)."""
    regex = re.compile(pattern)

    def canon(value):
        text = str(value).strip().upper()
        m = regex.fullmatch(text)
        if not m:
            raise _bad(kind, value)
        return text
    return canon


def parse_flight(fid: str) -> dict:
    origin, destination, day, n = fid.split("-")[1:]
    if origin not in pools.CITY_BY_CODE or destination not in pools.CITY_BY_CODE or origin == destination:
        raise _bad("flight", fid)
    try:
        date = date_canon(f"{day[:4]}-{day[4:6]}-{day[6:]}")
    except BadValue:
        raise _bad("flight", fid) from None
    if not 1 <= int(n) <= count("flight", origin, destination, date):
        raise _bad("flight", fid)
    return {"origin": _city(origin), "destination": _city(destination), "date": date, "n": int(n)}


def flight_id(origin: str, destination: str, date: str, n: int) -> str:
    o, d = pools.CITY_BY_KEY[origin.lower()]["code"], pools.CITY_BY_KEY[destination.lower()]["code"]
    return f"FL-{o}-{d}-{date.replace('-', '')}-{n}"


def _sample_flight(rng, vocab, spec):
    o, d = (pick(rng, [c for c in pools.CITIES if c["vocab"] == vocab]) for _ in range(2))
    while d is o:
        d = pick(rng, [c for c in pools.CITIES if c["vocab"] == vocab])
    return flight_id(o["name"], d["name"], _date_sample(rng, vocab, spec), 1 + int(rng.integers(MIN_COUNT["flight"])))


def parse_local(kind: str, lid: str) -> dict:
    """Ids of records that live in a city: HT-PAR-07, RS-PAR-05, PL-PAR-MUS-3, DR-PAR-CAR-2."""
    parts = lid.split("-")[1:]
    if parts[0] not in pools.CITY_BY_CODE or int(parts[-1]) > count(kind, *parts[:-1]) or int(parts[-1]) < 1:
        raise _bad(kind, lid)
    return {"city": _city(parts[0]), "sub": parts[1] if len(parts) == 3 else "", "n": int(parts[-1])}


def local_id(prefix: str, city: str, n: int, sub: str = "") -> str:
    code = pools.CITY_BY_KEY[city.lower()]["code"]
    return f"{prefix}-{code}-{sub + '-' if sub else ''}{n:0{1 if sub else 2}d}"


def _sample_local(prefix, kind, subs=()):
    def sample(rng, vocab, spec):
        sub = pick(rng, subs) if subs else ""
        return local_id(prefix, pick(rng, [c["name"] for c in pools.CITIES if c["vocab"] == vocab]),
                        1 + int(rng.integers(MIN_COUNT[kind])), sub)
    return sample


def _numbered(prefix: str, width: int, total: int, kind: str):
    def canon(value):
        text = str(value).strip().upper()
        m = re.fullmatch(rf"{prefix}-(\d{{{width}}})", text)
        if not m or not 1 <= int(m[1]) <= total:
            raise _bad(kind, value)
        return text
    sample = lambda rng, vocab, spec: f"{prefix}-{1 + int(rng.integers(total)):0{width}d}"  # noqa: E731
    return canon, sample


NEW_PREFIX = {**CREATED, "message_id": "MSG", "event_id": "EV"}


def created_id(etype_name: str, *parts) -> str:
    """A fresh id for a record a tool creates, drawn from the call (same call, same world: same id)."""
    h = stable_hash(etype_name, *parts)
    code = "".join(_ALPHABET[(h >> (5 * i)) % 32] for i in range(6))
    return f"{NEW_PREFIX[etype_name]}-{code}"


_CODE = f"[{_ALPHABET}]{{6}}"
_LINK = dict(linkable=True)
etype("flight_id", canon=_parse(r"FL-[A-Z]{3}-[A-Z]{3}-\d{8}-\d", "flight"), sample=_sample_flight, **_LINK)
etype("hotel_id", canon=_parse(r"HT-[A-Z]{3}-\d{2}", "hotel"), sample=_sample_local("HT", "hotel"), **_LINK)
etype("restaurant_id", canon=_parse(r"RS-[A-Z]{3}-\d{2}", "restaurant"), sample=_sample_local("RS", "restaurant"),
      **_LINK)
etype("place_id", canon=_parse(r"PL-[A-Z]{3}-[A-Z]{3}-\d", "place"),
      sample=_sample_local("PL", "place", tuple(PLACE_TYPES.values())), **_LINK)
etype("doctor_id", canon=_parse(r"DR-[A-Z]{3}-[A-Z]{3}-\d", "doctor"),
      sample=_sample_local("DR", "doctor", tuple(SPECIALTY_CODES.values())), **_LINK)
etype("product_id", canon=_parse(r"PR-[A-Z]{3}-\d{3}", "product"),
      sample=lambda rng, vocab, spec: f"PR-{pick(rng, list(pools.PRODUCT_CATEGORIES))}-"
                                      f"{1 + int(rng.integers(pools.PRODUCTS_PER_CATEGORY)):03d}", **_LINK)
for _name, _prefix, _width, _total in (("recipe_id", "RC", 3, N_RECIPES), ("track_id", "TR", 4, N_TRACKS),
                                      ("movie_id", "MV", 3, N_MOVIES), ("contact_id", "CT", 3, 40)):
    _canon, _sample = _numbered(_prefix, _width, _total, _name[:-3])
    etype(_name, canon=_canon, sample=_sample, **_LINK)
etype("account_id", canon=_parse(r"[A-Z]{3}-\d{4}", "account"),
      sample=lambda rng, vocab, spec: pick(rng, list(ACCOUNTS)), **_LINK)
etype("device_id", canon=_parse(r"DEV-\d{2}", "device"),
      sample=lambda rng, vocab, spec: pick(rng, [d[0] for d in words.DEVICES]), **_LINK)
etype("message_id", canon=_parse(rf"MSG-(\d{{4}}|{_CODE})", "message"),
      sample=lambda rng, vocab, spec: f"MSG-{1 + int(rng.integers(N_INBOX)):04d}", **_LINK)
etype("event_id", canon=_parse(rf"EV-\d{{8}}-(\d|{_CODE})", "event"),
      sample=lambda rng, vocab, spec: f"EV-{_date_sample(rng, vocab, spec).replace('-', '')}-1", **_LINK)
for _name, _prefix in CREATED.items():
    etype(_name, canon=_parse(rf"{_prefix}-{_CODE}", _name[:-3]), **_LINK,
          sample=lambda rng, vocab, spec, p=_prefix: f"{p}-" + "".join(pick(rng, _ALPHABET) for _ in range(6)))


def path_canon(value) -> str:
    text = str(value).strip()
    if not re.fullmatch(r"/home/user(/[\w.\- ]+)*/?", text) or "/../" in text + "/" or len(text) > 200:
        raise BadValue(f"invalid path {text[:80]!r}: give an absolute path under /home/user")
    return text.rstrip("/")


def dir_canon(value) -> str:
    text = path_canon(value)
    if text not in words.FILES and text != "/home/user" and text != "/home/user/Projects":
        raise BadValue(f"no such directory {text[:80]!r}")
    return text


etype("file_path", canon=path_canon, **_LINK, sample=lambda rng, vocab, spec: (
    lambda d: f"{d}/{pick(rng, words.FILES[d])}")(pick(rng, list(words.FILES))))
etype("directory", canon=dir_canon, **_LINK, sample=lambda rng, vocab, spec: pick(rng, list(words.FILES)))
etype("url", canon=lambda v: str(v), sample=lambda rng, vocab, spec: "https://share.example.com/f/ABC123")
