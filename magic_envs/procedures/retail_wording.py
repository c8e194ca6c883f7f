"""How the retail task planner and oracle word things for the customer; used as `say`:
`from magic_envs.procedures import retail_wording as say`, then `say.money(12.5)`, `say.listing(["a", "b"])`."""

from __future__ import annotations


def money(amount: float) -> str:
    # Thousands separators, as people write amounts: "$1192.18" would read as a card's last four "1192".
    return f"${amount:,.2f}"


def address(a: dict) -> str:
    return f"{a['address1']}, {a['address2']}, {a['city']}, {a['state']} {a['zip']}, {a['country']}"


def options(options: dict) -> str:
    return ", ".join(f"{key} {value}" for key, value in options.items())


def listing(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def article(name: str) -> str:
    return ("an " if name[0] in "AEIOU" else "a ") + name


def the(names: list[str]) -> str:
    return listing([f"the {n}" for n in names])


def payment(user: dict, pm_id: str) -> str:
    """How a customer names one of their payment methods ("my visa credit card ending in 1234", "my PayPal
    account", "my gift card", "my gift card ending in 5678"), or by its id where that would be ambiguous."""
    def phrase(pm: dict, gift_cards: int) -> str:
        if pm["source"] == "credit_card":
            return f"my {pm['brand']} credit card ending in {pm['last_four']}"
        if pm["source"] == "paypal":
            return "my PayPal account"
        return "my gift card" if gift_cards == 1 else f"my gift card ending in {pm['id'][-4:]}"

    methods = user["payment_methods"]
    gift_cards = sum(pm["source"] == "gift_card" for pm in methods.values())
    mine = phrase(methods[pm_id], gift_cards)
    if sum(phrase(pm, gift_cards) == mine for pm in methods.values()) > 1:
        return f"my payment method {pm_id}"
    return mine


_STATUS_WORDS = {"pending": "that has not shipped yet", "processed": "that is being processed",
                 "delivered": "that was delivered", "cancelled": "that I cancelled",
                 "return requested": "that I am returning", "exchange requested": "that I am exchanging",
                 "pending (item modified)": "whose items I already changed"}


def fits_description(order: dict, describe: dict) -> bool:
    """Whether an order fits a customer's description (item names, then status, then item options)."""
    if sorted(i["name"] for i in order["items"]) != describe["names"]:
        return False
    if describe.get("status") and order["status"] != describe["status"]:
        return False
    return not describe.get("options") or all(
        any(i["name"] == name and i["options"] == options for i in order["items"])
        for name, options in describe["options"].items())


def description(db: dict, user: dict, order: dict) -> tuple[dict, str] | None:
    """The least detailed description of `order` that fits none of the customer's other orders, as data and
    as the customer says it; None if even the full description is shared."""
    names = sorted(i["name"] for i in order["items"])
    levels = [{"names": names}, {"names": names, "status": order["status"]},
              {"names": names, "status": order["status"],
               "options": {i["name"]: i["options"] for i in order["items"]}}]
    for describe in levels:
        if sum(fits_description(db["orders"][o], describe) for o in user["orders"]) == 1:
            text = f"the order with {listing([article(n) for n in names])}"
            if describe.get("status"):
                text += f" {_STATUS_WORDS[order['status']]}"
            if describe.get("options"):
                text += " (" + "; ".join(f"the {n} with {options(o)}" for n, o in describe["options"].items())
                text += ")"
            return describe, text
    return None


def out_of_scope(user_id: str, goal: str) -> str:
    return f'Customer {user_id} asked to "{goal}", which is outside the scope of this service.'
