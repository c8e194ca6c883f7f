"""magic/ToolCall-v0: single-turn function calling over the synthetic API universe, BFCL's categories."""

from __future__ import annotations

import numpy as np

from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.core.grammar import format_tool_call
from magic_envs.core.tools import Tool, random_call
from magic_envs.tool_planning.ast_check import check_calls, tool_accuracy
from magic_envs.tool_planning.toolcall_tasks import CATEGORIES, MIX, Writer, oracle_calls, span
from magic_envs.tool_planning.universe import load_universe

INSTRUCTIONS = ("You are a helpful assistant with access to the functions below. Answer the user's request by "
                "calling the function(s) that fulfil it, with arguments written as each function's schema asks "
                "(one <tool_call> block per call; several blocks are parallel calls). You get one answer. If "
                "none of the functions can do what the user asks, do not call any: say so in plain text.")
NO_CALL = "I'm sorry, but none of the functions I have can do that, so I can't help with this request."


class ToolCallEnv(MagicEnv):
    """Answer one request with the right function calls, or with none when no offered function fits.

    ## Description
    BFCL-style single-turn function calling over the synthetic API universe (`tool_planning.universe`:
    119 functions in 13 domains). A user asks for something in natural language, with values as a person
    writes them ("March 3, 2025", "2.5 km", "euros", "paris"); the agent must pick the right function(s)
    among those offered and pass canonical arguments (2025-03-03, 2500, "EUR"). BFCL's categories:
    `simple` (one function offered, one call), `multiple` (one call, chosen among several offered
    functions, mostly from the same domain), `parallel` (several calls of one function in one answer),
    `parallel_multiple` (several calls over several functions, with distractors) and `irrelevance` (the
    request needs a function that is not offered and no offered one can take its values: the right answer
    is no call).

    ## Observation
    The request (one user message). `info["tools"]`: the offered functions as OpenAI tool schemas, in
    random order; `info["instructions"]`: the system text.

    ## Action
    `<tool_call>` blocks (several = parallel calls), or plain text, which means "no call". Calls are scored
    as given, as BFCL does (`validates_calls = False`): an unknown function or a wrongly typed argument is a
    wrong answer, not a retry.

    ## Rewards
    1.0 when BFCL's AST checker (`ast_check.check_calls`, the task's category) accepts the calls (for
    irrelevance: when there is none), else 0.0. `info["metrics"]`: `name_accuracy` and `argument_accuracy`
    (MagicEval-Tool's, `ast_check.tool_accuracy`), `calls` (how many calls the answer made) and `no_call`
    (1.0 when it made none).

    ## Starting State
    A task drawn from the env's RNG, or pinned with `reset(options={"task": task})`: a dict with `category`,
    `question`, `functions` (offered names, in the order shown), `world_seed` (the simulated world, for
    tools that execute the calls) and `gold` (BFCL's possible-answer format, `[]` for irrelevance).

    ## Episode End
    Terminates on the first well-formed action (calls or plain text). A malformed one (broken JSON in a
    `<tool_call>`, an empty answer) is an invalid action; the TimeLimit (1 step: BFCL gives one answer)
    then ends the episode unscored.

    ## Arguments
    `split`: "train" | "test" (the universe's IID functions and values; disjoint task pools) | "ood" (unseen
    functions, domains and values). `category`: one of `CATEGORIES` or "mixed" (default: simple 0.3,
    multiple 0.25, parallel 0.15, parallel_multiple 0.15, irrelevance 0.15). `distractors`: extra offered
    functions for multiple, parallel_multiple and irrelevance (at least one is offered there), int or
    [min, max] in 0..10 (default [2, 4]). `parallel_calls`: calls in the parallel categories, int or
    [min, max] in 2..8 (default [2, 4]). `optional_rate`: chance that each optional parameter is stated in
    the request (default 0.5).

    ## Version History
    * v0: initial release.

    >>> import gymnasium, magic_envs
    >>> env = gymnasium.make("magic/ToolCall-v0", category="multiple")
    >>> request, info = env.reset(seed=0)
    >>> len(info["tools"]) >= 3
    True
    >>> _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
    >>> reward, terminated, info["metrics"]["name_accuracy"]
    (1.0, True, 1.0)
    >>> env.reset(seed=0)[0] == request
    True
    >>> env.step("I would rather not call anything.")[1]
    0.0
    """

    family = "tool_planning"
    metric_names = ("name_accuracy", "argument_accuracy", "calls", "no_call")
    progress_metrics = ("name_accuracy", "argument_accuracy")
    validates_calls = False

    def __init__(self, split: str = "train", category: str = "mixed", distractors=(2, 4), parallel_calls=(2, 4),
                 optional_rate: float = 0.5, render_mode: str | None = None):
        super().__init__(split=split, render_mode=render_mode)
        if category != "mixed" and category not in CATEGORIES:
            raise ValueError(f"category must be 'mixed' or one of {CATEGORIES}, got {category!r}")
        if isinstance(optional_rate, bool) or not isinstance(optional_rate, (int, float)) or \
                not 0.0 <= optional_rate <= 1.0:
            raise ValueError(f"optional_rate must be a probability in [0, 1], got {optional_rate!r}")
        self.category = category
        self.universe = load_universe()
        self.writer = Writer(self.universe, split, span(distractors, "distractors", 0, 10),
                             span(parallel_calls, "parallel_calls", 2, 8), float(optional_rate))

    # ---- generator --------------------------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> dict:
        category = self.category
        if category == "mixed":
            category = CATEGORIES[int(rng.choice(len(CATEGORIES), p=[MIX[c] for c in CATEGORIES]))]
        return self.writer.task(rng, category)

    # ---- episode ------------------------------------------------------------------------------------------------
    def setup(self, task: dict) -> str:
        try:
            category, question, names, gold = task["category"], task["question"], task["functions"], task["gold"]
            int(task["world_seed"])
            if category not in CATEGORIES:
                raise ValueError(f"unknown category {category!r}")
            if not isinstance(question, str) or not question.strip():
                raise ValueError("the question must be a non-empty string")
            if not isinstance(names, list) or not names or len(set(names)) != len(names):
                raise ValueError("functions must be a non-empty list of distinct names")
            functions = [self.universe.functions[n] for n in names]
            if not isinstance(gold, list) or (category == "irrelevance") != (not gold):
                raise ValueError("gold must be [] for irrelevance and a non-empty list of calls otherwise")
            called = [next(iter(g)) for g in gold if isinstance(g, dict) and len(g) == 1]
            if len(called) != len(gold) or not set(called) <= set(names) or \
                    not all(isinstance(next(iter(g.values())), dict) for g in gold):
                raise ValueError("each gold call must be {offered function: {param: [acceptable values]}}")
            if category in ("simple", "multiple") and len(gold) != 1:
                raise ValueError(f"a {category} task has exactly one gold call")
        except (KeyError, TypeError, StopIteration) as e:
            raise ValueError(f"malformed ToolCall task: {e!r}") from e
        self._category, self._gold = category, gold
        self._functions = [f.tool() for f in functions]
        schemas = [f.schema() for f in functions]
        if category == "simple":  # BFCL checks a simple answer against the first function: the gold's
            schemas.sort(key=lambda s: s["function"]["name"] != called[0])
        self._schemas = schemas
        return question

    def tool_list(self) -> list[Tool]:
        return self._functions

    def instructions(self) -> str:
        return INSTRUCTIONS

    def transition(self, action) -> Outcome:
        calls = [(c.name, c.arguments) for c in action.calls]
        verdict = check_calls(calls, self._gold, self._schemas, self._category)
        names, arguments = tool_accuracy(calls, self._gold, self._schemas, self._category)
        if verdict.valid:
            text = "Correct." if calls else "Correct: none of the offered functions fits this request."
        else:
            text = f"Incorrect ({verdict.error_type}): {verdict.error}"
        metrics = {"name_accuracy": names, "argument_accuracy": arguments, "calls": float(len(calls)),
                   "no_call": float(not calls)}
        return Outcome(text, terminated=True, score=float(verdict.valid), success=verdict.valid, metrics=metrics)

    # ---- baselines ------------------------------------------------------------------------------------------------
    def oracle_action(self) -> str:
        if not self._gold:
            return NO_CALL
        return "\n".join(format_tool_call(name, args) for name, args in oracle_calls(self._gold))

    def random_action(self, rng: np.random.Generator) -> str:
        """One call (sometimes two) of a random offered function with random arguments of the schema's types."""
        return "\n".join(random_call(self._functions, rng, optional=0.3) for _ in range(1 + int(rng.random() < 0.3)))
