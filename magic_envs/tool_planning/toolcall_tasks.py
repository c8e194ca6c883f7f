"""Writing ToolCall-v0 tasks: which functions to offer, which calls a request asks for, and the BFCL gold.

Every task is drawn from one np.random.Generator and the universe's own samplers and phrasings
(`universe.sample_call`, `render_request(s)`); this module only decides the shape of a BFCL category and
keeps it unambiguous:

* every gold call states at least one value, so "call it with empty arguments" is never right by luck;
* the calls of one function in a parallel task are told apart by BFCL's own checker (no call written for
  one gold call passes another), so BFCL's greedy order-free matching cannot pair them wrongly;
* an irrelevance request asks for a function that is not offered, and no offered function could take the
  values it states (`could_serve`): same-domain neighbours like get_hourly_forecast for a forecast request
  are never offered, so no call is the only right answer.
"""

from __future__ import annotations

import numpy as np

from magic_envs.tool_planning.ast_check import check_calls
from magic_envs.tool_planning.universe import ApiFunction, Universe
from magic_envs.tool_planning.universe import requests as _requests

CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance")
# BFCL's categories, irrelevance a minority: a policy that never calls would otherwise earn a large reward.
MIX = {"simple": 0.3, "multiple": 0.25, "parallel": 0.15, "parallel_multiple": 0.15, "irrelevance": 0.15}
_TRIES = 30


def span(value, name: str, lo: int, hi: int) -> tuple[int, int]:
    """A size knob given as an int or a [min, max] pair, checked against [lo, hi]."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else value
    if not isinstance(pair, (list, tuple)) or len(pair) != 2 or \
            not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in pair) or pair[0] > pair[1]:
        raise ValueError(f"{name} must be an int or a [min, max] pair of ints, got {value!r}")
    if pair[0] < lo or pair[1] > hi:
        raise ValueError(f"{name} must lie within [{lo}, {hi}], got {value!r}")
    return int(pair[0]), int(pair[1])


def _n(rng, pair: tuple[int, int]) -> int:
    return int(rng.integers(pair[0], pair[1] + 1))


def _types(fn: ApiFunction, names) -> set[str]:
    """Entity types of some parameters ("array:city" for a list of cities)."""
    out = set()
    for p in names:
        spec = fn.params[p]
        out.add(f"array:{spec['items']['type']}" if spec["type"] == "array" else spec["type"])
    return out


def could_serve(f: ApiFunction, asked: ApiFunction) -> bool:
    """Whether `f` could take every essential value of a request for `asked` (kept out of irrelevance
    offers; deliberately generous: a tool that merely accepts a city "could serve" a city weather request)."""
    return _types(asked, asked.required) <= _types(f, f.params)


def draw_call(u: Universe, fn: ApiFunction, rng, vocab: str, optional_rate: float) -> _requests.SampledCall:
    """One call of `fn`: each optional parameter stated with probability `optional_rate` (at least one when
    the function has no required parameter), the rest drawn by the universe to agree with it."""
    stated = [p for p in fn.optional if rng.random() < optional_rate]
    if not fn.required and not stated and fn.optional:
        stated = [fn.optional[int(rng.integers(len(fn.optional)))]]
    if not stated:
        return u.sample_call(fn.name, rng, vocab=vocab)
    context = dict(u.sample_call(fn.name, rng, vocab=vocab).arguments)  # for values drawn relative to others
    pinned = {}
    for p in fn.params:
        if p in stated:
            spec = fn.params[p]
            for _ in range(_TRIES):  # stating an optional value equal to its default changes nothing
                value = _requests.draw(spec, rng, vocab, context, fn.params)
                if value != spec.get("default"):
                    break
            context[p] = pinned[p] = value
    return u.sample_call(fn.name, rng, vocab=vocab, fixed=pinned)


def resolve(acceptable):
    """The first acceptable value as a concrete argument (gold dicts hold lists of acceptable values)."""
    if isinstance(acceptable, dict):
        return {k: resolve(v[0]) for k, v in acceptable.items() if isinstance(v, list) and v and v[0] != ""}
    if isinstance(acceptable, list) and acceptable and all(isinstance(a, dict) for a in acceptable):
        return [resolve(a) for a in acceptable]
    return acceptable


def oracle_calls(gold: list[dict]) -> list[tuple[str, dict]]:
    """The gold calls with the first acceptable value of each parameter; omittable ("" first) left out."""
    calls = []
    for entry in gold:
        name, params = next(iter(entry.items()))
        calls.append((name, {p: resolve(v[0]) for p, v in params.items() if v and v[0] != ""}))
    return calls


class Writer:
    """Draws tasks of one split: its functions and its value vocabulary."""

    def __init__(self, u: Universe, split: str, distractors: tuple[int, int], parallel_calls: tuple[int, int],
                 optional_rate: float):
        self.u, self.vocab = u, "ood" if split.startswith("ood") else "iid"
        self.pool = sorted(fn.name for fn in u.functions_for(split))
        self.with_required = [n for n in self.pool if u.functions[n].required]  # values that can vary
        self.distractors, self.parallel_calls, self.optional_rate = distractors, parallel_calls, optional_rate

    def task(self, rng, category: str) -> dict:
        if category == "irrelevance":
            return self._irrelevance(rng)
        for _ in range(_TRIES):  # a function with few distinct calls (lock_door) cannot fill 8 parallel ones
            calls = self._gold_calls(rng, category)
            if calls:
                break
        else:
            raise RuntimeError(f"could not draw {category} calls of distinct values")
        used = list(dict.fromkeys(name for name, _ in calls))
        offered = used + (self._near(rng, used[0], _n(rng, self.distractors), exclude=used)[1:]
                          if category in ("multiple", "parallel_multiple") else [])
        return self._finish(rng, category, calls, offered, [{name: c.gold} for name, c in calls])

    def _gold_calls(self, rng, category: str) -> list | None:
        if category in ("simple", "multiple"):
            return [self._call(rng, self._pick(rng, self.pool))]
        k = _n(rng, self.parallel_calls)
        if category == "parallel":
            return self._calls(rng, [self._pick(rng, self.with_required)] * k)
        names = self._near(rng, self._pick(rng, self.with_required), _n(rng, (2, k)) - 1, self.with_required)
        names += [names[int(rng.integers(len(names)))] for _ in range(k - len(names))]
        return self._calls(rng, [names[i] for i in rng.permutation(len(names))])

    # ---- categories -----------------------------------------------------------------------------------------
    def _irrelevance(self, rng) -> dict:
        for _ in range(_TRIES):
            asked = self.u.functions[self._pick(rng, self.with_required)]
            fits = [n for n in self.pool if n != asked.name and not could_serve(self.u.functions[n], asked)]
            if fits:
                break
        else:
            raise RuntimeError("no function of this split can make an irrelevance task")
        offered = self._near(rng, asked.name, max(1, _n(rng, self.distractors)), fits, exclude=[asked.name])[1:]
        task = self._finish(rng, "irrelevance", [(asked.name, self._call(rng, asked.name)[1])], offered, [])
        task["asked"] = asked.name  # for the record: the function that would have been needed
        return task

    def _finish(self, rng, category, calls, offered, gold) -> dict:
        request = [(name, c.surfaces) for name, c in calls]
        question = self.u.render_requests(request, rng) if len(request) > 1 else \
            self.u.render_request(request[0][0], request[0][1], rng)
        return {"category": category, "question": question,
                "functions": [offered[i] for i in rng.permutation(len(offered))],
                "world_seed": int(rng.integers(2**31)), "gold": gold}

    # ---- calls ----------------------------------------------------------------------------------------------
    def _call(self, rng, name: str):
        return name, draw_call(self.u, self.u.functions[name], rng, self.vocab, self.optional_rate)

    def _calls(self, rng, names: list[str]) -> list | None:
        """Calls of `names` in order, each redrawn until no call of a function could pass another of its gold
        calls (None when a function has too few distinct calls)."""
        calls = []
        for name in names:
            schema = [self.u.functions[name].schema()]
            for _ in range(_TRIES):
                name, call = self._call(rng, name)
                mine = oracle_calls([{name: call.gold}])
                if not any(n == name and (check_calls(mine, [{n: c.gold}], schema).valid or
                                          check_calls(oracle_calls([{n: c.gold}]), [{name: call.gold}], schema).valid)
                           for n, c in calls):
                    break
            else:
                return None
            calls.append((name, call))
        return calls

    # ---- choosing functions -------------------------------------------------------------------------------
    @staticmethod
    def _pick(rng, names: list[str]) -> str:
        return names[int(rng.integers(len(names)))]

    def _near(self, rng, first: str, n: int, among=None, exclude=()) -> list[str]:
        """`first` and up to `n` more functions from `among`, same domain as `first` before any other."""
        among = self.pool if among is None else among
        skip = set(exclude) | {first}
        domain = self.u.functions[first].domain
        same = [x for x in among if x not in skip and self.u.functions[x].domain == domain]
        other = [x for x in among if x not in skip and self.u.functions[x].domain != domain]
        ranked = [same[i] for i in rng.permutation(len(same))] + [other[i] for i in rng.permutation(len(other))]
        return [first] + ranked[:n]


