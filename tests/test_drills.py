"""Copy drills: seeded, every answer copied from the record, trainable by `magic sft` as any corpus."""

import json
import subprocess
import sys

import pytest

from magic_sft.data import IGNORE, encode, load_corpus
from magic_sft.drills import drill, drills, main, score
from servers import TINY_MODEL


def record_of(prompt: str) -> dict:
    shown = prompt.split("\n\nGive ")[0]
    if shown.startswith("{"):
        return json.loads(shown)
    return dict(line.split(": ", 1) for line in shown.splitlines())


def test_every_answer_is_the_asked_values_copied_in_the_asked_order():
    for d in drills(300, seed=3):
        prompt, answer = d["messages"][1]["content"], d["messages"][2]["content"]
        record = record_of(prompt)
        asked = prompt.split("\n\nGive ")[1].removesuffix(".").removesuffix(" as JSON").split(", ")
        assert 2 <= len(record) <= 6 and 1 <= len(asked) <= 3 and set(asked) <= set(record)
        if prompt.endswith("as JSON."):
            assert list(json.loads(answer).items()) == [(k, record[k]) for k in asked]
        else:
            assert answer == "; ".join(f"{k}: {record[k]}" for k in asked)
    assert drill(7) == drill(7) and drill(7) != drill(8) and drill(7) != drill(7, split="test")


def test_drills_are_a_corpus_whose_targets_are_the_answer(tmp_path):
    from transformers import AutoTokenizer

    if not (TINY_MODEL / "config.json").is_file():
        pytest.skip(f"no tiny Qwen3 at {TINY_MODEL}: bash .ci/setup builds it")
    assert main(["--samples", "20", "--seed", "1", "--out", str(tmp_path / "drills")]) == 0
    samples = load_corpus(tmp_path / "drills")
    assert [s["id"] for s in samples] == [d["id"] for d in drills(20, seed=1)]
    tokenizer = AutoTokenizer.from_pretrained(TINY_MODEL)
    example = encode(tokenizer, samples[0], max_length=512)
    targets = tokenizer.decode([t for t in example["labels"] if t != IGNORE])
    assert samples[0]["messages"][2]["content"] in targets and "Give" not in targets
    assert score(str(TINY_MODEL), samples=4, seed=2) == 0.0  # random weights copy nothing
    assert main(["--score", str(TINY_MODEL), "--samples", "4", "--seed", "2"]) == 0
    assert main(["--score", str(TINY_MODEL), "--samples", "4", "--seed", "2", "--at-least", "0.5"]) == 1


def test_the_cli_says_what_is_wrong(tmp_path):
    out = subprocess.run([sys.executable, "-m", "magic_sft.drills", "--score", str(tmp_path / "none")],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "no checkpoint folder" in out.stderr
    out = subprocess.run([sys.executable, "-m", "magic_sft.drills"], capture_output=True, text=True)
    assert out.returncode != 0 and "give --out" in out.stderr
