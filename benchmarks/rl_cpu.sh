#!/usr/bin/env bash
# RL on CPU (results: benchmarks/README.md, "chi-PO and GRPO on CPU"): a small SmolLM2-shaped policy
# (`tiny-smollm2:rl`: SmolLM2's tokenizer and chat template on 6 layers of width 192, 12M parameters) fine-tuned from
# scratch on the two families RL plays, then `magic rl` with chi-PO and with GRPO on the same budget, each scored with
# the starting checkpoint on held-out test seeds (benchmarks/suites/rl_cpu.toml: 100 short Calendar, 100 ToolPlan
# tasks).
#
#     bash benchmarks/rl_cpu.sh            # every stage; rerun after a kill: each stage resumes where it stopped
#
# About two hours on a 2-core machine: 50 min of SFT, 30 min of RL, 3 evaluations of 200 episodes. SmolLM2-135M
# itself does not fit: its fine-tuned evaluation of 200 episodes alone took about 4 h here.
# Set OMP_NUM_THREADS to the cores it may use.
set -euo pipefail
cd "$(dirname "$0")/.."
magic=.venv/bin/magic
python=.venv/bin/python
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

# SFT from scratch: 6,000 oracle trajectories of Calendar and ToolPlan (5,600 fit 2,048 tokens), 320 steps of 8;
# then 240 steps on 4,000 more at the short end of the knobs RL plays (cpu_rl_short.toml). A finished stage has its
# final/ folder and is skipped.
$magic synth --config magic_sft/configs/cpu_rl.toml --out runs/corpus-cpu-rl
[ -d runs/sft-tiny-cpu-rl/final ] || $magic sft --corpus runs/corpus-cpu-rl --model tiny-smollm2:rl \
    --out runs/sft-tiny-cpu-rl --max-length 2048 --micro-batch-size 8 --grad-accum 1 --max-steps 320 --lr 1e-3 \
    --save-every 40
$magic synth --config magic_sft/configs/cpu_rl_short.toml --out runs/corpus-cpu-rl-short
[ -d runs/sft-tiny-cpu-rl-short/final ] || $magic sft --corpus runs/corpus-cpu-rl-short \
    --model runs/sft-tiny-cpu-rl/final --out runs/sft-tiny-cpu-rl-short --max-length 2048 --micro-batch-size 8 \
    --grad-accum 1 --max-steps 240 --lr 5e-4 --save-every 40

# The static family: 512 pinned train-split Calendar tasks (two or three people, one day), scored by the env's
# verifier; the multi-turn family: live ToolPlan "general" requests with no distractor tool.
calendar='{"people": [2, 3], "days": 1, "duration": 30, "preferences": 0.0}'
$python -m magic_rl.tasks --env magic/Calendar-v0 --kwargs "$calendar" --count 512 --first-seed 500000 \
    --out runs/calendar-short-static.jsonl

# The same budget for both algorithms: 8 steps of 4 tasks x 4 episodes per family (512 episodes), lr 1e-4,
# turn and episode caps as the eval suite's. chi-PO adds its think-entropy, action-band and bottleneck terms.
# The two runs share the cores, one thread each.
runs=()
for algorithm in chi_po grpo; do
    [ -d "runs/rl-${algorithm//_/-}/final" ] || OMP_NUM_THREADS=1 $magic rl --model runs/sft-tiny-cpu-rl-short/final \
        --tasks runs/calendar-short-static.jsonl --envs magic/ToolPlan-v0 \
        --env-kwargs '{"magic/ToolPlan-v0": {"category": "general", "distractors": 0, "optional_rate": 0.0}}' \
        --algorithm "$algorithm" --steps 8 --groups-per-family 4 --group-size 4 --turn-tokens 384 \
        --response-tokens 1536 --lr 1e-4 --progress-weight 0.5 --save-every 2 --out "runs/rl-${algorithm//_/-}" &
    runs+=($!)
done
for pid in "${runs[@]}"; do wait "$pid"; done  # each run's exit status, so a failed run stops the script

# Held-out test seeds: the starting checkpoint and both runs (an eval resumes its episodes.jsonl).
for run in sft-tiny-cpu-rl-short rl-chi-po rl-grpo; do
    $magic eval --suite rl_cpu --policy "hf:runs/$run/final" --concurrency 16 --out "runs/eval-rl-cpu-$run" \
        --no-progress
done
$python -m benchmarks.compare runs/eval-rl-cpu-sft-tiny-cpu-rl-short runs/eval-rl-cpu-rl-chi-po --names sft,chi-po
$python -m benchmarks.compare runs/eval-rl-cpu-sft-tiny-cpu-rl-short runs/eval-rl-cpu-rl-grpo --names sft,grpo
$python -m benchmarks.compare runs/eval-rl-cpu-rl-grpo runs/eval-rl-cpu-rl-chi-po --names grpo,chi-po
$python -m magic_rl.plots runs/rl-chi-po runs/rl-grpo --out benchmarks/figures/rl_cpu_curves.png
