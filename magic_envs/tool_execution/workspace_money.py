"""Workspace tools of the shop and the bank (registered in `workspace_tools`).

Shop: products by SKU with a stock; one cart with at most one coupon (a percentage off, valid above a minimum
subtotal unless expired); checkout pays the cart from a bank account, creating an order and a bank
transaction. A placed order can be cancelled and a delivered one returned, both refunded to the paying account.
Bank: checking and savings accounts, saved payees (IBAN), transfers between own accounts and payments to
payees. Amounts are in euros with at most two decimals; balances never go below zero.
"""

from __future__ import annotations

import re
from datetime import date

from magic_envs.tool_execution.workspace_state import WorkspaceError, cents, money, new_id
from magic_envs.tool_execution.workspace_tools import (changed, find, flag, integer, matches, number, page_of, text,
                                                       tool)

_IBAN = re.compile(r"[A-Z]{2}\d{2}[A-Z0-9]{10,30}")
ORDER_STATUSES = ("placed", "shipped", "delivered", "cancelled", "returned")


# ---- shop ---------------------------------------------------------------------------------------------------
def product_view(p: dict) -> dict:
    return {"sku": p["sku"], "name": p["name"], "category": p["category"], "price": money(p["price"]),
            "in_stock": p["stock"]}


def cart_totals(world: dict) -> dict:
    """The cart with its subtotal, the coupon's discount (when its minimum is met) and the total, in cents."""
    cart, products = world["cart"], world["products"]
    lines = [(products[sku], qty) for sku, qty in cart["items"].items()]
    subtotal = sum(p["price"] * qty for p, qty in lines)
    coupon = world["coupons"].get(cart["coupon"])
    discount = (subtotal * coupon["percent"] + 50) // 100 if coupon and subtotal >= coupon["min_total"] else 0
    return {"lines": lines, "subtotal": subtotal, "discount": discount, "total": subtotal - discount}


def _order_view(order: dict) -> dict:
    return order | {"subtotal": money(order["subtotal"]), "discount": money(order["discount"]),
                    "total": money(order["total"]), "items": [i | {"price": money(i["price"])} for i in order["items"]]}


@tool("shop", "Search the shop's products by words in their names; cheapest first, at most 20.", ("query",),
      flaky=True, query=text("Words that must all occur in the product name."),
      category=text("Only this category (default: all)."), max_price=number("Highest price in euros (default none)."),
      in_stock_only=flag("Leave out products that are out of stock (default false)."))
def search_products(world, query, category="", max_price=None, in_stock_only=False):
    found = [p for p in world["products"].values() if matches(query, p["name"], p["category"])
             and (not category or p["category"] == category) and (max_price is None or p["price"] <= max_price * 100)
             and (p["stock"] > 0 or not in_stock_only)]
    found.sort(key=lambda p: (p["price"], p["sku"]))
    return {"query": query, "total": len(found), "results": [product_view(p) for p in found[:20]]}


@tool("shop", "Get one product.", ("sku",), sku=text("The product's SKU, such as 'SKU-12345'."))
def get_product(world, sku):
    return product_view(find(world, "products", sku, "product"))


@tool("shop", "Put a product in the cart (adds to the quantity already there).", ("sku",),
      sku=text("The product's SKU."), quantity=integer("How many (default 1)."))
def add_to_cart(world, sku, quantity=1):
    product = find(world, "products", sku, "product")
    want = world["cart"]["items"].get(sku, 0) + quantity
    if want > product["stock"]:
        raise WorkspaceError(f"only {product['stock']} of {sku} in stock; the cart would hold {want}")
    world["cart"]["items"][sku] = want
    changed(world, "cart")
    return {"cart": {s: q for s, q in world["cart"]["items"].items()}}


@tool("shop", "Take a product out of the cart.", ("sku",), sku=text("The product's SKU."))
def remove_from_cart(world, sku):
    if sku not in world["cart"]["items"]:
        raise WorkspaceError(f"{sku} is not in the cart")
    del world["cart"]["items"][sku]
    changed(world, "cart")
    return {"cart": dict(world["cart"]["items"])}


@tool("shop", "Show the cart: items, subtotal, coupon discount and total.")
def view_cart(world):
    totals = cart_totals(world)
    items = [{"sku": p["sku"], "name": p["name"], "quantity": q, "price": money(p["price"])}
             for p, q in totals["lines"]]
    return {"items": items, "coupon": world["cart"]["coupon"], "subtotal": money(totals["subtotal"]),
            "discount": money(totals["discount"]), "total": money(totals["total"])}


@tool("shop", "Apply a coupon code to the cart (replaces any coupon applied before).", ("code",),
      code=text("The coupon code."))
def apply_coupon(world, code):
    coupon = world["coupons"].get(code)
    if coupon is None:
        raise WorkspaceError(f"unknown coupon code {code!r}")
    if coupon["expired"]:
        raise WorkspaceError(f"coupon {code} has expired")
    subtotal = cart_totals(world)["subtotal"]
    if subtotal < max(coupon["min_total"], 1):
        raise WorkspaceError(f"coupon {code} needs a cart subtotal of at least {money(max(coupon['min_total'], 1))} "
                             f"EUR; the cart's is {money(subtotal)}")
    world["cart"]["coupon"] = code
    changed(world, "cart")
    return view_cart(world)


def _debit(world, account_id, amount, what):
    account = find(world, "accounts", account_id, "account")
    if account["balance"] < amount:
        raise WorkspaceError(f"insufficient funds: {account_id} holds {money(account['balance'])} EUR, {what} needs "
                             f"{money(amount)} EUR")
    return account


def book(world, account_id, amount, counterparty, reference) -> str:
    """Move `amount` cents into (or, negative, out of) an account with a transaction record; its id."""
    world["accounts"][account_id]["balance"] += amount
    changed(world, "accounts", account_id)
    tid = new_id(world, "T")
    world["transactions"][tid] = {"id": tid, "account": account_id, "date": world["today"], "amount": amount,
                                  "counterparty": counterparty, "reference": reference,
                                  "time": changed(world, "transactions", tid)}
    return tid


@tool("shop", "Buy everything in the cart, paid from a bank account; the cart is emptied.", ("account_id",),
      flaky=True, account_id=text("The paying account: 'checking' or 'savings'."))
def checkout(world, account_id):
    totals = cart_totals(world)
    if not totals["lines"]:
        raise WorkspaceError("the cart is empty")
    _debit(world, account_id, totals["total"], "the order")
    oid = new_id(world, "ORD-")
    for product, qty in totals["lines"]:
        product["stock"] -= qty
        changed(world, "products", product["sku"])
    discount = totals["discount"]
    world["orders"][oid] = {"id": oid, "items": [{"sku": p["sku"], "name": p["name"], "quantity": q,
                                                  "price": p["price"]} for p, q in totals["lines"]],
                            "subtotal": totals["subtotal"], "discount": discount, "total": totals["total"],
                            "coupon": world["cart"]["coupon"] if discount else "", "account": account_id,
                            "status": "placed", "time": changed(world, "orders", oid)}
    book(world, account_id, -totals["total"], "Shop", oid)
    world["cart"] = {"items": {}, "coupon": ""}
    changed(world, "cart")
    return _order_view(world["orders"][oid])


@tool("shop", "List your orders, newest first.", status=text("Only orders with this status (default: all).",
                                                              ORDER_STATUSES))
def list_orders(world, status=""):
    found = sorted((o for o in world["orders"].values() if not status or o["status"] == status),
                   key=lambda o: (o["time"], o["id"]), reverse=True)
    return {"orders": [{"id": o["id"], "status": o["status"], "total": money(o["total"]), "time": o["time"],
                        "items": [i["name"] for i in o["items"]]} for o in found]}


@tool("shop", "Get one order.", ("order_id",), order_id=text("The order id, such as 'ORD-3101'."))
def get_order(world, order_id):
    return _order_view(find(world, "orders", order_id, "order"))


def _refund(world, order_id, allowed, new_status):
    order = find(world, "orders", order_id, "order")
    if order["status"] != allowed:
        raise WorkspaceError(f"order {order_id} is {order['status']}; only a {allowed} order can be {new_status}")
    order["status"] = new_status
    changed(world, "orders", order_id)
    for item in order["items"]:
        world["products"][item["sku"]]["stock"] += item["quantity"]
        changed(world, "products", item["sku"])
    book(world, order["account"], order["total"], "Shop", f"refund {order_id}")
    return {order_id: new_status, "refunded": money(order["total"]), "to": order["account"]}


@tool("shop", "Cancel an order that has not shipped yet; it is refunded.", ("order_id",),
      order_id=text("The order id."))
def cancel_order(world, order_id):
    return _refund(world, order_id, "placed", "cancelled")


@tool("shop", "Return a delivered order; it is refunded.", ("order_id",), order_id=text("The order id."))
def return_order(world, order_id):
    return _refund(world, order_id, "delivered", "returned")


# ---- bank ---------------------------------------------------------------------------------------------------
def _tx_view(t: dict) -> dict:
    return {"id": t["id"], "date": t["date"], "amount": money(t["amount"]), "counterparty": t["counterparty"],
            "reference": t["reference"]}


def _newest(transactions) -> list[dict]:
    return sorted(transactions, key=lambda t: (t["date"], t["time"], t["id"]), reverse=True)


@tool("bank", "List your bank accounts with their balances.")
def list_accounts(world):
    return {"accounts": [{"id": a["id"], "name": a["name"], "iban": a["iban"], "balance": money(a["balance"])}
                         for a in world["accounts"].values()]}


@tool("bank", "The balance of one account.", ("account_id",), account_id=text("'checking' or 'savings'."))
def get_balance(world, account_id):
    return {"account": account_id, "balance": money(find(world, "accounts", account_id, "account")["balance"])}


@tool("bank", "List an account's transactions, newest first, ten a page (debits are negative).", ("account_id",),
      flaky=True, account_id=text("'checking' or 'savings'."), page=integer("Page number, from 1."),
      month=text("Only this month, YYYY-MM (default: all)."))
def list_transactions(world, account_id, page=1, month=""):
    find(world, "accounts", account_id, "account")
    if month and not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month):
        raise WorkspaceError(f"month must be written YYYY-MM, got {month!r}")
    found = _newest(t for t in world["transactions"].values() if t["account"] == account_id
                    and t["date"].startswith(month))
    rows, pages = page_of(found, page)
    return {"account": account_id, "page": page, "pages": pages, "total": len(found),
            "transactions": [_tx_view(t) for t in rows]}


@tool("bank", "Search transactions by words in the counterparty or reference; newest first, at most 30.", ("query",),
      flaky=True, query=text("Words that must all occur."), account_id=text("Only this account (default: all)."))
def search_transactions(world, query, account_id=""):
    found = _newest(t for t in world["transactions"].values() if (not account_id or t["account"] == account_id)
                    and matches(query, t["counterparty"], t["reference"]))
    return {"query": query, "total": len(found), "transactions": [_tx_view(t) | {"account": t["account"]}
                                                                  for t in found[:30]]}


@tool("bank", "Move money between your own accounts.", ("from_account", "to_account", "amount"), flaky=True,
      from_account=text("Account to take the money from."), to_account=text("Account to put it in."),
      amount=number("Amount in euros, at most two decimals."))
def transfer(world, from_account, to_account, amount):
    value = cents(amount)
    find(world, "accounts", to_account, "account")
    if from_account == to_account:
        raise WorkspaceError("from_account and to_account are the same account")
    _debit(world, from_account, value, "the transfer")
    book(world, from_account, -value, f"Transfer to {to_account}", "own transfer")
    book(world, to_account, value, f"Transfer from {from_account}", "own transfer")
    return {"transferred": money(value), "from": from_account, "to": to_account,
            "balances": {a: money(world["accounts"][a]["balance"]) for a in (from_account, to_account)}}


@tool("bank", "List your saved payees.")
def list_payees(world):
    return {"payees": list(world["payees"].values())}


@tool("bank", "Save a payee to pay later.", ("name", "iban"), name=text("The payee's name."),
      iban=text("The payee's IBAN, such as 'DE89370400440532013000' (spaces allowed)."))
def add_payee(world, name, iban):
    number_ = iban.replace(" ", "").upper()
    if not _IBAN.fullmatch(number_):
        raise WorkspaceError(f"{iban!r} is not a valid IBAN")
    if not name.strip():
        raise WorkspaceError("a payee needs a name")
    same = next((p for p in world["payees"].values() if p["iban"] == number_), None)
    if same:
        raise WorkspaceError(f"IBAN {number_} is already saved as payee {same['id']} ({same['name']})")
    pid = new_id(world, "P")
    changed(world, "payees", pid)
    world["payees"][pid] = {"id": pid, "name": name, "iban": number_}
    return {"created": world["payees"][pid]}


@tool("bank", "Pay a saved payee from one of your accounts.", ("from_account", "payee_id", "amount", "reference"),
      flaky=True, from_account=text("The paying account."), payee_id=text("The payee's id, such as 'P101'."),
      amount=number("Amount in euros, at most two decimals."), reference=text("Payment reference the payee sees."))
def pay(world, from_account, payee_id, amount, reference):
    payee, value = find(world, "payees", payee_id, "payee"), cents(amount)
    if not reference.strip():
        raise WorkspaceError("a payment needs a reference")
    _debit(world, from_account, value, "the payment")
    tid = book(world, from_account, -value, payee["name"], reference)
    return {"paid": money(value), "to": payee["name"], "transaction": tid,
            "balance": money(world["accounts"][from_account]["balance"])}


def month_of(day: str) -> str:
    return date.fromisoformat(day).strftime("%B %Y")
