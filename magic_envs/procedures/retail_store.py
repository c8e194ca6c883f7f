"""The store database of a retail task: `retail_data.generate_db` from a stored seed, plus look-alike distractor
orders of the customer and a namesake customer, so that an agent must identify people and orders with care."""

from __future__ import annotations

import numpy as np

from magic_envs.procedures import retail_data, retail_tools


def build_store(spec: dict) -> dict:
    """The initial database of a task: `generate_db` from the stored seed, plus its distractors."""
    try:
        seed, size, ood = int(spec["seed"]), int(spec.get("size", 1)), bool(spec.get("ood", False))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"a retail task's db needs an integer seed: {spec!r}") from error
    db = retail_data.generate_db(np.random.default_rng(seed), size, ood=ood)
    if spec.get("distractors"):
        add_distractors(db, spec["distractors"])
    return db


def add_distractors(db: dict, spec: dict) -> None:
    """Orders of the customer that look like the `like` orders (same items, another status or one other
    option), and a namesake: another customer with the same first and last name (other zip and email)."""
    r = np.random.default_rng(int(spec["seed"]))
    user = db["users"][spec["user"]]
    taken = set(db["orders"]) | {t for o in db["orders"].values() for f in o["fulfillments"] for t in f["tracking_id"]}

    def fresh(prefix: str, digits: int) -> str:
        while True:
            value = prefix + str(int(r.integers(10 ** (digits - 1), 10 ** digits)))
            if value not in taken:
                taken.add(value)
                return value

    def clone(source: dict, owner: dict, pm_id: str) -> str:
        items = [dict(i, options=dict(i["options"])) for i in source["items"]]
        simple = ("pending", "processed", "delivered", "cancelled")
        status = source["status"] if source["status"] in simple else "delivered"
        if r.random() < 0.5:
            status = str(r.choice([s for s in simple if s != source["status"]]))
        else:  # same look, one item in other options
            k = int(r.integers(len(items)))
            others = [v for v in db["products"][items[k]["product_id"]]["variants"].values()
                      if v["item_id"] != items[k]["item_id"]]
            v = others[int(r.integers(len(others)))]
            items[k].update(item_id=v["item_id"], price=v["price"], options=dict(v["options"]))
        total = round(sum(i["price"] for i in items), 2)
        order_id = fresh("#W", 7)
        order = {"order_id": order_id, "user_id": owner["user_id"], "address": dict(owner["address"]),
                 "items": items, "status": status, "fulfillments": [],
                 "payment_history": [{"transaction_type": "payment", "amount": total, "payment_method_id": pm_id}],
                 **dict.fromkeys(retail_tools.OPTIONAL_ORDER_FIELDS)}
        if status != "pending":
            order["fulfillments"] = [{"tracking_id": [fresh("", 12)], "item_ids": [i["item_id"] for i in items]}]
        if status == "cancelled":
            order["payment_history"].append({"transaction_type": "refund", "amount": total,
                                             "payment_method_id": pm_id})
            order["cancel_reason"] = str(r.choice(retail_tools.CANCEL_REASONS))
        db["orders"][order_id] = order
        owner["orders"].insert(int(r.integers(len(owner["orders"]) + 1)), order_id)
        return order_id

    for order_id in spec.get("like", []):
        source = db["orders"][order_id]
        clone(source, user, source["payment_history"][0]["payment_method_id"])
    if spec.get("namesake"):
        first, last = user["name"]["first_name"], user["name"]["last_name"]
        emails = {u["email"] for u in db["users"].values()}
        while True:
            number = int(r.integers(1000, 10000))
            user_id, email = f"{first}_{last}_{number}".lower(), f"{first}.{last}{number}@example.com".lower()
            if user_id not in db["users"] and email not in emails:
                break
        donor = list(db["users"].values())[int(r.integers(len(db["users"])))]
        address = dict(donor["address"], zip=donor["address"]["zip"][:3] + f"{int(r.integers(100)):02d}")
        if address["zip"] == user["address"]["zip"]:
            address["zip"] = address["zip"][:3] + f"{(int(address['zip'][3:]) + 1) % 100:02d}"
        pm_id = fresh("credit_card_", 7)
        twin = {"user_id": user_id, "name": {"first_name": first, "last_name": last}, "address": address,
                "email": email, "payment_methods": {pm_id: {"source": "credit_card", "id": pm_id,
                                                            "brand": str(r.choice(["visa", "mastercard"])),
                                                            "last_four": f"{int(r.integers(10000)):04d}"}},
                "orders": []}
        db["users"][user_id] = twin
        for order_id in spec.get("like", [])[:1]:
            clone(db["orders"][order_id], twin, pm_id)
