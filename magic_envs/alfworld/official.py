"""ALFWorld's own game files: finding and loading them, and writing ours in the same layout.

`alfworld-download` produces `$ALFWORLD_DATA/json_2.1.1/{train,valid_seen,valid_unseen}/<task>/<trial>/` folders,
each with `traj_data.json` (the ALFRED trajectory: task type and targets) and `game.tw-pddl` (JSON: the PDDL
domain, the grammar with the goal description filled in, the PDDL problem, and a `solvable` flag). ALFWorld's
`AlfredTWEnv` plays the folders of one split whose task type it is asked for, skipping "movable" and "Sliced"
tasks (its text engine supports neither) and games not marked solvable; so does this module.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from magic_envs.alfworld import assets, pddl

ROOT = "json_2.1.1"
# Our splits and ALFWorld's folders: valid_seen has the training rooms (IID), valid_unseen unseen rooms (OOD).
FOLDERS = {"train": "train", "test": "valid_seen", "ood": "valid_unseen"}


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """The ALFWorld data folder: `path`, else $ALFWORLD_DATA; it must hold json_2.1.1/."""
    chosen = path if path is not None else os.environ.get("ALFWORLD_DATA")
    if not chosen or not (Path(chosen) / ROOT).is_dir():
        raise ValueError(f"official ALFWorld games need a folder holding {ROOT}/ (as alfworld-download makes it): "
                         f"pass data_dir= or set ALFWORLD_DATA (got {chosen!r})")
    return Path(chosen)


@functools.lru_cache(maxsize=16)
def game_files(root: Path, split: str, task_types: tuple[str, ...]) -> tuple[str, ...]:
    """Paths (relative to `root`) of the split's games of these task types, sorted (listed once per process)."""
    folder = root / ROOT / FOLDERS[split]
    found = []
    for path in sorted(folder.glob("*/*/game.tw-pddl")):
        task_folder = path.parent.parent.name
        if "movable" in task_folder or "Sliced" in task_folder:
            continue
        if task_folder.split("-", 1)[0] in task_types:
            found.append(path.relative_to(root).as_posix())
    return tuple(found)


def load_game(root: Path, relative: str) -> tuple[dict, str]:
    """(game, task type) of one official game file; ValueError if it is missing, malformed or unsolvable."""
    if not isinstance(relative, str) or relative.startswith("/") or ".." in Path(relative).parts:
        raise ValueError(f"game_file must be a path inside the ALFWorld data folder, got {relative!r}")
    path = root / relative
    if path.name != "game.tw-pddl" or not path.is_file():
        raise ValueError(f"no ALFWorld game file at {path}")
    game = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(game, dict) or game.get("solvable") is False:
        raise ValueError(f"{relative} is not a solvable ALFWorld game")
    return game, path.parent.parent.name.split("-", 1)[0]


def write_game(root: str | os.PathLike, split: str, task: dict, game: dict, plan: list[str], name: str) -> Path:
    """Write a generated task as an official ALFWorld game folder (what alfworld-generate leaves behind):
    json_2.1.1/<folder>/<type>-<Object>-None-<Receptacle>-<floor plan>/trial_<name>/. Returns the game file."""
    receptacle = task["toggle"] if task["task_type"] == "look_at_obj_in_light" else task["receptacle"]
    task_folder = f"{task['task_type']}-{task['object']}-None-{receptacle}-{task['floor_plan']}"
    folder = Path(root) / ROOT / FOLDERS[split] / task_folder / f"trial_{name}"
    folder.mkdir(parents=True, exist_ok=True)
    traj = {"task_type": task["task_type"], "scene": {"floor_plan": f"FloorPlan{task['floor_plan']}"},
            "pddl_params": {"object_target": task["object"], "parent_target": task["receptacle"],
                            "toggle_target": task["toggle"], "mrecep_target": "", "object_sliced": False},
            "turk_annotations": {"anns": [{"task_desc": task["goal"]}]}}
    (folder / "traj_data.json").write_text(json.dumps(traj, indent=1))
    (folder / "initial_state.pddl").write_text(game["pddl_problem"])
    (folder / "game.tw-pddl").write_text(json.dumps({**game, "solvable": True, "walkthrough": plan}))
    return folder / "game.tw-pddl"


def generated_game(task: dict) -> dict:
    """The game file content of a generated task: the package's domain and grammar, our problem."""
    return {"pddl_domain": assets.domain(), "grammar": assets.grammar().replace("UNKNOWN GOAL", task["goal"]),
            "pddl_problem": pddl.problem(task)}
