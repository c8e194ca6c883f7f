"""verl's SFT trainer (`verl.trainer.sft_trainer`) on a `magic synth` corpus, with exactly `magic sft`'s targets.

    torchrun --nproc-per-node 8 -m verl.trainer.sft_trainer --config-path "$(python -m magic_rl.verl_plugin.configs)" \
        --config-name sft_qwen3_32b data.train_files=runs/corpus/corpus.parquet model.path=/models/Qwen3-32B

verl's own MultiTurnSFTDataset templates every message alone and asserts that the pieces add up to the whole chat.
They do not for templates that rewrite history (Qwen3 keeps only the last turns' <think>) or have no tool slot
(SmolLM2, whose tools we put in the system message). This class renders each chat once, exactly as `magic sft` trains
and `magic eval` / RL prompt (magic_sft.data.encode): targets are every token of every assistant turn. Samples longer
than `data.max_length` are left out when the corpus loads, and counted (a truncated chat would teach half a
conversation); parquet's `tools` column is JSON text and is decoded here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

from magic_sft.data import IGNORE, load_corpus, trainable


class MagicSFTDataset(MultiTurnSFTDataset):
    """`data.custom_cls: {path: pkg://magic_rl.verl_plugin.sft_dataset, name: MagicSFTDataset}`."""

    def _read_files_and_process(self):
        samples = [s for f in self.parquet_files for s in load_corpus(Path(f))]
        if 0 < self.max_samples < len(samples):  # verl's own choice of a subset, so max_samples means the same
            rng = np.random.default_rng(*(() if self.seed is None else (self.seed,)))
            keep = rng.choice(len(samples), size=self.max_samples, replace=False) if self.shuffle else range(
                self.max_samples)
            samples = [samples[i] for i in keep]
        self.samples = [s for s in samples if self._encode(s) is not None]
        print(f"MagicSFTDataset: {len(self.samples)} samples, {len(samples) - len(self.samples)} left out "
              f"(longer than {self.max_length} tokens or without an assistant turn)")
        if not self.samples:
            raise ValueError(f"no sample of {self.parquet_files} fits data.max_length={self.max_length}")

    def _encode(self, sample: dict) -> dict | None:
        return trainable(self.tokenizer, sample, self.max_length)

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, item: int) -> dict[str, torch.Tensor]:
        example = self._encode(self.samples[item])
        input_ids = torch.tensor(example["input_ids"])
        loss_mask = (torch.tensor(example["labels"]) != IGNORE).long()
        position_ids = torch.arange(len(input_ids))
        if self.pad_mode == "no_padding":
            return {"input_ids": input_ids, "position_ids": position_ids, "loss_mask": loss_mask}
        pad = self.max_length - len(input_ids)
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        return {"input_ids": F.pad(input_ids, (0, pad), value=pad_id),
                "attention_mask": F.pad(torch.ones_like(input_ids), (0, pad)),
                "position_ids": F.pad(position_ids, (0, pad)), "loss_mask": F.pad(loss_mask, (0, pad))}
