"""`magic eval` run for real in subprocesses: suites, resume after a kill, concurrency, the paper tables."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import report
from benchmarks.suites import load_suite, shipped_suites

DATA = Path(__file__).parent / "data"


def magic(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "magic_envs.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def rows_of(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]


def test_wrong_ids_suites_policies_and_knobs_say_what_is_wrong(tmp_path):
    suite = tmp_path / "bad.toml"
    suite.write_text('[[run]]\nenv = "magic/Calendar-v0"\nepisodez = 3\n')
    capped = tmp_path / "capped.toml"
    capped.write_text('[[run]]\nenv = "magic/Calendar-v0"\nmax_new_tokens = 0\n')
    cases = [(("eval", "--env", "Nope-v0"), "unknown env id 'Nope-v0'"),
             (("eval", "--suite", "cooking"), "unknown suite 'cooking'"),
             (("eval", "--suite", str(suite)), "knows only"),
             (("eval", "--suite", str(capped)), "max_new_tokens must be a positive integer; got 0"),
             (("eval", "--env", "Calendar-v0", "--policy", "gpt5"), "unknown policy 'gpt5'"),
             (("eval", "--env", "Calendar-v0", "--split", "dev"), "unknown split 'dev'"),
             (("eval", "--env", "ToolCall-v0", "--kwargs", '{"category": "cooking"}'), "cooking"),
             (("eval", "--env", "Calendar-v0", "--kwargs", "[1]"), "--kwargs must be a JSON object"),
             (("eval", "--env", "Calendar-v0", "--policy", "hf:/no/such/dir"), "no checkpoint folder")]
    for args, message in cases:
        out = magic(*args)
        assert out.returncode != 0 and message in out.stderr, (args, out.stderr[-500:])


def test_shipped_suites_load_and_name_registered_envs():
    import magic_envs

    assert {"quick", "full"} <= set(shipped_suites())
    for name in shipped_suites():
        suite = load_suite(name)
        assert suite.runs and all(r.env_id in magic_envs.ENVS and r.keys for r in suite.runs)


def test_a_runs_reply_cap_reaches_the_model(tmp_path, monkeypatch):
    from servers import TINY_MODEL

    if not (TINY_MODEL / "config.json").is_file():
        pytest.skip(f"no tiny Qwen3 at {TINY_MODEL}: bash .ci/setup builds it")
    from benchmarks import eval as magic_eval
    from benchmarks.policies.hf_policy import HFPolicy

    caps = []
    generate_ids = HFPolicy.generate_ids

    def recording(self, prompts, batch_caps=None):
        caps.extend(batch_caps)
        return generate_ids(self, prompts, batch_caps)

    monkeypatch.setattr(HFPolicy, "generate_ids", recording)
    suite = tmp_path / "capped.toml"
    suite.write_text('[policy]\nmax_new_tokens = 24\n\n[[run]]\nenv = "magic/ToolCall-v0"\nepisodes = 2\n'
                     'max_new_tokens = 4\n\n[[run]]\nenv = "magic/Calendar-v0"\nepisodes = 2\n')
    assert magic_eval.main(["--suite", str(suite), "--policy", f"hf:{TINY_MODEL}", "--out", str(tmp_path / "run"),
                            "--no-progress"]) == 0
    runs = [row["run"] for row in rows_of(tmp_path / "run")]
    assert sorted(runs) == ["magic/Calendar-v0 test"] * 2 + ["magic/ToolCall-v0 test"] * 2
    assert sorted(set(caps)) == [4, 24]  # the capped run's requests and the policy-wide cap for the other


def test_episodes_are_recorded_once_and_a_rerun_redoes_nothing(tmp_path):
    args = ("eval", "--env", "magic/Calendar-v0", "--policy", "oracle", "--policy", "random", "--episodes", "4",
            "--out", str(tmp_path), "--no-progress")
    first = magic(*args)
    assert first.returncode == 0, first.stderr
    rows = rows_of(tmp_path)
    assert len(rows) == 8 and all(r["success"] for r in rows if r["policy"] == "oracle")
    # a kill mid-write leaves a torn line: the rerun drops it, redoes that one episode and nothing else
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    (tmp_path / "episodes.jsonl").write_text("\n".join(lines[:5]) + "\n" + lines[5][:20])
    again = magic(*args)
    assert again.returncode == 0
    after = rows_of(tmp_path)
    assert len(after) == 8 and after[:5] == rows[:5]
    assert again.stdout == first.stdout
    assert "| magic/Calendar-v0 test | oracle | 4 | 100.0 ±0.0 |" in first.stdout
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["tables"]["NATURAL PLAN"]["oracle"]["Calendar"] == {"mean": 1.0, "se": 0.0, "n": 4}
    assert (tmp_path / "tables.md").read_text() == first.stdout
    assert (tmp_path / "plots" / "natural_plan.png").stat().st_size > 1000


def test_a_killed_eval_resumes_with_exactly_one_record_per_episode(tmp_path):
    args = [sys.executable, "-m", "magic_envs.cli", "eval", "--env", "magic/Retail-v0", "--policy", "oracle",
            "--episodes", "60", "--concurrency", "4", "--out", str(tmp_path), "--no-progress"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    path, deadline = tmp_path / "episodes.jsonl", time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and len(path.read_text().splitlines()) >= 10:
            os.killpg(process.pid, signal.SIGKILL)  # mid-run, as a crash or a pre-empted job would
            break
        time.sleep(0.05)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "the eval finished before it could be killed"
    partial = len(path.read_text().splitlines())
    assert 10 <= partial < 60
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = rows_of(tmp_path)
    assert sorted(r["key"] for r in rows) == list(range(60)) and all(r["success"] for r in rows)


def test_oracle_numbers_do_not_depend_on_concurrency(tmp_path):
    outs = []
    for concurrency in ("1", "8"):
        out = magic("eval", "--env", "magic/ToolPlan-v0", "--env", "magic/Retail-v0", "--policy", "oracle",
                    "--policy", "random", "--episodes", "6", "--concurrency", concurrency,
                    "--out", str(tmp_path / concurrency), "--no-progress")
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout)
        key = {(r["run"], r["policy"], r["key"]): (r["score"], r["actions"]) for r in rows_of(tmp_path / concurrency)}
        if concurrency == "1":
            first = key
    assert outs[0] == outs[1] and key == first


def test_quick_suite_oracle_solves_every_run_at_any_concurrency(tmp_path):
    rows = {}
    for concurrency in ("1", "8"):
        out = magic("eval", "--suite", "quick", "--concurrency", concurrency, "--out", str(tmp_path / concurrency),
                    "--no-progress")
        assert out.returncode == 0, out.stderr
        rows[concurrency] = {(r["run"], r["key"]): (r["success"], r["actions"]) for r in rows_of(tmp_path / concurrency)}
    expected = {(run.label, key) for run in load_suite("quick").runs for key in run.keys
                if f"skipping {run.label}:" not in out.stderr}  # skipped: an optional package is absent here
    assert set(rows["1"]) == expected
    assert rows["1"] == rows["8"] and all(success for success, _ in rows["1"].values())


def test_a_records_run_plays_each_record_of_the_split_once(tmp_path):
    suite = tmp_path / "records.toml"
    suite.write_text('[[run]]\nenv = "magic/BFCLMultiTurn-v0"\nrecords = true\nepisodes = 3\n')
    out = magic("eval", "--suite", str(suite), "--out", str(tmp_path / "e"), "--no-progress")
    assert out.returncode == 0, out.stderr
    assert sorted(r["key"] for r in rows_of(tmp_path / "e")) == [f"multi_turn_base_{i}" for i in range(3)]
    assert "| magic/BFCLMultiTurn-v0 test records | oracle | 3 | 100.0 ±0.0 |" in out.stdout


def test_pinned_records_from_a_file(tmp_path):
    records = json.loads((DATA / "natural_plan_records.json").read_text())
    path = tmp_path / "calendar.json"
    path.write_text(json.dumps({k: v for k, v in records.items() if k.startswith("calendar")}))
    out = magic("eval", "--env", "magic/Calendar-v0", "--tasks", str(path), "--out", str(tmp_path / "e"),
                "--no-progress")
    assert out.returncode == 0 and "| magic/Calendar-v0 test | oracle | 2 | 100.0 ±0.0 |" in out.stdout
    assert sorted(r["key"] for r in rows_of(tmp_path / "e")) == sorted(k for k in records if k.startswith("calendar"))
    wrong = magic("eval", "--env", "magic/Trip-v0", "--tasks", str(path), "--no-progress")
    assert wrong.returncode != 0 and "does not fit magic/Trip-v0" in wrong.stderr


def test_trials_report_pass_hat_k(tmp_path):
    out = magic("eval", "--env", "magic/Calendar-v0", "--policy", "oracle", "--policy", "random", "--episodes", "3",
                "--trials", "3", "--out", str(tmp_path), "--no-progress")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[2].endswith("pass^1 | pass^2 | pass^3 |")
    oracle = next(line for line in lines if "| oracle |" in line)
    assert oracle.endswith("| 100.0 | 100.0 | 100.0 |")
    rows = rows_of(tmp_path)
    assert len(rows) == 18 and sorted({r["trial"] for r in rows}) == [0, 1, 2]
    random_row = json.loads((tmp_path / "summary.json").read_text())["runs"][1]
    assert random_row["policy"] == "random" and random_row["pass^k"] == sorted(random_row["pass^k"], reverse=True)


@pytest.mark.parametrize("row, column, value", [
    ({"success": True, "score": 1.0, "steps": 49, "metrics": {}}, report.Column("a", "e", "success<=49"), 1.0),
    ({"success": True, "score": 1.0, "steps": 50, "metrics": {}}, report.Column("a", "e", "success<=49"), 0.0),
    ({"success": False, "score": 0.4, "steps": 3, "metrics": {}}, report.Column("a", "e", "score"), 0.4),
    ({"success": False, "score": 0.4, "steps": 3, "metrics": {"llm": -1.0}}, report.Column("a", "e", "llm"), None),
    ({"success": False, "score": 0.4, "steps": 3, "metrics": {"step": 1.0}}, report.Column("a", "e", "step"), 1.0),
])
def test_table_cells_read_the_right_value(row, column, value):
    assert report.value_of(row, column.value) == value


def test_paper_tables_group_by_category_and_mark_unmeasured_cells():
    rows = [{"run": "r", "env_id": "magic/Decompose-v0", "split": "test", "policy": "p", "key": i, "trial": 0,
             "group": "dependency", "success": i % 2 == 0, "score": 0.5, "steps": 1,
             "metrics": {"step": float(i % 2), "embedding": 0.5, "llm": -1.0, "f1_chain": 1.0, "f1_graph": 0.5}}
            for i in range(4)]
    tables = report.paper_tables(rows)
    plan = tables["MagicEval-Plan"]["p"]
    assert plan["Dependency Step"] == {"mean": 0.5, "se": pytest.approx(0.2887, abs=1e-4), "n": 4}
    assert plan["Dependency LLM"] == {"mean": None, "se": None, "n": 0} and plan["General Step"] is None
    text = report.markdown(tables, report.run_table(rows, 1), 1)
    assert "| p | – | – | – | 50.0 ±28.9 (4) | 50.0 ±0.0 (4) | n/a | – |" in text


def test_trials_of_a_task_count_once_in_the_standard_error():
    # two tasks, three trials each: the se is over the 2 task means (1.0 and 1/3), not over 6 episodes
    rows = [{"run": "r", "env_id": "magic/Calendar-v0", "split": "test", "policy": "p", "key": k, "trial": t,
             "task_id": f"t{k}", "group": None, "success": k == 0 or t == 0, "score": 1.0, "steps": 1, "metrics": {}}
            for k in range(2) for t in range(3)]
    (entry,) = report.run_table(rows, 3)
    assert entry["n"] == 6 and entry["success"] == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert report.task_mean_se(rows[:1] + rows[3:4], [1.0, 0.0]) == (0.5, 0.5)
