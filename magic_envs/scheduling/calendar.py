"""Calendar scheduling: find the one meeting slot that fits every calendar and preference (NATURAL PLAN)."""

from __future__ import annotations

import numpy as np

from magic_envs.core.env import MagicEnv, Outcome
from magic_envs.scheduling.calendar_official import first_slot, official_correct
from magic_envs.scheduling.calendar_reader import from_natural_plan
from magic_envs.scheduling.common import PEOPLE, WEEKDAYS, clock24, draw, knob_range, pick, vocab_split

DAY_START, DAY_END, CELL = 9 * 60, 17 * 60, 30  # work hours, and the half-hour grid meetings start on
CELLS = (DAY_END - DAY_START) // CELL
DURATION_WORDS = {30: "half an hour", 60: "one hour", 90: "one and a half hours", 120: "two hours"}
BUSY_VERBS = ("has blocked their calendar on", "is busy on", "has meetings on")
FREE_DAY = ("{} is free the entire {}.", "{}'s calendar is wide open the entire {}.", "{} has no meetings the whole {}.")
PREFERENCE = {
    "not_day": ("{p} can not meet on {d}.", "{p} would like to avoid more meetings on {d}.",
                "{p} would rather not meet on {d}."),
    "before": ("{p} can not meet on {d} before {t}.", "{p} would like to avoid more meetings on {d} before {t}."),
    "after": ("{p} does not want to meet on {d} after {t}.", "{p} would rather not meet on {d} after {t}."),
}
ANSWER_FORMAT = "Here is the proposed time: {}, {} - {}"


def allowed(pref: dict, day: int, start: int, length: int, strict: bool = True) -> bool:
    """Whether a slot (day index, start cell, length in cells) honours one preference.

    "not meet after T" is read strictly as "the meeting ends by T"; a lenient reader might take "starts
    before T". The generator makes both readings give the same answer, so the prompt is unambiguous.
    """
    if pref["day"] != day:
        return True
    if pref["kind"] == "not_day":
        return False
    if pref["kind"] == "before":
        return start >= pref["cell"]
    return start + length <= pref["cell"] if strict else start < pref["cell"]


def span(start: int, length: int) -> int:
    """A bit mask of `length` half-hour cells from `start` (calendars are one int per person-day)."""
    return ((1 << length) - 1) << start


def feasible_slots(day_busy: list[int], prefs: list[dict], length: int, strict: bool = True) -> list[tuple[int, int]]:
    """Every (day, start cell) free for all participants and allowed by every preference, earliest first."""
    return [(day, start) for day, taken in enumerate(day_busy) for start in range(CELLS - length + 1)
            if not taken & span(start, length) and all(allowed(p, day, start, length, strict) for p in prefs)]


def busy_runs(mask: int) -> list[tuple[int, int]]:
    """Busy cells of one person-day as merged [start, end) cell intervals."""
    runs, cell = [], 0
    while mask >> cell:
        if mask >> cell & 1:
            end = cell
            while mask >> end & 1:
                end += 1
            runs.append((cell, end))
            cell = end
        else:
            cell += 1
    return runs


def _covers(slot: tuple[int, int], length: int, day: int, cell: int) -> bool:
    return slot[0] == day and slot[1] <= cell < slot[1] + length


def union(busy: list[list[int]], n_days: int) -> list[int]:
    """Per day, the cells where anyone is busy."""
    days = [0] * n_days
    for person in busy:
        for d, mask in enumerate(person):
            days[d] |= mask
    return days


def cell_clock(cell: int) -> str:
    return clock24(DAY_START + cell * CELL)


class CalendarEnv(MagicEnv):
    """Schedule one meeting for several people over one to five work days.

    ## Description
    NATURAL PLAN's calendar scheduling: each participant's busy times (on a 30-minute grid within 9:00-17:00)
    and preferences are listed, and the agent must propose the slot that works for everyone. Either exactly one
    slot is feasible, or the prompt asks for the group's earliest availability; the generator proves which with
    an exact solver, which is also the oracle.

    ## Observation
    The task text (one user message). `info["tools"]` is empty.

    ## Action
    Plain text, the final answer: `Here is the proposed time: <Day>, HH:MM - HH:MM` (24-hour clock).
    Tool calls are invalid actions (no tools are offered).

    ## Rewards
    1.0 when the first `<Day>, H:MM - H:MM` in the answer equals the gold slot under NATURAL PLAN's official
    parser, else 0.0. `info["metrics"]`: `format_ok` (a slot was found), `feasible` (it satisfies every
    constraint), `violations` (constraints it breaks: day offered, duration, work hours, each participant,
    each preference), `constraint_score` (1 - violations / constraints; partial credit for RL).

    ## Starting State
    A task drawn from the env's RNG, or pinned with `reset(options={"task": task_dict})`: a saved task, or a
    published NATURAL PLAN record (`prompt_0shot`, `prompt_5shot`, `golden_plan`), shown with its 5-shot prompt.

    ## Episode End
    Terminates on the first well-formed answer; invalid actions (empty text, tool calls) may be retried
    until the TimeLimit (3 steps).

    ## Arguments
    `split`: "train" | "test" | "ood" (unseen names, more people and days).
    `people`: participants, int or [min, max] (default [2, 5]; ood [4, 7]).
    `days`: candidate work days from Monday, int or [min, max] in 1..5 (default [1, 3]; ood [2, 5]).
    `duration`: meeting minutes, one of 30/60/90/120 or a list of them (default [30, 60]).
    `density`: share of each calendar that is busy before uniqueness is enforced (default 0.35).
    `preferences`: chance that a participant states a preference (default 0.3).

    ## Version History
    * v0: initial release.

    >>> import gymnasium, magic_envs
    >>> env = gymnasium.make("magic/Calendar-v0")
    >>> prompt, info = env.reset(seed=3)
    >>> prompt.startswith("You are an expert at scheduling meetings.")
    True
    >>> env.step(env.unwrapped.oracle_action())[1]
    1.0
    """

    family = "scheduling"
    metric_names = ("format_ok", "feasible", "violations", "constraint_score")
    progress_metrics = ("constraint_score",)

    def __init__(self, split: str = "train", people=None, days=None, duration=(30, 60), density: float = 0.35,
                 preferences: float = 0.3, render_mode: str | None = None):
        super().__init__(split=split, render_mode=render_mode)
        ood = vocab_split(split) == "ood"
        self.people = knob_range(([4, 7] if ood else [2, 5]) if people is None else people, "people", 1, 10)
        self.days = knob_range(([2, 5] if ood else [1, 3]) if days is None else days, "days", 1, len(WEEKDAYS))
        self.durations = [duration] if isinstance(duration, int) else list(duration)
        if not self.durations or any(d not in DURATION_WORDS for d in self.durations):
            raise ValueError(f"duration must be one of {sorted(DURATION_WORDS)} minutes or a list of them")
        if not (0.0 <= density <= 0.9 and 0.0 <= preferences <= 1.0):
            raise ValueError("density must lie in [0, 0.9] and preferences in [0, 1]")
        self.density, self.preference_rate = float(density), float(preferences)

    # ---- generator ------------------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> dict:
        names = pick(rng, PEOPLE[vocab_split(self.split)], draw(rng, self.people))
        n_days, duration = draw(rng, self.days), int(rng.choice(self.durations))
        length = duration // CELL
        per_day = CELLS - length + 1
        gold = divmod(int(rng.integers(1, n_days * per_day)), per_day)  # any slot but the very first
        decoy = divmod(int(rng.integers(gold[0] * per_day + gold[1])), per_day)
        busy = self._random_calendars(rng, len(names), n_days, [gold, decoy], length)
        prefs = self._random_preferences(rng, len(names), n_days, gold, length) + [self._rule_out(rng, len(names), decoy, gold)]
        earliest = bool(rng.random() < 0.5)
        # Block every other slot a lenient reader could pick (only the earlier ones when asking for the
        # earliest availability), so the strict and the lenient reading both lead to the gold slot.
        taken = union(busy, n_days)
        for day, start in feasible_slots(taken, prefs, length, strict=False):
            if (day, start) == gold or (earliest and (day, start) > gold) or taken[day] & span(start, length):
                continue  # the answer, a later slot we may keep, or blocked already by an earlier block
            cells = [c for c in range(start, start + length) if not _covers(gold, length, day, c)]
            cells = [c for c in cells if not _covers(decoy, length, day, c)] or cells  # keep the decoy free if we can
            bit = 1 << cells[int(rng.integers(len(cells)))]
            busy[int(rng.integers(len(names)))][day] |= bit
            taken[day] |= bit
        task = {"people": names, "days": list(WEEKDAYS[:n_days]), "duration": duration, "earliest": earliest,
                "busy": {n: {WEEKDAYS[d]: [[DAY_START + a * CELL, DAY_START + b * CELL] for a, b in busy_runs(busy[i][d])]
                             for d in range(n_days) if busy[i][d]} for i, n in enumerate(names)},
                "preferences": [{"person": names[p["person"]], "kind": p["kind"], "day": WEEKDAYS[p["day"]],
                                 "time": DAY_START + p["cell"] * CELL if p["kind"] != "not_day" else None}
                                for p in prefs]}
        task["prompt"] = self._prompt(task, rng)
        solution = self._solve(task)
        assert solution == gold, (solution, gold)
        task["gold"] = {"day": WEEKDAYS[gold[0]], "start": DAY_START + gold[1] * CELL,
                        "end": DAY_START + (gold[1] + length) * CELL}
        return task

    def _rule_out(self, rng, n_people, decoy, gold) -> dict:
        """A preference that excludes the decoy (free in every calendar, earlier than the gold) but not the
        gold, so "the first slot where all calendars are free" is never the answer: preferences matter."""
        person = int(rng.integers(n_people))
        if decoy[0] == gold[0]:
            return {"person": person, "kind": "before", "day": decoy[0], "cell": int(rng.integers(decoy[1], gold[1])) + 1}
        kinds = ["not_day"] + (["before"] if decoy[1] < CELLS - 1 else []) + (["after"] if decoy[1] > 0 else [])
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind == "before":  # starts before the cell are out
            cell = int(rng.integers(decoy[1] + 1, CELLS))
        elif kind == "after":  # both readings of "after" exclude the decoy: it starts at or after the cell
            cell = int(rng.integers(1, decoy[1] + 1))
        else:
            cell = 0
        return {"person": person, "kind": kind, "day": decoy[0], "cell": cell}

    def _random_calendars(self, rng, n_people, n_days, keep_free, length) -> list[list[int]]:
        """Random meetings of 30 to 120 minutes, about `density` of each day, none over the kept slots."""
        counts = rng.poisson(self.density * CELLS / 2.5, size=n_people * n_days).tolist()
        starts = rng.integers(CELLS, size=sum(counts)).tolist()
        lengths = rng.integers(1, 5, size=sum(counts)).tolist()
        keep = [span(0, CELLS)] * n_days
        for day, start in keep_free:
            keep[day] &= ~span(start, length)
        busy, k = [[0] * n_days for _ in range(n_people)], 0
        for i, count in enumerate(counts):
            p, d = divmod(i, n_days)
            for s, n in zip(starts[k:k + count], lengths[k:k + count]):
                busy[p][d] |= span(s, n)
            busy[p][d] &= keep[d]
            k += count
        return busy

    def _random_preferences(self, rng, n_people, n_days, gold, length) -> list[dict]:
        prefs = []
        for person in np.flatnonzero(rng.random(n_people) < self.preference_rate):
            day = int(rng.integers(n_days))
            kinds = ["before", "after"] + (["not_day"] if day != gold[0] else [])
            kind = kinds[int(rng.integers(len(kinds)))]
            if kind == "before":  # excludes starts before the cell; must keep the gold start
                top = gold[1] if day == gold[0] else CELLS - 1
                cell = int(rng.integers(1, top + 1)) if top >= 1 else None
            elif kind == "after":  # excludes meetings running past the cell; must keep the gold end
                low = gold[1] + length if day == gold[0] else 1
                cell = int(rng.integers(low, CELLS)) if low < CELLS else None
            else:
                cell = 0
            if cell is not None:
                prefs.append({"person": int(person), "kind": kind, "day": day, "cell": cell})
        return prefs

    def _prompt(self, task: dict, rng: np.random.Generator) -> str:
        names, days = task["people"], task["days"]
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        when = days[0] if len(days) == 1 else "either " + ", ".join(days[:-1]) + " or " + days[-1]
        span = "day" if len(days) == 1 else "week"
        lines = []
        for name in names:
            if task["busy"][name]:
                spans = ", ".join(f"{d} during " + ", ".join(f"{clock24(a)} to {clock24(b)}" for a, b in runs)
                                  for d, runs in task["busy"][name].items())
                lines.append(f"{name} {BUSY_VERBS[int(rng.integers(3))]} {spans}; ")
            else:
                lines.append(FREE_DAY[int(rng.integers(3))].format(name, span))
        prefs = [PREFERENCE[p["kind"]][int(rng.integers(len(PREFERENCE[p["kind"]])))].format(
            p=p["person"], d=p["day"], t=clock24(p["time"]) if p["time"] is not None else "")
            for p in task["preferences"]]
        if task["earliest"]:
            prefs.append("The group would like to meet at their earliest availability.")
        return ("You are an expert at scheduling meetings. You are given a few constraints on the existing schedule "
                "of each participant, the meeting duration, and possibly some preferences on the meeting time. "
                "Note there exists a solution that works with existing schedule of every participant.\n\n"
                f"TASK: You need to schedule a meeting for {who} for {DURATION_WORDS[task['duration']]} between "
                f"the work hours of {clock24(DAY_START)} to {clock24(DAY_END)} on {when}. Meetings start on the "
                f"hour or half hour.\n\nHere are the existing schedules for everyone during the "
                f"{'day' if len(days) == 1 else 'days'}: \n"
                + "\n".join(lines) + "\n\n" + " ".join(prefs + ["Find a time that works for everyone's schedule "
                                                                "and constraints."])
                + "\nAnswer in the form: Here is the proposed time: <Day>, <HH:MM> - <HH:MM>")

    # ---- exact solver (the oracle) ----------------------------------------------------------------------
    def _grids(self, task: dict):
        names, days = task["people"], task["days"]
        busy = [[0] * len(days) for _ in names]
        for i, name in enumerate(names):
            for day, runs in task["busy"][name].items():
                for a, b in runs:
                    busy[i][days.index(day)] |= span((a - DAY_START) // CELL, (b - a) // CELL)
        prefs = [{"kind": p["kind"], "day": days.index(p["day"]),
                  "cell": (p["time"] - DAY_START) // CELL if p["time"] is not None else 0} for p in task["preferences"]]
        return busy, prefs

    def _solve(self, task: dict) -> tuple[int, int]:
        """The gold (day, start cell), proving the task has exactly the intended answer."""
        busy, prefs = self._grids(task)
        length = task["duration"] // CELL
        taken = union(busy, len(task["days"]))
        strict, lenient = (feasible_slots(taken, prefs, length, s) for s in (True, False))
        if not strict or strict[0] != lenient[0] or (not task["earliest"] and len(lenient) != 1):
            raise ValueError("calendar task does not have exactly one intended answer")
        return strict[0]

    # ---- episode ----------------------------------------------------------------------------------------
    def setup(self, task: dict) -> str:
        try:
            if "golden_plan" in task and "busy" not in task:
                task = from_natural_plan(task)
            gold = task.get("gold")
            if gold is None:  # a hand-written task: solve it, which also proves it has one answer
                day, start = self._solve(task)
                gold = {"day": task["days"][day], "start": DAY_START + start * CELL,
                        "end": DAY_START + start * CELL + task["duration"]}
            self.gold_text = ANSWER_FORMAT.format(gold["day"], clock24(gold["start"]), clock24(gold["end"]))
            self.prompt = task["prompt"]
            self._checks = self._grids(task)
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise ValueError(f"malformed calendar task: {e!r}") from e
        self._task = task
        return self.prompt

    def transition(self, action) -> Outcome:
        success = official_correct(action.text, self.gold_text)
        metrics = self.check_constraints(action.text)
        verdict = "Correct." if success else "Incorrect."
        return Outcome(f"{verdict} The expected answer was: {self.gold_text}", terminated=True,
                       score=float(success), success=success, metrics=metrics)

    def check_constraints(self, answer: str) -> dict:
        """The stricter metric: which constraints the first proposed slot breaks, read to the minute."""
        task, (busy, prefs) = self._task, self._checks
        total = 3 + len(task["people"]) + len(prefs)
        slot = first_slot(answer)
        if slot is None:
            return {"format_ok": 0.0, "feasible": 0.0, "violations": float(total), "constraint_score": 0.0}
        day_name, (sh, sm), (eh, em) = slot
        start = int(sh[:4]) * 60 + int(sm[:4]) - DAY_START
        end = int(eh[:4]) * 60 + int(em[:4]) - DAY_START
        in_hours = 0 <= start < end <= DAY_END - DAY_START
        day = task["days"].index(day_name) if day_name in task["days"] else None
        violations = [day is None, end - start != task["duration"], not in_hours]
        a, b = max(start, 0) // CELL, -(-min(max(end, 0), DAY_END - DAY_START) // CELL)
        violations += [day is None or bool(busy[i][day] & span(a, max(b - a, 0))) for i in range(len(task["people"]))]
        violations += [day is None or not allowed(p, day, start / CELL, (end - start) / CELL) for p in prefs]
        v = sum(violations)
        return {"format_ok": 1.0, "feasible": float(v == 0), "violations": float(v),
                "constraint_score": 1.0 - v / total}

    def oracle_action(self) -> str:
        return self.gold_text

    def random_action(self, rng: np.random.Generator) -> str:
        task = self._task
        start = DAY_START + CELL * int(rng.integers(CELLS - task["duration"] // CELL + 1))
        day = task["days"][int(rng.integers(len(task["days"])))]
        return ANSWER_FORMAT.format(day, clock24(start), clock24(start + task["duration"]))
