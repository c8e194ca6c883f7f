"""The files the `alfworld` package ships, read without importing it.

Importing `alfworld` creates `~/.cache/alfworld` and sets `$ALFWORLD_DATA` for the whole process (its
`alfworld.info` module does), which would make every later check for official game files see a folder that
holds none. So this module finds the package on disk and reads what it needs: the PDDL domain and the text
grammar (`alfworld/data`), ALFRED's object and receptacle tables (`alfworld/gen/constants.py`, plain data),
ALFWorld's goal library (`alfworld/gen/goal_library.py`: goal PDDL and the goal-description templates) and the
floor-plan layouts (`alfworld/gen/layouts`).
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from types import ModuleType

ALFWORLD_VERSION = "0.4.2"
INSTALL = (f'pip install "alfworld=={ALFWORLD_VERSION}" (or the `alfworld` extra of magic-agent); it brings '
           "TextWorld's PDDL engine and builds fast-downward")


def missing() -> str:
    """Why the ALFWorld env cannot run here ("" when it can)."""
    for module in ("alfworld", "textworld", "fast_downward"):
        if importlib.util.find_spec(module) is None:
            return f"magic/ALFWorld-v0 needs the {module!r} package: {INSTALL}"
    return ""


@functools.cache
def package_dir() -> Path:
    reason = missing()
    if reason:
        raise ImportError(reason)
    spec = importlib.util.find_spec("alfworld")
    return Path(next(iter(spec.submodule_search_locations)))


@functools.cache
def domain() -> str:
    return (package_dir() / "data" / "alfred.pddl").read_text(encoding="utf-8")


@functools.cache
def grammar() -> str:
    """The text grammar, still holding ALFWorld's "UNKNOWN GOAL" slot for the task description."""
    return (package_dir() / "data" / "alfred.twl2").read_text(encoding="utf-8")


def _data_module(relative: str) -> ModuleType:
    """Run one of alfworld's pure-data modules on its own (no package import, so no side effects)."""
    path = package_dir() / relative
    spec = importlib.util.spec_from_file_location(f"_alfworld_data_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def constants() -> ModuleType:
    """ALFRED's tables: VAL_RECEPTACLE_OBJECTS, VAL_ACTION_OBJECTS, OPENABLE_CLASS_LIST, scene numbers..."""
    return _data_module("gen/constants.py")


@functools.cache
def goal_library() -> dict:
    """ALFWorld's goal library: task type -> {"pddl": goal with '#' for '-', "templates": [...]}."""
    return _data_module("gen/goal_library.py").gdict


@functools.cache
def floor_plan(number: int) -> tuple[tuple[str, ...], dict[str, tuple[float, float, int, int]], tuple]:
    """One ALFRED floor plan: the object types in the room, each receptacle instance's id with the pose an
    agent reaches it from (x, z, rotation, horizon), and the reachable floor points (x, z)."""
    import numpy as np

    folder = package_dir() / "gen" / "layouts"
    types = tuple(json.loads((folder / f"FloorPlan{number}-objects.json").read_text()))
    poses = {k: tuple(v) for k, v in json.loads((folder / f"FloorPlan{number}-openable.json").read_text()).items()}
    points = tuple(map(tuple, np.load(folder / f"FloorPlan{number}-layout.npy").tolist()))
    return types, poses, points
