"""The retail tools that change the database (cancelling, exchanging, returning, modifying an order or a user's
address), and the record lookups and checks that the reading tools in `retail_tools` share with them.
See `retail_tools` for the data model and tau2's quirks that `quirks` switches."""

from __future__ import annotations

from collections import Counter

from magic_envs.procedures.database import ToolError
from magic_envs.procedures.retail_schema import CANCEL_REASONS, _order_view, _user_view

# ---------------------------------------------------------------------------------------------- lookups

def _order(db: dict, order_id: str) -> dict:
    if order_id not in db["orders"]:
        raise ToolError("Order not found")
    return db["orders"][order_id]


def _user(db: dict, user_id: str) -> dict:
    if user_id not in db["users"]:
        raise ToolError("User not found")
    return db["users"][user_id]


def _product(db: dict, product_id: str) -> dict:
    if product_id not in db["products"]:
        raise ToolError("Product not found")
    return db["products"][product_id]


def _variant(db: dict, product_id: str, item_id: str) -> dict:
    product = _product(db, product_id)
    if item_id not in product["variants"]:
        raise ToolError("Variant not found")
    return product["variants"][item_id]


def _payment_method(db: dict, user_id: str, payment_method_id: str) -> dict:
    user = _user(db, user_id)
    if payment_method_id not in user["payment_methods"]:
        raise ToolError("Payment method not found")
    return user["payment_methods"][payment_method_id]


def _is_gift_card(pm: dict) -> bool:
    return pm["source"] == "gift_card"


def _check_counts(order: dict, item_ids: list[str], message) -> None:
    """Each id may be named at most as often as the order holds it (tau2 counts, not sets)."""
    held = Counter(item["item_id"] for item in order["items"])
    for item_id, n in Counter(item_ids).items():
        if n > held[item_id]:
            raise ToolError(message(item_id))


def _pair_items(order: dict, item_ids: list[str], quirks: bool) -> list[dict]:
    """The order item each requested id stands for: tau2 always takes the first match; fixed, the k-th
    repeat of an id takes the k-th matching item (the counts were checked, so there is always one)."""
    if quirks:
        return [next(i for i in order["items"] if i["item_id"] == item_id) for item_id in item_ids]
    pool = {}
    for item in order["items"]:
        pool.setdefault(item["item_id"], []).append(item)
    taken = Counter()
    out = []
    for item_id in item_ids:
        out.append(pool[item_id][taken[item_id]])
        taken[item_id] += 1
    return out


def _new_variants(db: dict, order: dict, item_ids, new_item_ids, quirks: bool, *, forbid_same: bool):
    """Validate the (old item, new variant) pairs in tau2's order; returns them with the summed price
    difference (an int 0 when there are no pairs, as tau2 holds it)."""
    pairs, diff = [], 0
    for item, item_id, new_id in zip(_pair_items(order, item_ids, quirks), item_ids, new_item_ids):
        if forbid_same and item_id == new_id:
            raise ToolError("The new item id should be different from the old item id")
        variant = _variant(db, item["product_id"], new_id)
        if not variant["available"]:
            raise ToolError(f"New item {new_id} not found or available")
        diff += variant["price"] - item["price"]
        pairs.append((item, variant))
    return pairs, diff


# --------------------------------------------------------------------- tools that change the database

def _cancel_pending_order(db, order_id, reason, quirks):
    order = _order(db, order_id)
    if order["status"] != "pending":
        raise ToolError("Non-pending order cannot be cancelled")
    if reason not in CANCEL_REASONS:
        raise ToolError("Invalid reason")
    if quirks:  # tau2 refunds each history entry, whatever its type
        refunds = [(p["payment_method_id"], p["amount"]) for p in order["payment_history"]]
    else:
        net = {}
        for p in order["payment_history"]:
            sign = 1 if p["transaction_type"] == "payment" else -1
            net[p["payment_method_id"]] = net.get(p["payment_method_id"], 0.0) + sign * p["amount"]
        refunds = [(pm_id, round(amount, 2)) for pm_id, amount in net.items() if round(amount, 2) > 0]
    methods = [_payment_method(db, order["user_id"], pm_id) for pm_id, _ in refunds]  # all checks first
    for pm, (pm_id, amount) in zip(methods, refunds):
        if _is_gift_card(pm):  # a gift card is refunded at once, other methods in 5-7 days
            pm["balance"] = round(pm["balance"] + amount, 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend({"transaction_type": "refund", "amount": amount, "payment_method_id": pm_id}
                                    for pm_id, amount in refunds)
    return _order_view(order)


def _exchange_delivered_order_items(db, order_id, item_ids, new_item_ids, payment_method_id, quirks):
    order = _order(db, order_id)
    if order["status"] != "delivered":
        raise ToolError("Non-delivered order cannot be exchanged")
    _check_counts(order, item_ids, lambda i: f"Number of {i} not found.")
    if len(item_ids) != len(new_item_ids):
        raise ToolError("The number of items to be exchanged should match.")
    _, diff = _new_variants(db, order, item_ids, new_item_ids, quirks, forbid_same=not quirks)
    diff = round(diff, 2)
    pm = _payment_method(db, order["user_id"], payment_method_id)
    if _is_gift_card(pm) and pm["balance"] < diff:
        raise ToolError("Insufficient gift card balance to pay for the price difference")
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff
    return _order_view(order)


def _new_address(address1, address2, city, state, country, zip) -> dict:
    return {"address1": address1, "address2": address2, "city": city, "country": country, "state": state,
            "zip": zip}


def _modifiable(order: dict, quirks: bool) -> bool:
    return "pending" in order["status"] if quirks else order["status"] == "pending"


def _modify_pending_order_address(db, order_id, address1, address2, city, state, country, zip, quirks):
    order = _order(db, order_id)
    if not _modifiable(order, quirks):
        raise ToolError("Non-pending order cannot be modified")
    order["address"] = _new_address(address1, address2, city, state, country, zip)
    return _order_view(order)


def _modify_pending_order_items(db, order_id, item_ids, new_item_ids, payment_method_id, quirks):
    order = _order(db, order_id)
    if order["status"] != "pending":
        raise ToolError("Non-pending order cannot be modified")
    _check_counts(order, item_ids, lambda i: f"{i} not found")
    if len(item_ids) != len(new_item_ids):
        raise ToolError("The number of items to be exchanged should match")
    pairs, diff = _new_variants(db, order, item_ids, new_item_ids, quirks, forbid_same=True)
    if not quirks:
        diff = round(diff, 2)
    pm = _payment_method(db, order["user_id"], payment_method_id)
    if _is_gift_card(pm) and pm["balance"] < diff:
        raise ToolError("Insufficient gift card balance to pay for the new item")
    if quirks or diff != 0:
        order["payment_history"].append({"transaction_type": "payment" if diff > 0 else "refund",
                                         "amount": float(abs(diff)), "payment_method_id": payment_method_id})
    if _is_gift_card(pm):
        pm["balance"] = round(pm["balance"] - diff, 2)
    if quirks:
        # tau2 re-finds each old item by id after earlier renames and copies the last validated variant.
        last = pairs[-1][1] if pairs else None
        for item_id, new_id in zip(item_ids, new_item_ids):
            item = next(i for i in order["items"] if i["item_id"] == item_id)
            item.update(item_id=new_id, price=last["price"], options=dict(last["options"]))
    else:
        for item, variant in pairs:
            item.update(item_id=variant["item_id"], price=variant["price"], options=dict(variant["options"]))
    order["status"] = "pending (item modified)"
    return _order_view(order)


def _modify_pending_order_payment(db, order_id, payment_method_id, quirks):
    order = _order(db, order_id)
    if not _modifiable(order, quirks):
        raise ToolError("Non-pending order cannot be modified")
    pm = _payment_method(db, order["user_id"], payment_method_id)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise ToolError("There should be exactly one payment for a pending order")
    old_id, amount = history[0]["payment_method_id"], history[0]["amount"]
    if old_id == payment_method_id:
        raise ToolError("The new payment method should be different from the current one")
    if _is_gift_card(pm) and pm["balance"] < amount:
        raise ToolError("Insufficient gift card balance to pay for the order")
    old_pm = _payment_method(db, order["user_id"], old_id)  # tau2 looks it up only after mutating
    history.append({"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id})
    history.append({"transaction_type": "refund", "amount": amount, "payment_method_id": old_id})
    if _is_gift_card(pm):
        pm["balance"] = round(pm["balance"] - amount, 2)
    if _is_gift_card(old_pm):
        old_pm["balance"] = round(old_pm["balance"] + amount, 2)
    return _order_view(order)


def _modify_user_address(db, user_id, address1, address2, city, state, country, zip):
    user = _user(db, user_id)
    user["address"] = _new_address(address1, address2, city, state, country, zip)
    return _user_view(user)


def _return_delivered_order_items(db, order_id, item_ids, payment_method_id):
    order = _order(db, order_id)
    if order["status"] != "delivered":
        raise ToolError("Non-delivered order cannot be returned")
    pm = _payment_method(db, _user(db, order["user_id"])["user_id"], payment_method_id)
    if not _is_gift_card(pm):
        if not order["payment_history"]:
            raise ToolError("list index out of range")  # tau2 reads payment_history[0]
        if payment_method_id != order["payment_history"][0]["payment_method_id"]:
            raise ToolError("Payment method should be the original payment method")
    _check_counts(order, item_ids, lambda _: "Some item not found")
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return _order_view(order)
