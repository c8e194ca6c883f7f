r"""NATURAL PLAN's trip-planning verdict (evaluate_trip_planning.py), re-implemented so it never raises or stalls.

The official parser reads an answer line by line (lines split on "\n"), in this order per line:

* `European cities for (\d+) days` sets the total number of days (the plan's header line);
* the first `\d+-\d+` of a line is a stay range; a range ending on that total ends the parse, so a second,
  alternative plan written after the first is never read (and that last line is not checked for a flight);
* `.*Day (\d+).*from (\w+) to (\w+)` is a flight: the last "Day N" before the last "from X to Y".

Cities come only from flights (the first flight's origin, then every destination); "Visit X" text is never
read. With flight days f_1..f_k, day 1 in front and the last range's end behind, city i stays
f[i+1] - f[i] + 1 days: the flight day counts for both cities. No range, no flight: nothing parsed.
The verdict is an exact, position-wise match of (city, days) with the gold, stopping at the first mismatch;
parsed cities beyond the gold's length are ignored, as officially.

Where this differs from the script, on purpose:
* the total-days phrase is the task's own: "European cities" for IID tasks (the official regex exactly),
  "cities around the world" for OOD ones;
* the official regexes backtrack quadratically on long lines (a 1 MB answer would run for hours), so the
  matchers below find the same first match by scanning; tests check them against the regexes;
* a number over 4000 digits (where Python's int() refuses and the script would crash) equals nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_RANGE = re.compile(r"(?<!\d)\d+-(\d+)")  # the leftmost \d+-\d+ starts where a digit run starts
_LEG = re.compile(r"from (\w+) to (\w+)")
_DIGITS = re.compile(r"\d+")
_NEVER = float("nan")  # a day number too long to read: equal to nothing, itself included


def region_phrase(region: str) -> str:
    """How a task names its cities in the prompt and the plan header."""
    return "cities around the world" if region == "world" else f"{region} cities"


def plan_text(phrase: str, cities: list, durations: list, total_days: int) -> str:
    """A plan in NATURAL PLAN's golden-plan format."""
    lines = [f"Here is the trip plan for visiting the {len(cities)} {phrase} for {total_days} days:", ""]
    start = 1
    for i, (city, days) in enumerate(zip(cities, durations)):
        end = start + days - 1
        if i == 0:
            lines.append(f"**Day 1-{end}:** Arriving in {city} and visit {city} for {days} days.")
        else:
            lines.append(f"**Day {start}:** Fly from {cities[i - 1]} to {city}.")
            lines.append(f"**Day {start}-{end}:** Visit {city} for {days} days.")
        start = end
    return "\n".join(lines)


def _int(digits: str):
    return int(digits) if len(digits) <= 4000 else _NEVER


def first_range_end(line: str):
    """The end day of the line's first `\\d+-\\d+`, or None."""
    m = _RANGE.search(line)
    return None if m is None else _int(m.group(1))


def last_flight(line: str):
    """What `re.findall(r'.*Day (\\d+).*from (\\w+) to (\\w+)', line)[0]` gives, as (day, from, to), or None.

    The greedy `.*`s pick the rightmost "from X to Y" and then the rightmost "Day <digits>" ending before it.
    """
    q = line.rfind("from ")
    while q != -1:
        leg = _LEG.match(line, q)
        if leg:
            break
        q = line.rfind("from ", 0, q)
    if q == -1:
        return None
    p = line.rfind("Day ", 0, q)
    while p != -1:
        day = _DIGITS.match(line, p + 4, q)
        if day:
            return _int(day.group()), leg.group(1), leg.group(2)
        p = line.rfind("Day ", 0, p)
    return None


@dataclass
class OfficialResult:
    """The official verdict and what it was computed from."""

    plan: list = field(default_factory=list)  # [(city, stay_days)], empty when nothing parsed
    flights: list = field(default_factory=list)  # [(day, from_city, to_city)] as read
    last_day: object = None  # end of the last range read
    num_match: int = 0  # gold (city, days) pairs matched in order before the first mismatch
    hard: float = 0.0  # 1.0 iff every gold pair matched


def parse_response(response: str, phrase: str = "European cities") -> tuple[list, list, object]:
    """(plan, flights, last_day) of an answer, read the official way."""
    total_days = None
    days_pattern = re.compile(re.escape(phrase) + r" for (\d+) days")
    last_day, flights = None, []
    for line in response.split("\n"):
        header = days_pattern.search(line)
        if header:
            total_days = _int(header.group(1))
        end = first_range_end(line)
        if end is not None:
            last_day = end
            if end == total_days:
                break
        flight = last_flight(line)
        if flight:
            flights.append(flight)
    if last_day is None or not flights:
        return [], flights, last_day
    cities = [flights[0][1]] + [to for _, _, to in flights]
    marks = [1] + [day for day, _, _ in flights] + [last_day]
    plan = [(city, marks[i + 1] - marks[i] + 1) for i, city in enumerate(cities)]
    return plan, flights, last_day


def example_score(cities: list, durations: list, plan: list) -> tuple[int, float]:
    """(num_match, hard score) of a parsed plan against the gold cities and durations."""
    num_match = 0
    for gold, got in zip(zip(cities, durations), plan):
        if gold[0] != got[0] or gold[1] != got[1]:
            break
        num_match += 1
    return num_match, float(bool(cities) and num_match == len(cities))


def official_score(response, task: dict) -> OfficialResult:
    """The official verdict on `response` for a trip task dict (its region, cities and durations)."""
    if not isinstance(response, str):
        return OfficialResult()
    plan, flights, last_day = parse_response(response, region_phrase(task.get("region", "European")))
    num_match, hard = example_score(list(task["cities"]), list(task["durations"]), plan)
    return OfficialResult(plan, flights, last_day, num_match, hard)
