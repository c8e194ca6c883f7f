"""An agent behind any OpenAI-compatible chat server (vLLM, SGLang, `transformers serve`, llama.cpp, a hosted
API): native `tools`, streaming, retries with backoff, and a limit on requests in flight."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field

import httpx

from benchmarks.policies.native import reply_to_action, to_openai_messages
from benchmarks.policies.streaming import Completion, ServerError, stream_chat


@dataclass
class OpenAIPolicy:
    """Chat completions with the env's tools passed natively; the reply's tool calls become our grammar.

    Settings fall back to `MAGIC_AGENT_BASE_URL`, `MAGIC_AGENT_MODEL` and `OPENAI_API_KEY`. `params` go into
    every request (temperature, top_p, max_tokens, seed, ...). A request that fails for a reason that may pass
    (connection, timeout, 429, 5xx) is retried `retries` times after `backoff`, `2 * backoff`, ... seconds;
    other failures, and the last retry's, raise ServerError so the harness can stop without recording the
    episode (a rerun resumes it).
    """

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    concurrency: int = 16
    retries: int = 3
    backoff: float = 1.0
    timeout: float = 300.0
    stream: bool = True
    native_tools: bool = True  # send tools natively (a server that cannot: False, tools go in the system message)
    params: dict = field(default_factory=lambda: {"temperature": 0.0, "max_tokens": 1024})

    def __post_init__(self):
        self.base_url = (self.base_url or os.environ.get("MAGIC_AGENT_BASE_URL") or "").rstrip("/")
        if not self.base_url:
            raise ValueError("OpenAIPolicy needs a server: pass base_url or set MAGIC_AGENT_BASE_URL "
                             "(e.g. http://localhost:8000/v1)")
        self.model = self.model or os.environ.get("MAGIC_AGENT_MODEL") or None
        self.api_key = self.api_key or os.environ.get("OPENAI_API_KEY") or None
        self.name = f"openai:{self.model or 'served'}"
        self._clients: dict[int, tuple[httpx.AsyncClient, asyncio.Semaphore]] = {}  # per event loop

    def _client(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if id(loop) not in self._clients:
            limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
            self._clients[id(loop)] = (httpx.AsyncClient(timeout=self.timeout, limits=limits),
                                       asyncio.Semaphore(self.concurrency))
        return self._clients[id(loop)]

    @property
    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    async def served_model(self) -> str:
        """The model to ask for: the configured one, else the first the server lists."""
        if not self.model:
            client, _ = self._client()
            reply = await self._with_retries(lambda: client.get(f"{self.base_url}/models", headers=self.headers))
            models = reply.json().get("data") or []
            if not models:
                raise ServerError(f"{self.base_url}/models lists no model; pass model=")
            self.model = models[0]["id"]
            self.name = f"openai:{self.model}"
        return self.model

    async def complete(self, messages: list[dict], tools: list[dict], **params) -> Completion:
        """One chat completion for the chat so far (our messages), with timings."""
        body = {"model": await self.served_model(), "messages": to_openai_messages(messages),
                **self.params, **params}
        if tools and self.native_tools:
            body["tools"] = tools
        client, limit = self._client()
        url = f"{self.base_url}/chat/completions"
        async with limit:
            if self.stream:
                return await self._with_retries(lambda: stream_chat(client, url, body, self.headers))
            return await self._with_retries(lambda: self._post(client, url, body))

    async def act_async(self, messages: list[dict], tools: list[dict], max_new_tokens: int | None = None) -> str:
        """The next action; `max_new_tokens` (a suite run's cap) becomes the request's `max_tokens`."""
        params = {"max_tokens": max_new_tokens} if max_new_tokens else {}
        return reply_to_action((await self.complete(messages, tools, **params)).message)

    def act(self, messages: list[dict], tools: list[dict], max_new_tokens: int | None = None) -> str:
        return asyncio.run(self._act_once(messages, tools, max_new_tokens))

    async def _act_once(self, messages, tools, max_new_tokens) -> str:
        try:
            return await self.act_async(messages, tools, max_new_tokens)
        finally:  # a client belongs to its event loop, which asyncio.run closes
            await self.aclose()

    async def aclose(self) -> None:
        loop_id = id(asyncio.get_running_loop())
        if loop_id in self._clients:
            await self._clients.pop(loop_id)[0].aclose()

    async def _post(self, client: httpx.AsyncClient, url: str, body: dict) -> Completion:
        start = asyncio.get_running_loop().time()
        try:
            response = await client.post(url, json=body, headers=self.headers)
        except httpx.HTTPError as error:
            raise ServerError(f"{url}: {type(error).__name__}: {error}", retryable=True) from error
        _raise_for(response, url)
        reply = response.json()
        choice = (reply.get("choices") or [{}])[0]
        latency = asyncio.get_running_loop().time() - start
        return Completion(choice.get("message") or {}, latency=latency, finish_reason=choice.get("finish_reason"),
                          completion_tokens=(reply.get("usage") or {}).get("completion_tokens"))

    async def _with_retries(self, attempt):
        for k in range(self.retries + 1):
            try:
                result = await attempt()
                if isinstance(result, httpx.Response):
                    _raise_for(result, str(result.request.url))
                return result
            except httpx.HTTPError as error:
                failure = ServerError(f"{self.base_url}: {type(error).__name__}: {error}", retryable=True)
            except ServerError as error:
                failure = error
            if not failure.retryable or k == self.retries:
                raise failure
            await asyncio.sleep(self.backoff * 2**k)
        raise AssertionError("unreachable")


def _raise_for(response: httpx.Response, url: str) -> None:
    if response.status_code != 200:
        code = response.status_code
        raise ServerError(f"{url}: HTTP {code} {response.text[:300]}", code, retryable=code == 429 or code >= 500)
