"""Load an OpenAI-compatible chat endpoint at a fixed concurrency and measure TTFT, TPOT and end-to-end latency.

Every request is the first turn an agent sees in one of our env tasks: the env's instructions as the system
message, its tools as native OpenAI `tools`, its first observation, all from the shared chat formatter. Output
lengths are pinned (`max_tokens`, plus vLLM's `ignore_eos` where the server takes it), so two models answer the
same prompts with the same number of tokens and their timings compare token for token.

    >>> round(change(2.0, 2.5), 1), markdown_table({"a": []}).splitlines()[0]
    (25.0, '| metric | concurrency | a |')
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import gymnasium
import httpx
import numpy as np

import magic_envs
from benchmarks.policies.native import to_openai_messages
from benchmarks.policies.streaming import ServerError, stream_chat
from magic_envs.core import Conversation

# (key in a level's summary, table label, number format); latencies are lower-is-better, throughput higher.
METRICS = [("ttft_ms", "TTFT (ms)", ".1f"), ("tpot_ms", "TPOT (ms)", ".2f"), ("latency_s", "E2E latency (s)", ".3f"),
           ("output_tokens_per_s", "Throughput (output tok/s)", ".1f")]


def usable_env_ids(env_ids: list[str] | None = None, split: str = "test") -> tuple[list[str], dict[str, str]]:
    """The ids (default: every registered one) that make and reset here, and why each other one does not
    (an env serving external data that is absent, e.g. WorfBench without its files)."""
    usable, skipped = [], {}
    for env_id in env_ids or list(magic_envs.ENVS):
        try:
            gymnasium.make(env_id, **magic_envs.ENVS[env_id].offline, split=split).reset(seed=0)
            usable.append(env_id)
        except Exception as error:  # whatever the reason, the env cannot give prompts on this machine
            skipped[env_id] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
    return usable, skipped


def env_requests(env_ids: list[str], count: int, split: str = "test", first_seed: int = 0) -> list[dict]:
    """`count` chat-completions bodies (messages and tools): the envs in turn, each at seeds first_seed,
    first_seed + 1, ..., so every model sees the same prompts and every level the same mix of envs."""
    envs = {env_id: gymnasium.make(env_id, **magic_envs.ENVS[env_id].offline, split=split) for env_id in env_ids}
    bodies = []
    for i in range(count):
        env_id = env_ids[i % len(env_ids)]
        observation, info = envs[env_id].reset(seed=first_seed + i // len(env_ids))
        chat = Conversation(info["instructions"], info["tools"])
        chat.add_observation(observation, info["role"])
        body = {"messages": to_openai_messages(chat.messages)}
        if info["tools"]:
            body["tools"] = info["tools"]
        bodies.append(body)
    return bodies


@dataclass
class Level:
    """The requests of one concurrency level: per-request timings (seconds) and the level's wall time."""

    concurrency: int
    ttft: list[float]
    tpot: list[float]
    latency: list[float]
    output_tokens: list[int]
    wall: float

    def summary(self) -> dict:
        def stats(values: list[float], scale: float) -> dict:
            v = np.asarray(values, float) * scale
            return {"mean": float(v.mean()), "p50": float(np.percentile(v, 50)), "p90": float(np.percentile(v, 90))}
        return {"concurrency": self.concurrency, "requests": len(self.latency), "wall_s": self.wall,
                "output_tokens": int(sum(self.output_tokens)),
                "ttft_ms": stats(self.ttft, 1e3), "tpot_ms": stats(self.tpot, 1e3), "latency_s": stats(self.latency, 1),
                "output_tokens_per_s": {"mean": sum(self.output_tokens) / self.wall},
                "requests_per_s": {"mean": len(self.latency) / self.wall}}


async def run_level(client: httpx.AsyncClient, url: str, bodies: list[dict], concurrency: int,
                    headers: dict | None = None) -> Level:
    """Send every body, streaming, with at most `concurrency` in flight; all must succeed."""
    limit = asyncio.Semaphore(concurrency)

    async def one(body):
        async with limit:
            return await stream_chat(client, url, body, headers)

    start = time.perf_counter()
    done = await asyncio.gather(*(one(body) for body in bodies))
    wall = time.perf_counter() - start
    for c in done:
        if c.ttft is None or c.tpot is None:
            raise ServerError(f"{url}: a reply of {c.completion_tokens} tokens (finish_reason {c.finish_reason}) "
                              "streamed no text or fewer than 2 tokens, so it has no TTFT or TPOT")
    return Level(concurrency, [c.ttft for c in done], [c.tpot for c in done], [c.latency for c in done],
                 [c.completion_tokens or len(c.chunk_times) for c in done], wall)


def benchmark(base_url: str, model: str, levels: list[tuple[int, list[dict]]], max_tokens: int,
              ignore_eos: bool = True, warmup: list[dict] = (), api_key: str | None = None,
              temperature: float = 1.0, timeout: float = 1800.0) -> list[dict]:
    """Summaries of each (concurrency, bodies) level in order, after the `warmup` bodies were sent one at a
    time (unmeasured: first-request start-up costs, and the shared system prompts in the prefix cache, so each
    level meets the server in the same state)."""
    # Sampled, as served models usually are; greedy decoding of a random model can repeat one token that is half
    # a UTF-8 character, which a server never streams (no text, so no TTFT).
    params = {"model": model, "max_tokens": max_tokens, "temperature": temperature}
    if ignore_eos:
        params["ignore_eos"] = True  # vLLM's extension: every reply is exactly max_tokens long
    url = f"{base_url.rstrip('/')}/chat/completions"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
    most = max(c for c, _ in levels)

    async def main() -> list[dict]:
        limits = httpx.Limits(max_connections=most, max_keepalive_connections=most)
        async with httpx.AsyncClient(timeout=timeout, limits=limits) as client:
            for body in warmup:
                await stream_chat(client, url, {**body, **params, "max_tokens": min(max_tokens, 8)}, headers)
            return [(await run_level(client, url, [{**b, **params} for b in bodies], c, headers)).summary()
                    for c, bodies in levels]

    return asyncio.run(main())


def change(base: float, other: float) -> float:
    """`other` relative to `base`, in percent (Table 7's MoE-vs-dense column)."""
    return (other - base) / base * 100.0


def markdown_table(results: dict[str, list[dict]]) -> str:
    """Rows = metric x concurrency, one column per model (mean values), then the change of every later model
    against the first. `results` maps a column name to its level summaries, the same concurrencies in order."""
    names = list(results)
    base = names[0]
    header = ["metric", "concurrency", *names, *(f"{n} vs {base} (%)" for n in names[1:])]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for key, label, spec in METRICS:
        for i, level in enumerate(results[base]):
            values = [results[n][i][key]["mean"] for n in names]
            cells = [label, str(level["concurrency"]), *(format(v, spec) for v in values),
                     *(f"{change(values[0], v):+.1f}" for v in values[1:])]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
