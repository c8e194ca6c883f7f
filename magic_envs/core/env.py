"""The env base class: reset and step written once for every MagicAgent environment.

A family writes five hooks: `generate` (a task dict from the env's RNG), `setup` (begin an episode on a
task, returning the first observation), `transition` (answer one well-formed action), `oracle_action` and,
optionally, `random_action`, `tool_list` and `instructions`. Everything else, the action grammar, argument
validation, the fixed info keys, split membership and task pinning, lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from magic_envs.core.grammar import CALL_OPEN, ParsedAction, parse_action
from magic_envs.core.spaces import AnyText
from magic_envs.core.tasks import IID_SPLITS, fingerprint, iid_split_of, roundtrip
from magic_envs.core.tools import Tool, check_call, format_tool_responses

ROLES = ("user", "tool")


@dataclass
class Outcome:
    """What a family's `transition` returns for one action."""

    observation: str
    role: str = "user"
    terminated: bool = False
    score: float = 0.0
    success: bool = False
    valid: bool = True
    error: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    reward: float = 0.0  # paid on non-terminal steps only by envs that document dense progress


class MagicEnv(gym.Env[str, str]):
    """Base of every `magic/` env: text in, text out, a verifiable terminal reward and an oracle."""

    metadata: ClassVar[dict] = {"render_modes": ["ansi"], "render_fps": 1}
    family: ClassVar[str] = ""
    splits: ClassVar[tuple[str, ...]] = ("train", "test", "ood")
    metric_names: ClassVar[tuple[str, ...]] = ()
    # The metrics (fractions in [0, 1], at the episode's end) that measure partial progress towards the task score;
    # magic_rl rewards them as the `progress` objective. Empty where partial credit means nothing (ALFWorld).
    progress_metrics: ClassVar[tuple[str, ...]] = ()
    # Whether tool calls are checked against their schemas before `transition` (an invalid call is then an
    # invalid action, retried with the error). Envs that score the calls themselves, as BFCL does (a wrong
    # type or an unknown function is a wrong answer, not a retry), set this to False.
    validates_calls: ClassVar[bool] = True
    # At most this many tool calls in one action (None: no cap); more is an invalid action, refused before
    # any per-call work so a flood of calls costs nothing.
    max_calls: ClassVar[int | None] = None

    def __init__(self, split: str = "train", render_mode: str | None = None):
        if split not in self.splits:
            raise ValueError(f"unknown split {split!r} for {type(self).__name__}; choose one of {self.splits}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        self.split, self.render_mode = split, render_mode
        self.observation_space = AnyText()
        self.action_space = AnyText()
        self.task: dict | None = None
        self.task_id = ""
        self.transcript: list[tuple[str, str]] = []  # (role, text), for render and play
        self._tools: dict[str, Tool] = {}
        self._done = False
        self._last = Outcome("")

    # ---- hooks a family implements -------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> dict:
        """A new task dict (JSON-able) drawn from `rng` only, for `self.split` and the env's knobs."""
        raise NotImplementedError

    def setup(self, task: dict) -> str:
        """Begin an episode on `task` and return the first observation. Raise ValueError on a bad task.

        `self.task` stays the task as drawn or pinned (what a dataset row stores); a family that converts it
        (an external benchmark's record, a hand-written task it completes) keeps its working form itself.
        """
        raise NotImplementedError

    def transition(self, action: ParsedAction) -> Outcome:
        """Answer a well-formed action: no parse errors, every tool call valid, and not empty."""
        raise NotImplementedError

    def oracle_action(self) -> str:
        """The action a perfect agent takes now; replaying it from reset solves the task."""
        raise NotImplementedError

    def random_action(self, rng: np.random.Generator) -> str:
        """A random action in the right format (a baseline that is hard to beat by luck)."""
        return self.action_space.sample()

    def tool_list(self) -> list[Tool]:
        return []

    def instructions(self) -> str:
        return ""

    # ---- the contract, written once ------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        pinned = (options or {}).get("task")
        if pinned is not None and not isinstance(pinned, dict):
            raise TypeError(f"options['task'] must be a task dict, got {type(pinned).__name__}")
        task = roundtrip(pinned) if pinned is not None else self._draw_task()
        self.task_id = fingerprint(task)  # of the task as given, before setup completes a hand-written one
        observation = self.setup(task)
        self.task = task
        self._tools = {t.name: t for t in self.tool_list()}
        self._done = False
        self._last = Outcome(observation)
        self.transcript = [("user", observation)]
        info = self._info(self._last)
        info["tools"] = [t.schema() for t in self._tools.values()]
        info["instructions"] = self.instructions()
        return observation, info

    def step(self, action: str):
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        parsed = parse_action(action)
        if self._done:
            outcome = Outcome("The episode is over; call reset() for a new task.", terminated=True, valid=False,
                              error="the episode is over", score=self._last.score, success=self._last.success,
                              metrics=self._last.metrics)
        else:
            outcome = self._check(parsed) or self.transition(parsed)
        self._done = outcome.terminated
        if outcome.valid:
            self._last = outcome
        self.transcript += [("assistant", parsed.raw), (outcome.role, outcome.observation)]
        reward = float(outcome.score) if outcome.terminated else float(outcome.reward)
        return outcome.observation, reward, outcome.terminated, False, self._info(outcome)

    def _check(self, parsed: ParsedAction) -> Outcome | None:
        """An invalid-action outcome, or None when the action is well formed."""
        if parsed.errors:
            role = "tool" if CALL_OPEN in parsed.raw and self._tools else "user"
            return self.invalid("; ".join(parsed.errors), role)
        if parsed.calls:
            if not self._tools:
                return self.invalid("this task offers no functions to call; reply in plain text", "user")
            if self.max_calls is not None and len(parsed.calls) > self.max_calls:
                return self.invalid(f"{len(parsed.calls)} calls in one action; at most {self.max_calls} are allowed",
                                    "tool")
            problems = [check_call(c, self._tools) for c in parsed.calls] if self.validates_calls else []
            if any(problems):
                return self.invalid("; ".join(p for p in problems if p), "tool")
        elif not parsed.text:
            return self.invalid("the action is empty: write your answer as plain text after any <think> block")
        return None

    def invalid(self, error: str, role: str = "user") -> Outcome:
        """An error transition: the agent is told what was wrong and the state is unchanged."""
        text = f"Error: {error}."
        observation = format_tool_responses([text]) if role == "tool" else text
        return Outcome(observation, role=role, valid=False, error=error, metrics=self.progress())

    def progress(self) -> dict[str, float]:
        """The episode's metrics so far, which error transitions report too, so that an episode truncated after
        an invalid action still shows how far it got. Envs whose metrics grow during an episode override it."""
        return {}

    def _info(self, outcome: Outcome) -> dict:
        unknown = set(outcome.metrics) - set(self.metric_names)
        assert not unknown, f"{type(self).__name__} reported undeclared metrics {unknown}"
        return {
            "success": bool(outcome.success),
            "score": float(outcome.score),
            "valid": bool(outcome.valid),
            "error": outcome.error,
            "role": outcome.role,
            "task_id": self.task_id,
            "metrics": {name: float(outcome.metrics.get(name, 0.0)) for name in self.metric_names},
        }

    def _draw_task(self) -> dict:
        # Where train and test share one distribution, the fingerprint decides which split owns a task.
        # An env without both (a real benchmark's test set) keeps every task it draws.
        shared = self.split in IID_SPLITS and all(s in self.splits for s in IID_SPLITS)
        for _ in range(1000):
            task = roundtrip(self.generate(self.np_random))
            if not shared or iid_split_of(fingerprint(task)) == self.split:
                return task
        raise RuntimeError(f"{type(self).__name__} could not draw a {self.split!r} task in 1000 tries")

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return "\n\n".join(f"[{role}]\n{text}" for role, text in self.transcript)
        return None
