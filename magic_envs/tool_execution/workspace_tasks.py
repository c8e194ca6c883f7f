"""Workspace tasks: composing sub-goals into a request within a horizon, checking pinned tasks, scoring answers.

A task dict (JSON) holds `world_seed` (the initial world is `build_world(world_seed)` plus `plants`, records
the sub-goals added), `request` (the user's message), `subgoals` ([{goal, text, steps: [a, b]}]: each one's
part of the plan), `plan` (the gold steps, `workspace_plan`), `facts` (what the final answer must state),
`tools` (the offered function names), `noise` and `fault_seed` (transient failures), and `free` (the record
fields the comparison ignores).

`compose` draws sub-goals by weight until the plan's length reaches a target drawn within the horizon, keeping
the `final` sub-goals (which depend on everything before them, such as a balance) and the one question last.
The plan is built against a scratch world by the real tools, then replayed on the initial world, and the task is
kept only when both runs end in the same world (sub-goals must not interfere).
"""

from __future__ import annotations

import random
import re

from magic_envs.tool_execution import workspace_goals_money, workspace_goals_office, workspace_goals_team  # noqa: F401
from magic_envs.tool_execution.workspace_plan import GOALS, Draft, first_name, initial_world, replay, weekday
from magic_envs.tool_execution.workspace_state import FREE_FIELDS, fresh
from magic_envs.tool_execution.workspace_tools import BASE_APPS, OOD_APPS, registry, tools_of
from magic_envs.tool_execution.workspace_world import build_world

HORIZONS = {"short": (15, 25), "medium": (25, 35), "long": (35, 50)}
LIMITS = (5, 50)  # the widest horizon a [min, max] pair may ask for
TASK_KEYS = ("world_seed", "plants", "request", "subgoals", "plan", "facts", "tools", "noise", "fault_seed", "free")
FACT_KINDS = ("amount", "count", "text")


def compose(seed: int, ood: bool, horizon: tuple[int, int], noise: float, distractors: tuple[int, int]):
    """(task, initial world, gold run), or None when this seed gives no task that fits the horizon."""
    r = random.Random(f"workspace-task-{seed}")
    world = build_world(seed)
    initial = fresh(world)
    lo, hi = horizon
    target = r.randint(lo, hi)
    question = _pick(r, "question", ood) if r.random() < 0.75 else None
    final = GOALS["sweep_to_savings"] if r.random() < 0.3 else None
    reserve = (question is not None) + 2 * (final is not None)
    d = Draft(world, r, hi - reserve)
    subgoals, facts = [], []

    def attempt(goal) -> bool:
        start, plants = len(d.steps), len(d.plants)
        out = goal.build(d)
        if out is None:
            assert len(d.steps) == start and len(d.plants) == plants, f"{goal.name} refused after acting"
            return False
        made = len(d.steps) - start
        assert made == d.reserved, f"{goal.name} reserved {d.reserved} calls and made {made}"
        subgoals.append({"goal": goal.name, "text": out["text"], "steps": [start, len(d.steps)]})
        facts.extend(out.get("facts", []))
        return True

    if ood:  # every ood task needs the unseen apps in a task sub-goal of its own
        pool = [g for g in GOALS.values() if g.ood and g.kind == "task"]
        r.shuffle(pool)
        if not any(attempt(g) for g in pool):
            return None
    for _ in range(80):
        if len(d.steps) >= target - reserve:
            break
        goal = _pick(r, "task", ood)
        if goal.repeat or all(s["goal"] != goal.name for s in subgoals):
            attempt(goal)
    d.limit = hi
    for goal in (final, question):
        if goal is not None and not attempt(goal) and goal.kind == "question":
            attempt(GOALS["balance_question"])
    if not lo <= len(d.steps) <= hi:
        return None
    needed = sorted({s["name"] for s in d.steps})
    pool = sorted(set(tools_of(BASE_APPS + (OOD_APPS if ood else ()))) - set(needed))
    extra = r.sample(pool, min(r.randint(*distractors), len(pool)))
    texts = [s["text"] for s in subgoals]
    task = {"world_seed": seed, "plants": d.plants, "request": request(world, texts, bool(facts)),
            "subgoals": subgoals, "plan": d.steps, "facts": facts, "tools": sorted(needed + extra),
            "noise": noise, "fault_seed": r.randrange(2**32), "free": list(FREE_FIELDS)}
    for collection, key, record in d.plants:
        initial[collection][key] = fresh(record)
    gold = replay(initial, d.steps, [tuple(s["steps"]) for s in subgoals])
    world["journal"] = []
    if gold.world != world:  # the same calls in the same order: even ids and times must agree
        return None  # a later sub-goal's planted records changed what an earlier one does
    return task, initial, gold


def _pick(r: random.Random, kind: str, ood: bool):
    goals = [g for g in GOALS.values() if g.kind == kind and (ood or not g.ood)]
    return r.choices(goals, weights=[g.weight for g in goals])[0]


def request(world: dict, texts: list[str], asks: bool) -> str:
    """The user's message: the date, the numbered sub-goals in order (the question last) and what to report."""
    items = [f"{i}. {t}" for i, t in enumerate(texts, 1)]
    if asks:
        items[-1] = f"{len(items)}. Finally, tell me: {texts[-1]}"
    report = "a short report that answers my question" if asks else "a short report"
    return (f"Hi, it's {first_name(world)}. Today is {weekday(world['today'])}. Please take care of these for me, in "
            "this order:\n\n" + "\n".join(items) + f"\n\nWhen everything is done, reply with {report}.")


# ---- pinned tasks -------------------------------------------------------------------------------------------
def check_task(task: dict) -> None:
    """Raise ValueError unless `task` has the shape of a Workspace task (its plan is checked when replayed)."""
    missing = [k for k in TASK_KEYS if k not in task]
    if missing:
        raise ValueError(f"a Workspace task needs the keys {list(TASK_KEYS)}; missing {missing}")
    tools = registry()
    ints = (task["world_seed"], task["fault_seed"])
    if any(isinstance(v, bool) or not isinstance(v, int) for v in ints) or not isinstance(task["request"], str):
        raise ValueError("world_seed and fault_seed must be integers and request a string")
    if isinstance(task["noise"], bool) or not isinstance(task["noise"], (int, float)) or not 0 <= task["noise"] <= 0.5:
        raise ValueError(f"noise must be a number in [0, 0.5], got {task['noise']!r}")
    if not isinstance(task["tools"], list) or any(t not in tools for t in task["tools"]):
        raise ValueError("tools must list known function names")
    plan = task["plan"]
    if not isinstance(plan, list) or any(not isinstance(s, dict) or s.get("name") not in task["tools"]
                                         or not isinstance(s.get("arguments"), dict) for s in plan):
        raise ValueError("every plan step needs the name of an offered tool and an arguments object")
    start = 0
    for sub in task["subgoals"] if isinstance(task["subgoals"], list) else [None]:
        steps = sub.get("steps") if isinstance(sub, dict) else None
        if not (isinstance(steps, list) and len(steps) == 2 and steps[0] == start and isinstance(steps[1], int)
                and steps[1] >= start):
            raise ValueError("subgoals must cover the plan with consecutive [start, end] step ranges")
        start = steps[1]
    if start != len(plan):
        raise ValueError("subgoals must cover the plan with consecutive [start, end] step ranges")
    if not isinstance(task["facts"], list) or any(not isinstance(f, dict) or f.get("kind") not in FACT_KINDS
                                                  for f in task["facts"]):
        raise ValueError(f"facts must be objects of a kind in {FACT_KINDS}")
    if not isinstance(task["free"], list) or not all(isinstance(f, str) for f in task["free"]):
        raise ValueError("free must list field names")
    if not isinstance(task["plants"], list) or any(not (isinstance(p, list) and len(p) == 3 and isinstance(p[2], dict))
                                                   for p in task["plants"]):
        raise ValueError("plants must be [collection, key, record] triples")


def rebuild(task: dict):
    """(initial world, gold run) of a checked task; ValueError when its plan does not replay."""
    initial = initial_world(build_world, task["world_seed"], task["plants"])
    try:
        return initial, replay(initial, task["plan"], [tuple(s["steps"]) for s in task["subgoals"]],
                               frozenset(task["free"]))
    except (KeyError, TypeError, IndexError) as error:
        raise ValueError(f"the task's plan does not replay: {error!r}") from None


# ---- answers ------------------------------------------------------------------------------------------------
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def stated(answer: str, fact: dict) -> bool:
    """Whether the final answer states a fact: an amount (any number in it, thousands commas allowed, equal to the
    cent), a count (the number, in digits or as a word up to ten), or a text (case-insensitive)."""
    if fact["kind"] == "text":
        return fact["value"].lower() in answer.lower()
    numbers = [n.replace(",", "") for n in _NUMBER.findall(answer)]
    if fact["kind"] == "amount":
        return any(abs(float(n) * 100 - fact["value"]) < 0.5 for n in numbers)
    words = set(re.findall(r"[a-z]+", answer.lower()))
    return str(fact["value"]) in numbers or (fact["value"] < len(_WORDS) and _WORDS[fact["value"]] in words)


def say(fact: dict) -> str:
    """How the oracle states a fact."""
    return f"{fact['value'] / 100:.2f} EUR" if fact["kind"] == "amount" else str(fact["value"])
