"""A task as an ALFWorld PDDL problem, written as ALFWorld's `initial_state.pddl` files are: typed objects,
receptacles and locations, the same predicates for their places and properties, ALFWorld's goals.

Names are mangled as ALFWorld mangles ALFRED ids ('Apple|+01.20|...' -> 'Apple_bar__plus_01_dot_20...'), so
the engine names things as ALFWorld does ("apple 1", "sinkbasin 1"), and the goal is ALFWorld's own goal PDDL
for the task type (`goal_library`), filled in with the target types.
"""

from __future__ import annotations

from magic_envs.alfworld import assets, scenes

_MANGLE = (("|", "_bar_"), ("-", "_minus_"), ("+", "_plus_"), (".", "_dot_"), (",", "_comma_"))
AGENT = "agent1"


def mangle(entity_id: str) -> str:
    for char, word in _MANGLE:
        entity_id = entity_id.replace(char, word)
    return entity_id


def goal(task_type: str, obj: str, recep: str = "", toggle: str = "") -> str:
    """ALFWorld's goal PDDL for a task type, closing the problem's `define` as its library entries do."""
    text = assets.goal_library()[task_type]["pddl"].replace("#", "-")
    return text.format(obj=obj, recep=recep, toggle=toggle, mrecep="")


def problem(task: dict) -> str:
    """The PDDL problem of a generated task (see `generator.generate` for the task dict)."""
    c = assets.constants()
    room = scenes.room(task["floor_plan"])
    locations = scenes.location_ids(room)
    placed = [(oid, scenes.receptacle_type(oid), rid) for oid, rid in task["objects"]]
    start = "loc|{}|{}|{}|{}".format(*task["start"])
    object_kinds = sorted({kind for _, kind, _ in placed})
    receptacle_kinds = sorted(room.by_type)

    declared = [f"{AGENT} - agent"]
    declared += [f"{kind}Type - otype" for kind in object_kinds]
    declared += [f"{kind}Type - rtype" for kind in receptacle_kinds]
    declared += [f"{mangle(oid)} - object" for oid, _, _ in placed]
    declared += [f"{mangle(rid)} - receptacle" for rid, _, _ in room.receptacles]
    declared += [f"{mangle(loc)} - location" for loc in sorted({*locations.values(), start})]

    facts = [f"(atLocation {AGENT} {mangle(start)})"]
    for rid, kind, _ in room.receptacles:
        r = mangle(rid)
        facts.append(f"(receptacleType {r} {kind}Type)")
        facts.append(f"(receptacleAtLocation {r} {mangle(locations[rid])})")
        if kind in c.OPENABLE_CLASS_SET:
            facts.append(f"(openable {r})")
    for kind in receptacle_kinds:
        fits = c.VAL_RECEPTACLE_OBJECTS.get(kind, ())
        facts += [f"(canContain {kind}Type {o}Type)" for o in object_kinds if o in fits]
    properties = {"cleanable": "Cleanable", "heatable": "Heatable", "coolable": "Coolable",
                  "toggleable": "Toggleable", "sliceable": "Sliceable"}
    for oid, kind, rid in placed:
        o = mangle(oid)
        facts.append(f"(objectType {o} {kind}Type)")
        facts.append(f"(inReceptacle {o} {mangle(rid)})")
        facts.append(f"(objectAtLocation {o} {mangle(locations[rid])})")
        if kind in scenes.pickable_kinds():
            facts.append(f"(pickupable {o})")
        if kind in c.MOVABLE_RECEPTACLES:
            facts.append(f"(isReceptacleObject {o})")
        facts += [f"({name} {o})" for name, group in properties.items() if kind in c.VAL_ACTION_OBJECTS[group]]

    name = f"plan_magic_{task['floor_plan']}_{task['task_type']}"
    return (f"(define (problem {name})\n(:domain alfred)\n(:objects\n        " + "\n        ".join(declared)
            + "\n        )\n(:init\n        " + "\n        ".join(facts) + "\n        )\n"
            + goal(task["task_type"], task["object"], task.get("receptacle", ""), task.get("toggle", "")))
