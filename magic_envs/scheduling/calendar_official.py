"""NATURAL PLAN's calendar-scheduling scoring semantics, re-implemented so it never raises.

The official script takes the FIRST match of `[A-Za-z]+, [0-9]+:[0-9]+ - [0-9]+:[0-9]+` in the response, reads
each time as hours plus 0.5 when the minutes are exactly "30", and counts the answer correct when day, start
and end all equal the gold's (day names compared case-sensitively). Extra prose is ignored; shot-gun answers
get the verdict of their first slot only.
"""

from __future__ import annotations

import re

# Python's regex engine would take quadratic time on `[A-Za-z]+, ...` over a megabyte of letters, so find
# the first ", H:MM - H:MM" preceded by a letter, then walk back over the letters: the same first match.
_ANCHOR = re.compile(r"(?<=[A-Za-z]), ([0-9]+):([0-9]+) - ([0-9]+):([0-9]+)")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def first_slot(response: str) -> tuple[str, tuple[str, str], tuple[str, str]] | None:
    """(day, (start_h, start_m), (end_h, end_m)) of the first slot the official regex finds, or None."""
    m = _ANCHOR.search(response)
    if m is None:
        return None
    i = m.start()
    while i > 0 and response[i - 1] in _LETTERS:
        i -= 1
    return response[i:m.start()], (m.group(1), m.group(2)), (m.group(3), m.group(4))


def official_hours(hm: tuple[str, str]) -> float:
    """The official `hour_to_num`: minutes other than '30' count as ':00'."""
    return float(hm[0]) + (0.5 if hm[1] == "30" else 0.0)


def official_parse(response: str) -> tuple[str, float, float]:
    """The official `_parse_response`: ('', -1, -1) when nothing matches."""
    slot = first_slot(response)
    if slot is None:
        return "", -1.0, -1.0
    day, start, end = slot
    return day, official_hours(start), official_hours(end)


def official_correct(response: str, golden_plan: str) -> bool:
    """The official verdict: the first slot of the response equals the gold slot."""
    day, start, end = official_parse(response)
    return day != "" and (day, start, end) == official_parse(golden_plan)
