"""Mixture-of-experts load balancing as composable objectives on the router logits, and the metrics to judge them.

`RouterProbe(model, Balance(...))` hooks every top-k router of a transformers MoE model (Qwen3-MoE's
`Qwen3MoeTopKRouter` and any router returning `(logits, weights, indices)`), and per forward pass gives:

    micro      N * sum_i f_i P_i over the micro-batch (Switch / GShard): f_i the share of top-k slots expert i
               got, P_i its mean router probability
    global     the same with f_i counted over every micro-batch of the optimiser step so far, summed over
               data-parallel ranks (global-batch balancing: f is constant for the gradient, so counts that
               arrive later in the step weigh the later micro-batches; the last sees the whole batch's f)
    sequence   the micro loss per sequence, averaged over sequences (sequence-wise balancing)
    variance   N^2 * Var_i(P_i): the squared coefficient of variation of the experts' expected loads
    z          mean over tokens of logsumexp(logits)^2 (router z-loss, ST-MoE)
    capacity   a capacity factor C: each expert takes at most ceil(C * T * k / N) of a micro-batch's T tokens, in
               token order; the rest of its assignments are dropped (their gate weight set to 0)

each with its own coefficient (0 = off), averaged over layers. Padding tokens never count. MaxVio (max_i load_i /
mean load - 1, averaged over layers) is kept per micro-batch and over the optimiser step's global batch, and
expert-selection counts per task family feed the heatmap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class Balance:
    micro: float = 0.0
    global_batch: float = 0.0
    sequence: float = 0.0
    variance: float = 0.0
    z: float = 0.0
    capacity: float = 0.0  # capacity factor; 0: no token dropping


def routers(model) -> list[torch.nn.Module]:
    return [m for m in model.modules() if hasattr(m, "top_k") and hasattr(m, "num_experts") and
            isinstance(getattr(m, "weight", None), torch.nn.Parameter) and m.weight.shape[0] == m.num_experts]


def max_violation(counts: torch.Tensor) -> float:
    """MaxVio of per-layer expert counts (layers x experts), averaged over layers."""
    mean = counts.float().mean(-1).clamp_min(1e-9)
    return float(((counts.float().max(-1).values - mean) / mean).mean())


class RouterProbe:
    def __init__(self, model, balance: Balance):
        self.balance, self.layers = balance, routers(model)
        if not self.layers:
            raise ValueError("the model has no top-k routers: MoE balancing needs a mixture-of-experts model")
        self.experts, self.k = self.layers[0].num_experts, self.layers[0].top_k
        self.step_counts = torch.zeros(len(self.layers), self.experts)
        self.family_counts: dict[str, torch.Tensor] = {}
        self.records: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.valid = self.rows = None
        self.families: list[str] = []
        self.row_family: torch.Tensor | None = None
        for router in self.layers:
            router.register_forward_hook(self._hook)

    def begin(self, attention_mask: torch.Tensor, families: list[str] | None = None) -> None:
        """Before a forward pass: which flattened tokens are real, and the task family of each row."""
        self.records, self.valid = [], attention_mask.reshape(-1).bool()
        self.rows = torch.arange(attention_mask.shape[0]).repeat_interleave(attention_mask.shape[1])
        names = sorted(set(families or []))
        self.families = names
        self.row_family = torch.tensor([names.index(f) for f in families]) if families else None

    def _hook(self, module, inputs, output):
        logits, weights, indices = output
        if self.valid is None or self.valid.numel() != logits.shape[0]:  # a forward outside begin(): inference
            return None
        if self.balance.capacity > 0:
            weights = self._drop_overflow(weights, indices)
        self.records.append((logits, indices))
        return logits, weights, indices

    def _drop_overflow(self, weights: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        tokens = int(self.valid.sum())
        capacity = math.ceil(self.balance.capacity * tokens * self.k / self.experts)
        slots = torch.nn.functional.one_hot(indices, self.experts) * self.valid[:, None, None]  # T x k x N
        rank = slots.reshape(-1, self.experts).cumsum(0).reshape(slots.shape)  # arrival order per expert
        keep = ((rank <= capacity) & slots.bool()).any(-1) | ~self.valid[:, None]
        return weights * keep.to(weights.dtype)

    def loss(self) -> tuple[torch.Tensor, dict]:
        """The weighted balancing loss of the last forward pass, and its parts and MaxVio for the log."""
        b, parts, counts = self.balance, {}, []
        terms = {"micro": [], "global_batch": [], "sequence": [], "variance": [], "z": []}
        for layer, (logits, indices) in enumerate(self.records):
            logits, indices, rows = logits[self.valid], indices[self.valid], self.rows[self.valid]
            probs = torch.softmax(logits.float(), -1)
            hits = torch.nn.functional.one_hot(indices, self.experts).sum(1).float()  # T x N
            count = hits.sum(0)
            counts.append(count.detach())
            share, mean_prob = count / count.sum(), probs.mean(0)
            terms["micro"].append(self.experts * (share * mean_prob).sum())
            running = self.step_counts[layer] + count.detach()
            if dist.is_available() and dist.is_initialized():
                dist.all_reduce(running)
            terms["global_batch"].append(self.experts * (running / running.sum() * mean_prob).sum())
            per_row = []
            for row in rows.unique():
                at = rows == row
                per_row.append(self.experts * (hits[at].sum(0) / hits[at].sum() * probs[at].mean(0)).sum())
            terms["sequence"].append(torch.stack(per_row).mean())
            terms["variance"].append(self.experts ** 2 * mean_prob.var(unbiased=False))
            terms["z"].append(torch.logsumexp(logits.float(), -1).pow(2).mean())
            for f, family in enumerate(self.families):
                at = self.row_family[rows] == f
                table = self.family_counts.setdefault(family, torch.zeros(len(self.layers), self.experts))
                table[layer] += hits[at].sum(0).detach()
        total = sum(getattr(b, name) * torch.stack(values).mean() for name, values in terms.items()
                    if getattr(b, name) > 0 and values)
        counts = torch.stack(counts)
        self.step_counts += counts
        parts = {name: float(torch.stack(values).mean().detach()) for name, values in terms.items() if values}
        parts["maxvio_micro"] = max_violation(counts)
        return (total if torch.is_tensor(total) else torch.zeros(())), parts

    def end_step(self) -> float:
        """MaxVio over the optimiser step's global batch; starts the next step's counts."""
        counts = self.step_counts.clone()
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(counts)
        self.step_counts.zero_()
        return max_violation(counts)
