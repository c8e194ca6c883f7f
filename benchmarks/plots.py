"""Bar charts of the paper tables: one PNG per table, a group of bars per column, one bar per policy, each with
its standard error as an error bar and its episode count above it."""

from __future__ import annotations

from pathlib import Path


def plot_tables(tables: dict, folder: Path) -> list[Path]:
    """Write one chart per table into `folder`; returns the files (none when matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for title, by_policy in tables.items():
        policies = list(by_policy)
        labels = [label for label in next(iter(by_policy.values()))
                  if any((by_policy[p][label] or {}).get("mean") is not None for p in policies)]
        if not labels:
            continue
        width = 0.8 / len(policies)
        fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(labels) * max(1, len(policies)) ** 0.5), 4.0))
        for k, policy in enumerate(policies):
            cells = [by_policy[policy][label] or {} for label in labels]
            xs = [i + (k - (len(policies) - 1) / 2) * width for i in range(len(labels))]
            means = [100 * (c.get("mean") or 0.0) for c in cells]
            errors = [100 * (c.get("se") or 0.0) for c in cells]
            bars = ax.bar(xs, means, width, yerr=errors, capsize=2, label=policy)
            for bar, c in zip(bars, cells):
                if c.get("n"):
                    ax.annotate(f"n={c['n']}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                                ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("%")
        ax.set_ylim(0, 105)
        ax.set_title(title)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = folder / (title.lower().replace(" ", "_").replace("-", "_") + ".png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written
