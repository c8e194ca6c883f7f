"""A minimal client for any OpenAI-compatible chat server (vLLM, `transformers serve`, llama.cpp, a hosted
API), standard library only, for the models that live inside envs: the LLM judge and the model-played
customer. (Agents under evaluation use benchmarks/' policies instead.)

Settings come from arguments or from environment variables with a prefix, e.g. for prefix "MAGIC_USER":

    MAGIC_USER_BASE_URL   e.g. http://localhost:8000/v1 (what `openai.OpenAI(base_url=...)` takes)
    MAGIC_USER_MODEL      the served model name; unset: the first model the server lists at /models
    OPENAI_API_KEY        sent as a bearer token when set

    >>> ChatClient(base_url="http://localhost:8000/v1/").base_url
    'http://localhost:8000/v1'
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

API_KEY_ENV = "OPENAI_API_KEY"
SERVED: dict[str, str] = {}  # base_url -> the model it serves, asked once


class ChatError(RuntimeError):
    """The server could not be reached or sent no usable answer (after the retries). `status` is the HTTP
    status of a refused request (e.g. 400 for a field the server does not know), else None."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


@dataclass
class ChatClient:
    """One OpenAI-compatible server. `timeout` is per HTTP request; a failed request is retried `retries` more
    times after `backoff`, `2 * backoff`, ... seconds (connection errors, timeouts, HTTP 429 and 5xx)."""

    base_url: str
    model: str | None = None
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 1.0
    params: dict = field(default_factory=lambda: {"temperature": 0.0, "max_tokens": 1024})

    def __post_init__(self):
        self.base_url = self.base_url.rstrip("/")

    @classmethod
    def from_settings(cls, prefix: str, **settings) -> "ChatClient":
        """A client from explicit settings, else `<prefix>_BASE_URL` / `<prefix>_MODEL` / OPENAI_API_KEY.
        Raises ValueError naming the variables when no base URL is known."""
        base_url = settings.pop("base_url", None) or os.environ.get(f"{prefix}_BASE_URL")
        if not base_url:
            raise ValueError(f"no OpenAI-compatible server configured: pass base_url or set {prefix}_BASE_URL "
                             f"(e.g. http://localhost:8000/v1), and optionally {prefix}_MODEL")
        settings.setdefault("model", os.environ.get(f"{prefix}_MODEL") or None)
        settings.setdefault("api_key", os.environ.get(API_KEY_ENV) or None)
        return cls(base_url=base_url, **settings)

    def complete(self, messages: list[dict], **params) -> str:
        """The text of one chat completion; raises ChatError on failure."""
        body = {"model": self.model or self.served_model(), "messages": messages, **self.params, **params}
        reply = self.request("/chat/completions", body)
        try:
            content = reply["choices"][0]["message"].get("content")
        except (KeyError, IndexError, TypeError, AttributeError) as error:
            raise ChatError(f"malformed reply from {self.base_url}: {str(reply)[:200]}") from error
        if not isinstance(content, str):
            raise ChatError(f"the server sent no text content: {str(reply)[:200]}")
        return content

    def served_model(self) -> str:
        """The first model the server lists (asked once per server and process)."""
        if not self.model:
            if self.base_url not in SERVED:
                models = self.request("/models", None).get("data") or []
                if not models:
                    raise ChatError(f"{self.base_url} lists no model; name one")
                SERVED[self.base_url] = models[0]["id"]
            self.model = SERVED[self.base_url]
        return self.model

    def request(self, path: str, body: dict | None) -> dict:
        """GET (no body) or POST JSON to `base_url + path`, with the retries; the decoded JSON reply."""
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.base_url + path, data=data, headers=headers,
                                             method="GET" if body is None else "POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as error:
                if error.code != 429 and error.code < 500 or attempt == self.retries:
                    detail = error.read()[:300].decode("utf-8", "replace")
                    raise ChatError(f"{self.base_url}{path}: HTTP {error.code} {detail}", error.code) from error
            except (urllib.error.URLError, TimeoutError, ConnectionError, json.JSONDecodeError) as error:
                if attempt == self.retries:
                    raise ChatError(f"{self.base_url}{path}: {error}") from error
            time.sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable")
