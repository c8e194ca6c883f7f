"""MagicEval-Plan's LLM metric: a judge model rates a predicted plan against the gold one, 0 to 100.

The judge is any OpenAI-compatible chat server (vLLM, `transformers serve`, llama.cpp, a hosted API), reached
with the standard library only. Settings come from explicit arguments or from the environment:

    MAGIC_JUDGE_BASE_URL   e.g. http://localhost:8000/v1 (the URL an `openai.OpenAI(base_url=...)` client takes)
    MAGIC_JUDGE_MODEL      the served model name; unset: the first model the server lists at /models
    OPENAI_API_KEY         sent as a bearer token when set (vLLM without --api-key needs none)

With no base URL the judge is "not configured" and `score` returns None, so callers report the metric as
absent rather than zero. Network and server failures also give None (logged once per server): a judge
outage must never crash or stall an episode beyond its timeout and retries.

By default (`constrain=True`) the judge asks the server to constrain its reply to the prompt's last line,
"Score: <0-100>", with vLLM's structured outputs (a `structured_outputs` regex; the grammar engine then only
lets the model write that), so any model, however weak, returns a parsable score; the justification is not
generated then. A server that rejects the field (HTTP 400/422: not vLLM) is asked again without it, and
plainly from then on; one that ignores unknown fields answers as usual. `constrain=False` always asks plainly.

The prompt (`plan_prompt`) shows the task, the gold plan and the predicted plan, asks for a 0-100 rating
on a described scale and for the number on a last line "Score: <n>"; `parse_score` reads it back robustly
(reasoning blocks, markdown, "85/100", a bare number) and `score` returns it divided by 100.

    >>> plan_prompt("Boil an egg.", "1: boil water", "1: boil water")[1]["content"].splitlines()[0]
    'Rate how well a PREDICTED plan solves a task, compared with a REFERENCE plan written by an expert.'
    >>> parse_score("The plan misses one step.\\nScore: 85"), parse_score("**Score:** 100/100"), parse_score("n/a")
    (0.85, 1.0, None)
    >>> Judge(base_url="").score("task", "gold", "pred") is None  # not configured
    True
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass

from magic_envs.core.openai_chat import ChatClient, ChatError

log = logging.getLogger(__name__)

ENV_BASE_URL, ENV_MODEL, ENV_API_KEY = "MAGIC_JUDGE_BASE_URL", "MAGIC_JUDGE_MODEL", "OPENAI_API_KEY"
# Real WorfBench prompts reach ~14k characters; an agent's answer can be megabytes of junk. Both are cut so
# one judge call stays within a small model's context; a cut text says so to the judge.
MAX_FIELD_CHARS = 16_000

SYSTEM = "You are a strict, fair grader of task plans. You answer with a short justification and a score."
TEMPLATE = """Rate how well a PREDICTED plan solves a task, compared with a REFERENCE plan written by an expert.

# Task
{task}

# Reference plan
{gold}

# Predicted plan
{pred}

# How to rate
Compare the steps, not the wording: a step phrased differently but doing the same thing counts as present.
Check that the predicted plan has every necessary step, no wrong or useless steps, the steps in a workable
order, and the same dependencies between steps (which step needs the result of which). A different plan
that would also solve the task may score high. Ignore formatting.
  100 = as good as the reference;  75 = minor omissions or extra steps;  50 = about half of the plan is right;
  25 = mostly wrong or incomplete;  0 = unrelated, empty or unusable.
Write at most three sentences of justification, then end with a line of the form
Score: <integer from 0 to 100>"""

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)
# "Score: 85", "score = 85", "**Score**: 85/100", "Rating - 7.5 / 10"
_LABELLED = re.compile(r"(?:score|rating)(?:\s+(?:of|is))?\W{0,6}?(-?\d+(?:\.\d+)?)(?:\s*/\s*(100|10)\b)?",
                       re.IGNORECASE)
_FRACTION = re.compile(r"(-?\d+(?:\.\d+)?)\s*/\s*(100|10)\b")
_BARE = re.compile(r"^\W*(-?\d+(?:\.\d+)?)\W*$")
# The only replies a constrained judge can write: exactly the prompt's last line, an integer in 0..100.
SCORE_REGEX = r"Score: (100|[1-9]?[0-9])"


def _clip(text: str) -> str:
    text = text if isinstance(text, str) else str(text)
    if len(text) <= MAX_FIELD_CHARS:
        return text.strip() or "(empty)"
    return text[:MAX_FIELD_CHARS] + f"\n[... {len(text) - MAX_FIELD_CHARS} more characters cut ...]"


def plan_prompt(task: str, gold: str, pred: str) -> list[dict]:
    """The chat messages sent to the judge (system + user)."""
    user = TEMPLATE.format(task=_clip(task), gold=_clip(gold), pred=_clip(pred))
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_score(text) -> float | None:
    """The judge's 0-100 rating as a fraction in [0, 1], or None when the reply holds no usable number.

    The last labelled score wins (a judge may restate the scale first); otherwise the last "n/100" or "n/10";
    otherwise a reply that is a bare number. Out-of-range numbers are rejected, not clipped: they mean the
    judge misread the scale.
    """
    if not isinstance(text, str):
        return None
    text = _THINK.sub(" ", text).strip()
    value = None
    labelled = _LABELLED.findall(text)
    if labelled:
        value = _scaled(*labelled[-1])
    elif _FRACTION.findall(text):
        value = _scaled(*_FRACTION.findall(text)[-1])
    elif _BARE.match(text):
        value = _scaled(_BARE.match(text).group(1), "")
    if value is None or not 0.0 <= value <= 100.0:
        return None
    return round(value / 100.0, 6)


def _scaled(number: str, scale: str) -> float | None:
    try:
        value = float(number)
    except ValueError:
        return None
    return value * 10.0 if scale == "10" else value


_WARNED: set[str] = set()  # servers whose failure was logged already
_UNCONSTRAINED: set[str] = set()  # servers that rejected structured outputs: asked plainly from then on


@dataclass(frozen=True)
class Judge:
    """An OpenAI-compatible judge. Unset fields are read from the environment when the judge is made.

    `timeout` is per HTTP request; a failed request is retried `retries` more times after `backoff`,
    `2 * backoff`, ... seconds (connection errors, timeouts, HTTP 429 and 5xx; other 4xx are final).
    `constrain`: ask for a reply constrained to "Score: <n>" where the server supports it (module docstring).
    """

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 1.0
    max_tokens: int = 1024
    constrain: bool = True

    def __post_init__(self):
        for name, var in (("base_url", ENV_BASE_URL), ("model", ENV_MODEL), ("api_key", ENV_API_KEY)):
            if getattr(self, name) is None:
                object.__setattr__(self, name, os.environ.get(var) or None)

    @property
    def configured(self) -> bool:
        return bool(self.base_url)

    def score(self, task: str, gold: str, pred: str) -> float | None:
        """The judge's rating in [0, 1]; None when not configured, unreachable or unparsable. Never raises."""
        if not self.configured:
            return None
        try:
            reply = self.complete(plan_prompt(task, gold, pred), regex=SCORE_REGEX if self.constrain else None)
        except Exception as error:  # noqa: BLE001  (any failure of the judge is a missing score, not a crash)
            self._warn_once(f"the judge at {self.base_url} failed ({error!r}); the LLM metric is skipped")
            return None
        value = parse_score(reply)
        if value is None:
            log.debug("judge reply without a usable score: %r", reply[:500])
        return value

    def complete(self, messages: list[dict], regex: str | None = None) -> str:
        """One chat completion (temperature 0); raises ChatError on failure after the retries.

        `regex` constrains the reply through vLLM's `structured_outputs`; a server that rejects the field is
        asked again without it, and is remembered as unconstrained only when that plain request succeeds
        (a 400 can have other causes, such as a prompt longer than the context).
        """
        client = ChatClient(self.base_url, self.model, self.api_key, self.timeout, self.retries, self.backoff,
                            params={"temperature": 0.0, "max_tokens": self.max_tokens})
        if regex and self.base_url not in _UNCONSTRAINED:
            try:
                return client.complete(messages, structured_outputs={"regex": regex})
            except ChatError as error:
                if error.status not in (400, 422):
                    raise
                content = client.complete(messages)
                _UNCONSTRAINED.add(self.base_url)
                log.info("the judge at %s rejected structured outputs (HTTP %s); asking it plainly", self.base_url,
                         error.status)
                return content
        return client.complete(messages)

    def _warn_once(self, message: str) -> None:
        key = f"{self.base_url}|{self.model}"
        if key not in _WARNED:
            _WARNED.add(key)
            log.warning(message)
        else:
            log.debug(message)


def judge_plan(task: str, gold: str, pred: str, judge: Judge | None = None) -> float | None:
    """`Judge.score` with settings from the environment unless a judge is given."""
    return (judge or Judge()).score(task, gold, pred)
