"""World records that live in places: weather, flights, hotels, restaurants, places and doctors.

Every record is a pure function of (world seed, its key): identities (names, cuisines) are drawn without
the world seed so an id means the same hotel everywhere, states (prices, availability, the weather) with
it. Caches make repeated lookups cheap; the values never depend on call order.
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import lru_cache
from math import acos, asin, cos, degrees, pi, radians, sin, sqrt, tan

from magic_envs.tool_planning.universe import ids, pools, words
from magic_envs.tool_planning.universe.etypes import BadValue
from magic_envs.tool_planning.universe.hashing import Stream, stable_hash

CONDITIONS = ("sunny", "partly_cloudy", "cloudy", "rain", "thunderstorm", "snow", "fog")
AQI_LEVELS = ("good", "moderate", "unhealthy_for_sensitive_groups", "unhealthy")
FLIGHT_STATUS = ("on_time", "delayed", "cancelled")
CABIN_FACTOR = {"economy": 1.0, "premium_economy": 1.6, "business": 3.5, "first": 6.0}
AIRLINES = (("SkyWays", "SW"), ("AeroNova", "AN"), ("BlueJet", "BJ"), ("Polar Air", "PA"),
            ("Meridian Airlines", "MR"), ("Coastal Wings", "CW"))
STREETS = ("Main", "Market", "Station", "River", "Park", "King", "Queen", "Church", "Harbor", "Elm")
AMENITIES = ("wifi", "pool", "gym", "spa", "parking", "breakfast", "pet_friendly", "airport_shuttle")
HOTEL_NAMES = (("Grand", "Royal", "City", "Riverside", "Park", "Harbor", "Central", "Old Town", "Skyline"),
               ("Hotel", "Inn", "Suites", "Residence", "Lodge", "Palace"))


def today(world: int) -> str:
    """The world's current date: relative words in a task ("tomorrow") resolve against it."""
    return (date(2025, 1, 1) + timedelta(days=stable_hash("today", world) % 700)).isoformat()


def city(name: str) -> dict:
    return pools.CITY_BY_KEY[name.lower()]


def distance_km(a: str, b: str) -> float:
    """Great-circle distance between two cities (haversine)."""
    ca, cb = city(a), city(b)
    p1, p2 = radians(ca["lat"]), radians(cb["lat"])
    dp, dl = p2 - p1, radians(cb["lon"] - ca["lon"])
    h = sin(dp / 2) ** 2 + cos(p1) * cos(p2) * sin(dl / 2) ** 2
    return round(2 * 6371.0 * asin(sqrt(h)), 1)


def clock(minutes: float) -> str:
    minutes = int(round(minutes)) % (24 * 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def minutes_of(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:])


def _address(s: Stream, place: str) -> str:
    return f"{s.int(1, 240)} {s.pick(STREETS)} Street, {place}"


# ---- weather: one record per (city, date), read by every weather, travel and planning tool ------------
@lru_cache(maxsize=8192)
def weather(world: int, name: str, day: str) -> dict:
    c, d = city(name), date.fromisoformat(day)
    s = Stream(world, "weather", name, day)
    doy, lat = d.timetuple().tm_yday, c["lat"]
    season = cos(2 * pi * (doy - 200) / 365.0) * (1 if lat >= 0 else -1)
    mean = 28 - 0.33 * abs(lat) + 0.17 * abs(lat) * season
    high = round(mean + 4 + s.uniform(-3, 3, 1), 1)
    low = round(mean - 4 + s.uniform(-3, 2, 1), 1)
    wet = s.unit()
    p_wet = 0.35 if abs(lat) < 15 else 0.25
    if wet < p_wet:
        condition = "snow" if high <= 2 else ("thunderstorm" if high > 22 and s.chance(0.35) else "rain")
    elif wet < p_wet + 0.05:
        condition = "fog"
    else:
        condition = s.pick(("sunny", "sunny", "partly_cloudy", "cloudy"))
    decl = -23.44 * cos(2 * pi * (doy + 10) / 365.0)
    x = max(-1.0, min(1.0, -tan(radians(lat)) * tan(radians(decl))))
    half_day = degrees(acos(x)) / 15.0 * 60  # minutes from solar noon to sunset
    noon = 12 * 60 + (c["utc_offset"] * 15 - c["lon"]) * 4
    elevation = 90 - abs(lat - decl)
    cloud = {"sunny": 1.0, "partly_cloudy": 0.8, "cloudy": 0.5, "fog": 0.5}.get(condition, 0.35)
    aqi = s.int(12, 170)
    return {"city": name, "date": day, "condition": condition, "temp_high": high, "temp_low": low,
            "temperature": round((high + low) / 2 + s.uniform(-2, 2, 1), 1),
            "humidity": s.int(35, 65) + (25 if condition in ("rain", "thunderstorm", "fog") else 0),
            "wind_kph": s.int(2, 45), "precip_chance": s.int(60, 100) if wet < p_wet else s.int(0, 30),
            "precip_mm": s.uniform(1, 25, 1) if wet < p_wet else 0.0,
            "uv_index": max(0, round(11 * max(0.0, sin(radians(elevation))) ** 2 * cloud)),
            "aqi": aqi, "aqi_category": AQI_LEVELS[min(3, (aqi - 1) // 50)],
            "sunrise": clock(noon - half_day), "sunset": clock(noon + half_day),
            "daylight_hours": round(2 * half_day / 60, 2)}


def hourly(world: int, name: str, day: str, hours: int) -> list[dict]:
    w = weather(world, name, day)
    s = Stream(world, "hourly", name, day)
    out = []
    for h in range(hours):
        phase = cos(2 * pi * (h - 15) / 24.0)  # warmest at 15:00, coolest before dawn
        temp = round(w["temp_low"] + (w["temp_high"] - w["temp_low"]) * (phase + 1) / 2, 1)
        cond = w["condition"] if s.chance(0.8) else s.pick(("partly_cloudy", "cloudy"))
        out.append({"time": f"{h:02d}:00", "temperature": temp, "condition": cond,
                    "precip_chance": max(0, min(100, w["precip_chance"] + s.int(-15, 15)))})
    return out


# ---- flights -----------------------------------------------------------------------------------------
def flight(world: int, fid: str, cabin: str = "economy") -> dict:
    key = ids.parse_flight(fid)
    base = _flight(world, fid, key["origin"], key["destination"], key["date"])
    return dict(base, price=round(base["price"] * CABIN_FACTOR.get(cabin, 1.0), 2), cabin_class=cabin)


@lru_cache(maxsize=8192)
def _flight(world: int, fid: str, origin: str, destination: str, day: str) -> dict:
    s = Stream(world, "flight", fid)
    km = distance_km(origin, destination)
    stops = 0 if km < 1500 else s.pick((0, 0, 1)) if km < 6000 else s.pick((0, 1, 1, 2))
    duration = int(round((km / 800 + 0.6 + 1.5 * stops + s.uniform(0, 0.5)) * 12)) * 5
    depart = s.int(24, 86) * 15
    shift = (city(destination)["utc_offset"] - city(origin)["utc_offset"]) * 60
    arrive = depart + duration + shift
    airline, code = s.pick(AIRLINES)
    status = "on_time" if s.chance(0.75) else ("delayed" if s.chance(0.75) else "cancelled")
    return {"flight_id": fid, "airline": airline, "flight_number": f"{code}{s.int(100, 9899)}",
            "origin": origin, "destination": destination, "date": day, "departure_time": clock(depart),
            "arrival_time": clock(arrive), "arrival_date": (date.fromisoformat(day) + timedelta(
                days=int(arrive // (24 * 60)))).isoformat(), "duration_minutes": duration, "stops": stops,
            "price": round((60 + 0.11 * km) * s.uniform(0.7, 1.3) * (1 - 0.12 * stops), 2), "currency": "USD",
            "seats_left": s.pick((0, s.int(1, 9), s.int(10, 60), s.int(10, 60))), "status": status,
            "delay_minutes": s.int(15, 180) if status == "delayed" else 0,
            "gate": f"{s.pick('ABCDE')}{s.int(1, 40)}", "terminal": str(s.int(1, 3))}


def flights(world: int, origin: str, destination: str, day: str, cabin: str = "economy") -> list[dict]:
    if origin == destination:
        raise BadValue("origin and destination must be different cities")
    return [flight(world, ids.flight_id(origin, destination, day, n), cabin)
            for n in range(1, ids.count("flight", city(origin)["code"], city(destination)["code"], day) + 1)]


# ---- hotels, restaurants, places, doctors ---------------------------------------------------------------
def _nights(check_in: str, check_out: str) -> list[str]:
    a, b = date.fromisoformat(check_in), date.fromisoformat(check_out)
    if b <= a:
        raise BadValue("check_out must be after check_in")
    if (b - a).days > 30:
        raise BadValue("stays are limited to 30 nights")
    return [(a + timedelta(days=i)).isoformat() for i in range((b - a).days)]


def hotel(world: int, hid: str, check_in: str = "", check_out: str = "") -> dict:
    key = ids.parse_local("hotel", hid)
    who, s = Stream("hotel", hid), Stream(world, "hotel", hid)
    stars = who.int(2, 5)
    price = round((40 + 45 * stars) * s.uniform(0.8, 1.4), 2)
    record = {"hotel_id": hid, "name": f"{who.pick(HOTEL_NAMES[0])} {who.pick(HOTEL_NAMES[1])} {key['city']}",
              "city": key["city"], "address": _address(who, key["city"]), "stars": stars,
              "rating": s.uniform(6.0 + 0.5 * stars, 7.5 + 0.5 * stars, 1), "price_per_night": price,
              "currency": "USD", "amenities": who.sample(AMENITIES, who.int(2, 6)),
              "check_in_time": "15:00", "check_out_time": "11:00"}
    if check_in and check_out:
        nights = _nights(check_in, check_out)
        record.update(available=all(Stream(world, "room", hid, n).chance(0.9) for n in nights),
                      nights=len(nights), total_price=round(price * len(nights), 2))
    return record


def restaurant(world: int, rid: str) -> dict:
    key = ids.parse_local("restaurant", rid)
    who, s = Stream("restaurant", rid), Stream(world, "restaurant", rid)
    opens = who.pick((7, 11, 12, 17)) * 60
    return {"restaurant_id": rid, "name": f"{who.pick(words.RESTAURANT_WORDS)} {who.pick(words.RESTAURANT_NOUNS)}",
            "city": key["city"], "cuisine": who.pick(words.CUISINES), "price_level": who.int(1, 4),
            "rating": s.uniform(3.0, 4.9, 1), "address": _address(who, key["city"]),
            "phone": f"+1555{who.int(1000000, 9999999)}", "opening_time": clock(opens),
            "closing_time": clock(min(opens + who.pick((9, 10, 11)) * 60, 23 * 60 + 30)),
            "accepts_reservations": who.chance(0.85)}


def table_available(world: int, rid: str, day: str, time: str, party: int) -> bool:
    r = restaurant(world, rid)
    inside = minutes_of(r["opening_time"]) <= minutes_of(time) <= minutes_of(r["closing_time"]) - 60
    return inside and party <= 12 and Stream(world, "table", rid, day, time, party).chance(0.75)


def place(world: int, pid: str) -> dict:
    key = ids.parse_local("place", pid)
    kind = {v: k for k, v in ids.PLACE_TYPES.items()}[key["sub"]]
    who, s = Stream("place", pid), Stream(world, "place", pid)
    label = kind.replace("_", " ").title()
    return {"place_id": pid, "name": f"{who.pick(words.RESTAURANT_WORDS)} {label}", "type": kind,
            "city": key["city"], "address": _address(who, key["city"]), "rating": s.uniform(3.0, 4.9, 1),
            "distance_m": who.int(1, 60) * 100, "open_now": s.chance(0.7)}


def doctor(world: int, did: str) -> dict:
    key = ids.parse_local("doctor", did)
    specialty = {v: k for k, v in ids.SPECIALTY_CODES.items()}[key["sub"]]
    who, s = Stream("doctor", did), Stream(world, "doctor", did)
    first = who.pick(words.FIRST_NAMES["iid"] + words.FIRST_NAMES["ood"])
    last = who.pick(words.LAST_NAMES["iid"] + words.LAST_NAMES["ood"])
    soon = date.fromisoformat(today(world)) + timedelta(days=s.int(1, 21))
    return {"doctor_id": did, "name": f"Dr. {first} {last}", "specialty": specialty, "city": key["city"],
            "clinic_address": _address(who, key["city"]), "rating": s.uniform(3.5, 5.0, 1),
            "accepts_new_patients": s.chance(0.8), "next_available": soon.isoformat()}


def slot_free(world: int, did: str, day: str, time: str) -> bool:
    inside = 8 * 60 <= minutes_of(time) <= 17 * 60
    return inside and Stream(world, "slot", did, day, time).chance(0.7)


def local_ids(prefix: str, kind: str, name: str, sub: str = "") -> list[str]:
    code = city(name)["code"]
    key = (code, sub) if sub else (code,)
    return [ids.local_id(prefix, name, n, sub) for n in range(1, ids.count(kind, *key) + 1)]
