"""Loading an ALFWorld game for the engine: its translation, its grammar, its names and command templates.

Each piece is cached by content, so every engine that plays a game shares one translation (a few tenths of a
second for a room) and one parsed grammar (a tenth of a second).
"""

from __future__ import annotations

import functools
import json
import re
import sys
import threading
from collections import Counter
from dataclasses import dataclass

# One engine call at a time per process: fast-downward's translator keeps globals and swaps sys.stdout and
# sys.argv, and TextWorld's grammar parses with one shared TatSu parser, which breaks when two threads use it.
# Threads keep an event loop free; processes run engines in parallel.
ENGINE_LOCK = threading.RLock()


@dataclass(frozen=True)
class Compiled:
    """One translation of a game: the SAS task, its objects' types and initial facts, action parameters."""

    sas: bytes
    name2type: dict
    types: tuple  # (name, supertype names), as the translator lists them
    facts: tuple
    parameters: dict


def translate(domain: str, problem: str, optimize: bool = False):
    """fast-downward's translation (task, SAS text), under the engine lock and with sys.argv restored (the
    translator rewrites it for its option parser)."""
    import fast_downward

    with ENGINE_LOCK:
        argv = sys.argv
        try:
            return fast_downward.pddl2sas(domain, problem, optimize=optimize)
        finally:
            sys.argv = argv


@functools.lru_cache(maxsize=32)
def compile_game(domain: str, problem: str) -> Compiled:
    from textworld.logic import Proposition, Variable

    task, sas = translate(domain, problem)
    name2type = {o.name: o.type_name for o in task.objects}
    facts = []
    for atom in task.init:  # static facts and initial values, as PddlState reads them
        if getattr(atom, "predicate", "=") != "=" and hasattr(atom, "args"):
            facts.append(Proposition(atom.predicate, [Variable(a, name2type[a]) for a in atom.args]))
    parameters = {a.name: tuple((p.name.strip("?"), p.type_name) for p in a.parameters) for a in task.actions}
    types = tuple((t.name, tuple(t.supertype_names)) for t in task.types)
    return Compiled(sas.encode(), name2type, types, tuple(facts), parameters)


@functools.lru_cache(maxsize=128)
def command_cache(domain: str, problem: str, grammar: str) -> dict[tuple, str]:
    """(action, the arguments its template names) -> command text, shared by every engine playing one game."""
    return {}


PLAIN_TEMPLATE = re.compile(r"[a-z ]*(\{[a-z]\w*\}[a-z ]*)*")


@functools.lru_cache(maxsize=256)
def mentioned_parameters(template: str, params: tuple) -> tuple[int, ...]:
    """Which parameters a command template can depend on: those it names (all, if it calls grammar rules).
    "go to [{r.name | receptacleatlocation(r:receptacle, lend:location)}]" does not name where one comes from,
    so one text serves every goto to that receptacle."""
    if "#" in template:
        return tuple(range(len(params)))
    return tuple(i for i, (name, _) in enumerate(params) if re.search(rf"\b{re.escape(name)}\b", template))


@functools.lru_cache(maxsize=256)
def literal_prefix(template: str) -> str:
    """The text every command of a template starts with ("take " for "take {o} from {r}")."""
    return re.split(r"[{\[#]", template, maxsplit=1)[0]


_TASK_RULE = re.compile(r'Your task is to: (.*?)\."')


@functools.lru_cache(maxsize=8)
def _parsed_logic(grammar: str):
    from textworld.envs.pddl.logic import GameLogic

    return GameLogic(domain="", grammar=grammar)


def game_logic(grammar: str):
    """TextWorld's GameLogic for a grammar. ALFWorld's grammars differ only in the task description, so the
    package's grammar is parsed once and the "task" rule swapped in (parsing a whole grammar takes ~0.1 s)."""
    from textworld.envs.pddl.textgen import ContextSensitiveGrammar

    from magic_envs.alfworld import assets

    found = _TASK_RULE.search(grammar)
    base = assets.grammar()
    goal = found.group(1) if found else ""
    # Swapping is exact when the grammar is the package's with a plain goal; a goal holding JSON escapes or
    # quotes (a human annotation, say) is read by the full parse, as TextWorld reads it.
    if not found or "\\" in goal or '"' in goal or grammar != base.replace("UNKNOWN GOAL", goal):
        return _parsed_logic(grammar)
    logic = _parsed_logic(base)
    task_rule = ContextSensitiveGrammar.parse(json.dumps({"task": [{"rhs": f"Your task is to: {goal}."}]}))
    swapped = ContextSensitiveGrammar()
    swapped._rules.update(logic.grammar._rules)
    swapped._rules["task"] = task_rule._rules["task"]
    copy = object.__new__(type(logic))
    copy.__dict__.update(logic.__dict__, grammar=swapped)
    return copy


def alfworld_names(ids) -> dict[str, str]:
    """Entity id -> the name ALFWorld shows: the type before the first "_bar_" ("basin" kept for sink and
    bathtub basins) and a number per type, given in reverse order of the sorted ids ("apple 2", "apple 1");
    ids without "_bar_" (types, the agent) keep their id and an empty number, as AlfredDemangler names them."""
    ids = sorted(ids)
    kind = {i: i.split("_bar_", 1)[0] + ("basin" if "basin" in i else "") for i in ids if "_bar_" in i}
    left = Counter(kind.values())
    names = {}
    for i in ids:
        if i in kind:
            names[i] = f"{kind[i]} {left[kind[i]]}"
            left[kind[i]] -= 1
        else:
            names[i] = f"{i} "
    return names
