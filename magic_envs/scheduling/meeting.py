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


def write_plan(places, raw, hop, t0, friends, names, order) -> list[str]:
    """The plan sentences for meeting `order` as early as possible (the oracle's answer)."""
    here, now = 0, t0
    plan = [f"You start at {places[0]} at {clock12(t0)}."]
    for k in order:
        loc, opens, _, need = friends[k]
        while here != loc:
            step = hop[here][loc]
            now, minutes, here = now + raw[here][step], raw[here][step], step
            plan.append(f"You travel to {places[here]} in {minutes} minutes and arrive at {clock12(now)}.")
        if now < opens:  # the official simulator rejects a wait that is not strictly later than now
            now = opens
            plan.append(f"You wait until {clock12(now)}.")
        plan.append(f"You meet {names[k]} for {need} minutes from {clock12(now)} to {clock12(now + need)}.")
        now += need
    return plan


def stated_errors(trace, table: Table) -> int:
    """Accepted steps whose stated place, minutes or clock times disagree with the simulation (or are missing).

    The official scorer ignores everything a step states beyond the destination, wait time and person;
    this stricter count does not. Wait steps state only what the simulator already checked.
    """
    bad = 0
    for kind, step, before, after, _, _ in trace:
        if kind == "wait":
            continue
        m = _STATED[kind].fullmatch(step)
        if m is None or any(len(g) > 9 for g in m.groups()[1:]):
            bad += 1
        elif kind == "start":
            bad += m[1] != table.start or parse_clock(m[2]) != table.start_time
        elif kind == "travel":
            bad += int(m[2]) != after - before or parse_clock(m[3]) != after % 1440
        else:
            bad += (int(m[2]) != after - before or parse_clock(m[3]) != before % 1440
                    or parse_clock(m[4]) != after % 1440)
    return bad


def _arrays(table: Table):
    """Places (start first), the raw travel matrix and (place, opens, closes, minimum) per friend."""
    places = [table.start] + [p[0] for p in table.people.values()]
    places = list(dict.fromkeys(places))
    index = {p: i for i, p in enumerate(places)}
    raw = [[0 if a == b else table.dist[a][b] for b in places] for a in places]
    friends = [(index[loc], opens, closes, need) for loc, opens, closes, need in table.people.values()]
    return places, raw, friends


def _check_task(task) -> Table:
    if not isinstance(task, dict):
        raise ValueError(f"a meeting task must be a dict, got {type(task).__name__}")
    table = prepare(task)
    if len(table.people) != len(task["constraints"]) - 1 or not table.people:
        raise ValueError("a meeting task needs at least one friend and distinct friend names")
    places = [table.start] + [p[0] for p in table.people.values()]
    if not all(isinstance(x, str) and x.strip() for x in places + list(table.people)):
        raise ValueError("every place and name in a meeting task must be a non-empty string")
    for a in places:
        for b in places:
            v = table.dist.get(a, {}).get(b) if a != b else 1
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"dist_matrix needs a positive int travel time from {a!r} to {b!r}, got {v!r}")
    if not isinstance(task.get("prompt", task.get("prompt_0shot")), str):
        raise ValueError("a meeting task needs its 'prompt' text")
    return table


class MeetingEnv(MagicEnv):
    """Plan a day in a town to meet as many friends as possible (NATURAL PLAN's meeting planning).

    ## Description
    You start somewhere in a town at 9:00AM. Each friend waits at their own neighbourhood during a window
    and wants to meet for at least some minutes; travel times between neighbourhoods are asymmetric. The
    agent writes a plan of travel, wait and meet sentences meeting as many friends as possible.

    ## Observation
    The NATURAL PLAN 0-shot prompt: every travel time "<From> to <To>: <N>.", then one CONSTRAINTS line with
    the start and each friend's place, window and minimum, then the answer format.

    ## Action
    Plain text (after any <think> block): "SOLUTION: You start at X at 9:00AM. You travel to Y in N minutes
    and arrive at T. You wait until T2. You meet Name for N minutes from A to B. ..." Times are 12-hour with
    no space before AM/PM, as the official scorer reads them.

    ## Rewards
    The official score (meeting_official.py): the plan is simulated with the true travel times and minimums
    until its first invalid step; reward 1.0 iff the friends met equal the most that can be met, else 0.0.
    `info["metrics"]`: format_ok ("SOLUTION:" present and a plan sentence found), friends_met, gold_friends,
    met_fraction = min(1, met / gold), stated_errors (accepted sentences whose stated start place or time,
    travel minutes, arrival time, meeting length or meeting times are wrong or missing; the official scorer
    ignores them), constraint_score = met_fraction, halved
    when stated_errors > 0 (partial credit for RL; never changes the reward).

    ## Starting State
    Friends and neighbourhoods are distinct; travel times are 5-40 minutes and already shortest (detours
    never help). Windows lie on a 15-minute grid within 7:00AM-10:30PM, minimums in 15..120 minutes, and
    every friend can be met alone. The gold count is exact (DP over friends met x last friend).

    ## Episode End
    After the first non-empty answer. An empty answer is an invalid step that ends nothing; the
    registration's TimeLimit truncates after 3 steps.

    ## Arguments
    * `split`: "train" and "test" (San Francisco, disjoint by fingerprint) or "ood" (London, unseen names).
    * `friends`: int or [min, max] in [1, 10]; default [2, 6], ood [6, 8].
    * `tightness`: float in [0, 1], default 0.5: constraint density. Each window is short with probability
      `tightness` (0-45 minutes longer than the friend's minimum) and long otherwise (1-6 hours longer),
      slack uniform on the 15-minute grid. With 3+ friends, a draw in which everyone can be met is kept
      only with probability (1 - tightness) ** 4, else times and windows are redrawn (the number of
      friends stays). At 0 nothing is redrawn and most friends fit; at 0.5 about 80% of tasks with 3+
      friends leave someone out; at 1 someone always is.
    * `options={"task": task}` pins a task (also an official record with its "prompt_0shot").

    ## Version History
    * v0: initial version.

    >>> import gymnasium, magic_envs
    >>> env = gymnasium.make("magic/Meeting-v0")
    >>> prompt, info = env.reset(seed=0)
    >>> prompt.startswith("You are visiting San Francisco for the day")
    True
    >>> _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
    >>> reward, terminated, info["metrics"]["stated_errors"]
    (1.0, True, 0.0)
    """

    family = "scheduling"
    metric_names = ("format_ok", "friends_met", "gold_friends", "met_fraction", "stated_errors",
                    "constraint_score")
    progress_metrics = ("met_fraction",)

    def __init__(self, split: str = "train", friends=None, tightness: float = 0.5, render_mode: str | None = None):
        super().__init__(split=split, render_mode=render_mode)
        default = (2, 6) if vocab_split(split) == "iid" else (6, 8)
        self.friends = knob_range(default if friends is None else friends, "friends", 1, 10)
        if isinstance(tightness, bool) or not isinstance(tightness, (int, float)) or not 0 <= tightness <= 1:
            raise ValueError(f"tightness must be a number in [0, 1], got {tightness!r}")
        self.tightness = float(tightness)

    def generate(self, rng: np.random.Generator) -> dict:
        vocab = vocab_split(self.split)
        town, hoods = TOWNS[vocab]
        n = draw(rng, self.friends)
        places, names = pick(rng, hoods, n + 1), pick(rng, PEOPLE[vocab], n)
        keep_all = (1.0 - self.tightness) ** 4 if n >= 3 else 1.0
        while True:  # redraw times only, so the number of friends stays as drawn
            raw = self._matrix(rng, n + 1)
            friends = [(k, *self._window(rng, raw[0][k])) for k in range(1, n + 1)]
            order = best_order(raw, START_TIME, friends)
            if len(order) < n or rng.random() < keep_all:
                break
        hop = [list(range(n + 1)) for _ in range(n + 1)]  # the matrix is its own closure: direct legs
        lines = [f"{a} to {b}: {raw[i][j]}." for i, a in enumerate(places) for j, b in enumerate(places) if i != j]
        windows = [f"{clock12(o)} to {clock12(c)}" for _, o, c, _ in friends]
        said = [f"You arrive at {places[0]} at {clock12(START_TIME)}."] + [
            f"{who} will be at {places[f[0]]} from {w}. You'd like to meet {who} for a minimum of {f[3]} minutes."
            for who, f, w in zip(names, friends, windows)]
        prompt = (HEADER.format(town=town) + "\n\nTravel distances (in minutes):\n" + "\n".join(lines)
                  + "\n\nCONSTRAINTS: " + " ".join(said) + "\n\n" + FORMAT)
        return {
            "town": town, "num_people": n, "prompt": prompt,
            "constraints": [[places[0], clock12(START_TIME)]]
            + [[who, places[f[0]], w, f[3]] for who, f, w in zip(names, friends, windows)],
            "dist_matrix": {a: {b: raw[i][j] for j, b in enumerate(places) if i != j} for i, a in enumerate(places)},
            "gold_count": len(order),
            "golden_plan": write_plan(places, raw, hop, START_TIME, friends, names, order),
        }

    def _matrix(self, rng: np.random.Generator, m: int) -> list[list[int]]:
        # Points on a map give near-metric times; small noise makes them asymmetric; the closure makes
        # direct legs shortest, so the gold never depends on detours.
        pts = rng.random((m, 2))
        far = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)) / math.sqrt(2)
        raw = np.clip(np.rint(TRAVEL[0] + (TRAVEL[1] - TRAVEL[0]) * far) + rng.integers(-3, 4, (m, m)), *TRAVEL)
        np.fill_diagonal(raw, 0)
        return closure(raw.astype(int).tolist())[0]

    def _window(self, rng: np.random.Generator, reach: int) -> tuple[int, int, int]:
        need = GRID * int(rng.integers(1, 9))
        short = rng.random() < self.tightness
        slack = GRID * int(rng.integers(0, 4) if short else rng.integers(4, 25))
        # The window must let this friend be met alone, straight from the start.
        lo = max(DAY[0], -(-(START_TIME + reach - slack) // GRID) * GRID)
        opens = lo + GRID * int(rng.integers(0, (DAY[1] - need - slack - lo) // GRID + 1))
        return opens, opens + need + slack, need

    def setup(self, task: dict) -> str:
        table = _check_task(task)
        gold, plan = task.get("gold_count"), task.get("golden_plan")
        if plan is None:
            places, raw, friends = _arrays(table)
            dist, hop = closure(raw)
            order = best_order(dist, table.start_time, friends)
            plan = write_plan(places, raw, hop, table.start_time, friends, list(table.people), order)
        if not isinstance(plan, list) or not all(isinstance(s, str) for s in plan):
            raise ValueError("golden_plan must be a list of sentences")
        count = simulate(plan, table).count  # as the official script, sentences unsplit
        if gold is None:
            gold = count  # an official record: the gold is what its golden plan scores
        if gold != count:
            raise ValueError(f"golden_plan meets {count} friends but gold_count says {gold!r}")
        self._table, self._gold, self._plan = table, gold, plan
        return task.get("prompt", task.get("prompt_0shot"))

    def transition(self, action) -> Outcome:
        text = action.text
        steps = parse_text_plan(text)
        sim = simulate(steps, self._table)
        gold, met = self._gold, sim.count
        fraction = min(1.0, met / gold) if gold else 1.0
        errors = stated_errors(sim.trace, self._table)
        success = met == gold
        note = f"Your plan meets {met} friend(s); the gold plan meets {gold}."
        if sim.stopped_at >= 0:
            note += f" Step {sim.stopped_at + 1} was not accepted: {sim.error}."
        return Outcome(note, terminated=True, score=float(success), success=success, metrics={
            "format_ok": float(PREFIX in text and any(s.startswith(KINDS) for s in steps)),
            "friends_met": float(met), "gold_friends": float(gold), "met_fraction": fraction,
            "stated_errors": float(errors), "constraint_score": fraction * (0.5 if errors else 1.0)})

    def oracle_action(self) -> str:
        return PREFIX + " " + " ".join(self._plan)

    def random_action(self, rng: np.random.Generator) -> str:
        table, plan = self._table, [f"You start at {self._table.start} at {clock12(self._table.start_time)}."]
        names = list(table.people)

        def clock() -> str:
            return clock12(DAY[0] + GRID * int(rng.integers(0, (DAY[1] - DAY[0]) // GRID + 1)))

        for who in pick(rng, names, int(rng.integers(1, len(names) + 1))):
            loc, _, _, need = table.people[who]
            plan.append(f"You travel to {loc} in {int(rng.integers(*TRAVEL))} minutes and arrive at {clock()}.")
            if rng.random() < 0.5:
                plan.append(f"You wait until {clock()}.")
            plan.append(f"You meet {who} for {need} minutes from {clock()} to {clock()}.")
        return PREFIX + " " + " ".join(plan)
