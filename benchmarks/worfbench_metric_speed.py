"""WorfBench metric speed: our compat mode (batched, cached embeddings) vs a re-run of the official algorithm.

Both sides score the same predictions (WorfBench gold records x perturbations: dropped, merged, reordered,
renumbered, paraphrased steps, missing or extra edges, prose, garbage) with the same encoder, numpy
all-MiniLM-L6-v2 (or the exact-text matcher). The reference is tests/worfbench_reference.py, which follows the
official control flow: every gold order re-matches the nodes and every matching encodes its texts again,
without a cache, as WorfBench's evaluator does. Ours embeds every distinct text once, in one batch, and
re-uses matchings. The encoder gives a text the bit-identical vector in any batch, so the scores must agree
exactly.

The official flow encodes ~200 sentences per prediction, about a second per prediction on one CPU core, so
`--reference-limit R` re-runs it on the first R predictions only; the speed-up is then the ratio of the mean
times per prediction, and the score difference is taken over those R.

    python -m benchmarks.worfbench_metric_speed --gold ../shared/data/worfbench --per-gold 2 --reference-limit 300
    python -m benchmarks.worfbench_metric_speed --gold ../shared/data/worfbench --matcher exact
    python -m benchmarks.worfbench_metric_speed --synthetic 1500 --matcher exact   # no data needed

Prints both times, the ratio (target >= 10x) and the largest score difference (target 0).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the reference lives with the tests

from worfbench_reference import KEYS, official_scores, perturbations

from magic_envs.decomposition.matchers import (
    EmbeddingMatcher,
    ExactMatcher,
    MiniLMEncoder,
    cosine_matrix,
    unit_rows,
)
from magic_envs.decomposition.worfbench_metric import score_workflow
from magic_envs.decomposition.workflow import Workflow, format_workflow, parse_workflow


def load_golds(folder: Path) -> list[str]:
    golds = []
    for path in sorted(folder.glob("*/graph_eval.json")):
        golds += [r["conversations"][-1]["content"] for r in json.loads(path.read_text())]
    return golds


def synthetic_golds(count: int, rng: random.Random) -> list[str]:
    verbs = ["open", "search", "book", "pay", "email", "check", "cancel", "print", "sort", "rate"]
    golds = []
    for _ in range(count):
        n = rng.randint(2, 10)
        nodes = [f"{rng.choice(verbs)} the {rng.choice(verbs)}ing form {rng.randint(1, 5)}" for _ in range(n)]
        edges = [(0, 1)] + [(rng.randrange(max(1, k - 2), k), k) for k in range(2, n + 1)] + [(n, n + 1)]
        golds.append(format_workflow(Workflow(nodes, edges)))
    return golds


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, default=None, help="folder of WorfBench <task>/graph_eval.json files")
    parser.add_argument("--synthetic", type=int, default=0, help="use this many synthetic golds instead")
    parser.add_argument("--per-gold", type=int, default=2, help="perturbed predictions per gold (plus the gold)")
    parser.add_argument("--limit", type=int, default=3000, help="score at most this many predictions")
    parser.add_argument("--matcher", choices=("minilm", "exact"), default="minilm")
    parser.add_argument("--reference-limit", type=int, default=None,
                        help="re-run the official algorithm on the first R predictions only (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    golds = synthetic_golds(args.synthetic, rng) if args.synthetic or args.gold is None else load_golds(args.gold)
    cases = [(pred, gold) for gold in golds for _, pred in perturbations(gold, rng, count=args.per_gold)]
    rng.shuffle(cases)
    cases = cases[:args.limit]

    if args.matcher == "exact":
        ours_matcher, ref_similarity, encoder = ExactMatcher(), ExactMatcher().similarity, None
    else:
        encoder = MiniLMEncoder()
        encoder.encode(["warm up"])  # load the weights outside the timings

        def ref_similarity(pred_nodes, gold_nodes):  # what the official match_node does: encode both, cos_sim
            return cosine_matrix(unit_rows(encoder.encode(pred_nodes)), unit_rows(encoder.encode(gold_nodes)))
        ours_matcher = EmbeddingMatcher(encoder)

    start = time.perf_counter()
    if encoder is not None:  # one batch for every distinct step text (part of our timing)
        texts = {t for pair in cases for text in pair if (wf := parse_workflow(text)) for t in wf.labels()}
        ours_matcher.prefetch(sorted(texts))
    ours = [score_workflow(pred, gold, ours_matcher, mode="compat").as_dict() for pred, gold in cases]
    ours_time = time.perf_counter() - start

    checked = cases[:args.reference_limit] if args.reference_limit else cases
    start = time.perf_counter()
    reference = [official_scores(pred, gold, ref_similarity) for pred, gold in checked]
    ref_time = time.perf_counter() - start
    ref_time = ref_time * len(cases) / len(checked)  # projected to all predictions when a subset was re-run

    diff = max(abs(a[k] - b[k]) for a, b in zip(ours, reference) for k in KEYS)
    result = {"predictions": len(cases), "reference_predictions": len(checked), "matcher": args.matcher,
              "ours_s": round(ours_time, 3), "reference_s": round(ref_time, 3),
              "ratio": round(ref_time / max(ours_time, 1e-9), 1), "max_abs_diff": diff}
    if encoder is not None:
        sample = sorted(texts)[:2000]
        start = time.perf_counter()
        MiniLMEncoder().encode(sample)
        result["encoder_sentences_per_s"] = round(len(sample) / (time.perf_counter() - start), 1)
    print(f"{len(cases)} predictions, matcher={args.matcher}")
    print(f"  ours (batched, cached):        {ours_time:8.2f} s")
    projected = f" (projected from {len(checked)} re-run)" if len(checked) < len(cases) else ""
    print(f"  official algorithm (re-run):   {ref_time:8.2f} s{projected}")
    print(f"  speed-up: {result['ratio']}x    max |score difference|: {diff:.3g}")
    if "encoder_sentences_per_s" in result:
        print(f"  numpy MiniLM: {result['encoder_sentences_per_s']} sentences/s (first 2000 distinct step texts)")
    return result


if __name__ == "__main__":
    main()
