"""MagicEval-Plan's LLM metric: a judge model rates a predicted plan against the gold one, 0 to 100.

The judge is any OpenAI-compatible chat server (vLLM, `transformers serve`, llama.cpp, a hosted API), reached
with the standard library only. Settings come from explicit arguments or from the environment:

    MAGIC_JUDGE_BASE_URL   e.g. http://localhost:8000/v1 (the URL an `openai.OpenAI(base_url=...)` client takes)
    MAGIC_JUDGE_MODEL      the served model name; unset: the first model the server lists at /models
    OPENAI_API_KEY         sent as a bearer token when set (vLLM without --api-key needs none)

With no base URL the judge is "not configured" and `score` returns None, so callers report the metric as
absent rather than zero. Network and server failures also give None (logged once per server): a judge
outage must never crash or stall an episode beyond its timeout and retries.

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

import json
import logging
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

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
_SERVED: dict[str, str] = {}  # base_url -> the model it serves, asked once


@dataclass(frozen=True)
class Judge:
    """An OpenAI-compatible judge. Unset fields are read from the environment when the judge is made.

    `timeout` is per HTTP request; a failed request is retried `retries` more times after `backoff`,
    `2 * backoff`, ... seconds (connection errors, timeouts, HTTP 429 and 5xx; other 4xx are final).
    """

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 1.0
    max_tokens: int = 1024

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
            reply = self.complete(plan_prompt(task, gold, pred))
        except Exception as error:  # noqa: BLE001  (any failure of the judge is a missing score, not a crash)
            self._warn_once(f"the judge at {self.base_url} failed ({error!r}); the LLM metric is skipped")
            return None
        value = parse_score(reply)
        if value is None:
            log.debug("judge reply without a usable score: %r", reply[:500])
        return value

    def complete(self, messages: list[dict]) -> str:
        """One chat completion (temperature 0); raises on failure after the retries."""
        body = {"model": self.model or self._served_model(), "messages": messages, "temperature": 0.0,
                "max_tokens": self.max_tokens}
        reply = self._request("/chat/completions", body)
        content = reply["choices"][0]["message"].get("content")
        if not isinstance(content, str):
            raise ValueError(f"the server sent no text content: {str(reply)[:200]}")
        return content

    def _served_model(self) -> str:
        if self.base_url not in _SERVED:
            models = self._request("/models", None).get("data") or []
            if not models:
                raise ValueError("the server lists no model; set MAGIC_JUDGE_MODEL")
            _SERVED[self.base_url] = models[0]["id"]
        return _SERVED[self.base_url]

    def _request(self, path: str, body: dict | None) -> dict:
        url = self.base_url.rstrip("/") + path
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(url, data=data, headers=headers, method="GET" if body is None else "POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as error:
                if error.code != 429 and error.code < 500 or attempt == self.retries:
                    raise
            except (urllib.error.URLError, TimeoutError, ConnectionError):
                if attempt == self.retries:
                    raise
            time.sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable")

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
