"""World records that are not tied to a place: markets, money, calendars, people, files, the home, food
and media. Same rule as world_geo: identities without the world seed, states with it."""

from __future__ import annotations

from datetime import date, timedelta
from functools import cache, lru_cache
from math import exp, log, pi, sin

from magic_envs.tool_planning.universe import ids, pools, words
from magic_envs.tool_planning.universe.etypes import BadValue, date_canon, email_of
from magic_envs.tool_planning.universe.hashing import Stream, stable_hash
from magic_envs.tool_planning.universe.world_geo import clock, minutes_of, today

MERCHANTS = (("FreshMart", "groceries"), ("City Transit", "transport"), ("Bean There Cafe", "dining"),
             ("PowerGrid Energy", "utilities"), ("StreamFlix", "entertainment"), ("QuickFuel", "transport"),
             ("HomeGoods Plus", "shopping"), ("Trattoria Roma", "dining"), ("PharmaCare", "health"))
TX_CATEGORIES = ("groceries", "transport", "dining", "utilities", "entertainment", "shopping", "health")
ORDER_STATUS = ("processing", "shipped", "out_for_delivery", "delivered")
TEXT_EXT = ("txt", "md", "csv", "json", "py", "html", "css", "js", "m3u")


def _day(d: str, shift: int) -> str:
    return (date.fromisoformat(d) + timedelta(days=shift)).isoformat()


# ---- shopping --------------------------------------------------------------------------------------------
@lru_cache(maxsize=16384)
def product(world: int, pid: str) -> dict:
    cat, n = pid.split("-")[1], int(pid.split("-")[2])
    if cat not in pools.PRODUCT_CATEGORIES or not 1 <= n <= pools.PRODUCTS_PER_CATEGORY:
        raise BadValue(f"no product {pid!r} exists")
    keywords, noun, (lo, hi) = pools.PRODUCT_CATEGORIES[cat]
    who, s = Stream("product", pid), Stream(world, "product", pid)
    stock = s.pick((0, s.int(1, 5), s.int(6, 200), s.int(6, 200)))
    brand = who.pick(pools.BRANDS)
    return {"product_id": pid, "name": f"{brand} {who.pick(pools.MODEL_WORDS)} {noun}",
            "category": keywords[0], "brand": brand, "price": s.uniform(lo, hi),
            "currency": "USD", "rating": s.uniform(2.8, 5.0, 1), "review_count": s.int(0, 4000),
            "in_stock": stock > 0, "stock_quantity": stock, "shipping_days": s.int(1, 7)}


def products(world: int, query: str) -> list[dict]:
    q = set(query.lower().replace("-", " ").split())
    cats = [c for c, (kw, _, _) in pools.PRODUCT_CATEGORIES.items() if q & set(kw)]
    return [product(world, f"PR-{c}-{n:03d}") for c in cats for n in range(1, pools.PRODUCTS_PER_CATEGORY + 1)]


def order(world: int, oid: str) -> dict:
    s = Stream(world, "order", oid)
    status = s.pick(ORDER_STATUS)
    return {"order_id": oid, "status": status, "carrier": s.pick(("UPS", "FedEx", "DHL", "USPS")),
            "tracking_number": f"1Z{s.int(10**9, 10**10 - 1)}",
            "estimated_delivery": _day(today(world), 0 if status == "delivered" else s.int(1, 6))}


# ---- markets and money -----------------------------------------------------------------------------------
@lru_cache(maxsize=16384)
def stock_price(world: int, symbol: str, day: str) -> float:
    base = pools.STOCKS[symbol]["base_price"]
    t = date.fromisoformat(day).toordinal()
    s = Stream(world, "stock", symbol)
    drift = 0.2 * sin(2 * pi * t / 365.0 + 6 * s.unit()) + 0.07 * sin(2 * pi * t / 29.0 + 6 * s.unit())
    noise = 0.025 * (Stream(world, "tick", symbol, day).unit() - 0.5)
    return round(exp(log(base) + drift + noise), 2)


def stock(world: int, symbol: str, day: str) -> dict:
    price, before = stock_price(world, symbol, day), stock_price(world, symbol, _day(day, -1))
    info = pools.STOCKS[symbol]
    return {"symbol": symbol, "company": info["company"], "sector": info["sector"], "date": day, "price": price,
            "currency": "USD", "previous_close": before, "change_pct": round(100 * (price / before - 1), 2),
            "trend": "up" if price >= before else "down",
            "volume": Stream(world, "volume", symbol, day).int(10**6, 9 * 10**7),
            "market_cap_billion": round(price * (5 + stable_hash(symbol) % 150) / 10, 1)}


def _fx_factor(world: int, code: str, day: str) -> float:
    return 1.0 if code == "USD" else 1 + 0.04 * (Stream(world, "fx", code, day).unit() - 0.5)


def fx_rate(world: int, base: str, target: str, day: str) -> float:
    usd = pools.CURRENCIES
    value = usd[base][1] * _fx_factor(world, base, day) / (usd[target][1] * _fx_factor(world, target, day))
    return float(f"{value:.6g}")


def crypto(world: int, coin: str, currency: str, day: str) -> dict:
    name, usd = pools.CRYPTO[coin]
    s = Stream(world, "crypto", coin, day)
    price = usd * (1 + 0.3 * (s.unit() - 0.5)) / fx_rate(world, currency, "USD", day)
    return {"coin": coin, "name": name, "price": float(f"{price:.6g}"), "currency": currency,
            "change_24h_pct": s.uniform(-8, 8), "date": day}


def account(world: int, aid: str) -> dict:
    if aid not in ids.ACCOUNTS:
        raise BadValue(f"account {aid!r} is not one of your accounts")
    kind, s = ids.ACCOUNTS[aid], Stream(world, "account", aid)
    lo, hi = {"checking": (150, 8000), "savings": (1000, 30000), "credit_card": (-3000, 0),
              "business": (2000, 50000)}[kind]
    return {"account_id": aid, "account_type": kind, "balance": s.uniform(lo, hi), "currency": "USD",
            "holder": "Alex Morgan", "status": "active"}


def transactions(world: int, aid: str, start: str, end: str) -> list[dict]:
    account(world, aid)
    a, b = date.fromisoformat(start), date.fromisoformat(end)
    if b < a or (b - a).days > 92:
        raise BadValue("end_date must be on or after start_date, within 92 days")
    out = []
    for i in range((b - a).days + 1):
        day = (a + timedelta(days=i)).isoformat()
        s = Stream(world, "tx", aid, day)
        for k in range(s.pick((0, 0, 1, 1, 2))):
            merchant, category = s.pick(MERCHANTS)
            out.append({"transaction_id": f"TX-{Stream(aid, day, k).code()}", "date": day, "merchant": merchant,
                        "category": category, "amount": -s.uniform(3, 180)})
    return out


# ---- calendar and people ------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def contacts() -> list[dict]:
    """The address book: 40 people, the same in every world (built on first use, to keep imports fast)."""
    firsts = [n for pair in zip(words.FIRST_NAMES["iid"], words.FIRST_NAMES["ood"]) for n in pair]
    lasts = words.LAST_NAMES["iid"] + words.LAST_NAMES["ood"]
    out = []
    for i in range(40):
        first, last = firsts[i % len(firsts)], lasts[(7 * i) % len(lasts)]
        s = Stream("contact", i)
        out.append({"contact_id": f"CT-{i + 1:03d}", "name": f"{first} {last}", "email": email_of(first, last),
                    "phone": f"+1555{s.int(1000000, 9999999)}", "company": s.pick(words.COMPANIES)})
    return out


def contact(cid: str) -> dict:
    return contacts()[int(cid[3:]) - 1]


@lru_cache(maxsize=4096)
def day_events(world: int, day: str) -> tuple:
    """The user's own calendar for one day: 1 to 4 events (their number is the same in every world)."""
    n = 1 + stable_hash("events", day) % 4
    s = Stream(world, "events", day)
    starts = sorted(s.sample(range(8 * 60, 18 * 60, 60), n))
    titles = words.EVENT_TITLES["iid"] + words.EVENT_TITLES["ood"]
    out = []
    for k, start in enumerate(starts, 1):
        length = s.pick((30, 45, 60))
        out.append({"event_id": f"EV-{day.replace('-', '')}-{k}", "title": s.pick(titles), "date": day,
                    "start_time": clock(start), "end_time": clock(start + length), "duration_minutes": length,
                    "location": s.pick(("Room 101", "Online", "Cafe downstairs", "Main office")),
                    "attendees": [c["email"] for c in s.sample(contacts(), s.int(0, 3))]})
    return tuple(out)


def event(world: int, eid: str) -> dict:
    try:
        day = date_canon(f"{eid[3:7]}-{eid[7:9]}-{eid[9:11]}")
    except BadValue:
        raise BadValue(f"no event {eid!r} exists") from None
    tail = eid.split("-")[2]
    if tail.isdigit():
        listed = day_events(world, day)
        if int(tail) > len(listed) or int(tail) < 1:
            raise BadValue(f"no event {eid!r} exists")
        return dict(listed[int(tail) - 1])
    s = Stream(world, "new-event", eid)  # created by create_event: the world keeps no state, so its fields
    start = s.int(16, 34) * 30            # are drawn from the id, the same on every read
    return {"event_id": eid, "title": "New event", "date": day, "start_time": clock(start),
            "end_time": clock(start + 60), "duration_minutes": 60, "location": "", "attendees": []}


def busy(world: int, who: str, day: str) -> list[tuple[int, int]]:
    s = Stream(world, "busy", who, day)
    return [(start, start + s.pick((30, 60, 90))) for start in s.sample(range(8 * 60, 18 * 60, 30), s.int(0, 4))]


def free_slots(world: int, day: str, length: int, earliest: str, latest: str) -> list[dict]:
    lo, hi = minutes_of(earliest), minutes_of(latest)
    if hi <= lo:
        raise BadValue("latest_time must be after earliest_time")
    taken = sorted((minutes_of(e["start_time"]), minutes_of(e["end_time"])) for e in day_events(world, day))
    out, cursor = [], lo
    for start, end in taken + [(hi, hi)]:
        if min(start, hi) - cursor >= length:
            out.append({"start_time": clock(cursor), "end_time": clock(min(start, hi))})
        cursor = max(cursor, end)
    return out


def message(world: int, mid: str) -> dict:
    if mid[4:].isdigit() and not 1 <= int(mid[4:]) <= ids.N_INBOX:
        raise BadValue(f"no message {mid!r} exists")
    s = Stream(world, "mail", mid)
    sender = s.pick(contacts())
    sent = not mid[4:].isdigit()
    return {"message_id": mid, "from": "me@example.com" if sent else sender["email"],
            "sender_name": "Me" if sent else sender["name"], "to": [sender["email"]] if sent else ["me@example.com"],
            "subject": s.pick(words.SUBJECTS["iid"] + words.SUBJECTS["ood"]),
            "body": s.pick(words.BODIES["iid"] + words.BODIES["ood"]), "date": _day(today(world), -s.int(0, 30)),
            "folder": "sent" if sent else s.pick(("inbox", "inbox", "inbox", "archive")),
            "unread": (not sent) and s.chance(0.4), "has_attachment": s.chance(0.3)}


@lru_cache(maxsize=256)
def inbox(world: int) -> list[dict]:
    return [message(world, f"MSG-{i:04d}") for i in range(1, ids.N_INBOX + 1)]


# ---- files and the home ---------------------------------------------------------------------------------
def file_listing(directory: str, recursive: bool) -> list[str]:
    return [f"{d}/{name}" for d, names in words.FILES.items() for name in names
            if d == directory or (recursive and d.startswith(directory + "/"))]


def file_info(world: int, path: str) -> dict:
    directory, _, name = path.rpartition("/")
    if name not in words.FILES.get(directory, ()):
        raise BadValue(f"no such file {path[:120]!r}")
    s, ext = Stream(world, "file", path), name.rpartition(".")[2]
    text = ext in TEXT_EXT
    return {"path": path, "name": name, "directory": directory, "extension": ext,
            "size_kb": s.int(1, 80) if text else s.int(100, 40000), "modified": _day(today(world), -s.int(0, 200)),
            "owner": "user", "is_text": text,
            "content": s.pick(words.FILE_TEXT) if text else "", "lines": s.int(1, 300) if text else 0}


def device(world: int, did: str) -> dict:
    match = [d for d in words.DEVICES if d[0] == did]
    if not match:
        raise BadValue(f"no device {did!r} in this home")
    _, name, kind, room = match[0]
    s = Stream(world, "device", did)
    battery = s.int(5, 100) if kind in ("lock", "vacuum") else None
    return {"device_id": did, "name": name, "type": kind, "room": room, "power": s.pick(("on", "off")),
            "online": s.chance(0.9), "battery_pct": battery}


# ---- food and media (catalogues) ------------------------------------------------------------------------------
def _catalogue(n: int, build) -> list[dict]:
    return [build(i, Stream("catalogue", build.__name__, i)) for i in range(1, n + 1)]


def _recipe(i, s):
    ingredients = words.INGREDIENTS["iid"] + words.INGREDIENTS["ood"]
    main = ingredients[(i * 7) % len(ingredients)]
    extra = [x for x in s.sample(ingredients, 4) if x != main][:3]
    return {"recipe_id": f"RC-{i:03d}", "name": f"{main.title()} {s.pick(words.DISHES)}",
            "cuisine": words.CUISINES[i % len(words.CUISINES)], "ingredients": [main] + extra,
            "prep_minutes": s.int(2, 18) * 5, "servings": s.int(2, 6), "calories_per_serving": s.int(250, 850),
            "vegetarian": main not in ("chicken", "beef", "salmon")}


def _track(i, s):
    return {"track_id": f"TR-{i:04d}", "title": f"{s.pick(words.SONG_WORDS)} {s.pick(words.SONG_WORDS)}",
            "artist": s.pick(words.ARTISTS), "genre": words.MUSIC_GENRES[i % len(words.MUSIC_GENRES)],
            "duration_seconds": s.int(150, 330), "year": s.int(1995, 2025)}


def _movie(i, s):
    return {"movie_id": f"MV-{i:03d}", "title": f"The {s.pick(words.MOVIE_WORDS)} {s.pick(words.MOVIE_NOUNS)}",
            "genre": words.MOVIE_GENRES[i % len(words.MOVIE_GENRES)], "year": s.int(1995, 2025),
            "runtime_minutes": s.int(85, 165),
            "director": f"{s.pick(words.FIRST_NAMES['iid'])} {s.pick(words.LAST_NAMES['iid'])}"}


@cache
def catalogue(kind: str) -> list[dict]:
    """The fixed recipe, track or movie catalogue (built on first use)."""
    n, build = {"recipe": (ids.N_RECIPES, _recipe), "track": (ids.N_TRACKS, _track), "movie": (ids.N_MOVIES,
                                                                                               _movie)}[kind]
    return _catalogue(n, build)


@lru_cache(maxsize=65536)
def _rating(world: int, rid: str, lo: float, hi: float) -> float:
    return Stream(world, "rating", rid).uniform(lo, hi, 1)


def rated(world: int, record: dict, key: str, lo: float, hi: float) -> dict:
    return dict(record, rating=_rating(world, record[key], lo, hi))
