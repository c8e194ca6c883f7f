"""Building blocks shared by the WorfBench metric's two modes: the score record, node matching, longest
increasing subsequence, largest connected component."""

from __future__ import annotations

import functools
from bisect import bisect_left
from dataclasses import dataclass, fields

import numpy as np

MATCH_THRESHOLD = 0.6  # WorfBench keeps a node pair when its clipped cosine is strictly above this
MAX_STEPS = 256  # more steps than this scores zero (no real workflow comes close; the gold files peak at 24)


@dataclass(frozen=True)
class WorkflowScore:
    """WorfBench's scores of one prediction. `matching[i]` is the gold index (1..m; in compat mode 0 or m+1
    when a step matched the START/END label) of predicted step i+1, or -1 when unmatched; in compat mode it is
    the graph evaluation's matching (the chain evaluation re-matches for every gold order)."""

    precision_chain: float = 0.0
    recall_chain: float = 0.0
    f1_chain: float = 0.0
    precision_graph: float = 0.0
    recall_graph: float = 0.0
    f1_graph: float = 0.0
    matching: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, float]:
        """The six scores as floats (no matching)."""
        return {f.name: float(getattr(self, f.name)) for f in fields(self) if f.name != "matching"}


ZERO = WorkflowScore()


def clipped_similarity(matcher, pred_nodes, gold_nodes) -> np.ndarray:
    """WorfBench's score matrix: cosines with negatives clipped to 0, as float64 (float32 values)."""
    sims = np.asarray(matcher.similarity(list(pred_nodes), list(gold_nodes)), np.float32)
    sims = sims.reshape(len(pred_nodes), len(gold_nodes))
    return np.maximum(sims, np.float32(0)).astype(np.float64)


def official_matching(scores: np.ndarray) -> tuple[int, ...]:
    """WorfBench's matching: networkx's max_weight_matching on the pairs above the threshold, the graph built
    in the evaluator's order (rows as ints, columns as strings, row-major), which fixes how ties are broken.
    Returns, per row, the matched column or -1. Cached on the matrix."""
    return _official_matching(scores.shape, np.ascontiguousarray(scores, np.float64).tobytes())


@functools.lru_cache(maxsize=1 << 16)
def _official_matching(shape, data) -> tuple[int, ...]:
    import networkx as nx

    scores = np.frombuffer(data, np.float64).reshape(shape)
    graph = nx.Graph()
    for i in range(shape[0]):
        for j in range(shape[1]):
            if scores[i][j] > MATCH_THRESHOLD:
                graph.add_edge(i, str(j), weight=scores[i][j])
    mapping = [-1] * shape[0]
    for a, b in nx.max_weight_matching(graph):
        if isinstance(a, int):
            mapping[a] = int(b)
        else:
            mapping[b] = int(a)
    return tuple(mapping)


def aligned_matching(scores: np.ndarray) -> tuple[int, ...]:
    """A maximum-weight matching of the pairs above the threshold whose ties go to the pairing that keeps
    positions aligned (the smallest total |i - j|): a workflow scored against itself matches every repeated
    step to its own copy. The penalty stays below half the spacing of float32 cosines near 1, so it never
    overturns a real difference in weight. Returns, per row, the matched column or -1."""
    return _aligned_matching(scores.shape, np.ascontiguousarray(scores, np.float64).tobytes())


@functools.lru_cache(maxsize=1 << 14)
def _aligned_matching(shape, data) -> tuple[int, ...]:
    import networkx as nx

    scores = np.frombuffer(data, np.float64).reshape(shape)
    rows, cols = np.nonzero(scores > MATCH_THRESHOLD)
    eps = 2.0 ** -26 / (shape[0] * (shape[0] + shape[1]) + 1)
    graph = nx.Graph()
    for i, j in zip(rows.tolist(), cols.tolist()):
        graph.add_edge(i, ~j, weight=float(scores[i, j]) - eps * abs(i - j))
    mapping = [-1] * shape[0]
    for a, b in nx.max_weight_matching(graph):
        i, j = (a, ~b) if a >= 0 else (b, ~a)
        mapping[i] = j
    return tuple(mapping)


def lis_length(values) -> int:
    """Length of the longest strictly increasing subsequence."""
    tails: list = []
    for v in values:
        k = bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
        else:
            tails[k] = v
    return len(tails)


def component_sizes(nodes, edges) -> dict:
    """Union-find: the size of each undirected connected component, keyed by a representative node."""
    parent = {v: v for v in nodes}
    for u, v in edges:
        parent.setdefault(u, u)
        parent.setdefault(v, v)

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for u, v in edges:
        ru, rv = find(u), find(v)
        if ru != rv:
            parent[ru] = rv
    sizes: dict = {}
    for v in parent:
        root = find(v)
        sizes[root] = sizes.get(root, 0) + 1
    return {v: sizes[find(v)] for v in parent}


def f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
