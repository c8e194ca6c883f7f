#!/usr/bin/env bash
# RL on CPU (results: benchmarks/README.md): SmolLM2-135M-Instruct's SFT checkpoint, continued on a
# multi-turn family, then `magic rl` with chi-PO and with GRPO on the same budget, each scored with the starting
# checkpoint on held-out test seeds (benchmarks/suites/rl_cpu.toml: 100 Calendar, 100 two-turn ToolPlan tasks).
#
#     bash benchmarks/rl_cpu.sh            # every stage; rerun after a kill: each stage resumes where it stopped
#
# Many hours on a 2-core machine (an estimate until the runs finish), most of it sampling: each RL step plays 16
# episodes, each evaluation 200.
# Set OMP_NUM_THREADS to the cores it may use.
set -euo pipefail
cd "$(dirname "$0")/.."
magic=.venv/bin/magic
python=.venv/bin/python
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

# Stage one on CPU (issue 8's run): the single-turn families, then ToolPlan beside Calendar, since the checkpoint
# must know the multi-turn family RL plays. A finished stage has its final/ folder and is skipped.
$magic synth --config magic_sft/configs/cpu_smollm2.toml --out runs/corpus-cpu
[ -d runs/sft-smollm2-cpu/final ] || $magic sft --corpus runs/corpus-cpu --model smollm2 --out runs/sft-smollm2-cpu \
    --max-length 1024 --micro-batch-size 4 --grad-accum 2 --max-steps 100 --lr 5e-5 --save-every 5
$magic synth --config magic_sft/configs/cpu_smollm2_toolplan.toml --out runs/corpus-cpu-toolplan
[ -d runs/sft-smollm2-cpu-toolplan/final ] || $magic sft --corpus runs/corpus-cpu-toolplan \
    --model runs/sft-smollm2-cpu/final --out runs/sft-smollm2-cpu-toolplan --max-length 2048 \
    --micro-batch-size 2 --grad-accum 4 --epochs 1 --save-every 5

# The static family: 512 pinned train-split Calendar tasks, scored by the env's verifier.
$python -m magic_rl.tasks --env magic/Calendar-v0 --count 512 --first-seed 500000 --out runs/calendar-static.jsonl

# The same budget for both algorithms: 24 steps of 2 tasks x 4 episodes per family (384 episodes), lr 1e-5,
# turn and episode caps as the eval suite's. chi-PO adds its think-entropy, action-band and bottleneck terms.
for algorithm in chi_po grpo; do
    [ -d "runs/rl-${algorithm//_/-}/final" ] || $magic rl --model runs/sft-smollm2-cpu-toolplan/final \
        --tasks runs/calendar-static.jsonl --envs magic/ToolPlan-v0 \
        --env-kwargs '{"magic/ToolPlan-v0": {"category": "general", "distractors": [0, 1]}}' \
        --algorithm "$algorithm" --steps 24 --groups-per-family 2 --group-size 4 --turn-tokens 384 \
        --response-tokens 1536 --lr 1e-5 --progress-weight 0.5 --save-every 2 --out "runs/rl-${algorithm//_/-}"
done

# Held-out test seeds: the starting checkpoint and both runs (an eval resumes its episodes.jsonl).
for run in sft-smollm2-cpu-toolplan rl-chi-po rl-grpo; do
    $magic eval --suite rl_cpu --policy "hf:runs/$run/final" --concurrency 16 --out "runs/eval-rl-cpu-$run" \
        --no-progress
done
$python -m benchmarks.compare runs/eval-rl-cpu-sft-smollm2-cpu-toolplan runs/eval-rl-cpu-rl-chi-po --names sft,chi-po
$python -m benchmarks.compare runs/eval-rl-cpu-sft-smollm2-cpu-toolplan runs/eval-rl-cpu-rl-grpo --names sft,grpo
$python -m benchmarks.compare runs/eval-rl-cpu-rl-grpo runs/eval-rl-cpu-rl-chi-po --names grpo,chi-po
$python -m magic_rl.plots runs/rl-chi-po runs/rl-grpo --out benchmarks/figures/rl_cpu_curves.png
