"""The serving benchmark (benchmarks/serving): env prompts as chat requests, real timings from the vLLM test server
(tests/servers.py), and the Table 7 layout with its change column."""

import re

import pytest

from benchmarks.serving.load import METRICS, benchmark, change, env_requests, markdown_table

ENV_IDS = ["magic/Calendar-v0", "magic/ToolCall-v0"]


def table_rows(table: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]


def test_requests_are_first_turns_of_env_tasks_at_fixed_seeds():
    bodies = env_requests(ENV_IDS, 4)
    assert bodies == env_requests(ENV_IDS, 4)  # fixed seeds: every model gets the same prompts
    assert [[m["role"] for m in b["messages"]] for b in bodies] == [["user"], ["system", "user"]] * 2
    assert "tools" not in bodies[0] and bodies[1]["tools"][0]["type"] == "function"  # ToolCall's native tools
    assert bodies[0]["messages"] != bodies[2]["messages"]  # seed 0, then seed 1 of the same env


def test_change_column_is_later_model_against_the_first():
    level = lambda c, ttft: {"concurrency": c, "ttft_ms": {"mean": ttft}, "tpot_ms": {"mean": 2.0},
                             "latency_s": {"mean": 1.0}, "output_tokens_per_s": {"mean": 50.0}}
    rows = table_rows(markdown_table({"dense": [level(1, 100.0), level(10, 40.0)],
                                      "MoE": [level(1, 125.0), level(10, 30.0)]}))
    assert rows[0] == ["TTFT (ms)", "1", "100.0", "125.0", "+25.0"]
    assert rows[1] == ["TTFT (ms)", "10", "40.0", "30.0", "-25.0"]
    assert rows[2] == ["TPOT (ms)", "1", "2.00", "2.00", "+0.0"]
    assert change(80.0, 100.0) == pytest.approx(25.0)


def test_real_server_timings_fill_every_cell(openai_server):
    max_tokens = 6
    bodies = env_requests(ENV_IDS, 8)
    levels = [(1, bodies[2:4]), (2, bodies[4:8])]
    runs = {name: benchmark(openai_server.base_url, openai_server.model, levels, max_tokens, warmup=bodies[:2])
            for name in ("dense", "MoE")}  # one server measured twice stands in for the pair
    for summaries in runs.values():
        assert [s["concurrency"] for s in summaries] == [1, 2]
        for s, (_, sent) in zip(summaries, levels):
            assert s["requests"] == len(sent) and s["output_tokens"] == len(sent) * max_tokens  # ignore_eos
            assert s["ttft_ms"]["mean"] > 0 and s["tpot_ms"]["mean"] > 0 and s["output_tokens_per_s"]["mean"] > 0
            assert s["latency_s"]["mean"] * 1e3 > s["ttft_ms"]["mean"]
            assert s["ttft_ms"]["p50"] <= s["ttft_ms"]["p90"]
    rows = table_rows(markdown_table(runs))
    assert len(rows) == len(METRICS) * len(levels)
    for row, ((key, label, spec), (i, (c, _))) in zip(rows, [(m, lv) for m in METRICS for lv in enumerate(levels)]):
        dense, moe = runs["dense"][i][key]["mean"], runs["MoE"][i][key]["mean"]
        assert row == [label, str(c), format(dense, spec), format(moe, spec), f"{(moe - dense) / dense * 100:+.1f}"]
        assert all(re.fullmatch(r"[+-]?\d+(\.\d+)?", cell) for cell in row[1:])  # every cell a number
