"""Record kinds: the bridge between a function's declared `record`/`refs`/`search` and the world.

A getter takes (world, args) and returns one record (a dict); a searcher returns a list of records. Args are
the call's canonical arguments, after a function's `bind` renamed them to the names a kind reads (so
`origin` may arrive as `from_city`). Several functions read one kind: that is what keeps, say, the weather
the same whichever weather tool asks.
"""

from __future__ import annotations

from datetime import date, timedelta

from magic_envs.tool_planning.universe import ids, pools, words
from magic_envs.tool_planning.universe import world_geo as geo
from magic_envs.tool_planning.universe import world_things as things
from magic_envs.tool_planning.universe.etypes import BadValue
from magic_envs.tool_planning.universe.hashing import Stream

SPEED_KPH = {"driving": 75, "transit": 55, "cycling": 16, "walking": 5}
HOLIDAYS = (("01-01", "New Year's Day"), ("05-01", "Labour Day"), ("12-25", "Christmas Day"),
            ("12-26", "Boxing Day"), ("12-31", "New Year's Eve"))


def _today(world, args, key="date"):
    return args.get(key) or geo.today(world)


def route(world: int, args: dict) -> dict:
    a, b, mode = args["origin"], args["destination"], args.get("mode", "driving")
    if a == b:
        raise BadValue("origin and destination must be different cities")
    km = round(geo.distance_km(a, b) * (1.0 if mode == "flying" else 1.25), 1)
    s = Stream(world, "traffic", a, b)
    traffic = s.pick(("light", "moderate", "heavy")) if mode == "driving" else "none"
    slow = {"light": 1.0, "moderate": 1.15, "heavy": 1.4, "none": 1.0}[traffic]
    avoid = args.get("avoid", [])
    minutes = int(round(km / SPEED_KPH.get(mode, 75) * 60 * slow * (1.08 if avoid else 1.0)))
    return {"origin": a, "destination": b, "mode": mode, "distance_km": km, "duration_minutes": minutes,
            "traffic": traffic, "toll_roads": mode == "driving" and "tolls" not in avoid and s.chance(0.5),
            "summary": f"via {s.pick(('the A1', 'the E45', 'Route 9', 'the coastal road', 'the expressway'))}"}


def city_info(world: int, args: dict) -> dict:
    c = geo.city(args["city"])
    off = c["utc_offset"]
    sign = "+" if off >= 0 else "-"
    tz = f"UTC{sign}{int(abs(off)):02d}:{int(abs(off) % 1 * 60):02d}"
    return {"city": c["name"], "country": c["country"], "latitude": c["lat"], "longitude": c["lon"],
            "timezone": tz, "utc_offset": off, "currency": c["currency"], "city_code": c["code"],
            "local_time": geo.clock(Stream(world, "clock").int(0, 24 * 60 - 1) + off * 60)}


def nearest_city(world: int, args: dict) -> dict:
    lat, lon = args["latitude"], args["longitude"]
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        raise BadValue("latitude must lie in [-90, 90] and longitude in [-180, 180]")
    best = min(pools.CITIES, key=lambda c: (c["lat"] - lat) ** 2 + ((c["lon"] - lon + 180) % 360 - 180) ** 2)
    return city_info(world, {"city": best["name"]})


def visa(world: int, args: dict) -> dict:
    a, b = args["nationality"], args["destination_country"]
    s = Stream("visa", a, b)
    required = a != b and s.chance(0.4)
    return {"nationality": a, "destination_country": b, "visa_required": required,
            "visa_on_arrival": required and s.chance(0.3), "max_stay_days": 0 if a == b else s.pick((30, 90, 90, 180)),
            "passport_validity_months": 0 if a == b else s.pick((3, 6))}


def availability(world: int, args: dict) -> dict:
    start = geo.minutes_of(args["start_time"])
    end = start + args.get("duration_minutes", 60)
    clash = [b for b in things.busy(world, args["email"], args["date"]) if b[0] < end and start < b[1]]
    return {"email": args["email"], "date": args["date"], "start_time": args["start_time"],
            "available": not clash, "conflicts": len(clash)}


def stock_history(world: int, args: dict) -> list[dict]:
    a, b = date.fromisoformat(args["start_date"]), date.fromisoformat(args["end_date"])
    if b < a or (b - a).days > 366:
        raise BadValue("end_date must be on or after start_date, within one year")
    step = 7 if args.get("interval") == "weekly" else 1
    days = [(a + timedelta(days=i)).isoformat() for i in range(0, (b - a).days + 1, step)]
    return [{"date": d, "close": things.stock_price(world, args["symbol"], d)} for d in days]


def medication(world: int, args: dict) -> dict:
    dose, effects = words.MEDICATIONS[args["medication"]]
    return {"medication": args["medication"], "typical_dose": dose, "side_effects": list(effects),
            "requires_prescription": args["medication"] in ("amoxicillin", "metformin", "omeprazole")}


def daily_health(world: int, args: dict) -> dict:
    s = Stream(world, "health", _today(world, args))
    steps = s.int(1500, 16000)
    return {"date": _today(world, args), "steps": steps, "goal": 10000, "goal_met": steps >= 10000,
            "distance_km": round(steps * 0.00075, 2), "active_minutes": s.int(5, 120),
            "sleep_hours": s.uniform(4.5, 9.5, 1), "sleep_quality": s.pick(("poor", "fair", "good", "excellent")),
            "resting_heart_rate": s.int(52, 82)}


def news(world: int, args: dict) -> list[dict]:
    topic, day = args["topic"], geo.today(world)
    s = Stream(world, "news", topic, day, args.get("country", ""))
    subjects = {"technology": "chipmaker", "business": "retailer", "sports": "club", "science": "research team",
                "health": "hospital group", "politics": "parliament", "entertainment": "studio"}
    verbs = ("announces", "unveils", "reports record", "faces questions over", "delays", "celebrates")
    return [{"headline": f"{s.pick(words.RESTAURANT_WORDS)} {subjects[topic]} {s.pick(verbs)} "
                         f"{s.pick(('new plan', 'results', 'partnership', 'launch', 'season'))}",
             "source": s.pick(("Daily Ledger", "World Wire", "Metro Times", "The Observer Post")),
             "published": day, "topic": topic} for _ in range(8)]


def menu(world: int, args: dict) -> list[dict]:
    geo.restaurant(world, args["restaurant_id"])
    s, staples = Stream("menu", args["restaurant_id"]), words.INGREDIENTS["iid"] + words.INGREDIENTS["ood"]
    prices = Stream(world, "menu", args["restaurant_id"])
    return [{"dish": f"{s.pick(staples).title()} {s.pick(words.DISHES)}", "price": prices.uniform(7, 32),
             "vegetarian": s.chance(0.3)} for _ in range(6)]


def holidays(world: int, args: dict) -> list[dict]:
    return [{"date": f"{args['year']}-{md}", "name": name, "country": args["country"]}
            for md, name in HOLIDAYS if Stream("holiday", args["country"], name).chance(0.8) or md == "01-01"]


def showtimes(world: int, args: dict) -> list[dict]:
    s = Stream(world, "showtimes", args["movie_id"], args["city"], args["date"])
    return [{"cinema": f"{s.pick(('Odeon', 'Cineworld', 'Rex', 'Plaza', 'Lumiere'))} {args['city']}",
             "times": sorted({geo.clock(s.int(44, 88) * 15) for _ in range(3)}),
             "price": s.uniform(8, 18)} for _ in range(s.int(1, 4))]


def reviews(world: int, args: dict) -> list[dict]:
    things.product(world, args["product_id"])
    s = Stream(world, "reviews", args["product_id"])
    return [{"stars": s.int(1, 5), "title": s.pick(("Great value", "Stopped working", "Does the job",
                                                     "Love it", "Not as described", "Solid build")),
             "author": s.pick(words.FIRST_NAMES["iid"]), "date": things._day(geo.today(world), -s.int(1, 300))}
            for _ in range(10)]


def alerts(world: int, args: dict) -> list[dict]:
    w = geo.weather(world, args["city"], geo.today(world))
    kinds = {"thunderstorm": "severe_thunderstorm", "snow": "winter_storm", "fog": "dense_fog"}
    out = [{"type": kinds[w["condition"]], "severity": "moderate"}] if w["condition"] in kinds else []
    if w["temp_high"] >= 33:
        out.append({"type": "heat_wave", "severity": "high"})
    return out


def path_state(path: str) -> dict:
    directory, _, name = path.rpartition("/")
    if directory not in words.FILES:
        raise BadValue(f"no such directory {directory[:120]!r}")
    return {"path": path, "name": name, "directory": directory, "exists": name in words.FILES[directory]}


def energy(world: int, args: dict) -> dict:
    days = (date.fromisoformat(args["end_date"]) - date.fromisoformat(args["start_date"])).days + 1
    if not 1 <= days <= 366:
        raise BadValue("end_date must be on or after start_date, within one year")
    who = args.get("device_id", "home")
    if who != "home":
        things.device(world, who)
    per_day = Stream(world, "energy", who).uniform(0.2, 1.5 if who != "home" else 14.0)
    kwh = round(per_day * days, 2)
    return {"device_id": who, "days": days, "total_kwh": kwh, "cost": round(kwh * 0.28, 2), "currency": "USD"}


GETS = {
    "weather": lambda w, a: geo.weather(w, a["city"], _today(w, a)),
    "flight": lambda w, a: geo.flight(w, a["flight_id"], a.get("cabin_class", "economy")),
    "hotel": lambda w, a: geo.hotel(w, a["hotel_id"], a.get("check_in", ""), a.get("check_out", "")),
    "restaurant": lambda w, a: dict(geo.restaurant(w, a["restaurant_id"]), **(
        {"table_available": geo.table_available(w, a["restaurant_id"], a["date"], a["time"], a["party_size"])}
        if "time" in a and "party_size" in a else {})),
    "place": lambda w, a: geo.place(w, a["place_id"]),
    "doctor": lambda w, a: dict(geo.doctor(w, a["doctor_id"]), **(
        {"slot_available": geo.slot_free(w, a["doctor_id"], a["date"], a["time"])} if "time" in a else {})),
    "product": lambda w, a: things.product(w, a["product_id"]),
    "order": lambda w, a: things.order(w, a["order_id"]),
    "stock": lambda w, a: things.stock(w, a["symbol"], _today(w, a)),
    "fx": lambda w, a: {"rate": things.fx_rate(w, a["base_currency"], a["target_currency"], _today(w, a)),
                        "date": _today(w, a)},
    "crypto": lambda w, a: things.crypto(w, a["coin"], a.get("currency", "USD"), geo.today(w)),
    "account": lambda w, a: things.account(w, a["account_id"]),
    "event": lambda w, a: things.event(w, a["event_id"]),
    "contact": lambda w, a: things.contact(a["contact_id"]),
    "message": lambda w, a: things.message(w, a["message_id"]),
    "file": lambda w, a: things.file_info(w, a["path"]),
    "device": lambda w, a: things.device(w, a["device_id"]),
    "recipe": lambda w, a: things.rated(w, things.catalogue("recipe")[int(a["recipe_id"][3:]) - 1], "recipe_id", 3.0,
                                        5.0),
    "track": lambda w, a: things.catalogue("track")[int(a["track_id"][3:]) - 1],
    "movie": lambda w, a: things.rated(w, things.catalogue("movie")[int(a["movie_id"][3:]) - 1], "movie_id", 4.5, 9.2),
    "path": lambda w, a: path_state(a["path"]), "energy": energy,
    "route": route, "city": city_info, "nearest_city": nearest_city, "visa": visa, "availability": availability,
    "medication": medication, "health": daily_health,
}

SEARCHES = {
    "flights": lambda w, a: geo.flights(w, a["origin"], a["destination"], a["date"], a.get("cabin_class", "economy")),
    "hotels": lambda w, a: [geo.hotel(w, h, a["check_in"], a["check_out"]) for h in geo.local_ids("HT", "hotel",
                                                                                                  a["city"])],
    "restaurants": lambda w, a: [geo.restaurant(w, r) for r in geo.local_ids("RS", "restaurant", a["city"])],
    "places": lambda w, a: [geo.place(w, p) for p in geo.local_ids("PL", "place", a["city"],
                                                                    ids.PLACE_TYPES[a["place_type"]])],
    "doctors": lambda w, a: [geo.doctor(w, d) for d in geo.local_ids("DR", "doctor", a["city"],
                                                                       ids.SPECIALTY_CODES[a["specialty"]])],
    "products": lambda w, a: things.products(w, a["query"]),
    "transactions": lambda w, a: things.transactions(w, a["account_id"], a["start_date"], a["end_date"]),
    "events": lambda w, a: [e for i in range(_span(a)) for e in things.day_events(
        w, (date.fromisoformat(a["date"]) + timedelta(days=i)).isoformat())],
    "free_slots": lambda w, a: things.free_slots(w, a["date"], a["duration_minutes"], a["earliest_time"],
                                                 a["latest_time"]),
    "contacts": lambda w, a: [c for c in things.contacts() if a["name"].lower() in c["name"].lower()],
    "emails": lambda w, a: [m for m in things.inbox(w) if a["query"].lower() in
                            f"{m['subject']} {m['sender_name']} {m['from']}".lower()],
    "files": lambda w, a: [things.file_info(w, p) for p in things.file_listing(a["directory"], a.get("recursive", True))
                           if a.get("query", "").lower() in p.rpartition("/")[2].lower()],
    "devices": lambda w, a: [things.device(w, d[0]) for d in words.DEVICES],
    "recipes": lambda w, a: sorted((things.rated(w, r, "recipe_id", 3.0, 5.0) for r in things.catalogue("recipe")
                                    if set(a["ingredients"]) & set(r["ingredients"])),
                                   key=lambda r: -len(set(a["ingredients"]) & set(r["ingredients"]))),
    "tracks": lambda w, a: [t for t in things.catalogue("track") if a["query"].lower() in
                            f"{t['title']} {t['artist']} {t['genre']}".lower()],
    "movies": lambda w, a: [things.rated(w, m, "movie_id", 4.5, 9.2) for m in things.catalogue("movie")
                            if a.get("query", "").lower() in m["title"].lower()],
    "weather_many": lambda w, a: [geo.weather(w, c, _today(w, a)) for c in a["cities"]],
    "accounts": lambda w, a: [things.account(w, x) for x in ids.ACCOUNTS],
    "hourly": lambda w, a: geo.hourly(w, a["city"], _today(w, a), a.get("hours", 24)),
    "stock_history": stock_history, "news": news, "holidays": holidays, "showtimes": showtimes,
    "reviews": reviews, "alerts": alerts, "menu": menu,
}


def _span(args: dict) -> int:
    end = args.get("end_date") or args["date"]
    days = (date.fromisoformat(end) - date.fromisoformat(args["date"])).days + 1
    if not 1 <= days <= 31:
        raise BadValue("end_date must be on or after date, within 31 days")
    return days
