"""`python -m benchmarks.compare`: two real `magic eval` runs of one suite, side by side, with standard errors."""

import subprocess
import sys


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
