"""Paper-style tables from episode records: the seed's Tables 2-5 laid out for any set of policies.

Every cell is a mean with its standard error and episode count, over the episodes that fit the cell (env id,
category or domain, split); the standard error is over tasks, each task at its mean over its trials. A cell no
episode fits reads "–". Metric values below 0 mean "not measured" (the LLM judge when no judge is configured) and
are left out, so such a cell reads "n/a".
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from magic_envs.procedures.reward import pass_hat_k

CATEGORIES = (("general", "General"), ("dependency", "Dependency"), ("condition", "Condition"),
              ("context_inheritance", "Context Inh."))


@dataclass(frozen=True)
class Column:
    label: str
    env_id: str
    value: str = "success"  # "success", "score", a metric name, or "success<=N" (success within N steps)
    group: str | None = None  # the task's category or domain
    split: str | None = None


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[Column, ...]
    note: str = ""


def _per_category(env_id: str, metrics: tuple[tuple[str, str], ...]) -> tuple[Column, ...]:
    return tuple(Column(f"{label} {name}", env_id, metric, group)
                 for group, label in CATEGORIES for metric, name in metrics)


TABLES = (
    Table("MagicEval-Plan", _per_category("magic/Decompose-v0", (("step", "Step"), ("embedding", "Emb."),
                                                                  ("llm", "LLM"))),
          "magic/Decompose-v0: Step (right step count, every gold step matched), Embedding (mean similarity of "
          "matched steps), LLM (judge score; n/a without MAGIC_JUDGE_BASE_URL)."),
    Table("MagicEval-Tool", _per_category("magic/ToolPlan-v0", (("name_accuracy", "Name"),
                                                                 ("argument_accuracy", "Arg.")))),
    Table("WorfBench", (Column("F1 chain", "magic/WorfBench-v0", "f1_chain"),
                        Column("F1 graph", "magic/WorfBench-v0", "f1_graph"),
                        Column("generated F1 chain", "magic/Decompose-v0", "f1_chain"),
                        Column("generated F1 graph", "magic/Decompose-v0", "f1_graph"))),
    Table("NATURAL PLAN", (Column("Trip", "magic/Trip-v0"), Column("Meeting", "magic/Meeting-v0"),
                           Column("Calendar", "magic/Calendar-v0"))),
    Table("tau2-bench", (Column("Retail", "magic/Tau2-v0", group="retail"),
                         Column("Airline", "magic/Tau2-v0", group="airline"),
                         Column("generated Retail", "magic/Retail-v0"),
                         Column("generated Airline", "magic/Airline-v0")),
          "Success = reward 1 (pass^1); with several trials the run table adds pass^k."),
    Table("ALFWorld", (Column("IID Succ.", "magic/ALFWorld-v0", split="test"),
                       Column("IID Succ. (49 steps)", "magic/ALFWorld-v0", "success<=49", split="test"),
                       Column("OOD Succ.", "magic/ALFWorld-v0", split="ood"),
                       Column("OOD Succ. (49 steps)", "magic/ALFWorld-v0", "success<=49", split="ood"),
                       Column("OOD task type", "magic/ALFWorld-v0", split="ood_task_type")),
          "Success within the env's 50 steps (GiGPO's budget) and within 49 actions (ReAct's)."),
    Table("BFCL", tuple(Column(c.replace("_", " "), "magic/BFCL-v0", group=c) for c in (
        "simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "java", "javascript", "live_simple",
        "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance"))
          + tuple(Column(c.replace("_", " "), "magic/BFCLMultiTurn-v0", group=c) for c in (
              "multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"))),
    Table("Tool execution", (Column("Workspace IID", "magic/Workspace-v0", split="test"),
                             Column("Workspace OOD", "magic/Workspace-v0", split="ood"),
                             Column("Workspace sub-goals", "magic/Workspace-v0", "subgoals"),
                             Column("Tool calls (generated)", "magic/ToolCall-v0"))),
)


def group_of(env_id: str, task: dict | None) -> str:
    """The category or domain an episode's task belongs to ('' when it has none)."""
    task = task or {}
    for key in ("category", "task_type", "domain"):
        if isinstance(task.get(key), str):
            return task[key]
    if isinstance(task.get("id"), str) and env_id in ("magic/BFCL-v0", "magic/BFCLMultiTurn-v0"):
        return task["id"].rsplit("_", 1)[0]  # BFCL ids are <category>_<index>
    return ""


def mean_se(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(var / n)


def task_means(rows: list[dict], values: list[float]) -> list[float]:
    """Each task's value (in order of first appearance) at its mean over its trials (`--trials`): the trials of one
    task share it, so they are not independent samples. With one trial a task, the values themselves."""
    per_task: dict[tuple, list[float]] = {}
    for r, v in zip(rows, values):
        per_task.setdefault((r["run"], json.dumps(r["key"]), r.get("task_id")), []).append(v)
    return [sum(v) / len(v) for v in per_task.values()]


def task_mean_se(rows: list[dict], values: list[float]) -> tuple[float, float]:
    """Mean and standard error over tasks, each task counted once (`task_means`)."""
    return mean_se(task_means(rows, values))


def value_of(row: dict, value: str) -> float | None:
    if value == "success":
        return float(row["success"])
    if value == "score":
        return float(row["score"])
    if value.startswith("success<="):
        return float(row["success"] and row["steps"] <= int(value.split("<=")[1]))
    v = row.get("metrics", {}).get(value)
    return None if v is None or v < 0 else float(v)


def cell(rows: list[dict], column: Column) -> dict | None:
    """{"mean", "se", "n"} over the episodes that fit the column; None when none does."""
    fit = [r for r in rows if r["env_id"] == column.env_id and (column.group is None or r["group"] == column.group)
           and (column.split is None or r["split"] == column.split)]
    scored = [(r, v) for r, v in ((r, value_of(r, column.value)) for r in fit) if v is not None]
    if not fit:
        return None
    if not scored:
        return {"mean": None, "se": None, "n": 0}
    values = [v for _, v in scored]
    mean, se = task_mean_se([r for r, _ in scored], values)
    return {"mean": mean, "se": se, "n": len(values)}


def paper_tables(rows: list[dict]) -> dict[str, dict[str, dict[str, dict | None]]]:
    """title -> policy -> column label -> cell, for the tables that any episode fits."""
    out = {}
    for table in TABLES:
        ids = {c.env_id for c in table.columns}
        mine = [r for r in rows if r["env_id"] in ids]
        if mine:
            out[table.title] = {policy: {c.label: cell([r for r in mine if r["policy"] == policy], c)
                                         for c in table.columns}
                                for policy in sorted({r["policy"] for r in mine})}
    return out


def run_table(rows: list[dict], trials: int) -> list[dict]:
    """Per run (env, split, knobs) and policy: success and score with standard errors, pass^k for k <= trials."""
    out = []
    for run, policy in sorted({(r["run"], r["policy"]) for r in rows}):
        mine = [r for r in rows if r["run"] == run and r["policy"] == policy]
        per_task: dict[str, list[bool]] = {}
        for r in mine:
            per_task.setdefault(str(r["key"]), []).append(bool(r["success"]))
        entry = {"run": run, "policy": policy, "n": len(mine),
                 "success": task_mean_se(mine, [float(r["success"]) for r in mine]),
                 "score": task_mean_se(mine, [float(r["score"]) for r in mine])}
        if trials > 1:
            entry["pass^k"] = [pass_hat_k(per_task, k) for k in range(1, trials + 1)]
        out.append(entry)
    return out


def format_cell(c: dict | None) -> str:
    if c is None:
        return "–"
    if c["mean"] is None:
        return "n/a"
    return f"{100 * c['mean']:.1f} ±{100 * c['se']:.1f} ({c['n']})"


def markdown(tables: dict, runs: list[dict], trials: int) -> str:
    """The run table, then each paper table; rates in %, ± standard error, (episodes)."""
    ks = range(1, trials + 1) if trials > 1 else range(0)
    lines = ["## Runs", "", "| run | policy | n | success % | score % |" + "".join(f" pass^{k} |" for k in ks),
             "|---|---|---:|---:|---:|" + "---:|" * len(ks)]
    for r in runs:
        (s, s_se), (c, c_se) = r["success"], r["score"]
        passes = "".join(f" {100 * p:.1f} |" for p in r.get("pass^k", []))
        lines.append(f"| {r['run']} | {r['policy']} | {r['n']} | {100 * s:.1f} ±{100 * s_se:.1f} | "
                     f"{100 * c:.1f} ±{100 * c_se:.1f} |{passes}")
    for table in TABLES:
        if table.title not in tables:
            continue
        labels = [c.label for c in table.columns]
        lines += ["", f"## {table.title}", "", "| policy | " + " | ".join(labels) + " |",
                  "|---|" + "---:|" * len(labels)]
        for policy, cells in tables[table.title].items():
            lines.append(f"| {policy} | " + " | ".join(format_cell(cells[label]) for label in labels) + " |")
        if table.note:
            lines += ["", table.note]
    return "\n".join(lines) + "\n"
