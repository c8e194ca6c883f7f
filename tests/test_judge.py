"""MagicEval-Plan's LLM judge: prompt, score parsing, and its behaviour without a (reachable) server.

The one test against a real OpenAI-compatible server is marked `judge_server` and runs only when
MAGIC_JUDGE_BASE_URL points at one (vLLM or `transformers serve`); no stand-in server is used anywhere.
"""

import logging
import os
import socket
import time

import pytest

from magic_envs.decomposition import judge as judge_module
from magic_envs.decomposition.judge import MAX_FIELD_CHARS, Judge, judge_plan, parse_score, plan_prompt

GOLD = "Node:\n1: go to the kitchen\n2: take the mug\nEdge: (START,1) (1,2) (2,END)"


@pytest.fixture
def no_judge_env(monkeypatch):
    for var in ("MAGIC_JUDGE_BASE_URL", "MAGIC_JUDGE_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def closed_port() -> int:
    """A local port nothing listens on: connecting to it is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_prompt_shows_task_gold_and_prediction_and_asks_for_a_0_100_score():
    system, user = plan_prompt("Put a clean mug on the desk.", GOLD, "1: find mug")
    assert system["role"] == "system" and user["role"] == "user"
    text = user["content"]
    assert text.index("Put a clean mug") < text.index("go to the kitchen") < text.index("1: find mug")
    assert "# Reference plan" in text and "# Predicted plan" in text and "0 to 100" in text
    assert text.rstrip().endswith("Score: <integer from 0 to 100>")


def test_prompt_cuts_huge_fields_and_keeps_unicode():
    _, user = plan_prompt("日本語のタスク " * 10, GOLD, "x" * 1_000_000)
    assert "日本語のタスク" in user["content"] and len(user["content"]) < 3 * MAX_FIELD_CHARS
    assert "more characters cut" in user["content"]
    assert "(empty)" in plan_prompt("task", GOLD, "   ")[1]["content"]


@pytest.mark.parametrize("reply, expected", [
    ("Score: 85", 0.85),
    ("The plan misses the last step.\nScore: 70", 0.70),
    ("**Score:** 100", 1.0),
    ("Score: 0", 0.0),
    ("score = 42", 0.42),
    ("SCORE - 7.5/10", 0.75),
    ("Score: 85/100", 0.85),
    ("I would give it a score of 60.", 0.60),
    ("Rating: 9/10", 0.9),
    ("Scale: 0 = bad, 100 = good.\nScore: 55", 0.55),  # the last labelled number wins
    ("Score: 30\n...on reflection...\nScore: 40", 0.40),
    ("<think>maybe Score: 10</think>Score: 90", 0.90),  # reasoning is ignored
    ("<think>unfinished reasoning Score: 10", None),
    ("73", 0.73),
    ("  **73**  ", 0.73),
    ("The plan deserves 80/100.", 0.80),
    ("Score: 87.5", 0.875),
    ("Score: 150", None),  # out of range: a misread scale, not a clip
    ("Score: -5", None),
    ("Score: ten", None),
    ("The plan is good.", None),
    ("", None),
    (None, None),
    ("Punteggio 90", None),
])
def test_parse_score_table(reply, expected):
    assert parse_score(reply) == expected


def test_not_configured_gives_none(no_judge_env):
    assert not Judge().configured
    assert Judge().score("task", GOLD, GOLD) is None
    assert judge_plan("task", GOLD, GOLD) is None


def test_settings_come_from_the_environment_unless_given(monkeypatch):
    monkeypatch.setenv("MAGIC_JUDGE_BASE_URL", "http://judge.local:9/v1")
    monkeypatch.setenv("MAGIC_JUDGE_MODEL", "qwen")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judge = Judge()
    assert (judge.base_url, judge.model, judge.api_key, judge.configured) == (
        "http://judge.local:9/v1", "qwen", "sk-test", True)
    assert Judge(base_url="http://other/v1", model="m").base_url == "http://other/v1"
    assert not Judge(base_url="").configured  # explicitly off even with the variable set


def test_connection_error_gives_none_after_retries_and_logs_once(no_judge_env, caplog):
    judge = Judge(base_url=f"http://127.0.0.1:{closed_port()}/v1", model="m", retries=2, backoff=0.05, timeout=5)
    judge_module._WARNED.clear()
    start = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="magic_envs.decomposition.judge"):
        assert judge.score("task", GOLD, GOLD) is None
        assert judge.score("task", GOLD, "1: other") is None
    assert time.monotonic() - start >= 2 * (0.05 + 0.1)  # both calls waited out the backoff
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "the LLM metric is skipped" in warnings[0].getMessage()


def test_unresolvable_host_and_model_discovery_failure_give_none(no_judge_env):
    assert Judge(base_url="http://no-such-host.invalid/v1", retries=0).score("t", GOLD, GOLD) is None
    # no model set: the judge asks the server which one it serves; that fails the same clean way
    assert Judge(base_url=f"http://127.0.0.1:{closed_port()}/v1", retries=0).score("t", GOLD, GOLD) is None


@pytest.mark.judge_server
@pytest.mark.skipif(not os.environ.get("MAGIC_JUDGE_BASE_URL"), reason="no judge server: set MAGIC_JUDGE_BASE_URL")
def test_a_real_judge_server_rates_gold_above_an_unrelated_plan():
    judge = Judge(timeout=120)
    task = "Put a clean mug on the desk."
    gold = "Node:\n1: go to the kitchen\n2: take the mug\n3: clean the mug\n4: put the mug on the desk\n" \
           "Edge: (START,1) (1,2) (2,3) (3,4) (4,END)"
    same = judge.score(task, gold, gold)
    unrelated = judge.score(task, gold, "Node:\n1: sing a song\nEdge: (START,1) (1,END)")
    assert same is not None and unrelated is not None, "the server answered without a parsable score"
    assert 0.0 <= unrelated < same <= 1.0
