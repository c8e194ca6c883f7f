"""Writing tasks: draw realistic arguments for a function, state them in a request, and give the gold.

`sample_call` draws canonical arguments from an np.random.Generator (honouring `after`, `differs` and
`from_city` hints so that, e.g., check-out follows check-in), the BFCL possible-answer gold ({param:
[acceptable values]}, "" marking an optional parameter that may be left out, plus its default), and the
surface form of each value as the request writes it ("March 3, 2025", "2.5 km", "15%", "paris").
`render_request` phrases one call from a function's templates; `join_requests` strings several together
(parallel and parallel_multiple tasks). Every surface reads back (`read_surface`) to a gold value.
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import lru_cache
from typing import NamedTuple

from magic_envs.tool_planning.universe import words
from magic_envs.tool_planning.universe.etypes import ETYPES, pick
from magic_envs.tool_planning.universe.measures import enum_surface
from magic_envs.tool_planning.universe.model import ApiFunction, is_optional
from magic_envs.tool_planning.universe.pools import CITY_BY_KEY
from magic_envs.tool_planning.universe.world_things import contacts


@lru_cache(maxsize=1)
def _contact_first_names() -> dict:
    known = {c["name"].split()[0] for c in contacts()}
    return {v: tuple(n for n in words.FIRST_NAMES[v] if n in known) for v in ("iid", "ood")}


NAMED_POOLS = {"contact_first_names": _contact_first_names}
JOINERS = ("{a} Also, {b}", "{a} Then {b}", "{a} After that, {b}", "{a} And {b}")


class SampledCall(NamedTuple):
    arguments: dict  # canonical values, as a perfect agent passes them
    gold: dict       # BFCL possible answer: param -> acceptable values
    surfaces: dict   # param -> how the request states the value


def sample_call(fn: ApiFunction, rng, with_optional: bool = False, vocab: str = "iid",
                fixed: dict | None = None) -> SampledCall:
    """Draw a call; `fixed` pins some top-level arguments (e.g. a value an earlier call produced) and the
    others are drawn to agree with them (a check-out after a pinned check-in, an origin unlike a pinned
    destination)."""
    fixed = dict(fixed or {})
    chosen = [p for p in fn.optional if with_optional and rng.random() < 0.5]
    if with_optional and fn.optional and not chosen:
        chosen = [pick(rng, fn.optional)]
    for name, spec in fn.params.items():  # an `after` pair touching a pinned value is stated in full, so
        other = spec.get("after")          # that a default on the other side cannot contradict it
        if other and (other in fixed or name in fixed):
            chosen += [other, name]
    args = dict(fixed)
    for name, spec in fn.params.items():
        if name in args or not (name in fn.required or name in chosen):
            continue
        later = [q for q, s in fn.params.items() if s.get("after") == name and q in fixed]
        if later:
            args[name] = _before(fn.params[later[0]], rng, fixed[later[0]])
        else:
            avoid = [args[q] for q, s in fn.params.items() if s.get("differs") == name and q in args]
            args[name] = _draw_param(spec, rng, vocab, args, fn.params, optional=name in fn.optional, avoid=avoid)
    args = {name: args[name] for name in fn.params if name in args}
    gold = {name: acceptable_for(spec, args.get(name, _MISSING)) for name, spec in fn.params.items()}
    surfaces = {name: surface(fn.params[name], value, rng) for name, value in args.items()}
    return SampledCall(args, gold, surfaces)


_MISSING = object()


def acceptable_for(spec: dict, value) -> list:
    """The gold list of one parameter: its value's acceptable forms, "" when it may be omitted."""
    default = spec.get("default")
    if value is _MISSING:
        return [""] + ([default] if default is not None else [])
    return acceptable(spec, value) + ([""] if is_optional(spec) and value == default else [])


def acceptable(spec: dict, value) -> list:
    if spec["type"] == "object":
        entry = {k: acceptable_for(sub, value.get(k, _MISSING)) for k, sub in spec["props"].items()}
        return [entry]
    if spec["type"] == "array" and spec["items"]["type"] == "object":
        return [[acceptable(spec["items"], item)[0] for item in value]]
    return [value]


def _draw_param(spec, rng, vocab, args, params, optional=False, avoid=()):
    value = draw(spec, rng, vocab, args, params)
    for _ in range(30):  # an optional value equal to its default would be a request that changes nothing
        if value not in avoid and not (optional and value == spec.get("default")):
            break
        value = draw(spec, rng, vocab, args, params)
    return value


def draw(spec: dict, rng, vocab: str, args: dict, params: dict):
    """One canonical value for a parameter spec, consistent with the arguments drawn before it."""
    kind = spec["type"]
    if kind == "array":
        lo, hi = spec.get("n_items", (1, 3))
        n, items = int(rng.integers(lo, hi + 1)), []
        for _ in range(50):
            if len(items) == n:
                break
            item = draw(spec["items"], rng, vocab, args, params)
            if item not in items:
                items.append(item)
        return items
    if kind == "object":
        out: dict = {}
        for k, sub in spec["props"].items():
            if not is_optional(sub):
                out[k] = draw(sub, rng, vocab, out, spec["props"])
        return out
    if "from_city" in spec:
        return CITY_BY_KEY[args[spec["from_city"]].lower()]["country"]
    if "after" in spec:
        return _after(spec, rng, args.get(spec["after"], params[spec["after"]].get("default")))
    if kind == "enum":
        value = pick(rng, spec["enum"])
    elif kind == "boolean":
        value = bool(rng.random() < 0.5)
    else:
        pool = spec.get("pool")
        if isinstance(pool, str):
            spec = dict(spec, pool=NAMED_POOLS[pool]())
        value = ETYPES[kind].sample(rng, vocab, spec)
    other = args.get(spec.get("differs", ""), _MISSING)
    for _ in range(50):
        if value != other:
            break
        value = draw(dict(spec, differs=""), rng, vocab, args, params)
    return value


def _after(spec: dict, rng, base: str) -> str:
    if spec["type"] == "date":
        gap = 1 + int(rng.integers(spec.get("max_gap", 7)))
        return (date.fromisoformat(base) + timedelta(days=gap)).isoformat()
    minutes = min(int(base[:2]) * 60 + int(base[3:]) + 15 * int(rng.integers(4, 33)), 23 * 60 + 45)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _before(spec: dict, rng, later: str) -> str:
    if spec["type"] == "date":
        gap = 1 + int(rng.integers(spec.get("max_gap", 7)))
        return (date.fromisoformat(later) - timedelta(days=gap)).isoformat()
    minutes = max(int(later[:2]) * 60 + int(later[3:]) - 15 * int(rng.integers(4, 33)), 0)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def surface(spec: dict, value, rng) -> str:
    """How a request states `value`."""
    kind = spec["type"]
    if kind == "array":
        return join_words([surface(spec["items"], v, rng) for v in value])
    if kind == "object":
        return spec["say"].format(**{k: surface(spec["props"][k], v, rng) for k, v in value.items()})
    if kind == "enum":
        return enum_surface(value, spec)
    if kind == "boolean":
        return spec["say"][value]
    if kind == "text":
        return f'"{value}"' if spec.get("quote", True) else str(value)
    return ETYPES[kind].surface(value, rng)


def read_surface(spec: dict, text: str):
    """The canonical value a scalar surface stands for (the inverse of `surface`)."""
    kind = spec["type"]
    if kind == "enum":
        return next(v for v in spec["enum"] if enum_surface(v, spec) == text)
    if kind == "boolean":
        return next(v for v, said in spec["say"].items() if said == text)
    if kind == "text":
        return text[1:-1] if spec.get("quote", True) else text
    return ETYPES[kind].read(text)


def join_words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def render_request(fn: ApiFunction, surfaces: dict, rng) -> str:
    """One natural-language request for a call whose values read as `surfaces`."""
    text = pick(rng, fn.say).format(**{p: surfaces[p] for p in fn.required})
    extras = [pick(rng, fn.opt[p]).format(**{p: surfaces[p]}) for p in fn.optional if p in surfaces]
    if extras:
        clause = join_words(extras)
        text = f"{text[:-1]} {clause}{text[-1]}" if text[-1] in ".?!" else f"{text} {clause}"
    return text


def join_requests(texts: list[str], rng) -> str:
    """Several requests in one message (parallel or parallel_multiple calls)."""
    if len(texts) > 2 and rng.random() < 0.5:
        return "Please do the following:\n" + "\n".join(f"{i}. {t}" for i, t in enumerate(texts, 1))
    out = texts[0]
    for t in texts[1:]:
        keep = t.split(" ", 1)[0] in ("I", "I'm", "I'd", "I've")  # only the pronoun keeps its capital
        out = pick(rng, JOINERS).format(a=out, b=t if keep else t[0].lower() + t[1:])
    return out
