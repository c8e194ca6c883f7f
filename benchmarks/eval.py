"""`magic eval`: run policies over a suite of envs, record every episode, print the paper's tables.

    magic eval --suite quick --policy smollm2                  # the embedded default model on the CPU suite
    magic eval --env magic/Calendar-v0 --policy oracle --policy random --episodes 50
    magic eval --suite full --policy openai:Qwen3-8B --policy-arg base_url=http://localhost:8000/v1 \
               --concurrency 32 --out runs/qwen3-8b

Episodes run concurrently (`--concurrency`, on one event loop; env calls in worker threads). With `--out DIR`
each episode is appended to DIR/episodes.jsonl the moment it ends, and a rerun skips those already there, so
a killed evaluation resumes without redoing or losing any; DIR also gets summary.json, tables.md and plots/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import gymnasium

import magic_envs  # noqa: F401  (registers the ids)
from benchmarks import report
from benchmarks.policies import SPECS, policy_factory
from benchmarks.suites import Run, Suite, load_suite, load_tasks
from magic_envs.cli import resolve_env_id
from magic_envs.core import rollout_async


class EpisodeStore:
    """Episode records in a JSONL file, keyed by (run, policy, task key, trial); appended and synced one by
    one. A torn last line (a kill mid-write) is dropped, atomically, when the file is opened again."""

    def __init__(self, path: Path | None):
        self.path, self.rows = path, {}
        if path is None:
            return
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    row = json.loads(line)
                    self.rows[self.key(row)] = row
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.rows.values()))

    @staticmethod
    def key(row: dict) -> tuple:
        return row["run"], row["policy"], str(row["key"]), row["trial"]

    def add(self, row: dict) -> None:
        self.rows[self.key(row)] = row
        if self.path is not None:
            with self.path.open("a") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def episode_row(run: Run, policy: str, key, trial: int, episode, env) -> dict:
    return {"run": run.label, "env_id": run.env_id, "split": run.split, "kwargs": run.kwargs, "policy": policy,
            "key": key, "trial": trial, "task_id": episode.task_id,
            "group": report.group_of(run.env_id, env.unwrapped.task), "score": episode.score,
            "success": episode.success, "steps": len(episode.actions), "truncated": episode.truncated,
            "metrics": episode.final_info.get("metrics", {}), "actions": episode.actions}


async def run_episodes(jobs: list[tuple], factories: dict, store: EpisodeStore, concurrency: int,
                       progress: bool) -> None:
    """Play every (run, policy, index, key, trial) job, at most `concurrency` at once; each env instance serves
    one episode at a time and is reused by the next."""
    from tqdm import tqdm

    slots = asyncio.Semaphore(concurrency)
    idle: dict[str, list] = {}  # run label -> envs free for the next episode
    loop = asyncio.get_running_loop()
    bar = tqdm(total=len(jobs), desc="episodes", unit="ep", disable=not progress, file=sys.stderr)
    with ThreadPoolExecutor(concurrency, thread_name_prefix="env") as pool:
        async def play(run: Run, policy: str, index: int, key, trial: int) -> None:
            async with slots:
                env = idle[run.label].pop() if idle.get(run.label) else await loop.run_in_executor(
                    pool, lambda: gymnasium.make(run.env_id, **run.make_kwargs()))
                # Each trial its own sampling seed; a run's reply cap travels with the episode's policy.
                agent = factories[policy](index + trial * len(run.keys), max_new_tokens=run.max_new_tokens)
                options = {"task": run.tasks[key]} if run.tasks else None
                try:
                    episode = await rollout_async(env, agent, seed=index if run.tasks else key, options=options,
                                                  executor=pool)
                except (ValueError, TypeError) as error:
                    if run.tasks:
                        raise SystemExit(f"magic eval: task {key!r} does not fit {run.env_id}: {error}") from error
                    raise
                store.add(episode_row(run, policy, key, trial, episode, env))
                idle.setdefault(run.label, []).append(env)
                bar.update()

        tasks = [asyncio.create_task(play(*job)) for job in jobs]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            bar.close()


def build_suite(args, parser) -> Suite:
    if args.suite and args.env:
        parser.error("give --suite or --env, not both")
    if args.suite:
        suite = load_suite(args.suite)
        if args.episodes is not None:  # a smaller or larger run of the same suite
            suite.runs = [replace(r, keys=tuple(range(r.keys[0], r.keys[0] + args.episodes)),
                                  limit=args.episodes if r.records else None) for r in suite.runs]
        if args.trials:
            suite.trials = args.trials
        return suite
    if not args.env:
        parser.error("give --env ID (repeatable) or --suite NAME")
    try:
        kwargs = json.loads(args.kwargs) if args.kwargs else {}
    except json.JSONDecodeError as error:
        parser.error(f"--kwargs must be a JSON object: {error}")
    if not isinstance(kwargs, dict):
        parser.error("--kwargs must be a JSON object, e.g. '{\"category\": \"dependency\"}'")
    tasks = load_tasks(args.tasks) if args.tasks else None
    episodes = args.episodes or 20
    keys = tuple(tasks) if tasks else tuple(range(args.seed, args.seed + episodes))
    runs = [Run(resolve_env_id(e), split, kwargs, keys, tasks) for e in args.env for split in args.split or ["test"]]
    return Suite("custom", runs, args.trials or 1)


def policy_settings(suite: Suite, pairs: list[str]) -> dict:
    settings = dict(suite.policy)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--policy-arg {pair!r}: write NAME=VALUE, e.g. batch_size=8")
        try:
            settings[name] = json.loads(value)
        except json.JSONDecodeError:
            settings[name] = value
    return settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="magic eval", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", help="a shipped suite (quick, full) or a suite TOML file (benchmarks/suites.py)")
    parser.add_argument("--env", action="append", default=[], help="env id (repeatable), e.g. magic/Calendar-v0")
    parser.add_argument("--split", action="append", default=[], help="with --env: split(s) to run (default test)")
    parser.add_argument("--kwargs", help="with --env: make kwargs as JSON, e.g. '{\"category\": \"dependency\"}'")
    parser.add_argument("--episodes", type=int, help="episodes per run (default 20 with --env; the suite's own)")
    parser.add_argument("--seed", type=int, default=0, help="with --env: first task seed; episodes use seed, seed+1...")
    parser.add_argument("--tasks", type=Path, help="with --env: pinned tasks from a file instead of seeds (a JSON "
                        "object id -> task as NATURAL PLAN publishes, a JSON list, or JSONL), e.g. real records")
    parser.add_argument("--trials", type=int, help="runs of every task (sampling policies differ between runs); "
                        "with more than one the tables add tau2-bench's pass^k for k = 1..trials")
    parser.add_argument("--policy", action="append", default=[], help=f"repeatable; one of {SPECS} (default oracle)")
    parser.add_argument("--policy-arg", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting of the model policies, e.g. max_new_tokens=256, temperature=0.7, "
                        "batch_size=8 (hf), base_url=http://localhost:8000/v1 (openai)")
    parser.add_argument("--concurrency", type=int, default=8, help="episodes in flight at once")
    parser.add_argument("--out", type=Path, help="folder for episodes.jsonl (appended, resumable), summary.json, "
                        "tables.md and plots/")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if (args.episodes is not None and args.episodes < 1) or (args.trials is not None and args.trials < 1) \
            or args.concurrency < 1:
        parser.error("--episodes, --trials and --concurrency must be at least 1")
    try:
        suite = build_suite(args, parser)
        settings = policy_settings(suite, args.policy_arg)
    except ValueError as error:
        raise SystemExit(f"magic eval: {error}") from error
    policies = args.policy or ["oracle"]
    runnable = []
    for run in suite.runs:  # a wrong id, split or knob is reported before anything runs
        try:
            env = gymnasium.make(run.env_id, **run.make_kwargs())
            runnable.append(run.with_records(env) if run.records else run)
            env.close()
        except (ValueError, TypeError, ImportError) as error:
            if suite.name == "custom":
                raise SystemExit(f"magic eval: {run.label}: {error}") from error
            # A shipped suite names envs whose external data (WorfBench's files, a package) may be absent here.
            print(f"magic eval: skipping {run.label}: {error}", file=sys.stderr)
    suite.runs = runnable
    store = EpisodeStore(args.out / "episodes.jsonl" if args.out else None)
    jobs = [(run, policy, i, key, trial) for run in suite.runs for policy in policies
            for i, key in enumerate(run.keys) for trial in range(suite.trials)
            if (run.label, policy, str(key), trial) not in store.rows]
    factories = {}
    for policy in sorted({job[1] for job in jobs}):
        try:  # a model loads once, and only when some episode still needs it
            factories[policy] = policy_factory(policy, **settings)
        except (ValueError, TypeError) as error:
            raise SystemExit(f"magic eval: {error}") from error
    asyncio.run(run_episodes(jobs, factories, store, args.concurrency, progress=not args.no_progress))
    wanted = {(run.label, policy) for run in suite.runs for policy in policies}
    rows = [r for r in store.rows.values() if (r["run"], r["policy"]) in wanted]
    text = write_report(rows, suite.trials, args.out)
    print(text, end="")
    return 0


def write_report(rows: list[dict], trials: int, out: Path | None) -> str:
    runs = report.run_table(rows, trials)
    tables = report.paper_tables(rows)
    text = report.markdown(tables, runs, trials)
    if out is not None:
        write_atomic(out / "summary.json", json.dumps({"runs": runs, "tables": tables}, indent=1) + "\n")
        write_atomic(out / "tables.md", text)
        from benchmarks.plots import plot_tables

        plot_tables(tables, out / "plots")
    return text
