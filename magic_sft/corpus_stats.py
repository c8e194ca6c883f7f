"""The corpus statistics report: samples, turns, tool calls and lengths in tokens per family and env, and why
attempts were rejected."""

from __future__ import annotations

from collections import Counter, defaultdict

from magic_envs.core import parse_action
from magic_envs.core.chat import without_template_tools


def load_tokenizer(spec: str):
    """A model's tokenizer (any name `magic sft --model` takes), or None for `none`."""
    if spec == "none":
        return None
    from transformers import AutoTokenizer

    from magic_sft.data import model_folder

    return AutoTokenizer.from_pretrained(model_folder(spec))


def sample_tokens(tokenizer, sample: dict) -> tuple[int, int]:
    """(all tokens, assistant tokens) of a sample as the tokenizer's chat template renders it for training."""
    native = "tools" in (tokenizer.chat_template or "")
    messages = sample["messages"] if native else without_template_tools(sample["messages"], sample["tools"])
    ids = tokenizer.apply_chat_template(messages, tools=sample["tools"] if native else None, tokenize=True,
                                        return_dict=False)
    ids = ids["input_ids"] if isinstance(ids, dict) else ids
    assistant = sum(len(tokenizer(m["content"])["input_ids"]) for m in messages if m["role"] == "assistant")
    return len(ids), assistant


def statistics(samples: list[dict], attempts: list[dict], tokenizer_spec: str) -> dict:
    tokenizer = load_tokenizer(tokenizer_spec)
    rows: dict[tuple[str, str], dict] = {}
    lengths: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for s in samples:
        key = (s["family"], s["env_id"])
        row = rows.setdefault(key, {"family": s["family"], "env_id": s["env_id"], "samples": 0, "turns": 0,
                                    "tool_calls": 0})
        assistant = [m for m in s["messages"] if m["role"] == "assistant"]
        row["samples"] += 1
        row["turns"] += len(assistant)
        row["tool_calls"] += sum(len(parse_action(m["content"]).calls) for m in assistant)
        if tokenizer is not None:
            lengths[key].append(sample_tokens(tokenizer, s))
    rejected: dict[str, Counter] = defaultdict(Counter)
    for a in attempts:
        if a["status"] != "ok":
            rejected[a["env_id"]][a["status"]] += 1
    for key, row in rows.items():
        row["turns_mean"] = round(row.pop("turns") / row["samples"], 2)
        row["rejected"] = dict(sorted(rejected.get(row["env_id"], Counter()).items()))
        if lengths[key]:
            total = sorted(t for t, _ in lengths[key])
            row["tokens_mean"] = round(sum(total) / len(total), 1)
            row["tokens_median"] = total[len(total) // 2]
            row["tokens_max"] = total[-1]
            row["assistant_tokens_mean"] = round(sum(a for _, a in lengths[key]) / len(total), 1)
    return {"samples": len(samples), "attempts": len(attempts),
            "tokenizer": tokenizer_spec if tokenizer is not None else None,
            "rows": [rows[k] for k in sorted(rows)]}


def to_markdown(stats: dict) -> str:
    head = ["family", "env", "samples", "turns (mean)", "tool calls", "tokens mean", "median", "max",
            "assistant tokens mean", "rejected"]
    lines = [f"# Corpus: {stats['samples']} samples from {stats['attempts']} attempts"
             f" (tokens: {stats['tokenizer'] or 'not counted'})", "", "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for r in stats["rows"]:
        rejected = ", ".join(f"{k} {v}" for k, v in r["rejected"].items()) or "0"
        counted = [r.get(k, "–") for k in ("tokens_mean", "tokens_median", "tokens_max", "assistant_tokens_mean")]
        cells = [r["family"], r["env_id"], r["samples"], r["turns_mean"], r["tool_calls"], *counted, rejected]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"
