"""The Decompose-v0 generator: tool graphs, atomic plans, the six operators, the filters and deduplication."""

import copy
import json

import networkx as nx
import numpy as np
import pytest

from magic_envs.decomposition.composition import CATEGORIES, Composer, graphs
from magic_envs.decomposition.generator import (Deduplicator, generate, generate_many, plan_of, validate_schema,
                                                validate_semantics, workflow_fingerprint)
from magic_envs.decomposition.operators import (Drawer, Link, Plan, Retry, add, connect, execute, group, mask,
                                                pick_value, split, transform)
from magic_envs.decomposition.wording import Wording
from magic_envs.decomposition.workflow import parse_workflow
from magic_envs.tool_planning.universe import load_universe

U = load_universe()
WORLD = 7


def drawer(seed=0, vocab="iid"):
    return Drawer(U, np.random.default_rng(seed), vocab, WORLD)


def single(d, tool):
    return Plan((d.step(tool),))


def flight_booking(d):
    """search_flights -> book_flight, the booking taking the first flight found."""
    link = ("flight_id", Link(0, "flights[].flight_id"))
    return connect(d, single(d, "search_flights"), single(d, "book_flight"), link)


# ---- graphs ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("vocab", ["iid", "ood"])
def test_graphs_are_typed_and_stay_in_their_split(vocab):
    g = graphs(U, vocab)
    names = {fn.name for fn in U.functions_for(vocab)}
    assert set(g.dependency.nodes) == names == set(g.sharing.nodes)
    assert g.dependency.number_of_edges() > 0 and g.sharing.number_of_edges() > 0
    for producer, consumer, (output, param), data in g.dependency.edges(keys=True, data=True):
        assert producer != consumer and data["etype"] != "currency"
        spec = U.functions[consumer].params[param.rstrip("[]")]
        assert (spec["items"]["type"] if spec["type"] == "array" else spec["type"]) == data["etype"]
    for a, b, data in g.sharing.edges(data=True):
        for fa, pa, fb, pb, etype in data["slots"]:
            assert {fa, fb} == {a, b}
            assert U.functions[fa].params[pa]["type"] == U.functions[fb].params[pb]["type"] == etype
    assert all(len({p for _, _, p, _ in g.fed_by(m)}) >= 2 for m in g.mergers)


# ---- atomic plans ----------------------------------------------------------------------------------------
def test_atomic_plans():
    c = Composer(drawer(1), graphs(U, "iid"), 0.5)
    assert len(c.single()) == 1
    s = c.series()
    assert len(s) == 2 and s.edges() == [(0, 1)] and list(s.steps[1].links.values())[0].step == 0
    p = c.parallel()
    shared = {json.dumps(v) for v in p.steps[0].args.values()} & {json.dumps(v) for v in p.steps[1].args.values()}
    assert len(p) == 2 and p.edges() == [] and shared
    for with_else in (False, True):
        for seed in range(20):
            try:
                plan = Composer(drawer(seed), graphs(U, "iid"), 0.5).condition(with_else)
                break
            except Retry:
                continue
        assert len(plan) == 2 + with_else and plan.condition["check"] == 0
        assert {(0, 1), (0, 2)} & set(plan.edges()) == ({(0, 1), (0, 2)} if with_else else {(0, 1)})
        execute(U, plan, WORLD)


# ---- the operators ---------------------------------------------------------------------------------------
def test_connect_through_a_dependency_edge_redraws_the_consumer():
    d = drawer()
    plan = flight_booking(d)
    assert plan.edges() == [(0, 1)] and "flight_id" not in plan.steps[1].args
    results = execute(U, plan, WORLD)
    assert results[1]["flight_id"] == results[0]["flights"][0]["flight_id"]


def test_connect_without_a_link_orders_every_sink_before_every_source():
    d = drawer()
    a = add(single(d, "get_air_quality"), single(d, "get_stock_price"))
    b = add(single(d, "list_accounts"), single(d, "list_devices"))
    assert sorted(connect(d, a, b).edges()) == [(0, 2), (0, 3), (1, 2), (1, 3)]


def test_add_keeps_the_branches_apart():
    d = drawer()
    a = connect(d, single(d, "search_flights"), single(d, "book_flight"), ("flight_id", Link(0, "flights[].flight_id")))
    both = add(a, single(d, "get_air_quality"))
    assert len(both) == 3 and both.edges() == [(0, 1)] and both.sources() == [0, 2] and both.sinks() == [1, 2]
    cond = {"check": 0, "then": 1, "else": None}
    with pytest.raises(Retry):  # one condition per workflow
        add(Plan(condition=cond), Plan(condition=cond))


def test_group_merges_parallel_nodes_under_a_common_successor():
    d = drawer()
    a = add(single(d, "search_flights"), single(d, "search_contacts"))
    merged = group(d, a, "book_flight", {"flight_id": Link(0, "flights[].flight_id"),
                                         "passenger_name": Link(1, "contacts[].name")})
    assert merged.edges() == [(0, 2), (1, 2)] and merged.sinks() == [2]
    execute(U, merged, WORLD)
    with pytest.raises(Retry):
        group(d, a, "book_flight", {"flight_id": Link(0, "flights[].flight_id")})


def test_mask_hides_a_step_from_the_request_but_not_from_the_workflow():
    d = drawer()
    plan = flight_booking(d)
    hidden = mask(plan, 0)
    request = Wording(U, hidden).request(np.random.default_rng(0))
    origin = plan.steps[0].surfaces["origin"]
    assert request.count(origin) == 1 and "with search flights for origin" in request
    assert len(Wording(U, hidden).nodes()) == 2
    with pytest.raises(Retry):
        mask(plan, 1)  # it takes an input
    fan = add(plan, single(d, "get_flight_status"))
    fan = d.relinked(fan, 2, {"flight_id": Link(0, "flights[].flight_id")})
    with pytest.raises(Retry):
        mask(fan, 0)  # two consumers


def test_transform_turns_a_tool_call_into_a_subtask():
    d = drawer()
    plan = flight_booking(d)
    before = Wording(U, plan).nodes()
    after = Wording(U, transform(transform(plan, 0), 1)).nodes()
    assert before[0].startswith("Call search_flights with origin") and before[1].startswith("Call book_flight")
    assert "search_flights" not in after[0] and after[1].startswith("Book the first flight found for")


def test_split_divides_a_step_into_two_dependent_substeps():
    d = drawer()
    plan = single(d, "get_flight_status")
    two = split(d, plan, 0, "flight_id", "search_flights", "flights[].flight_id")
    assert len(two) == 2 and two.edges() == [(1, 0)] and "flight_id" not in two.steps[0].args
    execute(U, two, WORLD)
    with pytest.raises(Retry):
        split(d, two, 0, "flight_id", "search_flights", "flights[].flight_id")  # no longer stated


# ---- generated tasks -----------------------------------------------------------------------------------
@pytest.mark.parametrize("vocab,sizes", [("iid", (2, 8)), ("ood", (6, 14)), ("iid", (20, 20)), ("ood", (2, 2))])
@pytest.mark.parametrize("category", CATEGORIES)
def test_generated_workflows_are_valid_dags(category, vocab, sizes):
    for seed in range(6):
        task = json.loads(json.dumps(generate(U, np.random.default_rng(seed), category, vocab, nodes=sizes)))
        n = len(task["nodes"])
        assert sizes[0] <= n <= sizes[1] and 2 <= n <= 20
        graph = nx.DiGraph(task["edges"])
        graph.add_nodes_from(range(n))
        assert nx.is_directed_acyclic_graph(graph)
        assert validate_schema(U, task, vocab) == [] and validate_semantics(U, task) == []
        wf = parse_workflow(task["workflow"])
        assert wf.nodes == task["nodes"] and len(set(wf.nodes)) == n
        assert {fn.name for fn in U.functions_for(vocab)} >= {s["tool"] for s in task["steps"]} | set(task["tools"])
        plan = plan_of(task)
        links = [ln for s in plan.steps for ln in s.links.values()]
        if category == "general":
            assert not links and task["context"] is None
        if category == "dependency":
            assert any(not ln.context for ln in links)
        if category == "condition":
            cond = task["condition"]
            assert task["nodes"][cond["then"]].startswith("If ")
            assert (cond["check"], cond["then"]) in map(tuple, task["edges"])
        if category == "context_inheritance":
            assert task["context"] and (any(ln.context for ln in links) or any(s.inherits for s in plan.steps))
            assert task["context"]["request"] not in task["request"]


def test_generation_is_deterministic_and_seeded():
    a, b = (generate(U, np.random.default_rng(3), "dependency", "iid") for _ in range(2))
    assert a == b and a != generate(U, np.random.default_rng(4), "dependency", "iid")


def test_requests_never_state_a_linked_id_and_masked_steps_are_not_asked_for():
    for seed in range(20):
        task = generate(U, np.random.default_rng(seed), "dependency", "iid", nodes=(4, 8), mask_rate=0.5)
        plan = plan_of(task)
        results = execute(U, plan, task["world_seed"])
        for step in plan.steps:
            for param, link in step.links.items():
                value = pick_value(results[link.step], link)
                if U.functions[step.tool].params[param.rstrip("[]")].get("type", "").endswith("_id"):
                    assert str(value) not in task["request"], (seed, value)
                assert "[" in task["request"]  # a linked value is pointed at, in brackets
        assert not all(s["masked"] for s in task["steps"])


# ---- filters: table-driven ---------------------------------------------------------------------------------
def _base():
    return generate(U, np.random.default_rng(11), "dependency", "iid", nodes=(3, 3), mask_rate=0.0)


def _linked_step(task):
    return next(i for i, s in enumerate(task["steps"]) if s["links"])


def _cycle(task):
    i = _linked_step(task)
    j = task["steps"][i]["links"][next(iter(task["steps"][i]["links"]))]["step"]
    task["order"].append([i, j])


def _drop_required(task):
    step = task["steps"][0]
    step["args"].pop(U.functions[step["tool"]].required[0])


def _bad_output(task):
    i = _linked_step(task)
    link = next(iter(task["steps"][i]["links"].values()))
    link["output"] = "no_such_field"


def _foreign_tool(task):
    task["steps"][0]["tool"] = U.functions_for("ood")[0].name


def _bad_value(task):
    step = task["steps"][0]
    fn = U.functions[step["tool"]]
    param = next((p for p in fn.required if fn.params[p]["type"] == "date" and p in step["args"]), None)
    if param is None:
        step["tool"], step["args"] = "get_weather_forecast", {"city": "Paris", "date": "2025-02-30"}
    else:
        step["args"][param] = "2025-02-30"


def _wrong_answer(task):
    task["answer"][0][2] = "something else"


def _missing_step(task):
    i = _linked_step(task)
    next(iter(task["steps"][i]["links"].values()))["step"] = 99


SCHEMA_CASES = [("cycle", _cycle, "cycle"), ("unresolvable input", _drop_required, "neither stated nor linked"),
                ("output the producer lacks", _bad_output, "does not return"),
                ("tool of another split", _foreign_tool, "not a tool of this split"),
                ("link to a missing step", _missing_step, "missing step")]


@pytest.mark.parametrize("name,break_it,message", SCHEMA_CASES, ids=[c[0] for c in SCHEMA_CASES])
def test_schema_filter_rejects(name, break_it, message):
    task = _base()
    assert validate_schema(U, task, "iid") == []
    broken = copy.deepcopy(task)
    break_it(broken)
    problems = validate_schema(U, broken, "iid")
    assert any(message in p for p in problems), problems


SEMANTIC_CASES = [("a call the simulator refuses", _bad_value, "fails on the simulator"),
                  ("final values that differ", _wrong_answer, "yields")]


@pytest.mark.parametrize("name,break_it,message", SEMANTIC_CASES, ids=[c[0] for c in SEMANTIC_CASES])
def test_semantic_filter_rejects(name, break_it, message):
    task = _base()
    assert validate_semantics(U, task) == []
    broken = copy.deepcopy(task)
    break_it(broken)
    problems = validate_semantics(U, broken)
    assert any(message in p for p in problems), problems


def test_semantic_filter_checks_the_branch_taken():
    for seed in range(10):
        task = generate(U, np.random.default_rng(seed), "condition", "iid", nodes=(3, 3))
        if task["condition"]["else"] is not None:
            break
    flipped = copy.deepcopy(task)
    cond = flipped["condition"]
    cond["then"], cond["else"] = cond["else"], cond["then"]  # the other branch runs
    assert validate_semantics(U, task) == [] and validate_semantics(U, flipped)


def test_schema_filter_never_raises_on_malformed_tasks():
    junks = ({}, {"steps": "x"}, {"steps": [{}], "nodes": [], "edges": []}, {"steps": [], "nodes": [], "edges": [[0]]})
    for junk in junks:
        assert validate_schema(U, junk) and validate_semantics(U, junk)


# ---- deduplication ------------------------------------------------------------------------------------------
def test_fingerprint_ignores_numbering_and_dedup_keeps_the_first():
    nodes, edges = ["a", "b", "c"], [(0, 1), (0, 2)]
    assert workflow_fingerprint(nodes, edges) == workflow_fingerprint(["a", "c", "b"], [(0, 2), (0, 1)])
    assert workflow_fingerprint(nodes, edges) != workflow_fingerprint(nodes, [(0, 1), (1, 2)])
    task = _base()
    dedup = Deduplicator()
    assert dedup.keep(task) and not dedup.keep(copy.deepcopy(task))
    renumbered = copy.deepcopy(task)
    renumbered["request"] = "another wording"
    renumbered["nodes"], renumbered["edges"] = task["nodes"][::-1], [[2 - a, 2 - b] for a, b in task["edges"]]
    assert not dedup.keep(renumbered)
    many = generate_many(U, np.random.default_rng(0), 12, "general", "iid", nodes=(2, 2))
    assert len({workflow_fingerprint(t["nodes"], t["edges"]) for t in many}) == len(many) == 12
