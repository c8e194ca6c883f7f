"""The airline tools' constants, their OpenAI tool schemas and the shapes their results print in (tau2-bench's
field order). `airline_tools` re-exports every public name here."""

from __future__ import annotations

from magic_envs.core.tools import Tool

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
