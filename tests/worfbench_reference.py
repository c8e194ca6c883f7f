"""WorfBench's official evaluator, re-implemented step by step for tests and benchmarks only.

This is our own straightforward re-implementation of the algorithm of zjunlp/WorfBench's evaluator
(node_eval.py `workflow_to_graph_list`, evaluator/graph_evaluator.py `t_eval_nodes`, `t_eval_plan`,
`t_eval_graph`, `match_node`, `all_topological_sorts`, `largest_connected_component`), written from reading
it, not copied. It keeps the official control flow on purpose: the node lists are re-matched for every gold
order, every matching re-asks the similarity function (so with an encoder-backed `similarity` the texts are
re-encoded on every call, as the official code does), all topological sorts are listed before the first 20
are kept. During development it was checked against their real code (extracted from the repository into a
scratch directory and run with sentence-transformers): identical scores on every gold record of the nine
WorfBench test files and on perturbed predictions (dropped, merged, reordered, renumbered, paraphrased nodes,
missing and extra edges, prose, garbage), with an exact-text encoder and with all-MiniLM-L6-v2.

Where the official code crashes (and its evaluation script dies), `official_scores` returns zeros, as
magic_envs' compat mode does.

`perturbations(gold_text, rng)` makes the perturbed predictions used by the tests and the benchmark.
"""

from __future__ import annotations

import random
import re

import networkx as nx
import numpy as np

KEYS = ("precision_chain", "recall_chain", "f1_chain", "precision_graph", "recall_graph", "f1_graph")


def parse(text):
    """node_eval.workflow_to_graph_list: {"nodes": [START, ..., END], "edges": [(u, v)]} or [] when skipped."""
    try:
        if "Node" not in text:
            return []
        nodes = [m.strip() for m in re.compile(r"\d+[:.] (.+)").findall(text)]
        nodes.insert(0, "START")
        nodes.append("END")
        found = re.compile(r"\(\s*(\d+|START)\s*,\s*(\d+|END)\s*\)").findall(text)
        if len(found) == 0:
            return []
        edges = []
        for u, v in found:
            u = "0" if u == "START" else u
            v = str(len(nodes) - 1) if v == "END" else v
            edges.append((int(u), int(v)))
        return {"nodes": nodes, "edges": edges}
    except Exception:  # noqa: BLE001 - the official parser swallows every error and skips the record
        return []


def topological_orders(graph):
    """graph_evaluator.all_topological_sorts."""
    if len(graph["nodes"]) >= 10:
        return [graph["nodes"]]
    g = nx.DiGraph()
    g.add_nodes_from(range(len(graph["nodes"])))
    g.add_edges_from(graph["edges"])
    sorts = list(nx.all_topological_sorts(g))
    return [[graph["nodes"][i] for i in s if graph["nodes"][i] not in ["START", "END"]] for s in sorts][:20]


def match_nodes(pred, gold, similarity, threshold=0.6):
    """graph_evaluator.match_node: {pred index: gold index or -1}."""
    scores = np.maximum(np.asarray(similarity(pred, gold), np.float32).reshape(len(pred), len(gold)), 0)
    matrix = np.zeros((len(pred), len(gold)))
    for i in range(len(pred)):
        for j in range(len(gold)):
            matrix[i][j] = scores[i][j]
    g = nx.Graph()
    for i in range(len(pred)):
        for j in range(len(gold)):
            if matrix[i][j] > threshold:
                g.add_edge(i, str(j), weight=matrix[i][j])
    mapping = {}
    for a, b in nx.max_weight_matching(g):
        if type(a) == int:
            mapping[int(a)] = int(b)
        else:
            mapping[int(b)] = int(a)
    for i in range(len(pred)):
        if i not in mapping:
            mapping[i] = -1
    return mapping


def eval_plan(pred, gold, similarity):
    """graph_evaluator.t_eval_plan with order=True."""
    mapping = match_nodes(pred, gold, similarity)
    dp = np.ones(len(pred))
    for i in range(len(pred)):
        for j in range(i):
            if mapping[i] == -1 or mapping[j] == -1:
                continue
            if mapping[i] > mapping[j]:
                dp[i] = max(dp[i], dp[j] + 1)
    correct = int(max(dp))
    recall, precision = correct / len(gold), correct / len(pred)
    return {"precision": precision, "recall": recall, "f1_score": 2 * recall * precision / (recall + precision)}


def eval_chain(pred_graph, gold_graph, similarity):
    """graph_evaluator.t_eval_nodes (an exception here is a crash of the official code)."""
    orders = topological_orders(gold_graph)
    pred = [p for p in pred_graph["nodes"] if p not in ["START", "END"]]
    best = {"precision": 0, "recall": 0, "f1_score": 0}
    for gold in orders:
        result = eval_plan(pred, gold, similarity)
        if result["f1_score"] > best["f1_score"]:
            best = result
    return best


def largest_component(nodes, edges):
    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    return len(max(nx.connected_components(g), key=len))


def eval_graph(pred_graph, gold_graph, similarity):
    """graph_evaluator.t_eval_graph."""
    pred, gold = pred_graph["nodes"], gold_graph["nodes"]
    mapping = match_nodes(pred, gold, similarity)
    matched_pred = [k for k, v in mapping.items() if v != -1]
    matched_gold = [v for k, v in mapping.items() if v != -1]
    pred_edges = [(u, v) for u, v in pred_graph["edges"] if u in matched_pred and v in matched_pred]
    gold_edges = [(u, v) for u, v in gold_graph["edges"] if u in matched_gold and v in matched_gold]
    public = [e for e in pred_edges if e in gold_edges]
    precision = largest_component(matched_pred, public) / len(pred)
    recall = largest_component(matched_gold, public) / len(gold)
    return {"precision": precision, "recall": recall, "f1_score": 2 * precision * recall / (precision + recall)}


def official_scores(pred_text: str, gold_text: str, similarity) -> dict[str, float]:
    """The six official scores of one record (node_eval.eval_workflow's per-record step, for both eval types);
    a skipped prediction scores 0, and so does a crash of the official code."""
    out = dict.fromkeys(KEYS, 0.0)
    gold, pred = parse(gold_text), parse(pred_text)
    if pred == []:
        return out
    for name, fn in (("chain", eval_chain), ("graph", eval_graph)):
        try:
            r = fn(pred, gold, similarity)
        except Exception:  # noqa: BLE001, S112 - the official script would die here; compat scores 0
            continue
        out[f"precision_{name}"], out[f"recall_{name}"], out[f"f1_{name}"] = (
            float(r["precision"]), float(r["recall"]), float(r["f1_score"]))
    return out


# ---------------------------------------------------------------- perturbed predictions (tests, benchmark)

_SWAPS = {"go to": "walk to", "take": "pick up", "search": "look up", "find": "locate", "click": "press",
          "the": "that", "and": "&", "Calculate": "Compute", "Identify": "Determine", "your": "the"}
_JUNK = ["juggle three oranges", "paint the fence blue", "sing a lullaby", "feed the goldfish", "count the stars"]


def _write(nodes, edges, labels=None):
    labels = labels or list(range(1, len(nodes) + 1))
    end = len(nodes) + 1
    lines = ["Node:"] + [f"{k}: {t}" for k, t in zip(labels, nodes)]
    pairs = [f"({'START' if u == 0 else u},{'END' if v == end else v})" for u, v in edges]
    return "\n".join(lines + ["Edge: " + " ".join(pairs)])


def _paraphrase(text, rng):
    words = text.split()
    roll = rng.random()
    if roll < 0.3 and len(words) > 2:
        del words[rng.randrange(len(words))]
    elif roll < 0.6:
        text = " ".join(words)
        for a, b in _SWAPS.items():
            if a in text and rng.random() < 0.7:
                text = text.replace(a, b, 1)
        return text
    elif roll < 0.8:
        words = [w.lower() for w in words] + ["please"]
    else:
        words = words[len(words) // 2:] or words
    return " ".join(words)


def perturbations(gold_text: str, rng: random.Random, count: int = 6) -> list[tuple[str, str]]:
    """[(kind, prediction text)]: the gold itself plus `count` random perturbations of it."""
    g = parse(gold_text)
    if not g:
        return [("gold", gold_text)]
    nodes, edges = g["nodes"][1:-1], list(g["edges"])
    names = rng.sample(sorted(_KINDS), min(count, len(_KINDS)))
    return [("gold", gold_text)] + [(k, _KINDS[k](gold_text, nodes, edges, rng)) for k in names]


def _relabel(nodes, edges, keep):
    """Edges for the steps `keep` (old indices, in their new written order), bridging dropped steps."""
    n = len(nodes)
    new = {old: k + 1 for k, old in enumerate(keep)}
    new[0], new[n + 1] = 0, len(keep) + 1
    succ = {}
    for u, v in edges:
        succ.setdefault(u, []).append(v)
    out = []
    for u in [0, *keep]:
        stack, seen = list(succ.get(u, [])), set()
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in new:
                out.append((new[u], new[v]))
            else:
                stack += succ.get(v, [])
    return list(dict.fromkeys(out))


def _drop(text, nodes, edges, rng):
    n = len(nodes)
    keep = sorted(rng.sample(range(1, n + 1), max(1, n - max(1, n // 3))))
    return _write([nodes[i - 1] for i in keep], _relabel(nodes, edges, keep))


def _drop_raw(text, nodes, edges, rng):  # a node line deleted, the edges left as written
    lines, k = text.split("\n"), rng.randrange(1, max(2, len(nodes) + 1))
    return "\n".join(lines[:k] + lines[k + 1:])


def _merge(text, nodes, edges, rng):
    n = len(nodes)
    if n < 2:
        return text
    i = rng.randrange(n - 1)
    keep = list(range(1, i + 2)) + list(range(i + 3, n + 1))
    return _write(nodes[:i] + [nodes[i] + " and " + nodes[i + 1]] + nodes[i + 2:], _relabel(nodes, edges, keep))


def _reorder(text, nodes, edges, rng):  # the same graph, numbered in another order
    keep = rng.sample(range(1, len(nodes) + 1), len(nodes))
    return _write([nodes[i - 1] for i in keep], _relabel(nodes, edges, keep))


def _duplicate(text, nodes, edges, rng):
    if not nodes:
        return text
    i = rng.randrange(len(nodes))
    return _write(nodes[:i + 1] + nodes[i:], _relabel(nodes, edges, list(range(1, len(nodes) + 1))))


def _finish(text, nodes, edges, rng):
    n = len(nodes)
    return _write(nodes + ["Finish"], [(u, v) for u, v in edges if v != n + 1]
                  + [(u, n + 1) for u, v in edges if v == n + 1] + [(n + 1, n + 2)])


_KINDS = {
    "drop": _drop,
    "drop_raw": _drop_raw,
    "merge": _merge,
    "reorder": _reorder,
    "duplicate": _duplicate,
    "finish": _finish,
    "shuffle_lines": lambda text, nodes, edges, rng: _write(rng.sample(nodes, len(nodes)), edges),
    "renumber": lambda text, nodes, edges, rng: _write(nodes, edges, labels=[
        rng.choice([k * 10, len(nodes) - k + 1, k + 1]) for k in range(1, len(nodes) + 1)]),
    "paraphrase": lambda text, nodes, edges, rng: _write(
        [_paraphrase(t, rng) if rng.random() < 0.7 else t for t in nodes], edges),
    "missing_edges": lambda text, nodes, edges, rng: _write(nodes, [e for e in edges if rng.random() < 0.6]
                                                            or edges[:1]),
    "extra_edges": lambda text, nodes, edges, rng: _write(nodes, edges + [
        (rng.randrange(0, len(nodes) + 1), rng.randrange(1, len(nodes) + 3)) for _ in range(rng.randrange(1, 4))]),
    "garbage": lambda text, nodes, edges, rng: _write(rng.sample(_JUNK, 3), [(0, 1), (1, 2), (2, 3), (3, 4)]),
    "prose": lambda text, nodes, edges, rng: "Sure! Here is the workflow.\n" + text + "\nStep 1. check it twice.",
    "no_edges": lambda text, nodes, edges, rng: text.split("Edge")[0],
    "empty": lambda text, nodes, edges, rng: "Node:\nEdge: (START,END)",
    "start_label": lambda text, nodes, edges, rng: _write(["START", *nodes], [(0, 1), (1, 2)] + [
        (u + 1, v + 1) for u, v in edges if u]),
    "mixed": lambda text, nodes, edges, rng: _write(
        [_paraphrase(t, rng) for t in rng.sample(nodes, len(nodes))] + rng.sample(_JUNK, 1),
        [e for e in edges if rng.random() < 0.8] or [(0, 1)]),
}
