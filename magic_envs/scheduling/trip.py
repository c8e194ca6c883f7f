"""Trip planning in NATURAL PLAN's style: visit every city for its stay, flying direct, on the event days."""

from __future__ import annotations

import re

import numpy as np

from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.core.grammar import ParsedAction
from magic_envs.scheduling.common import CITIES, CITY_REGION, draw, knob_range, pick, vocab_split
from magic_envs.scheduling.trip_official import official_score, plan_text, region_phrase
from magic_envs.scheduling.trip_reader import from_natural_plan

STAY_SENTENCES = ("You plan to stay in {c} for {n} days.", "You want to spend {n} days in {c}.",
                  "You would like to visit {c} for {n} days.")
EVENT_SENTENCES = ("You are going to attend a wedding in {c} between day {a} and day {b}.",
                   "You plan to visit relatives in {c} between day {a} and day {b}.",
                   "You have to attend a workshop in {c} between day {a} and day {b}.",
                   "From day {a} to day {b}, there is an annual show you want to attend in {c}.",
                   "You want to meet a friend in {c} between day {a} and day {b}.",
                   "During day {a} and day {b}, you have to attend a conference in {c}.",
                   "You would like to meet your friends at {c} between day {a} and day {b} to tour together.")
_WORD = re.compile(r"\w+")
ONE_WAY = 0.05  # NATURAL PLAN's share of "from A to B" flights (57 of 1363 in the public subset)


def solve(stays: dict, events: dict, flights: list, limit: int = 2) -> list[list[str]]:
    """Up to `limit` itineraries (city orders) that fly direct and cover every event window.

    Depth-first along the directed flight graph. The cities already visited fix the next arrival day, so a
    (visited, current) state that led nowhere is remembered and never searched again.
    """
    names = sorted(stays)
    index = {c: i for i, c in enumerate(names)}
    adj = [set() for _ in names]
    for a, b, one_way in flights:
        adj[index[a]].add(index[b])
        if not one_way:
            adj[index[b]].add(index[a])
    adj = [sorted(s) for s in adj]
    length = [stays[c] for c in names]
    window = [events.get(c) for c in names]
    timed = [i for i, w in enumerate(window) if w]
    full, found, dead = (1 << len(names)) - 1, [], set()

    def fits(i, start):
        w = window[i]
        return w is None or (start <= w[0] and start + length[i] - 1 >= w[1])

    def search(path, mask, start):
        cur = path[-1]
        end = start + length[cur] - 1
        if mask == full:
            found.append([names[i] for i in path])
            return
        # every later stay starts on or after `end`: an unvisited event that starts earlier is lost
        if (mask, cur) in dead or any(not mask >> i & 1 and window[i][0] < end for i in timed):
            return
        before = len(found)
        for nxt in adj[cur]:
            if not mask >> nxt & 1 and fits(nxt, end):
                path.append(nxt)
                search(path, mask | 1 << nxt, end)
                path.pop()
                if len(found) >= limit:
                    return
        if len(found) == before:
            dead.add((mask, cur))

    for first in range(len(names)):
        if fits(first, 1):
            search([first], 1 << first, 1)
            if len(found) >= limit:
                break
    return found


def stay_ranges(cities: list, durations: list) -> dict:
    ranges, start = {}, 1
    for city, days in zip(cities, durations):
        ranges[city] = [start, start + days - 1]
        start += days - 1
    return ranges


def check_plan(task: dict, plan: list, flights: list, last_day) -> tuple[int, int]:
    """(violations, constraints) of a parsed plan, checked strictly against every rule of the task.

    Constraints: the total days (1), each city visited exactly once (n), each city's total stay (n), each
    event window covered by a stay there (e), and each of the n-1 flights direct, in an allowed direction,
    from the city the traveller is in. Unknown cities and extra flights add violations on top.
    """
    stays = dict(task["stays"])
    n = len(stays)
    total = 1 + 2 * n + len(task["events"]) + n - 1
    allowed = set()
    for a, b, one_way in task["flights"]:
        allowed.add((a, b))
        if not one_way:
            allowed.add((b, a))
    marks = [1] + [day for day, _, _ in flights] + [last_day]
    visits = [city for city, _ in plan]
    bad = sum(frm != visits[i] or (frm, to) not in allowed for i, (_, frm, to) in enumerate(flights))
    bad += sum(1 for city in set(visits) if city not in stays)
    for city, days in stays.items():
        bad += visits.count(city) != 1
        bad += sum(d for c, d in plan if c == city) != days
    for city, a, b in task["events"]:
        bad += not any(c == city and marks[i] <= a and marks[i + 1] >= b for i, c in enumerate(visits))
    bad += last_day != task["total_days"]
    return int(bad), total


def listing_order(rng: np.random.Generator, n: int) -> list[int]:
    """The order the stays are listed in: random, but never the itinerary itself, so that visiting the
    cities in the order they are listed is not a strategy that wins by luck."""
    order = rng.permutation(n).tolist()
    while n > 1 and order == list(range(n)):
        order = rng.permutation(n).tolist()
    return order


def render_prompt(task: dict, rng: np.random.Generator | None = None) -> str:
    """The task in NATURAL PLAN's words; without `rng`, the first wording of every sentence."""
    def variant(k):
        return 0 if rng is None else int(rng.integers(k))
    phrase, days, n = region_phrase(task["region"]), task["total_days"], len(task["stays"])
    events = {city: (a, b) for city, a, b in task["events"]}
    sentences = []
    for city, stay in task["stays"]:
        sentences.append(STAY_SENTENCES[variant(3)].format(c=city, n=stay))
        if city in events:
            sentences.append(EVENT_SENTENCES[variant(7)].format(c=city, a=events[city][0], b=events[city][1]))
    flights = ", ".join(f"from {a} to {b}" if one_way else f"{a} and {b}" for a, b, one_way in task["flights"])
    return (f"You plan to visit {n} {phrase} for {days} days in total. You only take direct flights to commute "
            f"between cities. {' '.join(sentences)}\n\nHere are the cities that have direct flights:\n{flights}."
            f"\n\nFind a trip plan of visiting the cities for {days} days by taking direct flights to commute "
            "between them.\n\nWrite the plan in this format, one line per stay and one per flight (the day you "
            f"fly counts as a day in both cities):\nHere is the trip plan for visiting the {n} {phrase} for "
            f"{days} days:\n\n**Day 1-a:** Arriving in <City> and visit <City> for <n> days.\n**Day a:** Fly "
            "from <City> to <Next>.\n**Day a-b:** Visit <Next> for <m> days.")


def _fraction(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


class TripEnv(MagicEnv):
    """Plan a trip through several cities with fixed stays, fixed event days and direct flights only.

    ## Description
    NATURAL PLAN's trip-planning task (Zheng et al., 2024). The traveller visits N cities for D days, staying
    a given number of days in each; some cities hold an event (a wedding, a conference...) on given days,
    and only the listed direct flights may be taken ("A and B" both ways, "from A to B" one way). The day
    of a flight counts for both cities, so the stays sum to D + N - 1. Every generated task has exactly
    one valid itinerary (an exact solver checks it), which is the gold.

    ## Observation
    The task text (NATURAL PLAN's zero-shot prompt) followed by one paragraph showing the answer format.

    ## Action
    Plain text: the plan, in NATURAL PLAN's format (`**Day 1-3:** Arriving in X and visit X for 3 days.`,
    `**Day 3:** Fly from X to Y.`, `**Day 3-7:** Visit Y for 5 days.`). Only the flight lines and the day
    ranges are read, exactly as the official evaluator does; `<think>` blocks are ignored.

    ## Rewards
    The official exact-match score: 1.0 iff the cities and stays read from the plan equal the gold
    itinerary in order, else 0.0. Metrics: `format_ok` (a plan was read), `stays_matched` (gold stays
    matched in order before the first mismatch, over N), `violations` (rules the plan breaks, checked
    strictly: flights not listed or against a one-way direction, wrong total stays, cities missing,
    repeated or unknown, uncovered events, wrong total days; all 3N+E of them when nothing was read) and
    `constraint_score` = 1 - violations / (3N + E), clipped to [0, 1] and 0 when nothing was read (partial
    credit for RL; the score itself is the official one).

    ## Starting State
    A task drawn from the env's RNG: cities, stays of 2..`max_stay` days, a hidden order, the flights of
    that order plus random extra ones, events on some cities, and events added or extra flights removed
    until the order is the only solution. The stay sentences are listed in an order independent of it.

    A task may also be pinned with `reset(options={"task": ...})`: a saved task, or a published NATURAL PLAN
    record (`cities`, `durations`, `prompt_0shot`, `prompt_5shot`, `golden_plan`), shown with its 5-shot prompt.

    ## Episode End
    After the first well-formed answer (terminated). Empty or malformed actions get an error and a retry,
    up to the registered limit of 3 steps.

    ## Arguments
    * `split`: "train" / "test" (NATURAL PLAN's 48 European cities) or "ood" (unseen cities elsewhere).
    * `cities`: number of cities, an int or [min, max] within [2, 10]; default [3, 6], ood [6, 8].
    * `days`: total days of the trip, an int or [min, max] (default: whatever the stays add up to).
    * `max_stay`: longest stay in days, 2..14 (default 7).
    * `flight_density`: share of the non-itinerary city pairs that get a direct flight (default 0.3).
    * `events`: expected share of cities with an event (default 0.4; uniqueness may add more).

    ## Version History
    * v0: initial version.

    >>> import gymnasium, magic_envs
    >>> env = gymnasium.make("magic/Trip-v0")
    >>> observation, info = env.reset(seed=0)
    >>> _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
    >>> reward, terminated, info["metrics"]["constraint_score"]
    (1.0, True, 1.0)
    """

    family = "scheduling"
    metric_names = ("format_ok", "stays_matched", "violations", "constraint_score")
    progress_metrics = ("constraint_score",)

    def __init__(self, split: str = "train", cities=None, days=None, max_stay: int = 7, flight_density: float = 0.3,
                 events: float = 0.4, render_mode: str | None = None):
        super().__init__(split=split, render_mode=render_mode)
        default = (6, 8) if vocab_split(split) == "ood" else (3, 6)
        self.n_cities = knob_range(default if cities is None else cities, "cities", 2, 10)
        if isinstance(max_stay, bool) or not isinstance(max_stay, (int, np.integer)) or not 2 <= max_stay <= 14:
            raise ValueError(f"max_stay must be an int in [2, 14], got {max_stay!r}")
        self.max_stay = int(max_stay)
        # Total days, when asked for: every city count drawn must be able to fill them with stays of 2..max_stay.
        self.days = None if days is None else knob_range(days, "days", 2, 10 * self.max_stay)
        if self.days and any(self._day_range(n) is None for n in range(self.n_cities[0], self.n_cities[1] + 1)):
            raise ValueError(f"days={days!r} cannot be filled by {cities or default} cities staying 2..{max_stay} "
                             "days each (a flight day counts for both cities)")
        self.flight_density = _fraction(flight_density, "flight_density")
        self.event_share = _fraction(events, "events")
        self._oracle, self._task = "", {}

    def _day_range(self, n: int) -> tuple[int, int] | None:
        lo, hi = max(self.days[0], n + 1), min(self.days[1], n * (self.max_stay - 1) + 1)
        return (lo, hi) if lo <= hi else None

    def _stays(self, rng: np.random.Generator, n: int) -> list[int]:
        """Stays of 2..max_stay days, adding up to a drawn total when the `days` knob is set."""
        if self.days is None:
            return [int(x) for x in rng.integers(2, self.max_stay + 1, size=n)]
        stays, extra = [2] * n, draw(rng, self._day_range(n)) + n - 1 - 2 * n
        for _ in range(extra):  # one day at a time to a random city with room left
            room = [k for k in range(n) if stays[k] < self.max_stay]
            stays[room[int(rng.integers(len(room)))]] += 1
        return stays

    def generate(self, rng: np.random.Generator) -> dict:
        vocab = vocab_split(self.split)
        n = draw(rng, self.n_cities)
        gold = pick(rng, CITIES[vocab], n)
        durations = self._stays(rng, n)
        ranges = stay_ranges(gold, durations)
        flights = [[a, b, bool(rng.random() < ONE_WAY)] for a, b in zip(gold, gold[1:])]
        for i in range(n):
            for j in range(i + 2, n):
                if rng.random() < self.flight_density:
                    a, b = (gold[i], gold[j]) if rng.random() < 0.5 else (gold[j], gold[i])
                    flights.append([a, b, bool(rng.random() < ONE_WAY)])
        events = {c: ranges[c] for c in gold if rng.random() < self.event_share}
        stays = dict(zip(gold, durations))
        path = {frozenset(p) for p in zip(gold, gold[1:])}
        while len(found := solve(stays, events, flights)) > 1:
            other = found[0] if found[0] != gold else found[1]
            extra = [k for k, (a, b, _) in enumerate(flights) if frozenset((a, b)) not in path
                     and any({a, b} == {x, y} for x, y in zip(other, other[1:]))]
            if extra and rng.random() < 0.5:
                flights.pop(extra[int(rng.integers(len(extra)))])
            else:  # cities under an event sit on their gold days in every solution, so one of these exists
                theirs = stay_ranges(other, [stays[c] for c in other])
                moved = [c for c in gold if c not in events and ranges[c] != theirs[c]]
                city = moved[int(rng.integers(len(moved)))]
                events[city] = ranges[city]
        assert found == [gold], "the generator's gold must be the unique solution"
        flights = [flights[k] for k in rng.permutation(len(flights))]
        flights = [[b, a, w] if not w and rng.random() < 0.5 else [a, b, w] for a, b, w in flights]
        task = {"region": CITY_REGION[vocab], "total_days": sum(durations) - (n - 1),
                "stays": [[gold[k], durations[k]] for k in listing_order(rng, n)],
                "events": [[c, *ranges[c]] for c in gold if c in events],
                "flights": flights, "cities": gold, "durations": durations}
        task["prompt"] = render_prompt(task, rng)
        task["golden_plan"] = plan_text(region_phrase(task["region"]), gold, durations, task["total_days"])
        return task

    def setup(self, task: dict) -> str:
        if isinstance(task.get("cities"), str) and "prompt_0shot" in task:
            task = from_natural_plan(task)
        _validate(task)
        stays = dict(task["stays"])
        if "cities" not in task:  # a hand-written task without its gold: solve it here
            found = solve(stays, {c: (a, b) for c, a, b in task["events"]}, task["flights"], limit=1)
            if not found:
                raise ValueError("trip task has no valid itinerary")
            task["cities"], task["durations"] = found[0], [stays[c] for c in found[0]]
        if sorted(task["cities"]) != sorted(stays) or task["durations"] != [stays.get(c) for c in task["cities"]]:
            raise ValueError("trip task 'cities'/'durations' must list every city once with its stay")
        self._oracle = plan_text(region_phrase(task["region"]), task["cities"], task["durations"], task["total_days"])
        task.setdefault("golden_plan", self._oracle)
        if "prompt" not in task:
            task["prompt"] = render_prompt(task)
        if not isinstance(task["prompt"], str) or not task["prompt"] or not isinstance(task["golden_plan"], str):
            raise ValueError("trip task 'prompt' and 'golden_plan' must be non-empty strings")
        for text in (self._oracle, task["golden_plan"]):
            result = official_score(text, task)
            if result.hard != 1.0 or check_plan(task, result.plan, result.flights, result.last_day)[0]:
                raise ValueError("trip task's gold itinerary breaks its own flights, stays or events")
        self._task = task  # the working task (a converted record differs from what was pinned)
        return task["prompt"]

    def transition(self, action: ParsedAction) -> Outcome:
        result = official_score(action.text, self._task)
        n = len(self._task["cities"])
        if result.plan:
            bad, total = check_plan(self._task, result.plan, result.flights, result.last_day)
        else:
            bad = total = 3 * n + len(self._task["events"])
        metrics = {"format_ok": float(bool(result.plan)), "stays_matched": result.num_match / n,
                   "violations": float(bad), "constraint_score": max(0.0, 1 - bad / total) if result.plan else 0.0}
        note = ("Your plan matches the required itinerary." if result.hard else
                f"Your plan does not match: {result.num_match} of {n} stays are right in order; {bad} rules broken."
                if result.plan else "No plan could be read: write one line per flight, e.g. '**Day 3:** Fly from X "
                "to Y.'")
        return Outcome(note, terminated=True, score=result.hard, success=result.hard == 1.0, metrics=metrics)

    def oracle_action(self) -> str:
        return self._oracle

    def random_action(self, rng: np.random.Generator) -> str:
        """The task's cities in a random order with random stays (each >= 1) that add up correctly."""
        n, days = len(self._task["cities"]), self._task["total_days"]
        order = [self._task["cities"][k] for k in rng.permutation(n)]
        cuts = sorted(int(x) for x in rng.choice(np.arange(1, days + n - 1), size=n - 1, replace=False))
        durations = [b - a for a, b in zip([0, *cuts], [*cuts, days + n - 1])]
        return plan_text(region_phrase(self._task["region"]), order, durations, days)


def _validate(task: dict) -> None:
    """Raise ValueError unless `task` is a well-formed trip task (setup then checks the gold against it)."""
    def need(ok, what):
        if not ok:
            raise ValueError(f"malformed trip task: {what}")
    def day(x):
        return isinstance(x, int) and not isinstance(x, bool)
    missing = [k for k in ("region", "total_days", "stays", "events", "flights") if k not in task]
    need(not missing, f"missing keys {missing}")
    need(isinstance(task["region"], str) and task["region"].isalpha(), "'region' must be one word")
    stays = task["stays"]
    need(isinstance(stays, list) and 2 <= len(stays) <= 10, "'stays' must list 2 to 10 [city, days] pairs")
    for item in stays:
        need(isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and _WORD.fullmatch(item[0])
             and day(item[1]) and item[1] >= 1, f"bad stay {item!r}: want [one-word city, days >= 1]")
    names = dict(stays)
    need(len(names) == len(stays), "a city is listed twice in 'stays'")
    total = task["total_days"]
    need(day(total) and total == sum(names.values()) - (len(names) - 1),
         "'total_days' must equal the sum of stays minus the shared flight days")
    events, flights = task["events"], task["flights"]
    need(isinstance(events, list) and isinstance(flights, list), "'events' and 'flights' must be lists")
    for item in events:
        need(isinstance(item, list) and len(item) == 3 and item[0] in names and day(item[1]) and day(item[2])
             and 1 <= item[1] <= item[2] <= total and item[2] - item[1] < names[item[0]],
             f"bad event {item!r}: want [listed city, first day, last day] inside the trip and the stay")
    need(len({e[0] for e in events}) == len(events), "a city has two events")
    for item in flights:
        need(isinstance(item, list) and len(item) == 3 and item[0] in names and item[1] in names
             and item[0] != item[1] and isinstance(item[2], bool), f"bad flight {item!r}: want [city, city, one_way]")
    need(("cities" in task) == ("durations" in task), "'cities' and 'durations' come together")
    need(isinstance(task.get("cities", []), list) and all(isinstance(c, str) for c in task.get("cities", [])),
         "'cities' must be a list of city names")
