"""NATURAL PLAN meeting planning: travel around a town to meet as many friends as their windows allow."""

from __future__ import annotations

import math
import re

import numpy as np

from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.scheduling.common import PEOPLE, TOWNS, clock12, draw, knob_range, pick, vocab_split
from magic_envs.scheduling.meeting_official import PREFIX, Table, parse_clock, parse_text_plan, prepare, simulate

START_TIME = 9 * 60
DAY = (7 * 60, 22 * 60 + 30)  # every window lies within 7:00AM-10:30PM, on a 15-minute grid
GRID, TRAVEL = 15, (5, 40)
KINDS = ("You start", "You travel", "You wait", "You meet")
HEADER = ("You are visiting {town} for the day and want to meet as many friends as possible. Solve the problem "
          "by considering various different schedules and picking the best one to optimize your goals.")
FORMAT = ("Your response should start with 'SOLUTION:'. Write your plan as sentences of the forms \"You start "
          "at <place> at 9:00AM.\", \"You travel to <place> in <N> minutes and arrive at <time>.\", \"You wait "
          "until <time>.\" and \"You meet <name> for <N> minutes from <time> to <time>.\", with times written "
          "like 9:00AM or 1:30PM.")
_STATED = {"start": re.compile(r"You start at (.+) at (\S+)"),
           "travel": re.compile(r"You travel to (.+) in (\d+) minutes and arrive at (\S+)"),
           "meet": re.compile(r"You meet (.+) for (\d+) minutes from (\S+) to (\S+)")}


def closure(dist: list[list[int]]) -> tuple[list[list[int]], list[list[int]]]:
    """Shortest travel times (Floyd-Warshall) and next hops: the simulator allows routing via other places."""
    n = len(dist)
    d = [row[:] for row in dist]
    hop = [list(range(n)) for _ in range(n)]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                if d[i][k] + d[k][j] < d[i][j]:  # strict, so a direct leg wins ties
                    d[i][j], hop[i][j] = d[i][k] + d[k][j], hop[i][k]
    return d, hop


def best_order(dist: list[list[int]], t0: int, friends: list[tuple[int, int, int, int]]) -> list[int]:
    """An order of friends meeting as many as possible; dist must be shortest times, place 0 the start.

    friends[k] = (place, opens, closes, minimum). DP over (set met, last friend) of the earliest finish,
    meeting each friend for exactly their minimum as early as possible. This is exact: in the official
    simulator a meeting lasts the minimum, waiting only moves time forward, routes are never shorter than
    shortest times, and a window check (start >= opens, end <= closes) can only fail later, never earlier;
    so for any valid plan the DP reaches each of its prefixes no later than the plan does.
    """
    n, inf = len(friends), 1 << 30
    finish = [[inf] * n for _ in range(1 << n)]
    parent: dict[tuple[int, int], int] = {}
    for j, (loc, opens, closes, need) in enumerate(friends):
        end = max(t0 + dist[0][loc], opens) + need
        if end <= closes:
            finish[1 << j][j] = end
    best, best_state = 0, (0, -1)
    for mask in range(1, 1 << n):  # a state's predecessors have smaller masks
        row, count = finish[mask], bin(mask).count("1")
        for j in range(n):
            now = row[j]
            if now >= inf:
                continue
            if count > best:
                best, best_state = count, (mask, j)
            here = dist[friends[j][0]]
            for k, (loc, opens, closes, need) in enumerate(friends):
                if mask >> k & 1:
                    continue
                end = max(now + here[loc], opens) + need
                nxt = mask | 1 << k
                if end <= closes and end < finish[nxt][k]:
                    finish[nxt][k], parent[nxt, k] = end, j
    order, (mask, j) = [], best_state
    while j >= 0:
        order.append(j)
        mask, j = mask & ~(1 << j), parent.get((mask, j), -1)
    return order[::-1]


def write_plan(places, dist, hop, t0, friends, names, order) -> list[str]:
    """The plan sentences for meeting `order` as early as possible (the oracle's answer)."""
    here, now = 0, t0
    plan = [f"You start at {places[0]} at {clock12(t0)}."]
    for k in order:
        loc, opens, _, need = friends[k]
        while here != loc:
            step = hop[here][loc]
            now += dist[here][step]
            here = step
            plan.append(f"You travel to {places[here]} in {dist[hop[here][here]][here] if False else 0} "
                        if False else f"You travel to {places[here]} in {{}} minutes and arrive at {clock12(now)}.")
        if now < opens:  # the official simulator rejects a wait that is not strictly later than now
            now = opens
            plan.append(f"You wait until {clock12(now)}.")
        plan.append(f"You meet {names[k]} for {need} minutes from {clock12(now)} to {clock12(now + need)}.")
        now += need
    return plan
