"""The base of the service-agent envs: a customer, a written policy, tools on a database, tau2's reward.

The conversation runs as tau2-bench's does. It opens with the agent's fixed greeting (`GREETING`, part of the
instructions); the first observation is the customer's answer. Each action is either

* tool calls (the Hermes grammar, several allowed): each runs on the live database in call order, the
  observation holds one `<tool_response>` per call, `info["role"] == "tool"`; a failing call answers
  "Error: <why>" and counts as an error. Text written beside tool calls is kept (it counts for COMMUNICATE,
  as in tau2-bench) but the customer never sees it;
* or plain text: a message to the customer, whose reply is the observation (`info["role"] == "user"`).

The episode ends (terminated) when the customer's reply carries a stop token (`###STOP###`, `###TRANSFER###`,
`###OUT-OF-SCOPE###`), scored by reward.py: the product over the task's reward basis of DB (whole-state hash
against the gold actions replayed on a fresh copy) and COMMUNICATE, times POLICY unless `reward_mode="tau2"`.
It ends with score 0 after `max_errors` errors (failed calls and malformed actions, cumulative as in
tau2-bench); the turn cap is the registered `max_episode_steps` (truncated, score 0).

A task dict (JSON) holds: `db` (how to build the initial database: a generator seed and size, or a named
source), `scenario` (user_sim.py), `actions` (gold tool calls `{"name", "arguments", "request"}`: the
request index they serve, -1 for authentication), `communicate` (phrases the agent must say), `reward_basis`,
`requests` (per request of the scenario: `done` = "state" | "told" | "refused" | "transfer", how the customer
sees it done) and `oracle` (the actions of a policy-following agent, replayed by `oracle_action`).

A domain subclass provides `tools` (its tool module: TOOLS, WRITE_TOOLS, call, owner, private_values),
`policy` (the policy document), `build_database(task)`, `authenticates(...)` and `generate(rng)`.
"""

from __future__ import annotations

import re
from typing import ClassVar

from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.core.grammar import ParsedAction
from magic_envs.core.tasks import fingerprint
from magic_envs.core.tools import Tool, format_tool_responses
from magic_envs.procedures.database import ToolError, db_hash, fresh_copy
from magic_envs.procedures.reward import PolicyMonitor, communicated, gold_database
from magic_envs.procedures.user_sim import GREETING, ModelUser, Progress, ScriptedUser, ends_conversation

REWARD_MODES = ("magic", "tau2")
_GOLD_CACHE: dict[tuple, tuple[str, list[dict]]] = {}  # (env, domain, quirks, task id) -> (gold hash, targets)
_VALUES: dict[str, dict] = {}  # shared database name -> the PolicyMonitor.values of its customers
USERS = ("scripted", "model")
TRANSFER_TOOL = "transfer_to_human_agents"
_REFUSAL = re.compile(r"\b(cannot|can't|can not|unable|not able|not possible|not allowed|not eligible|"
                      r"not permitted|won't be able|am afraid|i'm sorry|unfortunately)\b", re.I)

AGENT_INSTRUCTIONS = """You are a customer service agent. Help the customer according to the policy below.
In each turn either send one message to the customer or make tool calls, not both. Follow the policy at all
times: authenticate the customer first, get an explicit "yes" before any change, and deny what it does not allow.
The conversation opened with your greeting: "{greeting}"

<policy>
{policy}
</policy>"""


class ServiceEnv(MagicEnv):
    """A policy-following customer-service conversation (see the module docstring)."""

    family = "procedures"
    metric_names = ("db", "communicate", "policy", "violations", "errors", "turns")
    progress_metrics = ("db", "communicate")
    tools: ClassVar = None   # the domain's tool module
    policy: ClassVar[str] = ""

    def __init__(self, split: str = "train", reward_mode: str = "magic", user: str = "scripted",
                 user_model: dict | None = None, max_errors: int = 10, render_mode: str | None = None):
        super().__init__(split, render_mode)
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        if user not in USERS:
            raise ValueError(f"user must be one of {USERS}, got {user!r}")
        self.reward_mode, self.user_kind, self.max_errors = reward_mode, user, int(max_errors)
        self.user_model = dict(user_model or {})
        if user == "model":
            self._chat_client()  # fail at make when no server is configured

    # ---- domain hooks ----------------------------------------------------------------------------------
    def build_database(self, task: dict) -> dict:
        raise NotImplementedError

    def authenticates(self, name: str, arguments: dict, result: str, user_messages: list[str]) -> str | None:
        """The user id a successful call authenticates, or None."""
        raise NotImplementedError

    def policy_text(self) -> str:
        return self.policy

    # ---- the conversation ------------------------------------------------------------------------------
    def tool_list(self) -> list[Tool]:
        return list(self.tools.TOOLS)

    def instructions(self) -> str:
        return AGENT_INSTRUCTIONS.format(greeting=GREETING, policy=self.policy_text())

    def setup(self, task: dict) -> str:
        for key in ("db", "scenario", "actions"):
            if key not in task:
                raise ValueError(f"a {self.family} task needs the key {key!r}")
        self.initial_db = self.build_database(task)  # never changed: the live database is a copy
        self.db = fresh_copy(self.initial_db)
        self.requests = list(task.get("requests") or [{"done": "state"}] * len(task["scenario"].get("requests", [])))
        self.gold_hash, self._targets = self._gold(task)
        self.user = self._make_user(task["scenario"])
        first = self.user.first_message()
        values = _VALUES.setdefault(self.shared_database, {}) if self.shared_database else {}
        self.monitor = PolicyMonitor(self.tools.owner, self.tools.private_values, self.authenticates,
                                     frozenset(self.tools.WRITE_TOOLS), values=values)
        self.monitor.customer_said(first)
        self.agent_messages, self.user_messages = [GREETING], [first]
        self._request_start = 1  # index of the first agent message since the current request was made
        self.errors = self.turns = self._oracle_step = 0
        self.transferred = False
        self._work_task = task
        return first

    def transition(self, action: ParsedAction) -> Outcome:
        self.turns += 1
        self._oracle_step += 1
        if action.calls:
            if action.text:
                self.agent_messages.append(action.text)  # tau2-bench keeps it; the customer never sees it
            results = [self._run(call.name, dict(call.arguments)) for call in action.calls]
            if self.errors >= self.max_errors:
                return self._finish(format_tool_responses(results), "tool", abnormal="too many errors")
            return Outcome(format_tool_responses(results), role="tool", metrics=self._live_metrics())
        self.agent_messages.append(action.text)
        self.monitor.agent_said(self.db, action.text, self.user_messages)
        current = getattr(self.user, "current", 0)
        reply = self._user_reply(action.text)
        if getattr(self.user, "current", 0) != current:  # the customer moved on: a new request starts
            self._request_start = len(self.agent_messages)
        self.user_messages.append(reply)
        self.monitor.customer_said(reply)
        if ends_conversation(reply):
            return self._finish(reply, "user")
        return Outcome(reply, role="user", metrics=self._live_metrics())

    def invalid(self, error: str, role: str = "user") -> Outcome:
        outcome = super().invalid(error, role)
        if self.task is None or not hasattr(self, "errors"):
            return outcome
        self.errors += 1
        outcome.metrics = self._live_metrics()
        if self.errors >= self.max_errors:  # ends the episode with score 0, as tau2-bench's TOO_MANY_ERRORS
            outcome.terminated = True
            outcome.error += f"; {self.errors} errors: the conversation is over"
        return outcome

    def oracle_action(self) -> str:
        script = self._work_task.get("oracle") or []
        if self._oracle_step >= len(script):
            return "Is there anything else I can help you with?"
        return script[self._oracle_step]

    @property
    def gold_db(self) -> dict:
        """The gold database (built on demand: scoring needs only its hash)."""
        return gold_database(self.initial_db, self._work_task["actions"], self._call)

    # ---- internals --------------------------------------------------------------------------------------
    def _call(self, db: dict, name: str, arguments: dict) -> str:
        return self.tools.call(db, name, arguments, quirks=self.quirks)

    quirks: ClassVar[bool] = False  # tau2-bench's tool bugs, reproduced only where its data is served
    shared_database = ""  # a name when every episode starts from the same database (caches what derives from it)

    def _run(self, name: str, arguments: dict) -> str:
        self.monitor.before_call(self.db, name, arguments)
        try:
            result = self._call(self.db, name, arguments)
        except ToolError as error:
            self.errors += 1
            self.monitor.after_call(name, arguments, None, self.user_messages)
            return f"Error: {error}"
        self.monitor.after_call(name, arguments, result, self.user_messages)
        if name == TRANSFER_TOOL:
            self.transferred = True
        return result

    def _gold(self, task: dict) -> tuple[str, list[dict]]:
        """The gold database's hash and, per request, every record its gold writes touch (even one changed
        and changed back) with its value once the request is done. Replays the gold actions on two copies in
        lockstep, so a write's effect is a comparison, not a copy of the database; cached per task."""
        key = (type(self).__name__, getattr(self, "domain", ""), self.quirks,
               fingerprint({k: task.get(k) for k in ("db", "actions", "requests")}))
        if key in _GOLD_CACHE:
            return _GOLD_CACHE[key]
        db, before, targets = fresh_copy(self.initial_db), fresh_copy(self.initial_db), []
        for index in range(len(self.requests)):
            touched = set()
            for action in task["actions"]:
                if action.get("request", 0) != index:
                    continue
                arguments = dict(action.get("arguments") or {})
                try:
                    self._call(db, action["name"], arguments)
                except ToolError:
                    continue
                if action["name"] in self.tools.WRITE_TOOLS:
                    touched |= {(table, k) for table, records in db.items() if isinstance(records, dict)
                                for k, record in records.items() if before[table].get(k) != record}
                    self._call(before, action["name"], arguments)
            targets.append({(table, k): fresh_copy(db[table][k]) for table, k in touched})
        for action in task["actions"]:  # actions of no request (or a later one) still shape the gold state
            if not 0 <= action.get("request", 0) < len(self.requests):
                try:
                    self._call(db, action["name"], dict(action.get("arguments") or {}))
                except ToolError:
                    pass
        if len(_GOLD_CACHE) >= 1024:
            _GOLD_CACHE.pop(next(iter(_GOLD_CACHE)))
        _GOLD_CACHE[key] = (db_hash(db), targets)
        return _GOLD_CACHE[key]

    def _request_done(self) -> bool:
        index = getattr(self.user, "current", 0)
        if index >= len(self.requests):
            return False
        done = self.requests[index].get("done", "state")
        if done == "transfer":
            return self.transferred
        if done == "refused":
            return bool(_REFUSAL.search(self.agent_messages[-1]))
        if done == "told":
            return communicated(self.requests[index].get("communicate", []), self._since_request())
        # "state": the records the request's gold writes change hold their gold values, and anything the
        # request must be told has been said (a request whose gold writes all fail needs only the latter).
        return all(self.db.get(table, {}).get(key) == record for (table, key), record in self._targets[index].items()) \
            and communicated(self.requests[index].get("communicate", []), self._since_request())

    def _since_request(self) -> list[str]:
        """The agent's messages since the current request was made (what answers it)."""
        return self.agent_messages[self._request_start:]

    def _user_reply(self, text: str) -> str:
        try:
            return self.user.reply(text, Progress(request_done=self._request_done(), transferred=self.transferred))
        except RuntimeError as error:  # a model user's server failed: end the conversation, reported as such
            self.user_failure = str(error)
            return f"(the user simulator failed: {error}) ###STOP###"

    def _make_user(self, scenario: dict):
        self.user_failure = ""
        if self.user_kind == "scripted":
            return ScriptedUser(scenario)
        return ModelUser(scenario, self._chat_client().complete)

    def _chat_client(self):
        from magic_envs.core.openai_chat import ChatClient

        return ChatClient.from_settings(prefix="MAGIC_USER", **self.user_model)

    def _live_metrics(self) -> dict[str, float]:
        return {"errors": self.errors, "turns": self.turns, "violations": len(self.monitor.violations)}

    def _finish(self, observation: str, role: str, abnormal: str = "") -> Outcome:
        task = self._work_task
        parts = {"DB": db_hash(self.db) == self.gold_hash,
                 "COMMUNICATE": communicated(task.get("communicate") or [], self.agent_messages),
                 "POLICY": not self.monitor.violations}
        basis = list(task.get("reward_basis") or ["DB", "COMMUNICATE"])
        if self.reward_mode == "magic" and "POLICY" not in basis:
            basis.append("POLICY")
        score = 0.0 if abnormal or self.user_failure else float(all(parts[name] for name in basis))
        error = abnormal or (f"user simulator failed: {self.user_failure}" if self.user_failure else "")
        metrics = {"db": parts["DB"], "communicate": parts["COMMUNICATE"], "policy": parts["POLICY"],
                   **self._live_metrics()}
        return Outcome(observation, role=role, terminated=True, score=score, success=score == 1.0,
                       error=error, metrics=metrics)

    def violations(self) -> list[str]:
        """The policy violations seen so far in this episode."""
        return list(self.monitor.violations)
