"""A second calendar solver that reads only the prompt text, to prove the prompt carries every constraint.

It shares no code with the generator: it parses the sentences back with regular expressions and checks every
half-hour start of every offered day minute by minute.
"""

from __future__ import annotations

import re

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
WORDS = {"half an hour": 30, "one hour": 60, "one and a half hours": 90, "two hours": 120}
_TASK = re.compile(r"schedule a meeting for (.+?) for (half an hour|one hour|one and a half hours|two hours) "
                   r"between the work hours of (\d+):(\d\d) to (\d+):(\d\d) on (.+?)\. ")
_BUSY_LINE = re.compile(r"^(\w+) (?:has blocked their calendar on|is busy on|has meetings on) (.+); ?$", re.M)
_DAY_SPANS = re.compile(r"(Monday|Tuesday|Wednesday|Thursday|Friday) during ((?:\d+:\d\d to \d+:\d\d(?:, )?)+)")
_SPAN = re.compile(r"(\d+):(\d\d) to (\d+):(\d\d)")
_PREF = re.compile(r"(\w+) (can not meet|would like to avoid more meetings|would rather not meet|does not want to "
                   r"meet) on (Monday|Tuesday|Wednesday|Thursday|Friday)(?: (before|after) (\d+):(\d\d))?\.")


def _minutes(h: str, m: str) -> int:
    return int(h) * 60 + int(m)


def solve_from_prompt(prompt: str) -> str:
    """The answer line a careful reader of `prompt` gives."""
    task = _TASK.search(prompt)
    if task is None:
        raise ValueError("not a calendar-scheduling prompt")
    duration = WORDS[task.group(2)]
    open_, close = _minutes(task.group(3), task.group(4)), _minutes(task.group(5), task.group(6))
    days = [d for d in DAYS if re.search(rf"\b{d}\b", task.group(7))]
    busy: dict[str, list[tuple[int, int]]] = {d: [] for d in days}
    for line in _BUSY_LINE.finditer(prompt):
        for day, spans in _DAY_SPANS.findall(line.group(2)):
            busy[day] += [(_minutes(a, b), _minutes(c, d)) for a, b, c, d in _SPAN.findall(spans)]
    rules = []  # (day, kind, minute): a start/end that a preference forbids
    for _, _, day, side, h, m in _PREF.findall(prompt):
        rules.append((day, side or "day", _minutes(h, m) if side else 0))
    earliest = "earliest availability" in prompt

    def ok(day: str, start: int) -> bool:
        end = start + duration
        if any(a < end and start < b for a, b in busy[day]):
            return False
        for rule_day, side, t in rules:
            if rule_day == day and (side == "day" or (side == "before" and start < t) or (side == "after" and end > t)):
                return False
        return True

    found = [(day, start) for day in days for start in range(open_, close - duration + 1, 30) if ok(day, start)]
    if not found or (not earliest and len(found) > 1):
        raise ValueError(f"the prompt does not determine one slot: {len(found)} fit")
    day, start = found[0]
    end = start + duration
    return f"Here is the proposed time: {day}, {start // 60}:{start % 60:02d} - {end // 60}:{end % 60:02d}"
