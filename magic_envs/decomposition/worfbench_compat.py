"""WorfBench's evaluator, quirks included (mode="compat"): the scores its official code gives, faster.

What the official code (zjunlp/WorfBench, evaluator/graph_evaluator.py and node_eval.py) does, and what is
reproduced here on purpose:

Parsing (workflow.py): steps numbered by order of appearance, never by the number written; prose lines like
"1. **Plan**" are steps; "Node" must appear and at least one edge must parse, else the record is skipped,
which counts zero in its averages (here: all six scores 0).

Chain (`t_eval_nodes`, WorfBench's f1_chain):
1. Gold orders: a gold list of >= 10 nodes *counting START and END* (so 8+ steps) is not sorted at all: its
   single "order" is the written node list WITH the "START" and "END" labels in it, so the gold has m+2
   entries and gold-against-gold recall is m/(m+2). Smaller golds use the first 20 orders of networkx's
   `all_topological_sorts` (its enumeration order), on nodes 0..m+1 with the written edges, with the labels
   START and END removed by text (a step written "START" would go too).
2. Predicted steps: every step except those whose text is exactly "START" or "END".
3. For each gold order the nodes are matched again from scratch (networkx maximum-weight matching on pairs
   with clipped cosine > 0.6; ties broken by networkx, which depends on the order), then the matched gold
   positions of the predicted steps, read in written order, give a longest strictly increasing
   subsequence whose DP starts every entry at 1: a prediction that matches nothing still counts 1 correct
   step (precision 1/n, recall 1/m, F1 2/(n+m)).
4. The best F1 over the orders wins, the first one on ties; precision and recall come from that order.
5. Repeated steps (common in ALFWorld: "go to sinkbasin 1" twice) tie in the matching, and networkx's
   tie-break may pair a step with another copy, crossing the order: gold against itself can fall to ~0.4.
6. Crashes of the official code (a cyclic gold or a gold edge past END when < 10 nodes, no predicted steps,
   an empty gold) give 0 here.

Graph (`t_eval_graph`, WorfBench's f1_graph):
7. Matching runs on the full node lists, labels included: "START" meets "START" and "END" meets "END" by
   their text (cosine ~1), and a step may match a label.
8. Edges are NOT mapped through the matching: a predicted edge (u, v) counts as common when both u and v
   are matched predicted nodes and the gold has the edge with the same NUMBERS (u, v) between two matched
   gold nodes. So a prediction with the right steps in another order loses its edges, and one whose step 2
   matches gold step 5 gets credit for gold's (1, 2) if it wrote (1, 2).
9. The score is the size of the largest connected component (undirected) of the matched nodes under the
   common edges, counted once over the predicted and once over the gold matched nodes (the same number
   whenever there is a common edge; 1 when there is none), over n+2 (precision) and m+2 (recall), labels
   included: any parsable prediction scores at least 1/(n+2) and 1/(m+2).

Ties and torch: the official code computes cosines with torch, whose matrix product can give two copies of
the same text cosines that differ in the last bit depending on their column (e.g. 1.0000001 and 1.0000002).
Where steps repeat (quirk 5), or a step is written "START", that float noise, not the texts, then decides
networkx's choice. Here equal texts always get bit-equal cosines and networkx's own tie-break decides, so the
scores equal the official algorithm's exactly for any similarity that is a function of the two texts; on
records with repeated steps the official code's own result depends on the BLAS library (measured on the nine
WorfBench test files with perturbed predictions: 402 of 15,022 records differ, every one with repeated texts).
For bit-equal scores there too, use the matcher `BitExactMatcher` (encoder name "exact:<name>"): it computes
each similarity as the official code does (sentence-transformers, torch's cos_sim, one call per gold order),
and compat scoring then re-asks it for every order instead of reusing one matrix.

Speed, same results: embeddings come from the matcher's cache instead of being re-encoded for every gold
order; gold orders are computed once per gold; a matching is cached on its score matrix; and when the
above-threshold scores are pairwise distinct (no possible tie) the maximum-weight matching is unique, so the
one found for the first gold order is permuted for the others instead of re-solved. tests/worfbench_reference.py
runs the official algorithm step by step and tests/test_workflow_metric.py checks both agree.
"""

from __future__ import annotations

import functools
from itertools import islice

import numpy as np

from magic_envs.decomposition.worfbench_core import (
    MATCH_THRESHOLD,
    WorkflowScore,
    clipped_similarity,
    component_sizes,
    lis_length,
    official_matching,
)
from magic_envs.decomposition.workflow import END, START, Workflow

MAX_ORDERS = 20
_LABELS = (START, END)


@functools.lru_cache(maxsize=4096)
def gold_orders(nodes: tuple[str, ...], edges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, ...], ...] | None:
    """The evaluator's gold orders, as tuples of indices into the label list; None where it crashes."""
    import networkx as nx

    labels = (START, *nodes, END)
    if len(labels) >= 10:
        return (tuple(range(len(labels))),)
    if any(u >= len(labels) or v >= len(labels) for u, v in edges):
        return None  # the official code indexes the label list with it: IndexError
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(labels)))
    graph.add_edges_from(edges)
    try:
        sorts = list(islice(nx.all_topological_sorts(graph), MAX_ORDERS))
    except nx.NetworkXException:  # a cycle: the official code crashes
        return None
    return tuple(tuple(i for i in order if labels[i] not in _LABELS) for order in sorts)


def _chain(pred: Workflow, gold: Workflow, matcher) -> tuple[float, float, float]:
    orders = gold_orders(tuple(gold.nodes), tuple(gold.edges))
    pred_nodes = [t for t in pred.nodes if t not in _LABELS]
    if orders is None or not pred_nodes or not orders[0]:
        return 0.0, 0.0, 0.0
    labels = gold.labels()
    if getattr(matcher, "per_call", False):  # re-ask the matcher for every order, as the official code does
        best = (0.0, 0.0, 0.0)
        for order in orders:
            mapping = official_matching(clipped_similarity(matcher, pred_nodes, [labels[i] for i in order]))
            best = _better(best, mapping, len(order), len(pred_nodes))
        return best
    scores = clipped_similarity(matcher, pred_nodes, labels)
    first = scores[:, list(orders[0])]
    above = first[first > MATCH_THRESHOLD]
    unique = len(np.unique(above)) == len(above)
    if unique:  # the optimum is unique, so every order's matching is this one, permuted
        base = [orders[0][j] if j >= 0 else -1 for j in official_matching(first)]
    best = (0.0, 0.0, 0.0)
    for order in orders:
        if unique:
            where = {label: k for k, label in enumerate(order)}
            mapping = [where[label] if label >= 0 else -1 for label in base]
        else:
            mapping = official_matching(scores[:, list(order)])
        best = _better(best, mapping, len(order), len(pred_nodes))
    return best


def _better(best, mapping, m: int, n: int) -> tuple[float, float, float]:
    """The chain scores of one order's matching, if its F1 beats `best` (the first order wins ties)."""
    correct = max(1, lis_length([j for j in mapping if j != -1]))  # the DP starts every entry at 1
    recall, precision = correct / m, correct / n
    f1_score = 2 * recall * precision / (recall + precision)
    return (precision, recall, f1_score) if f1_score > best[2] else best


def _graph(pred: Workflow, gold: Workflow, matcher) -> tuple[tuple[float, float, float], tuple[int, ...]]:
    pred_labels, gold_labels = pred.labels(), gold.labels()
    mapping = official_matching(clipped_similarity(matcher, pred_labels, gold_labels))
    matched_pred = {i for i, j in enumerate(mapping) if j != -1}
    matched_gold = {j for j in mapping if j != -1}
    gold_edges = {e for e in gold.edges if e[0] in matched_gold and e[1] in matched_gold}
    # Common edges compare raw index pairs: the prediction's numbers against the gold's, unmapped (quirk 8).
    public = [e for e in pred.edges if e[0] in matched_pred and e[1] in matched_pred and e in gold_edges]
    if not matched_pred:
        return (0.0, 0.0, 0.0), mapping  # max() of no component: the official code crashes
    pred_size = max(component_sizes(matched_pred, public).values())
    gold_size = max(component_sizes(matched_gold, public).values())
    precision, recall = pred_size / len(pred_labels), gold_size / len(gold_labels)
    return (precision, recall, 2 * precision * recall / (precision + recall)), mapping


def score_compat(pred: Workflow, gold: Workflow, matcher) -> WorkflowScore:
    """WorfBench's official scores of a parsed prediction against a parsed gold."""
    chain = _chain(pred, gold, matcher)
    graph, mapping = _graph(pred, gold, matcher)
    return WorkflowScore(*chain, *graph, matching=tuple(mapping[1:len(pred.nodes) + 1]))
