"""MagicEval-Plan's LLM judge: prompt, score parsing, its behaviour without a (reachable) server, and against a
real one.

Tests taking the `openai_server` fixture (tests/servers.py) run against vLLM serving a tiny random Qwen3: its
replies are garbage, so they check the protocol (requests, constrained decoding, fallback, metric plumbing),
not the quality of a rating. `test_a_real_judge_server_rates_gold_above_an_unrelated_plan` (marked
`judge_server`) checks quality and runs only when MAGIC_JUDGE_BASE_URL points at a real judge model. No
stand-in server is used anywhere.
"""

import logging
import os
import re
import socket
import time

import gymnasium
import pytest

from magic_envs.core import openai_chat
from magic_envs.decomposition import judge as judge_module
from magic_envs.decomposition.judge import (
    MAX_FIELD_CHARS,
    SCORE_REGEX,
    Judge,
    judge_plan,
    parse_score,
    plan_prompt,
)

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


# ---- against a real server: vLLM (CPU) serving a tiny random Qwen3 ----------------------------------------
TASK = "Put a clean mug on the desk."
UNRELATED = "Node:\n1: sing a song\nEdge: (START,1) (1,END)"


def judge_logs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == judge_module.__name__]


@pytest.fixture
def fresh_judge_state(no_judge_env, monkeypatch):
    """Per-server memories start empty, so each test sees the server as new."""
    monkeypatch.setattr(openai_chat, "SERVED", {})
    monkeypatch.setattr(judge_module, "_UNCONSTRAINED", set())
    monkeypatch.setattr(judge_module, "_WARNED", set())


def test_constrained_judge_gets_a_score_from_any_model(openai_server, fresh_judge_state, caplog):
    judge = Judge(base_url=openai_server.base_url)  # no model: asked from the server's /models
    reply = judge.complete(plan_prompt(TASK, GOLD, UNRELATED), regex=SCORE_REGEX)
    assert re.fullmatch(SCORE_REGEX, reply), reply  # the server applied the constraint: garbage is impossible
    assert openai_chat.SERVED[openai_server.base_url] == openai_server.model
    with caplog.at_level(logging.INFO, logger="magic_envs.decomposition.judge"):
        scores = [judge.score(TASK, GOLD, pred) for pred in (GOLD, UNRELATED, "", "x" * 1_000_000, "日本語 " * 50)]
    assert all(isinstance(s, float) and 0.0 <= s <= 1.0 for s in scores), scores
    assert judge.score(TASK, GOLD, GOLD) == scores[0]  # temperature 0: the same answer again
    assert not judge_logs(caplog) and openai_server.base_url not in judge_module._UNCONSTRAINED


def test_plain_judge_of_a_random_model_is_cleanly_unscored_or_in_range(openai_server, fresh_judge_state, caplog):
    judge = Judge(base_url=openai_server.base_url, model=openai_server.model, constrain=False, max_tokens=32)
    reply = judge.complete(plan_prompt(TASK, GOLD, GOLD))
    assert isinstance(reply, str)  # garbage text (often blank), but a successful request
    with caplog.at_level(logging.WARNING, logger="magic_envs.decomposition.judge"):
        value = judge.score(TASK, GOLD, GOLD)
    assert value == parse_score(reply) and (value is None or 0.0 <= value <= 1.0)
    assert not judge_logs(caplog)  # an unparsable reply is "unscored", not a judge failure


def test_a_server_rejecting_the_constraint_is_asked_plainly(openai_server, fresh_judge_state, monkeypatch, caplog):
    # vLLM answers HTTP 400 to an invalid regex, as a server without structured outputs does to the field.
    monkeypatch.setattr(judge_module, "SCORE_REGEX", "Score: (")
    judge = Judge(base_url=openai_server.base_url, model=openai_server.model, max_tokens=16)
    with caplog.at_level(logging.INFO, logger="magic_envs.decomposition.judge"):
        first, second = judge.score(TASK, GOLD, GOLD), judge.score(TASK, GOLD, UNRELATED)
    assert all(v is None or 0.0 <= v <= 1.0 for v in (first, second))
    assert openai_server.base_url in judge_module._UNCONSTRAINED
    infos = judge_logs(caplog)
    assert len(infos) == 1 and "rejected structured outputs (HTTP 400)" in infos[0], infos  # asked once, remembered


def test_decompose_llm_metric_reads_the_server(openai_server, fresh_judge_state, monkeypatch):
    def llm_after(env, action_of):
        env.reset(seed=0)
        _, _, terminated, _, info = env.step(action_of(env))
        assert terminated
        return info["metrics"]

    oracle, unrelated = (lambda env: env.unwrapped.oracle_action()), (lambda env: UNRELATED)
    judged = gymnasium.make("magic/Decompose-v0", matcher="exact", judge={"base_url": openai_server.base_url,
                                                                          "model": openai_server.model})
    for action_of in (oracle, unrelated):
        metrics = llm_after(judged, action_of)
        assert 0.0 <= metrics["llm"] <= 1.0, metrics
    # configured from the environment, as `magic eval` runs it; the metric keys stay the same as unjudged
    monkeypatch.setenv("MAGIC_JUDGE_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("MAGIC_JUDGE_MODEL", openai_server.model)
    from_env = llm_after(gymnasium.make("magic/Decompose-v0", matcher="exact"), oracle)
    unjudged = llm_after(gymnasium.make("magic/Decompose-v0", matcher="exact", judge=False), oracle)
    assert 0.0 <= from_env["llm"] <= 1.0 and unjudged["llm"] == -1.0 and from_env.keys() == unjudged.keys()
    assert {k: v for k, v in from_env.items() if k != "llm"} == {k: v for k, v in unjudged.items() if k != "llm"}
    # a reply without a score reads -1.0 ("not judged"), never a crash or a made-up 0
    plain = gymnasium.make("magic/Decompose-v0", matcher="exact", judge={"base_url": openai_server.base_url,
                                                                         "constrain": False, "max_tokens": 8})
    value = llm_after(plain, unrelated)["llm"]
    assert value == -1.0 or 0.0 <= value <= 1.0
