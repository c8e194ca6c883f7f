"""`magic synth`: the SFT corpus is deterministic, resumable, filtered, and every sample replays to success."""

import json
import re
import signal
import subprocess
import sys
import time

import gymnasium
import pyarrow.parquet as pq
import pytest

import magic_envs  # noqa: F401
from magic_envs.core import parse_action, rollout
from magic_envs.core.chat import without_template_tools
from magic_sft.synth import SynthConfig
from magic_sft.think import HindsightOracle
from servers import TINY_MODEL

SMALL = """samples = {samples}
seed = 3
tokenizer = "{tokenizer}"
[mixture]
"magic/Calendar-v0" = 1
"magic/ToolPlan-v0" = 1
"magic/Retail-v0" = 1
"magic/Decompose-v0" = 2
[kwargs]
"magic/Decompose-v0" = {{nodes = [3, 5]}}
"""


def synth(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "magic_envs.cli", "synth", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    config = folder / "small.toml"
    config.write_text(SMALL.format(samples=15, tokenizer=TINY_MODEL if (TINY_MODEL / "config.json").is_file()
                                   else "none"))
    out = synth("--config", str(config), "--out", str(folder / "a"), "--quiet")
    assert out.returncode == 0, out.stderr[-2000:]
    return folder, config, [json.loads(line) for line in (folder / "a" / "corpus.jsonl").read_text().splitlines()]


def test_quotas_follow_the_mixture_and_add_up():
    config = SynthConfig(mixture={"magic/Calendar-v0": 1, "magic/Trip-v0": 1, "magic/Meeting-v0": 1}, samples=10)
    assert sum(config.quotas().values()) == 10 and sorted(config.quotas().values()) == [3, 3, 4]


def test_bad_configs_say_what_is_wrong(tmp_path):
    cases = [('samples = 5\n[mixture]\n"magic/Nope-v0" = 1\n', "unknown env id 'magic/Nope-v0'"),
             ('sample = 5\n[mixture]\n"magic/Calendar-v0" = 1\n', "unknown keys ['sample']"),
             ('samples = 5\n[mixture]\n"magic/Calendar-v0" = 0\n', "positive weights"),
             ("samples = [", "not valid TOML")]
    for i, (text, message) in enumerate(cases):
        config = tmp_path / f"c{i}.toml"
        config.write_text(text)
        out = synth("--config", str(config), "--out", str(tmp_path / "out"))
        assert out.returncode != 0 and message in out.stderr, (text, out.stderr[-500:])
    out = synth("--config", str(tmp_path / "missing.toml"), "--out", str(tmp_path / "out"))
    assert out.returncode != 0 and "no config file" in out.stderr


def test_every_sample_replays_to_success_with_valid_calls_and_thoughts(small_corpus):
    _, _, samples = small_corpus
    assert [s["env_id"] for s in samples].count("magic/Decompose-v0") == 6 and len(samples) == 15
    assert len({s["task_fingerprint"] for s in samples}) == len(samples)
    for sample in samples:
        env = gymnasium.make(sample["env_id"], split=sample["split"], **sample["kwargs"])
        env.reset(seed=sample["seed"])
        seen = []
        for i, message in enumerate(sample["messages"]):
            if message["role"] == "assistant":
                parsed = parse_action(message["content"])
                assert parsed.ok and len(parsed.thoughts) == 1 and parsed.thoughts[0], message["content"][:200]
                # a value the thought cites was said before it (the request, a tool result, the task)
                for value in re.findall(r'="([^"]+)"', parsed.thoughts[0]):
                    assert any(value in m["content"] for m in seen), (value, sample["id"])
                *_, info = env.step(message["content"])
            seen.append(message)
        assert info["success"], sample["id"]


def test_same_config_same_bytes_and_a_killed_run_resumes_to_them(small_corpus):
    folder, config, _ = small_corpus
    out = synth("--config", str(config), "--out", str(folder / "b"), "--quiet")
    assert out.returncode == 0, out.stderr[-2000:]
    process = subprocess.Popen([sys.executable, "-m", "magic_envs.cli", "synth", "--config", str(config),
                                "--out", str(folder / "c"), "--quiet"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    journal = folder / "c" / "journal.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None:
        if journal.is_file() and len(journal.read_text().splitlines()) >= 5:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not (folder / "c" / "corpus.jsonl").exists()  # killed before the end: no half corpus
    out = synth("--config", str(config), "--out", str(folder / "c"), "--quiet")
    assert out.returncode == 0, out.stderr[-2000:]
    for name in ("corpus.jsonl", "corpus.parquet", "stats.json"):
        original = (folder / "a" / name).read_bytes()
        assert (folder / "b" / name).read_bytes() == original and (folder / "c" / name).read_bytes() == original
    other = folder / "other.toml"
    other.write_text(config.read_text().replace("seed = 3", "seed = 4"))
    out = synth("--config", str(other), "--out", str(folder / "c"))
    assert out.returncode != 0 and "another config" in out.stderr


def test_parquet_and_stats_carry_the_corpus(small_corpus):
    folder, _, samples = small_corpus
    table = pq.read_table(folder / "a" / "corpus.parquet").to_pylist()
    assert [r["id"] for r in table] == [s["id"] for s in samples]
    assert table[0]["messages"] == [{"role": m["role"], "content": m["content"]} for m in samples[0]["messages"]]
    assert json.loads(table[0]["tools"]) == samples[0]["tools"]
    stats = json.loads((folder / "a" / "stats.json").read_text())
    assert sum(r["samples"] for r in stats["rows"]) == 15 and stats["attempts"] >= 15
    if stats["tokenizer"]:
        assert all(r["tokens_mean"] > r["assistant_tokens_mean"] > 0 for r in stats["rows"])
    assert "| decomposition | magic/Decompose-v0 | 6 |" in (folder / "a" / "stats.md").read_text()


@pytest.mark.parametrize("env_id", ["magic/ToolPlan-v0", "magic/Retail-v0", "magic/Workspace-v0"])
def test_native_samples_convert_to_what_a_model_without_template_tools_sees(env_id):
    env = gymnasium.make(env_id, split="train")
    native = rollout(env, HindsightOracle(7), seed=7)
    plain = rollout(env, HindsightOracle(7), seed=7, native_tools=False)
    assert without_template_tools(native.messages, native.tools) == plain.messages
