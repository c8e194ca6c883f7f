"""Workflow plans over the API universe, their execution on the simulator, and the six composition operators.

A `Plan` is a DAG of tool steps. A step states some arguments (drawn by the universe's `sample_call`, with the
surface forms a request writes) and takes the others from earlier results through `Link`s: "the flight id
of the first flight that step 0 found". Its edges are those links plus `order` edges (an order the request
states without passing data: "then", or a condition's branches). `execute` runs every step on the
simulator in a topological order, filling linked arguments from the results; any error is a `Retry`.

The operators, each returning a new Plan (the inputs are never changed) or raising `Retry`:

* **connect(a, b, link)**: chain `b` after `a`. With a `link` (a dependency edge: an output of a node of `a`
  feeds a parameter of `b`'s first node), that parameter becomes a data link and the node is redrawn so its
  other arguments agree with the linked value; without one, every sink of `a` precedes every source of `b`
  (the request says "then").
* **add(a, b)**: `b` joins as an independent branch: no edge between `a` and `b` (parallel structure).
* **group(a, step, links)**: merge parallel nodes of `a` under a common successor: a new step takes one
  output of each of >= 2 nodes (its `links`), so it waits for all of them.
* **mask(a, i)**: hide step `i` from the request. No sentence asks for it; the request of its one consumer
  describes the value it yields ("[the first flight that search flights returns for origin Paris, ...]"),
  so the planner must infer the step. Only a step without inputs of its own that feeds exactly one later
  step, and is no condition check, can be masked.
* **transform(a, i)**: rephrase node `i` from its tool-call form ("Call search_flights with origin Paris,
  ...") into a natural-language subtask ("Find flights from Paris to Rome on 2025-03-03.").
* **split(a, i, param, producer)**: divide step `i` into two dependent substeps: a new step of `producer`
  runs first and `i`'s stated `param` becomes its output ("Book flight FL-1 for Ann" becomes "Find flights
  from Paris to Rome" then "Book the first flight found for Ann").

Plans built this way by `composition.py` become tasks in `generator.py`; texts come from `wording.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

from magic_envs.tool_planning.universe import Universe, extract


class Retry(Exception):
    """This draw cannot make a clean workflow (a failing call, an empty result, a clash): draw again."""


class Link(NamedTuple):
    step: int            # the producing step (in the plan, or in its context plan when `context`)
    output: str          # path in the producer's result: "flights[].flight_id", "booking_id"
    which: str = "first"  # which value when the path crosses a list: "first" or "last"
    context: bool = False  # the producer ran in an earlier turn (context inheritance)


@dataclass(frozen=True)
class Step:
    """One node: a tool call with stated arguments and linked ones."""

    tool: str
    args: dict                                     # stated canonical values (linked parameters excluded)
    surfaces: dict                                 # how the request writes each stated value
    links: dict = field(default_factory=dict)      # parameter ("flight_id", "to[]") -> Link
    inherits: dict = field(default_factory=dict)   # parameter -> [context step, its parameter] (same value)
    role: str = "step"                             # "step", "check", "then" or "else"
    masked: bool = False
    natural: bool = False                          # transformed into a natural-language subtask


@dataclass(frozen=True)
class Plan:
    steps: tuple = ()
    order: frozenset = frozenset()    # (i, j) edges without data: a stated order, a condition's branches
    condition: dict | None = None     # {"check", "path", "op", "value", "then", "else"}
    context: "Plan | None" = None     # the earlier turn's plan (context inheritance)

    def __len__(self) -> int:
        return len(self.steps)

    def edges(self) -> list[tuple[int, int]]:
        data = {(link.step, i) for i, s in enumerate(self.steps) for link in s.links.values() if not link.context}
        return sorted(data | set(self.order))

    def sinks(self) -> list[int]:
        has_out = {i for i, _ in self.edges()}
        return [i for i in range(len(self.steps)) if i not in has_out]

    def sources(self) -> list[int]:
        has_in = {j for _, j in self.edges()}
        return [i for i in range(len(self.steps)) if i not in has_in]


def topological(n: int, edges) -> list[int]:
    """Kahn's order, smallest index first (so a plan built in order keeps its numbering); Retry on a cycle."""
    indegree, out = [0] * n, [[] for _ in range(n)]
    for i, j in edges:
        out[i].append(j)
        indegree[j] += 1
    ready, order = sorted(i for i in range(n) if indegree[i] == 0), []
    while ready:
        i = ready.pop(0)
        order.append(i)
        for j in out[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                ready.append(j)
                ready.sort()
    if len(order) != n:
        raise Retry("the workflow has a cycle")
    return order


def pick_value(result, link: Link):
    values = extract(result, link.output)
    if not values or any(isinstance(v, (list, dict)) for v in values):
        raise Retry(f"nothing usable at {link.output}")
    return values[-1] if link.which == "last" else values[0]


def place(args: dict, param: str, value) -> dict:
    """`args` with a linked value placed at a top-level parameter or as the one item of an array one."""
    return {**args, param.rstrip("[]"): [value] if param.endswith("[]") else value}


def arguments(step: Step, results: list, context_results: list) -> dict:
    args = dict(step.args)
    for param, link in step.links.items():
        args = place(args, param, pick_value((context_results if link.context else results)[link.step], link))
    return args


def execute(u: Universe, plan: Plan, world: int, skip: int | None = None, memo: dict | None = None) -> list:
    """Every step's simulated result, in step order; Retry on any error (the semantic filter's run).

    `skip` leaves out one step and everything after it (None results): the inputs of a step being redrawn.
    `memo` caches calls across runs (the simulator is pure in a world; composing re-runs a plan often)."""
    context = execute(u, plan.context, world, memo=memo) if plan.context is not None else []
    results: list = [None] * len(plan.steps)
    skipped = set() if skip is None else {skip}
    edges = plan.edges()
    for i in topological(len(plan.steps), edges):
        if i in skipped or any(j == i and k in skipped for k, j in edges):
            skipped.add(i)
            continue
        step = plan.steps[i]
        args = arguments(step, results, context)
        key = (step.tool, repr(sorted(args.items()))) if memo is not None else None
        result = memo.get(key) if key else None
        if result is None:
            result = u.call(step.tool, args, world)
            if key:
                memo[key] = result
        if isinstance(result, dict) and "error" in result:
            raise Retry(f"step {i} ({step.tool}): {result['error']}")
        results[i] = result
    return results


class Drawer:
    """Draws steps from `rng` in one world: the source of every random choice while composing."""

    def __init__(self, u: Universe, rng, vocab: str, world: int, optional_rate: float = 0.3):
        self.u, self.rng, self.vocab, self.world, self.optional_rate = u, rng, vocab, world, optional_rate
        self.memo: dict = {}

    def run(self, plan: Plan, skip: int | None = None) -> list:
        """`execute` in this world, with the calls of earlier runs remembered."""
        return execute(self.u, plan, self.world, skip, self.memo)

    def pick(self, seq):
        if not seq:
            raise Retry("nothing to choose from")
        return seq[int(self.rng.integers(len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def step(self, tool: str, fixed: dict | None = None, links: dict | None = None, **kw) -> Step:
        """A step of `tool`; `fixed` pins arguments (linked or inherited values), the others are drawn to
        agree with them; parameters in `links` are left out of the stated ones."""
        s = self.u.sample_call(tool, self.rng, self.chance(self.optional_rate), self.vocab, fixed)
        linked = {p.rstrip("[]") for p in links or ()}
        return Step(tool, {k: v for k, v in s.arguments.items() if k not in linked},
                    {k: v for k, v in s.surfaces.items() if k not in linked}, links=dict(links or {}), **kw)

    def relinked(self, plan: Plan, i: int, links: dict) -> Plan:
        """`plan` with step i taking `links` (param -> Link) too, redrawn so its stated values agree."""
        old = plan.steps[i]
        merged = {**old.links, **links}
        results = self.run(plan, skip=i)
        context = self.run(plan.context) if plan.context is not None else []
        fixed = {p: old.args[p] for p in old.inherits}  # an inherited value stays the earlier turn's
        for param, link in merged.items():
            fixed.update(place({}, param, pick_value((context if link.context else results)[link.step], link)))
        new = self.step(old.tool, fixed, merged, inherits=old.inherits, role=old.role)
        return replace(plan, steps=plan.steps[:i] + (new,) + plan.steps[i + 1:])


# ---- the operators ----------------------------------------------------------------------------------
def _shift(step: Step, k: int) -> Step:
    return replace(step, links={p: (link if link.context else link._replace(step=link.step + k))
                                for p, link in step.links.items()})


def _merge(a: Plan, b: Plan, extra=()) -> Plan:
    if a.condition and b.condition:
        raise Retry("one condition per workflow")
    k = len(a.steps)
    cond = a.condition or (None if b.condition is None else
                           {**b.condition, **{r: (None if b.condition[r] is None else b.condition[r] + k)
                                              for r in ("check", "then", "else")}})
    return Plan(a.steps + tuple(_shift(s, k) for s in b.steps),
                frozenset(a.order | {(i + k, j + k) for i, j in b.order} | set(extra)), cond,
                a.context or b.context)


def add(a: Plan, b: Plan) -> Plan:
    return _merge(a, b)


def connect(d: Drawer, a: Plan, b: Plan, link: tuple[str, Link] | None = None) -> Plan:
    """`link` = (parameter of b's first step, Link to a node of a); None chains by order only."""
    k = len(a.steps)
    if link is None:
        return _merge(a, b, {(i, j + k) for i in a.sinks() for j in b.sources()})
    param, source = link
    if source.context or source.step >= k:
        raise Retry("connect links a node of the first workflow")
    head = b.sources()[0]
    return d.relinked(_merge(a, b), head + k, {param: source})


def group(d: Drawer, a: Plan, tool: str, links: dict) -> Plan:
    """A new step of `tool` whose parameters `links` (param -> Link) come from >= 2 distinct nodes of a."""
    if len({link.step for link in links.values() if not link.context}) < 2:
        raise Retry("group merges at least two nodes")
    fixed = {}
    results = d.run(a)
    for param, link in links.items():
        fixed.update(place({}, param, pick_value(results[link.step], link)))
    return replace(a, steps=a.steps + (d.step(tool, fixed, links),))


def mask(a: Plan, i: int) -> Plan:
    step = a.steps[i]
    consumers = [(j, p) for j, s in enumerate(a.steps) for p, link in s.links.items()
                 if link.step == i and not link.context]
    if step.links or step.inherits or step.role != "step" or len(consumers) != 1 \
            or any(i in edge for edge in a.order):
        raise Retry(f"step {i} cannot be masked")
    return replace(a, steps=a.steps[:i] + (replace(step, masked=True),) + a.steps[i + 1:])


def transform(a: Plan, i: int) -> Plan:
    return replace(a, steps=a.steps[:i] + (replace(a.steps[i], natural=True),) + a.steps[i + 1:])


def split(d: Drawer, a: Plan, i: int, param: str, producer: str, output: str, which: str = "first") -> Plan:
    """Step i's stated `param` becomes the `output` of a new `producer` step that runs before it."""
    name = param.rstrip("[]")
    if name not in a.steps[i].args or param in a.steps[i].links or name in a.steps[i].inherits:
        raise Retry(f"step {i} does not state {param}")
    first = d.step(producer)
    steps = list(a.steps)
    steps[i] = replace(steps[i], args={k: v for k, v in steps[i].args.items() if k != name},
                       surfaces={k: v for k, v in steps[i].surfaces.items() if k != name})
    grown = replace(a, steps=tuple(steps) + (first,))
    return d.relinked(grown, i, {param: Link(len(a.steps), output, which)})
