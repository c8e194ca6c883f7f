"""magic/WorfBench-v0 on the real WorfBench gold records (shared/data/worfbench; skipped where absent).

Every record of the seven in-distribution files is served and its gold answer scored: 1.0 in corrected
mode, and in compat mode exactly what the official algorithm (tests/worfbench_reference.py, a plain
re-implementation of WorfBench's evaluator) gives gold against gold. The full sweeps use the exact matcher
for speed (gold against itself matches every node by its own text under any matcher); a sample of records
and perturbed answers is checked with the MiniLM encoder as well.
"""

import json
import pickle
import random
import socket
import warnings

import gymnasium
import numpy as np
import pytest
from conftest import SHARED_DATA
from gymnasium.utils.env_checker import check_env

from magic_envs.decomposition.matchers import ExactMatcher
from magic_envs.decomposition.worfbench import ENV_VAR, METRIC_NAMES, WorfBenchEnv, load_tasks, read_record

DATA = SHARED_DATA / "worfbench"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"no WorfBench gold data at {DATA}")
TASK_SIZES = {"alfworld": 312, "lumos": 489, "os": 20, "toolalpaca": 93, "toolbench": 114, "webshop": 133,
              "wikihow": 262}
# Their gold scores below 1.0 under WorfBench's own algorithm (prose after the edges read as extra nodes, or
# nodes no edge connects): seeds skip them in compat mode.
UNSOLVABLE = {"alfworld_549", "lumos_20047", "lumos_14076", "lumos_21358", "toolbench_52", "wikihow_23",
              "wikihow_29", "wikihow_65", "wikihow_71", "wikihow_155", "wikihow_228", "wikihow_254", "wikihow_262"}
RECORD = {"id": "demo_1", "conversations": [
    {"role": "system", "content": "You are a helpful task planner."},
    {"role": "user", "content": "Boil an egg."},
    {"role": "assistant", "content": "Node:\n1: boil water\n2: put the egg in the water\n3: wait ten minutes\n"
                                     "Edge: (START,1) (1,2) (2,3) (3,END)"}]}


def make(**kwargs):
    kwargs.setdefault("judge", False)
    kwargs.setdefault("matcher", "exact")
    if DATA.is_dir():
        kwargs.setdefault("data_path", str(DATA))
    return WorfBenchEnv(**kwargs)


def every_record():
    return [r for records in load_tasks(str(DATA.resolve())).values() for r in records]


@pytest.fixture
def no_data_env(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)


# ---- the whole benchmark ---------------------------------------------------------------------------------
@needs_data
def test_the_data_holds_the_seven_tasks_and_1423_records():
    tasks = load_tasks(str(DATA.resolve()))
    assert {name: len(records) for name, records in tasks.items()} == TASK_SIZES


@needs_data
def test_gold_scores_one_on_every_record_in_corrected_mode():
    env = make(mode="corrected")
    for record in every_record():
        env.reset(options={"task": {"id": record["id"]}})
        _, reward, terminated, _, info = env.step(env.oracle_action())
        assert (reward, terminated, info["success"]) == (1.0, True, True), record["id"]
        assert info["metrics"]["f1_chain"] == 1.0, record["id"]
        assert info["metrics"]["llm"] == -1.0


@needs_data
def test_gold_scores_what_the_official_algorithm_gives_in_compat_mode_on_every_record():
    reference = pytest.importorskip("worfbench_reference")
    env = make(mode="compat")
    below_one = set()
    for record in every_record():
        env.reset(options={"task": {"id": record["id"]}})
        gold = env.oracle_action()
        info = env.step(gold)[4]
        expected = reference_scores(reference, gold, gold, ExactMatcher())
        for name, value in expected.items():
            assert abs(info["metrics"][name] - value) < 1e-9, (record["id"], name, info["metrics"][name], value)
        assert info["score"] == info["metrics"]["f1_graph"]
        if info["score"] < 1.0:
            below_one.add(record["id"])
    assert below_one == UNSOLVABLE


@needs_data
def test_minilm_matcher_agrees_with_the_official_algorithm_on_a_sample():
    reference = pytest.importorskip("worfbench_reference")
    from magic_envs.decomposition.matchers import default_matcher

    matcher = default_matcher()
    env = make(mode="compat", matcher="embedding")
    rng, records = random.Random(0), every_record()
    sample = [r for r in records if r["id"] in UNSOLVABLE] + rng.sample(records, 10)
    for record in sample:
        gold = read_record(record)[2]
        for kind, pred in reference.perturbations(gold, rng, count=3):
            env.reset(options={"task": {"id": record["id"]}})
            info = env.step(pred)[4] if pred.strip() else None
            if info is None:  # an empty answer is an invalid action, not a scored one
                continue
            expected = reference_scores(reference, pred, gold, matcher)
            for name, value in expected.items():
                assert abs(info["metrics"][name] - value) < 1e-6, (record["id"], kind, name, pred)


def reference_scores(reference, pred: str, gold: str, matcher) -> dict:
    """The official algorithm's six numbers for one prediction."""
    return reference.official_scores(pred, gold, matcher.similarity)


def drop_first_node(gold: str) -> str:
    lines = gold.split("\n")
    numbered = [i for i, line in enumerate(lines) if line[:1].isdigit()]
    return "\n".join(line for i, line in enumerate(lines) if i != numbered[0])


def reorder_nodes(gold: str) -> str:
    lines = gold.split("\n")
    numbered = [i for i, line in enumerate(lines) if line[:1].isdigit()]
    texts = [lines[i].split(":", 1)[-1] for i in numbered][::-1]
    for k, (i, text) in enumerate(zip(numbered, texts), start=1):
        lines[i] = f"{k}:{text}"
    return "\n".join(lines)


def paraphrase(gold: str) -> str:
    return gold.replace(": ", ": carefully ").replace("go to", "walk over to").replace("Search", "Look up")


# ---- serving records -------------------------------------------------------------------------------------
@needs_data
def test_check_env_without_warnings_and_long_unicode_prompts_fit_the_space():
    env = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)  # the registry test runs the render check through make
    longest = max(every_record(), key=lambda r: len(r["conversations"][1]["content"]))
    unicode = next(r for r in every_record() if any(ord(c) > 127 for c in r["conversations"][1]["content"]))
    for record in (longest, unicode):
        prompt, info = env.reset(options={"task": {"id": record["id"]}})
        assert prompt == record["conversations"][1]["content"] and env.observation_space.contains(prompt)
        assert info["instructions"] == record["conversations"][0]["content"] and info["tools"] == []
        assert env.oracle_action() == record["conversations"][2]["content"]
    assert len(longest["conversations"][1]["content"]) > 13_000


@needs_data
def test_seeds_draw_records_deterministically_and_pins_rebuild_them():
    env, other = make(), make(category="os")
    for seed in range(20):
        prompt, info = env.reset(seed=seed)
        assert make().reset(seed=seed) == (prompt, info)
        task = json.loads(json.dumps(env.task))
        assert other.reset(seed=99, options={"task": task}) == (prompt, info)
        by_id = other.reset(options={"task": {"id": task["id"]}})[0]
        assert by_id == prompt
    assert len({make().reset(seed=s)[1]["task_id"] for s in range(50)}) > 40


@needs_data
@pytest.mark.parametrize("category, allowed", [("os", {"os"}), (["os", "webshop"], {"os", "webshop"}),
                                               ("all", set(TASK_SIZES)), (None, set(TASK_SIZES))])
def test_category_chooses_the_tasks_seeds_draw_from(category, allowed):
    env, drawn = make(category=category), set()
    for seed in range(80):
        env.reset(seed=seed)
        drawn.add(env.task["id"].rsplit("_", 1)[0])
    assert drawn <= allowed and (len(drawn) > 1 or len(allowed) == 1)


@needs_data
def test_compat_seeds_skip_records_whose_own_gold_scores_below_one():
    compat, corrected = make(category=["alfworld", "toolbench"]), make(category=["alfworld", "toolbench"],
                                                                        mode="corrected")
    assert {r["id"] for r in compat.records() if compat.unsolvable(r)} == {"alfworld_549", "toolbench_52"}
    assert not any(corrected.unsolvable(r) for r in corrected.records())
    for seed in range(300):
        compat.reset(seed=seed)
        assert compat.task["id"] not in UNSOLVABLE
    compat.reset(options={"task": {"id": "alfworld_549"}})  # pinning still serves it, with its official score
    _, reward, terminated, _, info = compat.step(compat.oracle_action())
    assert terminated and 0.0 < reward < 1.0 and not info["success"]


@needs_data
def test_perturbed_answers_score_lower_in_corrected_mode():
    env = make(mode="corrected", category="alfworld")
    for seed in range(30):
        env.reset(seed=seed)
        gold = env.oracle_action()
        if gold.count("\n") < 4:
            continue
        chain_only = gold.split("Edge:")[0] + "Edge: (START,1)"
        for wrong in (drop_first_node(gold), reorder_nodes(gold), chain_only):
            assert env.reset(seed=seed) and env.step(wrong)[1] < 1.0, (seed, wrong)


@needs_data
def test_random_and_junk_answers():
    env = make(mode="corrected")
    rng = np.random.default_rng(1)
    rewards = []
    for seed in range(100):
        env.reset(seed=seed)
        rewards.append(env.step(env.random_action(rng))[1])
    assert np.mean(rewards) < 0.05
    env.reset(seed=0)
    assert env.step("<think>only thinking</think>")[4]["valid"] is False
    junks = ("x" * 1_000_000, "日本語の答え、" * 100_000, "Node: none\nEdge: nothing", "Node:\n1: x\n" * 5000)
    for junk in junks:
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step(junk)
        assert terminated and info["valid"] and set(info["metrics"]) == set(METRIC_NAMES) and reward < 0.2


# ---- settings and errors ---------------------------------------------------------------------------------
def test_pinned_full_records_need_no_data(no_data_env):
    env = WorfBenchEnv(matcher="exact", judge=False)
    assert env.data_path is None
    prompt, info = env.reset(options={"task": RECORD})
    assert prompt == "Boil an egg." and info["instructions"] == "You are a helpful task planner."
    _, reward, terminated, _, info = env.step(env.oracle_action())
    assert (reward, terminated, info["success"]) == (1.0, True, True)
    with pytest.raises(ValueError, match=ENV_VAR):
        env.reset(seed=0)
    with pytest.raises(ValueError, match=ENV_VAR):
        env.reset(options={"task": {"id": "os_92"}})


@needs_data
def test_data_path_comes_from_the_environment_variable(monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(DATA))
    env = WorfBenchEnv(matcher="exact", judge=False)
    assert env.data_path == str(DATA.resolve()) and env.categories == tuple(TASK_SIZES)


@needs_data
def test_flat_nested_and_single_file_layouts(tmp_path):
    flat = tmp_path / "flat"
    flat.mkdir()
    for name in ("os", "webshop"):
        (flat / f"{name}.json").write_bytes((DATA / name / "graph_eval.json").read_bytes())
    single = DATA / "os" / "graph_eval.json"
    layouts = ((flat, ("os", "webshop")), (single, ("os",)), (DATA / "os", ("os",)), (DATA, tuple(TASK_SIZES)))
    for path, tasks in layouts:
        env = make(data_path=str(path))
        assert env.categories == tasks
        env.reset(seed=1)
        assert env.task["id"].rsplit("_", 1)[0] in tasks
    assert make(data_path=str(flat)).reset(options={"task": {"id": "os_92"}})[0].startswith("Now, I will start")


@pytest.mark.parametrize("kwargs, needle", [
    ({"data_path": "/no/such/folder"}, "does not exist"),
    ({"mode": "strict"}, "mode must be one of"),
    ({"matcher": "bert"}, "matcher must be one of"),
    ({"matcher": 42}, "matcher must be one of"),
    ({"judge": "yes"}, "judge must be"),
    ({"judge": {"url": "http://x"}}, "bad judge settings"),
    ({"split": "train"}, "unknown split"),
])
def test_bad_settings_raise_clear_errors(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        WorfBenchEnv(**{"matcher": "exact", **kwargs})


@needs_data
def test_bad_data_and_categories_raise_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="category must be one of"):
        make(category="seal_tools")
    with pytest.raises(ValueError, match="category must be one of"):
        make(category=[])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no WorfBench gold file"):
        make(data_path=str(tmp_path / "empty"))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "os.json").write_text('{"not": "a list"}')
    with pytest.raises(ValueError, match="is not a WorfBench gold file"):
        make(data_path=str(tmp_path / "bad"))
    (tmp_path / "bad" / "os.json").write_text('[{"id": ')
    with pytest.raises(ValueError, match="cannot read WorfBench gold file"):
        make(data_path=str(tmp_path / "bad"))


@pytest.mark.parametrize("task, needle", [
    ({"not": "a task"}, "conversations"),
    ({"id": "demo", "conversations": "hello"}, "conversations"),
    ({"id": "demo", "conversations": [{"role": "user", "content": "hi"}]}, "must end with the gold"),
    ({"id": "demo", "conversations": [{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]},
     "no user message"),
    ({"id": "demo", "conversations": [{"role": "user", "content": "task"}, {"role": "assistant", "content": "ok"}]},
     "is not a workflow"),
])
def test_malformed_pinned_records_raise_value_error(no_data_env, task, needle):
    with pytest.raises(ValueError, match=needle):
        WorfBenchEnv(matcher="exact", judge=False).reset(options={"task": task})


@needs_data
def test_unknown_pinned_id_raises_value_error():
    with pytest.raises(ValueError, match="no WorfBench record has id 'os_0'"):
        make().reset(options={"task": {"id": "os_0"}})


def test_llm_metric_is_minus_one_unless_judged(no_data_env, monkeypatch):
    monkeypatch.delenv("MAGIC_JUDGE_BASE_URL", raising=False)
    assert WorfBenchEnv(matcher="exact").judge is None
    with pytest.raises(ValueError, match="MAGIC_JUDGE_BASE_URL"):
        WorfBenchEnv(matcher="exact", judge=True)
    with socket.socket() as s:  # a port nothing listens on: the judge fails, the episode does not
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = WorfBenchEnv(matcher="exact", judge={"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "retries": 0})
    env.reset(options={"task": RECORD})
    info = env.step(env.oracle_action())[4]
    assert info["score"] == 1.0 and info["metrics"]["llm"] == -1.0


def test_default_embedding_env_pickles_without_the_encoder(no_data_env):
    env = WorfBenchEnv(judge=False)  # matcher="embedding", the process-wide MiniLM encoder
    env.reset(options={"task": RECORD})
    clone = pickle.loads(pickle.dumps(env))
    assert len(pickle.dumps(env)) < 200_000
    feedback = "Scored against the gold workflow: f1_graph 1.000, f1_chain 1.000."
    assert clone.step(env.oracle_action())[:3] == env.step(env.oracle_action())[:3] == (feedback, 1.0, True)


@needs_data
def test_gymnasium_make_when_registered(monkeypatch):
    if "magic/WorfBench-v0" not in gymnasium.registry:
        pytest.skip("magic/WorfBench-v0 is not registered yet")
    monkeypatch.setenv(ENV_VAR, str(DATA))
    env = gymnasium.make("magic/WorfBench-v0", matcher="exact")
    env.reset(seed=0)
    assert env.step(env.unwrapped.oracle_action())[1] == 1.0
