"""The task generator of magic/Retail-v0 (`retail.RetailEnv`): tasks, their gold writes and their oracle scripts.

`generate` draws a task: a store database (`build_store`: `retail_data.generate_db` from a stored seed, plus
look-alike distractor orders and a namesake customer), a customer, how they identify, and 1-3 requests of
weighted kinds (`IID_KINDS`; `OOD_KINDS` only in the ood split; an ood_policy task has one request whose right
handling its policy variant changes, `VARIANTS`). `_Planner` chooses each request's target order and details,
phrases what the customer says and the facts they give when asked, and computes the gold writes, replaying
them on a working copy so that later requests see the state earlier ones leave.

The oracle script is built by running `_Oracle`, a rule-following agent that knows only what the customer asks
for and reads everything else (ids, statuses, prices, payment methods) from tool results and the customer's
replies, against the scripted customer on a scratch env. It is checked on the way: every value it passes to a
tool must have been observed first, the conversation must end with score 1.0 within `MAX_ORACLE_STEPS`, and
only then are its actions kept as the task's `oracle`. Any other run is a generator bug: counted in the env's
`rejections` and drawn again, never silently dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from magic_envs.core.grammar import format_tool_call
from magic_envs.core.tasks import IID_SPLITS, fingerprint, iid_split_of
from magic_envs.core.tools import split_tool_responses
from magic_envs.procedures import retail_data, retail_tools
from magic_envs.procedures.database import ToolError, fresh_copy
from magic_envs.procedures.reward import explicit_yes
from magic_envs.procedures.service import TRANSFER_TOOL, ServiceEnv
from magic_envs.procedures.user_sim import STOP, TRANSFER

if TYPE_CHECKING:
    from magic_envs.procedures.retail import RetailEnv

# Request kinds, with their weight in a draw. A kind is what the customer asks about a target; refusals are
# kinds too (the same ask on an order the policy does not allow to act on).
IID_KINDS = {"cancel": 3, "modify_items": 2, "modify_address": 2, "modify_payment": 2, "user_address": 1,
             "return": 3, "exchange": 2, "info_status": 1, "info_total": 1, "refuse_cancel": 1, "refuse_return": 1,
             "refuse_other_user": 1, "transfer": 1}
OOD_KINDS = {"product_info": 1, "gift_card_balance": 1, "refuse_modified": 1}  # never drawn in train/test
INTENT = {"refuse_cancel": "cancel", "refuse_return": "return", "refuse_other_user": "other_user",
          "transfer": "out_of_scope"}
STATUSES = {  # the statuses a kind's target order may have; absent: the kind needs no order of the customer
    "cancel": ("pending",), "modify_items": ("pending",), "modify_address": ("pending",),
    "modify_payment": ("pending",), "return": ("delivered",), "exchange": ("delivered",),
    "info_status": ("processed", "delivered", "cancelled", "return requested", "exchange requested"),
    "info_total": ("pending", "processed", "delivered"),
    "refuse_cancel": ("processed", "delivered", "cancelled", "return requested", "exchange requested"),
    "refuse_return": ("pending", "processed"), "refuse_modified": ("pending (item modified)",)}
ONCE = ("user_address", "transfer", "gift_card_balance", "product_info")  # at most once per task
# ood_policy: a policy variant never seen in train/test, and the request kind whose right handling it changes.
VARIANTS = {"original_only": "return", "cancel_limit": "cancel", "no_exchange": "exchange"}
CANCEL_LIMIT = 500.0
TRANSFER_NOTICE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
MAX_ORACLE_STEPS = 34  # the oracle's longest conversations take ~27 steps; the TimeLimit is 40
PERSONAS = ("Polite and patient.", "In a hurry; answers briefly.", "Friendly and chatty.",
            "A little anxious about the order.", "Direct and matter-of-fact.")
GOALS = ("place a new order for {a}", "get a price match on {a} that I saw cheaper elsewhere",
         "apply a discount code to the {name} I want to buy next",
         "file a complaint: the {name} I got arrived damaged and I want compensation for the trouble")


# ------------------------------------------------------------------------------------------- the database

def build_store(spec: dict) -> dict:
    """The initial database of a task: `generate_db` from the stored seed, plus its distractors."""
    try:
        seed, size, ood = int(spec["seed"]), int(spec.get("size", 1)), bool(spec.get("ood", False))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"a retail task's db needs an integer seed: {spec!r}") from error
    db = retail_data.generate_db(np.random.default_rng(seed), size, ood=ood)
    if spec.get("distractors"):
        _add_distractors(db, spec["distractors"])
    return db


def _add_distractors(db: dict, spec: dict) -> None:
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


# ---------------------------------------------------------------------------------------------- phrasing

def _money(amount: float) -> str:
    # Thousands separators, as people write amounts: "$1192.18" would read as a card's last four "1192".
    return f"${amount:,.2f}"


def _address_text(a: dict) -> str:
    return f"{a['address1']}, {a['address2']}, {a['city']}, {a['state']} {a['zip']}, {a['country']}"


def _options_text(options: dict) -> str:
    return ", ".join(f"{key} {value}" for key, value in options.items())


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _a(name: str) -> str:
    return ("an " if name[0] in "AEIOU" else "a ") + name


def _the(names: list[str]) -> str:
    return _and([f"the {n}" for n in names])


def _pm_phrase(user: dict, pm_id: str) -> str:
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


def _matches(order: dict, describe: dict) -> bool:
    """Whether an order fits a customer's description (item names, then status, then item options)."""
    if sorted(i["name"] for i in order["items"]) != describe["names"]:
        return False
    if describe.get("status") and order["status"] != describe["status"]:
        return False
    return not describe.get("options") or all(
        any(i["name"] == name and i["options"] == options for i in order["items"])
        for name, options in describe["options"].items())


def _describe(db: dict, user: dict, order: dict) -> tuple[dict, str] | None:
    """The least detailed description of `order` that fits none of the customer's other orders, as data and
    as the customer says it; None if even the full description is shared."""
    names = sorted(i["name"] for i in order["items"])
    levels = [{"names": names}, {"names": names, "status": order["status"]},
              {"names": names, "status": order["status"],
               "options": {i["name"]: i["options"] for i in order["items"]}}]
    for describe in levels:
        if sum(_matches(db["orders"][o], describe) for o in user["orders"]) == 1:
            text = f"the order with {_and([_a(n) for n in names])}"
            if describe.get("status"):
                text += f" {_STATUS_WORDS[order['status']]}"
            if describe.get("options"):
                text += " (" + "; ".join(f"the {n} with {_options_text(o)}" for n, o in describe["options"].items())
                text += ")"
            return describe, text
    return None


class _Redraw(Exception):
    """The drawn customer cannot carry the drawn requests: draw again (part of sampling, not a rejection)."""


class _Rejected(Exception):
    """The oracle's scripted run did not score 1.0: a generator bug."""


# ---------------------------------------------------------------------------------------------- the planner

def _unique_names(order: dict) -> list[str]:
    """Product names that occur once in the order: the items a customer can name without ambiguity."""
    names = [i["name"] for i in order["items"]]
    return [n for n in names if names.count(n) == 1]


def _item(order: dict, name: str) -> dict:
    for item in order["items"]:
        if item["name"] == name:
            return item
    raise _Rejected(f"no {name} in order {order['order_id']}")


def _total(order: dict) -> float:
    return round(sum(i["price"] for i in order["items"]), 2)


def _gift_cards(user: dict) -> list[str]:
    return [k for k, v in user["payment_methods"].items() if v["source"] == "gift_card"]


def _can_pay(user: dict, pm_id: str, amount: float) -> bool:
    pm = user["payment_methods"][pm_id]
    return pm["source"] != "gift_card" or amount <= 0 or pm["balance"] >= amount + 0.01


class _Planner:
    """Draws one task for `env` from `rng`: the database, the customer, their requests with what the oracle
    needs to serve them, and the gold writes (applied in order to a working copy, so later requests see the
    state earlier ones leave)."""

    def __init__(self, env: RetailEnv, rng: np.random.Generator):
        self.env, self.rng = env, rng
        self.variant = sorted(VARIANTS)[int(rng.integers(len(VARIANTS)))] if env.split == "ood_policy" else "base"
        ood = env.split == "ood"
        self.streets, self.cities = ((retail_data.OOD_STREETS, retail_data.OOD_CITIES) if ood
                                     else (retail_data.STREETS, retail_data.CITIES))

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    # ---- what the customer wants ---------------------------------------------------------------------
    def kinds(self) -> tuple[list[str], list[bool]]:
        """The request kinds in order, and which one the policy variant must decide (ood_policy)."""
        rng, (lo, hi) = self.rng, self.env.n_requests
        n = int(rng.integers(lo, hi + 1))
        pool = dict(IID_KINDS, **OOD_KINDS) if self.env.split == "ood" else IID_KINDS
        names, weights = list(pool), np.array(list(pool.values()), float)
        kinds = [self.pick(list(OOD_KINDS))] if self.env.split == "ood" else []
        kinds += [VARIANTS[self.variant]] if self.variant != "base" else []
        while len(kinds) < n:
            kind = names[int(rng.choice(len(names), p=weights / weights.sum()))]
            if kind not in ONCE or kind not in kinds:
                kinds.append(kind)
        hit = [self.variant != "base" and k == 0 for k in range(len(kinds))]
        order = [int(i) for i in rng.permutation(len(kinds))]
        order.sort(key=lambda i: kinds[i] == "transfer")  # a transfer ends the conversation: it comes last
        return [kinds[i] for i in order], [hit[i] for i in order]

    def targets(self, db: dict, kinds: list[str], hit: list[bool]) -> tuple[dict, list]:
        users = list(db["users"].values())
        for u in self.rng.permutation(len(users)):
            user, chosen = users[int(u)], []
            for kind, affected in zip(kinds, hit):
                order_id = self._order_for(db, user, kind, affected, chosen)
                if order_id is False:
                    break
                chosen.append(order_id)
            else:
                return user, chosen
        raise _Redraw

    def _order_for(self, db, user, kind, affected, taken):
        if kind == "refuse_other_user":
            return self.pick([o for o, order in db["orders"].items() if order["user_id"] != user["user_id"]])
        if kind == "gift_card_balance":
            return None if _gift_cards(user) else False
        if kind not in STATUSES:
            return None
        fits = [o for o in user["orders"] if o not in taken and db["orders"][o]["status"] in STATUSES[kind]
                and self._fits(user, kind, db["orders"][o], affected)]
        return self.pick(fits) if fits else False

    def _fits(self, user, kind, order, affected) -> bool:
        if kind in ("modify_items", "return", "exchange", "refuse_return", "refuse_modified") \
                and not _unique_names(order):
            return False
        if kind == "modify_payment":
            current = order["payment_history"][0]["payment_method_id"]
            return any(pm != current and _can_pay(user, pm, _total(order)) for pm in user["payment_methods"])
        if affected and self.variant == "cancel_limit":
            return _total(order) > CANCEL_LIMIT
        if affected and self.variant == "original_only":
            return any(g != order["payment_history"][0]["payment_method_id"] for g in _gift_cards(user))
        return True

    # ---- one request ------------------------------------------------------------------------------------
    def plan(self, work: dict, user_id: str, kind: str, order_id, affected: bool) -> dict:
        """The request as the oracle needs it and the customer says it; its gold writes run on `work`."""
        user = work["users"][user_id]
        order = work["orders"].get(order_id) if order_id else None
        intent = INTENT.get(kind, kind)
        if kind == "refuse_modified":
            intent = self.pick(["cancel", "modify_items"])
        req = {"kind": kind, "intent": intent, "order": order_id, "describe": None, "facts": {}, "gold": [],
               "done": "state", "communicate": [], "affected": affected}
        ref = f"my order {order_id}"
        if order is not None and kind != "refuse_other_user" and self.rng.random() < self.env.ambiguous:
            described = _describe(work, user, order)
            if described is None:
                raise _Redraw
            req["describe"], text = described
            ref = f"{text} (I don't have the order id)"
        getattr(self, "_" + intent)(req, work, user, order, ref)
        for name, arguments in req["gold"]:
            try:
                retail_tools.call(work, name, arguments, quirks=False)
            except ToolError as error:
                raise _Rejected(f"the gold {name} failed: {error}") from error
        return req

    def _refused(self, req: dict, phrase: str) -> None:
        req.update(done="refused", communicate=[phrase])

    def _status_phrase(self, order: dict) -> str:
        return "modified" if order["status"] == "pending (item modified)" else order["status"]

    def _cancel(self, req, work, user, order, ref):
        reason = self.pick(retail_tools.CANCEL_REASONS)
        req["facts"] = {"reason": "It was ordered by mistake." if reason == "ordered by mistake"
                        else "It is no longer needed."}
        req["say"] = f"I'd like to cancel {ref}."
        if order["status"] != "pending":
            self._refused(req, self._status_phrase(order))
        elif self.variant == "cancel_limit" and _total(order) > CANCEL_LIMIT:
            self._refused(req, f"{CANCEL_LIMIT:.0f}")
        else:
            req["gold"] = [("cancel_pending_order", {"order_id": order["order_id"], "reason": reason})]

    def _changes(self, req, work, user, order, ref, exchange: bool):
        names = _unique_names(order)
        chosen = [names[int(i)] for i in self.rng.permutation(len(names))[:int(self.rng.integers(1, 3))]]
        changes, old, new = [], [], []
        for name in chosen:
            item = _item(order, name)
            variants = work["products"][item["product_id"]]["variants"].values()
            variant = self.pick([v for v in variants if v["available"] and v["item_id"] != item["item_id"]])
            changes.append([name, {k: v for k, v in variant["options"].items() if item["options"].get(k) != v}])
            old.append(item)
            new.append(variant)
        diff = round(sum(v["price"] for v in new) - sum(i["price"] for i in old), 2)
        payers = [p for p in user["payment_methods"] if _can_pay(user, p, diff)]
        if not payers:
            raise _Redraw  # a gift card alone that cannot cover the difference
        pm = self.pick(payers)
        req.update(changes=changes, pm=pm)
        req["facts"] = {"payment method": f"Please use {_pm_phrase(user, pm)} for the price difference."}
        wanted = _and([f"the {name} {'for' if exchange else 'to'} the one with {_options_text(options)}"
                       for name, options in changes])
        req["say"] = f"I'd like to exchange {wanted}, from {ref}." if exchange else \
            f"I'd like to change {wanted}, in {ref}."
        return {"order_id": order["order_id"], "item_ids": [i["item_id"] for i in old],
                "new_item_ids": [v["item_id"] for v in new], "payment_method_id": pm}

    def _modify_items(self, req, work, user, order, ref):
        arguments = self._changes(req, work, user, order, ref, exchange=False)
        if order["status"] != "pending":
            self._refused(req, self._status_phrase(order))
        else:
            req["gold"] = [("modify_pending_order_items", arguments)]

    def _exchange(self, req, work, user, order, ref):
        arguments = self._changes(req, work, user, order, ref, exchange=True)
        if self.variant == "no_exchange":
            self._refused(req, "return")
        else:
            req["gold"] = [("exchange_delivered_order_items", arguments)]

    def _new_address(self, current: dict) -> dict:
        while True:
            city, state, prefix = self.pick(self.cities)
            address = {"address1": f"{int(self.rng.integers(100, 1000))} {self.pick(self.streets)}",
                       "address2": f"{self.pick(['Apt', 'Suite', 'Unit'])} {int(self.rng.integers(1, 1000))}",
                       "city": city, "country": "USA", "state": state,
                       "zip": f"{prefix}{int(self.rng.integers(100)):02d}"}
            if address != current:
                return address

    def _modify_address(self, req, work, user, order, ref):
        address = self._new_address(order["address"])
        req.update(address=address, facts={"new address": f"The new address is {_address_text(address)}."},
                   say=f"I need to change the shipping address of {ref}.")
        req["gold"] = [("modify_pending_order_address", {"order_id": order["order_id"], **address})]

    def _user_address(self, req, work, user, order, ref):
        address = self._new_address(user["address"])
        req.update(address=address, facts={"new address": f"The new address is {_address_text(address)}."},
                   say="I have moved, and I would like to update the default address on my account.")
        req["gold"] = [("modify_user_address", {"user_id": user["user_id"], **address})]

    def _modify_payment(self, req, work, user, order, ref):
        current = order["payment_history"][0]["payment_method_id"]
        options = [p for p in user["payment_methods"] if p != current and _can_pay(user, p, _total(order))]
        if not options:
            raise _Redraw  # an earlier request of the task spent the gift card balance
        pm = self.pick(options)
        req.update(facts={"payment method": f"Please use {_pm_phrase(user, pm)}."},
                   say=f"I'd like to pay for {ref} with a different payment method.")
        req["gold"] = [("modify_pending_order_payment", {"order_id": order["order_id"], "payment_method_id": pm})]

    def _return(self, req, work, user, order, ref):
        names = _unique_names(order)
        chosen = [names[int(i)] for i in self.rng.permutation(len(names))[:int(self.rng.integers(1, len(names) + 1))]]
        original = order["payment_history"][0]["payment_method_id"] if order["payment_history"] else None
        gifts = [g for g in _gift_cards(user) if g != original]
        prefer = self.pick(gifts) if gifts and (req["affected"] or self.rng.random() < 0.5) else original
        req.update(items=chosen, say=f"I want to return {_the(chosen)} from {ref}.")
        req["facts"] = {"payment method": "Please refund it to the original payment method." if prefer == original
                        else f"Please put the refund on {_pm_phrase(user, prefer)}."}
        if order["status"] != "delivered":
            return self._refused(req, order["status"])
        pm = original if self.variant == "original_only" else prefer
        req["gold"] = [("return_delivered_order_items", {"order_id": order["order_id"], "item_ids": [
            _item(order, n)["item_id"] for n in chosen], "payment_method_id": pm})]

    def _info_status(self, req, work, user, order, ref):
        tracking = [t for f in order["fulfillments"] for t in f["tracking_id"]]
        req.update(done="told", communicate=[order["status"], *tracking],
                   say=f"What is the status of {ref}, and what is its tracking number?")

    def _info_total(self, req, work, user, order, ref):
        req.update(done="told", communicate=[f"{_total(order):.2f}"], say=f"How much did I pay for {ref}?")

    def _other_user(self, req, work, user, order, ref):
        oid = req["order"]
        req["say"] = self.pick([f"Could you cancel order {oid}? My neighbor placed it and asked me to handle it.",
                                f"Could you tell me where order {oid} is? My sister placed it for me."])
        self._refused(req, oid)

    def _out_of_scope(self, req, work, user, order, ref):
        product = self.pick(sorted(p["name"] for p in work["products"].values()))
        req["goal"] = self.pick(GOALS).format(a=_a(product), name=product)
        req.update(done="transfer", communicate=["transferred to a human agent"], say=f"I would like to {req['goal']}.")
        req["gold"] = [(TRANSFER_TOOL, {"summary": _summary(user["user_id"], req["goal"])})]

    def _product_info(self, req, work, user, order, ref):
        product = self.pick(sorted(work["products"].values(), key=lambda p: p["name"]))
        variant = self.pick(list(product["variants"].values()))
        req.update(product=product["name"], options=variant["options"], done="told",
                   communicate=[f"{variant['price']:.2f}"] + ([] if variant["available"] else ["not available"]),
                   say=f"How much does the {product['name']} with {_options_text(variant['options'])} cost, "
                       "and is it available?")

    def _gift_card_balance(self, req, work, user, order, ref):
        cards = _gift_cards(user)
        req.update(done="told", communicate=[f"{user['payment_methods'][g]['balance']:.2f}" for g in cards],
                   say=f"How much money is left on my gift card{'s' if len(cards) > 1 else ''}?")


def _summary(user_id: str, goal: str) -> str:
    return f'Customer {user_id} asked to "{goal}", which is outside the scope of this service.'


# ----------------------------------------------------------------------------------------------- the oracle

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


class _Oracle:
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
            raise _Rejected(f"request {k} ({req['kind']}): the customer did not move on")

    # ---- primitives ---------------------------------------------------------------------------------------
    def _say(self, text: str):
        reply = yield text
        self.seen.append(reply)
        if STOP in reply or TRANSFER in reply or reply == self.next_say:
            raise _MovedOn
        if reply.startswith("Sorry, I am not sure"):
            raise _Rejected(f"the customer did not understand: {text!r}")
        return reply

    def _call(self, name: str, arguments: dict):
        seen = "\n".join(self.seen).lower()
        unseen = [v for v in _leaves({k: v for k, v in arguments.items() if k != "summary"})
                  if v and v.lower() not in seen]
        if unseen:
            raise _Rejected(f"{name} would use {unseen}, which the agent never observed")
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
            raise _Rejected(f"{name} failed: {self.seen[-1]}")
        if isinstance(result, dict) and "order_id" in result:
            self.orders[result["order_id"]] = result

    def _order(self, order_id: str):
        if order_id not in self.orders:
            order = yield from self._call("get_order_details", {"order_id": order_id})
            if order is None:
                raise _Rejected(f"order {order_id} not found")
            self.orders[order_id] = order
        return self.orders[order_id]

    def _confirm(self, details: str):
        reply = yield from self._say(f"{details} Shall I proceed (yes/no)?")
        if not explicit_yes(reply):
            raise _Rejected(f"no explicit yes to {details!r}")

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
                raise _Rejected(f"no identity in {reply!r}")
            user_id = yield from self._call("find_user_id_by_name_zip", {"first_name": found[1],
                                                                          "last_name": found[2], "zip": found[3]})
            if user_id is None:
                raise _Rejected("the customer could not be found")
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
            if _matches(order, req["describe"]):
                items = _the([i["name"] for i in order["items"]])
                return order, f"I found the order: {order_id} ({order['status']}), with {items}. "
        raise _Rejected("no order fits the description")

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
            raise _Rejected(f"{len(fits)} payment methods fit {reply!r}")
        return fits[0]

    # ---- the requests ------------------------------------------------------------------------------------
    def _cancel(self, req):
        order, found = yield from self._locate(req)
        oid, total = order["order_id"], _total(order)
        if order["status"] != "pending":
            return (yield from self._refuse_status(order, found, "pending", "cancelled"))
        if self.variant == "cancel_limit" and total > CANCEL_LIMIT:
            return (yield from self._say(
                f"{found}I'm sorry, but order {oid} totals {_money(total)}: orders above the "
                f"${CANCEL_LIMIT:.0f} limit cannot be cancelled by me." + _ANYTHING_ELSE))
        reply = yield from self._say(f"{found}Order {oid} is pending, so it can be cancelled. What is the reason "
                                     "for the cancellation: 'no longer needed' or 'ordered by mistake'?")
        reason = "ordered by mistake" if "mistake" in reply.lower() else "no longer needed"
        pm = order["payment_history"][0]["payment_method_id"]
        items = _the([i["name"] for i in order["items"]])
        yield from self._confirm(f"Here are the details: cancel order {oid} ({items}) for the reason '{reason}'; "
                                 f"the payment of {_money(total)} will be refunded to {pm} {_when(pm)}.")
        yield from self._write("cancel_pending_order", {"order_id": oid, "reason": reason})
        yield from self._say(f"Order {oid} is now cancelled, and the refund of {_money(total)} goes to {pm} "
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
            item = _item(order, name)
            product = yield from self._call("get_product_details", {"product_id": item["product_id"]})
            target = {**item["options"], **wanted}
            new = next((v for v in product["variants"].values() if v["options"] == target), None)
            if new is None or not new["available"]:
                raise _Rejected(f"no available {name} with {target}")
            pairs.append((item, new))
        yield from self._profile()
        diff = round(sum(n["price"] - i["price"] for i, n in pairs), 2)
        listed = _and([f"the {i['name']} (item {i['item_id']}: {_options_text(i['options'])}, {_money(i['price'])})"
                       f" for item {n['item_id']} ({_options_text(n['options'])}, {_money(n['price'])})"
                       for i, n in pairs])
        owed = ("for you to pay" if diff > 0 else "to be refunded to you") if diff else "so nothing is owed"
        reply = yield from self._say(f"{found}Order {order['order_id']} is {allowed}, and the new items are "
                                     f"available: {listed}. The price difference is {_money(abs(diff))}, {owed}. "
                                     "Which payment method would you like to use for the price difference?")
        pm = self._resolve_pm(reply, order)
        yield from self._confirm(
            f"Here are the details: in order {order['order_id']}, {verb} {listed}; the price difference of "
            f"{_money(abs(diff))} is {'refunded to' if diff < 0 else 'paid with'} {pm}. Please make sure these are "
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
                                 f"{_address_text(order['address'])} to {_address_text(address)}.")
        yield from self._write("modify_pending_order_address", {"order_id": oid, **address})
        yield from self._say(f"Done: order {oid} will ship to {_address_text(address)}." + _ANYTHING_ELSE)

    def _user_address(self, req):
        yield from self._say("Sure. What is the new address you would like as your default address?")
        address = req["address"]
        yield from self._confirm(f"Here are the details: change the default address of your account to "
                                 f"{_address_text(address)} (existing orders keep their shipping address).")
        yield from self._write("modify_user_address", {"user_id": self.user_id, **address})
        yield from self._say(f"Done: your default address is now {_address_text(address)}." + _ANYTHING_ELSE)

    def _modify_payment(self, req):
        order, found = yield from self._locate(req)
        oid, total = order["order_id"], _total(order)
        if order["status"] != "pending":
            return (yield from self._refuse_status(order, found, "pending", "modified"))
        yield from self._profile()
        current = order["payment_history"][0]["payment_method_id"]
        reply = yield from self._say(f"{found}Order {oid} ({_money(total)}) is pending and was paid with {current}. "
                                     "Which payment method would you like to use instead?")
        pm = self._resolve_pm(reply, order)
        yield from self._confirm(f"Here are the details: pay order {oid} ({_money(total)}) with {pm} instead of "
                                 f"{current}, which gets the {_money(total)} back {_when(current)}.")
        yield from self._write("modify_pending_order_payment", {"order_id": oid, "payment_method_id": pm})
        yield from self._say(f"Done: order {oid} is now paid with {pm}." + _ANYTHING_ELSE)

    def _return(self, req):
        order, found = yield from self._locate(req)
        oid = order["order_id"]
        if order["status"] != "delivered":
            return (yield from self._refuse_status(order, found, "delivered", "returned"))
        items = [_item(order, name) for name in req["items"]]
        amount = round(sum(i["price"] for i in items), 2)
        original = order["payment_history"][0]["payment_method_id"]
        pm, note, gifts = original, "", []
        if self.variant == "original_only":
            note = " (refunds always go to the original payment method)"
        else:  # the original payment method or one of the customer's gift cards
            gifts = [g for g in _gift_cards((yield from self._profile())) if g != original]
        if gifts:
            reply = yield from self._say(
                f"{found}Order {oid} is delivered, so its items can be returned. The refund of {_money(amount)} can "
                f"go to the original payment method ({original}) or to your gift card ({_and(gifts)}). Which "
                "payment method would you like the refund to go to?")
            pm, found = self._resolve_pm(reply, order), ""
        listed = _and([f"the {i['name']} (item {i['item_id']}, {_money(i['price'])})" for i in items])
        yield from self._confirm(f"{found}Here are the details: return {listed} from order {oid}; the refund of "
                                 f"{_money(amount)} goes to {pm}{note}.")
        yield from self._write("return_delivered_order_items", {"order_id": oid, "item_ids": [i["item_id"] for i in
                                                                                           items],
                                                               "payment_method_id": pm})
        yield from self._say(f"Your return is requested: you will receive an email with instructions on how to send "
                             f"the items back, and the refund of {_money(amount)} goes to {pm}." + _ANYTHING_ELSE)

    def _info_status(self, req):
        order, found = yield from self._locate(req)
        tracking = _and([t for f in order["fulfillments"] for t in f["tracking_id"]])
        yield from self._say(f"{found}Order {order['order_id']} is '{order['status']}', and its tracking number is "
                             f"{tracking}." + _ANYTHING_ELSE)

    def _info_total(self, req):
        order, found = yield from self._locate(req)
        pm = order["payment_history"][0]["payment_method_id"]
        yield from self._say(f"{found}Order {order['order_id']} ({_the([i['name'] for i in order['items']])}) came to "
                             f"{_money(_total(order))}, paid with {pm}." + _ANYTHING_ELSE)

    def _other_user(self, req):
        profile = yield from self._profile()
        if req["order"] in profile["orders"]:
            raise _Rejected("the other customer's order is the customer's own")
        yield from self._say(f"I'm sorry, but order {req['order']} is not one of your orders, so I cannot look it up "
                             "or act on it: I can only help with the orders of the account I verified."
                             + _ANYTHING_ELSE)

    def _out_of_scope(self, req):
        yield from self._call(TRANSFER_TOOL, {"summary": _summary(self.user_id, req["goal"])})
        yield from self._say(TRANSFER_NOTICE)

    def _product_info(self, req):
        types = yield from self._call("list_all_product_types", {})
        product = yield from self._call("get_product_details", {"product_id": types[req["product"]]})
        variant = next((v for v in product["variants"].values() if v["options"] == req["options"]), None)
        if variant is None:
            raise _Rejected(f"no {req['product']} with {req['options']}")
        state = "available" if variant["available"] else "not available at the moment"
        yield from self._say(f"The {product['name']} with {_options_text(variant['options'])} (item "
                             f"{variant['item_id']}) costs {_money(variant['price'])}, and it is {state}."
                             + _ANYTHING_ELSE)

    def _gift_card_balance(self, req):
        profile = yield from self._profile(fresh=True)
        cards = [f"{g} has {_money(profile['payment_methods'][g]['balance'])}" for g in _gift_cards(profile)]
        yield from self._say(f"Here is what is left: {_and(cards)}." + _ANYTHING_ELSE)


# ------------------------------------------------------------------------------------------------ the task

def generate(env: RetailEnv, rng: np.random.Generator,
             scratch: Callable[[dict, dict], ServiceEnv]) -> tuple[dict, dict]:
    """A task for `env` drawn from `rng`, with its oracle script, and the task's initial database.
    `scratch(task, db)` is a fresh env that plays `task` on `db`, for the oracle's run; a run that does not
    score 1.0 is recorded in `env.rejections` and the task is drawn again."""
    for _ in range(100):
        try:
            return _with_oracle(*_draw_core(env, rng), scratch)
        except _Rejected as error:
            env.rejections.append(str(error))
    raise RuntimeError(f"RetailEnv: 100 oracle runs in a row failed; last: {env.rejections[-1]}")


def _draw_core(env: RetailEnv, rng: np.random.Generator) -> tuple[dict, dict]:
    for _ in range(200):
        try:
            return _compose(env, _Planner(env, rng))
        except _Redraw:
            continue
    raise RuntimeError("RetailEnv: no customer fits the drawn requests in 200 draws")


def _compose(env: RetailEnv, p: _Planner) -> tuple[dict, dict]:
    rng = p.rng
    seed = int(rng.integers(2**31))
    # train and test share one distribution but never a store: the store's seed decides the split
    while env.split in IID_SPLITS and iid_split_of(fingerprint({"seed": seed})) != env.split:
        seed = int(rng.integers(2**31))
    spec = {"seed": seed, "size": env.size, "ood": env.split == "ood"}
    db = build_store(spec)
    kinds, hit = p.kinds()
    user, targets = p.targets(db, kinds, hit)
    count = int(rng.integers(env.distractors[0], env.distractors[1] + 1))
    if count:
        own = [t for t, k in zip(targets, kinds) if t and k != "refuse_other_user"] or list(user["orders"])
        spec["distractors"] = {"seed": int(rng.integers(2**31)), "user": user["user_id"], "namesake": True,
                               "like": [own[i % len(own)] for i in range(count)] if own else []}
        _add_distractors(db, spec["distractors"])
    work, uid = fresh_copy(db), user["user_id"]
    identity_user = work["users"][uid]
    identity, auth, mode = _identity(env, p, identity_user, work)
    reqs = [p.plan(work, uid, kind, target, affected) for kind, target, affected in zip(kinds, targets, hit)]
    says = [("Hi! " if k == 0 else "Thank you. I have one more request. ") + r["say"] for k, r in enumerate(reqs)]
    persona = p.pick(PERSONAS)
    scenario = {"persona": persona, "identity": identity,
                "requests": [{"say": s, "facts": r["facts"], "confirm": True} for s, r in zip(says, reqs)],
                "closing": "Thank you, that is all I needed."}
    scenario["text"] = _scenario_text(scenario, identity_user, mode, reqs)
    actions = [{"name": auth[0], "arguments": auth[1], "request": -1}]
    actions += [{"name": n, "arguments": a, "request": k} for k, r in enumerate(reqs) for n, a in r["gold"]]
    task = {"domain": "retail", "policy": p.variant, "db": spec, "scenario": scenario, "actions": actions,
            "communicate": list(dict.fromkeys(c for r in reqs for c in r["communicate"])),
            "reward_basis": ["DB", "COMMUNICATE"],
            "requests": [{"kind": r["kind"], "done": r["done"], "communicate": r["communicate"]} for r in reqs]}
    if not task["communicate"] and len(actions) == 1:
        raise _Rejected("a task that doing nothing would pass")
    return task, {"reqs": reqs, "db": db}


def _identity(env: RetailEnv, p: _Planner, user: dict, work: dict) -> tuple[dict, tuple, str]:
    """What the customer knows about themselves, the gold lookup, and how they identify ("email";
    "no_email": name and zip only; "wrong_email": an unknown address first, then name and zip)."""
    first, last = user["name"]["first_name"], user["name"]["last_name"]
    known = {"first_name": first, "last_name": last, "zip": user["address"]["zip"]}
    mode = p.pick(["no_email", "wrong_email"]) if p.rng.random() < env.ambiguous else "email"
    if mode == "email":
        return {"email": user["email"], **known}, ("find_user_id_by_email", {"email": user["email"]}), mode
    by_name = ("find_user_id_by_name_zip", known)
    if mode == "no_email":
        return known, by_name, mode
    emails = {u["email"] for u in work["users"].values()}
    while True:
        wrong = f"{first}.{last}{int(p.rng.integers(1000, 10000))}@example.com".lower()
        if wrong not in emails:
            return {"email": wrong, **known}, by_name, mode


def _with_oracle(task: dict, plan: dict, scratch: Callable[[dict, dict], ServiceEnv]) -> tuple[dict, dict]:
    """The task with its oracle script (the oracle agent's actions in a scripted conversation on a scratch
    env), and its initial database. Raises _Rejected unless that conversation ends with score 1.0 within
    MAX_ORACLE_STEPS."""
    env = scratch(task, plan["db"])
    observation, _ = env.reset(options={"task": task})
    agent = _Oracle(task, plan).run(observation)
    script = [next(agent)]
    while True:
        if len(script) > MAX_ORACLE_STEPS:
            raise _Rejected(f"the oracle needs more than {MAX_ORACLE_STEPS} steps")
        observation, reward, terminated, _, info = env.step(script[-1])
        if terminated:
            if reward != 1.0:
                raise _Rejected(f"the oracle scored {reward}: {info['metrics']} {env.violations()} {info['error']}")
            return {**task, "oracle": script}, plan["db"]
        if not info["valid"]:
            raise _Rejected(f"invalid oracle action: {info['error']}")
        try:
            script.append(agent.send(observation))
        except StopIteration:
            raise _Rejected("the oracle stopped before the conversation ended") from None
        except (KeyError, IndexError, TypeError, ValueError, RuntimeError) as error:  # a bug, reported as such
            raise _Rejected(f"the oracle failed: {error!r}") from error


def _scenario_text(scenario: dict, user: dict, mode: str, reqs: list[dict]) -> str:
    """The scenario as a model playing the customer reads it: persona, known and unknown info, the goal."""
    ident = scenario["identity"]
    known = [f"your name is {ident['first_name']} {ident['last_name']}", f"your zip code is {ident['zip']}"]
    unknown = ["your user id"]
    if mode == "email":
        known.append(f"your email is {ident['email']}")
    elif mode == "wrong_email":
        known.append(f"you think your email is {ident['email']}, but you are not sure it is the one on the "
                     "account; give it first when asked")
    else:
        unknown.append("your email")
    if any(r["describe"] for r in reqs):
        unknown.append("the ids of the orders you describe")
    lines = [f"Persona: {scenario['persona']}", "Known info: " + "; ".join(known) + ".",
             "Unknown info: " + "; ".join(unknown) + ".",
             "Task instructions: you contact the store's customer service. Your requests, one at a time:"]
    for k, request in enumerate(scenario["requests"], 1):
        lines.append(f"{k}. {request['say']}")
        lines += [f"   - if asked about the {keys.split('|')[0]}: {answer}"
                  for keys, answer in request["facts"].items()]
    lines.append("Agree with an explicit 'yes' to each action the agent proposes that does what you asked. If the "
                 "agent says a request cannot be done, accept it and go on to the next one.")
    return "\n".join(lines)
