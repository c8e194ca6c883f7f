"""magic/WorfBench-v0: the real WorfBench gold records, scored with WorFEval's f1 (re-implemented)."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import numpy as np

from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.decomposition.judge import Judge
from magic_envs.decomposition.matchers import ExactMatcher, default_matcher
from magic_envs.decomposition.plan_metrics import plan_metrics
from magic_envs.decomposition.worfbench_metric import score_workflow
from magic_envs.decomposition.workflow import parse_workflow

ENV_VAR = "MAGIC_WORFBENCH_DIR"
GOLD_FILE = "graph_eval.json"  # WorfBench's own layout: gold_traj/<task>/graph_eval.json
# The seven in-distribution test tasks; the held-out ones (intercodesql, seal_tools) load too when present.
TASKS = ("alfworld", "lumos", "os", "toolalpaca", "toolbench", "webshop", "wikihow")
MODES, MATCHERS = ("compat", "corrected"), ("embedding", "exact")
METRIC_NAMES = ("precision_chain", "recall_chain", "f1_chain", "precision_graph", "recall_graph", "f1_graph",
                "step", "embedding", "llm")
HOW_TO_SET = (f"pass data_path=<folder> or set {ENV_VAR} to a folder holding WorfBench's gold files, as "
              f"<task>/{GOLD_FILE} (gold_traj/ of zjunlp/WorfBench) or <task>.json")
_VERBS = ("juggle", "whistle at", "fold", "polish", "bury", "paint", "serenade", "knit")
_THINGS = ("the lighthouse", "a violin", "the glacier", "an umbrella", "the parrot", "a comet", "the volcano")


def resolve_data_path(data_path: str | os.PathLike | None = None) -> Path:
    """The gold folder (or file) from the argument, else from MAGIC_WORFBENCH_DIR; ValueError if neither."""
    raw = data_path if data_path is not None else os.environ.get(ENV_VAR)
    if not raw:
        raise ValueError(f"magic/WorfBench-v0 has no data: {HOW_TO_SET}")
    path = Path(raw).expanduser().resolve()
    if not path.exists():
        raise ValueError(f"WorfBench data path {str(path)!r} does not exist: {HOW_TO_SET}")
    return path


def task_files(path: Path) -> dict[str, Path]:
    """Task name -> gold file: a folder's <task>/graph_eval.json and <task>.json files, or one task's file."""
    if path.is_dir() and (path / GOLD_FILE).is_file():  # one task's folder
        path = path / GOLD_FILE
    if path.is_file():
        return {path.parent.name if path.name == GOLD_FILE else path.stem: path}
    files = {}
    for entry in sorted(path.iterdir()):
        if entry.is_dir() and (entry / GOLD_FILE).is_file():
            files[entry.name] = entry / GOLD_FILE
        elif entry.is_file() and entry.suffix == ".json":
            files[entry.stem] = entry
    if not files:
        raise ValueError(f"no WorfBench gold file in {str(path)!r}: {HOW_TO_SET}")
    return files


@functools.cache
def load_tasks(path: str) -> dict[str, tuple[dict, ...]]:
    """Task name -> its gold records (cached per path: vector envs share one copy)."""
    tasks = {}
    for name, file in task_files(Path(path)).items():
        try:
            records = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"cannot read WorfBench gold file {str(file)!r}: {error}") from error
        if not isinstance(records, list) or not all(isinstance(r, dict) and "id" in r for r in records):
            raise ValueError(f"{str(file)!r} is not a WorfBench gold file (a JSON list of records with an id)")
        tasks[name] = tuple(records)
    return tasks


@functools.cache
def record_index(path: str) -> dict[str, tuple[str, dict]]:
    """Record id -> (task name, record) over every gold file of `path`."""
    return {str(r["id"]): (name, r) for name, records in load_tasks(path).items() for r in records}


def read_record(record: dict) -> tuple[str, str, str]:
    """(instructions, prompt, gold workflow text) of a gold record; ValueError when it is not one.

    WorfBench records are conversations: system (the planner instructions), user (the task), and the gold
    workflow as the last, assistant, message; several user messages are joined.
    """
    conversation = record.get("conversations") if isinstance(record, dict) else None
    if not isinstance(conversation, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in conversation):
        raise ValueError("a WorfBench record needs 'conversations': a list of {'role', 'content'} messages")
    if len(conversation) < 2 or conversation[-1]["role"] != "assistant":
        raise ValueError("a WorfBench record's conversation must end with the gold (assistant) workflow")
    users = [m["content"] for m in conversation[:-1] if m["role"] == "user"]
    if not users:
        raise ValueError("a WorfBench record's conversation holds no user message")
    gold = conversation[-1]["content"]
    if parse_workflow(gold) is None:
        raise ValueError(f"the gold answer of record {record.get('id')!r} is not a workflow: {gold[:200]!r}")
    instructions = "\n\n".join(m["content"] for m in conversation[:-1] if m["role"] == "system")
    return instructions, "\n\n".join(users), gold


@functools.cache
def _gold_self_score(gold: str, mode: str) -> float:
    # Gold against itself: every node matches its own text under any matcher, so the exact one is enough.
    return score_workflow(gold, gold, matcher=ExactMatcher(), mode=mode).f1_graph


class WorfBenchEnv(MagicEnv):
    """One WorfBench test record: decompose the task into a workflow graph of subtasks.

    ## Description
    The gold workflows of WorfBench's test set (zjunlp/WorfBench, `gold_traj/`), read from a folder the user
    gives: function-call planning (toolbench, toolalpaca), problem solving (lumos), embodied planning
    (alfworld, webshop, os) and open-grounded planning (wikihow). Scored with WorFEval's algorithm
    (`worfbench_metric`): predicted nodes matched to gold ones by sentence-embedding similarity, f1_chain
    from the longest matched subsequence, f1_graph from the largest connected common subgraph.

    ## Observation
    The record's user message (task description and action list; up to ~14k characters, some non-ASCII).
    `info["instructions"]`: its system message (WorfBench's planner instructions and output format).
    `info["tools"]`: [] (the allowed actions are listed in the text, as in WorfBench).

    ## Action
    The workflow as text: `Node:` with numbered subtasks ("1: ..."), then `Edge: (START,1) (1,2) ... (n,END)`.
    Text inside `<think>` blocks is ignored.

    ## Rewards
    f1_graph in the chosen mode: the graph metric is WorfBench's headline (it needs the right subtasks AND the
    right dependencies, where f1_chain only checks an order). `info["metrics"]`: precision / recall / f1 of
    chain and graph; MagicEval-Plan's `step` and `embedding` (`plan_metrics`); `llm`, a judge's 0-1 rating,
    -1.0 when no judge is configured (`judge.py`). `success`: f1_graph is 1.0.

    ## Starting State
    A record drawn uniformly by the seed from the chosen tasks, or pinned with
    `reset(options={"task": {"id": "os_92"}})` or a full record (`conversations`: system, user, assistant).
    In compat mode seeds never draw the 13 of 1,423 in-distribution records whose own gold scores below 1.0
    under WorfBench's algorithm (prose after the edges parsed as extra nodes, nodes no edge reaches; see
    `unsolvable`); pinning one by id still serves it, and `magic score-workflows` scores every record.

    ## Episode End
    Terminates on the first non-empty answer (an empty one is an invalid action; the TimeLimit is 3 steps).

    ## Arguments
    `split`: "test" only (a real benchmark). `data_path`: the gold folder, default $MAGIC_WORFBENCH_DIR (the
    env can be made without data and then serves only pinned full records). `category`: a task name found in
    the data, a list of them, or "all". `mode`: "compat" (default: scores exactly as WorfBench's evaluator,
    quirks included, for benchmark numbers) or "corrected" (predicted edges mapped through the node matching;
    gold always scores 1.0; for training rewards). `matcher`: "embedding" (the process-wide encoder set by
    MAGIC_EMBEDDING_MODEL, default all-MiniLM-L6-v2 in numpy; WorfBench uses all-mpnet-base-v2, so absolute
    numbers differ slightly), "exact" (normalised text equality) or any object with
    `similarity(pred_nodes, gold_nodes)`. `judge`: None (judge when MAGIC_JUDGE_BASE_URL is set),
    False (never), True (required), or a dict of `Judge` settings.

    ## Version History
    * v0: initial release.

    >>> record = {"id": "demo_1", "conversations": [
    ...     {"role": "system", "content": "You are a helpful task planner."},
    ...     {"role": "user", "content": "Boil an egg."},
    ...     {"role": "assistant", "content": "Node:\\n1: boil water\\n2: add the egg\\nEdge: (START,1) (1,2) (2,END)"}]}
    >>> env = WorfBenchEnv(matcher="exact", judge=False)  # gymnasium.make("magic/WorfBench-v0", ...)
    >>> env.reset(options={"task": record})[0]
    'Boil an egg.'
    >>> env.step(env.oracle_action())[1]
    1.0
    """

    family = "decomposition"
    splits = ("test",)
    metric_names = METRIC_NAMES
    progress_metrics = ("f1_graph",)  # its score; compat-mode f1_chain can stay below 1 on a gold plan

    def __init__(self, split: str = "test", data_path: str | None = None, category="all", mode: str = "compat",
                 matcher="embedding", judge=None, render_mode: str | None = None):
        super().__init__(split=split, render_mode=render_mode)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if matcher not in MATCHERS if isinstance(matcher, str) else not hasattr(matcher, "similarity"):
            raise ValueError(f"matcher must be one of {MATCHERS} or have similarity(pred, gold); got {matcher!r}")
        self.mode, self._matcher_choice = mode, matcher
        if matcher == "embedding":
            default_matcher()  # fail at make, with the install command, when the encoder package is missing
        self.judge = _make_judge(judge)
        self.data_path = None
        if data_path is not None or os.environ.get(ENV_VAR):
            self.data_path = str(resolve_data_path(data_path))
        found = tuple(load_tasks(self.data_path)) if self.data_path else TASKS
        chosen = found if category in ("all", None) else (category,) if isinstance(category, str) else tuple(category)
        unknown = [c for c in chosen if c not in found]
        if not chosen or unknown:
            raise ValueError(f"category must be one of {found}, a list of them, or 'all'; got {category!r}")
        self.categories = chosen

    @property
    def matcher(self):
        if self._matcher_choice == "embedding":
            return default_matcher()  # process-wide, so pickling an env never copies the encoder
        return ExactMatcher() if self._matcher_choice == "exact" else self._matcher_choice

    def records(self) -> list[dict]:
        """The records seeds draw from (before `unsolvable` ones are skipped), in a fixed order."""
        if self.data_path is None:
            raise ValueError(f"magic/WorfBench-v0 draws records from data it does not have: {HOW_TO_SET}")
        tasks = load_tasks(self.data_path)
        return [r for c in self.categories for r in tasks[c]]

    def unsolvable(self, record: dict) -> bool:
        """Whether the record's own gold scores below 1.0 in this env's mode (seeds skip such records)."""
        try:
            return _gold_self_score(read_record(record)[2], self.mode) < 1.0
        except ValueError:
            return True

    def generate(self, rng: np.random.Generator) -> dict:
        pool = self.records()
        for _ in range(1000):
            record = pool[int(rng.integers(len(pool)))]
            if not self.unsolvable(record):
                return record
        raise ValueError(f"no record of {self.categories} scores 1.0 on its own gold in {self.mode} mode")

    def setup(self, task: dict) -> str:
        if set(task) <= {"id", "category", "source"} and "id" in task:
            if self.data_path is None:
                raise ValueError(f"record {task['id']!r} is pinned by id, but there is no data: {HOW_TO_SET}")
            found = record_index(self.data_path).get(str(task["id"]))
            if found is None:
                raise ValueError(f"no WorfBench record has id {task['id']!r} in {self.data_path}")
            record = found[1]
        else:
            record = task
        self._instructions, self._prompt, self._gold = read_record(record)
        return self._prompt

    def instructions(self) -> str:
        return self._instructions

    def transition(self, action) -> Outcome:
        matcher = self.matcher
        scores = score_workflow(action.text, self._gold, matcher=matcher, mode=self.mode)
        metrics = {name: float(getattr(scores, name)) for name in METRIC_NAMES[:6]}
        metrics.update({k: float(v) for k, v in plan_metrics(action.text, self._gold, matcher).items()})
        rating = self.judge.score(self._prompt, self._gold, action.text) if self.judge else None
        metrics["llm"] = -1.0 if rating is None else rating
        score = metrics["f1_graph"]
        text = f"Scored against the gold workflow: f1_graph {score:.3f}, f1_chain {metrics['f1_chain']:.3f}."
        return Outcome(text, terminated=True, score=score, success=score >= 1.0, metrics=metrics)

    def oracle_action(self) -> str:
        return self._gold

    def random_action(self, rng: np.random.Generator) -> str:
        """A well-formed chain of nonsense subtasks (it still earns compat mode's START/END floor)."""
        n = int(rng.integers(1, 7))
        nodes = [f"{k}: {_VERBS[int(rng.integers(len(_VERBS)))]} {_THINGS[int(rng.integers(len(_THINGS)))]}"
                 for k in range(1, n + 1)]
        edges = " ".join(f"({a},{b})" for a, b in zip(["START", *range(1, n + 1)], [*range(1, n + 1), "END"]))
        return "Node:\n" + "\n".join(nodes) + "\nEdge: " + edges


def _make_judge(judge) -> Judge | None:
    """The judge knob: None = from the environment when configured, False = off, True = required, a dict."""
    if judge is False:
        return None
    if isinstance(judge, Judge):
        return judge
    if judge is None or judge is True:
        made = Judge()
        if judge is True and not made.configured:
            raise ValueError("judge=True but no judge is configured: set MAGIC_JUDGE_BASE_URL (and MAGIC_JUDGE_MODEL)")
        return made if made.configured else None
    if isinstance(judge, dict):
        try:
            return Judge(**judge)
        except TypeError as error:
            raise ValueError(f"bad judge settings {judge!r}: {error}") from error
    raise ValueError(f"judge must be None, True, False, a dict of Judge settings or a Judge; got {judge!r}")
