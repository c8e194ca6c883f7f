"""magic/ALFWorld-v0: household tasks in ALFWorld's text world, on its real engine."""

from __future__ import annotations

import numpy as np

from magic_envs.alfworld import assets, generator, official
from magic_envs.alfworld.engine import Engine
from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.core.grammar import ParsedAction
from magic_envs.core.tasks import IID_SPLITS, canonical_json, fingerprint, iid_split_of, roundtrip

INSTRUCTIONS = """You are in a house, in ALFWorld's text world, and must finish the household task you are given.
Each turn, reply with exactly one command; the game answers with what happens. Commands:
  look                               look around where you are
  inventory                          see what you carry
  go to (receptacle)                 walk to a receptacle, e.g. "go to fridge 1"
  open (receptacle) / close (receptacle)
  take (object) from (receptacle)    you can carry one object at a time
  move (object) to (receptacle)      put what you carry in or on a receptacle
  examine (something)
  use (object)                       e.g. turn a desk lamp on
  heat / cool / clean (object) with (receptacle)   microwave, fridge, sink basin
Name things exactly as the game does ("apple 2", "countertop 1"). A command the game cannot carry out reads
"Nothing happens." and still uses a turn. You have a limited number of turns."""


class ALFWorldEnv(MagicEnv):
    """Finish a household task in ALFWorld's text world (TextWorld's PDDL engine with ALFWorld's domain).

    ## Description
    ALFWorld (Shridhar et al., 2021) on its real engine: the `alfworld` package's PDDL domain and text grammar,
    played by TextWorld's PDDL logic over fast-downward (`engine.Engine`, which shows exactly what ALFWorld's
    `AlfredTWEnv` shows). Tasks are ALFWorld's six types: pick and place, look at an object under a lamp,
    clean / heat / cool an object and place it, and place two objects. They are generated offline
    (`generator`) in ALFRED's real floor plans with plausible contents and goals in ALFWorld's own template
    phrasing, and every one is proven solvable by fast-downward's planner at reset, whose plan is the oracle.
    With `source="official"` the env plays ALFWorld's released game files instead.

    ## Observation
    ALFWorld's text: at reset the welcome line, what the agent sees and "Your task is to: ...", then the
    game's answer to each command. With `admissible_commands=True` the commands the game accepts in the new
    state follow, one per line, after "Admissible commands:".

    ## Action
    One plain-text game command ("go to fridge 1", "take apple 1 from countertop 2", "heat apple 1 with
    microwave 1", "look", "inventory", ...); case and runs of spaces do not matter. A command the game
    cannot carry out costs a step and changes nothing: the observation is ALFWorld's "Nothing happens." and
    `info["valid"]` is False. Tool calls are invalid (there are no tools), as is an empty action.

    ## Rewards
    1.0 when the task's PDDL goal holds (the episode then terminates), else 0.
    `info["metrics"]`: `moves` (commands carried out) and `expert_steps` (length of the planner's plan at
    reset, a yardstick for efficiency).

    ## Starting State
    A task drawn from the env's RNG for its split, or pinned with `reset(options={"task": task})`: a
    generated task (`floor_plan`, `task_type`, `object`, `receptacle`, `toggle`, `goal`, `start`, `objects`:
    each object's ALFRED id and receptacle; the room and the PDDL problem are rebuilt from it) or
    `{"game_file": "json_2.1.1/<folder>/<task>/<trial>/game.tw-pddl"}` under the official data folder.

    ## Episode End
    Terminates when the goal holds. The TimeLimit (50 steps, the GiGPO budget; ReAct used 49) truncates.
    The engine blocks for a few tenths of a second at reset: run envs in a thread or process pool when they
    share an event loop. Pickling keeps the episode (the engine replays its commands in the copy).

    ## Arguments
    `split`: "train" | "test" (IID: ALFRED's training floor plans; test is told from train by the task
    fingerprint), "ood" (ALFRED's held-out floor plans, targets of object types never in a train room:
    `generator.OOD_OBJECTS`), "ood_task_type" (training rooms, but only heat-then-place and pick-two, the two
    types train never draws). With official games: "train", "test" = valid_seen, "ood" = valid_unseen.
    `admissible_commands`: show the accepted commands after each observation (default True, as the
    GiGPO / verl-agent ALFWorld prompts do; ReAct-style prompts use False).
    `source`: "generated" (default) or "official" (ALFWorld's game files under `data_dir`, default
    $ALFWORLD_DATA). `task_types`: a subset of the split's task types to draw from (default: all of them).

    ## Version History
    * v0: initial (alfworld 0.4.2, textworld 1.7.0).

    >>> import gymnasium, magic_envs
    >>> env = gymnasium.make("magic/ALFWorld-v0", admissible_commands=False)
    >>> observation, info = env.reset(seed=0)
    >>> observation.splitlines()[-1]
    'Your task is to: put some spoon on sinkbasin.'
    >>> while not (done := env.step(env.unwrapped.oracle_action())[2]): pass
    >>> env.unwrapped.engine.won(), info["instructions"].startswith("You are in a house")
    (True, True)
    """

    family = "alfworld"
    splits = generator.SPLITS
    metric_names = ("moves", "expert_steps")

    def __init__(self, split: str = "train", admissible_commands: bool = True, source: str = "generated",
                 task_types=None, data_dir=None, render_mode: str | None = None):
        super().__init__(split, render_mode)
        reason = assets.missing()
        if reason:
            raise ImportError(reason)
        if source not in ("generated", "official"):
            raise ValueError(f"source must be 'generated' or 'official', got {source!r}")
        if not isinstance(admissible_commands, bool):
            raise TypeError("admissible_commands must be a bool")
        allowed = generator.TASK_TYPES if source == "official" else generator.split_types(split)
        if source == "official" and split not in official.FOLDERS:
            raise ValueError(f"official ALFWorld games have the splits {tuple(official.FOLDERS)}, not {split!r}")
        chosen = tuple(task_types) if task_types is not None else allowed
        if not chosen or not set(chosen) <= set(allowed):
            raise ValueError(f"task_types for split {split!r} must be a non-empty subset of {allowed}")
        self.source, self.admissible_commands, self.task_types = source, admissible_commands, chosen
        self.data_dir = official.data_dir(data_dir) if source == "official" else None
        self.engine: Engine | None = None
        self._plan: list[str] | None = None  # the oracle's plan while the agent follows it
        self._expert_steps = 0
        self._proven: tuple[str, Engine, list[str]] | None = None

    # ---- tasks -----------------------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> dict:
        if self.source == "official":
            files = official.game_files(self.data_dir, self.split, self.task_types)
            if not files:
                raise ValueError(f"no {self.task_types} games in {self.data_dir / official.ROOT}/"
                                 f"{official.FOLDERS[self.split]}")
            return {"game_file": files[int(rng.integers(len(files)))]}
        for _ in range(100):
            task = roundtrip(generator.draw(rng, self.split, self.task_types))
            # Train and test share one distribution: only a task of this split is worth proving.
            if self.split in IID_SPLITS and iid_split_of(fingerprint(task)) != self.split:
                continue
            engine = Engine(official.generated_game(task))
            engine.reset()
            plan = engine.plan()
            if plan:  # proven solvable; setup plays this very engine
                self._proven = (canonical_json(task), engine, plan)
                return task
        raise RuntimeError(f"no solvable {self.split!r} task in 100 draws: a generator bug")

    def setup(self, task: dict) -> str:
        proven, self._proven = self._proven, None
        if proven is not None and proven[0] == canonical_json(task):
            _, self.engine, plan = proven
            intro = self.engine.reset()
        else:
            self.engine = Engine(self._game(task))
            try:
                intro = self.engine.reset()
                plan = self.engine.plan()
            except Exception as error:  # a game file whose PDDL the translator or the grammar rejects
                raise ValueError(f"the pinned ALFWorld game does not load: {error!r}") from error
            if not plan:
                raise ValueError("the pinned ALFWorld task has no plan: it is solved at the start or unsolvable")
        self._plan, self._expert_steps = list(plan), len(plan)
        return self._observe(intro)

    def _game(self, task: dict) -> dict:
        if "game_file" in task:
            if set(task) != {"game_file"}:
                raise ValueError("an official ALFWorld task is {'game_file': path}")
            return official.load_game(self.data_dir or official.data_dir(), task["game_file"])[0]
        generator.check(task)
        return official.generated_game(task)

    # ---- play ------------------------------------------------------------------------------------------
    def transition(self, action: ParsedAction) -> Outcome:
        command = " ".join(action.text.lower().split())
        feedback, valid = self.engine.step(command)
        metrics = {"moves": float(self.engine.moves), "expert_steps": float(self._expert_steps)}
        if not valid:
            return Outcome(self._observe(feedback), valid=False, metrics=metrics,
                           error=f"{command[:200]!r} is not a command the game can carry out now")
        if self._plan and command == self._plan[0]:
            self._plan.pop(0)
        else:
            self._plan = None  # the agent left the plan: the oracle replans from here when asked
        won = self.engine.won()
        return Outcome(self._observe(feedback), terminated=won, score=float(won), success=won, metrics=metrics)

    def _observe(self, text: str) -> str:
        if not self.admissible_commands:
            return text
        return text + "\n\nAdmissible commands:\n" + "\n".join(self.engine.admissible())

    def oracle_action(self) -> str:
        if self._plan is None:
            self._plan = self.engine.plan()
            if self._plan is None:
                raise RuntimeError("the goal is out of reach from this state: a domain bug")
        return self._plan[0] if self._plan else "look"  # nothing left to do once the goal holds

    def random_action(self, rng: np.random.Generator) -> str:
        commands = self.engine.admissible()
        return commands[int(rng.integers(len(commands)))]

    def instructions(self) -> str:
        return INSTRUCTIONS
