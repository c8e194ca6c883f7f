"""A second calendar solver that reads only the prompt text, to prove the prompt carries every constraint.

It shares no code with the generator: it parses the sentences back with regular expressions and checks every
half-hour start of every offered day minute by minute. `read_task` also turns NATURAL PLAN's published
prompts (whose wording differs slightly: "do not want to meet", "earlist availability") into task dicts.
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
_PREF = re.compile(r"(\w+) (?:can not meet|would like to avoid more meetings|would rather not meet|does not want "
                   r"to meet|do not want to meet) on (Monday|Tuesday|Wednesday|Thursday|Friday)"
                   r"(?: (before|after) (\d+):(\d\d))?\.")


def _minutes(h: str, m: str) -> int:
    return int(h) * 60 + int(m)


def read_task(prompt: str) -> dict:
    """The task a prompt states (the last `TASK:` of a few-shot prompt), as a calendar task dict."""
    prompt = prompt[prompt.rfind("TASK:"):] if "TASK:" in prompt else prompt
    task = _TASK.search(prompt)
    if task is None:
        raise ValueError("not a calendar-scheduling prompt: no 'schedule a meeting for ... between the work hours'")
    people = [p for p in re.split(r", | and ", task.group(1)) if p]
    days = [d for d in DAYS if re.search(rf"\b{d}\b", task.group(7))]
    busy: dict[str, dict[str, list]] = {p: {} for p in people}
    for line in _BUSY_LINE.finditer(prompt):
        for day, spans in _DAY_SPANS.findall(line.group(2)):
            busy.setdefault(line.group(1), {}).setdefault(day, []).extend(
                [_minutes(a, b), _minutes(c, d)] for a, b, c, d in _SPAN.findall(spans))
    preferences = [{"person": person, "kind": side or "not_day", "day": day,
                    "time": _minutes(h, m) if side else None} for person, day, side, h, m in _PREF.findall(prompt)]
    return {"people": people, "days": days, "duration": WORDS[task.group(2)], "busy": busy,
            "preferences": preferences, "earliest": re.search(r"earl(?:ie|i)st availability", prompt) is not None,
            "hours": [_minutes(task.group(3), task.group(4)), _minutes(task.group(5), task.group(6))]}


def solve_from_prompt(prompt: str) -> str:
    """The answer line a careful reader of `prompt` gives."""
    task = read_task(prompt)
    duration, (open_, close) = task["duration"], task["hours"]

    def ok(day: str, start: int) -> bool:
        end = start + duration
        if any(a < end and start < b for person in task["busy"].values() for a, b in person.get(day, [])):
            return False
        for p in task["preferences"]:
            t = p["time"]
            if p["day"] == day and (p["kind"] == "not_day" or (p["kind"] == "before" and start < t)
                                    or (p["kind"] == "after" and end > t)):
                return False
        return True

    found = [(day, start) for day in task["days"] for start in range(open_, close - duration + 1, 30) if ok(day, start)]
    if not found or (not task["earliest"] and len(found) > 1):
        raise ValueError(f"the prompt does not determine one slot: {len(found)} fit")
    day, start = found[0]
    end = start + duration
    return f"Here is the proposed time: {day}, {start // 60}:{start % 60:02d} - {end // 60}:{end % 60:02d}"


def from_natural_plan(record: dict) -> dict:
    """A task dict from a published NATURAL PLAN record: its 5-shot prompt (as the benchmark prescribes; the
    0-shot one if absent), its golden plan as the gold, and the constraints read back from its 0-shot prompt
    for the strict metric. Published golden slots are not always the only feasible ones; the official
    score follows the golden plan, and `feasible` shows where another answer also fits."""
    task = read_task(record["prompt_0shot"])
    slot = re.search(r"([A-Za-z]+), (\d+):(\d\d) - (\d+):(\d\d)", record["golden_plan"])
    if slot is None:
        raise ValueError("the record's golden_plan has no 'Day, H:MM - H:MM'")
    task["gold"] = {"day": slot[1], "start": _minutes(slot[2], slot[3]), "end": _minutes(slot[4], slot[5])}
    task["prompt"] = record.get("prompt_5shot") or record["prompt_0shot"]
    return task
