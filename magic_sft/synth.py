"""`magic synth`: the SFT corpus, one multi-turn sample per oracle episode of every family.

    magic synth --config magic_sft/configs/corpus.toml --out data/corpus [--samples N]

Each sample is an episode of the env's oracle played through the shared rollout and chat formatter, every
assistant turn preceded by hindsight reasoning (think.py). A sample is kept only if its task is new (task
fingerprint), every tool call parses and fits its tool's JSON schema, and replaying its assistant turns in a
fresh env succeeds. The plan of attempts is a pure function of the config, so the same config gives
byte-identical files.

Progress is journaled (`DIR/journal.jsonl`, one line per attempt, flushed): a killed run resumes where it
stopped. At the end `DIR` holds `corpus.jsonl` and `corpus.parquet` (columns `messages` and `tools` for
transformers' chat templates and verl's multi-turn SFT dataset, plus the env, knobs, seed and fingerprint that
rebuild each task), and `stats.json` / `stats.md` (per family counts, lengths in tokens, filter rejections).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import gymnasium

import magic_envs
from magic_envs.core import parse_action, rollout
from magic_envs.core.tasks import canonical_json, fingerprint
from magic_envs.core.tools import Tool, check_call
from magic_sft.think import HindsightOracle

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

CONFIGS = Path(__file__).parent / "configs"
MAX_TRIES = 20  # attempts per sample before a run reports the env as exhausted


@dataclass
class SynthConfig:
    mixture: dict[str, float]
    """env id -> weight; each env gets round(weight / total * samples) samples"""
    samples: int = 1000
    """samples in the corpus"""
    seed: int = 0
    """task seeds are seed * 1_000_000 + 0, 1, 2, ... per env; thoughts are seeded from the same numbers"""
    split: str = "train"
    """the split tasks come from (the test and ood splits stay held out for evaluation)"""
    kwargs: dict[str, dict] = field(default_factory=dict)
    """env id -> make kwargs (knobs)"""
    tokenizer: str = "smollm2"
    """for token lengths in the statistics: `smollm2` (the embedded model) or a checkpoint folder; `none` skips"""

    @classmethod
    def load(cls, path: Path) -> "SynthConfig":
        if not path.is_file():
            raise ValueError(f"no config file {path}")
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"config {path}: not valid TOML ({error})") from error
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            known = sorted(cls.__dataclass_fields__)
            raise ValueError(f"config {path}: unknown keys {sorted(unknown)}; known: {known}")
        config = cls(**data)
        for env_id in list(config.mixture) + list(config.kwargs):
            if env_id not in magic_envs.ENVS:
                raise ValueError(f"config {path}: unknown env id {env_id!r} (see `magic list`)")
        if config.samples < 1 or not config.mixture or min(config.mixture.values()) <= 0:
            raise ValueError(f"config {path}: needs samples >= 1 and a mixture of positive weights")
        return config

    def quotas(self) -> dict[str, int]:
        """Samples per env: largest remainders, so they add up to `samples` exactly."""
        total = sum(self.mixture.values())
        exact = {e: w / total * self.samples for e, w in self.mixture.items()}
        quotas = {e: int(x) for e, x in exact.items()}
        for e in sorted(exact, key=lambda e: (quotas[e] - exact[e], e))[:self.samples - sum(quotas.values())]:
            quotas[e] += 1
        return quotas


def play(env_id: str, kwargs: dict, split: str, seed: int, envs: dict) -> tuple[dict | None, str]:
    """One attempt: the sample of the oracle episode at `seed`, or None and why it was rejected."""
    env = envs.setdefault(env_id, gymnasium.make(env_id, split=split, **kwargs))
    episode = rollout(env, HindsightOracle(seed), seed=seed)
    if not episode.success:
        return None, "oracle failed"
    tools = {t["function"]["name"] if "function" in t else t["name"]: Tool.from_schema(t) for t in episode.tools}
    for message in episode.messages:
        if message["role"] == "assistant":
            parsed = parse_action(message["content"])
            problems = list(parsed.errors) + [check_call(c, tools) for c in parsed.calls]
            if any(problems):
                return None, "schema"
    replay = gymnasium.make(env_id, split=split, **kwargs)
    replay.reset(seed=seed)
    info = {}
    for action in episode.actions:
        _, _, terminated, truncated, info = replay.step(action)
        if terminated or truncated:
            break
    if not info.get("success"):
        return None, "replay"
    task = env.unwrapped.task
    return {"id": f"{env_id}:{split}:{seed}", "env_id": env_id, "family": magic_envs.ENVS[env_id].family,
            "split": split, "kwargs": kwargs, "seed": seed, "task_fingerprint": fingerprint(task),
            "messages": episode.messages, "tools": episode.tools}, "ok"


def synthesize(config: SynthConfig, out: Path, progress: bool = True) -> list[dict]:
    """Build (or finish) the corpus in `out`; returns the samples in order."""
    out.mkdir(parents=True, exist_ok=True)
    journal, header = out / "journal.jsonl", {"config": asdict(config)}
    attempts = read_journal(journal, header)
    with journal.open("a") as log:
        if not attempts:
            log.write(json.dumps(header, sort_keys=True) + "\n")
        done = {(a["env_id"], a["seed"]): a for a in attempts}
        samples, seen, envs = [], set(), {}
        for env_id, quota in config.quotas().items():
            kwargs, k, kept = config.kwargs.get(env_id, {}), 0, 0
            while kept < quota:
                if k >= (kept + 1) * MAX_TRIES:
                    raise RuntimeError(f"{env_id}: {k} attempts gave only {kept} samples; the split may have too "
                                       "few distinct tasks for this quota")
                seed = config.seed * 1_000_000 + k
                k += 1
                attempt = done.get((env_id, seed))
                if attempt is None:
                    sample, status = play(env_id, kwargs, config.split, seed, envs)
                    attempt = {"env_id": env_id, "seed": seed, "status": status, "sample": sample}
                    log.write(json.dumps(attempt, ensure_ascii=False) + "\n")
                    log.flush()
                    attempts.append(attempt)
                if attempt["status"] == "ok":
                    if attempt["sample"]["task_fingerprint"] in seen:
                        attempt["status"] = "duplicate"  # judged here, in plan order, so a resume agrees
                        continue
                    seen.add(attempt["sample"]["task_fingerprint"])
                    samples.append(attempt["sample"])
                    kept += 1
            if progress:
                print(f"magic synth: {env_id}: {kept} samples from {k} attempts", file=sys.stderr)
    write_outputs(out, samples, attempts, config)
    return samples


def read_journal(path: Path, header: dict) -> list[dict]:
    """Attempts already made under this config; a torn last line (a kill mid-write) is dropped."""
    if not path.is_file():
        return []
    lines = path.read_text().splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines = lines[:-1]
        path.write_text("".join(lines))
    if not lines:
        return []
    if json.loads(lines[0]) != json.loads(json.dumps(header, sort_keys=True)):
        raise ValueError(f"{path.parent} holds a corpus of another config; choose a new --out or delete it")
    return [json.loads(line) for line in lines[1:]]


def write_outputs(out: Path, samples: list[dict], attempts: list[dict], config: SynthConfig) -> None:
    from magic_sft.corpus_stats import statistics, to_markdown

    text = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples)
    write_atomic(out / "corpus.jsonl", text.encode())
    write_parquet(out / "corpus.parquet", samples)
    stats = statistics(samples, attempts, config.tokenizer)
    write_atomic(out / "stats.json", (json.dumps(stats, indent=1) + "\n").encode())
    write_atomic(out / "stats.md", to_markdown(stats).encode())


def write_parquet(path: Path, samples: list[dict]) -> None:
    """`messages` as a list of {role, content}; `tools` as a list of JSON strings is what parquet can hold
    without merging every tool's schema into one struct (verl reads them through magic_rl's dataset)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({
        "id": [s["id"] for s in samples], "env_id": [s["env_id"] for s in samples],
        "family": [s["family"] for s in samples], "split": [s["split"] for s in samples],
        "kwargs": [canonical_json(s["kwargs"]) for s in samples], "seed": [s["seed"] for s in samples],
        "task_fingerprint": [s["task_fingerprint"] for s in samples],
        "messages": [[{"role": m["role"], "content": m["content"]} for m in s["messages"]] for s in samples],
        "tools": [json.dumps(s["tools"], ensure_ascii=False) for s in samples]})
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="magic synth", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(CONFIGS / "corpus.toml"), help="a corpus config TOML")
    parser.add_argument("--out", type=Path, required=True, help="output folder (resumes what is there)")
    parser.add_argument("--samples", type=int, help="override the config's corpus size")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    try:
        config = SynthConfig.load(Path(args.config))
        if args.samples is not None:
            if args.samples < 1:
                parser.error("--samples must be at least 1")
            config.samples = args.samples
        samples = synthesize(config, args.out, progress=not args.quiet)
    except ValueError as error:
        raise SystemExit(f"magic synth: {error}") from error
    print((args.out / "stats.md").read_text(), end="")
    print(f"magic synth: {len(samples)} samples in {args.out / 'corpus.jsonl'} and corpus.parquet")
    return 0
