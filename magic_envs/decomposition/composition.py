"""Composing workflows: the tool graphs, the atomic plans, and one recipe per MagicEval-Plan category.

The graphs (`ToolGraphs`, one per function split): a directed **dependency graph** (producer -> consumer
when an output of the producer can feed a parameter of the consumer: `flights[].flight_id` ->
`book_flight.flight_id`) and an undirected **parameter-sharing graph** (two functions taking a parameter of
one entity type, e.g. both take a city). Both come from the universe's typed edges, keeping links a request
can name (a top-level parameter or array, a field of a result or of its list items; no currencies).

Atomic plans: `single` (one tool), `series` (two tools joined by a dependency edge) and `parallel` (two tools
related by a sharing edge, stating the same value, with no edge between them), plus the `condition` block
(a check step whose result field decides between a "then" step and an optional "else" step).

Recipes grow an atomic plan to the target size with the operators of `operators.py`; `branching` is the
chance that a growth step is parallel (add, group) rather than serial (connect, split):

* general: no data links. Atoms are chained by a stated order (connect without a link) or added.
* dependency: starts from a series; grows by connect (through a dependency edge), split, add, group.
* condition: one condition block, grown like dependency.
* context_inheritance: an earlier turn's plan (1-2 steps) is the context; the follow-up's first step takes
  an output of it, or a value the earlier request stated ("the same city"), and the rest grows like
  dependency.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

import networkx as nx

from magic_envs.decomposition.operators import (Drawer, Link, Plan, Retry, Step, add, connect, group,
                                                pick_value, split)
from magic_envs.tool_planning.universe import Universe, extract

CATEGORIES = ("general", "dependency", "condition", "context_inheritance")
_OUT = re.compile(r"^\w+(\[\](\.\w+)?)?$")   # "booking_id", "attendees[]", "flights[].flight_id"
_PARAM = re.compile(r"^\w+(\[\])?$")         # a top-level parameter or a top-level array
_WEAK = {"date", "time", "city", "country"}  # values that link by coincidence more often than by identity


class ToolGraphs:
    """The dependency (directed) and parameter-sharing (undirected) graphs over one split's functions."""

    def __init__(self, u: Universe, vocab: str):
        self.names = [fn.name for fn in u.functions_for(vocab)]
        self.dependency = nx.MultiDiGraph()
        self.dependency.add_nodes_from(self.names)
        for e in u.dependency_edges(vocab):
            if e.etype != "currency" and _OUT.match(e.output) and _PARAM.match(e.param):
                self.dependency.add_edge(e.producer, e.consumer, key=(e.output, e.param), etype=e.etype)
        self.sharing = nx.Graph()
        self.sharing.add_nodes_from(self.names)
        for e in u.sharing_edges(vocab):
            if "[]" not in e.a_param + e.b_param and "." not in e.a_param + e.b_param:
                slots = self.sharing.get_edge_data(e.a, e.b, {}).get("slots", [])
                self.sharing.add_edge(e.a, e.b, slots=slots + [(e.a, e.a_param, e.b, e.b_param, e.etype)])
        self.conditions = [c for c in u.condition_fields(vocab) if "." not in c.path and "[]" not in c.path]
        self.producers = sorted({p for p, _ in self.dependency.edges()})
        self._related = {name: self._slots(name) for name in self.names}
        # consumers whose parameters >= 2 different producers can feed: where parallel branches can merge
        self.mergers = sorted(c for c in self.names
                              if len({k[1] for _, _, k in self.dependency.in_edges(c, keys=True)}) >= 2)

    def feeds(self, producer: str) -> list[tuple]:
        """(output, consumer, param, etype) for every dependency edge out of `producer`."""
        return [(k[0], c, k[1], d["etype"]) for _, c, k, d in self.dependency.out_edges(producer, keys=True, data=True)]

    def fed_by(self, consumer: str) -> list[tuple]:
        """(producer, output, param, etype) for every dependency edge into `consumer`."""
        return [(p, k[0], k[1], d["etype"]) for p, _, k, d in self.dependency.in_edges(consumer, keys=True, data=True)]

    def related(self, name: str) -> list[tuple]:
        """(param, other function, other's param, etype) for every sharing slot of `name`."""
        return self._related[name]

    def _slots(self, name: str) -> list[tuple]:
        out = []
        for other in self.sharing.neighbors(name):
            for a, pa, b, pb, t in self.sharing[name][other]["slots"]:
                out.append((pa, b, pb, t) if a == name else (pb, a, pa, t))
        return out


@lru_cache(maxsize=4)
def graphs(u: Universe, vocab: str) -> ToolGraphs:
    return ToolGraphs(u, vocab)


class Composer:
    """Draws atomic plans and grows them with the operators, all from one Drawer's RNG."""

    def __init__(self, d: Drawer, g: ToolGraphs, branching: float):
        self.d, self.g, self.branching, self.linked = d, g, branching, True

    # ---- atomic plans -----------------------------------------------------------------------------
    def single(self, tool: str | None = None) -> Plan:
        return Plan((self.d.step(tool or self.d.pick(self.g.names)),))

    def which(self, result, output: str) -> str:
        values = extract(result, output)
        return "last" if len(values) > 1 and values[-1] != values[0] and self.d.chance(0.3) else "first"

    def edge_from(self, producer: str, strong: float = 0.7):
        edges = self.g.feeds(producer)
        firm = [e for e in edges if e[3] not in _WEAK]
        return self.d.pick(firm if firm and self.d.chance(strong) else edges)

    def series(self, head: str | None = None) -> Plan:
        first = self.single(head or self.d.pick(self.g.producers))
        output, consumer, param, _ = self.edge_from(first.steps[0].tool)
        result = self.d.run(first)[0]
        return connect(self.d, first, self.single(consumer), (param, Link(0, output, self.which(result, output))))

    def parallel(self, tool: str | None = None) -> Plan:
        a = self.d.step(tool or self.d.pick([n for n in self.g.names if self.g.related(n)]))
        slots = [r for r in self.g.related(a.tool) if r[0] in a.args]
        param, other, other_param, _ = self.d.pick(slots)
        b = self.d.step(other, {other_param: a.args[param]})
        return add(Plan((a,)), Plan((b,)))

    def condition(self, with_else: bool) -> Plan:
        cf = self.d.pick(self.g.conditions)
        check = self.d.step(cf.function, role="check")
        observed = extract(self.d.run(Plan((check,)))[0], cf.path)
        if not observed or isinstance(observed[0], (list, dict)):
            raise Retry("nothing to branch on")
        op, value = self.threshold(cf, observed[0], taken=self.d.chance(0.5))
        steps, order = [check], set()
        for role in ("then", "else")[:1 + with_else]:
            steps.append(self.branch(check, role, [s.tool for s in steps]))
            order.add((0, len(steps) - 1))
        condition = {"check": 0, "path": cf.path, "op": op, "value": value, "then": 1, "else": 2 if with_else else None}
        return Plan(tuple(steps), frozenset(order), condition)

    def branch(self, check: Step, role: str, used: list[str]) -> Step:
        """A branch step: one that takes an output of the check when the graph allows, else a related tool."""
        feeds = [e for e in self.g.feeds(check.tool) if e[1] not in used]
        if feeds and self.d.chance(0.6):
            output, consumer, param, _ = self.d.pick(feeds)
            result = self.d.run(Plan((check,)))[0]
            link = Link(0, output, self.which(result, output))
            return self.d.step(consumer, {param.rstrip("[]"): _item(param, pick_value(result, link))},
                               {param: link}, role=role)
        domain = self.d.u.functions[check.tool].domain
        near = [n for n in self.g.names if n not in used and self.d.u.functions[n].domain == domain]
        return self.d.step(self.d.pick(near if near and self.d.chance(0.6) else
                                       [n for n in self.g.names if n not in used]), role=role)

    def threshold(self, cf, v, taken: bool) -> tuple[str, object]:
        """(op, value) of a condition on the observed `v` that holds exactly when `taken`."""
        if cf.kind == "enum":
            return "is", v if taken else self.d.pick([e for e in cf.values if e != v])
        if cf.kind == "boolean" or isinstance(v, bool):
            return "is", bool(v) if taken else not v
        op = self.d.pick(("above", "below"))
        step = 10 ** math.floor(math.log10(abs(v))) / 2 if abs(v) >= 1 else 0.1
        step = max(1, round(step)) if step >= 1 else step
        low, high = math.floor(v / step) * step, math.ceil(v / step) * step
        if v >= 0 and low - step < 0 and (op == "above") == taken:
            op = "below" if op == "above" else "above"  # "above -5 results" reads oddly: ask the other way round
        if op == "above":
            x = (low if low < v else low - step) if taken else high
        else:
            x = (high if high > v else high + step) if taken else low
        x = int(round(x)) if float(round(x, 6)).is_integer() else round(x, 2)
        if holds(op, v, x) != taken:
            raise Retry("no clean threshold")
        return op, x

    # ---- growth -------------------------------------------------------------------------------------
    def atom(self, room: int, linked: bool) -> Plan:
        """A new atomic plan of at most `room` steps: parallel with chance `branching`, else a series (when
        links are allowed) or a single tool."""
        if room >= 2 and self.d.chance(self.branching):
            return self.parallel()
        return self.series() if room >= 2 and linked and self.d.chance(0.5) else self.single()

    def grow(self, plan: Plan, n: int, linked: bool = True) -> Plan:
        """Apply operators until the plan has `n` steps; Retry when it cannot. `linked`: data links allowed."""
        self.linked = linked
        for _ in range(40):
            room = n - len(plan)
            if room <= 0:
                return plan
            parallel = self.d.chance(self.branching)
            ops = ([self.op_add] + ([self.op_group] if linked else [])) if parallel else \
                ([self.op_connect, self.op_split] if linked else [self.op_then])
            try:
                grown = self.d.pick(ops)(plan, room)
            except Retry:
                continue
            if len(plan) < len(grown) <= n:
                plan = grown
        raise Retry(f"could not grow the workflow to {n} steps")

    def op_then(self, plan: Plan, room: int) -> Plan:
        return connect(self.d, plan, self.atom(room, linked=False))

    def op_add(self, plan: Plan, room: int) -> Plan:
        return add(plan, self.atom(room, linked=self.linked))

    def op_connect(self, plan: Plan, room: int) -> Plan:
        sinks = [i for i in plan.sinks() if self.g.feeds(plan.steps[i].tool)]
        candidates = [i for i in range(len(plan)) if self.g.feeds(plan.steps[i].tool)]
        i = self.d.pick(sinks if sinks and self.d.chance(0.7) else candidates)
        output, consumer, param, _ = self.edge_from(plan.steps[i].tool)
        result = self.d.run(plan)[i]
        tail = self.series(consumer) if room >= 2 and self.d.chance(0.3) and self.g.feeds(consumer) \
            else self.single(consumer)
        return connect(self.d, plan, tail, (param, Link(i, output, self.which(result, output))))

    def op_split(self, plan: Plan, room: int) -> Plan:
        options = [(i, p, producer, output, etype) for i, s in enumerate(plan.steps)
                   for producer, output, p, etype in self.g.fed_by(s.tool)
                   if p in s.args and p not in s.links and p not in s.inherits]  # a stated scalar parameter
        firm = [o for o in options if o[4] not in _WEAK]
        i, param, producer, output, _ = self.d.pick(firm if firm and self.d.chance(0.7) else options)
        return split(self.d, plan, i, param, producer, output)

    def op_group(self, plan: Plan, room: int) -> Plan:
        """A merger step fed by two nodes; a missing producer joins first as a new parallel branch."""
        tool = self.d.pick(self.g.mergers)
        by_param: dict[str, list] = {}
        for producer, output, param, _ in self.g.fed_by(tool):
            by_param.setdefault(param, []).append((producer, output))
        chosen = [list(by_param)[i] for i in self.d.rng.choice(len(by_param), size=2, replace=False)]
        links, sinks = {}, set(plan.sinks())
        for param in chosen:
            producer, output = self.d.pick(by_param[param])
            used = {link.step for link in links.values()}
            have = [i for i, s in enumerate(plan.steps) if s.tool == producer and i not in used]
            if have:
                i = self.d.pick([i for i in have if i in sinks] or have)
            elif room >= 2:  # the new producer and the merger itself
                plan, i = add(plan, self.single(producer)), len(plan)
                room -= 1
            else:
                raise Retry("no room for a new producer")
            result = self.d.run(plan)[i]
            links[param] = Link(i, output, self.which(result, output))
        return group(self.d, plan, tool, links)

    # ---- the recipes ----------------------------------------------------------------------------------
    def general(self, n: int) -> Plan:
        start = self.parallel() if n >= 2 and self.d.chance(self.branching) else self.single()
        return self.grow(start, n, linked=False)

    def dependency(self, n: int) -> Plan:
        return self.grow(self.series(), n)

    def condition_plan(self, n: int) -> Plan:
        return self.grow(self.condition(with_else=n >= 3 and self.d.chance(0.6)), n)

    def context_inheritance(self, n: int) -> Plan:
        context = self.series() if self.d.chance(0.5) else self.single()
        results = self.d.run(context)
        got = [(j, e) for j, s in enumerate(context.steps) for e in self.g.feeds(s.tool)]
        said = [(j, r) for j, s in enumerate(context.steps) for r in self.g.related(s.tool) if r[0] in s.args]
        if got and (not said or self.d.chance(0.5)):
            j, (output, consumer, param, _) = self.d.pick(got)
            link = Link(j, output, self.which(results[j], output), context=True)
            head = self.d.step(consumer, {param.rstrip("[]"): _item(param, pick_value(results[j], link))},
                               {param: link})
        else:
            j, (param, other, other_param, _) = self.d.pick(said)
            head = self.d.step(other, {other_param: context.steps[j].args[param]},
                               inherits={other_param: [j, param]})
        return self.grow(Plan((head,), context=context), n)

    def compose(self, category: str, n: int) -> Plan:
        recipe = {"general": self.general, "dependency": self.dependency, "condition": self.condition_plan,
                  "context_inheritance": self.context_inheritance}[category]
        return recipe(n)


def _item(param: str, value):
    return [value] if param.endswith("[]") else value


def holds(op: str, observed, value) -> bool:
    """Whether a condition holds for an observed value (what decides the branch)."""
    if op == "above":
        return observed > value
    if op == "below":
        return observed < value
    return observed == value
