"""Copy drills: short synthetic chats whose every answer token is copied from the prompt, looked up by key.

    python -m magic_sft.drills --samples 30000 --seed 0 --out runs/corpus-drills     # a corpus for `magic sft`
    python -m magic_sft.drills --score runs/sft-drills/final --samples 200 --seed 1  # exact-copy accuracy

A policy trained from scratch on trajectories sees a handful of copy targets per sample (an id from the request in
the call, a figure from the tool's result in the report) among hundreds of templated tokens, and learns to write
values of the right shape long before it learns to copy the right one. A drill is a record of fields (ids, amounts,
dates, addresses, made-up words, as tools and requests carry them), then a question naming some of those fields in a
new order; the answer gives their values exactly. Dense copy targets teach the lookup-and-copy (induction) a small
model otherwise lacks; the task corpus then teaches where to use it. Drills have the corpus' sample shape, so
`magic sft` trains on them as on any `magic synth` output.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from magic_envs.core.tasks import fingerprint
from magic_sft.synth import write_atomic

KEYS = (
    "id", "order", "booking", "account", "amount", "balance", "total", "date", "city", "name", "email", "recipient",
    "subject", "code", "status", "hotel", "flight", "recipe", "item", "price", "owner", "ticket", "room", "message",
    "time", "start", "end", "reference", "product", "title",
)
LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"
DIGITS = "0123456789"
ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "ch", "st")
VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")


def word(rng: random.Random) -> str:
    return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(rng.randint(1, 3)))


def code(rng: random.Random) -> str:
    """An identifier as tools issue them: RC-041, MSG-8Y9VJ7, HT-MUS-06."""
    parts = ["".join(rng.choices(LETTERS, k=rng.randint(2, 3)))]
    for _ in range(rng.randint(1, 2)):
        parts.append("".join(rng.choices(rng.choice((DIGITS, DIGITS + LETTERS, LETTERS)), k=rng.randint(2, 6))))
    return "-".join(parts)


def value(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return code(rng)
    if kind == 1:
        return f"{rng.uniform(1, 9999):.2f}"
    if kind == 2:
        return f"{rng.randint(2020, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if kind == 3:
        return f"{word(rng)}.{word(rng)}@{word(rng)}.{rng.choice(('com', 'org', 'net'))}"
    if kind == 4:
        return " ".join(word(rng).capitalize() if rng.random() < 0.3 else word(rng) for _ in range(rng.randint(1, 4)))
    return str(rng.randint(1, 99999))


def drill(seed: int, split: str = "train") -> dict:
    """One drill, a pure function of (split, seed): a record shown as JSON (as a tool result) or as lines (as a
    request), a question for 1-3 of its fields, the answer in the question's order, as JSON or as text."""
    rng = random.Random(f"drill/{split}/{seed}")
    keys = rng.sample(KEYS, rng.randint(2, 6))
    record = {k: value(rng) for k in keys}
    asked = rng.sample(keys, rng.randint(1, min(3, len(keys))))
    shown = json.dumps(record) if rng.random() < 0.5 else "\n".join(f"{k}: {v}" for k, v in record.items())
    as_json = rng.random() < 0.5
    question = f"{shown}\n\nGive {', '.join(asked)}" + (" as JSON." if as_json else ".")
    answer = json.dumps({k: record[k] for k in asked}) if as_json else "; ".join(f"{k}: {record[k]}" for k in asked)
    messages = [
        {"role": "system", "content": "Answer with the requested values exactly as given."},
        {"role": "user", "content": question},
        {"role": "assistant", "content": answer},
    ]
    return {"id": f"drill-{split}-{seed}", "env_id": "drill/copy", "family": "copy_drills", "split": split,
            "kwargs": {}, "seed": seed, "task_fingerprint": fingerprint(messages[1]["content"]), "messages": messages,
            "tools": []}


def drills(samples: int, seed: int, split: str = "train") -> list[dict]:
    """`samples` drills with seeds seed * 1,000,000 + 0, 1, ... (the corpus' seeding convention)."""
    return [drill(seed * 1_000_000 + i, split) for i in range(samples)]


def score(model_path: str, samples: int, seed: int, batch_size: int = 16) -> float:
    """Share of held-out (test-split) drills whose greedy answer is exactly the expected one."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path, padding_side="left")
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(model_path).eval()
    tests, right = drills(samples, seed, split="test"), 0
    for start in range(0, len(tests), batch_size):
        batch = tests[start:start + batch_size]
        prompts = [tokenizer.apply_chat_template(d["messages"][:2], add_generation_prompt=True, tokenize=False)
                   for d in batch]
        inputs = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.no_grad():
            out = model.generate(**inputs, max_new_tokens=96, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        for d, ids in zip(batch, out[:, inputs["input_ids"].shape[1]:]):
            right += tokenizer.decode(ids, skip_special_tokens=True).strip() == d["messages"][2]["content"]
    return right / len(tests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m magic_sft.drills", description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=30000, help="drills to write, or to score")
    parser.add_argument("--seed", type=int, default=0, help="drill seeds are seed * 1,000,000 + 0, 1, 2, ...")
    parser.add_argument("--out", type=Path, help="folder for corpus.jsonl (train-split drills)")
    parser.add_argument("--score", metavar="MODEL", help="a checkpoint folder: print its exact-copy accuracy")
    parser.add_argument("--at-least", type=float, metavar="FRACTION",
                        help="with --score: exit 1 below this accuracy (a chain should not go on from a policy that "
                             "has not learnt to copy; when it does is sensitive to the machine's arithmetic)")
    args = parser.parse_args(argv)
    if args.score:
        if not Path(args.score).is_dir():
            raise SystemExit(f"{parser.prog}: no checkpoint folder at {args.score}")
        accuracy = score(args.score, args.samples, args.seed)
        print(f"{args.score}: {accuracy:.3f} of {args.samples} held-out drills copied exactly")
        if args.at_least is not None and accuracy < args.at_least:
            print(f"{parser.prog}: {args.score} copies {accuracy:.3f} of held-out drills, below --at-least "
                  f"{args.at_least}: train it on more drills first", file=sys.stderr)
            return 1
        return 0
    if args.out is None:
        parser.error("give --out (write drills) or --score (score a checkpoint)")
    args.out.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(d) + "\n" for d in drills(args.samples, args.seed))
    write_atomic(args.out / "corpus.jsonl", lines.encode())
    print(f"{args.samples} drills in {args.out / 'corpus.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
