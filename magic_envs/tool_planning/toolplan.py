"""Multi-turn tool planning (MagicEval-Tool): plan and make calls over the synthetic API universe."""

from __future__ import annotations

import numpy as np

from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.core.grammar import ParsedAction, format_tool_call
from magic_envs.core.tools import format_tool_responses
from magic_envs.tool_planning import toolplan_tasks as tasks
from magic_envs.tool_planning.ast_check import check_calls, tool_accuracy
from magic_envs.tool_planning.universe import load_universe

CATEGORIES = tasks.CATEGORIES
MAX_CALLS = 32  # per action: far above any task's need, far below what makes checking slow
ORDER_FREE = "parallel_multiple"  # BFCL's order-free matching of several calls to several functions
INSTRUCTIONS = (
    "You are a helpful assistant that can call functions. To call functions, write one or more "
    '<tool_call>{"name": <function>, "arguments": {...}}</tool_call> blocks; several blocks in one message '
    "run together, and their results come back in <tool_response> blocks in the same order. A call that needs "
    "another call's result must wait for it. Make exactly the calls the request needs, each once: every call "
    "counts. Write arguments in the formats the function schemas give (dates as YYYY-MM-DD). When the request "
    "is done, reply in plain text without a call, and report the key results (ids, amounts, names) exactly as "
    "the functions returned them. The user may then ask something else.")
DONE = "Thank you, that is all I needed."


def call_arguments(gold_args: dict) -> dict:
    """The call a perfect agent makes for BFCL gold arguments: each first acceptable value ("" = omit)."""
    return {p: _first(a[0]) for p, a in gold_args.items() if isinstance(a, list) and a and a[0] != ""}


def _first(value):
    if isinstance(value, dict):  # a nested object's gold maps each of its fields to acceptable values
        return call_arguments(value)
    return [_first(v) for v in value] if isinstance(value, list) else value


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def mentions(answer: str, fact: str) -> bool:
    """tau2's COMMUNICATE check: the fact occurs in the answer, case-insensitive, commas ignored."""
    return fact.lower().replace(",", "") in answer.lower().replace(",", "")


class ToolPlanEnv(MagicEnv):
    """Serve a user's requests by planning tool calls, reading their results, and reporting back.

    ## Description
    MagicEval-Tool's four categories over the synthetic API universe (`universe/`), with a deterministic
    simulator answering every call: **general** (2-4 independent calls in one request), **dependency** (a
    chain of 2-4 calls where later calls take earlier calls' outputs, which the request only points at),
    **condition** (a check call whose result decides which of two stated calls comes next) and
    **context_inheritance** (2-3 user turns; each later request reuses an earlier turn's value or result
    implicitly, "the same city", "[the first of those hotels]"). Tasks come from `toolplan_tasks`.

    ## Observation
    A user request (`info["role"] == "user"`), or the results of the last action's calls, one
    `<tool_response>` block per call in call order (`"tool"`); after the last answer, a closing user message.
    `info["tools"]`: the offered functions (the task's own and `distractors` more) as OpenAI tool schemas.

    ## Action
    `<tool_call>` blocks (several = parallel calls), validated against the schemas: an unknown function,
    arguments that break a schema, or more than 32 calls make an invalid action, retried with the error.
    Valid calls run in the simulator and count, also when the simulator answers with an error; text beside
    calls is ignored. Plain text without a call is the answer to the current request (`<think>` blocks are
    not part of it): the user then sends the next request, or the episode ends.

    ## Rewards
    1.0 at the end when every turn passed, else 0.0. A turn passes when its calls match the turn's gold calls
    under BFCL's AST rules (`ast_check.check_calls`, order-free: same number of calls, right functions,
    required parameters, no unexpected ones, types and values) and the answer mentions every fact (key
    result values: new ids, amounts, names), case-insensitive with commas ignored as tau2's COMMUNICATE.
    Calls that the task does not need fail the turn; so do repeated calls. `info["metrics"]`:
    `name_accuracy`, `argument_accuracy` (MagicEval-Tool's, `ast_check.tool_accuracy`, pooled over the turns:
    unanswered turns count their gold calls as missed), `turns_passed` and `answer_ok` (fractions of turns)
    and `calls` (calls executed).

    ## Starting State
    A task drawn from the env's RNG, or pinned with `reset(options={"task": task_dict})`: `category`,
    `world_seed`, `functions` (offered names) and `turns` ([{"request", "gold", "facts"}, ...]).

    ## Episode End
    Terminates after the answer to the last turn. A failed turn does not end the dialogue: the metrics cover
    every turn. The TimeLimit (24 steps) truncates an agent that never answers.

    ## Arguments
    `split`: "train" | "test" (in-distribution functions, disjoint tasks) | "ood" (the 28 ood functions and
    vocabulary; a 4-call dependency chain may start with one in-distribution producer). `category`: one of
    `CATEGORIES`, a list of them, or "mixed" (default: uniform). `distractors`: extra offered functions, int
    or [min, max] (default [2, 5]). `optional_rate`: chance that a call states optional parameters (0.3).
    `calls`: the task size, int or [min, max], within what each category can write (general 1-4 calls,
    dependency 2-4, condition 2, context_inheritance 2-3 turns); default: general 2-4, the others all theirs.
    `calls=1` with `category="general"` is the shortest horizon: one call, its result, a report.

    ## Version History
    * v0: initial release.

    >>> import gymnasium, magic_envs
    >>> env = gymnasium.make("magic/ToolPlan-v0", category="dependency")
    >>> request, info = env.reset(seed=0)
    >>> info["role"], len(info["tools"]) > 2
    ('user', True)
    >>> terminated = False
    >>> while not terminated:
    ...     _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
    >>> reward, info["metrics"]["argument_accuracy"]
    (1.0, 1.0)
    """

    family = "tool_planning"
    metric_names = ("name_accuracy", "argument_accuracy", "turns_passed", "answer_ok", "calls")
    # the right function counts before its arguments do: a policy that cannot yet copy an argument still learns to
    # call, rather than to answer without calling (a reply with no call is always well formed)
    progress_metrics = ("turns_passed", "name_accuracy", "argument_accuracy", "answer_ok")
    max_calls = MAX_CALLS

    def __init__(self, split: str = "train", category="mixed", distractors=(2, 5), optional_rate: float = 0.3,
                 calls=None, render_mode: str | None = None):
        super().__init__(split=split, render_mode=render_mode)
        chosen = CATEGORIES if category == "mixed" else (category,) if isinstance(category, str) else category
        if not isinstance(chosen, (list, tuple)) or not chosen or any(c not in CATEGORIES for c in chosen):
            raise ValueError(f"category must be one of {CATEGORIES}, a list of them or 'mixed'; got {category!r}")
        pair = [distractors] * 2 if _is_int(distractors) else distractors
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(map(_is_int, pair))
                and 0 <= pair[0] <= pair[1] <= 20):
            raise ValueError(f"distractors must be an int or a [min, max] pair within [0, 20]; got {distractors!r}")
        if isinstance(optional_rate, bool) or not isinstance(optional_rate, (int, float)) \
                or not 0 <= optional_rate <= 1:
            raise ValueError(f"optional_rate must lie in [0, 1]; got {optional_rate!r}")
        self.categories, self.distractors = tuple(chosen), (int(pair[0]), int(pair[1]))
        self.optional_rate = float(optional_rate)
        self.calls = None
        if calls is not None:
            span = [calls] * 2 if _is_int(calls) else calls
            if not (isinstance(span, (list, tuple)) and len(span) == 2 and all(map(_is_int, span))
                    and 1 <= span[0] <= span[1]):
                raise ValueError(f"calls must be a positive int or a [min, max] pair; got {calls!r}")
            self.calls = (int(span[0]), int(span[1]))
            for c in self.categories:
                tasks.sizes(c, self.calls)  # a category that cannot be written at these sizes fails here

    @property
    def universe(self):
        return load_universe()  # cached per process, so never pickled with the env

    # ---- tasks ------------------------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> dict:
        category = self.categories[int(rng.integers(len(self.categories)))]
        vocab = "ood" if self.split.startswith("ood") else "iid"
        return tasks.generate(self.universe, rng, category, vocab, self.distractors, self.optional_rate, self.calls)

    def setup(self, task: dict) -> str:
        try:
            offered, turns, world = list(task["functions"]), list(task["turns"]), task["world_seed"]
            if task["category"] not in CATEGORIES or not turns or isinstance(world, bool) or not isinstance(world, int):
                raise ValueError("category, turns and an integer world_seed are required")
            unknown = [n for n in offered if n not in self.universe.functions]
            if unknown or len(set(offered)) != len(offered):
                raise ValueError(f"unknown or repeated functions {unknown}")
            for turn in turns:
                if not isinstance(turn["request"], str) or not all(isinstance(f, str) for f in turn["facts"]):
                    raise ValueError("a turn needs a request and facts (strings)")
                calls = [next(iter(call.items())) for call in turn["gold"]]
                if not calls or any(len(c) != 1 or n not in offered or not isinstance(a, dict)
                                    for c, (n, a) in zip(turn["gold"], calls)):
                    raise ValueError("each gold call names one offered function with its arguments")
        except (KeyError, TypeError, AttributeError, StopIteration) as e:
            raise ValueError(f"malformed ToolPlan task: {e!r}") from e
        self._category, self._world, self._turns = task["category"], world, turns
        self._offered = offered
        self._schemas = [self.universe.functions[n].schema() for n in offered]
        self._turn = 0
        self._executed: list[list[tuple[str, dict]]] = [[] for _ in turns]
        self._passed, self._told = [False] * len(turns), [False] * len(turns)
        return turns[0]["request"]

    def tool_list(self):
        return [_tool(n) for n in self._offered]

    def instructions(self) -> str:
        return INSTRUCTIONS

    # ---- episode ----------------------------------------------------------------------------------------
    def transition(self, action: ParsedAction) -> Outcome:
        if action.calls:
            results = []
            for call in action.calls:
                self._executed[self._turn].append((call.name, call.arguments))
                results.append(self.universe.call(call.name, call.arguments, self._world))
            return Outcome(format_tool_responses(results), role="tool", metrics=self.progress())
        turn = self._turns[self._turn]
        calls_ok = check_calls(self._executed[self._turn], turn["gold"], self._schemas, ORDER_FREE).valid
        self._told[self._turn] = all(mentions(action.text, fact) for fact in turn["facts"])
        self._passed[self._turn] = calls_ok and self._told[self._turn]
        self._turn += 1
        if self._turn < len(self._turns):
            return Outcome(self._turns[self._turn]["request"], role="user", metrics=self.progress())
        success = all(self._passed)
        return Outcome(DONE, role="user", terminated=True, score=float(success), success=success,
                       metrics=self.progress())

    def progress(self) -> dict[str, float]:
        """MagicEval-Tool's accuracies pooled over the turns (each turn's calls against its own gold)."""
        named = argued = total = 0.0
        for turn, calls in zip(self._turns, self._executed):
            n = max(len(calls), len(turn["gold"]))
            names, arguments = tool_accuracy(calls, turn["gold"], self._schemas, ORDER_FREE)
            named, argued, total = named + round(names * n), argued + round(arguments * n), total + n
        k = len(self._turns)
        return {"name_accuracy": named / total, "argument_accuracy": argued / total,
                "turns_passed": sum(self._passed) / k, "answer_ok": sum(self._told) / k,
                "calls": float(sum(map(len, self._executed)))}

    def pending(self) -> list[tuple[str, dict]]:
        """The current turn's gold calls that no executed call has matched yet, in gold order."""
        if self._turn >= len(self._turns):
            return []
        calls, left = self._executed[self._turn], []
        free = list(range(len(calls)))
        for gold in self._turns[self._turn]["gold"]:
            match = next((j for j in free if check_calls([calls[j]], [gold], self._schemas, ORDER_FREE).valid), None)
            if match is None:
                name, args = next(iter(gold.items()))
                left.append((name, call_arguments(args)))
            else:
                free.remove(match)
        return left

    def oracle_action(self) -> str:
        if self._turn >= len(self._turns):
            return DONE
        left = self.pending()
        if not left:
            return "Here is what I found: " + "; ".join(self._turns[self._turn]["facts"]) + "."
        # Independent calls go out together; any other next call may need the results of the one before.
        batch = left if self._category == "general" else left[:1]
        return "\n".join(format_tool_call(name, args) for name, args in batch)

    def random_action(self, rng: np.random.Generator) -> str:
        if rng.random() < 0.15:
            return "Done."
        name = self._offered[int(rng.integers(len(self._offered)))]
        vocab = "ood" if self.split.startswith("ood") else "iid"
        return format_tool_call(name, self.universe.sample_call(name, rng, bool(rng.random() < 0.5), vocab).arguments)


_TOOLS: dict = {}


def _tool(name: str):
    """The core Tool of a function, built once per process (its jsonschema validator is reused)."""
    if name not in _TOOLS:
        _TOOLS[name] = load_universe().functions[name].tool()
    return _TOOLS[name]
