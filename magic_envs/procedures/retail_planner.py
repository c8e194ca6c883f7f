"""The retail task planner: which requests a task holds, whom and which orders they are about, what the
customer says and answers when asked, and the gold writes of each (replayed on a working copy, so that later
requests see the state earlier ones leave). `retail_tasks` composes its output into a task."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from magic_envs.procedures import retail_data, retail_tools
from magic_envs.procedures import retail_wording as say
from magic_envs.procedures.database import ToolError
from magic_envs.procedures.service import TRANSFER_TOOL

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
GOALS = ("place a new order for {a}", "get a price match on {a} that I saw cheaper elsewhere",
         "apply a discount code to the {name} I want to buy next",
         "file a complaint: the {name} I got arrived damaged and I want compensation for the trouble")


class Redraw(Exception):
    """The drawn customer cannot carry the drawn requests: draw again (part of sampling, not a rejection)."""


class Rejected(Exception):
    """The oracle's scripted run did not score 1.0: a generator bug."""


# ------------------------------------------------------------------------------------------ reading orders

def unique_names(order: dict) -> list[str]:
    """Product names that occur once in the order: the items a customer can name without ambiguity."""
    names = [i["name"] for i in order["items"]]
    return [n for n in names if names.count(n) == 1]


def item_named(order: dict, name: str) -> dict:
    for item in order["items"]:
        if item["name"] == name:
            return item
    raise Rejected(f"no {name} in order {order['order_id']}")


def order_total(order: dict) -> float:
    return round(sum(i["price"] for i in order["items"]), 2)


def gift_cards(user: dict) -> list[str]:
    return [k for k, v in user["payment_methods"].items() if v["source"] == "gift_card"]


def can_pay(user: dict, pm_id: str, amount: float) -> bool:
    pm = user["payment_methods"][pm_id]
    return pm["source"] != "gift_card" or amount <= 0 or pm["balance"] >= amount + 0.01


# ---------------------------------------------------------------------------------------------- the planner

class Planner:
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
        raise Redraw

    def _order_for(self, db, user, kind, affected, taken):
        if kind == "refuse_other_user":
            return self.pick([o for o, order in db["orders"].items() if order["user_id"] != user["user_id"]])
        if kind == "gift_card_balance":
            return None if gift_cards(user) else False
        if kind not in STATUSES:
            return None
        fits = [o for o in user["orders"] if o not in taken and db["orders"][o]["status"] in STATUSES[kind]
                and self._fits(user, kind, db["orders"][o], affected)]
        return self.pick(fits) if fits else False

    def _fits(self, user, kind, order, affected) -> bool:
        if kind in ("modify_items", "return", "exchange", "refuse_return", "refuse_modified") \
                and not unique_names(order):
            return False
        if kind == "modify_payment":
            current = order["payment_history"][0]["payment_method_id"]
            return any(pm != current and can_pay(user, pm, order_total(order)) for pm in user["payment_methods"])
        if affected and self.variant == "cancel_limit":
            return order_total(order) > CANCEL_LIMIT
        if affected and self.variant == "original_only":
            return any(g != order["payment_history"][0]["payment_method_id"] for g in gift_cards(user))
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
            described = say.description(work, user, order)
            if described is None:
                raise Redraw
            req["describe"], text = described
            ref = f"{text} (I don't have the order id)"
        getattr(self, "_" + intent)(req, work, user, order, ref)
        for name, arguments in req["gold"]:
            try:
                retail_tools.call(work, name, arguments, quirks=False)
            except ToolError as error:
                raise Rejected(f"the gold {name} failed: {error}") from error
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
        elif self.variant == "cancel_limit" and order_total(order) > CANCEL_LIMIT:
            self._refused(req, f"{CANCEL_LIMIT:.0f}")
        else:
            req["gold"] = [("cancel_pending_order", {"order_id": order["order_id"], "reason": reason})]

    def _changes(self, req, work, user, order, ref, exchange: bool):
        names = unique_names(order)
        chosen = [names[int(i)] for i in self.rng.permutation(len(names))[:int(self.rng.integers(1, 3))]]
        changes, old, new = [], [], []
        for name in chosen:
            item = item_named(order, name)
            variants = work["products"][item["product_id"]]["variants"].values()
            variant = self.pick([v for v in variants if v["available"] and v["item_id"] != item["item_id"]])
            changes.append([name, {k: v for k, v in variant["options"].items() if item["options"].get(k) != v}])
            old.append(item)
            new.append(variant)
        diff = round(sum(v["price"] for v in new) - sum(i["price"] for i in old), 2)
        payers = [p for p in user["payment_methods"] if can_pay(user, p, diff)]
        if not payers:
            raise Redraw  # a gift card alone that cannot cover the difference
        pm = self.pick(payers)
        req.update(changes=changes, pm=pm)
        req["facts"] = {"payment method": f"Please use {say.payment(user, pm)} for the price difference."}
        wanted = say.listing([f"the {name} {'for' if exchange else 'to'} the one with {say.options(options)}"
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
        req.update(address=address, facts={"new address": f"The new address is {say.address(address)}."},
                   say=f"I need to change the shipping address of {ref}.")
        req["gold"] = [("modify_pending_order_address", {"order_id": order["order_id"], **address})]

    def _user_address(self, req, work, user, order, ref):
        address = self._new_address(user["address"])
        req.update(address=address, facts={"new address": f"The new address is {say.address(address)}."},
                   say="I have moved, and I would like to update the default address on my account.")
        req["gold"] = [("modify_user_address", {"user_id": user["user_id"], **address})]

    def _modify_payment(self, req, work, user, order, ref):
        current = order["payment_history"][0]["payment_method_id"]
        options = [p for p in user["payment_methods"] if p != current and can_pay(user, p, order_total(order))]
        if not options:
            raise Redraw  # an earlier request of the task spent the gift card balance
        pm = self.pick(options)
        req.update(facts={"payment method": f"Please use {say.payment(user, pm)}."},
                   say=f"I'd like to pay for {ref} with a different payment method.")
        req["gold"] = [("modify_pending_order_payment", {"order_id": order["order_id"], "payment_method_id": pm})]

    def _return(self, req, work, user, order, ref):
        names = unique_names(order)
        chosen = [names[int(i)] for i in self.rng.permutation(len(names))[:int(self.rng.integers(1, len(names) + 1))]]
        original = order["payment_history"][0]["payment_method_id"] if order["payment_history"] else None
        gifts = [g for g in gift_cards(user) if g != original]
        prefer = self.pick(gifts) if gifts and (req["affected"] or self.rng.random() < 0.5) else original
        req.update(items=chosen, say=f"I want to return {say.the(chosen)} from {ref}.")
        req["facts"] = {"payment method": "Please refund it to the original payment method." if prefer == original
                        else f"Please put the refund on {say.payment(user, prefer)}."}
        if order["status"] != "delivered":
            return self._refused(req, order["status"])
        pm = original if self.variant == "original_only" else prefer
        req["gold"] = [("return_delivered_order_items", {"order_id": order["order_id"], "item_ids": [
            item_named(order, n)["item_id"] for n in chosen], "payment_method_id": pm})]

    def _info_status(self, req, work, user, order, ref):
        tracking = [t for f in order["fulfillments"] for t in f["tracking_id"]]
        req.update(done="told", communicate=[order["status"], *tracking],
                   say=f"What is the status of {ref}, and what is its tracking number?")

    def _info_total(self, req, work, user, order, ref):
        req.update(done="told", communicate=[f"{order_total(order):.2f}"], say=f"How much did I pay for {ref}?")

    def _other_user(self, req, work, user, order, ref):
        oid = req["order"]
        req["say"] = self.pick([f"Could you cancel order {oid}? My neighbor placed it and asked me to handle it.",
                                f"Could you tell me where order {oid} is? My sister placed it for me."])
        self._refused(req, oid)

    def _out_of_scope(self, req, work, user, order, ref):
        product = self.pick(sorted(p["name"] for p in work["products"].values()))
        req["goal"] = self.pick(GOALS).format(a=say.article(product), name=product)
        req.update(done="transfer", communicate=["transferred to a human agent"], say=f"I would like to {req['goal']}.")
        req["gold"] = [(TRANSFER_TOOL, {"summary": say.out_of_scope(user["user_id"], req["goal"])})]

    def _product_info(self, req, work, user, order, ref):
        product = self.pick(sorted(work["products"].values(), key=lambda p: p["name"]))
        variant = self.pick(list(product["variants"].values()))
        req.update(product=product["name"], options=variant["options"], done="told",
                   communicate=[f"{variant['price']:.2f}"] + ([] if variant["available"] else ["not available"]),
                   say=f"How much does the {product['name']} with {say.options(variant['options'])} cost, "
                       "and is it available?")

    def _gift_card_balance(self, req, work, user, order, ref):
        cards = gift_cards(user)
        req.update(done="told", communicate=[f"{user['payment_methods'][g]['balance']:.2f}" for g in cards],
                   say=f"How much money is left on my gift card{'s' if len(cards) > 1 else ''}?")
