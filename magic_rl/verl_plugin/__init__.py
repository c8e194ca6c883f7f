"""Everything that imports verl (pinned: verl[verl-core]==0.9.1). Kept in this package, not in a top-level `verl/`,
so nothing shadows the real package; the rest of magic_rl runs without verl.

- `sft_dataset.MagicSFTDataset`: verl's SFT trainer on a `magic synth` corpus, with `magic sft`'s targets.
- `configs/`: Hydra configs extending verl's own (`CONFIGS` is their folder, for `--config-path`).
"""

from pathlib import Path

CONFIGS = Path(__file__).parent / "configs"
