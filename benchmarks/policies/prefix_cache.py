"""Prefix caching for a local transformers model: the attention keys and values of recent chats are kept, so
the next turn of a multi-turn episode (or another episode with the same system prompt and tools) reads only its
new tokens, as vLLM's automatic prefix caching does on a server.

Each prompt of a batch is prefilled on its own from its longest cached prefix (so short prompts no longer pay
for the padding of long ones), the rows are left-padded into one cache, and `model.generate` decodes the batch
from there. Only plain full-attention caches are reused (every layer a `DynamicLayer`); models with sliding
windows or linear attention are generated without it.
"""

from __future__ import annotations

import os
from collections import OrderedDict

import torch
import torch.nn.functional as F
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

MIN_REUSE = 16  # a shorter common prefix (a chat template's first tokens) is not worth a lookup's copy


def reusable(model) -> bool:
    """Whether the model's cache is plain full attention, which rows can be cut from and padded into."""
    return all(type(layer) is DynamicLayer for layer in DynamicCache(config=model.config).layers)


class PrefixCache:
    """Keys and values of recent token sequences, least recently used dropped past `budget` tokens in all."""

    def __init__(self, model, budget: int):
        self.model, self.budget = model, budget
        self.entries: OrderedDict[tuple[int, ...], list[tuple[torch.Tensor, torch.Tensor]]] = OrderedDict()
        self.reused_tokens = self.read_tokens = 0  # what prefills skipped and what they read, for reports

    def longest_prefix(self, prompt: list[int]) -> tuple[int, list | None]:
        best, best_ids = 0, None
        for ids in self.entries:
            n = len(os.path.commonprefix([ids, tuple(prompt)]))
            if n > best:
                best, best_ids = n, ids
        if best < MIN_REUSE:
            return 0, None
        self.entries.move_to_end(best_ids)
        return best, self.entries[best_ids]

    def prefill(self, prompts: list[list[int]], width: int) -> DynamicCache:
        """One cache for a left-padded batch of `width`: every prompt but its last token, which `generate`
        reads itself to start decoding."""
        rows = []
        for prompt in prompts:
            reuse, kv = self.longest_prefix(prompt)
            reuse = min(reuse, len(prompt) - 1)
            cache = DynamicCache(ddp_cache_data=[(k[:, :, :reuse], v[:, :, :reuse]) for k, v in kv]) if reuse \
                else DynamicCache()
            if len(prompt) - 1 > reuse:
                ids = torch.tensor([prompt[reuse:-1]], device=self.model.device)
                self.model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
                # kept at once, so a later row of this batch with the same start (another copy of the task, the
                # same system prompt and tools) reads only what differs
                self._keep(tuple(prompt[:-1]), [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers])
            self.reused_tokens += reuse
            self.read_tokens += len(prompt) - 1 - reuse
            rows.append([(layer.keys, layer.values) for layer in cache.layers])
        data = []
        for per_row in zip(*rows):  # one layer: (k, v) of each row, left-padded to the batch width
            pads = [width - 1 - k.shape[2] for k, _ in per_row]
            data.append((torch.cat([F.pad(k, (0, 0, pad, 0)) for (k, _), pad in zip(per_row, pads)]),
                         torch.cat([F.pad(v, (0, 0, pad, 0)) for (_, v), pad in zip(per_row, pads)])))
        return DynamicCache(ddp_cache_data=data)

    def remember(self, sequences: torch.Tensor, cache: DynamicCache, prompts: list[list[int]], width: int) -> None:
        """Keep each row's tokens (prompt and reply, padding cut off) with their keys and values."""
        length = cache.get_seq_length()
        for row, prompt in enumerate(prompts):
            start = width - len(prompt)
            self.entries.pop(tuple(prompt[:-1]), None)  # the longer entry below covers it
            self._keep(tuple(sequences[row, start:length].tolist()),
                       [(layer.keys[row:row + 1, :, start:length].clone(),
                         layer.values[row:row + 1, :, start:length].clone()) for layer in cache.layers])

    def _keep(self, ids: tuple[int, ...], kv: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        self.entries[ids] = kv
        self.entries.move_to_end(ids)
        while sum(len(key) for key in self.entries) > self.budget and len(self.entries) > 1:
            self.entries.popitem(last=False)
