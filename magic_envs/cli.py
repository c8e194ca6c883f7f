"""`magic`: the one command-line entry point. Subcommands load lazily, so `magic list` never imports torch."""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys

# name -> ("module:function(argv) -> exit code", one-line help). Modules are imported only when chosen.
COMMANDS = {
    "list": ("magic_envs.cli:list_main", "list every magic/ env id with its family, knobs and a description"),
    "play": ("magic_envs.cli:play_main", "play an env in the terminal as a human"),
    "eval": ("benchmarks.eval:main", "run a policy over envs and print success and score"),
    "synth": ("magic_sft.synth:main", "build the SFT corpus: oracle episodes of every family with hindsight <think>"),
    "sft": ("magic_sft.train:main", "fine-tune a model on the corpus (assistant tokens only; resumable)"),
    "rl": ("magic_rl.trainer:main", "multi-objective GRPO / GiGPO / chi-PO with the local trainer (resumable)"),
    "score-workflows": ("magic_envs.decomposition.score_cli:main",
                        "score predicted workflows against WorfBench gold; per-task chain/graph P/R/F1"),
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        lines = [f"  {name:<6} {help_}" for name, (_, help_) in COMMANDS.items()]
        print("usage: magic <command> [options]\n\ncommands:\n" + "\n".join(lines) +
              "\n\nRun `magic <command> --help` for a command's options.")
        if argv and argv[0] not in ("-h", "--help"):
            print(f"\nmagic: unknown command {argv[0]!r}", file=sys.stderr)
            return 2
        return 0
    module, function = COMMANDS[argv[0]][0].split(":")
    return getattr(importlib.import_module(module), function)(argv[1:]) or 0


def resolve_env_id(env_id: str) -> str:
    """The registered id, accepting `Calendar-v0` for `magic/Calendar-v0`; a clear error otherwise."""
    from magic_envs import ENVS

    for candidate in (env_id, f"magic/{env_id}"):
        if candidate in ENVS:
            return candidate
    raise SystemExit(f"magic: unknown env id {env_id!r}; the ids are: {', '.join(ENVS)} (see `magic list`)")


def knobs_of(env_id: str) -> str:
    from gymnasium.envs.registration import load_env_creator

    from magic_envs import ENVS

    params = inspect.signature(load_env_creator(ENVS[env_id].entry_point)).parameters.values()
    return ", ".join(f"{p.name}={p.default!r}" for p in params if p.name not in ("self", "render_mode"))


def list_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="magic list", description=COMMANDS["list"][1])
    parser.add_argument("--family", help="only this family (e.g. scheduling)")
    args = parser.parse_args(argv)
    from magic_envs import ENVS

    for env_id, entry in ENVS.items():
        if args.family and entry.family != args.family:
            continue
        print(f"{env_id}  [{entry.family}]\n    {entry.summary}\n    knobs: {knobs_of(env_id)}\n")
    return 0


def play_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="magic play", description="Play an env as the agent. Type your action; end it with an empty line. "
        "Commands: :oracle (show the oracle's action), :quit.")
    parser.add_argument("env_id", help="e.g. magic/Calendar-v0 (see `magic list`)")
    parser.add_argument("--seed", type=int, default=0, help="task seed")
    parser.add_argument("--split", help="train | test | ood | ... (default: the env's own default)")
    args = parser.parse_args(argv)
    import gymnasium

    import magic_envs  # noqa: F401

    kwargs = {"split": args.split} if args.split else {}
    env = gymnasium.make(resolve_env_id(args.env_id), **kwargs)
    observation, info = env.reset(seed=args.seed)
    if info["instructions"]:
        print(f"[system]\n{info['instructions']}\n")
    for tool in info["tools"]:
        print(f"[tool] {tool['function']['name']}: {tool['function']['description']}")
    print(f"[{info['role']}]\n{observation}\n")
    while True:
        lines = []
        while True:
            try:
                line = input("> " if not lines else "  ")
            except EOFError:
                return 0
            if line.strip() == ":quit":
                return 0
            if line.strip() == ":oracle":
                print(env.unwrapped.oracle_action())
                continue
            if not line and lines:
                break
            lines.append(line)
        observation, reward, terminated, truncated, info = env.step("\n".join(lines))
        print(f"\n[{info['role']}]\n{observation}\n")
        if terminated or truncated:
            print(f"episode over: reward={reward} success={info['success']} metrics={info['metrics']}")
            return 0


if __name__ == "__main__":
    sys.exit(main())
