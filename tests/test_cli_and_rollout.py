"""The `magic` command line and the shared rollout loop, run for real in subprocesses."""

import json
import subprocess
import sys

import gymnasium

from magic_envs.core import OraclePolicy, RandomPolicy, rollout


def magic(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "magic_envs.cli", *args], input=stdin, capture_output=True,
                          text=True, timeout=300)


def test_rollout_records_the_chat_and_the_final_info():
    env = gymnasium.make("magic/Calendar-v0")
    episode = rollout(env, OraclePolicy(), seed=4)
    assert episode.score == 1.0 and episode.success and episode.terminated and len(episode.actions) == 1
    assert [m["role"] for m in episode.messages] == ["user", "assistant"]
    assert episode.messages[1]["content"] == episode.actions[0] and episode.env_id == "magic/Calendar-v0"
    assert json.loads(json.dumps(episode.to_json()))["task_id"] == episode.task_id


def test_random_policies_are_seeded_and_junk_scores_zero():
    env = gymnasium.make("magic/Calendar-v0")
    a = rollout(env, RandomPolicy("format", seed=1), seed=2).actions
    b = rollout(env, RandomPolicy("format", seed=1), seed=2).actions
    assert a == b and a[0].startswith("Here is the proposed time:")
    junk = rollout(env, RandomPolicy("junk", seed=3), seed=2)
    assert junk.score == 0.0 and len(junk.actions) >= 1


def test_magic_list_shows_ids_families_and_knobs():
    out = magic("list")
    assert out.returncode == 0
    for env_id in ("magic/Calendar-v0", "magic/Meeting-v0", "magic/Trip-v0"):
        assert env_id in out.stdout
    assert "[scheduling]" in out.stdout and "knobs: split='train'" in out.stdout


def test_magic_without_a_known_command_prints_usage():
    assert "commands:" in magic().stdout
    wrong = magic("evaluate")
    assert wrong.returncode == 2 and "unknown command 'evaluate'" in wrong.stderr


def test_magic_play_takes_typed_actions():
    env = gymnasium.make("magic/Calendar-v0")
    env.reset(seed=3)
    out = magic("play", "Calendar-v0", "--seed", "3", stdin="\n".join(["", env.unwrapped.oracle_action(), "", ""]))
    assert out.returncode == 0 and "You are an expert at scheduling meetings" in out.stdout
    assert "episode over: reward=1.0 success=True" in out.stdout


def test_magic_play_shows_the_oracle_and_quits():
    out = magic("play", "magic/Calendar-v0", stdin=":oracle\n:quit\n")
    assert out.returncode == 0 and "Here is the proposed time:" in out.stdout
