#!/usr/bin/env bash
# ToolPlan from screened tasks (benchmarks/README.md, "ToolPlan from tasks whose samples disagree"): chi-PO and GRPO
# from rl_cpu.sh's SFT checkpoint (run that first, at least to its SFT) on one-call ToolPlan train tasks on which the
# checkpoint's own samples disagreed. Live ToolPlan tasks seldom do (2 of 12 groups a step in rl_cpu_breadth.sh), so
# most groups carried no advantage; here every group starts with one. Each run is scored on the 200 held-out ToolPlan
# test tasks of rl_cpu_toolplan.toml greedy after every 5 steps and sampled at the training temperature (4 trials a
# task) after every 10. About 3 h 40 min on a 2-core machine: the screen 19 min, a step of 96 episodes 3-6 min, a
# greedy evaluation about 3 min, a sampled one about 13 min; every stage resumes.
set -euo pipefail
cd "$(dirname "$0")/.."
magic=.venv/bin/magic
python=.venv/bin/python
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-65536}
sft=sft-tiny-cpu-rl-toolplan
one_call='{"category": "general", "distractors": 0, "optional_rate": 0.0, "calls": 1}'

# The screen: 300 one-call train tasks x 4 samples at the training temperature. The pool keeps the tasks whose samples
# differ in success or in a progress measure the run weights (the function chosen, its arguments): a group of such a
# task has a task or a progress advantage from its first step.
$magic eval --env magic/ToolPlan-v0 --kwargs "$one_call" --split train --seed 1000 --episodes 300 --trials 4 \
    --policy "hf:runs/$sft/final" --policy-arg max_new_tokens=384 --policy-arg temperature=0.7 --concurrency 16 \
    --out runs/eval-toolplan-train-screen-t0.7 --no-progress
$python -m magic_rl.tasks --screen runs/eval-toolplan-train-screen-t0.7 --on success \
    --out runs/toolplan-mixed-t0.7.jsonl
$python -m magic_rl.tasks --screen runs/eval-toolplan-train-screen-t0.7 --on success --on argument_accuracy \
    --on name_accuracy --out runs/toolplan-pool-t0.7.jsonl

toolplan_eval() {  # name, checkpoint, extra eval flags
    $magic eval --suite benchmarks/suites/rl_cpu_toolplan.toml --policy "hf:$2" "${@:3}" --concurrency 16 \
        --out "runs/eval-rl-cpu-toolplan-$1" --no-progress
}
sampled=(--trials 4 --policy-arg temperature=0.7)
[ -d "runs/eval-rl-cpu-toolplan-$sft" ] || toolplan_eval "$sft" "runs/$sft/final"
toolplan_eval "t07x4-$sft" "runs/$sft/final" "${sampled[@]}"

# 12 pool tasks x 8 episodes a step (the pool is drawn in turn, so 10 steps see 120 tasks), lr 2e-5, progress weight
# 0.5, the breadth runs' other settings; extended 5 steps at a time, `final/` following the run. The two algorithms
# take turns, so that wherever the script stops both have had the same budget.
for steps in 5 10 15 20; do
    for algorithm in chi_po grpo; do
        run=rl-toolplan-pool-${algorithm//_/-}
        $magic rl --model runs/$sft/final --envs "" --tasks runs/toolplan-pool-t0.7.jsonl --algorithm $algorithm \
            --band 0.2 --steps $steps --groups-per-family 12 --group-size 8 --turn-tokens 384 \
            --response-tokens 1536 --temperature 0.7 --lr 2e-5 --warmup-steps 2 --updates 2 \
            --loss-agg-mode seq-mean-token-mean --micro-batch-size 2 --progress-weight 0.5 --save-every 1 \
            --out "runs/$run"
        [ "$(cat "runs/$run/final/step.txt")" = "$steps" ] || continue  # a run already past this point
        toolplan_eval "$run-s$steps" "runs/$run/final"
        [ $((steps % 10)) -eq 0 ] && toolplan_eval "t07x4-$run-s$steps" "runs/$run/final" "${sampled[@]}"
    done
done

for algorithm in chi-po grpo; do
    for steps in 5 10 15 20; do
        $python -m benchmarks.compare "runs/eval-rl-cpu-toolplan-$sft" \
            "runs/eval-rl-cpu-toolplan-rl-toolplan-pool-$algorithm-s$steps" --names "sft,$algorithm-s$steps"
    done
    for steps in 10 20; do
        $python -m benchmarks.compare "runs/eval-rl-cpu-toolplan-t07x4-$sft" \
            "runs/eval-rl-cpu-toolplan-t07x4-rl-toolplan-pool-$algorithm-s$steps" \
            --names "sft,$algorithm-s$steps-sampled"
    done
done
for kind in "" t07x4-; do
    $python -m benchmarks.compare "runs/eval-rl-cpu-toolplan-${kind}rl-toolplan-pool-grpo-s20" \
        "runs/eval-rl-cpu-toolplan-${kind}rl-toolplan-pool-chi-po-s20" --names "grpo-s20,chi-po-s20"
done
$python -m magic_rl.plots runs/rl-toolplan-pool-chi-po runs/rl-toolplan-pool-grpo \
    --out benchmarks/figures/rl_cpu_screened_curves.png
