"""Shared fixtures. Tests are never imported as a package (verl ships a top-level `tests`)."""

import os
from pathlib import Path

import gymnasium
import pytest
from servers import openai_server  # noqa: F401  (the real vLLM server fixture, tests/servers.py)

import magic_envs  # noqa: F401  (registers the ids)

MAGIC_IDS = sorted(i for i in gymnasium.registry if i.startswith("magic/"))
SHARED_DATA = Path(os.environ.get("MAGIC_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
WORFBENCH_DATA = SHARED_DATA / "worfbench"
if WORFBENCH_DATA.is_dir():
    os.environ.setdefault("MAGIC_WORFBENCH_DIR", str(WORFBENCH_DATA))
NEEDS_DATA = {"magic/WorfBench-v0": "MAGIC_WORFBENCH_DIR"}  # ids that serve external files


def pytest_collection_modifyitems(config, items):
    """Registry tests of an env that serves external data skip cleanly where that data is absent; tests that
    use the vLLM server carry the `openai_server` marker (deselect them with -m "not openai_server")."""
    for item in items:
        if "openai_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.openai_server)
        callspec = getattr(item, "callspec", None)
        env_id = callspec.params.get("env_id") if callspec else None
        variable = NEEDS_DATA.get(env_id)
        if variable and not os.environ.get(variable):
            item.add_marker(pytest.mark.skip(reason=f"{env_id} serves external data: set {variable}"))


def splits_of(env_id: str) -> tuple[str, ...]:
    return gymnasium.make(env_id).unwrapped.splits


@pytest.fixture(params=MAGIC_IDS)
def env_id(request):
    return request.param
