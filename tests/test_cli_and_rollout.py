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


def test_wrong_ids_and_suites_say_what_is_wrong():
    for args in (("play", "magic/Nope-v0"), ("eval", "--env", "Nope-v0"), ("eval", "--suite", "cooking")):
        out = magic(*args)
        assert out.returncode != 0 and ("unknown env id 'magic/Nope-v0'" in out.stderr or "unknown env id 'Nope-v0'"
                                        in out.stderr or "unknown suite 'cooking'" in out.stderr), out.stderr


def test_magic_eval_appends_episodes_and_resumes(tmp_path):
    out_file = tmp_path / "episodes.jsonl"
    args = ("eval", "--env", "magic/Calendar-v0", "--policy", "oracle", "--policy", "random", "--episodes", "4",
            "--out", str(out_file))
    first = magic(*args)
    assert first.returncode == 0 and "magic/Calendar-v0" in first.stdout
    lines = out_file.read_text().splitlines()
    assert len(lines) == 8
    oracle = [json.loads(line) for line in lines if json.loads(line)["policy"] == "oracle"]
    assert all(row["success"] for row in oracle)
    # a kill mid-write leaves a torn line: the rerun drops it, keeps the rest and redoes nothing else
    out_file.write_text("\n".join(lines[:5]) + "\n" + lines[5][:20])
    again = magic(*args)
    assert again.returncode == 0
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(rows) == 8 and [r["seed"] for r in rows[:5]] == [json.loads(x)["seed"] for x in lines[:5]]
    assert again.stdout.splitlines()[1:] == first.stdout.splitlines()[1:]


def test_magic_eval_runs_pinned_records_from_a_file(tmp_path):
    from pathlib import Path

    records = json.loads((Path(__file__).parent / "data" / "natural_plan_records.json").read_text())
    path = tmp_path / "calendar.json"
    path.write_text(json.dumps({k: v for k, v in records.items() if k.startswith("calendar")}))
    out = magic("eval", "--env", "magic/Calendar-v0", "--tasks", str(path), "--out", str(tmp_path / "e.jsonl"))
    assert out.returncode == 0 and "oracle      2     1.000" in out.stdout
    rows = [json.loads(x) for x in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert sorted(r["seed"] for r in rows) == sorted(k for k in records if k.startswith("calendar"))
    wrong = magic("eval", "--env", "magic/Trip-v0", "--tasks", str(path))
    assert wrong.returncode != 0 and "does not fit magic/Trip-v0" in wrong.stderr


def test_magic_eval_trials_report_pass_hat_k(tmp_path):
    out_file = tmp_path / "episodes.jsonl"
    out = magic("eval", "--env", "magic/Calendar-v0", "--policy", "oracle", "--policy", "random", "--episodes", "3",
                "--trials", "3", "--out", str(out_file))
    assert out.returncode == 0, out.stderr
    header, oracle, random_row = out.stdout.splitlines()[:3]
    assert header.split()[-3:] == ["pass^1", "pass^2", "pass^3"]
    assert oracle.split()[-3:] == ["1.000", "1.000", "1.000"]
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(rows) == 18 and sorted({r["trial"] for r in rows}) == [0, 1, 2]
    # random answers rarely succeed, and pass^k never grows with k
    passes = [float(v) for v in random_row.split()[-3:]]
    assert passes == sorted(passes, reverse=True)
