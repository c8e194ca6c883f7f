"""Shared fixtures. Tests are never imported as a package (verl ships a top-level `tests`)."""

import os
from pathlib import Path

import gymnasium
import pytest

import magic_envs  # noqa: F401  (registers the ids)

MAGIC_IDS = sorted(i for i in gymnasium.registry if i.startswith("magic/"))
SHARED_DATA = Path(os.environ.get("MAGIC_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def splits_of(env_id: str) -> tuple[str, ...]:
    return gymnasium.make(env_id).unwrapped.splits


@pytest.fixture(params=MAGIC_IDS)
def env_id(request):
    return request.param
