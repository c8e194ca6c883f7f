"""A local transformers model as an agent: its chat template with tools, batched generation across episodes."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class HFPolicy:
    """Generates each action with `model.generate` from the chat so far.

    Episodes that ask at the same time (`act_async` under `magic eval --concurrency N`) are generated as one
    left-padded batch of up to `batch_size`, on one worker thread, so a CPU or GPU serves many episodes at
    once. Greedy decoding by default; `temperature > 0` samples with `top_p`, seeded from `seed` and a call
    counter. A chat longer than the model's context keeps its system message and first user message and drops
    the oldest turns after them, and says so in `truncated_prompts`.
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
    truncated_prompts: int = field(default=0, init=False)

    def __post_init__(self):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        kwargs = {"gguf_file": self.gguf_file} if self.gguf_file else {}
        self.tokenizer = AutoTokenizer.from_pretrained(self.model, **kwargs)
        self.lm = AutoModelForCausalLM.from_pretrained(self.model, dtype=getattr(torch, self.dtype), **kwargs)
        self.lm.to(self.device).eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        if self.native_tools is None:
            self.native_tools = "tools" in (self.tokenizer.chat_template or "")
        self.name = f"hf:{Path(self.model).name}"
        self.context = int(getattr(self.lm.config, "max_position_embeddings", 0) or 8192)
        self._calls = 0
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="hf-generate")  # one model, one generator
        self._waiting: list[tuple[list[int], asyncio.Future]] = []
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
    def generate(self, prompts: list[list[int]]) -> list[str]:
        """One batch: left-padded prompts in, the decoded new text of each out."""
        import torch

        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=self.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=self.device)
        sample = self.temperature > 0
        if sample:
            torch.manual_seed(self.seed + self._calls)
        self._calls += 1
        with torch.no_grad():
            out = self.lm.generate(input_ids=input_ids, attention_mask=mask, max_new_tokens=self.max_new_tokens,
                                   do_sample=sample, temperature=self.temperature if sample else None,
                                   top_p=self.top_p if sample else None, top_k=None, pad_token_id=pad)
        return [self.tokenizer.decode(row[width:], skip_special_tokens=True).strip() for row in out]

    def act(self, messages: list[dict], tools: list[dict]) -> str:
        return self.generate([self.prompt_ids(messages, tools)])[0]

    async def act_async(self, messages: list[dict], tools: list[dict]) -> str:
        future = asyncio.get_running_loop().create_future()
        self._waiting.append((self.prompt_ids(messages, tools), future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        """Generate for whoever is waiting, a batch at a time, until nobody is."""
        loop = asyncio.get_running_loop()
        while self._waiting:
            await asyncio.sleep(0)  # let episodes that are ready at this moment join the batch
            batch, self._waiting = self._waiting[:self.batch_size], self._waiting[self.batch_size:]
            try:
                texts = await loop.run_in_executor(self._thread, self.generate, [p for p, _ in batch])
            except Exception as error:  # every waiting episode learns of it; none is recorded
                for _, future in batch:
                    future.set_exception(error)
                continue
            for (_, future), text in zip(batch, texts):
                future.set_result(text)
