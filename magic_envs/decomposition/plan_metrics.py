"""MagicEval-Plan's Step and Embedding metrics of a plan (DESIGN.md §10), on WorfBench-style node matching.

A plan is its list of steps: a workflow text (parsed as WorfBench does, see workflow.py), a `Workflow`, or a
list of step strings. Steps are matched as in WorfBench's metric (corrected mode): clipped cosine, pairs
strictly above 0.6, maximum-weight matching with ties kept aligned.

* step: 1.0 when the plan has exactly as many steps as the gold and every gold step is matched (so the
  matching is one-to-one onto the gold), else 0.0 (strict: the right steps in the right number).
* embedding: the mean similarity of matched steps over the longer of the two plans, an unmatched step
  counting 0: sum of matched similarities / max(n_pred, n_gold). It equals the plain mean over matched pairs
  when every step is matched, and cannot be raised by leaving steps out or padding the plan.

An unparsable or empty prediction scores 0 on both; nothing raises.

    >>> from magic_envs.decomposition.matchers import ExactMatcher
    >>> plan_metrics(["open the app", "log in"], ["Open the app", "Log in"], ExactMatcher())
    {'step': 1.0, 'embedding': 1.0}
    >>> plan_metrics(["open the app"], ["Open the app", "Log in"], ExactMatcher())
    {'step': 0.0, 'embedding': 0.5}
"""

from __future__ import annotations

from magic_envs.decomposition.worfbench_core import (
    MAX_STEPS,
    aligned_matching,
    clipped_similarity,
)
from magic_envs.decomposition.workflow import Workflow, parse_workflow


def plan_steps(plan) -> list[str] | None:
    """The steps of a plan given as text, Workflow or list of strings; None when there are none to read."""
    if isinstance(plan, (list, tuple)):
        return [str(step) for step in plan]
    wf = parse_workflow(plan)
    return None if wf is None else list(wf.nodes)


def plan_metrics(pred, gold, matcher=None) -> dict[str, float]:
    """{"step": 0.0 | 1.0, "embedding": float in [0, 1]} of `pred` against `gold` (module docstring)."""
    pred_steps, gold_steps = plan_steps(pred), plan_steps(gold)
    if not pred_steps or not gold_steps or len(pred_steps) > MAX_STEPS or len(gold_steps) > MAX_STEPS:
        return {"step": 0.0, "embedding": 0.0}
    if matcher is None:
        from magic_envs.decomposition.matchers import default_matcher
        matcher = default_matcher()
    scores = clipped_similarity(matcher, pred_steps, gold_steps)
    match = aligned_matching(scores)
    pairs = [(i, j) for i, j in enumerate(match) if j >= 0]
    step = float(len(pred_steps) == len(gold_steps) and len(pairs) == len(gold_steps))
    total = sum(min(float(scores[i, j]), 1.0) for i, j in pairs)
    return {"step": step, "embedding": total / max(len(pred_steps), len(gold_steps))}


__all__ = ["Workflow", "plan_metrics", "plan_steps"]
