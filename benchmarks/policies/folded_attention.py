"""Grouped-query attention for one-token decoding steps without copying the cache.

transformers' SDPA path copies every layer's keys and values `num_key_value_groups` times per decoding step when
the batch has an attention mask (left padding always does): on a CPU that copy and the attention over the copies
are most of a step (SmolLM2-135M: 3 key/value heads for 9 query heads). With one query token the group's query
heads can instead stand in the query-length axis of their key/value head: the same attention, over the cache as
it is. Prompts (more than one query token) go through transformers' SDPA unchanged.

    use_folded_attention(model)   # a model on "sdpa" with grouped-query attention switches; others stay as they are
"""

from __future__ import annotations

import torch.nn.functional as F

NAME = "sdpa_folded"


def folded_sdpa(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None, is_causal=None,
                **kwargs):
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    groups = getattr(module, "num_key_value_groups", 1)
    if groups == 1 or query.shape[2] != 1:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      is_causal=is_causal, **kwargs)
    batch, heads, _, dim = query.shape
    # query head h reads key/value head h // groups (transformers' repeat_kv order): [batch, kv heads, groups, dim]
    folded = query.reshape(batch, key.shape[1], groups, dim)
    # the mask [batch, 1, 1, keys] broadcasts over the kv heads and over the groups, now the query axis
    out = F.scaled_dot_product_attention(folded, key, value, attn_mask=attention_mask, dropout_p=dropout,
                                         scale=scaling)
    return out.reshape(batch, heads, 1, dim).transpose(1, 2).contiguous(), None


def use_folded_attention(model) -> bool:
    """Switch `model` to folded decoding attention where it applies (SDPA, grouped-query heads); whether it did."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    config = model.config
    grouped = getattr(config, "num_key_value_heads", None) not in (None, getattr(config, "num_attention_heads", None))
    if config._attn_implementation != "sdpa" or not grouped:
        return False
    AttentionInterface.register(NAME, folded_sdpa)
    AttentionMaskInterface.register(NAME, sdpa_mask)  # the masks SDPA gets
    model.set_attn_implementation(NAME)
    return True
