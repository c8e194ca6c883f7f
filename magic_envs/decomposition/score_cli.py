"""`magic score-workflows`: score a file of predicted workflows against WorfBench gold, per task.

    magic score-workflows --gold shared/data/worfbench --pred preds.jsonl [--mode compat] [--matcher embedding]

Prediction files, detected per row:
* `{"id": ..., "pred": "<workflow text>"}` as JSON lines or one JSON list (matched to gold by id);
* WorfBench's own generation output (node_eval.py): a `.json` list of `{"query": <gold record>, "workflow":
  text}`, matched by `query["id"]`, or by position when a row has no id;
* WorfBench's `.jsonl` of OpenAI responses, `{"answer": {"choices": [{"message": {"content": text}}]}}`,
  matched by position (or by an "id" key when present).
Matching by position, as the official script does, needs a single gold file with as many records as rows.

For every task with at least one prediction it prints precision / recall / F1 of chain (WorfBench's
`--eval_type node`) and graph, averaged over ALL the task's gold records as the official script does: a
record without a prediction, or with one that does not parse, scores 0. The `all` row averages every
scored record. Exit status: 0 scored, 2 bad input (paths, formats, unknown ids), with the reason on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from magic_envs.decomposition.worfbench import MATCHERS, MODES, load_tasks, resolve_data_path

FIELDS = ("precision_chain", "recall_chain", "f1_chain", "precision_graph", "recall_graph", "f1_graph")
HEADERS = ("P_chain", "R_chain", "F1_chain", "P_graph", "R_graph", "F1_graph")


class InputError(Exception):
    """A problem with the user's files or arguments, reported as one line and exit status 2."""


def read_rows(path: Path) -> list:
    """The rows of a prediction file: JSON lines, or one JSON list."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read predictions {str(path)!r}: {error}") from error
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as error:
            raise InputError(f"{path}: not valid JSON ({error})") from error
        return rows
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise InputError(f"{path}, line {number}: not valid JSON ({error})") from error
    if not rows:
        raise InputError(f"{path} holds no prediction")
    return rows


def parse_row(row, where: str) -> tuple[str | None, str]:
    """(record id or None, predicted text) of one row in any supported format."""
    if not isinstance(row, dict):
        raise InputError(f"{where}: a prediction must be a JSON object, got {type(row).__name__}")
    if "pred" in row:
        rid, text = row.get("id"), row["pred"]
    elif "workflow" in row:
        query = row.get("query")
        rid, text = row.get("id", query.get("id") if isinstance(query, dict) else None), row["workflow"]
    elif "answer" in row:
        try:
            rid, text = row.get("id"), row["answer"]["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as error:
            raise InputError(f"{where}: 'answer' is not an OpenAI chat response ({error!r})") from error
    else:
        raise InputError(f"{where}: a prediction needs 'pred' (with 'id'), 'workflow' or 'answer'; "
                         f"got keys {sorted(row)}")
    if text is None:
        text = ""  # a model that answered nothing: scores 0, as an unparsable answer does
    if not isinstance(text, str):
        raise InputError(f"{where}: the predicted workflow must be text, got {type(text).__name__}")
    return (None if rid is None else str(rid)), text


def align(rows: list, tasks: dict[str, tuple[dict, ...]], pred_path: Path) -> dict[str, dict[str, str]]:
    """Task -> {record id: predicted text}."""
    if not isinstance(rows, list):
        raise InputError(f"{pred_path}: expected a JSON list or JSON lines of predictions")
    parsed = [parse_row(row, f"{pred_path}, row {i + 1}") for i, row in enumerate(rows)]
    owner = {str(r["id"]): name for name, records in tasks.items() for r in records}
    by_task: dict[str, dict[str, str]] = {}
    if all(rid is not None for rid, _ in parsed):
        unknown = [rid for rid, _ in parsed if rid not in owner]
        if unknown:
            raise InputError(f"{len(unknown)} prediction id(s) are not in the gold data, e.g. {unknown[:3]}")
        for rid, text in parsed:
            if rid in by_task.get(owner[rid], {}):
                raise InputError(f"two predictions for record {rid!r}")
            by_task.setdefault(owner[rid], {})[rid] = text
        return by_task
    if any(rid is not None for rid, _ in parsed):
        raise InputError(f"{pred_path}: some predictions have an id and some do not; give every row an id")
    if len(tasks) != 1:
        raise InputError("predictions without ids are matched by position, which needs one gold file "
                         f"(--gold points at {len(tasks)} tasks: {', '.join(tasks)}); give each row an id")
    (name, records), = tasks.items()
    if len(records) != len(parsed):
        raise InputError(f"{len(parsed)} predictions without ids for {len(records)} gold records of {name}: "
                         "matching by position needs as many")
    return {name: {str(r["id"]): text for r, (_, text) in zip(records, parsed)}}


def score_tasks(tasks, by_task, mode: str, matcher) -> dict[str, dict[str, float]]:
    """Task -> mean of each field over all its gold records (missing predictions score 0), plus `n`."""
    from magic_envs.decomposition.worfbench import read_record
    from magic_envs.decomposition.worfbench_metric import score_workflow

    results = {}
    for name in tasks:
        if name not in by_task:
            continue
        totals = dict.fromkeys(FIELDS, 0.0)
        for record in tasks[name]:
            pred = by_task[name].get(str(record["id"]))
            if pred is None:
                continue
            try:
                gold = read_record(record)[2]
            except ValueError as error:
                raise InputError(f"gold record {record.get('id')!r} of {name}: {error}") from error
            scores = score_workflow(pred, gold, matcher=matcher, mode=mode)
            for field in FIELDS:
                totals[field] += float(getattr(scores, field))
        n = len(tasks[name])
        results[name] = {"n": n, "predicted": len(by_task[name]), **{f: totals[f] / n for f in FIELDS}}
    return results


def make_matcher(kind: str, encoder: str | None):
    from magic_envs.decomposition.matchers import ExactMatcher, default_matcher, matcher_for

    if kind == "exact":
        return ExactMatcher()
    return matcher_for(encoder) if encoder else default_matcher()


def prefetch(matcher, tasks, by_task) -> None:
    """Embed every node text of the scored records in large batches up front (the encoder's fast path)."""
    if not hasattr(matcher, "prefetch"):
        return
    from magic_envs.decomposition.workflow import parse_workflow

    texts = []
    for name, preds in by_task.items():
        for record in tasks[name]:
            for text in (preds.get(str(record["id"])), (record.get("conversations") or [{}])[-1].get("content")):
                workflow = parse_workflow(text) if isinstance(text, str) else None
                texts += workflow.nodes if workflow is not None and workflow.n <= 256 else []
    unique = list(dict.fromkeys(texts))
    for start in range(0, len(unique), 256):
        matcher.prefetch(unique[start:start + 256])


def table(results: dict[str, dict[str, float]]) -> str:
    width = max(len(name) for name in [*results, "task"])
    lines = [f"{'task':<{width}} {'n':>5} {'pred':>5} " + " ".join(f"{h:>8}" for h in HEADERS)]
    for name, row in results.items():
        lines.append(f"{name:<{width}} {row['n']:>5} {row['predicted']:>5} "
                     + " ".join(f"{row[f]:>8.4f}" for f in FIELDS))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="magic score-workflows", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", required=True, help="WorfBench gold: a folder of <task>/graph_eval.json or "
                        "<task>.json files, or one such file")
    parser.add_argument("--pred", required=True, help="predictions: JSONL {id, pred} or WorfBench's own output")
    parser.add_argument("--mode", choices=MODES, default="compat",
                        help="compat: WorfBench's evaluator with its quirks (default); corrected: edges mapped "
                        "through the node matching")
    parser.add_argument("--matcher", choices=MATCHERS, default="embedding",
                        help="node matching: embedding (all-MiniLM-L6-v2, default) or exact text")
    parser.add_argument("--encoder", help="sentence encoder for --matcher embedding: all-MiniLM-L6-v2 (default, "
                        "numpy) or a sentence-transformers name such as all-mpnet-base-v2, WorfBench's own (needs "
                        "torch); exact:<name> computes as WorfBench's code does, call for call, for bit-equal "
                        "scores where steps repeat (slow); default: $MAGIC_EMBEDDING_MODEL")
    parser.add_argument("--output", help="also write the scores as JSON to this file")
    args = parser.parse_args(argv)
    try:
        try:
            tasks = load_tasks(str(resolve_data_path(args.gold)))
        except ValueError as error:
            raise InputError(str(error)) from error
        pred_path = Path(args.pred)
        if not pred_path.is_file():
            raise InputError(f"prediction file {str(pred_path)!r} does not exist")
        by_task = align(read_rows(pred_path), tasks, pred_path)
        matcher = make_matcher(args.matcher, args.encoder)
        prefetch(matcher, tasks, by_task)
        results = score_tasks(tasks, by_task, args.mode, matcher)
    except (InputError, ImportError) as error:
        print(f"magic score-workflows: {error}", file=sys.stderr)
        return 2
    total = sum(row["n"] for row in results.values())
    results["all"] = {"n": total, "predicted": sum(row["predicted"] for row in results.values()),
                      **{f: sum(row[f] * row["n"] for row in results.values()) / total for f in FIELDS}}
    label = getattr(matcher, "name", args.matcher)
    print(f"WorfBench scores (mode={args.mode}, matcher={label}); chain = WorfBench's --eval_type node\n")
    print(table(results))
    for name, row in results.items():
        missing = row["n"] - row["predicted"]
        if missing and name != "all":
            print(f"note: {missing} of {row['n']} {name} records have no prediction and score 0", file=sys.stderr)
    if args.output:
        try:
            Path(args.output).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            print(f"magic score-workflows: cannot write {args.output!r}: {error}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
