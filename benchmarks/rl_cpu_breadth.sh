#!/usr/bin/env bash
# Breadth at a lower rate (benchmarks/README.md, "Sixteen new tasks a step"): chi-PO and GRPO from rl_cpu.sh's SFT
# checkpoint (run that first, at least to its SFT) on 16 new Calendar tasks x 8 episodes a step (640 distinct tasks
# in 40 steps) at lr 2e-5, task and format objectives only, each scored greedy on the 200 held-out Calendar test
# tasks of rl_cpu.toml after every 5 steps, and from step 20 also sampled at the training temperature (4 trials a
# task, as the SFT checkpoint); then the same for one-call ToolPlan (12 new tasks a step, 5 steps). About 6 h 50 min
# on a 2-core machine: a Calendar step of 128 episodes takes 2.0-3.6 min, a ToolPlan step of 96 episodes 3-6 min, a
# greedy evaluation of 200 episodes under 3 min, a sampled one of 800 about 8 min; every stage resumes. ToolPlan
# from train tasks screened for samples that disagree: rl_cpu_screened.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
magic=.venv/bin/magic
python=.venv/bin/python
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-65536}
sft=sft-tiny-cpu-rl-toolplan

# Progress weight 0: Calendar's progress metric (the constraint score) is 0.9 on most failures, and normalised
# within a group its small differences weigh as much as success does. Each run is extended 5 steps at a time
# (`final/` follows the run) and scored after each chunk. Greedy decisions churn (a small shift of the distribution
# flips many argmax digits), so from step 20 each checkpoint is also scored on what RL trains: samples at temperature
# 0.7, 4 a task (benchmarks.compare takes each task's mean over its trials).
sampled() {  # name, checkpoint
    $magic eval --suite benchmarks/suites/rl_cpu_calendar.toml --policy "hf:$2" --trials 4 \
        --policy-arg temperature=0.7 --concurrency 16 --out "runs/eval-rl-cpu-calendar-t07x4-$1" --no-progress
}
[ -d "runs/eval-rl-cpu-calendar-$sft" ] || $magic eval --suite benchmarks/suites/rl_cpu_calendar.toml \
    --policy "hf:runs/$sft/final" --concurrency 16 --out "runs/eval-rl-cpu-calendar-$sft" --no-progress
sampled $sft runs/$sft/final
for algorithm in chi_po grpo; do
    run=rl-broad16x-${algorithm//_/-}
    for steps in 5 10 15 20 25 30 35 40; do
        $magic rl --model runs/$sft/final --envs "" --tasks runs/calendar-one-two-static.jsonl \
            --algorithm $algorithm --band 0.2 --steps $steps --groups-per-family 16 --group-size 8 \
            --turn-tokens 384 --response-tokens 1536 --temperature 0.7 --lr 2e-5 --warmup-steps 2 --updates 2 \
            --loss-agg-mode seq-mean-token-mean --micro-batch-size 2 --progress-weight 0 --save-every 1 \
            --out "runs/$run"
        [ "$(cat "runs/$run/final/step.txt")" = "$steps" ] || continue  # a run already past this point
        $magic eval --suite benchmarks/suites/rl_cpu_calendar.toml --policy "hf:runs/$run/final" \
            --concurrency 16 --out "runs/eval-rl-cpu-calendar-$run-s$steps" --no-progress
        [ "$steps" -ge 20 ] && sampled "$run-s$steps" "runs/$run/final"
    done
done
# The multi-turn family alike: 12 new one-call ToolPlan tasks x 8 episodes a step for 5 steps, progress weight 0.5
# (function and argument accuracy, turns passed, a report that copies the result: most of ToolPlan's groups carry
# no task signal), scored on the 200 held-out ToolPlan test tasks of rl_cpu.toml.
one_call='{"category": "general", "distractors": 0, "optional_rate": 0.0, "calls": 1}'
toolplan="{\"magic/ToolPlan-v0\": $one_call}"
[ -d "runs/eval-rl-cpu-toolplan-$sft" ] || $magic eval --suite benchmarks/suites/rl_cpu_toolplan.toml \
    --policy "hf:runs/$sft/final" --concurrency 16 --out "runs/eval-rl-cpu-toolplan-$sft" --no-progress
for algorithm in chi_po grpo; do
    run=rl-toolplan12x-${algorithm//_/-}
    $magic rl --model runs/$sft/final --envs magic/ToolPlan-v0 --env-kwargs "$toolplan" --algorithm $algorithm \
        --band 0.2 --steps 5 --groups-per-family 12 --group-size 8 --turn-tokens 384 --response-tokens 1536 \
        --temperature 0.7 --lr 2e-5 --warmup-steps 2 --updates 2 --loss-agg-mode seq-mean-token-mean \
        --micro-batch-size 2 --progress-weight 0.5 --save-every 1 --out "runs/$run"
    $magic eval --suite benchmarks/suites/rl_cpu_toolplan.toml --policy "hf:runs/$run/final" --concurrency 16 \
        --out "runs/eval-rl-cpu-toolplan-$run" --no-progress
    $python -m benchmarks.compare "runs/eval-rl-cpu-toolplan-$sft" "runs/eval-rl-cpu-toolplan-$run" \
        --names "sft,${algorithm//_/-}"
done

# How often a ToolPlan task's samples disagree at three temperatures: 50 test tasks x 4 samples from the checkpoint.
for t in 0.4 0.7 1.0; do
    $magic eval --env magic/ToolPlan-v0 --kwargs "$one_call" --split test --episodes 50 --trials 4 \
        --policy "hf:runs/$sft/final" --policy-arg max_new_tokens=384 --policy-arg temperature=$t --concurrency 16 \
        --out "runs/eval-toolplan-spread-t$t" --no-progress
done
# The train tasks on which the checkpoint's samples disagree, and ToolPlan runs on them: rl_cpu_screened.sh.
for algorithm in chi-po grpo; do
    for steps in 5 10 15 20 25 30 35 40; do
        eval=rl-broad16x-$algorithm-s$steps
        if [ -f "runs/eval-rl-cpu-calendar-$eval/summary.json" ]; then
            $python -m benchmarks.compare "runs/eval-rl-cpu-calendar-$sft" "runs/eval-rl-cpu-calendar-$eval" \
                --names "sft,$algorithm-s$steps"
        fi
    done
    for steps in 20 25 30 35 40; do
        $python -m benchmarks.compare "runs/eval-rl-cpu-calendar-t07x4-$sft" \
            "runs/eval-rl-cpu-calendar-t07x4-rl-broad16x-$algorithm-s$steps" --names "sft,$algorithm-s$steps-sampled"
    done
done
$python -m magic_rl.plots runs/rl-broad16x-chi-po runs/rl-broad16x-grpo \
    --out benchmarks/figures/rl_cpu_breadth_curves.png
for kind in "" t07x4-; do
    for steps in 35 40; do
        $python -m benchmarks.compare "runs/eval-rl-cpu-calendar-${kind}rl-broad16x-grpo-s$steps" \
            "runs/eval-rl-cpu-calendar-${kind}rl-broad16x-chi-po-s$steps" --names "grpo-s$steps,chi-po-s$steps"
    done
done
