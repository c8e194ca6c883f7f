"""magic/Decompose-v0: decompose a user's request into a workflow graph of subtasks, scored like WorfBench."""

from __future__ import annotations

import numpy as np

from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.decomposition import generator
from magic_envs.decomposition.composition import CATEGORIES
from magic_envs.decomposition.judge import Judge
from magic_envs.decomposition.matchers import ExactMatcher, default_matcher
from magic_envs.decomposition.plan_metrics import plan_metrics
from magic_envs.decomposition.workflow import Workflow, format_workflow, parse_workflow
from magic_envs.decomposition.worfbench_metric import score_workflow
from magic_envs.scheduling.common import knob_range
from magic_envs.tool_planning.universe import load_universe

METRIC_NAMES = ("precision_chain", "recall_chain", "f1_chain", "precision_graph", "recall_graph", "f1_graph",
                "step", "embedding", "llm")
MODES, MATCHERS = ("corrected", "compat"), ("embedding", "exact")
MAX_ANSWER_NODES = 100  # five times the largest workflow: past that an answer is a flood, scored 0 unread
INSTRUCTIONS = (
    "You are a helpful task planner. Break the user's task into subtasks: each node of the plan is one subtask "
    "that one tool can do (the tools are listed with the task when a list is given). Some subtasks need an "
    "earlier one's result or must wait for it because the user asks for that order; the others are "
    "independent and can run in parallel. Write the plan as a graph from START to END in exactly this format:\n"
    "Node:\n1: <subtask>\n2: <subtask>\n...\nEdge: (START,1) (1,2) ... (n,END)\n"
    "An edge (i,j) means that subtask j comes after subtask i. Every subtask without a predecessor follows "
    "START and every subtask without a successor leads to END. Write each subtask as one short imperative "
    "sentence with the concrete values from the task (dates as YYYY-MM-DD, times as HH:MM); a subtask that "
    "only runs under a condition starts with \"If ...,\". Answer with the plan only: no tool can be called.")


def reachable(wf: Workflow, label=lambda i: i) -> set | None:
    """The (a, b) pairs of steps where b comes after a, through the steps' edges; None on a cycle."""
    n = wf.n
    after = {i: set() for i in range(1, n + 1)}
    for a, b in wf.valid_edges():
        if 1 <= a <= n and 1 <= b <= n:
            after[a].add(b)
    closure: dict[int, set] = {}

    def walk(i, path):
        if i in path:
            raise ValueError("cycle")
        if i not in closure:
            closure[i] = set().union(*({j} | walk(j, path | {i}) for j in after[i])) if after[i] else set()
        return closure[i]
    try:
        return {(label(a), label(b)) for a in after for b in walk(a, frozenset())}
    except ValueError:
        return None


def same_order(pred: Workflow | None, gold: Workflow, matching, gold_order: set | None = None) -> bool:
    """Whether `pred` is the gold workflow up to numbering and wording: its steps match the gold's one to one
    and one step comes after another exactly where it does in the gold (the same partial order, so an extra
    edge implied by others is no fault). WorfBench's f1 can reach 1.0 without this: its graph score counts
    the largest connected part of the common edges, and START and END connect parallel branches anyway."""
    if pred is None or pred.n != gold.n or sorted(matching) != list(range(1, gold.n + 1)):
        return False
    mine = reachable(pred, lambda i: matching[i - 1])
    return mine is not None and mine == (reachable(gold) if gold_order is None else gold_order)


class DecomposeEnv(MagicEnv):
    """Plan a user's request as a workflow graph of subtasks over a synthetic API universe.

    ## Description
    Tasks come from the seed's synthesis pipeline (`generator.py`): tool-dependency and parameter-sharing
    graphs over the API universe of the tool-planning family, atomic plans composed with the operators
    connect, add, group, mask, transform and split (`operators.py`), and filters (schema, semantics on the
    simulator). MagicEval-Plan's four categories: **general** (independent steps and stated orders),
    **dependency** (steps take earlier results), **condition** (a check whose result decides between "If
    ..." branches) and **context_inheritance** (a follow-up request; the earlier request and its plan are
    shown and the new plan reuses their results or values). Some steps are masked: the request does not ask
    for them, only for what needs their result.

    ## Observation
    The task: `Task: <request>` (for context_inheritance the earlier request and its plan first), then,
    when `with_tools`, the tool list (names, required parameters and descriptions), distractors included.
    `info["tools"]` is [] (nothing is callable); `info["instructions"]` explains the answer format.

    ## Action
    The workflow in WorfBench's text format: `Node:` with numbered subtasks, then `Edge: (START,1) (1,2) ...
    (n,END)`. Text in `<think>` blocks is ignored; tool calls are invalid actions.

    ## Rewards
    f1_graph of WorfBench's metric (`worfbench_metric.score_workflow`) in the chosen `mode`: predicted nodes
    matched to gold ones by sentence-embedding similarity (or exact text), then the largest connected common
    subgraph. `success`: f1_graph and f1_chain both 1.0 and the same partial order as the gold (`same_order`:
    WorfBench's f1 alone can reach 1.0 with a dependency misplaced between parallel branches).
    `info["metrics"]`: precision / recall / f1 of chain and graph; MagicEval-Plan's `step` (right number of
    steps, every gold step matched) and `embedding` (mean similarity of matched steps, `plan_metrics`); `llm`,
    a judge model's 0-100 rating / 100, or -1.0 when no judge is configured ("not judged"; `judge.py`). An
    answer of more than 100 nodes scores 0 unread; one that copies the gold text is scored without encoding.
    In compat mode the gold keeps f1_graph 1.0, but its own f1_chain falls below 1.0 when its written order is
    not among the first 20 topological orders WorfBench enumerates (parallel branches), or from 8 steps on
    (10 nodes with START and END: the evaluator then compares against its raw node list, START/END included).

    ## Starting State
    A task drawn from the env's RNG, or pinned with `reset(options={"task": task_dict})` (a task dict as
    `generator.generate` writes it, with its "prompt").

    ## Episode End
    Terminates on the first well-formed answer; invalid actions (empty text, tool calls) may be retried until
    the TimeLimit (3 steps).

    ## Arguments
    `split`: "train" | "test" (in-distribution tools, disjoint tasks) | "ood" (the universe's unseen tools).
    `nodes`: workflow size, int or [min, max] within 2..20 (default [3, 8]; ood [6, 14]).
    `branching`: chance that a growth step adds parallel structure (add, group) rather than a serial one
    (connect, split) (default 0.4). `tools_listed`: listed tools, int or [min, max] in 1..50, the workflow's
    own and distractors (default [8, 16]; never fewer than the workflow uses). `with_tools`: list the tools
    (default True). `category`: one of `CATEGORIES`, a list of them or "mixed" (default). `mode`:
    "corrected" (default: predicted edges mapped through the node matching; for training rewards) or "compat"
    (WorfBench's evaluator with its quirks, for benchmark-comparable numbers). `matcher`: "embedding"
    (all-MiniLM-L6-v2, the default), "exact" (normalised text equality: fast, for tests and copied nodes) or an
    object with `similarity(pred_nodes, gold_nodes)`. `judge`: None (judge when MAGIC_JUDGE_BASE_URL is
    set), False (never), True (required), a dict of `judge.Judge` settings or a Judge.

    ## Version History
    * v0: initial release.

    >>> env = DecomposeEnv(category="dependency", matcher="exact", judge=False)  # gymnasium.make(...) alike
    >>> prompt, info = env.reset(seed=0)
    >>> prompt.startswith("Task: ")
    True
    >>> _, reward, terminated, _, info = env.step(env.oracle_action())
    >>> reward, terminated, info["success"], info["metrics"]["llm"]
    (1.0, True, True, -1.0)
    """

    family = "decomposition"
    metric_names = METRIC_NAMES
    progress_metrics = ("f1_chain", "f1_graph")

    def __init__(self, split: str = "train", nodes=None, branching: float = 0.4, tools_listed=(8, 16),
                 with_tools: bool = True, category="mixed", mode: str = "corrected", matcher="embedding",
                 judge=None, render_mode: str | None = None):
        super().__init__(split=split, render_mode=render_mode)
        self.vocab = "ood" if split.startswith("ood") else "iid"
        default = [6, 14] if self.vocab == "ood" else [3, 8]
        self.nodes = knob_range(default if nodes is None else nodes, "nodes", generator.MIN_NODES, generator.MAX_NODES)
        if isinstance(branching, bool) or not isinstance(branching, (int, float)) or not 0 <= branching <= 1:
            raise ValueError(f"branching must lie in [0, 1]; got {branching!r}")
        self.tools_listed = knob_range(tools_listed, "tools_listed", 1, 50)
        if not isinstance(with_tools, (bool, np.bool_)):
            raise ValueError(f"with_tools must be True or False; got {with_tools!r}")
        chosen = CATEGORIES if category == "mixed" else (category,) if isinstance(category, str) else category
        if not isinstance(chosen, (list, tuple)) or not chosen or any(c not in CATEGORIES for c in chosen):
            raise ValueError(f"category must be one of {CATEGORIES}, a list of them or 'mixed'; got {category!r}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
        if isinstance(matcher, str) and matcher not in MATCHERS or not isinstance(matcher, str) \
                and not hasattr(matcher, "similarity"):
            raise ValueError(f"matcher must be one of {MATCHERS} or an object with similarity(pred, gold); "
                             f"got {matcher!r}")
        if matcher == "embedding":
            default_matcher()  # fail at make, with the install command, when the encoder package is missing
        if isinstance(judge, dict):
            try:
                judge = Judge(**judge)
            except TypeError as e:
                raise ValueError(f"bad judge settings {judge!r}: {e}") from e
        if not (judge is None or isinstance(judge, (bool, Judge))):
            raise ValueError(f"judge must be None, True, False, a dict of Judge settings or a Judge; got {judge!r}")
        if judge is True and not Judge().configured:
            raise ValueError("judge=True but no judge is configured: set MAGIC_JUDGE_BASE_URL (and MAGIC_JUDGE_MODEL)")
        self.branching, self.with_tools, self.categories = float(branching), bool(with_tools), tuple(chosen)
        self.mode, self._matcher_choice = mode, matcher
        self.judge = Judge() if judge is None or judge is True else judge or None
        if self.judge is not None and not self.judge.configured:
            self.judge = None  # not configured: the llm metric reads -1.0, "not judged"

    @property
    def matcher(self):
        if self._matcher_choice == "embedding":
            return default_matcher()  # process-wide, so pickling an env never copies the encoder
        return ExactMatcher() if self._matcher_choice == "exact" else self._matcher_choice

    # ---- tasks ------------------------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> dict:
        category = self.categories[int(rng.integers(len(self.categories)))]
        task = generator.generate(load_universe(), rng, category, self.vocab, self.nodes, self.branching,
                                  self.tools_listed)
        task["prompt"] = self.render_prompt(task)
        return task

    def render_prompt(self, task: dict) -> str:
        if task.get("context"):
            text = (f"Earlier request: {task['context']['request']}\nThe plan for it (already carried out; its "
                    f"results can be used):\n{task['context']['workflow']}\n\nTask (the follow-up request; plan "
                    f"only this one): {task['request']}")
        else:
            text = f"Task: {task['request']}"
        if self.with_tools:
            u = load_universe()
            lines = [f"- {n}({', '.join(u.functions[n].required)}): {u.functions[n].description}"
                     for n in task["tools"]]
            text += "\n\nTools you can use:\n" + "\n".join(lines)
        return text

    def setup(self, task: dict) -> str:
        try:
            if not isinstance(task["nodes"], list) or not all(isinstance(t, str) for t in task["nodes"]):
                raise ValueError("nodes must be a list of texts")
            nodes, edges = task["nodes"], [(int(a), int(b)) for a, b in task["edges"]]
            gold = task.get("workflow") or format_workflow(generator.gold_workflow(nodes, edges))
            if parse_workflow(gold) is None or not generator.MIN_NODES <= len(nodes) <= generator.MAX_NODES:
                raise ValueError("the gold workflow does not parse")
            prompt = task.get("prompt") or self.render_prompt(task)
            request, tools = str(task["request"]), [str(t) for t in task["tools"]]
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ValueError(f"malformed Decompose task: {e!r}") from e
        self._gold, self._prompt, self._request, self._tool_names = gold, prompt, request, tools
        self._gold_wf = parse_workflow(gold)
        self._gold_order = reachable(self._gold_wf)
        return prompt

    def instructions(self) -> str:
        return INSTRUCTIONS

    # ---- episode ----------------------------------------------------------------------------------------
    def transition(self, action) -> Outcome:
        text = action.text
        parsed = parse_workflow(text)
        if parsed is not None and parsed.n > MAX_ANSWER_NODES:
            return Outcome(f"Scored 0: the answer has {parsed.n} nodes (at most {MAX_ANSWER_NODES} are read).",
                           terminated=True, metrics={"llm": -1.0})
        # The gold's own text scores the same under any matcher (each node is its own best match), so copying
        # it costs no encoding: the oracle stays cheap in tests, sweeps and SFT data.
        matcher = ExactMatcher() if text.strip() == self._gold.strip() else self.matcher
        scores = score_workflow(text, self._gold, matcher=matcher, mode=self.mode)
        metrics = {name: float(getattr(scores, name)) for name in METRIC_NAMES[:6]}
        metrics.update({k: float(v) for k, v in plan_metrics(text, self._gold, matcher).items()})
        rating = self.judge.score(self._prompt, self._gold, text) if self.judge is not None else None
        metrics["llm"] = -1.0 if rating is None else float(rating)
        score = metrics["f1_graph"]
        success = score == 1.0 and metrics["f1_chain"] == 1.0 \
            and same_order(parsed, self._gold_wf, scores.matching, self._gold_order)
        feedback = "The workflow matches the gold one." if success else "The workflow differs from the gold one."
        return Outcome(f"{feedback} f1_graph {score:.3f}, f1_chain {metrics['f1_chain']:.3f}.", terminated=True,
                       score=score, success=success, metrics=metrics)

    def oracle_action(self) -> str:
        return self._gold

    def random_action(self, rng: np.random.Generator) -> str:
        """A well-formed random DAG over tool descriptions of the listed tools (a baseline that knows the format)."""
        u = load_universe()
        names = [n for n in self._tool_names if n in u.functions] or list(u.functions)
        n = int(rng.integers(2, 9))
        nodes = [f"Use {name} to {u.functions[name].description[0].lower()}{u.functions[name].description[1:]}"
                 for name in (names[int(i)] for i in rng.integers(len(names), size=n))]
        edges = [(int(rng.integers(k)), k) for k in range(1, n + 1)]  # a random predecessor (0 = START)
        has_out = {a for a, _ in edges}
        edges += [(k, n + 1) for k in range(1, n + 1) if k not in has_out]
        return format_workflow(Workflow(nodes, edges))
