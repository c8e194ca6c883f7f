#!/usr/bin/env bash
# Does RL learn the tasks it trains on? (benchmarks/README.md, "RL learns the tasks it trains on"): chi-PO with
# rl_cpu.sh's settings on the same 8 Calendar tasks every step, from rl_cpu.sh's SFT checkpoint (run that first, at
# least to its SFT), then the checkpoint and the result on the 200 held-out Calendar test tasks of rl_cpu.toml.
# About 18 min on a 2-core machine: 8 steps of 64 episodes (90 s each), two evaluations of 200 episodes (3 min each).
set -euo pipefail
cd "$(dirname "$0")/.."
magic=.venv/bin/magic
python=.venv/bin/python
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-65536}
sft=runs/sft-tiny-cpu-rl-toolplan
run=rl-fixed8-chi-po

# The first 8 rows of rl_cpu.sh's static Calendar dataset: one group of 8 episodes each, every step.
calendar='{"people": [1, 2], "days": 1, "duration": 30, "preferences": 0.0}'
$python -m magic_rl.tasks --env magic/Calendar-v0 --kwargs "$calendar" --count 8 --first-seed 500000 --out runs/calendar-8.jsonl
[ -d "runs/$run/final" ] || $magic rl --model $sft/final --envs "" --tasks runs/calendar-8.jsonl --algorithm chi_po \
    --band 0.2 --steps 8 --groups-per-family 8 --group-size 8 --turn-tokens 384 --response-tokens 1536 \
    --temperature 0.7 --lr 5e-5 --warmup-steps 3 --updates 2 --loss-agg-mode seq-mean-token-mean \
    --micro-batch-size 2 --progress-weight 0.5 --save-every 2 --out "runs/$run"
for policy in $sft $run; do
    $magic eval --suite benchmarks/suites/rl_cpu_calendar.toml --policy "hf:runs/${policy#runs/}/final" \
        --concurrency 16 --out "runs/eval-rl-cpu-calendar-${policy#runs/}" --no-progress
done
$python -m benchmarks.compare runs/eval-rl-cpu-calendar-${sft#runs/} runs/eval-rl-cpu-calendar-$run --names sft,fixed8
