"""magic/BFCLMultiTurn-v0: BFCL v3's multi-turn entries on bfcl-eval's own backends, scored as BFCL scores them."""

from __future__ import annotations

import functools
import json
from collections import Counter
from dataclasses import dataclass

import numpy as np

from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.core.grammar import ParsedAction, format_tool_call
from magic_envs.core.tools import Tool, format_tool_responses, random_call
from magic_envs.tool_execution import bfcl_backends as backends

CATEGORIES = backends.CATEGORIES
MAX_STEPS = 20  # BFCL's MAXIMUM_STEP_LIMIT: steps with calls in one turn; one more force-quits the entry
MAX_CALLS = 128  # per action: BFCL has no cap; the busiest gold turn makes 34 calls
# BFCL's user message for a turn that brings functions held back until then (miss_func).
ADDED_FUNCTIONS = "I have updated some more functions you can choose from. What about now?"
# multi_turn_base_154 has five user turns but six gold turns, so BFCL force-terminates every model on it.
UNSOLVABLE = frozenset({"multi_turn_base_154"})
INSTRUCTIONS = (
    "You are an expert in composing functions. You are given a question and a set of possible functions. Based "
    "on the question, you will need to make one or more function/tool calls to achieve the purpose. If none of "
    "the functions can be used, point it out. If the given question lacks the parameters required by the "
    "function, also point it out.\n\nAt each turn, you should try your best to complete the tasks requested by "
    "the user within the current turn. Continue to output functions to call until you have fulfilled the user's "
    "request to the best of your ability. Once you have no more functions to call, reply in plain text: the "
    "system will then consider the current turn complete and proceed to the next turn or task.")
TURN_DONE = "I have completed this request."
DECLINE = "I cannot complete this request with the functions and details I have; please tell me what is missing."
END = "Thank you, that is all."


@dataclass(frozen=True)
class Plan:
    """One entry, ready to play: the text opening each turn, the tools offered at reset, the gold calls."""

    entry_id: str
    classes: tuple[str, ...]
    config: dict
    long_context: bool
    turns: tuple[str, ...]  # the observation that opens each turn
    tools: tuple[Tool, ...]  # offered from the start
    gold: tuple[tuple[tuple[str, dict], ...], ...]  # per gold turn: (function, keyword arguments) in order


def plan_entry(entry: dict, category: str) -> Plan:
    """Read a BFCL multi-turn entry as BFCL's inference loop runs it; ValueError on a malformed one."""
    try:
        classes = tuple(entry["involved_classes"])
        known = {t.name: t for name in classes for t in backends.tools(name)}  # unknown class: ValueError
        held = {int(turn): list(names) for turn, names in (entry.get("missed_function") or {}).items()}
        added = {turn: [known[n] for n in names] for turn, names in held.items()}
        if any(not 0 <= turn < len(entry["question"]) for turn in added):
            raise ValueError("missed_function names a turn the entry does not have")
        offered = [t for t in known.values() if all(t not in a for a in added.values())]
        turns = []
        for index, messages in enumerate(entry["question"]):
            if index in added:
                if messages:
                    raise ValueError(f"turn {index} adds functions, so it holds no user message")
                schemas = "\n".join(json.dumps(t.schema(), ensure_ascii=False) for t in added[index])
                turns.append(f"{ADDED_FUNCTIONS}\n\n<tools>\n{schemas}\n</tools>")
            elif not messages or not all(isinstance(m["content"], str) for m in messages):
                raise ValueError(f"turn {index} has no user message")
            else:
                turns.append("\n\n".join(m["content"] for m in messages))
        gold = tuple(tuple(backends.parse_gold_call(c, classes) for c in calls) for calls in entry["ground_truth"])
        if not turns or not isinstance(entry["initial_config"], dict) or not isinstance(entry["id"], str):
            raise ValueError("an entry needs an id, user turns and an initial_config")
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"malformed BFCL multi-turn entry: {e!r}") from e
    return Plan(entry["id"], classes, entry["initial_config"], "long_context" in category, tuple(turns),
                tuple(offered), gold)


@functools.cache
def plan_of(entry_id: str, category: str) -> Plan:
    """The plan of a shipped entry, read once per process."""
    return plan_entry(backends.find_entry(entry_id), category)


class BFCLMultiTurnEnv(MagicEnv):
    """One BFCL v3 multi-turn entry: serve the user's requests turn by turn with stateful function calls.

    ## Description
    The Berkeley Function Calling Leaderboard v3 multi-turn categories shipped with `bfcl-eval` 2025.8.6.2:
    `multi_turn_base`, `multi_turn_miss_func` (a function the request needs is held back until a later turn),
    `multi_turn_miss_param` (a request lacks a parameter, given in the next turn) and
    `multi_turn_long_context` (the backends are loaded with long distracting content), 200 entries each. Calls
    run on bfcl-eval's own backend objects (`bfcl_backends`), built from the entry's `initial_config` as BFCL
    builds them, dispatched by name with keyword arguments, never through `eval`.

    ## Observation
    A user turn (`info["role"] == "user"`), or the results of the last action's calls, one `<tool_response>`
    block per call in call order, rendered as BFCL's executor renders them (dicts as JSON, failures as
    "Error during execution: ..."; `"tool"`). `info["tools"]`: the functions of the entry's backend classes
    as OpenAI schemas (`bfcl_schema.to_tool`), less those a miss_func entry holds back: the turn that brings
    them says BFCL's "I have updated some more functions you can choose from. What about now?" followed by
    their schemas in a `<tools>` block (`info["tools"]` is fixed at reset, so the announcement is the way).

    ## Action
    `<tool_call>` blocks (several = parallel calls, at most 128), run in order. Calls are executed as given,
    not validated first: a wrong type or an unknown function is answered with an error and scored, as in
    BFCL. As BFCL's executor, the env runs any function of the entry's backend classes, held back or not; any
    other name is answered "Error during execution: name '...' is not defined" (BFCL's `eval` would also run
    Python builtins). A few MathAPI calls whose cost has no bound (a logarithm to a billion digits) are refused
    with an error (`bfcl_backends.MAX_DIGITS`). Plain text without a call ends the turn (text beside calls
    is ignored).

    ## Rewards
    1.0 at the end when the entry passes BFCL's multi-turn checker, else 0.0. After every turn whose gold
    answer makes calls, the turn must have made calls, the public attributes of every backend object must
    equal those of the objects that ran the gold calls, and the gold calls' results must all occur among the
    results of the agent's calls so far (as a multiset, in any order). `info["metrics"]`: `turns_passed`
    (fraction of the entry's turns ended and passed; turns without gold calls are not checked and pass),
    `calls` and `failed_calls` (calls answered with an error).

    ## Starting State
    An entry drawn uniformly from the chosen categories (except `UNSOLVABLE`), or pinned with
    `reset(options={"task": {"id": "multi_turn_base_0"}})` or a full entry (`id`, `question`,
    `initial_config`, `involved_classes`, `ground_truth`, optional `missed_function`, `category`).

    ## Episode End
    Terminates after the last turn, at the first checked turn that fails (BFCL's verdict is then final; the
    observation says why and `env.verdict` holds BFCL's error type), or at the 21st step with calls in one
    turn (BFCL force-quits the entry; its runner notices that only as a missing turn, so it lets a force-quit
    in the last turn pass, a slip not copied here). Malformed actions (broken `<tool_call>` JSON), which end
    the turn in BFCL, are invalid actions here, answered with the error and retried; they count towards no
    limit but the TimeLimit (168 steps: 8 turns of 20 call steps and an answer).

    ## Arguments
    `split`: "test" only. `category`: one of `CATEGORIES`, a list of them, or None (default: all four).

    ## Version History
    * v0: initial release (bfcl-eval 2025.8.6.2 data and backends).

    >>> env = BFCLMultiTurnEnv(category="multi_turn_base")  # gymnasium.make("magic/BFCLMultiTurn-v0", ...)
    >>> request, info = env.reset(options={"task": {"id": "multi_turn_base_0"}})
    >>> request[:40], len(info["tools"])
    ("Move 'final_report.pdf' within document ", 32)
    >>> env.step('<tool_call>{"name": "cd", "arguments": {"folder": "document"}}</tool_call>')[0]
    '<tool_response>\\n{"current_working_directory": "document"}\\n</tool_response>'
    >>> reward, terminated = env.step("Done.")[1:3]  # the turn also needed mkdir and mv
    >>> reward, terminated, env.verdict[1]
    (0.0, True, 'multi_turn:instance_state_mismatch')
    >>> _ = env.reset(options={"task": {"id": "multi_turn_base_0"}})
    >>> terminated = False
    >>> while not terminated:
    ...     _, reward, terminated, _, info = env.step(env.oracle_action())
    >>> reward, info["metrics"]["turns_passed"]
    (1.0, 1.0)
    """

    family = "tool_execution"
    splits = ("test",)
    metric_names = ("turns_passed", "calls", "failed_calls")
    progress_metrics = ("turns_passed",)
    validates_calls = False
    max_calls = MAX_CALLS

    def __init__(self, split: str = "test", category=None, render_mode: str | None = None):
        super().__init__(split=split, render_mode=render_mode)
        chosen = CATEGORIES if category is None else (category,) if isinstance(category, str) else category
        if not isinstance(chosen, (list, tuple)) or not chosen or any(c not in CATEGORIES for c in chosen):
            raise ValueError(f"category must be one of {CATEGORIES}, a list of them or None; got {category!r}")
        self.categories = tuple(chosen)
        self._pool = [e["id"] for c in self.categories for e in backends.entries(c) if e["id"] not in UNSOLVABLE]

    def generate(self, rng: np.random.Generator) -> dict:
        return {"id": self._pool[int(rng.integers(len(self._pool)))]}

    def records(self) -> list[dict]:
        """Every entry of the chosen categories, by id, in BFCL's order (a whole-benchmark run)."""
        return [{"id": entry_id} for entry_id in self._pool]

    def setup(self, task: dict) -> str:
        if not isinstance(task.get("id"), str):
            raise ValueError("a BFCL multi-turn task needs the entry's 'id'")
        category = task.get("category") or backends.category_of(task["id"])
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; choose from {CATEGORIES}")
        by_id = set(task) <= {"id", "category"}
        if by_id and category != backends.category_of(task["id"]):
            raise ValueError(f"entry {task['id']!r} belongs to {backends.category_of(task['id'])!r}, not {category!r}")
        self._plan = plan = plan_of(task["id"], category) if by_id else plan_entry(task, category)
        self._model = backends.Backends(plan.classes, plan.config, plan.long_context)
        self._gold = backends.Backends(plan.classes, plan.config, plan.long_context)
        self._turn, self._steps, self._passed = 0, 0, 0
        self._results: list[str] = []  # every call's result this episode: the checker's containment pool
        self._calls = self._failed = 0
        self.verdict: tuple[bool, str, str] | None = None  # (valid, BFCL error type, message) once decided
        return plan.turns[0]

    def tool_list(self) -> list[Tool]:
        return list(self._plan.tools)

    def instructions(self) -> str:
        return INSTRUCTIONS

    def transition(self, action: ParsedAction) -> Outcome:
        if action.calls:
            self._steps += 1
            if self._steps > MAX_STEPS:
                return self._end(False, "multi_turn:force_terminated",
                                 f"turn {self._turn} went past {MAX_STEPS} steps with function calls")
            results = [self._model.call(c.name, c.arguments) for c in action.calls]
            self._results += results
            self._calls += len(results)
            self._failed += sum(r.startswith((backends.ERROR, '{"error"')) for r in results)
            return Outcome(format_tool_responses(results), role="tool", metrics=self.progress())
        failure = self._check_turn()
        if failure:
            return self._end(False, *failure)
        self._turn, self._steps, self._passed = self._turn + 1, 0, self._passed + 1
        if self._turn < len(self._plan.turns):
            return Outcome(self._plan.turns[self._turn], role="user", metrics=self.progress())
        if len(self._plan.gold) != len(self._plan.turns):
            return self._end(False, "multi_turn:force_terminated",
                             f"the gold answer has {len(self._plan.gold)} turns but the entry "
                             f"{len(self._plan.turns)}, so BFCL fails every model on it")
        return self._end(True, "", "")

    def _check_turn(self) -> tuple[str, str] | None:
        """BFCL's checks at the end of the current turn: None if it passes, else (error type, message)."""
        if len(self._plan.gold) != len(self._plan.turns):
            return None  # BFCL's runner fails such an entry before any check (`_end` at the last turn)
        gold = self._plan.gold[self._turn]
        expected = [self._gold.call(name, arguments) for name, arguments in gold]
        if not gold:
            return None
        if self._steps == 0:
            return "multi_turn:empty_turn_model_response", f"turn {self._turn} made no function call"
        differences = self._model.differences(self._gold)
        if differences:
            return "multi_turn:instance_state_mismatch", \
                f"after turn {self._turn} the state differs from the expected one in {', '.join(differences)}"
        missing = Counter(expected) - Counter(self._results)
        if missing:
            return "multi_turn:execution_response_mismatch", \
                f"after turn {self._turn} {sum(missing.values())} expected call result(s) never occurred"
        return None

    def _end(self, success: bool, error_type: str, message: str) -> Outcome:
        self.verdict = (success, error_type, message)
        text = END if success else f"The conversation ends: {message} ({error_type})."
        return Outcome(text, role="user", terminated=True, score=float(success), success=success,
                       metrics=self.progress())

    def progress(self) -> dict[str, float]:
        return {"turns_passed": self._passed / len(self._plan.turns), "calls": float(self._calls),
                "failed_calls": float(self._failed)}

    def oracle_action(self) -> str:
        """The turn's gold calls in one action (BFCL runs a gold turn as one sequence), then a short answer."""
        if self.verdict is not None:
            return END
        gold = self._plan.gold[self._turn] if self._turn < len(self._plan.gold) else ()
        if gold and self._steps == 0:
            return "\n".join(format_tool_call(name, arguments) for name, arguments in gold)
        return TURN_DONE if gold else DECLINE

    def random_action(self, rng: np.random.Generator) -> str:
        return TURN_DONE if rng.random() < 0.2 else random_call(list(self._plan.tools), rng)
