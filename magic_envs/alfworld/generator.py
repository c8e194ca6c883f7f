"""Offline ALFWorld problems: a real ALFRED room, plausible contents, one of ALFWorld's six goals.

A task is drawn from one numpy Generator only: the task type, a floor plan of a room type where ALFRED poses
that type (`GOALS_VALID`), the target object and receptacle, the room's contents (every pickable object type
of the floor plan, 1-3 instances each, each in a receptacle ALFRED allows for it), where the agent stands, and
one of ALFWorld's goal-description templates. The target never starts where the goal wants it, so no task is
solved at reset; whether it can be solved at all is the planner's call (`ALFWorldEnv.generate`).

Splits draw from disjoint pools:
* train / test: ALFRED's 96 training floor plans, the four `TRAIN_TYPES`, no object of an `OOD_OBJECTS` type
  anywhere (test is told from train by the task fingerprint).
* ood: ALFRED's 24 test floor plans (never seen in train), the same four task types, and the target is always
  of an `OOD_OBJECTS` type (never present in a train room).
* ood_task_type: the training floor plans and objects, but only the two `HELD_OUT_TYPES`, whose skills
  compose what train teaches (heating works like cooling and cleaning; two objects is pick-and-place twice).
"""

from __future__ import annotations

import re

import numpy as np

from magic_envs.alfworld import assets, scenes

TASK_TYPES = ("pick_and_place_simple", "look_at_obj_in_light", "pick_clean_then_place_in_recep",
              "pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep", "pick_two_obj_and_place")
HELD_OUT_TYPES = ("pick_heat_then_place_in_recep", "pick_two_obj_and_place")
TRAIN_TYPES = tuple(t for t in TASK_TYPES if t not in HELD_OUT_TYPES)
# One or two per room type, covering every task type a room allows: potato (heat, cool, clean) and spatula in
# kitchens, remote control in living rooms, CD in bedrooms, soap bar (clean) in bathrooms.
OOD_OBJECTS = frozenset({"Potato", "Spatula", "RemoteControl", "CD", "SoapBar"})
SPLITS = ("train", "test", "ood", "ood_task_type")
# The appliance a state-change goal uses, and the property its target needs (ALFRED's VAL_ACTION_OBJECTS).
TOOLS = {"pick_clean_then_place_in_recep": ("SinkBasin", "Cleanable"),
         "pick_heat_then_place_in_recep": ("Microwave", "Heatable"),
         "pick_cool_then_place_in_recep": ("Fridge", "Coolable")}
LAMPS = ("DeskLamp", "FloorLamp")


def split_types(split: str) -> tuple[str, ...]:
    return HELD_OUT_TYPES if split == "ood_task_type" else TRAIN_TYPES


def floor_plans(split: str) -> tuple[int, ...]:
    c = assets.constants()
    return tuple(sorted(c.TEST_SCENE_NUMBERS if split == "ood" else c.TRAIN_SCENE_NUMBERS))


def draw(rng: np.random.Generator, split: str, task_types: tuple[str, ...]) -> dict:
    """One task dict (not yet proven solvable). Raises RuntimeError if no room fits (a generator bug)."""
    task_type = task_types[int(rng.integers(len(task_types)))]
    valid = assets.constants().GOALS_VALID[task_type]
    plans = [n for n in floor_plans(split) if scenes.room(n).kind in valid]
    for _ in range(200):  # some rooms lack what a type needs (a lamp, a fridge, an ood object): try another
        task = _in_room(rng, scenes.room(plans[int(rng.integers(len(plans)))]), task_type, split)
        if task is not None:
            return task
    raise RuntimeError(f"no ALFRED room fits a {split!r} task of types {task_types}")


def _pick(rng: np.random.Generator, options):
    options = sorted(options)
    return options[int(rng.integers(len(options)))] if options else None


def _in_room(rng: np.random.Generator, room: scenes.Room, task_type: str, split: str) -> dict | None:
    c = assets.constants()
    kinds = {k for k in room.object_types & scenes.pickable_kinds() if room.holders(k)}
    if split != "ood":
        kinds -= OOD_OBJECTS
    targets = kinds & OOD_OBJECTS if split == "ood" else kinds
    tool, prop = TOOLS.get(task_type, ("", ""))
    if tool:
        targets = {k for k in targets if k in c.VAL_ACTION_OBJECTS[prop]} if tool in room.by_type else set()
    toggle = ""
    if task_type == "look_at_obj_in_light":
        toggle = _pick(rng, [lamp for lamp in LAMPS if lamp in room.object_types and room.lamp_stands(lamp)])
        if toggle is None:
            return None
    obj = _pick(rng, targets)
    if obj is None:
        return None
    recep = ""
    if task_type != "look_at_obj_in_light":
        # The goal's receptacle type: it can hold the object, is not the appliance itself, and the object
        # has somewhere else to start from.
        fits = [k for k in room.by_type if k != tool and obj in c.VAL_RECEPTACLE_OBJECTS.get(k, ())
                and any(scenes.receptacle_type(r) != k for r in room.holders(obj))]
        recep = _pick(rng, fits)
        if recep is None:
            return None
    objects = _contents(rng, room, sorted(kinds), obj, recep, 2 if task_type == "pick_two_obj_and_place" else 1)
    for lamp in LAMPS:
        if lamp in room.object_types and room.lamp_stands(lamp):
            objects.append(_placed(rng, lamp, _pick(rng, room.lamp_stands(lamp)), objects))
    templates = assets.goal_library()[task_type]["templates"]
    goal = templates[int(rng.integers(len(templates)))].format(obj=obj.lower(), recep=recep.lower(),
                                                               toggle=toggle.lower())
    return {"floor_plan": room.number, "task_type": task_type, "object": obj, "receptacle": recep,
            "toggle": toggle, "goal": goal, "start": _start(rng, room), "objects": objects}


def _contents(rng, room, kinds, target, recep, least) -> list[list[str]]:
    """Every pickable type of the room, 1-3 instances each (ALFRED's own cap), in receptacles that fit;
    the target's instances never in a receptacle of the goal's type."""
    objects: list[list[str]] = []
    for kind in kinds:
        holders = room.holders(kind)
        if kind == target:
            holders = tuple(r for r in holders if scenes.receptacle_type(r) != recep)
        count = int(rng.choice([1, 1, 1, 2, 2, 3]))
        for _ in range(max(count, least if kind == target else 1)):
            objects.append(_placed(rng, kind, holders[int(rng.integers(len(holders)))], objects))
    return objects


def _placed(rng, kind: str, receptacle: str, taken: list[list[str]]) -> list[str]:
    """[object id, receptacle id]: an ALFRED-style id a little above and around the receptacle's."""
    x, y, z = scenes.coordinates(receptacle)
    used = {oid for oid, _ in taken}
    while True:
        oid = scenes.format_id(kind, x + rng.uniform(-0.4, 0.4), y + rng.uniform(0.0, 0.3), z + rng.uniform(-0.4, 0.4))
        if oid not in used:
            return [oid, receptacle]


def _start(rng, room: scenes.Room) -> list[int]:
    """Where the agent stands: a reachable floor point that is no receptacle's location."""
    taken = set(scenes.location_ids(room).values())
    while True:
        x, z = room.floor[int(rng.integers(len(room.floor)))]
        start = [round(x / 0.25), round(z / 0.25), int(rng.integers(4)), 30]
        if "loc|{}|{}|{}|{}".format(*start) not in taken:
            return start


_OBJECT_ID = re.compile(r"[A-Za-z]+(\|[+-]?\d{1,3}\.\d{2}){3}")
_TASK_KEYS = {"floor_plan", "task_type", "object", "receptacle", "toggle", "goal", "start", "objects"}


def check(task: dict) -> None:
    """Raise ValueError unless `task` is a well-formed generated task (pinned tasks come from anywhere)."""
    if set(task) != _TASK_KEYS:
        raise ValueError(f"a generated ALFWorld task has exactly the keys {sorted(_TASK_KEYS)}; got {sorted(task)}")
    number = task["floor_plan"]
    if not isinstance(number, int) or isinstance(number, bool) or not scenes.room_type(number):
        raise ValueError(f"floor_plan must be an ALFRED floor plan number, got {number!r}")
    room = scenes.room(number)
    if task["task_type"] not in TASK_TYPES:
        raise ValueError(f"task_type must be one of {TASK_TYPES}, got {task['task_type']!r}")
    goal = task["goal"]
    # The goal text goes into the grammar's JSON and its symbols ('#', '{', '[' ...) as the task description.
    if not isinstance(goal, str) or not goal or not set(goal) <= set("abcdefghijklmnopqrstuvwxyz0123456789 ,'"):
        raise ValueError(f"goal must be lowercase words, got {goal!r}")
    look = task["task_type"] == "look_at_obj_in_light"
    if task["object"] not in scenes.pickable_kinds() or task["toggle"] not in ((*LAMPS,) if look else ("",)):
        raise ValueError(f"bad target object {task['object']!r} or lamp {task['toggle']!r}")
    if (task["receptacle"] != "") if look else (task["receptacle"] not in room.by_type):
        raise ValueError(f"receptacle {task['receptacle']!r} is not a receptacle type of floor plan {number}")
    start = task["start"]
    if not (isinstance(start, list) and len(start) == 4 and all(isinstance(v, int) for v in start)):
        raise ValueError(f"start must be [x, z, rotation, horizon] grid integers, got {start!r}")
    receptacles = {rid for rid, _, _ in room.receptacles}
    objects = task["objects"]
    if not isinstance(objects, list) or not objects:
        raise ValueError("objects must be a non-empty list of [object id, receptacle id]")
    for pair in objects:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
                and pair[1] in receptacles and _OBJECT_ID.fullmatch(pair[0])
                and scenes.receptacle_type(pair[0]) in scenes.pickable_kinds() | set(LAMPS)):
            raise ValueError(f"bad object placement {pair!r} for floor plan {number}")
    if len({oid for oid, _ in objects}) != len(objects):
        raise ValueError("object ids must be distinct")
