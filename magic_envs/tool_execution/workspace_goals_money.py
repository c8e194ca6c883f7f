"""Sub-goals on money: pay an e-mailed invoice, shop with a coupon, return an order, sweep to savings, and the
questions about spending and balances (see `workspace_plan` for how builders work)."""

from __future__ import annotations

from collections import defaultdict
from datetime import date

from magic_envs.tool_execution import workspace_vocab as V
from magic_envs.tool_execution.workspace_money import cart_totals
from magic_envs.tool_execution.workspace_office import is_folder
from magic_envs.tool_execution.workspace_plan import (Draft, first_name, free_slot, goal, hhmm, planted_time, slug,
                                                      weekday)
from magic_envs.tool_execution.workspace_state import money, show_money
from magic_envs.tool_execution.workspace_world import email, iban


@goal("task", weight=3, repeat=True)
def pay_invoice(d: Draft):
    """Find an invoice in the mail, pay it (saving the payee, topping up checking), file a receipt, and
    optionally set a reminder and reply: up to ten dependent calls across four apps."""
    w, r = d.world, d.r
    vendors = [v for v in V.VENDORS if ("vendor", v[0]) not in d.used]
    if not vendors:
        return None
    vendor, sender, service = r.choice(vendors)
    checking, savings = w["accounts"]["checking"]["balance"], w["accounts"]["savings"]["balance"]
    short = r.random() < 0.3 or checking < 20000
    if short and savings < 60000:
        return None
    known, reply = r.random() < 0.4, r.random() < 0.7
    slot = free_slot(w, r, 7, 12, 30) if r.random() < 0.6 else None
    remind = slot is not None
    folder = f"/finance/{w['today'][:4]}"
    missing = not is_folder(w, folder)
    if not d.fits(6 + (not known) + short + 2 * missing + remind + reply):
        return None
    d.used.add(("vendor", vendor))
    amount = checking + r.randrange(2000, 40000) if short else r.randrange(6000, min(60000, checking - 5000))
    number, account = f"INV-{r.randrange(10000, 100000)}", iban(r)
    if known:
        payee = d.key("P")
        d.plant("payees", payee, {"id": payee, "name": vendor, "iban": account})
    mail = d.key("m")
    spaced = " ".join(account[i:i + 4] for i in range(0, len(account), 4))
    d.plant("emails", mail, email(
        mail, "inbox", sender, vendor, [w["user"]["email"]], f"Invoice {number} for {service}",
        f"Dear {w['user']['name']},\n\nplease find our invoice {number} for the {service}.\n\n"
        f"Amount due: {show_money(amount)} EUR\nPay to: {vendor}, IBAN {spaced}\nReference: {number}\n"
        f"Due within 14 days.\n\nThank you,\n{vendor} accounts\n", planted_time(w, r)))
    d.run("search_emails", {"query": f"invoice {vendor}"})
    d.run("read_email", {"email_id": mail})
    d.run("list_payees", {})
    if not known:
        d.run("add_payee", {"name": vendor, "iban": spaced})  # as the invoice writes it; the bank normalises it
        payee = d.ref(-1, "created", "id")
    d.run("get_balance", {"account_id": "checking"})
    if short:
        d.run("transfer", {"from_account": "savings", "to_account": "checking", "amount": money(amount - checking)})
    d.run("pay", {"from_account": "checking", "payee_id": payee, "amount": money(amount), "reference": number})
    path = f"{folder}/{slug(vendor)}-receipt.txt"
    line = f"Paid {number} to {vendor}: {show_money(amount)} EUR on {w['today']}"
    if missing:
        d.run("write_file", {"path": path, "content": line}, fails=True)
        d.run("create_folder", {"path": folder})
    d.run("write_file", {"path": path, "content": line})
    text = (f"Find the invoice {vendor} e-mailed me and pay it from my checking account to the IBAN in the invoice "
            f"(save {vendor} as a payee first, unless they already are one), with the invoice number as the payment "
            "reference. If my checking balance is lower than the amount due, first move exactly the missing amount "
            f"from savings to checking. Save a receipt as {path} whose only line is `Paid <invoice number> to "
            f"{vendor}: <amount, two decimals> EUR on {w['today']}`.")
    if remind:
        day, start = slot
        d.run("create_event", {"title": f"Check {vendor} payment", "date": day, "start": hhmm(start),
                               "end": hhmm(start + 30)})
        text += f" Add a calendar event 'Check {vendor} payment' on {weekday(day)} from {hhmm(start)} to " \
                f"{hhmm(start + 30)}."
    if reply:
        body = f"Hello, invoice {number} has been paid. Best regards, {first_name(w)}"
        d.run("reply_email", {"email_id": mail, "body": body})
        text += f" Reply to their e-mail with exactly: `Hello, invoice <invoice number> has been paid. Best " \
                f"regards, {first_name(w)}`."
    return {"text": text}


def _cheapest(world: dict, kind: str):
    stocked = sorted((p for p in world["products"].values() if p["kind"] == kind and p["stock"] > 0),
                     key=lambda p: (p["price"], p["sku"]))
    return stocked[0] if stocked else None


@goal("task", weight=2)
def shopping(d: Draft):
    """Buy the cheapest in-stock product of one or two kinds, with a coupon (an expired one first, sometimes),
    and log the charged total in a note."""
    w, r = d.world, d.r
    note = next((n["id"] for n in w["notes"].values() if n["title"] == "Purchases"), None)
    kinds = [k[0] for k in V.PRODUCTS if _cheapest(w, k[0])]
    if note is None or w["cart"]["items"] or len(kinds) < 2:
        return None
    picks = [(p, r.randrange(1, min(3, p["stock"]) + 1)) for p in map(lambda k: _cheapest(w, k),
                                                                      r.sample(kinds, r.choice((1, 2))))]
    subtotal = sum(p["price"] * q for p, q in picks)
    valid = [c for c, v in w["coupons"].items() if not v["expired"] and 0 < subtotal and v["min_total"] <= subtotal]
    expired = [c for c, v in w["coupons"].items() if v["expired"]]
    mode = r.choice(["none"] + ["valid"] * bool(valid) + ["retry"] * bool(valid and expired))
    view = r.random() < 0.5
    if subtotal > w["accounts"]["checking"]["balance"] or not d.fits(2 * len(picks) + 3 + view +
                                                                        {"none": 0, "valid": 1, "retry": 2}[mode]):
        return None
    items = " and ".join(f"{q} of the cheapest {p['kind']} in stock" for p, q in picks)
    text = f"Buy {items} in the shop, paid from my checking account."
    for product, qty in picks:
        d.run("search_products", {"query": product["kind"], "in_stock_only": True})
        d.run("add_to_cart", {"sku": product["sku"], "quantity": qty})
    if mode != "none":
        code = r.choice(valid)
        if mode == "retry":
            first = r.choice(expired)
            d.run("apply_coupon", {"code": first}, fails=True)
            text += f" Use the coupon {first}; if the shop rejects it, use {code} instead."
        else:
            text += f" Use the coupon {code}."
        d.run("apply_coupon", {"code": code})
    if view:
        d.run("view_cart", {})
    assert cart_totals(w)["total"] <= w["accounts"]["checking"]["balance"]
    order = d.run("checkout", {"account_id": "checking"})
    d.run("search_notes", {"query": "Purchases"})
    d.run("append_to_note", {"note_id": note, "text": f"Order: {order['total']:.2f} EUR"})
    return {"text": text + " Then add the line `Order: <total charged, two decimals> EUR` to my note 'Purchases'."}


@goal("task")
def return_order(d: Draft):
    """Return the delivered order that holds a named item."""
    w, r = d.world, d.r
    names = defaultdict(set)
    for order in w["orders"].values():
        for item in order["items"]:
            names[item["name"]].add(order["id"])
    choices = [(n, next(iter(ids))) for n, ids in sorted(names.items()) if len(ids) == 1
               and w["orders"][next(iter(ids))]["status"] == "delivered"]
    look = r.random() < 0.5
    if not choices or not d.fits(2 + look):
        return None
    item, order = r.choice(choices)
    d.run("list_orders", {"status": "delivered"})
    if look:
        d.run("get_order", {"order_id": order})
    d.run("return_order", {"order_id": order})
    return {"text": f"Return my delivered order that contains the {item}."}


@goal("final", weight=0.6)
def sweep_to_savings(d: Draft):
    """After everything else: move what checking holds above a threshold to savings (depends on the balance
    every earlier payment left)."""
    w, r = d.world, d.r
    balance = w["accounts"]["checking"]["balance"]
    keeps = [k for k in (500, 1000, 1500, 2000) if k * 100 + 1000 < balance]
    if not keeps or not d.fits(2):
        return None
    keep = r.choice(keeps)
    d.run("get_balance", {"account_id": "checking"})
    d.run("transfer", {"from_account": "checking", "to_account": "savings", "amount": money(balance - keep * 100)})
    return {"text": f"After all of the above, move whatever my checking account holds above {keep} EUR to savings."}


@goal("question")
def spending_question(d: Draft):
    """How much went to one merchant in one past month (a search, then a sum)."""
    w, r = d.world, d.r
    this_month = w["today"][:7]
    groups = defaultdict(list)
    for t in w["transactions"].values():
        if t["account"] == "checking" and t["amount"] < 0 and t["counterparty"] in V.MERCHANTS \
                and t["date"][:7] < this_month:
            groups[(t["counterparty"], t["date"][:7])].append(-t["amount"])
    choices = sorted(k for k, v in groups.items() if len(v) >= 2)
    if not choices or not d.fits(1):
        return None
    merchant, month = r.choice(choices)
    d.run("search_transactions", {"query": merchant, "account_id": "checking"})
    label = date.fromisoformat(month + "-01").strftime("%B %Y")
    return {"text": f"how much did I spend at {merchant} in {label}, in total?",
            "facts": [{"kind": "amount", "value": sum(groups[(merchant, month)])}]}


@goal("question", weight=0.7)
def balance_question(d: Draft):
    w, r = d.world, d.r
    account = r.choice(("checking", "savings"))
    if not d.fits(1):
        return None
    d.run("get_balance", {"account_id": account})
    return {"text": f"what is the balance of my {account} account once all of the above is done?",
            "facts": [{"kind": "amount", "value": w["accounts"][account]["balance"]}]}
