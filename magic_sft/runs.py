"""Run folders, shared by `magic sft` and `magic rl`: dataclass configs as command lines, atomic checkpoints that a
rerun with the same folder resumes exactly, the JSON log cut back to the checkpoint, and the final model."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import os
import shutil
import textwrap
from pathlib import Path

import torch


def field_docs(cls) -> dict[str, str]:
    """The attribute docstrings of a dataclass and the dataclasses it extends (the string under each field)."""
    docs = {}
    for klass in reversed([k for k in cls.__mro__ if dataclasses.is_dataclass(k)]):
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body
        docs |= {a.target.id: " ".join(d.value.value.split()) for a, d in zip(body, body[1:])
                 if isinstance(a, ast.AnnAssign) and isinstance(d, ast.Expr) and isinstance(d.value, ast.Constant)}
    return docs


def parse_config(cls, argv: list[str] | None, prog: str, description: str, required: tuple[str, ...] = ()):
    """`cls(**flags)`: one `--flag-name` per field, typed by its default, its docstring as help."""
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        kind = type(f.default)
        if kind is bool:
            parser.add_argument(f"--{f.name.replace('_', '-')}", action=argparse.BooleanOptionalAction,
                                default=f.default, help=docs.get(f.name, ""))
        else:
            parser.add_argument(f"--{f.name.replace('_', '-')}", type=kind, default=f.default,
                                required=f.name in required, help=docs.get(f.name, ""))
    return cls(**vars(parser.parse_args(argv)))


def save(out: Path, config, step: int, **states) -> None:
    """Checkpoint `states` (objects with `state_dict()`, or plain values) at `step`, atomically: a kill at any moment
    leaves the previous checkpoint or this one whole."""
    staging, target = out / "checkpoint.tmp", out / "checkpoint"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    state = {name: s.state_dict() if hasattr(s, "state_dict") else s for name, s in states.items()}
    torch.save({**state, "step": step, "config": dataclasses.asdict(config)}, staging / "state.pt")
    swap_in(staging, target)


def swap_in(staging: Path, target: Path) -> None:
    """Put the folder `staging` in place of `target`: a kill at any moment leaves one of them whole (or, between
    the two renames, `target.old`, which the next swap clears)."""
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)


def resume(out: Path, config, ignore: tuple[str, ...] = ("threads",), **states) -> tuple[int, dict]:
    """Load the last checkpoint of `out` into `states` (objects with `load_state_dict`); return its step (0 without
    one) and the whole saved state, for plain values. Log lines past the step are dropped: they are redone. Config
    fields in `ignore` (e.g. thread counts) may differ, and so may `out`: a moved run folder resumes; any other
    difference is an error."""
    out.mkdir(parents=True, exist_ok=True)
    saved, step, ignore = {}, 0, (*ignore, "out")
    for name in ("checkpoint", "checkpoint.old"):  # .old survives a kill between the two renames in `save`
        path = out / name / "state.pt"
        if path.is_file():
            saved = torch.load(path, weights_only=False)
            same = {k: v for k, v in dataclasses.asdict(config).items() if k not in ignore}
            # a setting added since the run began counts at its default
            before = {f.name: f.default for f in dataclasses.fields(config) if f.default is not dataclasses.MISSING}
            if {k: v for k, v in (before | saved["config"]).items() if k not in ignore} != same:
                raise ValueError(f"{out} holds a run of another config; choose a new --out or delete it")
            for key, target in states.items():
                target.load_state_dict(saved[key])
            step = saved["step"]
            break
    log = out / "log.jsonl"
    if log.is_file():
        rows = [line for line in log.read_text().splitlines() if line.endswith("}")]
        log.write_text("".join(line + "\n" for line in rows if json.loads(line)["step"] <= step))
    return step, saved


def save_final(out: Path, model, tokenizer, step: int | None = None) -> Path:
    """`out/final/`: a checkpoint transformers (and `magic eval --policy hf:`) loads, written atomically. Once; or,
    given the run's `step`, again whenever the run has moved past the step it holds (an RL run extended by more
    `--steps`), so `final/` is never an older policy than the run's last checkpoint."""
    final = out / "final"
    held = final / "step.txt"
    if (final / "config.json").is_file() and (step is None or (held.is_file() and held.read_text() == str(step))):
        return final
    staging = out / "final.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    if step is not None:
        (staging / "step.txt").write_text(str(step))
    swap_in(staging, final)  # a kill that leaves no final/: the rerun writes it from the checkpoint
    return final
