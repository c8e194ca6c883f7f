#!/usr/bin/env bash
# RL on CPU (results: benchmarks/README.md, "chi-PO and GRPO on CPU"): a small SmolLM2-shaped policy
# (`tiny-smollm2:rl`: SmolLM2's tokenizer and chat template on 6 layers of width 192, 12M parameters) fine-tuned from
# scratch on the two families RL plays, then `magic rl` with chi-PO and with GRPO on the same budget, each scored with
# the starting checkpoint on held-out test seeds (benchmarks/suites/rl_cpu.toml: 200 short Calendar, 200 one-call
# ToolPlan tasks).
#
#     bash benchmarks/rl_cpu.sh                    # every stage; rerun after a kill: each stage resumes where it stopped
#     SAMPLED_EVALS=0 bash benchmarks/rl_cpu.sh    # greedy evaluations only (25 min less)
#
# About 3 h 20 min on a 2-core machine with SAMPLED_EVALS=0: 70 min of copy drills, 41 min of SFT in two stages, 66
# min of RL, 3 evaluations of 400 episodes (about 8 min each); every stage resumes, so a kill loses little.
# SmolLM2-135M itself does not fit: its fine-tuned evaluation of 200 episodes alone took about 4 h here.
# Set OMP_NUM_THREADS to the cores it may use.
set -euo pipefail
cd "$(dirname "$0")/.."
magic=.venv/bin/magic
python=.venv/bin/python
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
# Large tensors straight from and back to the OS: with glibc's adaptive threshold an RL run's resident memory crept
# up step by step (10 GB to 15 GB in 8 steps) until one long batch took it past 24 GB.
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-65536}

# First copy drills (magic_sft/drills.py), 3,500 steps in two runs, about 70 min: trajectories alone did not teach this
# policy to copy an id or a figure from its prompt; after the drills it copies 65% of held-out drills exactly.
# A finished stage has its final/ folder and is skipped.
$python -m magic_sft.drills --samples 30000 --seed 0 --out runs/corpus-drills
[ -d runs/sft-drills/final ] || $magic sft --corpus runs/corpus-drills --model tiny-smollm2:rl --out runs/sft-drills \
    --max-length 256 --micro-batch-size 32 --grad-accum 1 --max-steps 1500 --lr 1e-3 --save-every 250
$python -m magic_sft.drills --samples 80000 --seed 2 --out runs/corpus-drills-2
[ -d runs/sft-drills-2/final ] || $magic sft --corpus runs/corpus-drills-2 --model runs/sft-drills/final \
    --out runs/sft-drills-2 --max-length 256 --micro-batch-size 32 --grad-accum 1 --max-steps 2000 --lr 1e-3 \
    --save-every 500
# Stop here unless the policy copies: on another machine's arithmetic the same seeds once left it copying 3 of 200
# (benchmarks/README.md, "The copying does not always set in"); then train on more drills before going on.
$python -m magic_sft.drills --score runs/sft-drills-2/final --samples 200 --seed 1 --at-least 0.5
# Then SFT on exactly the tasks RL plays, short samples (about 500 tokens) so that the small policy sees many
# examples a minute of copying values from its prompt: 900 steps of 8 on 8,000 oracle trajectories, half Calendar and
# half ToolPlan (cpu_rl_one_call.toml), then 600 steps on 8,000 more, three in four ToolPlan (cpu_rl_toolplan.toml).
$magic synth --config magic_sft/configs/cpu_rl_one_call.toml --out runs/corpus-cpu-rl-one-call
[ -d runs/sft-tiny-cpu-rl-one-call/final ] || $magic sft --corpus runs/corpus-cpu-rl-one-call \
    --model runs/sft-drills-2/final --out runs/sft-tiny-cpu-rl-one-call --max-length 1024 --micro-batch-size 8 \
    --grad-accum 1 --max-steps 900 --lr 1e-3 --save-every 100
$magic synth --config magic_sft/configs/cpu_rl_toolplan.toml --out runs/corpus-cpu-rl-toolplan
[ -d runs/sft-tiny-cpu-rl-toolplan/final ] || $magic sft --corpus runs/corpus-cpu-rl-toolplan \
    --model runs/sft-tiny-cpu-rl-one-call/final --out runs/sft-tiny-cpu-rl-toolplan --max-length 1024 \
    --micro-batch-size 8 --grad-accum 1 --max-steps 600 --lr 5e-4 --save-every 100
sft=runs/sft-tiny-cpu-rl-toolplan

# Held-out test seeds, greedy, for the starting checkpoint first: it tells early whether RL has a success signal to
# work with. An eval resumes its episodes.jsonl.
$magic eval --suite rl_cpu --policy "hf:$sft/final" --concurrency 16 --out "runs/eval-rl-cpu-${sft#runs/}" --no-progress

# The static family: 512 pinned train-split Calendar tasks (one or two people, one day), scored by the env's
# verifier; the multi-turn family: live ToolPlan requests of one call (the call, its result, a report).
calendar='{"people": [1, 2], "days": 1, "duration": 30, "preferences": 0.0}'
$python -m magic_rl.tasks --env magic/Calendar-v0 --kwargs "$calendar" --count 512 --first-seed 500000 \
    --out runs/calendar-one-two-static.jsonl

# The same budget for both algorithms: 12 steps of 4 tasks x 8 episodes per family (768 episodes), two optimiser
# steps per batch at lr 5e-5 reached over a 3-step warmup (at 2e-4 both algorithms damaged the policy's writing; at 1e-4
# with token-mean it did not move measurably in 12 steps), the clipped loss averaged per episode and then over
# episodes (`seq-mean-token-mean`: under token-mean a failed episode, longer than a success, outweighs it on the
# template tokens both share), sampled at temperature 0.7 (at 1.0 this policy's ToolPlan samples are mostly broken
# calls to invented functions, so RL learnt from noise), turn and episode caps as the eval suite's. chi-PO adds its
# think-entropy, action-band and bottleneck terms, with a band of 0.2 nats: the default 0.05 penalised a policy whose
# action entropy is still falling as RL sharpens it. One run at a time, two episodes per forward pass: the logits over
# SmolLM2's 49,152-token vocabulary of four long ToolPlan episodes took an update past 24 GB. Each run is scored
# greedy as soon as it ends.
temperature=0.7
toolplan='{"magic/ToolPlan-v0": {"category": "general", "distractors": 0, "optional_rate": 0.0, "calls": 1}}'
for algorithm in chi_po grpo; do
    run=rl-${algorithm//_/-}
    [ -d "runs/$run/final" ] || $magic rl --model $sft/final \
        --tasks runs/calendar-one-two-static.jsonl --envs magic/ToolPlan-v0 --env-kwargs "$toolplan" \
        --algorithm "$algorithm" --band 0.2 --steps 12 --groups-per-family 4 --group-size 8 --turn-tokens 384 \
        --response-tokens 1536 --temperature $temperature --lr 5e-5 --warmup-steps 3 --updates 2 \
        --loss-agg-mode seq-mean-token-mean --micro-batch-size 2 --progress-weight 0.5 --save-every 2 --out "runs/$run"
    $magic eval --suite rl_cpu --policy "hf:runs/$run/final" --concurrency 16 --out "runs/eval-rl-cpu-$run" \
        --no-progress
done

# All three sampled at the temperature RL trains at (SAMPLED_EVALS=0 skips them, 25 min): RL optimises the sampled
# policy, and greedy decisions of this small policy churn even when its distribution barely moves.
if [ "${SAMPLED_EVALS:-1}" = 1 ]; then
    for run in ${sft#runs/} rl-chi-po rl-grpo; do
        $magic eval --suite rl_cpu --policy "hf:runs/$run/final" --policy-arg temperature=$temperature \
            --concurrency 16 --out "runs/eval-rl-cpu-sampled-$run" --no-progress
    done
    evals="eval-rl-cpu eval-rl-cpu-sampled"
fi
for eval in ${evals:-eval-rl-cpu}; do
    $python -m benchmarks.compare runs/$eval-${sft#runs/} runs/$eval-rl-chi-po --names sft,chi-po
    $python -m benchmarks.compare runs/$eval-${sft#runs/} runs/$eval-rl-grpo --names sft,grpo
    $python -m benchmarks.compare runs/$eval-rl-grpo runs/$eval-rl-chi-po --names grpo,chi-po
done
$python -m magic_rl.plots runs/rl-chi-po runs/rl-grpo --out benchmarks/figures/rl_cpu_curves.png
