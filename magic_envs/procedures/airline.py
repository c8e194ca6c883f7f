"""magic/Airline-v0: a policy-following airline customer-service agent on a generated airline (tau2-bench airline).

This module holds the env: its arguments, the policy text (with its ood_policy variants) and the database and
identification hooks. Its tasks come from `airline_tasks`: a planner draws a customer and their requests on a
generated database and serves them as a policy-following agent would, recording the script as the task's
oracle; a draw is kept only when replaying that script against the scripted customer on a scratch env of this
class scores 1.0 (anything else is a generator bug, counted in `AirlineEnv.rejections`).
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import ClassVar

import numpy as np

from magic_envs.core.tasks import IID_SPLITS
from magic_envs.core.tools import random_call
from magic_envs.procedures import airline_tasks, airline_tools
from magic_envs.procedures.airline_rules import RULES, build_airline_db, free_bags
from magic_envs.procedures.airline_tools import CABINS, FREE_BAGS
from magic_envs.procedures.service import ServiceEnv


@functools.cache
def policy_for(variant: str = "base") -> str:
    """The policy document the agent follows: the base text, or an ood_policy variant of it."""
    if variant not in RULES:
        raise ValueError(f"unknown policy variant {variant!r}; choose one of {sorted(RULES)}")
    rules = RULES[variant]
    rows = ["  | membership | basic economy | economy | business |", "  |---|---|---|---|"]
    rows += [f"  | {m} | " + " | ".join(str(free_bags(rules, m, c)) for c in CABINS) + " |" for m in FREE_BAGS]
    text = resources.files("magic_envs.procedures").joinpath("airline_policy.md").read_text(encoding="utf-8")
    return (text.replace("<<BAG_TABLE>>", "\n".join(rows)).replace("<<CANCEL_HOURS>>", str(rules["cancel_hours"]))
            .replace("<<CERTIFICATE>>", str(rules["certificate"])))


def _private_values(db: dict, user_id: str) -> set[str]:
    """airline_tools.private_values without the bare card digits: four digits also occur in years, dates and
    amounts, so they would flag innocent messages; a card's other identifiers (its id) stay."""
    return {v for v in airline_tools.private_values(db, user_id) if not v.isdigit()}


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _whole(value, name: str, low: int, high: int) -> int:
    if not (_is_int(value) and low <= value <= high):
        raise ValueError(f"{name} must be an int within [{low}, {high}]; got {value!r}")
    return int(value)


def _int_pair(value, name: str, low: int, high: int) -> tuple[int, int]:
    pair = [value] * 2 if _is_int(value) else value
    if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(map(_is_int, pair))
            and low <= pair[0] <= pair[1] <= high):
        raise ValueError(f"{name} must be an int or a [min, max] pair within [{low}, {high}]; got {value!r}")
    return int(pair[0]), int(pair[1])


class AirlineEnv(ServiceEnv):
    """Serve an airline's customer by its written policy, with tools on a generated reservation database.

    ## Description
    tau2-bench's airline domain, generated: a month of flights (2024-05-01..30, now 2024-05-15 15:00 EST),
    users with payment methods and memberships, and their reservations (`airline_data.generate_db`), served by
    tau2's 14 airline tools (`airline_tools`, tau2's semantics with its bugs fixed). A scripted customer
    (`user_sim.ScriptedUser`) brings 1-3 requests, one after the other: book a trip (search, pick by the
    customer's stated preference, free bags by membership and cabin, insurance, payment within the policy),
    cancel (when the policy's grounds allow; refuse otherwise; transfer when a flight was flown), change a
    flight's date (not in basic economy), change the cabin (not once a flight was flown), add bags (never
    remove), change a passenger (never their number), a flight's status, compensation for a cancelled flight
    (when eligible), requests about another customer's reservation (refused) and out-of-scope ones
    (transferred). The agent must identify the customer first (`get_user_details` on the user id the customer
    gives), confirm every change with an explicit yes after listing its details, and never reveal another
    customer's data. The policy document is `airline_policy.md` (in `info["instructions"]`).

    ## Observation
    The customer's message (`info["role"] == "user"`), or the results of the last action's tool calls, one
    `<tool_response>` block per call (`"tool"`); failing calls answer "Error: <why>".

    ## Action
    `<tool_call>` blocks (validated against the tools' schemas), or plain text: a message to the customer.
    Text beside tool calls is kept in the transcript (it counts for COMMUNICATE, as in tau2-bench) but the
    customer never sees it.

    ## Rewards
    At the end, 1.0 or 0.0: tau2-bench's DB x COMMUNICATE (the whole final database equals the gold one, i.e.
    the initial one with the gold actions replayed; every required phrase was said), times POLICY unless
    `reward_mode="tau2"` (no write without an explicit yes just before it, no call on a customer's data
    before that customer was identified, no other customer's private data in a message). Refusals require
    saying why (the policy's words: "not eligible", "basic economy", "flown", ...), answers the fact, transfers
    the transfer. `info["metrics"]`: `db`, `communicate`, `policy` (0/1), `violations`, `errors`, `turns`.

    ## Starting State
    A task drawn from the env's RNG, or pinned with `reset(options={"task": task_dict})` (service.py's format
    plus `policy`, the policy variant). The database is rebuilt from `task["db"]` (generator seed, size, ood,
    distractors); the first observation is the customer's first request.

    ## Episode End
    Terminates when the customer ends the conversation (all requests served, a transfer, or no progress for 6
    replies), or after `max_errors` failed calls or invalid actions (score 0). The TimeLimit (50 steps)
    truncates.

    ## Arguments
    `split`: "train" | "test" (one distribution; the fingerprint of the database's seed decides membership, so
    the two never share a database, let alone a task) | "ood" (unseen names, cities and
    airports, and request kinds never drawn in train/test: one-stop bookings, adding insurance, total paid) |
    "ood_policy" (a policy variant never seen: a 48-hour cancellation window, $150 certificates, or one more
    free bag per passenger; the policy text and the oracle both follow it). `requests`: number of requests,
    int or [min, max] within [1, 3] (default [1, 3]). `distractors`: look-alike reservations (same route and
    cabin, other dates) added per reservation the requests are about, plus a namesake user when > 0 (default
    1; 0-3). `ambiguous`: chance per request that the customer lacks the reservation id (describes the trip
    instead, or gives a wrong id first) or names cities instead of airport codes (default 0.3). `size`: the
    database's size (default 1). `reward_mode`, `user`, `user_model`, `max_errors`: see service.py.

    ## Version History
    * v0: initial.

    >>> import gymnasium, magic_envs
    >>> env = gymnasium.make("magic/Airline-v0", requests=1)
    >>> first, info = env.reset(seed=0)
    >>> info["role"], len(info["tools"])
    ('user', 14)
    >>> terminated = truncated = False
    >>> while not (terminated or truncated):
    ...     _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    >>> reward, info["metrics"]["policy"]
    (1.0, 1.0)
    """

    tools = airline_tools
    policy = policy_for("base")
    splits = ("train", "test", "ood", "ood_policy")
    rejections: ClassVar[int] = 0  # drawn tasks whose oracle run did not score 1.0 (a generator bug: stays 0)
    last_rejection: ClassVar[tuple] = ()

    def __init__(self, split: str = "train", requests=(1, 3), distractors: int = 1, ambiguous: float = 0.3,
                 size: int = 1, reward_mode: str = "magic", user: str = "scripted", user_model: dict | None = None,
                 max_errors: int = 10, render_mode: str | None = None):
        super().__init__(split, reward_mode, user, user_model, max_errors, render_mode)
        self.n_requests = _int_pair(requests, "requests", 1, 3)
        self.distractors = _whole(distractors, "distractors", 0, 3)
        if isinstance(ambiguous, bool) or not isinstance(ambiguous, (int, float)) or not 0 <= ambiguous <= 1:
            raise ValueError(f"ambiguous must lie in [0, 1]; got {ambiguous!r}")
        self.ambiguous = float(ambiguous)
        self.size = _whole(size, "size", 1, 8)
        self.variant = "base"

    # ---- tasks ------------------------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> dict:
        return airline_tasks.draw(self, rng, check_split=False)

    def _draw_task(self) -> dict:
        return airline_tasks.draw(self, self.np_random, check_split=self.split in IID_SPLITS)

    def _scratch(self) -> AirlineEnv:
        """A fresh env of this split, to replay a drawn task's oracle on."""
        return AirlineEnv(self.split, size=self.size)

    @classmethod
    def _reject(cls, task, problem: str) -> None:
        cls.rejections += 1
        cls.last_rejection = (task, problem)

    def build_database(self, task: dict) -> dict:
        spec = task["db"]
        if not isinstance(spec, dict) or "source" in spec:
            raise ValueError(f"not a generated airline database: {spec!r}")
        return build_airline_db(spec)

    def setup(self, task: dict) -> str:
        variant = task.get("policy", "base") if isinstance(task, dict) else "base"
        if variant not in RULES:
            raise ValueError(f"unknown policy variant {variant!r}")
        self.variant = variant
        first = super().setup(task)
        self.monitor.private_values = _private_values
        return first

    def policy_text(self) -> str:
        return policy_for(self.variant)

    # ---- identity ---------------------------------------------------------------------------------------
    def authenticates(self, name: str, arguments: dict, result: str, user_messages: list[str]) -> str | None:
        """tau2's airline identification: the profile of a user id the customer gave was read."""
        user_id = arguments.get("user_id")
        if name == "get_user_details" and isinstance(user_id, str) and any(user_id in m for m in user_messages):
            return user_id
        return None

    # ---- baselines --------------------------------------------------------------------------------------
    def random_action(self, rng: np.random.Generator) -> str:
        if rng.random() < 0.3:
            return str(rng.choice(["Could you tell me more?", "Let me look into that.", "Sure.",
                                   "Is there anything else?", "Done."]))
        return random_call(self.tool_list(), rng)
