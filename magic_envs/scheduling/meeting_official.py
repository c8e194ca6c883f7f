"""NATURAL PLAN's meeting-planning scorer (evaluate_meeting_planning.py), re-implemented so it never raises.

The official script keeps the text after the first "SOLUTION:", splits it on every ".", and simulates the
steps from the task's own start place and time: "You start ..." is skipped unread, "You travel to X in ..."
adds the true travel time, "You wait until T" needs T strictly later than now, "You meet P for ..." lasts
P's required minimum and must fit P's window at P's place. The stated minutes and clock times are ignored.
The first bad step ends the simulation and the meetings validated before it are the score. Where the
official script would crash (KeyError on an unknown place or person, IndexError on a malformed step) this
module stops the simulation the same way instead. An answer is correct iff its score equals the gold plan's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

PREFIX = "SOLUTION:"
# CPython's strptime regex for "%I:%M%p" in the C locale, matched against the whole string.
_CLOCK = re.compile(r"(?P<I>1[0-2]|0[1-9]|[1-9]):(?P<M>[0-5]\d|\d)(?P<p>am|pm)", re.IGNORECASE)


def parse_clock(text: str) -> int | None:
    """Minutes after midnight for what strptime(text, "%I:%M%p") accepts, else None ("9:00 AM", "14:00")."""
    return _parse_clock(text) if len(text) <= 7 else None  # "12:59PM" is the longest; keeps the cache small


@lru_cache(maxsize=4096)
def _parse_clock(text: str) -> int | None:
    m = _CLOCK.fullmatch(text)
    if m is None:
        return None
    hour = int(m["I"]) % 12 + (12 if m["p"].lower() == "pm" else 0)
    return hour * 60 + int(m["M"])


@dataclass(frozen=True)
class Table:
    """A task's constraints as the simulator reads them: minutes after midnight, dist[from][to] minutes."""

    start: str
    start_time: int
    dist: dict[str, dict[str, int]]
    people: dict[str, tuple[str, int, int, int]]  # name -> (location, opens, closes, minimum minutes)


def prepare(task: dict) -> Table:
    """The simulator's table from an official-style record ("constraints", "dist_matrix"); raises ValueError."""
    try:
        (start, start_clock), *rest = task["constraints"]
        start_time = parse_clock(start_clock)
        people = {}
        for name, location, window, minimum in rest:
            # Like the official reader, cut the window at the substring "to".
            parts = window.split("to")
            opens, closes = parse_clock(parts[0].strip()), parse_clock(parts[1].strip())
            if None in (opens, closes) or not isinstance(minimum, int) or isinstance(minimum, bool):
                raise ValueError(f"bad constraint {[name, location, window, minimum]!r}")
            people[name] = (location, opens, closes, minimum)
        dist = {a: dict(row) for a, row in task["dist_matrix"].items()}
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise ValueError(f"malformed meeting task: {e}") from None
    if start_time is None:
        raise ValueError(f"bad start time {start_clock!r}")
    return Table(start, start_time, dist, people)


def parse_text_plan(text: str) -> list[str]:
    """The official step list: after the first "SOLUTION:", split on ".", stripped, empties dropped."""
    at = text.find(PREFIX)
    if at >= 0:
        text = text[at + len(PREFIX):].strip()
    return [s for s in (p.strip() for p in text.split(".")) if s]


@dataclass
class Simulation:
    """How far the official simulator got: meetings validated, the accepted steps, and why it stopped."""

    count: int = 0
    # (kind, step text, time before, time after, place after, person or "") for every accepted step
    trace: list[tuple[str, str, int, int, str, str]] = field(default_factory=list)
    stopped_at: int = -1  # index of the step that ended the simulation, -1 if every step was accepted
    error: str = ""


def simulate(steps: list[str], table: Table) -> Simulation:
    sim = Simulation()
    place, now, met = table.start, table.start_time, set()
    for i, step in enumerate(steps):
        before = now
        if step.startswith("You start"):
            sim.trace.append(("start", step, now, now, place, ""))
            continue
        if step.startswith("You travel"):
            head = step.split("travel to ")
            if len(head) < 2:
                sim.error = "a travel step without 'travel to '"
                break
            dest = head[1].split(" in")[0].strip()
            minutes = table.dist.get(place, {}).get(dest)  # no self entries: staying put is invalid
            if minutes is None:
                sim.error = f"no travel time from {place} to {dest!r}"
                break
            now, place = now + minutes, dest
            sim.trace.append(("travel", step, before, now, place, ""))
        elif step.startswith("You wait"):
            head = step.split("wait until ")
            if len(head) < 2:
                sim.error = "a wait step without 'wait until '"
                break
            until = parse_clock(head[1].split(".")[0].strip())
            if until is None:
                sim.error = f"cannot read the time in {step!r} (write it like 9:00AM)"
                break
            if until <= now:
                sim.error = "cannot wait until a time that is not later than now"
                break
            now = until
            sim.trace.append(("wait", step, before, now, place, ""))
        elif step.startswith("You meet"):
            head = step.split("meet ")
            if len(head) < 2:
                sim.error = "a meet step without 'meet '"
                break
            person = head[1].split(" for")[0].strip()
            if person in met:
                sim.error = f"{person} was already met"
                break
            met.add(person)
            if person not in table.people:
                sim.error = f"unknown person {person!r}"
                break
            location, opens, closes, minimum = table.people[person]
            if place != location or now < opens or now + minimum > closes:
                sim.error = f"cannot meet {person} for {minimum} minutes at {place} then"
                break
            now += minimum
            sim.count += 1
            sim.trace.append(("meet", step, before, now, place, person))
        else:
            sim.error = "unknown plan format"
            break
    else:
        return sim
    sim.stopped_at = i
    return sim


def official_score(response, task: dict, table: Table | None = None) -> dict:
    """The official verdict inputs for one response: its simulated count and the gold plan's.

    `correct` is the official per-example accuracy (count == gold). Pass a prepared `table` to skip
    re-reading the task's constraints.
    """
    table = table or prepare(task)
    text = response if isinstance(response, str) else ""
    sim = simulate(parse_text_plan(text), table)
    gold = task.get("gold_count")
    if gold is None:
        if not isinstance(task.get("golden_plan"), list):
            raise ValueError("the task has neither a gold_count nor a golden_plan list")
        gold = simulate(task["golden_plan"], table).count  # sentences unsplit, as the official script
    return {"count": sim.count, "gold": gold, "correct": sim.count == gold, "simulation": sim}
