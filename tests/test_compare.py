"""`python -m benchmarks.compare`: two real `magic eval` runs of one suite, side by side, with standard errors."""

import subprocess
import sys

from benchmarks.compare import compare, episodes


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600)


def test_oracle_beats_random_beyond_twice_the_standard_error(tmp_path):
    for policy in ("random", "oracle"):
        out = run("-m", "magic_envs.cli", "eval", "--env", "magic/Calendar-v0", "--env", "magic/ToolCall-v0",
                  "--episodes", "20", "--policy", policy, "--out", str(tmp_path / policy), "--no-progress")
        assert out.returncode == 0, out.stderr[-2000:]
    out = run("-m", "benchmarks.compare", str(tmp_path / "random"), str(tmp_path / "oracle"), "--names",
              "random,oracle")
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert "| env | n | random success | oracle success | oracle - random | se (paired / unpaired) | > 2 se |" in lines
    calendar = next(line for line in lines if line.startswith("| magic/Calendar-v0 | 20 | 0.000"))
    assert "| 1.000 ± 0.000 | +1.000 |" in calendar and calendar.endswith("| yes |")
    missing = run("-m", "benchmarks.compare", str(tmp_path / "random"), str(tmp_path / "nothing"))
    assert missing.returncode != 0 and "no episodes.jsonl in" in missing.stderr


def test_trials_of_a_task_count_once(tmp_path):
    # three trials of 10 tasks: n is 10 tasks, each at its mean over the trials, not 30 independent episodes
    for policy in ("random", "oracle"):
        out = run("-m", "magic_envs.cli", "eval", "--env", "magic/ToolCall-v0", "--episodes", "10", "--trials", "3",
                  "--policy", policy, "--out", str(tmp_path / policy), "--no-progress")
        assert out.returncode == 0, out.stderr[-2000:]
    random, oracle = episodes(tmp_path / "random"), episodes(tmp_path / "oracle")
    assert len(random) == len(oracle) == 30
    row = compare(random, oracle, "score")[0]
    assert row["n"] == 10
    tasks: dict = {}
    for r in random.values():
        tasks.setdefault(r["task_id"], []).append(r["score"])
    assert sorted(len(v) for v in tasks.values()) == [3] * 10
    means = [sum(v) / 3 for v in tasks.values()]
    assert abs(row["a"] - sum(means) / 10) < 1e-9 and row["b"] == 1.0
    spread = (sum((m - row["a"]) ** 2 for m in means) / 9 / 10) ** 0.5
    assert abs(row["se_a"] - spread) < 1e-9
