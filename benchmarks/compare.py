"""Two `magic eval` runs of the same suite side by side: success and score per env, their difference, and whether
it exceeds twice its standard error.

    python -m benchmarks.compare runs/eval-base runs/eval-sft [--names base,sft]

Only episodes both runs played (same env, split, seed and trial) are compared. A task played several times
(`magic eval --trials`, a sampling policy) counts once, at its mean over those trials: its trials share the task, so
they are not independent samples, and n is the number of tasks. The difference's standard error is the paired one
(the same tasks under both policies: the std of per-task differences over sqrt(n)); the unpaired
sqrt(se_a^2 + se_b^2) is printed beside it, and "> 2 se" holds only when the difference exceeds twice the larger.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from benchmarks.report import mean_se, task_means


def episodes(folder: Path) -> dict[tuple, dict]:
    path = Path(folder) / "episodes.jsonl"
    if not path.is_file():
        raise SystemExit(f"compare: no episodes.jsonl in {folder} (a `magic eval --out` folder)")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {(r["env_id"], r["split"], json.dumps(r["key"]), r["trial"], r["task_id"]): r for r in rows}


def compare(a: dict, b: dict, metric: str) -> list[dict]:
    shared = sorted(set(a) & set(b), key=str)
    out = []
    for env in sorted({k[0] for k in shared}):
        keys = [k for k in shared if k[0] == env]
        xa = task_means([a[k] for k in keys], [float(a[k][metric]) for k in keys])
        xb = task_means([b[k] for k in keys], [float(b[k][metric]) for k in keys])
        (ma, sa), (mb, sb) = mean_se(xa), mean_se(xb)
        diff, paired = mean_se([y - x for x, y in zip(xa, xb)])
        out.append({"env": env, "n": len(xa), "a": ma, "se_a": sa, "b": mb, "se_b": sb, "diff": diff,
                    "se_paired": paired, "se_unpaired": math.hypot(sa, sb),
                    "beyond_2se": abs(diff) > 2 * max(paired, math.hypot(sa, sb))})
    return out


def table(rows: list[dict], names: tuple[str, str], metric: str) -> str:
    a, b = names
    lines = [f"| env | n | {a} {metric} | {b} {metric} | {b} - {a} | se (paired / unpaired) | > 2 se |",
             "|---|---:|---:|---:|---:|---:|:---:|"]
    for r in rows:
        lines.append(f"| {r['env']} | {r['n']} | {r['a']:.3f} ± {r['se_a']:.3f} | {r['b']:.3f} ± {r['se_b']:.3f} | "
                     f"{r['diff']:+.3f} | {r['se_paired']:.3f} / {r['se_unpaired']:.3f} | "
                     f"{'yes' if r['beyond_2se'] else 'no'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--names", default="", help="two labels, comma-separated (default: the folder names)")
    args = parser.parse_args(argv)
    names = tuple(args.names.split(",")) if args.names else (args.a.name, args.b.name)
    if len(names) != 2:
        raise SystemExit("compare: --names takes two labels, e.g. base,sft")
    a, b = episodes(args.a), episodes(args.b)
    if not set(a) & set(b):
        raise SystemExit(f"compare: {args.a} and {args.b} share no episode (not the same suite?)")
    for metric in ("success", "score"):
        print(table(compare(a, b, metric), names, metric), end="\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
