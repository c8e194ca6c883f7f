"""A second meeting-planning solver that sees only the prompt text, as the agent does.

It reads every travel time, the start and each friend's place, window and minimum from the observation,
then searches meeting orders depth first (branch and bound) over shortest routes found by Bellman-Ford:
a different algorithm from the generator's subset DP. If it matches the gold on every tested seed, the
prompt holds every constraint the scorer uses.
"""

from __future__ import annotations

import re

_EDGE = re.compile(r"^(.+?) to (.+): (\d+)\.$", re.M)
_ARRIVE = re.compile(r"You arrive at (.+?) at (\d{1,2}:\d\d[AP]M)\.")
_FRIEND = re.compile(r"(\S+) will be at (.+?) from (\d{1,2}:\d\d[AP]M) to (\d{1,2}:\d\d[AP]M)\. "
                     r"You'd like to meet \1 for a minimum of (\d+) minutes\.")


def _minutes(clock: str) -> int:
    hours, rest = clock.split(":")
    return int(hours) % 12 * 60 + int(rest[:2]) + (720 if rest.endswith("PM") else 0)


def _clock(minutes: int) -> str:
    hours, mins = divmod(minutes % 1440, 60)
    return f"{(hours + 11) % 12 + 1}:{mins:02d}{'PM' if hours >= 12 else 'AM'}"


def read_prompt(prompt: str):
    """(edges {from: {to: minutes}}, start, start time, [(name, place, opens, closes, minimum)])."""
    table = prompt.split("Travel distances (in minutes):", 1)[1].split("CONSTRAINTS:", 1)
    edges: dict[str, dict[str, int]] = {}
    for a, b, n in _EDGE.findall(table[0]):
        edges.setdefault(a, {})[b] = int(n)
    start, clock = _ARRIVE.search(table[1]).groups()
    friends = [(who, where, _minutes(a), _minutes(b), int(n)) for who, where, a, b, n in _FRIEND.findall(table[1])]
    return edges, start, _minutes(clock), friends


def _routes(edges: dict[str, dict[str, int]], source: str):
    """Bellman-Ford from `source`: shortest time and predecessor of every reachable place."""
    best, prev = {source: 0}, {}
    for _ in range(len(edges) + 1):
        changed = False
        for a, row in edges.items():
            if a not in best:
                continue
            for b, n in row.items():
                if best[a] + n < best.get(b, 1 << 30):
                    best[b], prev[b], changed = best[a] + n, a, True
        if not changed:
            break
    return best, prev


def solve_from_prompt(prompt: str) -> str:
    """The answer text ("SOLUTION: ...") of a plan meeting as many friends as possible."""
    edges, start, t0, friends = read_prompt(prompt)
    routes = {p: _routes(edges, p) for p in {start, *(f[1] for f in friends)}}
    best: list = [[]]

    def search(place: str, now: int, left: list, path: list) -> None:
        if len(path) > len(best[0]):
            best[0] = path
        reachable = []
        for f in left:
            time = routes[place][0].get(f[1])
            if time is not None and max(now + time, f[2]) + f[4] <= f[3]:
                reachable.append(f)
        if len(path) + len(reachable) <= len(best[0]):  # even meeting every reachable friend would not win
            return
        for f in reachable:
            done = max(now + routes[place][0][f[1]], f[2]) + f[4]
            search(f[1], done, [g for g in left if g is not f], path + [f])
            if len(best[0]) == len(friends):
                return

    search(start, t0, friends, [])
    plan, place, now = [f"You start at {start} at {_clock(t0)}."], start, t0
    for who, where, opens, _, need in best[0]:
        hops, prev = [where], routes[place][1]
        while hops[-1] != place:
            hops.append(prev[hops[-1]])
        for a, b in zip(hops[::-1], hops[-2::-1]):
            now += edges[a][b]
            plan.append(f"You travel to {b} in {edges[a][b]} minutes and arrive at {_clock(now)}.")
        if now < opens:
            now = opens
            plan.append(f"You wait until {_clock(now)}.")
        plan.append(f"You meet {who} for {need} minutes from {_clock(now)} to {_clock(now + need)}.")
        place, now = where, now + need
    return "SOLUTION: " + " ".join(plan)
