"""MoE load balancing (magic_sft/moe.py) on a real tiny Qwen3-MoE: each objective's value on routings whose answer is
known, capacity dropping, global-batch counts, MaxVio, and a training run that logs them with the family heatmap."""

import json
import math

import pytest
import torch

from magic_sft.moe import Balance, RouterProbe, max_violation, routers

EXPERTS, TOP_K = 4, 1


@pytest.fixture(scope="module")
def model():
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM

    config = Qwen3MoeConfig(vocab_size=64, hidden_size=16, intermediate_size=32, moe_intermediate_size=8,
                            num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                            num_experts=EXPERTS, num_experts_per_tok=TOP_K, decoder_sparse_step=1)
    torch.manual_seed(0)
    return Qwen3MoeForCausalLM(config)


def route(probe, experts_of_tokens, mask, logits=None):
    """Feed every layer's hook one routing (as a forward pass would) and return its output."""
    tokens = len(experts_of_tokens)
    indices = torch.tensor(experts_of_tokens).reshape(tokens, TOP_K)
    logits = torch.zeros(tokens, EXPERTS) if logits is None else logits
    out = None
    for router in probe.layers:
        out = probe._hook(router, None, (logits, torch.ones(tokens, TOP_K), indices))
    return out


def test_balanced_routing_scores_one_and_collapse_scores_high(model):
    assert len(routers(model)) == 2
    probe = RouterProbe(model, Balance(micro=1.0))
    probe.begin(torch.ones(1, 8))
    route(probe, [0, 1, 2, 3] * 2, None)
    _, parts = probe.loss()
    assert parts["micro"] == pytest.approx(1.0) and parts["variance"] == pytest.approx(0.0)
    assert parts["maxvio_micro"] == pytest.approx(0.0) and parts["z"] == pytest.approx(math.log(EXPERTS) ** 2)
    probe.begin(torch.ones(1, 8))
    collapsed = torch.tensor([[4.0, 0, 0, 0]] * 8)
    route(probe, [0] * 8, None, collapsed)
    total, parts = probe.loss()
    p0 = torch.softmax(collapsed[0], -1)[0].item()
    assert parts["micro"] == pytest.approx(EXPERTS * p0) and total.item() == pytest.approx(EXPERTS * p0)
    assert parts["maxvio_micro"] == pytest.approx(EXPERTS - 1) and parts["variance"] > 0.5


def test_sequence_balancing_sees_what_the_batch_hides(model):
    probe = RouterProbe(model, Balance(sequence=1.0))
    probe.begin(torch.ones(2, 4))  # row 0 only uses expert 0, row 1 only expert 1: balanced over the batch...
    logits = torch.tensor([[2.0, 0, 0, 0]] * 4 + [[0, 2.0, 0, 0]] * 4)
    route(probe, [0] * 4 + [1] * 4, None, logits)
    _, parts = probe.loss()
    p, q = torch.softmax(logits[0], -1)[:2].tolist()
    assert parts["sequence"] == pytest.approx(EXPERTS * p)  # ...but each sequence is collapsed
    assert parts["micro"] == pytest.approx(EXPERTS * (p + q) / 2) and parts["sequence"] > parts["micro"]


def test_padding_never_counts_and_capacity_drops_overflow_in_token_order(model):
    probe = RouterProbe(model, Balance(capacity=1.0))
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 1, 1, 0, 0]])  # 8 real tokens, 2 padding
    capacity = math.ceil(1.0 * 8 * TOP_K / EXPERTS)  # 2
    probe.begin(mask)
    _, weights, _ = route(probe, [0] * 10, None)
    assert weights[:, 0].tolist() == [1.0] * capacity + [0.0] * (8 - capacity) + [1.0, 1.0]
    _, parts = probe.loss()
    assert probe.step_counts[0].tolist() == [8.0, 0, 0, 0]  # padding rows are not counted


def test_global_batch_counts_span_the_step_and_maxvio_resets(model):
    probe = RouterProbe(model, Balance(global_batch=1.0))
    probe.begin(torch.ones(1, 4))
    route(probe, [0, 0, 0, 0], None)
    _, first = probe.loss()
    probe.begin(torch.ones(1, 4))
    route(probe, [1, 1, 2, 3], None)
    _, second = probe.loss()
    # uniform router probabilities: N * sum f_i / N = 1 whatever f is; the counts are what the step keeps
    assert first["global_batch"] == pytest.approx(1.0) and second["global_batch"] == pytest.approx(1.0)
    assert probe.step_counts[0].tolist() == [4, 2, 1, 1]
    assert probe.end_step() == pytest.approx(max_violation(torch.tensor([[4, 2, 1, 1.0]] * 2)))
    assert probe.step_counts.sum() == 0


def test_moe_training_logs_balancing_and_writes_the_family_heatmap(tmp_path, model):
    from magic_sft.synth import SynthConfig, synthesize
    from magic_sft.train import SFTConfig, train

    corpus = SynthConfig(mixture={"magic/Calendar-v0": 1, "magic/ToolCall-v0": 1}, samples=6, tokenizer="none")
    synthesize(corpus, tmp_path / "corpus", progress=False)
    config = SFTConfig(corpus=str(tmp_path / "corpus"), out=str(tmp_path / "run"), model="tiny-qwen3-moe",
                       max_steps=2, micro_batch_size=2, grad_accum=2, max_length=4096, lb_global=0.01, lb_z=0.001,
                       capacity_factor=1.5)
    train(config)
    rows = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all({"maxvio_micro", "maxvio_global", "global_batch", "z"} <= set(r) for r in rows)
    heatmap = json.loads((tmp_path / "run" / "expert_heatmap.json").read_text())
    assert heatmap["families"] == ["scheduling", "tool_planning"]
    assert all(sum(row) == pytest.approx(1.0) for row in heatmap["frequency"])
    assert (tmp_path / "run" / "expert_heatmap.png").stat().st_size > 0
    # the counts travel in the checkpoint: reopening the finished run redraws the same heatmap of all its steps
    (tmp_path / "run" / "expert_heatmap.json").unlink()
    train(config)
    assert json.loads((tmp_path / "run" / "expert_heatmap.json").read_text()) == heatmap


def test_the_miniature_table6_fills_every_cell(tmp_path, capsys):
    """benchmarks/moe_balance.py end to end on a tiny budget: two strategies, every cell of the table filled."""
    from benchmarks.moe_balance import main
    from magic_sft.synth import SynthConfig, synthesize

    corpus = SynthConfig(mixture={"magic/Calendar-v0": 1, "magic/ToolCall-v0": 1}, samples=8, tokenizer="none")
    synthesize(corpus, tmp_path / "corpus", progress=False)
    assert main(["--corpus", str(tmp_path / "corpus"), "--out", str(tmp_path / "t6"), "--steps", "2",
                 "--micro-batch-size", "2", "--grad-accum", "1", "--heldout-samples", "4", "--episodes", "1",
                 "--only", "baseline", "global"]) == 0
    text = (tmp_path / "t6" / "table6.md").read_text()
    header = next(line for line in text.splitlines() if line.startswith("| strategy"))
    assert "scheduling success" in header and "tool_planning loss" in header and "family specialisation" in header
    rows = [line for line in text.splitlines() if line.startswith("| baseline") or line.startswith("| global")]
    assert len(rows) == 2 and all("nan" not in row and row.count("|") == header.count("|") for row in rows)
    results = json.loads((tmp_path / "t6" / "results.json").read_text())
    assert 0.0 <= results["global"]["specialisation"] <= 1.0
    assert (tmp_path / "t6" / "maxvio.png").stat().st_size > 0
    assert (tmp_path / "t6" / "global" / "expert_heatmap.png").stat().st_size > 0
    assert text in capsys.readouterr().out
