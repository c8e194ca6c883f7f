"""How the airline task planner words things for the customer; used as `say`:
`from magic_envs.procedures import airline_wording as say`, then `say.money(120)`, `say.plural(2, "bag")`."""

from __future__ import annotations

from magic_envs.procedures.airline_rules import price_of


def day(date: str) -> str:
    return f"May {int(date[8:])}"


def cabin(cabin: str) -> str:
    return cabin.replace("_", " ")


def money(amount) -> str:
    return f"${amount:g}" if isinstance(amount, float) else f"${amount}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def person(p: dict) -> str:
    return f"{p['first_name']} {p['last_name']}"


def segments(reservation: dict) -> str:
    return "; ".join(f"{s['flight_number']} from {s['origin']} to {s['destination']} on {s['date']}"
                     for s in reservation["flights"])


def option(option, cabin: str) -> str:
    legs = option if isinstance(option, list) else [option]
    route = " then ".join(f"{leg['flight_number']} ({leg['origin']} {clock(leg['scheduled_departure_time_est'])} to "
                          f"{leg['destination']} {clock(leg['scheduled_arrival_time_est'])})" for leg in legs)
    return f"{route} at {money(price_of(option, cabin))} per passenger"


def clock(time: str) -> str:
    return time[:5] + (" the next day" if time.endswith("+1") else "")


def payment(user: dict, pm_id: str) -> str:
    """How a customer names one of their payment methods."""
    pm = user["payment_methods"][pm_id]
    if pm["source"] == "credit_card":
        return f"my {pm['brand']} credit card ending in {pm['last_four']}"
    return f"my {'gift card' if pm['source'] == 'gift_card' else 'travel certificate'} {pm_id}"
