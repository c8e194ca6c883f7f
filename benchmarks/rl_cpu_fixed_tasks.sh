#!/usr/bin/env bash
# Does RL learn the tasks it trains on? (benchmarks/README.md, "RL learns the tasks it trains on"): chi-PO with
# rl_cpu.sh's settings on the same 8 Calendar tasks every step, from rl_cpu.sh's SFT checkpoint (run that first, at
# least to its SFT), then the same budget on 64 distinct tasks, and each on the 200 held-out Calendar test tasks of
# rl_cpu.toml. About 32 min on a 2-core machine: 8 steps of 64 episodes (80-90 s each) a run, three evaluations of
# 200 episodes (under 3 min each); every stage resumes.
set -euo pipefail
cd "$(dirname "$0")/.."
magic=.venv/bin/magic
python=.venv/bin/python
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-65536}
sft=sft-tiny-cpu-rl-toolplan

# The first 8 rows of rl_cpu.sh's static Calendar dataset: one group of 8 episodes each, every step (rl-fixed8); and
# the same budget on 8 new rows a step, 64 distinct tasks (rl-broad64).
calendar='{"people": [1, 2], "days": 1, "duration": 30, "preferences": 0.0}'
$python -m magic_rl.tasks --env magic/Calendar-v0 --kwargs "$calendar" --count 8 --first-seed 500000 \
    --out runs/calendar-8.jsonl
for run in rl-fixed8-chi-po:runs/calendar-8.jsonl rl-broad64-chi-po:runs/calendar-one-two-static.jsonl; do
    tasks=${run#*:} run=${run%%:*}
    [ -d "runs/$run/final" ] || $magic rl --model runs/$sft/final --envs "" --tasks "$tasks" --algorithm chi_po \
        --band 0.2 --steps 8 --groups-per-family 8 --group-size 8 --turn-tokens 384 --response-tokens 1536 \
        --temperature 0.7 --lr 5e-5 --warmup-steps 3 --updates 2 --loss-agg-mode seq-mean-token-mean \
        --micro-batch-size 2 --progress-weight 0.5 --save-every 2 --out "runs/$run"
done
for policy in $sft rl-fixed8-chi-po rl-broad64-chi-po; do
    $magic eval --suite benchmarks/suites/rl_cpu_calendar.toml --policy "hf:runs/$policy/final" \
        --concurrency 16 --out "runs/eval-rl-cpu-calendar-$policy" --no-progress
done
$python -m benchmarks.compare runs/eval-rl-cpu-calendar-$sft runs/eval-rl-cpu-calendar-rl-fixed8-chi-po \
    --names sft,fixed8
$python -m benchmarks.compare runs/eval-rl-cpu-calendar-$sft runs/eval-rl-cpu-calendar-rl-broad64-chi-po \
    --names sft,broad64
