"""Workflow tasks after the seed's synthesis pipeline: graphs -> atomic plans -> operators -> filters.

1. Graphs: a directed tool-dependency graph and an undirected parameter-sharing graph over the split's
   functions of the API universe (`composition.ToolGraphs`).
2. Atomic plans (one tool; two dependent tools in series; two related tools in parallel; a condition
   block) composed with the operators connect, add, group and split into a plan of the target size, by the
   category's recipe (`composition.py`); then mask hides each eligible step from the request with chance
   `mask_rate` (0.25) and transform rephrases each step into a natural-language subtask with chance
   `transform_rate` (1.0: every node reads as WorfBench's do; lower rates keep some "Call <tool> with ..."
   nodes) (`operators.py`, where each operator is defined).
3. Words: node texts and the user's request (`wording.py`).
4. Filters: schema (`validate_schema`: every node a real tool step of the split with its required inputs
   stated or linked to an output the producer returns, links along edges, a DAG of 2 to 20 nodes, unique
   node texts), semantics (`validate_semantics`: running the workflow on the simulator in a topological
   order succeeds, takes the stated branch and yields the stored final values), and, for corpora,
   deduplication by workflow fingerprint (`Deduplicator`; the env draws each task from its seed alone).

A task dict holds the request, the steps (tool, stated arguments, links, role, node text), the order
edges, the condition, the context turn (context_inheritance), the final values (`answer`), the gold
`nodes`/`edges` (edges between 0-based step indices, START and END implied) and its WorfBench text
`workflow` (steps 1..n, START before every source, END after every sink).

    >>> import numpy as np
    >>> from magic_envs.tool_planning.universe import load_universe
    >>> task = generate(load_universe(), np.random.default_rng(0), "dependency", "iid", nodes=(3, 3))
    >>> len(task["nodes"]), validate_schema(load_universe(), task), validate_semantics(load_universe(), task)
    (3, [], [])
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import jsonschema

from magic_envs.decomposition.composition import CATEGORIES, Composer, graphs, holds
from magic_envs.decomposition.operators import (Drawer, Link, Plan, Retry, Step, execute, mask, pick_value, topological,
                                                transform)
from magic_envs.decomposition.wording import Wording, words
from magic_envs.decomposition.workflow import Workflow, format_workflow
from magic_envs.tool_planning.universe import Universe, extract, split_vocab

MIN_NODES, MAX_NODES = 2, 20


# ---- plans <-> task dicts --------------------------------------------------------------------------
def renumbered(plan: Plan) -> Plan:
    """The plan with its steps in a topological order (so the gold numbering reads top to bottom)."""
    order = topological(len(plan.steps), plan.edges())
    new = {old: k for k, old in enumerate(order)}
    steps = tuple(replace(plan.steps[old], links={p: (ln if ln.context else ln._replace(step=new[ln.step]))
                                                  for p, ln in plan.steps[old].links.items()}) for old in order)
    cond = plan.condition and {**plan.condition, **{r: None if plan.condition[r] is None else new[plan.condition[r]]
                                                    for r in ("check", "then", "else")}}
    return Plan(steps, frozenset((new[i], new[j]) for i, j in plan.order), cond, plan.context)


def steps_json(plan: Plan, texts: list[str]) -> list[dict]:
    return [{"tool": s.tool, "args": s.args, "role": s.role, "masked": s.masked, "natural": s.natural,
             "links": {p: {"step": ln.step, "output": ln.output, "which": ln.which, "context": ln.context}
                       for p, ln in s.links.items()},
             "inherits": s.inherits, "text": text} for s, text in zip(plan.steps, texts)]


def plan_of(task: dict) -> Plan:
    """The plan a task dict describes (what the filters check); KeyError/TypeError/ValueError when malformed."""
    def link(d: dict) -> Link:
        return Link(int(d["step"]), str(d["output"]), d["which"], bool(d["context"]))

    def build(part: dict, context) -> Plan:
        steps = tuple(Step(s["tool"], dict(s["args"]), {}, {p: link(d) for p, d in s["links"].items()},
                           dict(s.get("inherits", {})), s.get("role", "step"), bool(s.get("masked")),
                           bool(s.get("natural"))) for s in part["steps"])
        order = frozenset((int(i), int(j)) for i, j in part.get("order", ()))
        return Plan(steps, order, part.get("condition"), context)
    context = build(task["context"], None) if task.get("context") else None
    return build(task, context)


def gold_workflow(nodes: list[str], edges) -> Workflow:
    """The WorfBench workflow: steps 1..n, START (0) before every source, END (n+1) after every sink."""
    n = len(nodes)
    inner = sorted((i + 1, j + 1) for i, j in edges)
    has_in, has_out = {j for _, j in inner}, {i for i, _ in inner}
    return Workflow(nodes, [(0, k) for k in range(1, n + 1) if k not in has_in] + inner
                    + [(k, n + 1) for k in range(1, n + 1) if k not in has_out])


def final_values(u: Universe, plan: Plan, results: list) -> list[list]:
    """[step, field, value] of every sink that runs (a branch not taken, and what follows it, does not)."""
    skipped = set()
    cond = plan.condition
    if cond:
        observed = extract(results[cond["check"]], cond["path"])
        taken = bool(observed) and holds(cond["op"], observed[0], cond["value"])
        skipped = {cond["else"] if taken else cond["then"]} - {None}
    edges = plan.edges()
    for i in topological(len(plan.steps), edges):
        if any(j == i and k in skipped for k, j in edges):
            skipped.add(i)
    out = []
    for i in plan.sinks():
        if i not in skipped:
            field = next((k for k, v in results[i].items() if not isinstance(v, (list, dict))), None) \
                if isinstance(results[i], dict) else None
            out.append([i, field, results[i].get(field) if field else None])
    return out


# ---- the pipeline ------------------------------------------------------------------------------------
def condition_phrases(plan: Plan) -> tuple[str, str] | None:
    """("the status is \"delayed\"", "the status is not \"delayed\""): a condition and its negation."""
    cond = plan.condition
    if cond is None:
        return None
    name = "number of results" if cond["path"] == "count" else words(cond["path"])
    value, op = cond["value"], cond["op"]
    if isinstance(value, bool):
        return f"the {name} is {str(value).lower()}", f"the {name} is {str(not value).lower()}"
    if op == "is":
        return f'the {name} is "{value}"', f'the {name} is not "{value}"'
    return f"the {name} is {op} {value}", f"the {name} is not {op} {value}"


def generate(u: Universe, rng, category: str, vocab: str, nodes=(3, 8), branching: float = 0.4,
             tools_listed=(8, 16), mask_rate: float = 0.25, transform_rate: float = 1.0, tries: int = 300) -> dict:
    """One task dict of `category` over the split's functions ("iid" or "ood"), drawn from `rng` only."""
    if category not in CATEGORIES:
        raise ValueError(f"category must be one of {CATEGORIES}, got {category!r}")
    vocab = split_vocab(vocab)
    n = int(rng.integers(nodes[0], nodes[1] + 1))
    g = graphs(u, vocab)
    for _ in range(tries):
        d = Drawer(u, rng, vocab, int(rng.integers(2**31 - 1)))
        try:
            plan = renumbered(Composer(d, g, branching).compose(category, n))
            for i in range(len(plan)):
                if d.chance(mask_rate):
                    try:
                        plan = mask(plan, i)
                    except Retry:
                        pass
            for i in range(len(plan)):
                plan = transform(plan, i) if d.chance(transform_rate) else plan
            task = write_task(u, d, plan, category, tools_listed)
        except Retry:
            continue
        if not validate_schema(u, task, vocab) and not validate_semantics(u, task):
            return task
    raise RuntimeError(f"could not write a {category} workflow of {n} nodes in {tries} tries")


def write_task(u: Universe, d: Drawer, plan: Plan, category: str, tools_listed) -> dict:
    results = d.run(plan)
    context_results = d.run(plan.context) if plan.context is not None else []
    wording = Wording(u, plan, condition_phrases(plan))
    nodes = wording.nodes()
    if len(set(nodes)) < len(nodes):
        raise Retry("two nodes read the same")
    request = wording.request(d.rng)
    for step in plan.steps:  # a linked id the request states anyway would make the link a copy
        for param, link in step.links.items():
            etype = u.functions[step.tool].params[param.rstrip("[]")].get("type", "")
            source = (context_results if link.context else results)[link.step]
            if str(etype).endswith("_id") and str(pick_value(source, link)) in request:
                raise Retry("the request states a linked id")
    task = {"category": category, "world_seed": d.world, "request": request, "context": None,
            "steps": steps_json(plan, nodes), "order": sorted(map(list, plan.order)), "condition": plan.condition,
            "answer": final_values(u, plan, results), "nodes": nodes, "edges": [list(e) for e in plan.edges()]}
    if plan.context is not None:
        context = replace(plan.context, steps=tuple(replace(s, natural=True) for s in plan.context.steps))
        plan = replace(plan, context=context)
        earlier = Wording(u, context)
        texts = earlier.nodes()
        task["context"] = {"request": earlier.request(d.rng), "steps": steps_json(context, texts),
                           "order": sorted(map(list, context.order)),
                           "workflow": format_workflow(gold_workflow(texts, context.edges()))}
    task["workflow"] = format_workflow(gold_workflow(nodes, plan.edges()))
    task["tools"] = offer(u, d, [s.tool for s in plan.steps], tools_listed)
    return task


def offer(u: Universe, d: Drawer, used: list[str], size) -> list[str]:
    """The listed tools: every tool the workflow uses plus distractors (about half from the same domains)."""
    target = int(d.rng.integers(size[0], size[1] + 1))
    chosen = list(dict.fromkeys(used))
    pool = [fn.name for fn in u.functions_for(d.vocab) if fn.name not in chosen]
    domains = {u.functions[n].domain for n in chosen}
    near = [n for n in pool if u.functions[n].domain in domains]
    far = [n for n in pool if n not in near]
    while len(chosen) < target and (near or far):
        side = near if near and (not far or d.chance(0.5)) else far
        chosen.append(side.pop(int(d.rng.integers(len(side)))))
    return [chosen[i] for i in d.rng.permutation(len(chosen))]


# ---- filters ------------------------------------------------------------------------------------------
def returns_path(spec, path: str) -> bool:
    """Whether a result spec has a field at `path` ("flights[].flight_id", "attendees[]", "booking_id")."""
    for part in path.split("."):
        name, many = part.rstrip("[]"), part.endswith("[]")
        if not isinstance(spec, dict) or name not in spec:
            return False
        spec = spec[name]
        if many:
            if isinstance(spec, list) and spec and isinstance(spec[0], dict):
                spec = spec[0]
            elif not (isinstance(spec, str) and spec.startswith("array:")):
                return False
    return True


def _step_problems(u: Universe, plan: Plan, i: int, allowed, where: str) -> list[str]:
    step, out = plan.steps[i], []
    fn = u.functions.get(step.tool)
    if fn is None or (allowed is not None and step.tool not in allowed):
        return [f"{where} {i}: {step.tool!r} is not a tool of this split"]
    linked = {p.rstrip("[]") for p in step.links}
    for p in set(step.args) | linked:
        if p not in fn.params:
            out.append(f"{where} {i}: {step.tool} has no parameter {p!r}")
    out += [f"{where} {i}: {p!r} is both stated and linked" for p in linked & set(step.args)]
    out += [f"{where} {i}: required input {p!r} is neither stated nor linked" for p in fn.required
            if p not in step.args and p not in linked]
    for p, link in step.links.items():
        producers = plan.context.steps if link.context and plan.context else () if link.context else plan.steps
        if not 0 <= link.step < len(producers) or (not link.context and link.step == i) \
                or link.which not in ("first", "last"):
            out.append(f"{where} {i}: input {p!r} links to a missing step {link.step}")
        elif not returns_path(u.functions[producers[link.step].tool].returns, link.output):
            out.append(f"{where} {i}: input {p!r} links to {link.output!r}, which "
                       f"{producers[link.step].tool} does not return")
    for p, (j, q) in step.inherits.items():
        ctx = plan.context.steps if plan.context else ()
        if not 0 <= j < len(ctx) or ctx[j].args.get(q) != step.args.get(p):
            out.append(f"{where} {i}: {p!r} does not repeat the earlier turn's value")
    schema = dict(fn.parameters(), required=[p for p in fn.required if p not in linked])
    out += [f"{where} {i}: {e.message[:200]}" for e in jsonschema.Draft202012Validator(schema).iter_errors(step.args)]
    return out


def validate_schema(u: Universe, task: dict, vocab: str | None = None) -> list[str]:
    """The schema filter: [] when every node is a real tool step with resolvable inputs and the graph is a
    DAG of 2 to 20 nodes with unique texts; else one sentence per problem."""
    try:
        plan = plan_of(task)
        nodes, edges = list(task["nodes"]), sorted(tuple(e) for e in task["edges"])
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        return [f"malformed task: {e!r}"]
    n, problems = len(plan.steps), []
    if not MIN_NODES <= n <= MAX_NODES:
        problems.append(f"{n} nodes; a workflow has {MIN_NODES} to {MAX_NODES}")
    if nodes != [s.get("text") for s in task["steps"]] or len(set(nodes)) != n \
            or not all(isinstance(t, str) and t.strip() for t in nodes):
        problems.append("node texts must be one unique non-empty text per step")
    allowed = None if vocab is None else {fn.name for fn in u.functions_for(vocab)}
    for part, where in ((plan, "step"), (plan.context, "earlier step")):
        for i in range(len(part.steps) if part else 0):
            problems += _step_problems(u, part if where == "step" else replace(part, context=None), i, allowed, where)
    if any(not (0 <= a < n and 0 <= b < n) for a, b in plan.edges()):
        return problems + ["an edge names a missing step"]
    if edges != plan.edges():
        problems.append("the edges are not the steps' links and order edges")
    try:
        topological(n, plan.edges())
    except Retry:
        problems.append("the workflow has a cycle")
    cond = plan.condition
    if cond is not None:
        roles = {cond.get("check"): "check", cond.get("then"): "then", cond.get("else"): "else"}
        if any(k is not None and not (isinstance(k, int) and 0 <= k < n and plan.steps[k].role == r)
               for k, r in roles.items()) or cond.get("then") is None:
            problems.append("the condition's check and branches do not match the steps' roles")
        elif any((cond["check"], b) not in plan.edges() for b in (cond["then"], cond["else"]) if b is not None):
            problems.append("a branch does not follow its check")
    if not problems and task.get("workflow") != format_workflow(gold_workflow(nodes, plan.edges())):
        problems.append("the workflow text does not match the nodes and edges")
    return problems


def validate_semantics(u: Universe, task: dict) -> list[str]:
    """The semantic filter: [] when running the workflow on the simulator in a topological order succeeds
    and yields the task's final values (the branch it states is the one taken); else what went wrong."""
    try:
        plan = plan_of(task)
        results = execute(u, plan, int(task["world_seed"]))
        values = json.loads(json.dumps(final_values(u, plan, results)))
    except Retry as e:
        return [f"the workflow fails on the simulator: {e}"]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        return [f"malformed task: {e!r}"]
    return [] if values == task.get("answer") else [f"the workflow yields {values}, not {task.get('answer')}"]


def workflow_fingerprint(nodes: list[str], edges) -> str:
    """A hash of a workflow that ignores its numbering: the node texts and the edges between texts."""
    label = {i: t for i, t in enumerate(nodes)}
    canon = {"nodes": sorted(nodes), "edges": sorted([label[a], label[b]] for a, b in edges)}
    return hashlib.sha256(json.dumps(canon, ensure_ascii=False).encode()).hexdigest()[:16]


class Deduplicator:
    """The dedup filter of a corpus: keeps the first task of each workflow (and of each request)."""

    def __init__(self):
        self.seen: set[str] = set()

    def keep(self, task: dict) -> bool:
        keys = {workflow_fingerprint(task["nodes"], task["edges"]), "request:" + task["request"]}
        if keys & self.seen:
            return False
        self.seen |= keys
        return True


def generate_many(u: Universe, rng, count: int, category: str, vocab: str, **knobs) -> list[dict]:
    """`count` distinct tasks (a corpus): the whole pipeline, deduplication included."""
    dedup, out = Deduplicator(), []
    for _ in range(count * 20):
        if len(out) == count:
            break
        task = generate(u, rng, category, vocab, **knobs)
        if dedup.keep(task):
            out.append(task)
    return out
