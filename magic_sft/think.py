"""Hindsight reasoning: the `<think>` text of each oracle step, written from what the agent can see at that step.

A thought explains the action that follows it: what the step is for, and where each of its arguments comes from
(the request, an earlier tool result, the task text). Phrasings are drawn from a seeded RNG so a corpus does not
repeat one sentence. A thought never states what the agent could not know yet: it cites only messages already in
the chat, and a final answer's derivation (a schedule's busy times, a trip's fixed days) restates constraints the
prompt gave. Families with a known answer structure (NATURAL PLAN, ALFWorld) get their own writer; every other
step gets the generic tool/answer writer.
"""

from __future__ import annotations

import json
import random

from magic_envs.core.grammar import ToolCall, parse_action
from magic_envs.core.tools import RESPONSE_OPEN, split_tool_responses

PURPOSE = ["Next I need to {what}.", "The next step is to {what}.", "To move on I have to {what}.",
           "What I need now: {what}."]
CALL = ["`{name}` does that.", "I'll use `{name}` for it.", "The tool for this is `{name}`.",
        "`{name}` covers it."]
SOURCE = {"request": ["From the request: {args}.", "The request gives {args}.", "Stated by the user: {args}."],
          "result": ["From the earlier `{tool}` result: {args}.", "`{tool}` returned {args}.",
                     "Taken from what `{tool}` gave back: {args}."],
          "task": ["From the task description: {args}.", "The task text gives {args}."]}
ANSWER = ["I have everything the request needs, so I can answer.", "The results so far settle it; time to reply.",
          "Nothing is missing any more: I'll give the answer.", "That completes the work; I'll report back."]
REPLY = ["The user has to hear from me before I can act.", "I should reply to the user here.",
         "This turn is a message to the user.", "I'll answer the user directly."]


def thought(env, messages: list[dict], tools: list[dict], action: str, rng: random.Random) -> str:
    """The `<think>` body for `action`, the oracle's next step in `env` after the chat `messages`."""
    # Tool results read the same whether the template shows them as `tool` messages or in a user turn.
    messages = [r for m in messages for r in ([{"role": "tool", "content": part} for part in
                split_tool_responses(m["content"])] if m["role"] == "user" and
                m["content"].startswith(RESPONSE_OPEN) else [m])]
    writer = WRITERS.get(type(env).__name__)
    if writer:
        text = writer(env, action, rng)
        if text:
            return text
    parsed = parse_action(action)
    if parsed.calls:
        return " ".join(_call_thought(call, messages, tools, rng) for call in parsed.calls)
    return rng.choice(ANSWER if any(m["role"] == "tool" for m in messages) else REPLY)


def _call_thought(call: ToolCall, messages: list[dict], tools: list[dict], rng: random.Random) -> str:
    spec = next((t.get("function", t) for t in tools if t.get("function", t).get("name") == call.name), {})
    what = (spec.get("description") or f"call {call.name}").strip().split(". ")[0].rstrip(".")
    parts = [rng.choice(PURPOSE).format(what=what[0].lower() + what[1:]), rng.choice(CALL).format(name=call.name)]
    by_source: dict[tuple[str, str], list[str]] = {}
    for key, value in call.arguments.items():
        by_source.setdefault(_source(value, messages), []).append(f"{key}={json.dumps(value, ensure_ascii=False)}")
    for (kind, tool), args in by_source.items():
        if kind != "none":
            parts.append(rng.choice(SOURCE[kind]).format(args=", ".join(args), tool=tool))
    return " ".join(parts)


def _source(value, messages: list[dict]) -> tuple[str, str]:
    """Where an argument value first shows in the chat: the latest user turn, a tool result, or the task."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if not text or len(text) < 2:
        return "none", ""
    calls = [c for m in messages if m["role"] == "assistant" for c in parse_action(m["content"]).calls]
    results = [m for m in messages if m["role"] == "tool"]
    for message, call in reversed(list(zip(results, calls))):
        if text in message["content"]:
            return "result", call.name
    users = [m for m in messages if m["role"] == "user"]
    if users and text in users[-1]["content"]:
        return "request", ""
    if any(text in m["content"] for m in messages if m["role"] in ("user", "system")):
        return "task", ""
    return "none", ""


# ---- NATURAL PLAN ----------------------------------------------------------------------------------------------
def _clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def _calendar(env, action: str, rng: random.Random) -> str:
    t = env.task
    busy = "; ".join(f"{person} {day} " + ", ".join(f"{_clock(a)}-{_clock(b)}" for a, b in spans)
                     for person, days in t["busy"].items() for day, spans in days.items() if spans)
    prefs = "; ".join(f"{p['person']} not on {p['day']}" if p["kind"] == "not_day" else
                      f"{p['person']} not {p['kind']} {_clock(p['time'])} on {p['day']}" for p in t["preferences"])
    gold = t["gold"]
    lines = [rng.choice(["I need", "The task asks for", "We want"]) +
             f" a {t['duration']}-minute slot for {', '.join(t['people'])} on {' or '.join(t['days'])}.",
             f"Busy: {busy or 'nobody'}."]
    if prefs:
        lines.append(f"Preferences to respect: {prefs}.")
    pick = "the earliest" if t.get("earliest") else "a"
    lines.append(f"Walking through the day, {pick} window where everyone is free for {t['duration']} minutes and no "
                 f"preference is broken is {gold['day']} {_clock(gold['start'])}-{_clock(gold['end'])}.")
    return " ".join(lines)


def _meeting(env, action: str, rng: random.Random) -> str:
    t = env.task
    start_place, start_time = t["constraints"][0]
    friends = "; ".join(f"{name} at {place} {window} (at least {minutes} min)"
                        for name, place, window, minutes in t["constraints"][1:])
    met = [c[0] for c in t["constraints"][1:] if f"meet {c[0]} " in action]
    return (f"I start at {start_place} at {start_time}. {rng.choice(['Friends', 'People to meet', 'Availability'])}: "
            f"{friends}. Travel times between places are given, so I check each order against the windows, adding "
            f"travel and waiting. The most friends any feasible order reaches is {len(met)}: "
            f"{', then '.join(met) or 'nobody'}.")


def _trip(env, action: str, rng: random.Random) -> str:
    t = env.task
    stays = ", ".join(f"{city} {days} days" for city, days in t["stays"])
    events = "; ".join(f"{city} on days {a}-{b}" for city, a, b in t["events"])
    order = [line.split("Fly from ")[1].split(" to ")[0] for line in action.splitlines() if "Fly from " in line]
    order += [action.rsplit(" to ", 1)[-1].split(".")[0]] if order else []
    lines = [f"{t['total_days']} days over {len(t['stays'])} cities: {stays}."]
    if events:
        lines.append(f"Fixed dates: {events}.")
    lines.append(rng.choice(["A flight day counts for both cities, so the stays overlap by one day each.",
                             "Each flight day is shared by the two cities it connects."]))
    if order:
        lines.append(f"Only direct flights are allowed; the order {' -> '.join(order)} uses only those and puts every "
                     "fixed date in place.")
    return " ".join(lines)


# ---- workflow graphs ---------------------------------------------------------------------------------------------
def _decompose(env, action: str, rng: random.Random) -> str:
    nodes = [line.split(":", 1)[0].strip() for line in action.splitlines() if line.split(":", 1)[0].strip().isdigit()]
    edges = [e.strip("()").split(",") for e in action.split("Edge:", 1)[-1].split()] if "Edge:" in action else []
    inner = [(a, b) for a, b in (e for e in edges if len(e) == 2) if a.isdigit() and b.isdigit()]
    lines = [rng.choice(["I break the request into", "The request splits into", "This takes"]) +
             f" {len(nodes)} steps, one tool call each."]
    if inner:
        lines.append("Dependencies: " + "; ".join(f"step {b} needs the output of step {a}" for a, b in inner) + ".")
    lines.append(rng.choice(["Steps that need nothing earlier start from START; the last ones lead to END.",
                             "Independent steps hang off START and the final ones feed END."]))
    return " ".join(lines)


# ---- ALFWorld --------------------------------------------------------------------------------------------------
def _alfworld(env, action: str, rng: random.Random) -> str:
    goal = env.task["goal"]
    verb = action.split(" ", 1)[0]
    why = {"go": "to look there", "open": "to see inside", "take": "since it is what the task needs",
           "put": "which is where it has to end up", "cool": "as the task wants it cold",
           "heat": "as the task wants it hot", "clean": "as the task wants it clean",
           "use": "to light it and look", "examine": "to look at it closely"}.get(verb, "")
    return f"{rng.choice(['Goal', 'Task', 'My task'])}: {goal}. Next: {action}{', ' + why if why else ''}."


WRITERS = {"CalendarEnv": _calendar, "MeetingEnv": _meeting, "TripEnv": _trip, "DecomposeEnv": _decompose,
           "ALFWorldEnv": _alfworld}


class HindsightOracle:
    """The env's oracle, each action preceded by a `<think>` block from `thought` (seeded per episode)."""

    name = "oracle+think"

    def __init__(self, seed):
        self.rng, self.env = random.Random(seed), None

    def begin(self, env) -> None:
        self.env = env.unwrapped

    def act(self, messages: list[dict], tools: list[dict]) -> str:
        action = self.env.oracle_action()
        return f"<think>\n{thought(self.env, messages, tools, action, self.rng)}\n</think>\n\n{action}"
