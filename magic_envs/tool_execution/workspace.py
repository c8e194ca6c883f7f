"""magic/Workspace-v0: long-horizon tool execution in a stateful personal workspace, verified on the whole world."""

from __future__ import annotations

import numpy as np

from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.core.grammar import ParsedAction, ToolCall, format_tool_call
from magic_envs.core.tasks import IID_SPLITS, fingerprint, iid_split_of, roundtrip
from magic_envs.core.tools import check_call, format_tool_responses, random_call
from magic_envs.tool_execution.workspace_plan import GOALS, Progress, resolve
from magic_envs.tool_execution.workspace_state import WorkspaceError, fresh, initial_ids, same_world
from magic_envs.tool_execution.workspace_tasks import HORIZONS, LIMITS, check_task, compose, rebuild, say, stated
from magic_envs.tool_execution.workspace_tools import SERVICE, fits_schema, registry
from magic_envs.tool_execution.workspace_tools import call as run_tool

MAX_CALLS = 16  # per action
INSTRUCTIONS = (
    "You are the user's assistant and act in their workspace (files, e-mail, calendar, contacts, notes, an online "
    "shop, bank accounts and other apps) through the functions offered. Call functions with "
    '<tool_call>{"name": <function>, "arguments": {...}}</tool_call> blocks; several blocks in one message run in '
    "order, and each result comes back in a <tool_response> block. Look up ids, amounts, addresses and texts instead "
    "of guessing them. A service may answer that it is busy: then nothing happened, so make the same call again. "
    "Other errors say what was wrong: fix the call and go on. Change only what the request asks for: no other "
    "e-mails, files, notes, events, to-dos, purchases or payments. When everything is done, reply in plain text "
    "without a function call: a short report that answers any question of the request. That reply ends the session.")
CLOSING = "Thanks, that is everything."


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _pair(value, name: str, lo: int, hi: int) -> tuple[int, int]:
    pair = [value] * 2 if _is_int(value) else value
    if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(map(_is_int, pair)) and lo <= pair[0] <= pair[1]
            <= hi):
        raise ValueError(f"{name} must be an int or a [min, max] pair within [{lo}, {hi}]; got {value!r}")
    return int(pair[0]), int(pair[1])


def _unit(seed: int, counter: int) -> float:
    """A uniform number in [0, 1) from a seed and a counter (splitmix64): the same call number, the same draw."""
    z = (seed * 0x9E3779B97F4A7C15 + counter * 0xBF58476D1CE4E5B9 + 1) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) / 2.0**64


class WorkspaceEnv(MagicEnv):
    """Carry out a user's multi-part request with tools on their files, mail, calendar, contacts, notes, shop and bank.

    ## Description
    A stateful workspace held in memory as plain data (`workspace_world`): about 50 e-mails, 45 files in folders,
    a month of calendar events, 30 contacts, 20 notes, a shop with a cart, coupons and past orders, checking and
    savings accounts with payees and three months of transactions, plus to-do lists and a team chat. 67 tools
    with OpenAI schemas act on it with real semantics (`workspace_office`, `workspace_agenda`, `workspace_money`,
    `workspace_team`). A task is a list of 3-14 sub-goals (`workspace_goals_*`: pay an e-mailed invoice, shop
    with a coupon, book the earliest free slot and invite, file scans by issuer, copy a phone number from a mail,
    accept an invitation, forward, share or save files, clean the inbox, ...) whose gold plans need 15-50 calls
    together, with dependencies (ids, amounts, free slots and texts found by one call feed the next), search,
    paginated listings, long texts, conditions (top up checking first when it cannot cover an invoice), refusals
    to recover from (a folder that does not exist yet, an expired coupon) and, with `noise`, services that answer
    "busy". Some tasks end with a question. The oracle replays the gold plan: it retries busy calls and makes
    the refused calls of the plan too, so its episodes show the recovery.

    ## Observation
    The user's request at reset (the date, the numbered sub-goals, what to report; `info["role"] == "user"`);
    then one `<tool_response>` per call of the last action (`"tool"`): the tool's JSON result, or "Error: ...".

    ## Action
    `<tool_call>` blocks (at most 16 per action), run in order; arguments are checked against the schemas first
    (an unknown tool or bad arguments make an invalid action that changes nothing). Plain text without a call is
    the final report to the user: it ends the episode and is scored. Text beside calls is ignored.

    ## Rewards
    1.0 at the end iff the whole final world equals the gold world (the gold plan replayed on the initial world)
    and the report states every fact the question asks for. The comparison (`workspace_state.same_world`)
    covers every record of every app; it ignores the fields the task declares free (timestamps) and matches
    records created during the episode by content, not id; so any extra, missing or different change fails:
    deleting an unrelated file, an extra e-mail, note, cart item or payment. Facts: amounts to the cent (any
    number in the report), counts, and texts (case-insensitive). `info["metrics"]`: `subgoals` (the fraction of
    sub-goals achieved: every record a sub-goal's gold steps touch holds its gold value, a question counts once
    answered; updated after each change, so RL can use progress without changing success), `state_match`,
    `answer_ok` (0/1 at the end), `calls` and `failed_calls` (refused or busy calls).

    ## Starting State
    A task drawn from the env's RNG or pinned with `reset(options={"task": task})` (`workspace_tasks`: the world
    seed, planted records, request, sub-goals, gold plan, facts, offered tools, noise and fault seed).

    ## Episode End
    Terminates on the plain-text report. The TimeLimit (100 steps) truncates; the longest plans need 50 calls
    plus retries of busy services (at most two busy answers in a row).

    ## Arguments
    `split`: "train" | "test" (the same distribution over disjoint worlds: the fingerprint of the world seed
    decides the split) | "ood" (every task also needs the to-do and chat apps, whose 11 tools train and test never
    offer, not even as distractors). `horizon`: "short" (15-25 calls), "medium" (25-35, default), "long" (35-50)
    or a [min, max] pair within [5, 50]. `noise`: the chance that a call to a remote service (mail sending and
    search, shop search and checkout, bank transfers, payments and listings, chat) answers "busy" (0-0.5,
    default 0.1). `distractors`: tools offered beyond those the gold plan uses, int or [min, max] within [0, 70]
    (default [5, 15]).

    ## Version History
    * v0: initial release.

    >>> import gymnasium, magic_envs
    >>> env = gymnasium.make("magic/Workspace-v0", horizon="short")
    >>> request, info = env.reset(seed=0)
    >>> info["role"], len(info["tools"]) >= 10
    ('user', True)
    >>> terminated = False
    >>> while not terminated:
    ...     _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
    >>> reward, info["metrics"]["subgoals"]
    (1.0, 1.0)
    """

    family = "tool_execution"
    metric_names = ("subgoals", "state_match", "answer_ok", "calls", "failed_calls")
    progress_metrics = ("subgoals",)
    max_calls = MAX_CALLS
    # Calls are checked in `transition` instead: a fast exact check first, jsonschema's wording when it fails
    # (same outcome as the base class's check, at a fraction of its cost per step).
    validates_calls = False

    def __init__(self, split: str = "train", horizon="medium", noise: float = 0.1, distractors=(5, 15),
                 render_mode: str | None = None):
        super().__init__(split=split, render_mode=render_mode)
        if isinstance(horizon, str):
            if horizon not in HORIZONS:
                raise ValueError(f"horizon must be one of {sorted(HORIZONS)} or a [min, max] pair; got {horizon!r}")
            horizon = HORIZONS[horizon]
        self.horizon = _pair(horizon, "horizon", *LIMITS)
        if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 <= noise <= 0.5:
            raise ValueError(f"noise must be a probability in [0, 0.5]; got {noise!r}")
        self.noise = float(noise)
        self.distractors = _pair(distractors, "distractors", 0, 70)

    # ---- tasks ------------------------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> dict:
        for _ in range(1000):
            seed = int(rng.integers(2**31))
            if self.split in IID_SPLITS and iid_split_of(fingerprint({"world_seed": seed})) != self.split:
                continue
            built = compose(seed, self.split == "ood", self.horizon, self.noise, self.distractors)
            if built is not None:
                self._prebuilt = built  # setup reuses the worlds this generation already built
                return built[0]
        raise RuntimeError(f"no Workspace task fits horizon {self.horizon} after 1000 world seeds")

    def _draw_task(self) -> dict:
        return roundtrip(self.generate(self.np_random))

    def setup(self, task: dict) -> str:
        check_task(task)
        prebuilt = self.__dict__.pop("_prebuilt", None)
        unknown = [s.get("goal") for s in task["subgoals"] if s.get("goal") not in GOALS]
        if unknown:
            raise ValueError(f"unknown sub-goal kinds {unknown}")
        initial, self._gold = prebuilt[1:] if prebuilt and prebuilt[0] == task else rebuild(task)
        self.world, self._ids, self._free = fresh(initial), initial_ids(initial), frozenset(task["free"])
        self._progress = Progress(self.world, self._ids, self._gold.targets, self._free)
        self._touched: set = set()  # every record a call of this episode changed
        self._plan, self._facts, self._offered = task["plan"], task["facts"], task["tools"]
        self._asks = [GOALS[s["goal"]].kind == "question" for s in task["subgoals"]]
        self._noise, self._fault_seed = float(task["noise"]), task["fault_seed"]
        self._cursor, self._results = 0, []
        self.calls = self.failed = self._busy_streak = 0
        return task["request"]

    def tool_list(self):
        tools = registry()
        return [tools[name].tool for name in self._offered]

    def instructions(self) -> str:
        return INSTRUCTIONS

    # ---- the episode ------------------------------------------------------------------------------------
    def transition(self, action: ParsedAction) -> Outcome:
        if action.calls:
            problems = [check_call(call, self._tools) for call in action.calls
                        if call.name not in self._tools or not fits_schema(self._tools[call.name].parameters,
                                                                           call.arguments)]
            if any(problems):
                return self.invalid("; ".join(p for p in problems if p), "tool")
            results = [self._run(call) for call in action.calls]
            return Outcome(format_tool_responses(results), role="tool", metrics=self.metrics())
        state = same_world(self.world, self._gold.world, self._ids, self._free, self._touched | self._gold.touched)
        answer = all(stated(action.text, fact) for fact in self._facts)
        success = state and answer
        return Outcome(CLOSING, role="user", terminated=True, score=float(success), success=success,
                       metrics=self.metrics(state, answer))

    def _run(self, call: ToolCall):
        spec = registry()[call.name]
        self.calls += 1
        if spec.flaky and self._busy():
            self.failed += 1
            return f"Error: the {SERVICE[spec.app]} is busy (503 Service Unavailable); nothing was done. Retry the " \
                   "call."
        self.world["journal"] = []
        try:
            result = run_tool(self.world, call.name, call.arguments)
        except WorkspaceError as error:
            self.failed += 1
            self._follow(call, None, refused=True)
            return f"Error: {error}"
        self._follow(call, result, refused=False)
        journal = self.world["journal"]
        if journal:
            self._touched.update(("cart", None) if c == "cart" else (c, k) for c, k in journal)
            self._progress.update(self.world, journal)
        return result

    def _busy(self) -> bool:
        """Whether this call of a remote service answers "busy": a draw from the task's fault seed and the call
        counter (deterministic, and it survives pickling); never three times in a row."""
        if self._busy_streak >= 2 or _unit(self._fault_seed, self.calls) >= self._noise:
            self._busy_streak = 0
            return False
        self._busy_streak += 1
        return True

    def _follow(self, call: ToolCall, result, refused: bool) -> None:
        """Move the oracle's place in the gold plan past a step once a call has done what the step does."""
        if self._cursor < len(self._plan):
            step = self._plan[self._cursor]
            if step["name"] == call.name and refused == bool(step.get("fails")) \
                    and resolve(step["arguments"], self._results) == call.arguments:
                self._results.append(result)
                self._cursor += 1

    def metrics(self, state: bool = False, answer: bool = False) -> dict[str, float]:
        reached = [answer if asks else done for asks, done in zip(self._asks, self._progress.reached)]
        return {"subgoals": sum(reached) / len(reached), "state_match": float(state), "answer_ok": float(answer),
                "calls": float(self.calls), "failed_calls": float(self.failed)}

    def progress(self) -> dict[str, float]:
        return self.metrics() if hasattr(self, "_progress") else {}

    # ---- oracle and baseline ----------------------------------------------------------------------------
    def oracle_action(self) -> str:
        """The next gold step (a step counts as done once a call did exactly what it does), then the report. It
        assumes the episode's calls so far were its own, or changed nothing (invalid actions, lookups)."""
        if self._cursor < len(self._plan):
            step = self._plan[self._cursor]
            return format_tool_call(step["name"], resolve(step["arguments"], self._results))
        answer = "; ".join(say(fact) for fact in self._facts)
        return "All done: every item of your list is taken care of." + (f" The answer: {answer}." if answer else "")

    def random_action(self, rng: np.random.Generator) -> str:
        """Mostly a call of an offered tool with right-typed guessed arguments, sometimes the final report."""
        return random_call(self.tool_list(), rng) if rng.random() < 0.9 else "Done."
