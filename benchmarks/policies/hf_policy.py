"""A local transformers model as an agent: its chat template with tools, batched generation across episodes."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.policies.folded_attention import use_folded_attention


@dataclass
class HFPolicy:
    """Generates each action with `model.generate` from the chat so far.

    Episodes that ask at the same time (`act_async` under `magic eval --concurrency N`) are generated as one
    left-padded batch of up to `batch_size`, on one worker thread, so a CPU or GPU serves many episodes at
    once. A request may carry its own `max_new_tokens` (a suite run's cap, below the policy's); requests are
    batched with others of the same cap, smallest cap first, so short replies (an ALFWorld command) never wait
    for or pay for long ones (a workflow graph). Greedy decoding by default;
    `temperature > 0` samples with `top_p`, seeded from `seed` and a call counter. A chat longer than the
    model's context keeps its system message and first user message and drops the oldest turns after them, and
    says so in `truncated_prompts`. Recent chats' keys and values are kept (`prefix_cache_tokens`,
    prefix_cache.py), so each turn reads only the tokens its chat has added since the last one.
    """

    model: str  # a checkpoint folder or hub-style name transformers can load offline
    gguf_file: str | None = None  # a GGUF file inside `model`, dequantised on load
    batch_size: int = 8
    max_new_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    device: str = "cpu"
    dtype: str = "float32"
    native_tools: bool | None = None  # None: whether the chat template renders `tools` itself
    prefix_cache_tokens: int = 32768  # tokens of recent chats whose keys/values are kept for the next turn; 0: off
    truncated_prompts: int = field(default=0, init=False)

    def __post_init__(self):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        kwargs = {"gguf_file": self.gguf_file} if self.gguf_file else {}
        self.tokenizer = AutoTokenizer.from_pretrained(self.model, **kwargs)
        self.lm = AutoModelForCausalLM.from_pretrained(self.model, dtype=getattr(torch, self.dtype), **kwargs)
        self.lm.to(self.device).eval()
        use_folded_attention(self.lm)  # decoding steps attend over the cache without copying it (same attention)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        if self.native_tools is None:
            self.native_tools = "tools" in (self.tokenizer.chat_template or "")
        self.name = f"hf:{Path(self.model).name}"
        self.context = int(getattr(self.lm.config, "max_position_embeddings", 0) or 8192)
        self._calls = 0
        self.prefixes = None
        if self.prefix_cache_tokens > 0:
            from benchmarks.policies.prefix_cache import PrefixCache, reusable

            if reusable(self.lm):
                self.prefixes = PrefixCache(self.lm, self.prefix_cache_tokens)
        self._lock = threading.Lock()  # one generation at a time: the model and the prefix cache are shared
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="hf-generate")  # one model, one generator
        self._waiting: list[tuple[list[int], int, asyncio.Future]] = []  # (prompt, cap, reply)
        self._worker: asyncio.Task | None = None

    # ---- prompts ------------------------------------------------------------------------------------
    def prompt_ids(self, messages: list[dict], tools: list[dict]) -> list[int]:
        """The templated prompt, fitted to the context (system + first user message + the latest turns)."""
        budget = self.context - self.max_new_tokens
        kept = list(messages)
        while True:
            ids = self.tokenizer.apply_chat_template(
                kept, tools=tools if (self.native_tools and tools) else None, add_generation_prompt=True,
                tokenize=True, return_dict=False)
            ids = list(ids["input_ids"] if isinstance(ids, dict) else ids)
            head = 2 if kept and kept[0]["role"] == "system" else 1
            if len(ids) <= budget or len(kept) <= head + 1:
                if len(ids) > budget:
                    self.truncated_prompts += 1
                return ids[-budget:]
            if len(kept) == len(messages):
                self.truncated_prompts += 1
            del kept[head]

    # ---- generation ---------------------------------------------------------------------------------
    def generate(self, prompts: list[list[int]], caps: list[int] | None = None) -> list[str]:
        """One batch: left-padded prompts in, the decoded new text of each (at most its cap in tokens) out."""
        replies = self.generate_ids(prompts, caps)
        return [self.tokenizer.decode(ids, skip_special_tokens=True).strip() for ids in replies]

    def generate_ids(self, prompts: list[list[int]], caps: list[int] | None = None) -> list[list[int]]:
        """The new tokens of each prompt: at most its cap, through its end-of-sequence token when it wrote one."""
        import torch
        from transformers import StoppingCriteriaList

        caps = [min(c, self.max_new_tokens) for c in caps] if caps else [self.max_new_tokens] * len(prompts)
        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=self.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=self.device)
        sample = self.temperature > 0
        stop = StoppingCriteriaList([_RowCaps(width, caps, self.device)])
        with self._lock, torch.no_grad():
            if sample:
                torch.manual_seed(self.seed + self._calls)
            self._calls += 1
            past = self.prefixes.prefill(prompts, width) if self.prefixes and width > 1 else None
            out = self.lm.generate(input_ids=input_ids, attention_mask=mask, max_new_tokens=max(caps),
                                   past_key_values=past, stopping_criteria=stop, do_sample=sample, top_k=None,
                                   pad_token_id=pad, temperature=self.temperature if sample else None,
                                   top_p=self.top_p if sample else None)
            if past is not None:
                self.prefixes.remember(out, past, prompts, width)
        ends = self.lm.generation_config.eos_token_id
        ends = set(ends if isinstance(ends, list) else [ends if ends is not None else self.tokenizer.eos_token_id])
        replies = []
        for row, cap in zip(out[:, width:].tolist(), caps):
            row = row[:cap]
            replies.append(row[:next((i + 1 for i, token in enumerate(row) if token in ends), len(row))])
        return replies

    def act(self, messages: list[dict], tools: list[dict], max_new_tokens: int | None = None) -> str:
        return self.generate([self.prompt_ids(messages, tools)], [max_new_tokens or self.max_new_tokens])[0]

    async def act_async(self, messages: list[dict], tools: list[dict], max_new_tokens: int | None = None) -> str:
        future = asyncio.get_running_loop().create_future()
        self._waiting.append((self.prompt_ids(messages, tools), max_new_tokens or self.max_new_tokens, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        """Generate for whoever is waiting, a batch at a time, until nobody is."""
        loop = asyncio.get_running_loop()
        while self._waiting:
            await asyncio.sleep(0)  # let episodes that are ready at this moment join the batch
            # One cap per batch, the smallest waiting first (in arrival order): a batch decodes until its
            # longest cap and is padded to its longest prompt, so mixing caps makes short replies pay for long.
            cap = min(request[1] for request in self._waiting)
            batch = [request for request in self._waiting if request[1] == cap][:self.batch_size]
            self._waiting = [request for request in self._waiting if all(request is not b for b in batch)]
            try:
                texts = await loop.run_in_executor(self._thread, self.generate, [p for p, _, _ in batch],
                                                   [cap for _, cap, _ in batch])
            except Exception as error:  # every waiting episode learns of it; none is recorded
                for _, _, future in batch:
                    future.set_exception(error)
                continue
            for (_, _, future), text in zip(batch, texts):
                future.set_result(text)


class _RowCaps:
    """Stops each row of a batch once it has `caps[row]` new tokens (transformers' per-row stopping criterion)."""

    def __init__(self, width: int, caps: list[int], device: str):
        import torch

        self.width, self.caps = width, torch.tensor(caps, device=device)

    def __call__(self, input_ids, scores, **kwargs):
        return input_ids.shape[1] - self.width >= self.caps
