"""The airline tools that change the database (booking, cancelling, updating a reservation, sending a
certificate), and the record lookups and checks that the reading tools in `airline_tools` share with them.
See `airline_tools` for the data model and tau2's quirks that `quirks` switches."""

from __future__ import annotations

from magic_envs.procedures.airline_schema import (
    BAG_PRICE,
    INSURANCE_PRICE,
    NEW_CERTIFICATE_IDS,
    NEW_RESERVATION_IDS,
    NOW,
    PASSENGER_FIELDS,
    _reservation_view,
)
from magic_envs.procedures.database import ToolError

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


# --------------------------------------------------------------------- tools that change the database

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
