"""Plans for ALFWorld games with fast-downward, from any state, in milliseconds instead of minutes.

The library's planner is a uniform-cost search (lazy greedy on g), the one ALFWorld's "planner" expert uses.
On a whole room it explores every way of opening cabinets and moving objects cheaper than the plan: we measured
3 s to 53 s on kitchen heat and cool goals. So it runs here on the part of the current state the goal can
depend on, written as a PDDL problem of its own:

* the agent and where it stands;
* every object of a type the goal names (the target, a lamp), and what the agent holds;
* the receptacles holding those objects;
* one receptacle of each type the goal or its appliance needs (the goal's receptacle type; the sink basin,
  microwave or fridge of a clean, heat or cool goal), preferring one at the agent's location, then one that
  needs no opening; and, if the agent holds something the goal does not need, one place to put it down.
  (Should that leave no way to the goal, every receptacle is kept.)

Every fact among these entities is kept and the goal is the game's own. Other objects and receptacles can
neither help nor block a goal in ALFWorld's domain (goto costs the same everywhere, nothing fills up), so the
plan is one of the planner's optimal plans for the room. It is then replayed on the game's own task in the
library (and the state restored) and must reach the goal there: a plan that does not is a bug, not a result.
"""

from __future__ import annotations

import re

from magic_envs.alfworld.loading import translate

# The appliance type each state predicate of a goal needs (the domain's CleanObject, HeatObject, CoolObject).
TOOL_OF = {"isclean": "sinkbasintype", "ishot": "microwavetype", "iscool": "fridgetype"}
_TYPE_REF = re.compile(r"\((objecttype|receptacletype)\s+\?\S+\s+(\S+)\)")


def goal_text(problem: str) -> str:
    """The `(:goal ...)` part of a problem, with the parenthesis that closes its `define`."""
    at = problem.lower().rfind("(:goal")
    if at < 0:
        raise ValueError("the game's PDDL problem has no goal")
    return problem[at:]


def reduced_problem(live, wide: bool = False) -> str:
    """The PDDL problem of what the goal can depend on, in the current state of a game (see the module);
    `wide` keeps every receptacle (for a state where the narrow choice leaves no way to the goal)."""
    facts = list(live.state.facts)
    by_pred: dict[str, list[tuple[str, ...]]] = {}
    for fact in facts:
        by_pred.setdefault(fact.name, []).append(tuple(v.name for v in fact.arguments))
    goal = goal_text(live.game["pddl_problem"])
    refs = _TYPE_REF.findall(goal.lower())
    object_types = {t for kind, t in refs if kind == "objecttype"}
    receptacle_types = {t for kind, t in refs if kind == "receptacletype"}
    receptacle_types |= {tool for pred, tool in TOOL_OF.items() if f"({pred} " in goal.lower()}

    type_of = {args[0]: args[1] for pred in ("objecttype", "receptacletype") for args in by_pred.get(pred, ())}
    location_of = {r: loc for r, loc in by_pred.get("receptacleatlocation", ())}
    holder = {o: r for o, r in by_pred.get("inreceptacle", ())}
    agents = {a: loc for a, loc in by_pred.get("atlocation", ())}
    held = {o for _, o in by_pred.get("holds", ())}
    opened = {args[0] for args in by_pred.get("opened", ())}
    openable = {args[0] for args in by_pred.get("openable", ())}
    here = set(agents.values())
    fits = set(by_pred.get("cancontain", ()))

    def best(candidates):
        """The cheapest receptacle to use: at the agent's location, then one needing no opening, then by id."""
        return min(candidates, key=lambda r: (location_of.get(r) not in here, r in openable and r not in opened, r))

    objects = {o for o, t in type_of.items() if t in object_types and live.compiled.name2type.get(o) == "object"}
    objects |= held
    receptacles = {holder[o] for o in objects if o in holder} | (set(location_of) if wide else set())
    for kind in sorted(receptacle_types):
        instances = [r for r, t in type_of.items() if t == kind and r in location_of]
        if instances:
            receptacles.add(best(instances))
    for o in held - {o for o, t in type_of.items() if t in object_types}:  # set down what the goal does not need
        spots = [r for r in location_of if (type_of.get(r), type_of.get(o)) in fits]
        if spots:
            receptacles.add(best(spots))
    keep = set(agents) | here | objects | receptacles | {location_of[r] for r in receptacles}
    keep |= {name for name, t in live.compiled.name2type.items() if t in ("otype", "rtype")}

    declared = sorted(keep)
    init = sorted("(" + " ".join((fact.name, *(v.name for v in fact.arguments))) + ")" for fact in facts
                  if "@" not in fact.name and all(v.name in keep for v in fact.arguments))
    return ("(define (problem plan_from_here)\n(:domain alfred)\n(:objects\n"
            + "\n".join(f"{name} - {live.compiled.name2type[name]}" for name in declared)
            + "\n)\n(:init\n" + "\n".join(init) + "\n)\n" + goal)


def plan(live) -> list[str] | None:
    """Commands from the current state of `live` (an engine's library state) to the goal; None if none."""
    import fast_downward

    if live.won():
        return []
    for wide in (False, True):
        _, sas = translate(live.game["pddl_domain"], reduced_problem(live, wide), optimize=True)
        if live.lib.solve_sas(sas.encode(), False):
            break
    else:
        return None
    operators = (fast_downward.Operator * live.lib.get_last_plan_length())()
    live.lib.get_last_plan(operators)
    names = [op.name for op in operators]
    if not _reaches_goal(live, names):
        raise RuntimeError(f"the planner's plan {names} does not reach the goal in the game itself")
    return [live.command(name) for name in names]


def _reaches_goal(live, names: list[str]) -> bool:
    """Replay operator names on the game's own task in the library, then restore its state."""
    import fast_downward

    start = live.lib.get_state_id()
    try:
        for name in names:
            count = live.lib.get_applicable_operators_count()
            operators = (fast_downward.Operator * count)()
            live.lib.get_applicable_operators(operators)
            op = next((o for o in operators if o.name == name), None)
            if op is None:
                return False
            live.lib.apply_operator(op.id, None)
        return bool(live.lib.check_goal())
    finally:
        live.lib.set_state_id(start)
