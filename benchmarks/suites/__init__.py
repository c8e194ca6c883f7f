"""Evaluation suites: which envs, knobs, splits and seeds `magic eval` runs, declared in small TOML files.

A suite file (see `benchmarks/suites/quick.toml`) holds optional top-level `trials` and `description`, a
`[policy]` table of settings for model-backed policies (e.g. `max_new_tokens`), and one `[[run]]` table per
env:

    [[run]]
    env = "magic/Calendar-v0"     # a registered id
    splits = ["test"]             # default ["test"]
    episodes = 20                 # seeds seed, seed+1, ... of each split (fixed, so every model sees the same tasks)
    seed = 0
    kwargs = {}                   # make kwargs: knobs, e.g. {category = "dependency"}
    max_episode_steps = 10        # optional: a shorter turn cap than the registered one
    max_new_tokens = 64           # optional: a model's replies in this run stop here (below `[policy]`'s cap),
                                  # e.g. for one-line ALFWorld commands; no effect on oracle/random baselines
    records = true                # instead of seeds: every record of a real benchmark's split, once each, in
                                  # order (envs with a `records()` method: BFCL, BFCL multi-turn, tau2, WorfBench);
                                  # `episodes` then keeps the first N
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from magic_envs.core.tasks import canonical_json

RUN_KEYS = {"env", "splits", "episodes", "seed", "kwargs", "max_episode_steps", "max_new_tokens", "records"}


@dataclass(frozen=True)
class Run:
    """One env at one split and knob setting, over fixed seeds (or pinned tasks)."""

    env_id: str
    split: str
    kwargs: dict = field(default_factory=dict)
    keys: tuple = ()  # seeds, or the ids of pinned tasks
    tasks: dict | None = None  # id -> pinned task dict
    max_episode_steps: int | None = None
    max_new_tokens: int | None = None  # a cap on a model's replies in this run
    records: bool = False  # every record of the env's split (`with_records` pins them); `keys` may cap how many
    limit: int | None = None  # with `records`: only the first `limit` records

    @property
    def label(self) -> str:
        """What identifies the run in episode records (the env, split and knobs)."""
        knobs = "" if not self.kwargs else " " + canonical_json(self.kwargs)
        return f"{self.env_id} {self.split}{knobs}{' records' if self.records else ''}"

    def with_records(self, env) -> "Run":
        """This run with the env's records pinned as tasks, keyed by their ids (in order, the first `limit`)."""
        if not hasattr(env.unwrapped, "records"):
            raise ValueError(f"{self.env_id} has no fixed record set; draw its tasks by seed (no `records`)")
        records = env.unwrapped.records()[:self.limit]
        tasks = {str(r.get("id", i)): r for i, r in enumerate(records)}
        return replace(self, keys=tuple(tasks), tasks=tasks)

    def make_kwargs(self) -> dict:
        extra = {"max_episode_steps": self.max_episode_steps} if self.max_episode_steps else {}
        return {"split": self.split, **self.kwargs, **extra}


@dataclass
class Suite:
    name: str
    runs: list[Run]
    trials: int = 1
    policy: dict = field(default_factory=dict)
    description: str = ""


def shipped_suites() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files(__name__).iterdir() if p.name.endswith(".toml"))


def load_suite(name_or_path: str) -> Suite:
    """A shipped suite by name (`quick`, `full`) or a TOML file; ValueError says what is wrong."""
    path = Path(name_or_path)
    if not path.is_file():
        shipped = resources.files(__name__) / f"{name_or_path}.toml"
        if not shipped.is_file():
            raise ValueError(f"unknown suite {name_or_path!r}: neither a file nor one of the shipped suites "
                             f"({', '.join(shipped_suites())})")
        path = Path(str(shipped))
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"suite {path}: not valid TOML ({error})") from error
    runs = []
    for i, entry in enumerate(data.get("run", [])):
        unknown = set(entry) - RUN_KEYS
        if unknown or "env" not in entry:
            raise ValueError(f"suite {path}: run {i + 1} needs `env` and knows only {sorted(RUN_KEYS)}; "
                             f"got {sorted(entry)}")
        seed, episodes = int(entry.get("seed", 0)), int(entry.get("episodes", 20))
        records = bool(entry.get("records", False))
        cap = entry.get("max_new_tokens")
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ValueError(f"suite {path}: run {i + 1}: max_new_tokens must be a positive integer; got {cap!r}")
        for split in entry.get("splits", ["test"]):
            runs.append(Run(entry["env"], split, dict(entry.get("kwargs", {})), tuple(range(seed, seed + episodes)),
                            max_episode_steps=entry.get("max_episode_steps"), max_new_tokens=cap, records=records,
                            limit=entry.get("episodes") if records else None))
    if not runs:
        raise ValueError(f"suite {path}: no [[run]] entries")
    return Suite(path.stem, runs, int(data.get("trials", 1)), dict(data.get("policy", {})),
                 data.get("description", ""))


def load_tasks(path: Path) -> dict[str, dict]:
    """Pinned tasks by id from a JSON object (id -> task, NATURAL PLAN's layout), a JSON list, or JSONL."""
    if not path.is_file():
        raise ValueError(f"--tasks {path}: no such file")
    text = path.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as e:
            raise ValueError(f"--tasks {path}: neither JSON nor JSONL ({e})") from e
    tasks = data if isinstance(data, dict) else {str(t.get("id", i)): t for i, t in enumerate(data)}
    if not tasks or not all(isinstance(t, dict) for t in tasks.values()):
        raise ValueError(f"--tasks {path}: expected task objects")
    return tasks
