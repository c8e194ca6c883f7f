"""Rooms built from ALFRED's floor plans: the receptacles of a real layout and what may go where.

A floor plan (`assets.floor_plan`) lists the receptacle instances an agent can walk to, with their ALFRED ids
("Cabinet|+00.68|+00.50|-02.20") and the pose they are reached from, plus every object type in the room. Some
fixed appliances (coffee machine, toaster, stove burners, garbage can, ...) are listed only as types there;
they are added with ids on the room's reachable floor points, in a fixed order, so a room is a pure function
of its floor-plan number. Which object may go in which receptacle is ALFRED's own table
(`VAL_RECEPTACLE_OBJECTS`), and so are the object properties (`VAL_ACTION_OBJECTS`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from magic_envs.alfworld import assets

ROOM_TYPES = {0: "Kitchen", 2: "LivingRoom", 3: "Bedroom", 4: "Bathroom"}  # by the floor plan's hundreds
# Receptacle types ALFRED lists only as room contents: instances per room (a kitchen's stove has four burners).
APPLIANCE_COUNTS = {"StoveBurner": 4}
# Lamps are fixtures, not in ALFRED's placement table: where a room's lamp stands (ALFWorld's "On the desk 1,
# you see a desklamp 1."), first type present wins.
LAMP_STANDS = {"DeskLamp": ("Desk", "SideTable", "Dresser", "Shelf"),
               "FloorLamp": ("SideTable", "ArmChair", "Sofa", "Dresser", "Desk", "Bed")}


def room_type(number: int) -> str:
    return ROOM_TYPES.get(number // 100, "") if 0 < number % 100 <= 30 else ""


def receptacle_type(receptacle_id: str) -> str:
    """'Sink|-01.90|+00.97|-01.50|SinkBasin' -> 'SinkBasin'; 'Cabinet|+00.68|...' -> 'Cabinet'."""
    parts = receptacle_id.split("|")
    return parts[4] if len(parts) > 4 else parts[0]


def coordinates(entity_id: str) -> tuple[float, float, float]:
    return tuple(float(v) for v in entity_id.split("|")[1:4])


def format_id(kind: str, x: float, y: float, z: float, suffix: str = "") -> str:
    """An ALFRED id: 'Apple|+01.20|+00.95|-02.30' (suffix: '|SinkBasin' for basins)."""
    return f"{kind}|{x:+06.2f}|{y:+06.2f}|{z:+06.2f}{suffix}"


@dataclass(frozen=True)
class Room:
    """One floor plan's fixed contents."""

    number: int
    kind: str
    object_types: frozenset[str]  # every type the room holds (objects and fixtures)
    receptacles: tuple[tuple[str, str, tuple], ...]  # (id, type, pose (x, z, rotation, horizon))
    floor: tuple[tuple[float, float], ...]  # reachable floor points

    @functools.cached_property
    def by_type(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        for rid, kind, _ in self.receptacles:
            out.setdefault(kind, []).append(rid)
        return {k: tuple(v) for k, v in out.items()}

    def holders(self, object_type: str) -> tuple[str, ...]:
        """Ids of the room's receptacles that can hold an object of this type."""
        fits = assets.constants().VAL_RECEPTACLE_OBJECTS
        return tuple(rid for rid, kind, _ in self.receptacles if object_type in fits.get(kind, ()))

    def lamp_stands(self, lamp: str) -> tuple[str, ...]:
        for kind in LAMP_STANDS[lamp]:
            if kind in self.by_type:
                return self.by_type[kind]
        return ()


def receptacle_kinds() -> frozenset[str]:
    """Static receptacle types (movable ones such as Bowl or Pot are objects here, as in ALFWorld)."""
    c = assets.constants()
    return frozenset(c.VAL_RECEPTACLE_OBJECTS) - set(c.MOVABLE_RECEPTACLES)


def pickable_kinds() -> frozenset[str]:
    """Object types that can be picked up and placed (unsliced: ALFWorld's six task types slice nothing)."""
    contents = set().union(*assets.constants().VAL_RECEPTACLE_OBJECTS.values())
    return frozenset(t for t in contents if not t.endswith("Sliced"))


@functools.cache
def room(number: int) -> Room:
    kind = room_type(number)
    if not kind:
        raise ValueError(f"no ALFRED floor plan {number!r}: kitchens 1-30, living rooms 201-230, bedrooms "
                         "301-330, bathrooms 401-430")
    types, poses, floor = assets.floor_plan(number)
    receptacles = [(rid, receptacle_type(rid), pose) for rid, pose in sorted(poses.items())]
    present = {kind for _, kind, _ in receptacles}
    missing = sorted(t for t in types if t in receptacle_kinds() and t not in present)
    slot = 0
    for kind_ in missing:
        for _ in range(APPLIANCE_COUNTS.get(kind_, 1)):
            # Spread over the floor points with a fixed stride: deterministic, and distinct poses per instance.
            x, z = floor[(slot * 37 + 11) % len(floor)]
            slot += 1
            basin = kind_.endswith("Basin")
            rid = format_id(kind_[:-5] if basin else kind_, x, 0.9, z, f"|{kind_}" if basin else "")
            receptacles.append((rid, kind_, (x, z, (slot % 4) * 90, 30)))
    return Room(number, kind, frozenset(types), tuple(receptacles), floor)


def location_ids(target: Room) -> dict[str, str]:
    """Receptacle id -> the location it is reached from, 'loc|x|z|rotation|horizon' on ALFRED's 0.25 m grid.

    Two receptacles reached from one pose get distinct locations (the horizon is moved by 15 degrees), so
    "go to cabinet 1" always names one receptacle.
    """
    out, used = {}, set()
    for rid, _, (x, z, rotation, horizon) in target.receptacles:
        horizon = int(horizon)
        while (loc := f"loc|{round(x / 0.25)}|{round(z / 0.25)}|{int(rotation) // 90 % 4}|{horizon}") in used:
            horizon += 15
        used.add(loc)
        out[rid] = loc
    return out
