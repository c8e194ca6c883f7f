"""Gold plans: how sub-goal builders write them, how they replay, and what each sub-goal must leave behind.

A plan is a list of steps `{"name", "arguments", "fails"?}`. An argument may be `{"$ref": [i, [key, ...]]}`: a
value from the result of step i (the id a call created, which differs from episode to episode), so a plan
stays right however many things were created before. A step with `"fails": true` is a call the tool refuses
on the way (writing into a folder that is not there yet): the oracle makes it too, showing the recovery.

Sub-goal builders (`workspace_goals_*`) write plans against a scratch world through `Draft`: `fits` reserves
calls within the horizon, `plant` adds a record the task needs to the initial world, `run` executes a step on
the scratch world at once (a step that does not behave as the builder says is a generator bug and raises), so
every value a builder states comes from the real tools.

`replay` runs a task's plan on its initial world: the gold world, and per sub-goal its `Targets`, the records
its steps touched with their final gold content (records created by it: their content only). A sub-goal is
achieved while every target holds; balances are left out of targets (payments and transfers are checked
through their transaction records), so one sub-goal's payment does not hide another's progress.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Callable

from magic_envs.tool_execution.workspace_state import (FREE_FIELDS, WorkspaceError, created_keys, form, form_key,
                                                       fresh, initial_ids)
from magic_envs.tool_execution.workspace_tools import call, fits_schema, registry


def resolve(value, results: list):
    """`value` with every `{"$ref": [i, path]}` replaced by that part of step i's result."""
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            index, path = value["$ref"]
            found = results[index]
            for key in path:
                found = found[key]
            return found
        return {k: resolve(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, results) for v in value]
    return value


def execute(world: dict, step: dict, results: list):
    """Run one plan step; its result (None for a step that is meant to fail). Raises ValueError when the step
    does not behave as the plan says, which makes a pinned task invalid."""
    arguments = resolve(step["arguments"], results)
    tool = registry()[step["name"]].tool
    if not fits_schema(tool.parameters, arguments) and (problem := tool.check(arguments)):
        raise ValueError(f"plan step {step['name']} has invalid arguments: {problem}")
    try:
        result = call(world, step["name"], arguments)
    except WorkspaceError as error:
        if step.get("fails"):
            return None
        raise ValueError(f"plan step {step['name']}({json.dumps(arguments)[:200]}) was refused: {error}") from None
    if step.get("fails"):
        raise ValueError(f"plan step {step['name']} should be refused but succeeded")
    return result


class Draft:
    """What sub-goal builders write through: the scratch world, the RNG, the plan so far and the budget."""

    def __init__(self, world: dict, rng, limit: int, plant_base: int = 800):
        self.world, self.r, self.limit = world, rng, limit
        self.steps: list[dict] = []
        self.results: list = []
        self.plants: list[list] = []
        self.used: set = set()
        self._plant_seq = plant_base
        self.reserved = 0

    def fits(self, calls: int) -> bool:
        """Reserve `calls` steps for the sub-goal being built, if they fit within the horizon's maximum."""
        if len(self.steps) + calls > self.limit:
            return False
        self.reserved = calls
        return True

    def key(self, prefix: str) -> str:
        """A key for a planted record, apart from both the built ones and the ids tools create."""
        self._plant_seq += 1
        return f"{prefix}{self._plant_seq}"

    def plant(self, collection: str, key: str, record: dict) -> None:
        assert key not in self.world[collection], f"planted {collection} record {key} already exists"
        self.world[collection][key] = json.loads(json.dumps(record))
        self.plants.append([collection, key, json.loads(json.dumps(record))])

    def run(self, name: str, arguments: dict, fails: bool = False):
        step = {"name": name, "arguments": arguments} | ({"fails": True} if fails else {})
        self.results.append(execute(self.world, step, self.results))
        self.steps.append(step)
        return self.results[-1]

    def ref(self, index: int, *path) -> dict:
        """A reference to part of a step's result (a negative index counts back from the last step run)."""
        return {"$ref": [index if index >= 0 else len(self.steps) + index, list(path)]}


@dataclass
class Targets:
    """What one sub-goal must leave: records by key (None: must be gone) and created records by content."""

    keyed: dict = field(default_factory=dict)   # (collection, key or None for the cart) -> form
    created: Counter = field(default_factory=Counter)  # (collection, form_key) -> how many


@dataclass
class Gold:
    """A task's gold run: the final world, each sub-goal's targets, and every record the plan touched."""

    world: dict
    targets: list[Targets]
    touched: frozenset


def initial_world(build, seed: int, plants: list) -> dict:
    world = build(seed)
    for collection, key, record in plants:
        world[collection][key] = json.loads(json.dumps(record))
    return world


def replay(initial: dict, plan: list[dict], spans: list[tuple[int, int]],
           free: frozenset = frozenset(FREE_FIELDS)) -> Gold:
    """The gold run of `plan` on `initial`; sub-goal i's steps are plan[a:b] for (a, b) = spans[i]."""
    world, results, touched = fresh(initial), [], []
    for a, b in spans:
        world["journal"] = []
        for step in plan[a:b]:
            results.append(execute(world, step, results))
        touched.append({tuple(t) for t in world["journal"]})
    world["journal"] = []
    created = created_keys(world, initial_ids(initial))
    targets = []
    for records in touched:
        t = Targets()
        for collection, key in sorted(records, key=str):
            if collection == "accounts":
                continue
            if collection == "cart":
                t.keyed[("cart", None)] = form(world["cart"], created, free)
            elif key in created:
                if key in world[collection]:
                    t.created[(collection, form_key(world[collection][key], created, free))] += 1
            else:
                record = world[collection].get(key)
                t.keyed[(collection, key)] = None if record is None else form(record, created, free)
        targets.append(t)
    return Gold(world, targets, frozenset().union(*touched))


class Progress:
    """Which sub-goals' targets hold, kept up to date from the journal of each change: a change costs the
    normalising of the records it touched, not a pass over the world."""

    def __init__(self, world: dict, ids: dict, targets: list[Targets], free: frozenset):
        self.ids, self.targets, self.free = ids, targets, free
        self.created: set[str] = set()
        self.created_forms: dict[tuple, tuple] = {}  # (collection, key) -> (collection, form_key)
        self.forms = {ck: self._form(world, ck) for t in targets for ck in t.keyed}  # what targets look at
        self.reached = self._evaluate()

    def _form(self, world: dict, ck: tuple):
        collection, key = ck
        live = world["cart"] if collection == "cart" else world[collection].get(key)
        return None if live is None else form(live, self.created, self.free)

    def update(self, world: dict, journal: list) -> list[bool]:
        changed = {("cart", None) if c == "cart" else (c, k) for c, k in journal}
        for c, k in changed:
            if c in self.ids and k not in self.ids[c]:
                (self.created.add if k in world[c] else self.created.discard)(k)
        for c, k in changed:
            if c in self.ids and k not in self.ids[c]:
                self.created_forms.pop((c, k), None)
                if k in world[c]:
                    self.created_forms[(c, k)] = (c, form_key(world[c][k], self.created, self.free))
            if (c, k) in self.forms:
                self.forms[(c, k)] = self._form(world, (c, k))
        self.reached = self._evaluate()
        return self.reached

    def _evaluate(self) -> list[bool]:
        have = Counter(self.created_forms.values())
        return [all(self.forms[ck] == f for ck, f in t.keyed.items())
                and all(have[k] >= n for k, n in t.created.items()) for t in self.targets]


# ---- sub-goal builders: registry and helpers ------------------------------------------------------------------
KINDS = ("task", "final", "question")  # a task's sub-goals run in this order; at most one question, last


@dataclass(frozen=True)
class Goal:
    name: str
    build: Callable  # Draft -> {"text": request sentence(s), "facts": answer facts} or None when it does not apply
    kind: str
    ood: bool
    weight: float
    repeat: bool


GOALS: dict[str, Goal] = {}


def goal(kind: str = "task", weight: float = 1.0, repeat: bool = False, ood: bool = False):
    """Register a sub-goal builder. `ood`: it uses the apps only the ood split offers; `repeat`: a task may hold
    it more than once (on other records)."""
    assert kind in KINDS

    def register(fn):
        GOALS[fn.__name__] = Goal(fn.__name__, fn, kind, ood, weight, repeat)
        return fn
    return register


def hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def slug(name: str) -> str:
    """A name as a file or folder name: "Quarry & Co" -> "quarry-co"."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def first_name(world: dict) -> str:
    return world["user"]["name"].split()[0]


def day_after(world: dict, rng, lo: int, hi: int) -> str:
    """A weekday between lo and hi days after today."""
    today = date.fromisoformat(world["today"])
    days = [today + timedelta(days=k) for k in range(lo, hi + 1)]
    return rng.choice([d for d in days if d.weekday() < 5] or days).isoformat()


def weekday(day: str) -> str:
    return f"{date.fromisoformat(day):%A} {day}"


def free_start(world: dict, day: str, minutes: int, lo: int = 9 * 60, hi: int = 17 * 60) -> int | None:
    """The earliest start on the hour or half hour from `lo` at which the calendar is free for `minutes`."""
    taken = [(int(e["start"][:2]) * 60 + int(e["start"][3:]), int(e["end"][:2]) * 60 + int(e["end"][3:]))
             for e in world["events"].values() if e["date"] == day]
    return next((s for s in range(lo, hi - minutes + 1, 30) if all(s >= b or s + minutes <= a for a, b in taken)),
                None)


def planted_time(world: dict, rng) -> str:
    """A time earlier today, before the session starts (planted mail and messages are the newest)."""
    return f"{world['today']} {rng.randrange(7, 9):02d}:{rng.randrange(60):02d}"


def free_slot(world: dict, rng, lo: int, hi: int, minutes: int) -> tuple[str, int] | None:
    """A weekday `lo` to `hi` days ahead, tried in random order, and the earliest free start on it (`free_start`)."""
    today = date.fromisoformat(world["today"])
    days = [(today + timedelta(days=k)).isoformat() for k in range(lo, hi + 1)
            if (today + timedelta(days=k)).weekday() < 5]
    rng.shuffle(days)
    return next(((day, start) for day in days if (start := free_start(world, day, minutes)) is not None), None)
