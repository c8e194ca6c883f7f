"""Curves of an RL run from its log: rewards per objective and success per family, think and action entropy, and
lengths, per step (`python -m magic_rl.plots RUN [RUN ...] [--out PNG]` overlays runs, e.g. chi-PO beside GRPO)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def read_log(run: Path) -> list[dict]:
    path = Path(run) / "log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def plot_run(*runs: Path, path: Path | None = None) -> Path | None:
    """Write the curves of `runs` to `path` (default: the first run's curves.png); None when no run has a log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    logs = {Path(r).name: read_log(r) for r in runs}
    logs = {name: rows for name, rows in logs.items() if rows}
    if not logs:
        return None
    panels = [("rewards", lambda k: k == "reward" or k.startswith("objective/") or k.startswith("success/")),
              ("entropy (nats)", lambda k: k in ("think_entropy", "action_entropy")),
              ("tokens per episode", lambda k: k in ("response_tokens", "think_tokens"))]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.6))
    for ax, (title, wanted) in zip(axes, panels):
        for name, rows in logs.items():
            keys = sorted({k for row in rows for k in row if wanted(k)})
            for key in keys:
                points = [(row["step"], row[key]) for row in rows if row.get(key) is not None]
                label = key if len(logs) == 1 else f"{name}: {key}"
                ax.plot(*zip(*points), label=label, linestyle="-" if name == next(iter(logs)) else "--")
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.legend(fontsize=6)
    fig.tight_layout()
    path = Path(path or Path(runs[0]) / "curves.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m magic_rl.plots", description=__doc__)
    parser.add_argument("runs", nargs="+", type=Path, help="`magic rl --out` folders")
    parser.add_argument("--out", type=Path, help="the PNG to write (default: the first run's curves.png)")
    args = parser.parse_args()
    written = plot_run(*args.runs, path=args.out)
    if written is None:
        raise SystemExit("magic_rl.plots: no log.jsonl in " + ", ".join(map(str, args.runs)))
    print(written)
