"""WorfBench's metric: f1_chain and f1_graph of a predicted workflow against the gold one.

`score_workflow(pred, gold, matcher=None, mode="corrected")` -> `WorkflowScore` (precision, recall and F1 of
the chain and of the graph, plus the node matching). `pred` and `gold` are texts in WorfBench's format or
`Workflow`s; an unparsable prediction (or one of more than 256 steps) scores 0 everywhere and nothing raises.
`matcher`: see matchers.py (default: the process-wide all-MiniLM-L6-v2 embedding matcher).

Both modes match predicted to gold steps as WorfBench does: cosine similarity with negatives clipped to 0,
pairs strictly above 0.6, a maximum-weight matching.

* mode="compat": exactly what WorfBench's official evaluator computes, quirks included; each quirk is listed
  in worfbench_compat.py. Gold against itself scores below 1 on long workflows there.
* mode="corrected" (for training rewards): the same idea without the quirks.
  - One matching of the steps (START/END are not text-matched: they map to each other), ties broken toward
    aligned positions, so repeated steps match their own copies.
  - Chain: the matched gold steps, read in the prediction's written order, against each gold order: the first
    20 topological orders of the gold steps (networkx's enumeration, whatever the size) plus the order that
    follows the prediction wherever the gold's edges allow it (so a right answer to a wide parallel workflow
    is never cut off by the 20-order limit); the longest strictly increasing subsequence of positions is the
    number of correct steps (0 when nothing matches); best F1 over the orders. A cyclic gold is read in
    written order.
  - Graph: predicted edges are mapped through the matching (START->START, END->END) and compared with the
    gold's; in each connected component of the gold graph the largest connected component of the common
    edges counts its nodes (an isolated gold node counts 1 when something maps to it); the total over
    n+2 predicted and m+2 gold nodes (START and END included) gives precision and recall. For a connected
    gold (every well-formed workflow) this is WorfBench's largest-component score with edges mapped; summing
    over gold components keeps gold-against-gold at 1.0 for the few gold files whose graph is disconnected.
  - Out-of-range edges, self-loops and repeated edges are ignored.
  Gold against itself scores 1.0 on every record of the WorfBench test files.

    >>> from magic_envs.decomposition.matchers import ExactMatcher
    >>> gold = "Node:\\n1: a\\n2: b\\n3: c\\nEdge: (START,1) (1,2) (2,3) (3,END)"
    >>> score_workflow(gold, gold, ExactMatcher()).as_dict()["f1_graph"]
    1.0
    >>> swapped = "Node:\\n1: b\\n2: a\\n3: c\\nEdge: (START,2) (2,1) (1,3) (3,END)"
    >>> s = score_workflow(swapped, gold, ExactMatcher())
    >>> round(s.f1_chain, 3), s.f1_graph
    (0.667, 1.0)
    >>> c = score_workflow(swapped, gold, ExactMatcher(), mode="compat")  # edges compared by raw numbers
    >>> round(c.f1_graph, 3)
    0.4
"""

from __future__ import annotations

import functools
import heapq
from itertools import islice

from magic_envs.decomposition.worfbench_compat import MAX_ORDERS, score_compat
from magic_envs.decomposition.worfbench_core import (
    MAX_STEPS,
    ZERO,
    WorkflowScore,
    aligned_matching,
    clipped_similarity,
    component_sizes,
    f1,
    lis_length,
)
from magic_envs.decomposition.workflow import Workflow, parse_workflow

MODES = ("corrected", "compat")


def score_workflow(pred, gold, matcher=None, mode: str = "corrected") -> WorkflowScore:
    """WorfBench's chain and graph scores of `pred` against `gold` (texts or Workflows); see the module doc."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    pred_wf, gold_wf = parse_workflow(pred), parse_workflow(gold)
    if pred_wf is None or gold_wf is None or pred_wf.n > MAX_STEPS or gold_wf.n > MAX_STEPS:
        return ZERO
    if matcher is None:
        from magic_envs.decomposition.matchers import default_matcher
        matcher = default_matcher()
    if mode == "compat":
        return score_compat(pred_wf, gold_wf, matcher)
    return score_corrected(pred_wf, gold_wf, matcher)


@functools.lru_cache(maxsize=4096)
def _gold_structure(nodes: tuple[str, ...], edges: tuple[tuple[int, int], ...]):
    """Per gold: its valid edges, whether they form a DAG, its step orders, its connected components."""
    import networkx as nx

    m = len(nodes)
    valid = tuple(Workflow(list(nodes), list(edges)).valid_edges())
    graph = nx.DiGraph()
    graph.add_nodes_from(range(m + 2))
    graph.add_edges_from(valid)
    dag = nx.is_directed_acyclic_graph(graph)
    if dag:
        orders = [tuple(i for i in order if 1 <= i <= m) for order in islice(nx.all_topological_sorts(graph),
                                                                             MAX_ORDERS)]
    else:
        orders = [tuple(range(1, m + 1))]
    components = [frozenset(c) for c in nx.weakly_connected_components(graph)]
    return valid, dag, tuple(orders), tuple(components)


def _guided_order(m: int, valid, rank: dict[int, int]) -> tuple[int, ...]:
    """The gold topological order that follows the prediction: Kahn's algorithm taking, among the available
    gold steps, the one matched earliest in the prediction (unmatched steps last, by index)."""
    indegree, successors = [0] * (m + 2), [[] for _ in range(m + 2)]
    for u, v in valid:
        successors[u].append(v)
        indegree[v] += 1
    key = {v: (0, rank[v]) if v in rank else (1, v) for v in range(m + 2)}
    key[0] = (-1, 0)  # START first, before isolated steps
    heap = [(key[v], v) for v in range(m + 2) if indegree[v] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, v = heapq.heappop(heap)
        if 1 <= v <= m:
            order.append(v)
        for w in successors[v]:
            indegree[w] -= 1
            if indegree[w] == 0:
                heapq.heappush(heap, (key[w], w))
    return tuple(order)


def score_corrected(pred: Workflow, gold: Workflow, matcher) -> WorkflowScore:
    """The corrected scores of a parsed prediction against a parsed gold (module docstring)."""
    n, m = pred.n, gold.n
    valid, dag, orders, components = _gold_structure(tuple(gold.nodes), tuple(gold.edges))
    match = aligned_matching(clipped_similarity(matcher, pred.nodes, gold.nodes)) if n and m else (-1,) * n
    matched = [j + 1 for j in match if j >= 0]  # gold steps, in the prediction's written order

    chain = (0.0, 0.0, 0.0)
    if matched:
        candidates = orders + (_guided_order(m, valid, {g: k for k, g in enumerate(matched)}),) if dag else orders
        for order in candidates:
            where = {g: k for k, g in enumerate(order)}
            correct = lis_length([where[g] for g in matched])
            precision, recall = correct / n, correct / m
            if f1(precision, recall) > chain[2]:
                chain = (precision, recall, f1(precision, recall))

    image = {0: 0, n + 1: m + 1, **{i + 1: j + 1 for i, j in enumerate(match) if j >= 0}}
    mapped = {(image[u], image[v]) for u, v in pred.valid_edges() if u in image and v in image}
    common = mapped.intersection(valid)
    sizes = component_sizes((), common)
    targets = set(image.values())
    credit = 0
    for component in components:
        if len(component) == 1:
            credit += bool(component & targets)
        else:
            credit += max((sizes[v] for v in component if v in sizes), default=0)
    precision, recall = credit / (n + 2), credit / (m + 2)
    return WorkflowScore(*chain, precision, recall, f1(precision, recall),
                         matching=tuple(j + 1 if j >= 0 else -1 for j in match))


__all__ = ["MODES", "WorkflowScore", "score_compat", "score_corrected", "score_workflow"]
