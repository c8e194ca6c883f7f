"""magic/Retail-v0: a policy-following retail customer-service agent on a generated store (tau2-bench retail).

This module holds the env: its arguments, the policy text (with its ood_policy variants) and the database
hooks. Its tasks come from `retail_tasks`: a generator of customers, requests and gold writes, whose
rule-following oracle agent is run on a scratch env of this class; only runs that score 1.0 become a task's
oracle script (anything else is a generator bug, counted in `RetailEnv.rejections`).
"""

from __future__ import annotations

import functools
import re
from importlib import resources

import numpy as np

from magic_envs.core.tasks import roundtrip
from magic_envs.core.tools import random_call
from magic_envs.procedures import retail_tasks, retail_tools
from magic_envs.procedures.retail_planner import CANCEL_LIMIT, VARIANTS
from magic_envs.procedures.retail_store import build_store
from magic_envs.procedures.service import ServiceEnv

_RULES = {
    "CANCEL_LIMIT": {"base": "", "cancel_limit": f"- Orders whose total is above ${CANCEL_LIMIT:.0f} cannot be "
                     "cancelled by you: decline such a cancellation and tell the customer about the "
                     f"${CANCEL_LIMIT:.0f} limit."},
    "RETURN_REFUND": {"base": "- The refund goes either to the original payment method of the order or to an "
                      "existing gift card of the customer, as the customer prefers.",
                      "original_only": "- The refund always goes to the original payment method of the order; "
                      "it can never go to a gift card or any other payment method."},
    "EXCHANGE": {"base": """- Only items of an order whose status is 'delivered' can be exchanged, each for an available
  item of the same product type with different options.
- Items of an order can be exchanged only once, so remind the customer to list every item to exchange before
  you act.
- The price difference is paid or refunded with one payment method of the customer; a gift card must cover
  any increase.
- After the confirmation, request the exchange. The order's status becomes 'exchange requested' and the
  customer receives an email with instructions on how to send the items back; no new order is needed.""",
                 "no_exchange": "- Exchanges are not offered. Decline exchange requests, and tell the customer "
                 "that they can return delivered items instead."}}


@functools.cache
def policy_for(variant: str = "base") -> str:
    """The policy document the agent follows: the base text, or an ood_policy variant of it."""
    if variant != "base" and variant not in VARIANTS:
        raise ValueError(f"unknown policy variant {variant!r}; choose 'base' or one of {sorted(VARIANTS)}")
    text = resources.files("magic_envs.procedures").joinpath("retail_policy.md").read_text(encoding="utf-8")
    for marker, rules in _RULES.items():
        text = text.replace(f"<<{marker}>>", rules.get(variant, rules["base"]))
    return re.sub(r"\n{3,}", "\n\n", text)


def _pair(value, name: str, lo: int, hi: int) -> tuple[int, int]:
    pair = [value] * 2 if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value
    if not (isinstance(pair, (list, tuple)) and len(pair) == 2
            and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in pair)
            and lo <= pair[0] <= pair[1] <= hi):
        raise ValueError(f"{name} must be an int or a [min, max] pair within [{lo}, {hi}]; got {value!r}")
    return int(pair[0]), int(pair[1])


class RetailEnv(ServiceEnv):
    """Serve an online store's customer by its written policy, with tools on a generated database.

    ## Description
    tau2-bench's retail domain, procedurally generated. A customer (a deterministic scripted simulator by
    default, or any chat model with `user="model"`) has 1-3 requests about their orders or profile: cancel a
    pending order; change a pending order's items, shipping address or payment method; change their default
    address; return or exchange delivered items; ask for an order's status and tracking number or its total.
    Some requests must be refused (cancelling an order that is not pending, returning one that was not
    delivered, anything about another customer's order) and some transferred to a human (out of scope: new
    orders, price matches, complaints). The agent must authenticate the customer (email, or name + zip),
    serve only them, list the details of each change and get an explicit "yes" first, and follow the policy
    (`info["instructions"]`). Tools: tau2-bench's 16 retail tools (`retail_tools`).

    ## Observation
    The customer's first message at reset; then the customer's reply to a plain-text action (`info["role"]
    == "user"`), or one `<tool_response>` per call of a tool-call action (`"tool"`).

    ## Action
    Tool calls in the Hermes grammar (run in call order; a failing call answers "Error: ...") or plain text,
    a message to the customer. Not both: text beside calls is recorded but never reaches the customer.

    ## Rewards
    At the end, tau2-bench's DB x COMMUNICATE: the whole final database equals the gold one (the gold writes
    replayed on the initial database: a missing, wrong or extra change fails), and every required fact was
    said (status, tracking number, amounts, the refusal's reason, the transfer notice). With
    `reward_mode="magic"` (default) also POLICY: no write without the customer's explicit yes just before,
    no call on a customer's data before they were authenticated, and no other customer's private data in a
    message. `info["metrics"]`: db, communicate, policy (0/1 at the end), violations, errors, turns.

    ## Starting State
    A task drawn from the env's RNG or pinned with `reset(options={"task": task})`: `db` (the generator seed,
    size, vocabulary and distractors: the database is rebuilt, never stored), `policy` ("base" or an
    ood_policy variant), `scenario` (persona, what the customer knows, their requests with the facts they
    give when asked, and a free-text version for model users), gold `actions`, `communicate`, per-request
    `requests` (kind, how it is done) and `oracle` (the script of the rule-following oracle agent).

    ## Episode End
    Terminates when the customer stops (goal reached, given up after 6 unhelpful replies, or transferred), or
    after `max_errors` failed calls or malformed actions (score 0). The TimeLimit (40 steps) truncates.

    ## Arguments
    `split`: "train" | "test" (the same distribution; the fingerprint of the store's seed decides membership,
    so the two never share a store, let alone a task), "ood" (at least one request of a kind never drawn in
    train/test: product price and availability, gift card balance, acting on an order whose items were
    already modified; unseen names, products and cities), "ood_policy" (an unseen policy variant, which the
    policy text and the oracle follow: refunds of returns only to the original method, no cancellation above
    $500, or no exchanges).
    `requests`: requests per conversation, int or [min, max] within [1, 3] (default [1, 3]).
    `distractors`: look-alike orders added to the customer, int or [min, max] within [0, 3] (default 1); with
    any, also a namesake customer (same first and last name, other zip and email) holding a look-alike order.
    `ambiguous`: the chance (0-1) that the customer does not know their email or gives a wrong one first,
    and, per request, that they describe the order by its items instead of giving its id (default 0.3).
    `size`: database size (x 20 products, 40 customers, 80 orders; default 1).
    `reward_mode`, `user`, `user_model`, `max_errors`: see `ServiceEnv`.

    ## Version History
    * v0: initial.

    >>> import gymnasium, magic_envs
    >>> env = gymnasium.make("magic/Retail-v0", requests=1)
    >>> first, info = env.reset(seed=0)
    >>> info["role"], len(info["tools"])
    ('user', 16)
    >>> terminated = False
    >>> while not terminated:
    ...     _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
    >>> reward, info["metrics"]["policy"]
    (1.0, 1.0)
    """

    tools = retail_tools
    policy = policy_for("base")
    splits = ("train", "test", "ood", "ood_policy")

    def __init__(self, split: str = "train", requests=(1, 3), distractors: int = 1, ambiguous: float = 0.3,
                 size: int = 1, reward_mode: str = "magic", user: str = "scripted", user_model: dict | None = None,
                 max_errors: int = 10, render_mode: str | None = None):
        super().__init__(split, reward_mode, user, user_model, max_errors, render_mode)
        self.n_requests = _pair(requests, "requests", 1, 3)
        self.distractors = _pair(distractors, "distractors", 0, 3)
        if isinstance(ambiguous, bool):
            ambiguous = float(ambiguous)
        if not isinstance(ambiguous, (int, float)) or not 0 <= ambiguous <= 1:
            raise ValueError(f"ambiguous must be a chance in [0, 1]; got {ambiguous!r}")
        self.ambiguous = float(ambiguous)
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 1 <= size <= 10:
            raise ValueError(f"size must be an int within [1, 10]; got {size!r}")
        self.size = int(size)
        self.rejections: list[str] = []  # oracle runs that did not score 1.0: generator bugs, expected empty
        self._variant = "base"

    # ---- domain hooks ----------------------------------------------------------------------------------
    def policy_text(self) -> str:
        return policy_for(self._variant)

    def build_database(self, task: dict) -> dict:
        if not isinstance(task["db"], dict):
            raise TypeError(f"a retail task's db is a generator spec, got {task['db']!r}")
        # The task just generated brings its database along (setup only reads the initial database).
        prebuilt = self.__dict__.pop("_prebuilt", None)
        if prebuilt is not None and prebuilt[0] == task["db"]:
            return prebuilt[1]
        return build_store(task["db"])

    def authenticates(self, name, arguments, result, user_messages):
        return result if name in ("find_user_id_by_email", "find_user_id_by_name_zip") else None

    def setup(self, task: dict) -> str:
        variant = task.get("policy", "base")
        if variant != "base" and variant not in VARIANTS:
            raise ValueError(f"unknown retail policy variant {variant!r}")
        self._variant = variant
        return super().setup(task)

    def random_action(self, rng: np.random.Generator) -> str:
        """Half the time a tool call with right-typed guessed arguments, else random text to the customer."""
        return random_call(self.tool_list(), rng) if rng.random() < 0.5 else self.action_space.sample()

    # ---- tasks --------------------------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> dict:
        task, db = retail_tasks.generate(self, rng, self._scratch)
        self._prebuilt = (task["db"], db)
        return task

    def _scratch(self, task: dict, db: dict) -> RetailEnv:
        """A fresh env of this split that plays `task` on `db`, its database already built (the oracle's run)."""
        scratch = RetailEnv(split=self.split)
        scratch._prebuilt = (task["db"], db)
        return scratch

    def _draw_task(self) -> dict:
        return roundtrip(self.generate(self.np_random))
