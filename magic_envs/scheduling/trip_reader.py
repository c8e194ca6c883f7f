"""A second trip solver that sees only the prompt: it reads every rule from the text and tries every order.

It shares no reading or solving code with the env (only the writer of the answer text), so if it finds the
gold, the prompt says everything the scorer relies on.
Up to 8 cities it checks all permutations; beyond that it extends partial itineraries breadth-first.
`from_natural_plan` uses the same reading to load NATURAL PLAN's published records.
"""

from __future__ import annotations

import itertools
import re

from magic_envs.scheduling.trip_official import plan_text

_HEADER = re.compile(r"You plan to visit (\d+) (.+?) for (\d+) days in total\.")
_STAYS = (re.compile(r"You plan to stay in (?P<c>\w+) for (?P<n>\d+) days\."),
          re.compile(r"You want to spend (?P<n>\d+) days in (?P<c>\w+)\."),
          re.compile(r"You would like to visit (?P<c>\w+) for (?P<n>\d+) days\."))
_EVENTS = (re.compile(r"(?:attend a wedding|visit relatives|attend a workshop|meet a friend) in (?P<c>\w+) "
                      r"between day (?P<a>\d+) and day (?P<b>\d+)\."),
           re.compile(r"From day (?P<a>\d+) to day (?P<b>\d+), there is an? annual show you want to attend "
                      r"in (?P<c>\w+)\."),
           re.compile(r"During day (?P<a>\d+) and day (?P<b>\d+), you have to attend a conference in (?P<c>\w+)\."),
           re.compile(r"meet your friends at (?P<c>\w+) between day (?P<a>\d+) and day (?P<b>\d+) to tour together\."))
_FLIGHTS = re.compile(r"Here are the cities that have direct flights:\n(.*?)\.\n")


def read_prompt(prompt: str) -> dict:
    """The rules of a trip prompt: phrase, total days, stays, event windows and directed flights."""
    header = _HEADER.search(prompt)
    if header is None:
        raise ValueError("not a trip prompt: no 'You plan to visit N ... for D days in total.'")
    body = prompt[header.end():prompt.index("Here are the cities")]
    stays = {m["c"]: int(m["n"]) for pattern in _STAYS for m in pattern.finditer(body)}
    events = {m["c"]: (int(m["a"]), int(m["b"])) for pattern in _EVENTS for m in pattern.finditer(body)}
    edges = set()
    for item in _FLIGHTS.search(prompt).group(1).split(", "):
        one_way = re.fullmatch(r"from (\w+) to (\w+)", item)
        both = re.fullmatch(r"(\w+) and (\w+)", item)
        if one_way:
            edges.add(one_way.groups())
        elif both:
            edges |= {both.groups(), both.groups()[::-1]}
        else:
            raise ValueError(f"unreadable flight {item!r}")
    if len(stays) != int(header[1]) or sum(stays.values()) - (len(stays) - 1) != int(header[3]):
        raise ValueError(f"read stays {stays} that do not fit {header[1]} cities and {header[3]} days")
    return {"phrase": header[2], "days": int(header[3]), "stays": stays, "events": events, "edges": edges}


def _valid_prefix(order, rules) -> bool:
    day = 1
    for k, city in enumerate(order):
        if k and (order[k - 1], city) not in rules["edges"]:
            return False
        end = day + rules["stays"][city] - 1
        window = rules["events"].get(city)
        if window and not (day <= window[0] and window[1] <= end):
            return False
        day = end
    return True


def solutions(rules: dict) -> list[tuple]:
    cities = sorted(rules["stays"])
    if len(cities) <= 8:
        return [p for p in itertools.permutations(cities) if _valid_prefix(p, rules)]
    layer = [(c,) for c in cities if _valid_prefix((c,), rules)]
    for _ in range(len(cities) - 1):
        layer = [p + (c,) for p in layer for c in cities if c not in p and _valid_prefix(p + (c,), rules)]
    return layer


def solve_from_prompt(prompt: str) -> str:
    """The plan text for a trip prompt, in NATURAL PLAN's format; raises if no itinerary fits."""
    rules = read_prompt(prompt)
    found = solutions(rules)
    if not found:
        raise ValueError("no itinerary satisfies the prompt")
    order = found[0]
    # Only the writing of the answer is shared with the env: reading and solving are independent.
    return plan_text(rules["phrase"], order, [rules["stays"][c] for c in order], rules["days"])


def from_natural_plan(record: dict) -> dict:
    """A task dict from a published NATURAL PLAN record: the rules read back from its 0-shot prompt, the gold
    from its `cities`/`durations` fields (as the official scorer takes it), shown with its 5-shot prompt (as
    the benchmark prescribes; the 0-shot one if absent)."""
    try:
        rules = read_prompt(record["prompt_0shot"])
    except (AttributeError, KeyError, ValueError) as e:
        raise ValueError(f"unreadable NATURAL PLAN trip record: {e}") from e
    cities = [c for c in record["cities"].split("**") if c]
    durations = [int(d) for d in str(record["durations"]).split("**") if d]
    edges = rules["edges"]
    flights = [[a, b, (b, a) not in edges] for a, b in sorted(edges) if (b, a) not in edges or a < b]
    return {"region": rules["phrase"].split()[0], "total_days": rules["days"],
            "stays": [[c, n] for c, n in rules["stays"].items()],
            "events": [[c, a, b] for c, (a, b) in rules["events"].items()], "flights": flights,
            "cities": cities, "durations": durations, "golden_plan": record["golden_plan"],
            "prompt": record.get("prompt_5shot") or record["prompt_0shot"]}
