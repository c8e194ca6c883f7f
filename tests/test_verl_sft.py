"""verl's SFT trainer on a `magic synth` corpus: our configs compose under verl 0.9.1 and its CLI, and our dataset
gives verl exactly `magic sft`'s tokens and targets, which verl's own loss turns into `magic sft`'s loss."""

import subprocess
import sys

import pytest

pytest.importorskip("verl", reason="verl is installed by `bash scripts/install test`")

from magic_rl.verl_plugin import CONFIGS  # noqa: E402
from magic_sft.data import IGNORE, load_corpus, trainable  # noqa: E402
from servers import TINY_MODEL  # noqa: E402

CORPUS = """samples = 6
seed = 2
tokenizer = "none"
[mixture]
"magic/Calendar-v0" = 1
"magic/ToolPlan-v0" = 1
"""
CONFIG_NAMES = ["sft_qwen3_32b", "sft_qwen3_30b_a3b"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    if not (TINY_MODEL / "config.json").is_file():
        pytest.skip(f"no tiny Qwen3 at {TINY_MODEL}: bash .ci/setup builds it")
    folder = tmp_path_factory.mktemp("verl-sft")
    (folder / "corpus.toml").write_text(CORPUS)
    out = subprocess.run([sys.executable, "-m", "magic_envs.cli", "synth", "--config", str(folder / "corpus.toml"),
                          "--out", str(folder), "--quiet"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return folder / "corpus.parquet"


def composed(name: str, *overrides: str):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(str(CONFIGS), version_base=None):
        return compose(name, overrides=["data.train_files=corpus.parquet", "model.path=/models/x", *overrides])


@pytest.mark.parametrize("name", CONFIG_NAMES)
def test_configs_build_verls_own_config_classes(name):
    from verl.utils.config import omega_conf_to_dataclass

    config = composed(name)
    engine, optim = omega_conf_to_dataclass(config.engine), omega_conf_to_dataclass(config.optim)
    assert optim.betas == [0.9, 0.95] and optim.weight_decay == 0.01  # the paper's Table 8
    assert config.data.custom_cls.name == "MagicSFTDataset"
    if name.endswith("a3b"):
        assert type(engine).__name__ == "McoreEngineConfig" and engine.expert_model_parallel_size == 8
        assert engine.override_transformer_config["moe_router_load_balancing_type"] == "global_aux_loss"
    else:
        assert type(engine).__name__ == "FSDPEngineConfig" and optim.lr_scheduler_type == "cosine"
    omega_conf_to_dataclass(config.checkpoint)


def test_verls_cli_reads_our_config():
    out = subprocess.run([sys.executable, "-m", "verl.trainer.sft_trainer", "--config-path", str(CONFIGS),
                          "--config-name", "sft_qwen3_30b_a3b", "--cfg", "job", "data.train_files=c.parquet",
                          "model.path=/m"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "MagicSFTDataset" in out.stdout and "global_aux_loss" in out.stdout


def dataset(corpus, **data):
    from transformers import AutoTokenizer
    from verl.trainer.sft_trainer import create_sft_dataset

    config = composed("sft_qwen3_32b", *(f"data.{k}={v}" for k, v in data.items()))
    tokenizer = AutoTokenizer.from_pretrained(TINY_MODEL)
    return create_sft_dataset([str(corpus)], config.data, tokenizer, None), tokenizer


def test_verl_gets_magic_sfts_tokens_and_targets(corpus):
    data, tokenizer = dataset(corpus, max_length=100_000)
    samples = load_corpus(corpus)
    assert type(data).__name__ == "MagicSFTDataset" and len(data) == len(samples)
    for item, sample in enumerate(samples):
        expected, got = trainable(tokenizer, sample, 100_000), data[item]
        assert got["input_ids"].tolist() == expected["input_ids"]
        assert got["loss_mask"].tolist() == [int(x != IGNORE) for x in expected["labels"]]
        assert got["position_ids"].tolist() == list(range(len(expected["input_ids"])))
    longest = max(len(trainable(tokenizer, s, 100_000)["input_ids"]) for s in samples)
    assert len(dataset(corpus, max_length=longest - 1)[0]) < len(samples)  # too long: left out, not cut
    padded, _ = dataset(corpus, max_length=longest, pad_mode="right")
    row = padded[0]
    assert all(row[k].shape == (longest,) for k in ("input_ids", "attention_mask", "position_ids", "loss_mask"))
    assert row["loss_mask"].sum() == data[0]["loss_mask"].sum()


def test_verls_own_dataset_cannot_read_these_chats(corpus):
    """Why the subclass exists: verl's MultiTurnSFTDataset passes parquet's JSON tools to the template as text, and
    with them decoded it templates each message alone, which Qwen3's template (it keeps <think> only after the last
    user turn) does not add up to; its own sanity check says so."""
    import json

    from transformers import AutoTokenizer
    from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

    config = composed("sft_qwen3_32b", "data.max_length=100000").data
    own = MultiTurnSFTDataset([str(corpus)], AutoTokenizer.from_pretrained(TINY_MODEL), config)
    with pytest.raises(ValueError, match="Tools should either be a JSON schema"):
        own[0]
    own.tools = [json.loads(t) for t in own.tools]
    for item in range(len(own)):
        with pytest.raises(AssertionError, match="apply_chat_template to each turn separately"):
            own[item]


def test_verls_loss_on_our_batch_is_magic_sfts_loss(corpus):
    import torch
    from tensordict import TensorDict
    from transformers import AutoModelForCausalLM
    from verl.utils.dataset.dataset_utils import SFTTensorCollator
    from verl.workers.utils.losses import sft_loss

    from magic_sft.train import collate, micro_loss

    data, tokenizer = dataset(corpus, max_length=100_000)
    model = AutoModelForCausalLM.from_pretrained(TINY_MODEL, dtype=torch.float32).eval()
    items = [data[0], data[1]]
    batch = SFTTensorCollator("no_padding")(items)
    with torch.no_grad():
        log_probs = []
        for item in items:  # verl's engine: position i scores token i + 1
            logits = model(item["input_ids"][None]).logits[0].float()
            next_ids = torch.roll(item["input_ids"], -1)
            log_probs.append(torch.log_softmax(logits, -1).gather(-1, next_ids[:, None])[:, 0])
        targets = int(sum(item["loss_mask"].sum() for item in items))
        batch_data = TensorDict({"loss_mask": batch["loss_mask"], "dp_size": 1, "batch_num_tokens": targets})
        verl_loss, _ = sft_loss(None, {"log_probs": torch.nested.as_nested_tensor(log_probs, layout=torch.jagged)},
                                batch_data)
        examples = [trainable(tokenizer, s, 100_000) for s in load_corpus(corpus)[:2]]
        ours = micro_loss(model, collate(examples, tokenizer.pad_token_id), targets)
    assert torch.allclose(verl_loss, ours, rtol=1e-4), (verl_loss, ours)
