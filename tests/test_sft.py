"""`magic sft`: assistant-only targets through the real chat templates, exact resume after a kill, clear errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from magic_sft.data import IGNORE, encode, load_corpus
from killing import kill_after
from servers import TINY_MODEL

CORPUS = """samples = 8
seed = 5
tokenizer = "none"
[mixture]
"magic/Calendar-v0" = 1
"magic/ToolPlan-v0" = 1
"""


def magic(*args, timeout=900):
    return subprocess.run([sys.executable, "-m", "magic_envs.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    if not (TINY_MODEL / "config.json").is_file():
        pytest.skip(f"no tiny Qwen3 at {TINY_MODEL}: bash .ci/setup builds it")
    folder = tmp_path_factory.mktemp("sft")
    (folder / "corpus.toml").write_text(CORPUS)
    out = magic("synth", "--config", str(folder / "corpus.toml"), "--out", str(folder / "corpus"), "--quiet")
    assert out.returncode == 0, out.stderr[-2000:]
    return folder


def test_targets_are_exactly_the_assistant_turns(corpus):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(TINY_MODEL)
    samples = load_corpus(corpus / "corpus")
    for sample in samples:
        example = encode(tokenizer, sample, 100_000)
        targets = tokenizer.decode([t for t in example["labels"] if t != IGNORE])
        assistant = [m["content"] for m in sample["messages"] if m["role"] == "assistant"]
        # Qwen3's template keeps <think> only after the last user query; every turn's action is a target
        for content in assistant:
            assert content.split("</think>")[-1].strip() in targets
        assert assistant[-1].strip() in targets and targets.count("<|im_end|>") == len(assistant)
        users = [m["content"] for m in sample["messages"] if m["role"] in ("user", "tool")]
        assert not any(u in targets for u in users if len(u) > 20)
    assert encode(tokenizer, samples[0], 10) is None  # too long: left out, not cut


def train_args(corpus, out, steps=6):
    return ["sft", "--corpus", str(corpus / "corpus"), "--model", str(TINY_MODEL), "--out", str(out),
            "--max-steps", str(steps), "--micro-batch-size", "1", "--grad-accum", "2", "--save-every", "2",
            "--max-length", "4096", "--lr", "1e-3", "--threads", "1"]


def losses(out):
    return [json.loads(line)["loss"] for line in (out / "log.jsonl").read_text().splitlines()]


def test_a_killed_run_resumes_to_the_same_loss_curve(corpus):
    whole = magic(*train_args(corpus, corpus / "whole"))
    assert whole.returncode == 0, whole.stderr[-2000:]
    curve = losses(corpus / "whole")
    assert len(curve) == 6 and curve[-1] < curve[0]  # a tiny model at lr 1e-3 learns the corpus
    kill_after(train_args(corpus, corpus / "killed"), corpus / "killed" / "log.jsonl", 3)
    assert not (corpus / "killed" / "final").exists()
    (corpus / "killed").rename(corpus / "moved")  # a run folder moved elsewhere resumes all the same
    again = magic(*train_args(corpus, corpus / "moved"))
    assert again.returncode == 0, again.stderr[-2000:]
    assert losses(corpus / "moved") == curve  # bit for bit: same data order, optimiser state and RNG
    changed = magic(*train_args(corpus, corpus / "moved", steps=8))
    assert changed.returncode != 0 and "another config" in changed.stderr
    from benchmarks.policies import model_policy

    policy = model_policy(f"hf:{corpus / 'whole' / 'final'}", max_new_tokens=4)
    assert isinstance(policy.act([{"role": "user", "content": "hi"}], []), str)


def test_wrong_inputs_say_what_is_wrong(corpus, tmp_path):
    out = magic("sft", "--corpus", str(tmp_path / "nothing"), "--model", str(TINY_MODEL), "--out", str(tmp_path / "o"))
    assert out.returncode != 0 and "no corpus at" in out.stderr
    out = magic("sft", "--corpus", str(corpus / "corpus"), "--model", "gpt-9", "--out", str(tmp_path / "o"))
    assert out.returncode != 0 and "model 'gpt-9'" in out.stderr
    out = magic(*train_args(corpus, tmp_path / "o"), "--max-length", "16")
    assert out.returncode != 0 and "fits max_length=16" in out.stderr


def test_tiny_smollm2_is_smollm2s_tokenizer_on_small_random_layers(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from benchmarks.policies.embedded import embedded_checkpoint
    from benchmarks.tiny_models import SMOLLM2_SIZES, build_tiny_smollm2
    from magic_sft.data import model_folder

    chat = [{"role": "user", "content": "Book FL-1 for Ann."}, {"role": "assistant", "content": "Done: BK-7."}]
    smollm2 = AutoTokenizer.from_pretrained(embedded_checkpoint())
    first, second = build_tiny_smollm2(tmp_path / "a"), build_tiny_smollm2(tmp_path / "b")
    assert AutoTokenizer.from_pretrained(first).apply_chat_template(chat) == smollm2.apply_chat_template(chat)
    a, b = (AutoModelForCausalLM.from_pretrained(f) for f in (first, second))
    assert a.config.hidden_size == SMOLLM2_SIZES["tiny"]["hidden_size"] and a.config.vocab_size == len(smollm2)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))  # seeded
    assert (Path(model_folder("tiny-smollm2")) / "model.safetensors").is_file()
    with pytest.raises(ValueError, match="sizes are tiny, rl"):
        model_folder("tiny-smollm2:huge")


def test_a_run_resumes_after_a_setting_is_added_at_its_default(tmp_path):
    import dataclasses

    import torch

    from magic_sft.runs import resume, save

    @dataclasses.dataclass
    class Old:
        out: str = ""
        lr: float = 1e-3

    @dataclasses.dataclass
    class New(Old):
        warmup_steps: int = 0

    save(tmp_path / "run", Old(out="a"), 3, extra=7)
    step, saved = resume(tmp_path / "run", New(out="b"))  # moved, and one setting newer than the run
    assert step == 3 and saved["extra"] == 7
    with pytest.raises(ValueError, match="another config"):
        resume(tmp_path / "run", New(warmup_steps=2))
    with pytest.raises(ValueError, match="another config"):
        resume(tmp_path / "run", New(lr=1e-4))
    assert torch.load(tmp_path / "run" / "checkpoint" / "state.pt", weights_only=False)["config"]["out"] == "a"
