"""A local transformers model as the runner's engine: many episodes, one batched `generate` per round.

    engine = LocalEngine(model, tokenizer, temperature=1.0)
    trajectories = engine.play([(env, seed), ...], turn_tokens=256, response_tokens=1024, seed=step)

Each episode runs `runner.run_episode` in its own thread; its `generate` waits until every episode still running has
asked, then the round is sampled as one left-padded batch (sorted by episode, seeded by round), so the same inputs
give the same batches and the same tokens however the threads are scheduled: a resumed RL run replays exactly.
Log-probabilities are the sampling distribution's (temperature applied), for the runner's records; the trainer
recomputes them with the policy it trains. Prompts are prefilled from the keys and values of the call's earlier
prompts (benchmarks/policies/prefix_cache.py): the copies of a task in its group share one prompt, and a multi-turn
episode's next prompt extends its last, so each round reads only new tokens. The cache lives for one `play` call,
so a call's batches depend on its inputs alone.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import torch
from transformers import LogitsProcessor, TemperatureLogitsWarper, TopPLogitsWarper

from benchmarks.policies.folded_attention import use_folded_attention
from benchmarks.policies.prefix_cache import PrefixCache, reusable
from magic_rl.runner import Trajectory, run_episode


class Lockstep:
    """The `generate` callables of one round of episodes: each call blocks until every running episode has called,
    then the last caller samples them all as one batch."""

    def __init__(self, sample, episodes: int):
        self.sample, self.running, self.waiting = sample, episodes, {}
        self.round, self.condition = 0, threading.Condition()

    def for_episode(self, index: int):
        def generate(prompt_ids, params):
            with self.condition:
                slot = {"prompt": list(prompt_ids), "cap": int(params["max_tokens"])}
                self.waiting[index] = slot
                self._maybe_run()
                self.condition.wait_for(lambda: "out" in slot or "error" in slot)
            if "error" in slot:
                raise slot["error"]
            return slot["out"]
        return generate

    def finished(self) -> None:
        with self.condition:
            self.running -= 1
            self._maybe_run()

    def _maybe_run(self) -> None:
        if not self.waiting or len(self.waiting) < self.running:
            return
        batch = [self.waiting[i] for i in sorted(self.waiting)]
        self.waiting = {}
        try:
            outs = self.sample([s["prompt"] for s in batch], [s["cap"] for s in batch], self.round)
            for slot, out in zip(batch, outs):
                slot["out"] = out
        except Exception as error:  # every episode of the round learns of it
            for slot in batch:
                slot["error"] = error
        self.round += 1
        self.condition.notify_all()


class SampledLogprobs(LogitsProcessor):
    """The last of `generate`'s logits processors: applies the temperature and top-p cut, and keeps the
    log-probability of each sampled token under that distribution. It holds one step's distribution at a time: the
    whole [batch, new tokens, vocabulary] of `output_scores` took a 128-episode round of a 49k-token vocabulary past
    20 GB."""

    def __init__(self, temperature: float, top_p: float):
        self.warpers = ([TemperatureLogitsWarper(temperature)] if temperature != 1.0 else []) + \
            ([TopPLogitsWarper(top_p)] if top_p < 1.0 else [])
        self.last: torch.Tensor | None = None  # log-softmax of the step being sampled
        self.chosen: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.last is not None:  # the previous step's token is now the last of input_ids
            self.chosen.append(self.last.gather(-1, input_ids[:, -1:])[:, 0])
        for warp in self.warpers:
            scores = warp(input_ids, scores)
        self.last = torch.log_softmax(scores.float(), -1)
        return scores

    def finish(self, sequences: torch.LongTensor) -> torch.Tensor:
        """The sampled tokens' log-probabilities, [batch, new tokens], once generate has returned `sequences`."""
        if self.last is not None:
            self.chosen.append(self.last.gather(-1, sequences[:, -1:])[:, 0])
            self.last = None
        return torch.stack(self.chosen, 1) if self.chosen else torch.zeros(len(sequences), 0)


class LocalEngine:
    def __init__(self, model, tokenizer, temperature: float = 1.0, top_p: float = 1.0,
                 prefix_cache_tokens: int = 32768, folded_attention: bool = True):
        self.model, self.tokenizer, self.temperature, self.top_p = model, tokenizer, temperature, top_p
        self.prefix_cache_tokens = prefix_cache_tokens if reusable(model) else 0  # 0: every prompt read whole
        if folded_attention:  # decoding steps attend over the cache without copying it; training is unchanged
            use_folded_attention(model)
        self.prefixes: PrefixCache | None = None
        self.pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        ends = model.generation_config.eos_token_id
        self.ends = set(ends if isinstance(ends, list) else [ends if ends is not None else tokenizer.eos_token_id])
        self.seed = 0

    @torch.no_grad()
    def sample(self, prompts: list[list[int]], caps: list[int], round_: int) -> list[tuple[list[int], list[float]]]:
        """One batch: each prompt's new tokens (at most its cap, through an end-of-turn token) and their logprobs."""
        width = max(len(p) for p in prompts)
        ids = torch.tensor([[self.pad] * (width - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        torch.manual_seed(self.seed * 100_003 + round_)
        sampled = self.temperature > 0
        was_training = self.model.training
        self.model.eval()
        past = self.prefixes.prefill(prompts, width) if self.prefixes and width > 1 else None
        recorder = SampledLogprobs(self.temperature if sampled else 1.0, self.top_p if sampled else 1.0)
        # the recorder warps the logits itself, so generate samples them as they are (temperature 1, no cut)
        out = self.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max(caps), do_sample=sampled,
                                  temperature=1.0 if sampled else None, top_k=None, top_p=1.0 if sampled else None,
                                  pad_token_id=self.pad, past_key_values=past, logits_processor=[recorder],
                                  return_dict_in_generate=True)
        if past is not None:
            self.prefixes.remember(out.sequences, past, prompts, width)
        self.model.train(was_training)
        new = out.sequences[:, width:]
        chosen = recorder.finish(out.sequences)  # [batch, new]
        replies = []
        for row, cap in enumerate(caps):
            tokens = new[row, :cap].tolist()
            end = next((i + 1 for i, t in enumerate(tokens) if t in self.ends), len(tokens))
            replies.append((tokens[:end], chosen[row, :end].tolist()))
        return replies

    def play(self, episodes: list[tuple], seed: int, **run_kwargs) -> list[Trajectory]:
        """Run `(env, reset_seed, reset_options)` episodes together; `seed` fixes the sampling of this call."""
        self.seed = seed
        self.prefixes = PrefixCache(self.model, self.prefix_cache_tokens) if self.prefix_cache_tokens else None
        lockstep = Lockstep(self.sample, len(episodes))

        def one(index: int) -> Trajectory:
            env, reset_seed, options = episodes[index]
            try:
                return run_episode(env, lockstep.for_episode(index), self.tokenizer, seed=reset_seed,
                                   options=options, **run_kwargs)
            finally:
                lockstep.finished()
        try:
            with ThreadPoolExecutor(len(episodes), thread_name_prefix="episode") as pool:
                return list(pool.map(one, range(len(episodes))))
        finally:
            self.prefixes = None  # its keys and values are the old policy's after the update
