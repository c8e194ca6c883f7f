"""Kill a `magic` command with SIGKILL once its log has some lines: the tests of exact resume after a kill."""

import signal
import subprocess
import sys
import time
from pathlib import Path


def kill_after(args: list[str], log: Path, lines: int, timeout: float = 600) -> None:
    """Start `python -m magic_envs.cli ARGS`, and SIGKILL it once `log` has `lines` lines (or it ends, or time is up)."""
    process = subprocess.Popen([sys.executable, "-m", "magic_envs.cli", *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.time() + timeout
    while process.poll() is None and time.time() < deadline:
        if log.is_file() and len(log.read_text().splitlines()) >= lines:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
