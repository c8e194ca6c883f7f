"""`python -m magic_rl.verl_plugin` prints the folder of our Hydra configs, for verl's `--config-path`."""

from magic_rl.verl_plugin import CONFIGS

print(CONFIGS)
