"""`magic score-workflows`, run for real in subprocesses on the shared WorfBench gold data."""

import json
import subprocess
import sys

import pytest
from conftest import SHARED_DATA

from magic_envs.decomposition.matchers import ExactMatcher
from magic_envs.decomposition.worfbench import load_tasks, read_record
from magic_envs.decomposition.worfbench_metric import score_workflow

DATA = SHARED_DATA / "worfbench"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"no WorfBench gold data at {DATA}")
FIELDS = ("precision_chain", "recall_chain", "f1_chain", "precision_graph", "recall_graph", "f1_graph")


def score(*args):
    return subprocess.run([sys.executable, "-m", "magic_envs.decomposition.score_cli", *map(str, args)],
                          capture_output=True, text=True, timeout=600)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def gold_records():
    return [(name, r) for name, records in load_tasks(str(DATA.resolve())).items() for r in records]


def drop_last_node(gold: str) -> str:
    """The gold workflow without its last node and the edges that touch it."""
    lines = gold.split("\n")
    numbered = [i for i, line in enumerate(lines) if line[:1].isdigit()]
    if len(numbered) < 2:
        return "Node:\n1: do nothing useful\nEdge: (START,1) (1,END)"
    last = lines[numbered[-1]].split(":")[0].split(".")[0]
    kept = [line for i, line in enumerate(lines) if i != numbered[-1]]
    return "\n".join(kept).replace(f",{last})", ",END)").replace(f"({last},", "(END,")


def expected_means(rows, mode):
    """Per task, the mean of each field over its gold records, computed in-process from the metric."""
    preds = {r["id"]: r["pred"] for r in rows}
    out = {}
    for name, record in gold_records():
        pred = preds.get(record["id"])
        totals = out.setdefault(name, dict.fromkeys(FIELDS, 0.0) | {"n": 0})
        totals["n"] += 1
        if pred is not None:
            s = score_workflow(pred, read_record(record)[2], matcher=ExactMatcher(), mode=mode)
            for f in FIELDS:
                totals[f] += getattr(s, f)
    return {name: {f: t[f] / t["n"] for f in FIELDS} for name, t in out.items()}


def test_gold_as_predictions_scores_one_in_corrected_mode(tmp_path):
    rows = [{"id": r["id"], "pred": read_record(r)[2]} for _, r in gold_records()]
    result = score("--gold", DATA, "--pred", write_jsonl(tmp_path / "gold.jsonl", rows), "--mode", "corrected",
                   "--matcher", "exact", "--output", tmp_path / "out.json")
    assert result.returncode == 0, result.stderr
    scores = json.loads((tmp_path / "out.json").read_text())
    assert set(scores) == {"alfworld", "lumos", "os", "toolalpaca", "toolbench", "webshop", "wikihow", "all"}
    assert scores["all"]["n"] == scores["all"]["predicted"] == 1423
    assert all(row[f] == 1.0 for row in scores.values() for f in FIELDS)
    header, *rows_printed = [line for line in result.stdout.splitlines() if line.strip()][1:]
    assert header.split() == ["task", "n", "pred", "P_chain", "R_chain", "F1_chain", "P_graph", "R_graph", "F1_graph"]
    assert rows_printed[-1].split() == ["all", "1423", "1423"] + ["1.0000"] * 6
    assert result.stderr == ""


def test_compat_and_perturbed_predictions_equal_the_metric_per_task(tmp_path):
    rows = [{"id": r["id"], "pred": drop_last_node(read_record(r)[2]) if i % 2 else read_record(r)[2]}
            for i, (_, r) in enumerate(gold_records())]
    for mode in ("compat", "corrected"):
        out = tmp_path / f"{mode}.json"
        result = score("--gold", DATA, "--pred", write_jsonl(tmp_path / "p.jsonl", rows), "--mode", mode,
                       "--matcher", "exact", "--output", out)
        assert result.returncode == 0, result.stderr
        scores, expected = json.loads(out.read_text()), expected_means(rows, mode)
        for name, row in expected.items():
            assert all(abs(scores[name][f] - row[f]) < 1e-9 for f in FIELDS), (mode, name)
        assert scores["all"]["f1_graph"] < 0.9 and scores["all"]["f1_chain"] < 0.95


def test_worfbench_own_output_formats_are_read(tmp_path):
    os_records = load_tasks(str(DATA.resolve()))["os"]
    gold = [read_record(r)[2] for r in os_records]
    # node_eval.py's generation output: a .json list of {"query": record, "workflow": text}, shuffled (by id)
    official = [{"query": r, "workflow": g} for r, g in zip(os_records, gold)][::-1]
    (tmp_path / "graph_eval_two_shot.json").write_text(json.dumps(official, ensure_ascii=False))
    # its .jsonl of OpenAI responses, matched by position against one gold file
    responses = [{"answer": {"choices": [{"message": {"role": "assistant", "content": g}}]}} for g in gold]
    write_jsonl(tmp_path / "responses.jsonl", responses)
    for pred, gold_path in (("graph_eval_two_shot.json", DATA), ("responses.jsonl", DATA / "os" / "graph_eval.json")):
        result = score("--gold", gold_path, "--pred", tmp_path / pred, "--mode", "corrected", "--matcher", "exact")
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert any(line.split()[:3] == ["os", "20", "20"] and line.split()[-1] == "1.0000" for line in lines)


def test_default_embedding_matcher_on_one_task(tmp_path):
    os_records = load_tasks(str(DATA.resolve()))["os"]
    rows = [{"id": r["id"], "pred": drop_last_node(read_record(r)[2])} for r in os_records]
    result = score("--gold", DATA / "os", "--pred", write_jsonl(tmp_path / "p.jsonl", rows),
                   "--output", tmp_path / "out.json")
    assert result.returncode == 0, result.stderr
    scores = json.loads((tmp_path / "out.json").read_text())
    assert set(scores) == {"os", "all"} and 0.3 < scores["os"]["f1_graph"] < 1.0
    assert "matcher=embedding:all-MiniLM-L6-v2" in result.stdout
    named = score("--gold", DATA / "os", "--pred", tmp_path / "p.jsonl", "--encoder", "all-MiniLM-L6-v2",
                  "--output", tmp_path / "named.json")
    assert named.returncode == 0 and json.loads((tmp_path / "named.json").read_text()) == scores


def test_an_encoder_whose_package_is_missing_exits_2(tmp_path):
    try:
        import sentence_transformers  # noqa: F401
        pytest.skip("sentence-transformers is installed")
    except ImportError:
        pass
    pred = write_jsonl(tmp_path / "p.jsonl", [{"id": "os_92", "pred": "Node:\n1: x\nEdge: (START,1) (1,END)"}])
    result = score("--gold", DATA, "--pred", pred, "--encoder", "all-mpnet-base-v2")
    assert result.returncode == 2 and "pip install sentence-transformers" in result.stderr, result.stderr


def test_missing_predictions_score_zero_and_are_noted(tmp_path):
    os_records = load_tasks(str(DATA.resolve()))["os"]
    rows = [{"id": r["id"], "pred": read_record(r)[2]} for r in os_records[:5]]
    result = score("--gold", DATA, "--pred", write_jsonl(tmp_path / "p.jsonl", rows), "--mode", "corrected",
                   "--matcher", "exact", "--output", tmp_path / "out.json")
    assert result.returncode == 0, result.stderr
    scores = json.loads((tmp_path / "out.json").read_text())
    assert set(scores) == {"os", "all"} and scores["os"]["f1_graph"] == 5 / 20
    assert "15 of 20 os records have no prediction and score 0" in result.stderr


@pytest.mark.parametrize("case, needle", [
    ("missing_gold", "does not exist"),
    ("empty_gold_folder", "no WorfBench gold file"),
    ("missing_pred", "does not exist"),
    ("unknown_id", "not in the gold data"),
    ("broken_jsonl", "line 2: not valid JSON"),
    ("broken_json", "not valid JSON"),
    ("not_an_object", "must be a JSON object"),
    ("no_known_key", "needs 'pred'"),
    ("pred_not_text", "must be text"),
    ("no_ids_many_tasks", "needs one gold file"),
    ("no_ids_wrong_count", "matching by position needs as many"),
    ("mixed_ids", "some predictions have an id"),
    ("duplicate_id", "two predictions for record"),
    ("empty_pred_file", "holds no prediction"),
    ("bad_mode", "invalid choice"),
])
def test_bad_input_exits_2_with_a_clear_message(tmp_path, case, needle):
    good = tmp_path / "good.jsonl"
    write_jsonl(good, [{"id": "os_92", "pred": "Node:\n1: x\nEdge: (START,1) (1,END)"}])
    gold, pred, extra = DATA, good, []
    if case == "missing_gold":
        gold = tmp_path / "nowhere"
    elif case == "empty_gold_folder":
        (tmp_path / "empty").mkdir()
        gold = tmp_path / "empty"
    elif case == "missing_pred":
        pred = tmp_path / "nothing.jsonl"
    elif case == "bad_mode":
        extra = ["--mode", "strict"]
    else:
        pred = tmp_path / "p.jsonl"
        content = {
            "unknown_id": '{"id": "os_999999", "pred": "x"}\n',
            "broken_jsonl": '{"id": "os_92", "pred": "x"}\n{"id": \n',
            "broken_json": '[{"id": "os_92", "pred": "x"}',
            "not_an_object": '["os_92", "x"]\n',
            "no_known_key": '{"id": "os_92", "prediction": "x"}\n',
            "pred_not_text": '{"id": "os_92", "pred": ["1: x"]}\n',
            "no_ids_many_tasks": '{"workflow": "x"}\n',
            "no_ids_wrong_count": '{"workflow": "x"}\n',
            "mixed_ids": '{"id": "os_92", "pred": "x"}\n{"workflow": "x"}\n',
            "duplicate_id": '{"id": "os_92", "pred": "x"}\n{"id": "os_92", "pred": "y"}\n',
            "empty_pred_file": "\n\n",
        }[case]
        pred.write_text(content)
        if case == "no_ids_wrong_count":
            gold = DATA / "os" / "graph_eval.json"
    result = score("--gold", gold, "--pred", pred, "--matcher", "exact", *extra)
    assert result.returncode == 2 and needle in result.stderr, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr


def test_the_magic_command_runs_it_when_registered(tmp_path):
    from magic_envs.cli import COMMANDS

    if "score-workflows" not in COMMANDS:
        pytest.skip("score-workflows is not in magic_envs.cli.COMMANDS yet")
    rows = [{"id": "os_92", "pred": read_record(load_tasks(str(DATA.resolve()))["os"][0])[2]}]
    result = subprocess.run([sys.executable, "-m", "magic_envs.cli", "score-workflows", "--gold", str(DATA),
                             "--pred", str(write_jsonl(tmp_path / "p.jsonl", rows)), "--matcher", "exact"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "os" in result.stdout, result.stderr
