"""The one generic simulator: reads a function's declared behaviour and answers any call, purely.

`call` never raises: a malformed call (unknown function, wrong types, missing or unexpected arguments) and a
schema-valid call the world cannot serve (unknown id, a date in the wrong format, check-out before
check-in) both come back as {"error": "<sentence>"}. Business outcomes that are not errors (a declined
transfer, a sold-out flight) are ordinary fields such as "status".
"""

from __future__ import annotations

import operator

from magic_envs.tool_planning.universe.etypes import ETYPES, BadValue
from magic_envs.tool_planning.universe.hashing import canonical
from magic_envs.tool_planning.universe.ids import created_id
from magic_envs.tool_planning.universe.kinds import GETS, SEARCHES
from magic_envs.tool_planning.universe.model import ApiFunction, is_optional
from magic_envs.tool_planning.universe.ops import COMPUTE, evaluate

# The argument under which a getter expects a referenced record's id.
ID_KEY = {"flight": "flight_id", "hotel": "hotel_id", "restaurant": "restaurant_id", "place": "place_id",
          "doctor": "doctor_id", "product": "product_id", "order": "order_id", "account": "account_id",
          "event": "event_id", "contact": "contact_id", "message": "message_id", "file": "path",
          "device": "device_id", "recipe": "recipe_id", "track": "track_id", "movie": "movie_id"}
MAX_ITEMS = 10  # a search without a limit parameter (or `limit: None`) returns its first 10 matches and `count`
_JSON_TYPES = {"string": str, "boolean": bool, "array": list, "object": dict}
_FILTERS = {"<=": lambda v, p: v is not None and v <= p, ">=": lambda v, p: v is not None and v >= p,
            "==": lambda v, p: v == p, "in": lambda v, p: v in p, "true": lambda v, p: bool(v) or not p,
            "has_all": lambda v, p: set(p) <= set(v or ()), "contains": lambda v, p: str(p).lower() in str(v).lower()}


def call(fn: ApiFunction | None, name, arguments, world) -> dict | list:
    """The result of calling `fn` (None when `name` is not a function) in world `world`."""
    try:
        if fn is None:
            return {"error": f"unknown function {str(name)[:80]!r}"}
        if not isinstance(arguments, dict):
            return {"error": "arguments must be a JSON object"}
        try:  # any integer, numpy's included; not a bool or a float
            world = operator.index(world) if not isinstance(world, bool) else None
        except TypeError:
            world = None
        if world is None:
            return {"error": "world_seed must be an integer"}
        return run(fn, check_args(fn.params, arguments), world)
    except BadValue as e:
        return {"error": str(e)}
    except Exception as e:  # a bug must not crash an episode; tests assert this never happens on valid calls
        return {"error": f"the service could not process this request ({type(e).__name__})"}


def check_args(params: dict, given: dict, prefix: str = "") -> dict:
    """Type-check and canonicalise arguments against parameter specs; fill defaults. Raises BadValue."""
    unknown = [k for k in given if k not in params]
    if unknown:
        raise BadValue(f"unexpected argument {prefix + str(unknown[0])[:60]!r}")
    out = {}
    for name, spec in params.items():
        if name in given:
            out[name] = check_value(spec, given[name], prefix + name)
        elif not is_optional(spec):
            raise BadValue(f"missing required argument {prefix + name!r}")
        elif spec.get("default") is not None:
            out[name] = spec["default"]
    return out


def check_value(spec: dict, value, where: str):
    kind = spec["type"]
    if kind == "array":
        if not isinstance(value, list):
            raise BadValue(f"argument {where!r} must be an array")
        if len(value) < spec.get("min_items", 0) or len(value) > 100:
            raise BadValue(f"argument {where!r} must hold {spec.get('min_items', 0)} to 100 items")
        return [check_value(spec["items"], v, f"{where}[{i}]") for i, v in enumerate(value)]
    if kind == "object":
        if not isinstance(value, dict):
            raise BadValue(f"argument {where!r} must be an object")
        return check_args(spec["props"], value, f"{where}.")
    json = "string" if kind == "enum" else ETYPES[kind].json
    if json in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) > 1e15:
            raise BadValue(f"argument {where!r} must be a {json}")
        if json == "integer":
            if value != int(value):
                raise BadValue(f"argument {where!r} must be an integer")
            value = int(value)
        if value < spec.get("min", -1e15) or value > spec.get("max", 1e15):
            lo, hi = spec.get("min", "-inf"), spec.get("max", "inf")
            raise BadValue(f"argument {where!r} must lie between {lo} and {hi}")
        return value
    if not isinstance(value, _JSON_TYPES[json]):
        raise BadValue(f"argument {where!r} must be a {json}")
    if kind == "enum":
        match = [e for e in spec["enum"] if e.lower() == value.strip().lower()]
        if not match:
            raise BadValue(f"argument {where!r} must be one of {', '.join(spec['enum'])}")
        return match[0]
    if json == "string" and len(value) > 5000:
        raise BadValue(f"argument {where!r} is too long")
    return ETYPES[kind].canon(value)


def run(fn: ApiFunction, args: dict, world: int):
    b = fn.behaviour
    kargs = dict(args)
    for kind_arg, param in b.get("bind", {}).items():
        if param in args:
            kargs[kind_arg] = args[param]
    refs = {}
    for p, k in b.get("refs", {}).items():  # referenced ids must exist; their records feed `fill`
        if p in args:
            get = GETS[k]
            refs[p] = ([get(world, {**kargs, ID_KEY[k]: v}) for v in args[p]] if isinstance(args[p], list)
                       else get(world, {**kargs, ID_KEY[k]: args[p]}))
    if "search" in b:
        items = [r for r in SEARCHES[b["search"]](world, kargs) if _keep(b.get("filters", {}), r, args)]
        items = _sort(items, b.get("sort"), args)
        limit = args.get(b["limit"]) if isinstance(b.get("limit"), str) else b.get("limit", MAX_ITEMS)
        record = {b["list"]: items[:limit] if limit is not None else items, "count": len(items)}
    elif "compute" in b:
        try:
            record = COMPUTE[b["compute"]](world, kargs)
        except (OverflowError, ZeroDivisionError, ValueError) as e:  # BadValue is a ValueError: keep its text
            raise e if isinstance(e, BadValue) else BadValue("the numbers are outside what this tool can compute")
    elif "record" in b:
        record = GETS[b["record"]](world, kargs)
    else:
        record = {}
    env = {"args": args, "refs": refs, "record": record}
    out = {}
    for name, spec in fn.returns.items():
        if name in b.get("fill", {}):
            env["new"] = lambda t=spec: created_id(t, world, fn.name, canonical(args))
            value = evaluate(b["fill"][name], env)
        elif name in args and name not in (b.get("list"), "count"):
            value = args[name]
        elif name in record:
            value = record[name]
        else:
            value = next(r[name] for r in refs.values() if name in r)
        out[name] = _project(spec, value, args)
    return out


def _keep(filters: dict, record: dict, args: dict) -> bool:
    return all(_FILTERS[op](record.get(attr), args[p]) for p, (attr, op) in filters.items() if p in args)


def _sort(items: list, sort, args: dict) -> list:
    if isinstance(sort, dict):
        sort = sort["keys"].get(args.get(sort["param"]))
    if not sort:
        return items
    key, desc = sort.lstrip("-"), sort.startswith("-")
    known = [r for r in items if r.get(key) is not None]
    return sorted(known, key=lambda r: r[key], reverse=desc) + [r for r in items if r.get(key) is None]


def _project(spec, value, args: dict):
    """Shape a value as its return spec says: pick declared keys, convert temperatures and distances."""
    if isinstance(spec, list) and spec and isinstance(spec[0], dict):
        return [_project(spec[0], v, args) for v in value]
    if isinstance(spec, dict):
        return {k: _project(s, value.get(k), args) for k, s in spec.items()}
    if value is None:
        return None
    if isinstance(value, (list, dict)):  # world records are cached: hand out copies, never the originals
        return type(value)(value)
    if spec == "temperature" and args.get("units") == "fahrenheit":
        return round(value * 9 / 5 + 32, 1)
    if spec == "distance_km" and args.get("unit") == "miles":
        return round(value / 1.609344, 1)
    return value
