"""Writing ToolPlan-v0 tasks: MagicEval-Tool's four categories over the synthetic API universe.

A task is a scripted dialogue: `turns` of {"request", "gold" (BFCL possible answers, in call order), "facts"
(result values the answer must report)}, plus `links` (which argument came from where: an earlier call's
output or an earlier request's value) and, for condition tasks, the `condition` that picked the branch.
Every gold call is run through the simulator while writing, so dependent values are the real outputs,
no gold call fails, and facts are values the agent will see.

* general: 2-4 independent calls of distinct functions in one request (order-free).
* dependency: a chain of 2-4 calls along the universe's dependency edges; each later call takes an output
  of an earlier one, referred to in brackets ("[the flight id of the first flight in the step 1 results]"),
  never stated. The ood split allows one in-distribution producer at the head of a chain, because the
  ood functions alone hold no chain longer than 3 (every call after the head is an ood function).
* condition: a check call whose result field decides between two stated calls; both branches are drawn
  with equal probability and the gold holds only the branch taken.
* context_inheritance: 2-3 user turns of one call each; every later call reuses a value of an earlier turn
  implicitly: a value the user said ("the same city") or a value a tool returned ("[the first of those
  hotels]"), never restated.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache

from magic_envs.tool_planning.universe import Universe, extract
from magic_envs.tool_planning.universe.etypes import ETYPES

CATEGORIES = ("general", "dependency", "condition", "context_inheritance")
ORDINALS = ("first", "second", "third", "fourth")
_OUT = re.compile(r"^\w+(\[\](\.\w+)?)?$")   # "booking_id", "attendees[]", "flights[].flight_id"
_PARAM = re.compile(r"^\w+(\[\])?$")         # a top-level parameter or a top-level array
_WEAK = {"date", "time", "city", "country"}  # outputs that link by value rather than by identity
_ID_TYPES = {t for t in ETYPES if t.endswith("_id")} | {"file_path"}
_NUMERIC = {"amount", "temperature", "number", "rating", "percent", "distance_km", "fraction", "weight_kg"}
_TEXT = {"text", "person_name", "email_address", "phone_number"}
NOUNS = {"person_name": "person", "email_address": "email address", "phone_number": "phone number",
         "stock_symbol": "stock", "file_path": "file", "directory": "folder"}
OPENERS = ("Thanks. ", "Great, thank you. ", "OK. ", "Perfect. ", "")


class Retry(Exception):
    """This draw cannot make a clean task (a failing call, an empty result, a stated secret): draw again."""


# ---- facts -------------------------------------------------------------------------------------------
@lru_cache(maxsize=2)
def _schema_text(u: Universe) -> str:
    return json.dumps([fn.schema() for fn in u.functions.values()]).lower()


def _fact(u: Universe, fn, args: dict, result: dict, said: str) -> str | None:
    """One key value of a result for the answer to report: a new id, else a non-round number, else a name.

    Dates, times, enums, booleans and round numbers are left out (an answer may rephrase them), as is any
    value the user stated or that the request or a schema's examples hold (copying them must not pass)."""
    fields = [(k, t, result.get(k)) for k, t in fn.returns.items() if isinstance(t, str)]
    for k, spec in fn.returns.items():  # a search: the fields of its first item
        if isinstance(spec, list) and spec and isinstance(spec[0], dict) and result.get(k):
            fields += [(f, t, result[k][0].get(f)) for f, t in spec[0].items() if isinstance(t, str)]
    stated = {str(v) for v in args.values() if not isinstance(v, (list, dict))}
    for tier in (_ID_TYPES, _NUMERIC, _TEXT):
        for _, etype, value in fields:
            text = str(value)
            if etype not in tier or isinstance(value, bool) or value is None or text in stated:
                continue
            if isinstance(value, (int, float)) and (float(value).is_integer() or etype not in _NUMERIC):
                continue
            if len(text) >= 3 and '"' not in text and "\\" not in text and text.lower() not in said.lower() \
                    and text.lower() not in _schema_text(u):
                return text
    return None


# ---- references ---------------------------------------------------------------------------------------
def _words(name: str) -> str:
    return {"from": "sender address", "to": "recipient address"}.get(name, name.replace("_", " "))


def _item(list_name: str) -> str:
    return list_name[:-2] if list_name.endswith(("ches", "shes", "sses")) else list_name.rstrip("s")


def output_ref(path: str, which: str, found: str, source: str) -> str:
    """How a request points at an output: "[the flight id of the first flight in the step 1 results]"."""
    head, _, field = path.partition(".")
    name = head.rstrip("[]")
    if field:
        return f"[the {_words(field)} of the {which} {_item(name)} {found}]"
    if head.endswith("[]"):
        return f"[the {which} of the {_words(name)} {source}]"
    return f"[the {_words(name)} {source}]"


def noun(etype: str) -> str:
    return NOUNS.get(etype, etype[:-3] if etype.endswith("_id") else etype.replace("_", " "))


# ---- the writer ----------------------------------------------------------------------------------------
class Writer:
    """Draws the calls of one task from `rng` in one world; any step may raise Retry to start over."""

    def __init__(self, u: Universe, rng, vocab: str, optional_rate: float):
        self.u, self.rng, self.vocab, self.optional_rate = u, rng, vocab, optional_rate
        self.world = int(rng.integers(2**31 - 1))
        self.pool = [fn.name for fn in u.functions_for(vocab)]

    def pick(self, seq):
        if not seq:
            raise Retry("nothing to choose from")
        return seq[int(self.rng.integers(len(seq)))]

    def draw(self, name: str, fixed: dict | None = None):
        """(SampledCall, result) of one call of `name` in this world; optional parameters at `optional_rate`."""
        s = self.u.sample_call(name, self.rng, bool(self.rng.random() < self.optional_rate), self.vocab, fixed)
        result = self.u.call(name, s.arguments, self.world)
        if "error" in result:
            raise Retry(result["error"])
        return s, result

    def say(self, name: str, surfaces: dict) -> str:
        return self.u.render_request(name, surfaces, self.rng)

    def facts(self, calls, said: str) -> list[str]:
        """One fact per call that has one; a turn without any is redrawn."""
        found = [_fact(self.u, self.u.functions[n], s.arguments, r, said) for n, s, r in calls]
        found = list(dict.fromkeys(f for f in found if f))
        if not found:
            raise Retry("no result value to report")
        return found

    def select(self, result, path: str) -> tuple[object, str]:
        """The output value a later call takes (the first or the last item of a list) and which it is."""
        values = extract(result, path)
        if not values or any(isinstance(v, (list, dict)) for v in values):
            raise Retry(f"nothing usable at {path}")
        if len(values) > 1 and self.rng.random() < 0.4 and values[-1] != values[0]:
            return values[-1], "last"
        return values[0], "first"

    def untold(self, text: str, value, s) -> None:
        """A linked value must come from the conversation's past, never from this request."""
        value = value[0] if isinstance(value, list) else value  # a value fed into a list parameter
        stated = [v for p, v in s.arguments.items() for v in (v if isinstance(v, list) else [v])]
        if str(value).lower() in text.lower() or stated.count(value) > 1:
            raise Retry(f"the request states the linked value {value!r}")


def _fed(param: str, value) -> dict:
    return {param.rstrip("[]"): [value] if param.endswith("[]") else value}


@lru_cache(maxsize=8)
def _edges(u: Universe, vocab: str, iid_heads: bool) -> dict[str, list]:
    """Dependency edges a request can name, by producer; consumers always come from the split's functions,
    producers too unless `iid_heads` lets in-distribution ones feed them (a chain's head in the ood split)."""
    keep = {fn.name for fn in u.functions_for(vocab)}
    out: dict[str, list] = {}
    for e in u.dependency_edges():
        if e.consumer in keep and (e.producer in keep or iid_heads) and e.etype != "currency" \
                and _OUT.match(e.output) and _PARAM.match(e.param):
            out.setdefault(e.producer, []).append(e)
    return out


@lru_cache(maxsize=8)
def _sharing(u: Universe, vocab: str) -> dict[str, list]:
    """Per function: (its parameter, other function, other parameter, entity type) of one entity type."""
    out: dict[str, list] = {}
    for e in u.sharing_edges(vocab):
        if "[]" not in e.a_param + e.b_param and _PARAM.match(e.a_param) and _PARAM.match(e.b_param):
            out.setdefault(e.a, []).append((e.a_param, e.b, e.b_param, e.etype))
            out.setdefault(e.b, []).append((e.b_param, e.a, e.a_param, e.etype))
    return out


# ---- the four categories --------------------------------------------------------------------------------
def general(w: Writer, n: int):
    names = [w.pool[i] for i in w.rng.choice(len(w.pool), size=n, replace=False)]
    drawn = [(name, *w.draw(name)) for name in names]
    text = w.u.render_requests([(name, s.surfaces) for name, s, _ in drawn], w.rng)
    return [{"request": text, "gold": [{name: s.gold} for name, s, _ in drawn],
             "facts": w.facts(drawn, text)}], names


def dependency(w: Writer, n: int):
    out = _edges(w.u, w.vocab, iid_heads=w.vocab == "ood" and n == 4)
    head = w.pick(sorted(out))
    steps, links = [(head, *w.draw(head))], []
    texts = [w.say(head, steps[0][1].surfaces)]
    while len(steps) < n:
        used = {name for name, _, _ in steps}
        options = [(i, e) for i, (name, _, _) in enumerate(steps) for e in out.get(name, ()) if e.consumer not in used]
        last = [o for o in options if o[0] == len(steps) - 1]
        options = last if last and w.rng.random() < 0.8 else options  # mostly a chain, sometimes a tree
        strong = [o for o in options if o[1].etype not in _WEAK]
        i, e = w.pick(strong if strong and w.rng.random() < 0.7 else options)
        value, which = w.select(steps[i][2], e.output)
        s, result = w.draw(e.consumer, _fed(e.param, value))
        param = e.param.rstrip("[]")
        ref = output_ref(e.output, which, f"in the step {i + 1} results", f"from step {i + 1}")
        texts.append(w.say(e.consumer, {**s.surfaces, param: ref}))
        steps.append((e.consumer, s, result))
        links.append({"call": len(steps) - 1, "param": param, "source": [0, i], "output": e.output})
    intro = w.pick(("Please do the following in order:", "I need a few things done, in this order:",
                    "Step by step, please:"))
    text = intro + "\n" + "\n".join(f"{k}. {t}" for k, t in enumerate(texts, 1))
    for link in links:
        s = steps[link["call"]][1]
        w.untold(text, s.arguments[link["param"]], s)
    turn = {"request": text, "gold": [{name: s.gold} for name, s, _ in steps], "facts": w.facts(steps, text),
            "links": links}
    return [turn], [name for name, _, _ in steps]


def condition(w: Writer, _n: int = 0):
    cf = w.pick(w.u.condition_fields(w.vocab))
    s, result = w.draw(cf.function)
    values = extract(result, cf.path)
    if not values or isinstance(values[0], (list, dict)):
        raise Retry("no value to branch on")
    taken = bool(w.rng.random() < 0.5)
    phrase, op, x = _condition(w, cf, values[0], taken)
    domain = w.u.functions[cf.function].domain
    others = [n for n in w.pool if n != cf.function]
    near = [n for n in others if w.u.functions[n].domain == domain]
    a = w.pick(near if len(near) >= 2 and w.rng.random() < 0.7 else others)
    b = w.pick([n for n in (near if len(near) >= 2 and w.rng.random() < 0.7 else others) if n != a])
    (sa, ra), (sb, rb) = w.draw(a), w.draw(b)
    text = f"{w.say(cf.function, s.surfaces)}\nIf {phrase}: {w.say(a, sa.surfaces)}\nOtherwise: {w.say(b, sb.surfaces)}"
    branch = (a, sa, ra) if taken else (b, sb, rb)
    turn = {"request": text, "gold": [{cf.function: s.gold}, {branch[0]: branch[1].gold}],
            "facts": w.facts([(cf.function, s, result), branch], text),
            "condition": {"function": cf.function, "path": cf.path, "op": op, "value": x, "then": a, "else": b}}
    return [turn], [cf.function, a, b]


def holds(op: str, observed, value) -> bool:
    """Whether a condition holds for an observed value (what decides the branch)."""
    return observed > value if op == "above" else observed < value if op == "below" else observed == value


def _condition(w: Writer, cf, v, taken: bool):
    """(phrase, op, value) of a condition on an observed value `v` that holds exactly when `taken`."""
    name = "number of results" if cf.path == "count" else _words(cf.path)
    if cf.kind == "enum":
        x = v if taken else w.pick([e for e in cf.values if e != v])
        return f'the {name} is "{x}"', "is", x
    if cf.kind == "boolean" or isinstance(v, bool):
        x = bool(v) if taken else not v
        return f'"{cf.path}" is {str(x).lower()}', "is", x
    op = w.pick(("above", "below"))
    step = 10 ** math.floor(math.log10(abs(v))) / 2 if abs(v) >= 1 else 0.1
    step = max(1, round(step)) if isinstance(v, int) or step >= 1 else step
    k = int(w.rng.integers(2))
    low = math.floor(v / step) * step - k * step
    low, high = low - step if low >= v else low, math.ceil(v / step) * step + k * step
    high = high + step if high <= v else high
    if v >= 0 and (low < 0 or (op == "below" and low <= 0)) and (op == "above") == taken:
        op = "below" if op == "above" else "above"  # "below 0 results" reads oddly: ask the other way round
    x = low if (op == "above") == taken else high
    x = round(x) if float(round(x, 6)).is_integer() else round(x, 1)
    if holds(op, v, x) != taken:
        raise Retry("no clean threshold")
    return f"the {name} is {op} {x}", op, x


def context_inheritance(w: Writer, n: int):
    sharing = _sharing(w.u, w.vocab)
    out = _edges(w.u, w.vocab, False)
    first = w.pick(w.pool)
    done = [(first, *w.draw(first))]
    turns = [{"request": w.say(first, done[0][1].surfaces)}]
    turns[0]["facts"] = w.facts(done, turns[0]["request"])
    for k in range(1, n):
        used = {name for name, _, _ in done}
        got = [("got", j, e) for j, (name, _, _) in enumerate(done) for e in out.get(name, ())
               if e.consumer not in used]
        said = [("said", j, share) for j, (name, s, _) in enumerate(done) for share in sharing.get(name, ())
                if share[1] not in used and share[0] in s.arguments]
        recent = [c for c in got if c[1] == k - 1]
        kind, j, link = w.pick(recent if recent and w.rng.random() < 0.5 else got + said)
        where = "last" if j == k - 1 else ORDINALS[j]
        if kind == "got":
            value, which = w.select(done[j][2], link.output)
            name, param, fixed = link.consumer, link.param.rstrip("[]"), _fed(link.param, value)
            found = "you found" if j == k - 1 else f"you found for my {where} request"
            ref = output_ref(link.output, which, found, found.replace("found", "got"))
        else:
            a_param, name, param, etype = link
            value, fixed = done[j][1].arguments[a_param], {link[2]: done[j][1].arguments[a_param]}
            told = {s.arguments[p] for n_, s, _ in done for p, spec in w.u.functions[n_].params.items()
                    if spec["type"] == etype and p in s.arguments}
            ref = f"the same {noun(etype)}" if len(told) == 1 else \
                f"the same {noun(etype)} as the {_words(a_param)} in my {where} request"
        s, result = w.draw(name, fixed)
        text = w.pick(OPENERS) + w.say(name, {**s.surfaces, param: ref})
        w.untold(text, value, s)
        done.append((name, s, result))
        source = {"output": link.output} if kind == "got" else {"argument": link[0]}
        turns.append({"request": text, "links": [{"call": 0, "param": param, "source": [j, 0], **source}],
                      "facts": w.facts([done[-1]], " ".join(t["request"] for t in turns) + " " + text)})
    for turn, (name, s, _) in zip(turns, done):
        turn["gold"] = [{name: s.gold}]
    return turns, [name for name, _, _ in done]


BUILDERS = {"general": general, "dependency": dependency, "condition": condition,
            "context_inheritance": context_inheritance}
SIZES = {"general": (2, 4), "dependency": (2, 4), "condition": (2, 2), "context_inheritance": (2, 3)}
# the sizes a builder can write, for a narrower `calls` knob: a general request may ask for a single call
LIMITS = {**SIZES, "general": (1, 4)}


def sizes(category: str, calls: tuple[int, int] | None) -> tuple[int, int]:
    """The task sizes (calls, or turns for context_inheritance) drawn for `category`: its default range, or
    `calls` within what its builder can write."""
    if calls is None:
        return SIZES[category]
    lo, hi = max(calls[0], LIMITS[category][0]), min(calls[1], LIMITS[category][1])
    if lo > hi:
        raise ValueError(f"calls {list(calls)} leave no size that {category} can write (its sizes: "
                         f"{list(LIMITS[category])})")
    return lo, hi


def generate(u: Universe, rng, category: str, vocab: str, distractors: tuple[int, int], optional_rate: float,
             calls: tuple[int, int] | None = None, tries: int = 500) -> dict:
    """One task dict of `category` ("iid" or "ood" functions), drawn from `rng` only."""
    lo, hi = sizes(category, calls)
    size = int(rng.integers(lo, hi + 1))
    n_distractors = int(rng.integers(distractors[0], distractors[1] + 1))
    for _ in range(tries):
        w = Writer(u, rng, vocab, optional_rate)
        try:
            turns, names = BUILDERS[category](w, size)
        except Retry:
            continue
        return {"category": category, "world_seed": w.world, "functions": offer(w, names, n_distractors),
                "turns": turns}
    raise RuntimeError(f"could not write a {category} task of size {size} in {tries} tries")


def offer(w: Writer, gold_names: list[str], n_distractors: int) -> list[str]:
    """The offered functions: those of the task and distractors, about half from the task's own domains."""
    domains = {w.u.functions[n].domain for n in gold_names}
    chosen = list(dict.fromkeys(gold_names))
    near = [n for n in w.pool if n not in chosen and w.u.functions[n].domain in domains]
    far = [n for n in w.pool if n not in chosen and n not in near]
    for _ in range(n_distractors):
        side = near if near and (not far or w.rng.random() < 0.5) else far
        if not side:
            break
        chosen.append(side.pop(int(w.rng.integers(len(side)))))
    return [chosen[i] for i in w.rng.permutation(len(chosen))]
