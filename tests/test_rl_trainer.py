"""The local RL trainer (`magic rl`): per-family task schedules, the lockstep engine's batches, token alignment of
the training forward pass, and a killed run resuming to the same curve, on a real tiny Qwen3."""

import json
import subprocess
import sys

import gymnasium
import pytest
import torch
from transformers import AutoModelForCausalLM

import magic_envs  # noqa: F401
from magic_rl.engine import LocalEngine
from magic_rl.tasks import Task, TaskSchedule, load_static
from magic_rl.trainer import RLConfig, make_optimizer, response_stats, step_row, update
from killing import kill_after
from servers import TINY_MODEL


@pytest.fixture(scope="module")
def tiny():
    if not (TINY_MODEL / "config.json").is_file():
        pytest.skip(f"no tiny Qwen3 at {TINY_MODEL}: bash .ci/setup builds it")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(TINY_MODEL, dtype=torch.float32), AutoTokenizer.from_pretrained(
        TINY_MODEL)


def test_every_step_draws_each_family_alike(tmp_path):
    static = tmp_path / "static.jsonl"
    env = gymnasium.make("magic/ToolCall-v0", split="train")
    pinned = [env.reset(seed=s) and env.unwrapped.task for s in range(3)]
    static.write_text("".join(json.dumps({"env_id": "magic/ToolCall-v0", "task": t}) + "\n" for t in pinned))
    schedule = TaskSchedule(["magic/Calendar-v0", "magic/Meeting-v0", "magic/ToolPlan-v0"], {}, load_static(static),
                            groups_per_family=2, seed=0)
    assert schedule.families == ["scheduling", "tool_planning"]
    steps = [schedule.step(s) for s in range(3)]
    for tasks in steps:
        assert [t.family for t in tasks] == ["scheduling"] * 2 + ["tool_planning"] * 2
        assert {t.env_id for t in tasks[:2]} == {"magic/Calendar-v0", "magic/Meeting-v0"}  # sources take turns
        assert {t.env_id for t in tasks[2:]} == {"magic/ToolPlan-v0", "magic/ToolCall-v0"}
    live = [t.seed for tasks in steps for t in tasks if t.env_id == "magic/Calendar-v0"]
    assert len(set(live)) == len(live) == 3  # a new task every time
    rows = [t for tasks in steps for t in tasks if t.task]
    assert [json.loads(t.task) for t in rows] == [json.loads(json.dumps(p)) for p in pinned]
    assert schedule.step(1) == steps[1]  # deterministic: a resumed run draws the same
    with pytest.raises(ValueError, match="unknown env"):
        TaskSchedule(["magic/Nope-v0"], {}, [], 1, 0)
    with pytest.raises(ValueError, match="needs 'env_id'"):
        static.write_text('{"seed": 1}\n')
        load_static(static)


def test_a_written_static_dataset_pins_its_tasks_and_corpora_load_as_static_datasets(tmp_path):
    from magic_rl.tasks import main as write_static

    out = tmp_path / "calendar.jsonl"
    args = ["--env", "magic/Calendar-v0", "--count", "3", "--first-seed", "500000", "--out", str(out)]
    assert write_static(args) == 0
    tasks = load_static(out)
    env = gymnasium.make("magic/Calendar-v0", split="train")
    assert [t.seed for t in tasks] == [500000, 500001, 500002]
    for task in tasks:
        env.reset(seed=task.seed)
        assert json.loads(task.task) == json.loads(json.dumps(env.unwrapped.task))
        assert env.reset(options=task.reset_options)[0] == env.reset(seed=task.seed)[0]
    import pyarrow as pa
    import pyarrow.parquet as pq

    # `magic synth`'s parquet stores seeds as text
    pq.write_table(pa.Table.from_pylist([{"env_id": "magic/ToolCall-v0", "kwargs": "{}", "seed": "7"}]),
                   tmp_path / "corpus.parquet")
    assert load_static(tmp_path / "corpus.parquet") == [Task("magic/ToolCall-v0", "{}", 7)]
    (tmp_path / "bad.jsonl").write_text('{"env_id": "magic/ToolCall-v0", "seed": "seven"}\n')
    with pytest.raises(ValueError, match="bad.jsonl"):
        load_static(tmp_path / "bad.jsonl")
    with pytest.raises(SystemExit, match="unknown env"):
        write_static(["--env", "magic/Nope-v0", "--out", str(tmp_path / "x.jsonl")])
    assert not (tmp_path / "x.jsonl").exists()


def screen_eval(tmp_path, name, *args):
    out = subprocess.run([sys.executable, "-m", "magic_envs.cli", "eval", "--env", "magic/Calendar-v0", "--policy",
                          "random", "--episodes", "6", *args, "--out", str(tmp_path / name), "--no-progress"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in (tmp_path / name / "episodes.jsonl").read_text().splitlines()]


def test_a_screen_pins_the_train_tasks_whose_trials_disagree(tmp_path):
    from magic_rl.tasks import main as write_static

    rows = screen_eval(tmp_path, "train", "--split", "train", "--trials", "3")  # the random policy, seeded per trial

    def disagreeing(value):
        seen = {}
        for r in rows:
            seen.setdefault(r["key"], set()).add(value(r))
        return sorted(k for k, v in seen.items() if len(v) > 1)
    by_success, by_violations = disagreeing(lambda r: r["success"]), disagreeing(lambda r: r["metrics"]["violations"])
    assert 0 < len(by_success) < len(by_violations) < 6  # so the screen below has something to keep and to drop
    for on, expected in (("success", by_success), ("violations", by_violations)):
        out = tmp_path / f"{on}.jsonl"
        assert write_static(["--screen", str(tmp_path / "train"), "--on", on, "--out", str(out)]) == 0
        tasks = load_static(out)
        assert [t.seed for t in tasks] == expected
        env = gymnasium.make("magic/Calendar-v0", split="train")
        for task in tasks:
            assert env.reset(options=task.reset_options)[0] == env.reset(seed=task.seed)[0]

    # A second screen over later seeds merges into one file; one of another env's tasks does not.
    more = screen_eval(tmp_path, "more", "--split", "train", "--trials", "3", "--seed", "6")
    rows += more
    out = tmp_path / "merged.jsonl"
    assert write_static(["--screen", str(tmp_path / "train"), str(tmp_path / "more"), "--on", "violations",
                         "--out", str(out)]) == 0
    merged = [t.seed for t in load_static(out)]
    assert merged == disagreeing(lambda r: r["metrics"]["violations"])
    assert merged[:len(by_violations)] == by_violations and len(merged) > len(by_violations)  # the second one added
    out = tmp_path / "either.jsonl"  # repeated, --on keeps the tasks that differ in any of the values
    assert write_static(["--screen", str(tmp_path / "train"), str(tmp_path / "more"), "--on", "success", "--on",
                         "feasible", "--out", str(out)]) == 0
    by_either = sorted(set(disagreeing(lambda r: r["success"])) | set(disagreeing(lambda r: r["metrics"]["feasible"])))
    assert [t.seed for t in load_static(out)] == by_either != disagreeing(lambda r: r["success"])
    out = subprocess.run([sys.executable, "-m", "magic_envs.cli", "eval", "--env", "magic/Meeting-v0", "--policy",
                          "random", "--episodes", "2", "--split", "train", "--trials", "2", "--out",
                          str(tmp_path / "meeting"), "--no-progress"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr

    screen_eval(tmp_path, "test", "--trials", "3")
    screen_eval(tmp_path, "once", "--split", "train")
    for folders, on, error in ((["test"], "success", "never held-out"), (["once"], "success", "--trials 2"),
                               (["train"], "format_ok", "agree in format_ok"), (["train"], "nope", "do not all report"),
                               (["missing"], "success", "no episodes.jsonl"),
                               (["train", "meeting"], "success", "2 runs")):
        with pytest.raises(SystemExit, match=error):
            write_static(["--screen", *(str(tmp_path / f) for f in folders), "--on", on, "--out",
                          str(tmp_path / "x.jsonl")])
    assert not (tmp_path / "x.jsonl").exists()


def test_lockstep_batches_are_deterministic(tiny):
    model, tokenizer = tiny
    engine = LocalEngine(model, tokenizer, temperature=1.0)

    def play():
        envs = [gymnasium.make("magic/ToolPlan-v0", split="train") for _ in range(3)]
        episodes = [(env, 5 + i % 2, None) for i, env in enumerate(envs)]
        return engine.play(episodes, seed=7, turn_tokens=12, response_tokens=200, max_turns=3)
    first, second = play(), play()
    assert [t.response_ids for t in first] == [t.response_ids for t in second]
    assert all(len(t.logprobs) == len(t.response_ids) for t in first)
    assert len({len(t.turns) for t in first}) > 1  # episodes leave the lockstep at different rounds
    assert first[0].response_ids != first[2].response_ids  # same task, different samples
    logp = first[0].logprobs[:12]
    assert all(x <= 0 for x in logp) and any(x < 0 for x in logp)


def test_group_copies_and_later_turns_reuse_the_prefix_cache_and_sample_the_same(tiny):
    model, tokenizer = tiny
    cached, plain = LocalEngine(model, tokenizer, temperature=0.0), LocalEngine(model, tokenizer, temperature=0.0,
                                                                                prefix_cache_tokens=0)
    assert cached.prefix_cache_tokens and not plain.prefix_cache_tokens  # Qwen3's cache is plain full attention
    read = []
    original = cached.sample

    def counting(prompts, caps, round_):
        out = original(prompts, caps, round_)
        read.append((cached.prefixes.reused_tokens, cached.prefixes.read_tokens))
        return out
    cached.sample = counting

    def play(engine):  # a group of two copies of one ToolPlan task beside another task: multi-turn, greedy
        envs = [gymnasium.make("magic/ToolPlan-v0", split="train") for _ in range(3)]
        episodes = [(env, seed, None) for env, seed in zip(envs, (5, 5, 6))]
        return engine.play(episodes, seed=7, turn_tokens=12, response_tokens=200, max_turns=3)
    with_cache, without = play(cached), play(plain)
    assert [t.response_ids for t in with_cache] == [t.response_ids for t in without]
    assert [[turn["start"] for turn in t.turns] for t in with_cache] == [[turn["start"] for turn in t.turns]
                                                                         for t in without]
    (reused_first, read_first), (reused, total_read) = read[0], read[-1]
    assert reused_first > 0  # the second copy of task 5 read nothing its first copy had read
    assert reused - reused_first > total_read - read_first  # later rounds read mostly from the cache
    assert cached.prefixes is None  # dropped after the call: the next one samples from the updated policy


def test_training_forward_scores_exactly_the_response_tokens(tiny):
    model, tokenizer = tiny
    rows = [([5, 6, 7, 8], [9, 10, 11]), ([1, 2], [3, 4, 5, 6, 7])]
    logp, entropy = response_stats(model, rows, pad=0)
    assert logp.shape == entropy.shape == (2, 5)
    for b, (prompt, response) in enumerate(rows):
        with torch.no_grad():
            logits = model(torch.tensor([prompt + response])).logits[0].float()
        full = torch.log_softmax(logits, -1)
        for k, token in enumerate(response):
            assert torch.allclose(logp[b, k], full[len(prompt) - 1 + k, token], atol=1e-4)
            assert torch.allclose(entropy[b, k], -(full[len(prompt) - 1 + k].exp() * full[len(prompt) - 1 + k]).sum(),
                                  atol=1e-3)


def test_the_loss_scores_tokens_under_the_distribution_that_sampled_them(tiny):
    # at a temperature other than 1 the trainer's log-probabilities are the engine's sampling log-probabilities, so
    # the ratio of a fresh batch is 1 and the policy trained is the one that played
    model, tokenizer = tiny
    engine = LocalEngine(model, tokenizer, temperature=0.6)
    envs = [gymnasium.make("magic/ToolPlan-v0", split="train") for _ in range(2)]
    played = engine.play([(env, 5, None) for env in envs], seed=3, turn_tokens=12, response_tokens=200, max_turns=3)
    for t in played:
        scored = response_stats(model, [(t.prompt_ids, t.response_ids)], pad=0, temperature=0.6)[0][0]
        plain = response_stats(model, [(t.prompt_ids, t.response_ids)], pad=0)[0][0]
        mine = [k for k, m in enumerate(t.response_mask) if m]
        assert torch.allclose(scored[mine], torch.tensor([t.logprobs[k] for k in mine]), atol=2e-3)
        assert not torch.allclose(plain[mine], scored[mine], atol=2e-3)


def test_an_update_raises_the_rewarded_response_and_lowers_the_other(tiny):
    # the direction of the whole update path (advantages on tokens, masks, clipped loss, optimiser step): the response
    # with a positive advantage becomes likelier, the one with a negative advantage less likely, under each algorithm
    import copy
    from types import SimpleNamespace

    prompt = [5, 6, 7, 8]
    episodes = [SimpleNamespace(prompt_ids=prompt, response_ids=response, response_mask=[1] * len(response),
                                think_mask=[1, 0, 0, 0]) for response in ([9, 10, 11, 12], [13, 14, 15, 16])]
    for algorithm in ("grpo", "chi_po"):
        model = copy.deepcopy(tiny[0])
        reference = copy.deepcopy(model).requires_grad_(False) if algorithm == "chi_po" else None
        config = RLConfig(out="-", algorithm=algorithm, lr=1e-3, updates=2, micro_batch_size=1)
        before = response_stats(model, [(e.prompt_ids, e.response_ids) for e in episodes], pad=0)[0].sum(1)
        update(model, reference, torch.optim.AdamW(model.parameters(), lr=config.lr), episodes,
               [[1.0] * 4, [-1.0] * 4], config, None, pad=0)
        after = response_stats(model, [(e.prompt_ids, e.response_ids) for e in episodes], pad=0)[0].sum(1)
        assert after[0] > before[0] and after[1] < before[1], (algorithm, before, after)


def test_frozen_embeddings_stay_as_they_are_while_the_layers_learn(tiny):
    import copy
    from types import SimpleNamespace

    episodes = [SimpleNamespace(prompt_ids=[5, 6, 7, 8], response_ids=response, response_mask=[1] * 4,
                                think_mask=[0] * 4) for response in ([9, 10, 11, 12], [13, 14, 15, 16])]
    model = copy.deepcopy(tiny[0])
    config = RLConfig(out="-", algorithm="grpo", lr=1e-3, freeze_embeddings=True)
    frozen = {name: p.detach().clone() for name, p in model.named_parameters() if "embed" in name or "lm_head" in name}
    layers = {name: p.detach().clone() for name, p in model.named_parameters() if name not in frozen}
    optimizer = make_optimizer(model, config)
    assert len(optimizer.param_groups[0]["params"]) == len(layers)
    before = response_stats(model, [(e.prompt_ids, e.response_ids) for e in episodes], pad=0)[0].sum(1)
    update(model, None, optimizer, episodes, [[1.0] * 4, [-1.0] * 4], config, None, pad=0)
    after = response_stats(model, [(e.prompt_ids, e.response_ids) for e in episodes], pad=0)[0].sum(1)
    assert after[0] > before[0] and after[1] < before[1]
    weights = dict(model.named_parameters())
    assert frozen and all(torch.equal(weights[name], value) for name, value in frozen.items())
    assert any(not torch.equal(weights[name], value) for name, value in layers.items())


def test_a_step_logs_which_groups_carry_a_signal():
    # per family, the share of task groups whose episodes scored differently: only they give the task objective an
    # advantage, so a step whose groups all succeed or all fail teaches nothing about the task
    from types import SimpleNamespace

    tasks = [Task("magic/Calendar-v0", seed=1), Task("magic/Calendar-v0", seed=2), Task("magic/ToolPlan-v0", seed=3)]
    scores = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5]  # groups of three: mixed, all 0, all 0.5
    trajectories = [SimpleNamespace(score=s, success=s == 1.0, response_mask=[1], think_mask=[0], turns=[],
                                    truncated=None) for s in scores]
    values = [{"task": s, "format": 1.0, "efficiency": 0.0, "progress": 0.0} for s in scores]
    row = step_row(1, tasks, trajectories, values, RLConfig(out="-", group_size=3))
    assert row["mixed_groups/scheduling"] == 0.5 and row["mixed_groups/tool_planning"] == 0.0
    assert row["success/scheduling"] == pytest.approx(1 / 6)


def rl_args(out, steps=5):
    # band 0: chi-PO's smoothing term pulls on the action entropy every step, so even a reward-less tiny model
    # changes, and a resume that lost any state (weights, optimiser, running average, sampling seeds) would show
    return ["rl", "--model", str(TINY_MODEL), "--envs", "magic/Calendar-v0,magic/ToolPlan-v0", "--out", str(out),
            "--steps", str(steps), "--group-size", "2", "--groups-per-family", "1", "--turn-tokens", "12",
            "--response-tokens", "80", "--band", "0", "--lr", "1e-2", "--warmup-steps", "4", "--save-every", "2",
            "--threads", "1"]


def curve(out):
    rows = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.endswith("_s") and k != "generated_tokens_per_s"} for r in rows]


def magic(*args):
    return subprocess.run([sys.executable, "-m", "magic_envs.cli", *args], capture_output=True, text=True, timeout=900)


def test_a_killed_run_resumes_to_the_same_curve(tmp_path):
    if not (TINY_MODEL / "config.json").is_file():
        pytest.skip(f"no tiny Qwen3 at {TINY_MODEL}: bash .ci/setup builds it")
    whole = magic(*rl_args(tmp_path / "whole"))
    assert whole.returncode == 0, whole.stderr[-2000:]
    expected = curve(tmp_path / "whole")
    assert len(expected) == 5 and len({r["action_entropy"] for r in expected}) > 1  # the model does change
    for row in expected:  # lengths are per episode, whatever the micro-batches were
        assert row["think_tokens"] + row["action_tokens"] == pytest.approx(row["response_tokens"])
        assert 0 < row["response_tokens"] <= 80
    assert [r["lr"] for r in expected] == pytest.approx([2.5e-3, 5e-3, 7.5e-3, 1e-2, 1e-2])  # the kill is mid-warmup
    assert (tmp_path / "whole" / "curves.png").is_file()
    kill_after(rl_args(tmp_path / "killed"), tmp_path / "killed" / "log.jsonl", 3)
    assert not (tmp_path / "killed" / "final").exists()
    again = magic(*rl_args(tmp_path / "killed"))
    assert again.returncode == 0, again.stderr[-2000:]
    assert curve(tmp_path / "killed") == expected
    both = plots(tmp_path / "whole", tmp_path / "killed", "--out", tmp_path / "both.png")
    assert both.returncode == 0 and (tmp_path / "both.png").stat().st_size > 0, both.stderr[-2000:]
    longer = magic(*rl_args(tmp_path / "killed", steps=6))  # more --steps extend the finished run
    assert longer.returncode == 0, longer.stderr[-2000:]
    extended = curve(tmp_path / "killed")
    assert len(extended) == 6 and extended[:5] == expected
    # final/ now holds step 6, the checkpoint the run ended on, not step 5's policy
    checkpoint = torch.load(tmp_path / "killed" / "checkpoint" / "state.pt", weights_only=False)["model"]
    final = AutoModelForCausalLM.from_pretrained(tmp_path / "killed" / "final").state_dict()
    assert all(torch.equal(final[name], value) for name, value in checkpoint.items() if name in final)
    assert (tmp_path / "killed" / "final" / "step.txt").read_text() == "6"
    args = rl_args(tmp_path / "killed", steps=6)
    args[args.index("--lr") + 1] = "1e-3"
    changed = magic(*args)
    assert changed.returncode != 0 and "another config" in changed.stderr


def plots(*args):
    return subprocess.run([sys.executable, "-m", "magic_rl.plots", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_wrong_inputs_say_what_is_wrong(tmp_path):
    missing = plots(tmp_path / "nothing")
    assert missing.returncode != 0 and f"no log.jsonl in {tmp_path / 'nothing'}" in missing.stderr
    out = magic("rl", "--envs", "magic/Nope-v0", "--out", str(tmp_path / "o"))
    assert out.returncode != 0 and "unknown env 'magic/Nope-v0'" in out.stderr
    out = magic("rl", "--algorithm", "ppo", "--out", str(tmp_path / "o"))
    assert out.returncode != 0 and "unknown algorithm" in out.stderr
    out = magic("rl", "--temperature", "0", "--out", str(tmp_path / "o"))
    assert out.returncode != 0 and "temperature must be > 0" in out.stderr
    out = magic("rl", "--tasks", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o"))
    assert out.returncode != 0 and "no static dataset" in out.stderr
    assert Task("magic/ToolCall-v0").family == "tool_planning"
