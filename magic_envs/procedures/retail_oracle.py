"""The retail oracle: a rule-following agent that serves a planned task against the scripted customer, reading
everything but the customer's requests from what it observes, so its actions make an honest oracle script."""

from __future__ import annotations

import json
import re
from magic_envs.core.grammar import format_tool_call
from magic_envs.core.tools import split_tool_responses
from magic_envs.procedures import retail_wording as say
from magic_envs.procedures.retail_planner import (
    CANCEL_LIMIT,
    Rejected,
    gift_cards,
    item_named,
    order_total,
)
from magic_envs.procedures.reward import explicit_yes
from magic_envs.procedures.service import TRANSFER_TOOL
from magic_envs.procedures.user_sim import STOP, TRANSFER

TRANSFER_NOTICE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."


class _MovedOn(Exception):
    """The customer's reply opens their next request (or ends the conversation): this one is served."""


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NAME_ZIP = re.compile(r"name is (\S+) (\S+) and my zip code is (\d+)", re.IGNORECASE)
_ANYTHING_ELSE = " Is there anything else I can help you with?"


def _when(pm_id: str) -> str:
    return "at once" if pm_id.startswith("gift_card") else "within 5 to 7 business days"


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, str):
        yield value


class Oracle:
    """A rule-following agent. It knows what the customer asks for (the plan), and everything else it reads
    from what it observes: the user id from the lookup, statuses, items, prices and payment methods from tool
    results, the payment method and reason from the customer's replies. It decides by the policy (refusing
    what it does not allow), asks one thing at a time, lists the details before each write and asks (yes/no).
    `run` is a generator: it yields actions and is sent observations. Every id or value it passes to a tool
    must have appeared in an observation first, so no hidden knowledge leaks into the script."""

    def __init__(self, task: dict, plan: dict):
        self.variant, self.reqs = task["policy"], plan["reqs"]
        self.says = [r["say"] for r in task["scenario"]["requests"]]
        self.seen: list[str] = []
        self.user_id, self.profile_data, self.next_say = None, None, None
        self.orders: dict[str, dict] = {}  # order details read so far, kept current with write results

    def run(self, first: str):
        self.seen.append(first)
        self.next_say = self.says[1] if len(self.says) > 1 else None
        yield from self._authenticate()
        for k, req in enumerate(self.reqs):
            self.next_say = self.says[k + 1] if k + 1 < len(self.says) else None
            try:
                yield from getattr(self, "_" + req["intent"])(req)
            except _MovedOn:
                continue
            raise Rejected(f"request {k} ({req['kind']}): the customer did not move on")

    # ---- primitives ---------------------------------------------------------------------------------------
    def _say(self, text: str):
        reply = yield text
        self.seen.append(reply)
        if STOP in reply or TRANSFER in reply or reply == self.next_say:
            raise _MovedOn
        if reply.startswith("Sorry, I am not sure"):
            raise Rejected(f"the customer did not understand: {text!r}")
        return reply

    def _call(self, name: str, arguments: dict):
        seen = "\n".join(self.seen).lower()
        unseen = [v for v in _leaves({k: v for k, v in arguments.items() if k != "summary"})
                  if v and v.lower() not in seen]
        if unseen:
            raise Rejected(f"{name} would use {unseen}, which the agent never observed")
        observation = yield format_tool_call(name, arguments)
        text = split_tool_responses(observation)[0]
        self.seen.append(text)
        if text.startswith("Error:"):
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text

    def _write(self, name: str, arguments: dict):
        result = yield from self._call(name, arguments)
        if result is None:
            raise Rejected(f"{name} failed: {self.seen[-1]}")
        if isinstance(result, dict) and "order_id" in result:
            self.orders[result["order_id"]] = result

    def _order(self, order_id: str):
        if order_id not in self.orders:
            order = yield from self._call("get_order_details", {"order_id": order_id})
            if order is None:
                raise Rejected(f"order {order_id} not found")
            self.orders[order_id] = order
        return self.orders[order_id]

    def _confirm(self, details: str):
        reply = yield from self._say(f"{details} Shall I proceed (yes/no)?")
        if not explicit_yes(reply):
            raise Rejected(f"no explicit yes to {details!r}")

    def _profile(self, fresh: bool = False):
        if fresh or self.profile_data is None:
            self.profile_data = yield from self._call("get_user_details", {"user_id": self.user_id})
        return self.profile_data

    def _authenticate(self):
        reply = yield from self._say("Thanks for contacting us. Before anything else, I need to verify your "
                                     "identity: what is the email address on your account?")
        user_id, email = None, _EMAIL.search(reply)
        if email:
            user_id = yield from self._call("find_user_id_by_email", {"email": email.group()})
            if user_id is None:
                reply = yield from self._say("I could not find an account with that address. Could you give me "
                                             "your first name, last name and zip code instead?")
        if user_id is None:
            found = _NAME_ZIP.search(reply)
            if not found:
                raise Rejected(f"no identity in {reply!r}")
            user_id = yield from self._call("find_user_id_by_name_zip", {"first_name": found[1],
                                                                          "last_name": found[2], "zip": found[3]})
            if user_id is None:
                raise Rejected("the customer could not be found")
        self.user_id = user_id

    def _locate(self, req: dict):
        """The order a request is about: by the id the customer gave, or the first of their orders that fits
        their description (with a sentence saying which one it found)."""
        if req["describe"] is None:
            return (yield from self._order(req["order"])), ""
        profile = yield from self._profile()
        known = [o for o in profile["orders"] if o in self.orders]  # orders it read already, first
        for order_id in known + [o for o in profile["orders"] if o not in self.orders]:
            order = yield from self._order(order_id)
            if say.fits_description(order, req["describe"]):
                items = say.the([i["name"] for i in order["items"]])
                return order, f"I found the order: {order_id} ({order['status']}), with {items}. "
        raise Rejected("no order fits the description")

    def _refuse_status(self, order: dict, found: str, allowed: str, verb: str):
        status = order["status"]
        why = ("its items were already modified, so it can no longer be changed or cancelled"
               if status == "pending (item modified)" else f"only {allowed} orders can be {verb}")
        yield from self._say(f"{found}I'm sorry, but order {order['order_id']} is '{status}', and {why}."
                             + _ANYTHING_ELSE)

    def _resolve_pm(self, reply: str, order: dict) -> str:
        """The payment method a customer names ("the original payment method", "my visa credit card ending in
        1234", "my gift card", "my PayPal account")."""
        text, methods = reply.lower(), self.profile_data["payment_methods"]
        if "original" in text:
            return order["payment_history"][0]["payment_method_id"]
        fits = [k for k in methods if k in text]  # named by its id
        card = re.search(r"(\w+) credit card ending in (\d{4})", text)
        gift = re.search(r"gift card ending in (\d{4})", text)
        if not fits and card:
            fits = [k for k, pm in methods.items() if (pm.get("brand"), pm.get("last_four")) == card.groups()]
        elif not fits and gift:
            fits = [k for k, pm in methods.items() if pm["source"] == "gift_card" and k.endswith(gift[1])]
        elif not fits:
            source = "gift_card" if "gift card" in text else "paypal" if "paypal" in text else None
            fits = [k for k, pm in methods.items() if pm["source"] == source]
        if len(fits) != 1:
            raise Rejected(f"{len(fits)} payment methods fit {reply!r}")
        return fits[0]

    # ---- the requests ------------------------------------------------------------------------------------
    def _cancel(self, req):
        order, found = yield from self._locate(req)
        oid, total = order["order_id"], order_total(order)
        if order["status"] != "pending":
            return (yield from self._refuse_status(order, found, "pending", "cancelled"))
        if self.variant == "cancel_limit" and total > CANCEL_LIMIT:
            return (yield from self._say(
                f"{found}I'm sorry, but order {oid} totals {say.money(total)}: orders above the "
                f"${CANCEL_LIMIT:.0f} limit cannot be cancelled by me." + _ANYTHING_ELSE))
        reply = yield from self._say(f"{found}Order {oid} is pending, so it can be cancelled. What is the reason "
                                     "for the cancellation: 'no longer needed' or 'ordered by mistake'?")
        reason = "ordered by mistake" if "mistake" in reply.lower() else "no longer needed"
        pm = order["payment_history"][0]["payment_method_id"]
        items = say.the([i["name"] for i in order["items"]])
        yield from self._confirm(f"Here are the details: cancel order {oid} ({items}) for the reason '{reason}'; "
                                 f"the payment of {say.money(total)} will be refunded to {pm} {_when(pm)}.")
        yield from self._write("cancel_pending_order", {"order_id": oid, "reason": reason})
        yield from self._say(f"Order {oid} is now cancelled, and the refund of {say.money(total)} goes to {pm} "
                             f"{_when(pm)}." + _ANYTHING_ELSE)

    def _change_items(self, req, exchange: bool):
        verb = "exchange" if exchange else "change"
        if exchange and self.variant == "no_exchange":
            return (yield from self._say("I'm sorry, but we do not offer exchanges. You can return delivered "
                                         "items instead, and I can help you with a return." + _ANYTHING_ELSE))
        order, found = yield from self._locate(req)
        allowed = "delivered" if exchange else "pending"
        if order["status"] != allowed:
            return (yield from self._refuse_status(order, found, allowed, f"{verb}d"))
        pairs = []
        for name, wanted in req["changes"]:
            item = item_named(order, name)
            product = yield from self._call("get_product_details", {"product_id": item["product_id"]})
            target = {**item["options"], **wanted}
            new = next((v for v in product["variants"].values() if v["options"] == target), None)
            if new is None or not new["available"]:
                raise Rejected(f"no available {name} with {target}")
            pairs.append((item, new))
        yield from self._profile()
        diff = round(sum(n["price"] - i["price"] for i, n in pairs), 2)
        listed = say.listing([f"the {i['name']} (item {i['item_id']}: {say.options(i['options'])}, "
                              f"{say.money(i['price'])}) for item {n['item_id']} ({say.options(n['options'])}, "
                              f"{say.money(n['price'])})" for i, n in pairs])
        owed = ("for you to pay" if diff > 0 else "to be refunded to you") if diff else "so nothing is owed"
        reply = yield from self._say(f"{found}Order {order['order_id']} is {allowed}, and the new items are "
                                     f"available: {listed}. The price difference is {say.money(abs(diff))}, {owed}. "
                                     "Which payment method would you like to use for the price difference?")
        pm = self._resolve_pm(reply, order)
        yield from self._confirm(
            f"Here are the details: in order {order['order_id']}, {verb} {listed}; the price difference of "
            f"{say.money(abs(diff))} is {'refunded to' if diff < 0 else 'paid with'} {pm}. Please make sure these are "
            f"all the items you want to {verb}: the items of an order can be {verb}d only once.")
        tool = "exchange_delivered_order_items" if exchange else "modify_pending_order_items"
        yield from self._write(tool, {"order_id": order["order_id"], "item_ids": [i["item_id"] for i, _ in pairs],
                                      "new_item_ids": [n["item_id"] for _, n in pairs], "payment_method_id": pm})
        if exchange:
            done = ("Your exchange is requested: you will receive an email with instructions on how to send the "
                    "items back.")
        else:
            done = f"Order {order['order_id']} is updated, and its status is now 'pending (item modified)'."
        yield from self._say(done + _ANYTHING_ELSE)

    def _modify_items(self, req):
        yield from self._change_items(req, exchange=False)

    def _exchange(self, req):
        yield from self._change_items(req, exchange=True)

    def _modify_address(self, req):
        order, found = yield from self._locate(req)
        oid = order["order_id"]
        if order["status"] != "pending":
            return (yield from self._refuse_status(order, found, "pending", "modified"))
        yield from self._say(f"{found}Order {oid} is pending, so its shipping address can be changed. What is the "
                             "new address?")
        address = req["address"]
        yield from self._confirm(f"Here are the details: change the shipping address of order {oid} from "
                                 f"{say.address(order['address'])} to {say.address(address)}.")
        yield from self._write("modify_pending_order_address", {"order_id": oid, **address})
        yield from self._say(f"Done: order {oid} will ship to {say.address(address)}." + _ANYTHING_ELSE)

    def _user_address(self, req):
        yield from self._say("Sure. What is the new address you would like as your default address?")
        address = req["address"]
        yield from self._confirm(f"Here are the details: change the default address of your account to "
                                 f"{say.address(address)} (existing orders keep their shipping address).")
        yield from self._write("modify_user_address", {"user_id": self.user_id, **address})
        yield from self._say(f"Done: your default address is now {say.address(address)}." + _ANYTHING_ELSE)

    def _modify_payment(self, req):
        order, found = yield from self._locate(req)
        oid, total = order["order_id"], order_total(order)
        if order["status"] != "pending":
            return (yield from self._refuse_status(order, found, "pending", "modified"))
        yield from self._profile()
        current = order["payment_history"][0]["payment_method_id"]
        reply = yield from self._say(f"{found}Order {oid} ({say.money(total)}) is pending and was paid with {current}. "
                                     "Which payment method would you like to use instead?")
        pm = self._resolve_pm(reply, order)
        yield from self._confirm(f"Here are the details: pay order {oid} ({say.money(total)}) with {pm} instead of "
                                 f"{current}, which gets the {say.money(total)} back {_when(current)}.")
        yield from self._write("modify_pending_order_payment", {"order_id": oid, "payment_method_id": pm})
        yield from self._say(f"Done: order {oid} is now paid with {pm}." + _ANYTHING_ELSE)

    def _return(self, req):
        order, found = yield from self._locate(req)
        oid = order["order_id"]
        if order["status"] != "delivered":
            return (yield from self._refuse_status(order, found, "delivered", "returned"))
        items = [item_named(order, name) for name in req["items"]]
        amount = round(sum(i["price"] for i in items), 2)
        original = order["payment_history"][0]["payment_method_id"]
        pm, note, gifts = original, "", []
        if self.variant == "original_only":
            note = " (refunds always go to the original payment method)"
        else:  # the original payment method or one of the customer's gift cards
            gifts = [g for g in gift_cards((yield from self._profile())) if g != original]
        if gifts:
            reply = yield from self._say(
                f"{found}Order {oid} is delivered, so its items can be returned. The refund of {say.money(amount)} can "
                f"go to the original payment method ({original}) or to your gift card ({say.listing(gifts)}). Which "
                "payment method would you like the refund to go to?")
            pm, found = self._resolve_pm(reply, order), ""
        listed = say.listing([f"the {i['name']} (item {i['item_id']}, {say.money(i['price'])})" for i in items])
        yield from self._confirm(f"{found}Here are the details: return {listed} from order {oid}; the refund of "
                                 f"{say.money(amount)} goes to {pm}{note}.")
        yield from self._write("return_delivered_order_items", {"order_id": oid, "item_ids": [i["item_id"] for i in
                                                                                           items],
                                                               "payment_method_id": pm})
        yield from self._say(f"Your return is requested: you will receive an email with instructions on how to send "
                             f"the items back, and the refund of {say.money(amount)} goes to {pm}." + _ANYTHING_ELSE)

    def _info_status(self, req):
        order, found = yield from self._locate(req)
        tracking = say.listing([t for f in order["fulfillments"] for t in f["tracking_id"]])
        yield from self._say(f"{found}Order {order['order_id']} is '{order['status']}', and its tracking number is "
                             f"{tracking}." + _ANYTHING_ELSE)

    def _info_total(self, req):
        order, found = yield from self._locate(req)
        pm = order["payment_history"][0]["payment_method_id"]
        names = say.the([i["name"] for i in order["items"]])
        yield from self._say(f"{found}Order {order['order_id']} ({names}) came to {say.money(order_total(order))}, "
                             f"paid with {pm}." + _ANYTHING_ELSE)

    def _other_user(self, req):
        profile = yield from self._profile()
        if req["order"] in profile["orders"]:
            raise Rejected("the other customer's order is the customer's own")
        yield from self._say(f"I'm sorry, but order {req['order']} is not one of your orders, so I cannot look it up "
                             "or act on it: I can only help with the orders of the account I verified."
                             + _ANYTHING_ELSE)

    def _out_of_scope(self, req):
        yield from self._call(TRANSFER_TOOL, {"summary": say.out_of_scope(self.user_id, req["goal"])})
        yield from self._say(TRANSFER_NOTICE)

    def _product_info(self, req):
        types = yield from self._call("list_all_product_types", {})
        product = yield from self._call("get_product_details", {"product_id": types[req["product"]]})
        variant = next((v for v in product["variants"].values() if v["options"] == req["options"]), None)
        if variant is None:
            raise Rejected(f"no {req['product']} with {req['options']}")
        state = "available" if variant["available"] else "not available at the moment"
        yield from self._say(f"The {product['name']} with {say.options(variant['options'])} (item "
                             f"{variant['item_id']}) costs {say.money(variant['price'])}, and it is {state}."
                             + _ANYTHING_ELSE)

    def _gift_card_balance(self, req):
        profile = yield from self._profile(fresh=True)
        cards = [f"{g} has {say.money(profile['payment_methods'][g]['balance'])}" for g in gift_cards(profile)]
        yield from self._say(f"Here is what is left: {say.listing(cards)}." + _ANYTHING_ELSE)
