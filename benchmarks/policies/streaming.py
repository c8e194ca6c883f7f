"""One streamed chat completion against any OpenAI-compatible server, with the timings serving benchmarks need.

The policy for servers and the serving benchmark share this reader, so latency figures come from the same code
that plays the episodes. Server-sent events are read as the OpenAI API sends them: `data: {json}` lines, deltas
of `content`, `reasoning_content` (vLLM's reasoning parsers; `reasoning` on some servers) and `tool_calls`
(pieces of one call share an `index`), a final chunk with `usage` when asked for, then `data: [DONE]`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import httpx


class ServerError(RuntimeError):
    """The server refused the request or broke the stream. `status` is the HTTP status, None if there was none;
    `retryable` says whether trying again can help (connection trouble, 429, 5xx)."""

    def __init__(self, message: str, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.status, self.retryable = status, retryable


@dataclass
class Completion:
    message: dict  # {"role": "assistant", "content", "reasoning_content", "tool_calls"}
    latency: float  # seconds from sending the request to the end of the stream
    ttft: float | None = None  # seconds to the first generated piece (text, reasoning or a tool call)
    chunk_times: list[float] = field(default_factory=list)  # arrival of every chunk that carried output
    completion_tokens: int | None = None  # as the server counts them (usage), when it reports them
    finish_reason: str | None = None

    @property
    def tpot(self) -> float | None:
        """Time per output token after the first, the serving benchmarks' TPOT."""
        tokens = self.completion_tokens or len(self.chunk_times)
        if self.ttft is None or tokens < 2:
            return None
        return (self.latency - self.ttft) / (tokens - 1)


async def stream_chat(client: httpx.AsyncClient, url: str, body: dict, headers: dict | None = None) -> Completion:
    """POST `body` (made a streaming request) to `url` (…/chat/completions) and assemble the reply."""
    body = {**body, "stream": True, "stream_options": {"include_usage": True}}
    content, reasoning, calls = [], [], {}
    done = Completion({"role": "assistant"}, latency=0.0)
    start = time.perf_counter()
    try:
        async with client.stream("POST", url, json=body, headers=headers) as response:
            if response.status_code != 200:
                detail = (await response.aread())[:300].decode("utf-8", "replace")
                raise ServerError(f"{url}: HTTP {response.status_code} {detail}", response.status_code,
                                  retryable=response.status_code == 429 or response.status_code >= 500)
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                chunk = json.loads(data)
                if chunk.get("error"):  # a failure after the 200 status line (vLLM reports some this way)
                    error = chunk["error"] if isinstance(chunk["error"], dict) else {"message": chunk["error"]}
                    code = error.get("code") if isinstance(error.get("code"), int) else None
                    raise ServerError(f"{url}: {error.get('message', error)}", code,
                                      retryable=code is None or code == 429 or code >= 500)
                if chunk.get("usage"):
                    done.completion_tokens = chunk["usage"].get("completion_tokens")
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    if _collect(delta, content, reasoning, calls):
                        now = time.perf_counter() - start
                        done.chunk_times.append(now)
                        done.ttft = now if done.ttft is None else done.ttft
                    done.finish_reason = choice.get("finish_reason") or done.finish_reason
    except httpx.HTTPError as error:
        raise ServerError(f"{url}: {type(error).__name__}: {error}", retryable=True) from error
    except json.JSONDecodeError as error:
        raise ServerError(f"{url}: a stream chunk is not JSON ({error})", retryable=True) from error
    done.latency = time.perf_counter() - start
    done.message.update(content="".join(content) or None, reasoning_content="".join(reasoning) or None,
                        tool_calls=[calls[i] for i in sorted(calls)] or None)
    return done


def _collect(delta: dict, content: list, reasoning: list, calls: dict) -> bool:
    """Add one delta's pieces; True when it carried any output."""
    got = False
    if delta.get("content"):
        content.append(delta["content"])
        got = True
    piece = delta.get("reasoning_content") or delta.get("reasoning")
    if piece:
        reasoning.append(piece)
        got = True
    for part in delta.get("tool_calls") or []:
        call = calls.setdefault(part.get("index", len(calls)),
                                {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
        call["id"] = part.get("id") or call["id"]
        function = part.get("function") or {}
        call["function"]["name"] += function.get("name") or ""
        call["function"]["arguments"] += function.get("arguments") or ""
        got = True
    return got
