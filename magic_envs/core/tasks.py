"""Task identity: fingerprints, split membership, and the (env_id, kwargs, seed) rows datasets store."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

IID_SPLITS = ("train", "test")
# The share of the IID task space that belongs to `test`. Train and test draw from one distribution, so
# membership is decided by the fingerprint: the two splits can never share a task, whatever the seeds.
TEST_FRACTION = 0.25


def canonical_json(task: dict) -> str:
    return json.dumps(task, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def fingerprint(task: dict) -> str:
    """A short stable hash of a task dict: its id in logs, datasets and dedup."""
    return hashlib.sha256(canonical_json(task).encode()).hexdigest()[:16]


def iid_split_of(task_id: str) -> str:
    """'train' or 'test' for an in-distribution task, from its fingerprint."""
    return "test" if int(task_id[:8], 16) < TEST_FRACTION * 16**8 else "train"


def roundtrip(task: dict) -> dict:
    """The task as it comes back from JSON (tuples become lists, keys strings): what a saved row holds."""
    return json.loads(canonical_json(task))


@dataclass(frozen=True)
class TaskSpec:
    """One row of a dataset: everything needed to rebuild an instance exactly."""

    env_id: str
    seed: int | None = None
    kwargs: dict = field(default_factory=dict)
    task: dict | None = None  # a pinned task dict, when the row is not generated from a seed

    def make(self):
        import gymnasium

        import magic_envs  # noqa: F401  (registers the ids)

        env = gymnasium.make(self.env_id, **self.kwargs)
        options = {"task": self.task} if self.task is not None else None
        return env, options
