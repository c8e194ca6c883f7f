#!/usr/bin/env bash
# Launch verl's PPO trainer (with our extension: extension.py) on one of our configs: bash magic_rl/verl_plugin/launch.sh CONFIG [hydra overrides ...]
#   CONFIG: ppo_qwen3 (configs/ppo_qwen3.yaml); the overrides name the data and the model, e.g.
#   data.train_files=data/magic/train.parquet data.val_files=data/magic/val.parquet actor_rollout_ref.model.path=...
set -euo pipefail
config="${1:?usage: launch.sh CONFIG [overrides ...]}"
shift
configs="$(python -m magic_rl.verl_plugin)"
python -m magic_rl.verl_plugin.extension --config-path "$configs" --config-name "$config" \
  actor_rollout_ref.rollout.agent.agent_loop_config_path="$configs/agent_loop.yaml" "$@"
