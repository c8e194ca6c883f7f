"""Typed links between functions, for planning and decomposition tasks.

Paths name places in arguments and results: "city", "flights[].flight_id" (a field of every item of a
list), "shipping_address.city" (a field of an object), "paths[]" (every item of an array). A dependency
edge says an output of one function can feed a parameter of another because both hold the same linkable
entity type; outputs that merely echo an input of the same name are left out (the value came from the
user, not the tool). A sharing edge joins two functions that take a parameter of the same entity type.
"""

from __future__ import annotations

from typing import NamedTuple

from magic_envs.tool_planning.universe.etypes import ETYPES
from magic_envs.tool_planning.universe.model import ApiFunction


class DependencyEdge(NamedTuple):
    producer: str
    output: str     # path in the producer's result
    consumer: str
    param: str      # path in the consumer's arguments
    etype: str


class SharingEdge(NamedTuple):
    a: str
    a_param: str
    b: str
    b_param: str
    etype: str


class ConditionField(NamedTuple):
    function: str
    path: str
    kind: str        # "enum", "boolean" or "numeric"
    values: tuple    # the values an enum or boolean takes; () for numeric


def _linkable(etype) -> bool:
    return isinstance(etype, str) and etype in ETYPES and ETYPES[etype].linkable


def output_fields(fn: ApiFunction) -> list[tuple[str, str]]:
    """(path, entity type) of every typed field of the function's result."""
    out: list[tuple[str, str]] = []

    def walk(spec, path):
        if isinstance(spec, dict):
            for k, v in spec.items():
                walk(v, f"{path}.{k}" if path else k)
        elif isinstance(spec, list) and spec and isinstance(spec[0], dict):
            walk(spec[0], path + "[]")
        elif isinstance(spec, str):
            out.append((path + "[]", spec[6:]) if spec.startswith("array:") else (path, spec))
    walk(fn.returns, "")
    return out


def input_fields(fn: ApiFunction) -> list[tuple[str, str]]:
    """(path, entity type) of every scalar slot of the function's arguments."""
    out: list[tuple[str, str]] = []

    def walk(spec, path):
        if spec["type"] == "array":
            walk(spec["items"], path + "[]")
        elif spec["type"] == "object":
            for k, v in spec["props"].items():
                walk(v, f"{path}.{k}")
        else:
            out.append((path, spec["type"]))
    for name, spec in fn.params.items():
        walk(spec, name)
    return out


def producer_outputs(fn: ApiFunction) -> list[tuple[str, str]]:
    inputs = {(p.split(".")[0].rstrip("[]"), t) for p, t in input_fields(fn)}
    return [(p, t) for p, t in output_fields(fn)
            if _linkable(t) and (p.rsplit(".", 1)[-1].rstrip("[]"), t) not in inputs]


def dependency_edges(functions: dict[str, ApiFunction]) -> list[DependencyEdge]:
    consumers: dict[str, list[tuple[str, str]]] = {}
    for fn in functions.values():
        for path, t in input_fields(fn):
            if _linkable(t):
                consumers.setdefault(t, []).append((fn.name, path))
    return [DependencyEdge(fn.name, out, consumer, param, t)
            for fn in functions.values() for out, t in producer_outputs(fn)
            for consumer, param in consumers.get(t, ()) if consumer != fn.name]


def sharing_edges(functions: dict[str, ApiFunction]) -> list[SharingEdge]:
    slots = [(fn.name, p, t) for fn in functions.values() for p, t in input_fields(fn) if _linkable(t)]
    return [SharingEdge(a, pa, b, pb, t) for i, (a, pa, t) in enumerate(slots) for b, pb, u in slots[i + 1:]
            if t == u and a != b]


def condition_fields(functions: dict[str, ApiFunction]) -> list[ConditionField]:
    out = []
    for fn in functions.values():
        for path in fn.conditions:
            spec = fn.returns[path]
            if isinstance(spec, (list, tuple)):
                out.append(ConditionField(fn.name, path, "enum", tuple(spec)))
            elif spec == "boolean":
                out.append(ConditionField(fn.name, path, "boolean", (True, False)))
            else:
                out.append(ConditionField(fn.name, path, "numeric", ()))
    return out


def extract(result, path: str) -> list:
    """Every value at `path` in a result (a list when the path crosses a list)."""
    values = [result]
    for part in path.split("."):
        name, many = part.rstrip("[]"), part.endswith("[]")
        values = [v.get(name) for v in values if isinstance(v, dict)]
        if many:
            values = [x for v in values if isinstance(v, list) for x in v]
    return [v for v in values if v is not None]


def feed(arguments: dict, path: str, value) -> dict:
    """A copy of `arguments` with `value` placed at a parameter path (the first item of an array)."""
    out = dict(arguments)
    head, _, rest = path.partition(".")
    name = head.rstrip("[]")
    if head.endswith("[]"):
        items = list(out.get(name) or [{}])
        items[0] = feed(items[0], rest, value) if rest else value
        out[name] = items
    else:
        out[name] = feed(dict(out.get(name) or {}), rest, value) if rest else value
    return out
