"""The words of a workflow task: node texts (WorfBench-style subtasks) and the user's request.

Node texts state canonical values ("Find flights from Paris to Rome on 2025-03-03.") from the function's
first imperative request template; a linked input reads as the value's origin ("Book the first flight found
for Ann Lee."), with the producer's call spelled out when it is ambiguous (the same tool runs twice) or
hidden (masked). An untransformed node keeps its tool-call form ("Call search_flights with origin Paris,
..."). The request uses the universe's paraphrase templates and surface forms ("March 3, 2025", "paris"),
points at linked values in brackets ("[the first flight you find]") and never states them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from magic_envs.decomposition.operators import Plan, Step
from magic_envs.tool_planning.universe import Universe
from magic_envs.tool_planning.universe.requests import join_words, render_request, surface

NOUNS = {"person_name": "person", "email_address": "email address", "phone_number": "phone number",
         "stock_symbol": "stock", "file_path": "file", "directory": "folder"}
FIELD_WORDS = {"from": "sender address", "to": "recipient address", "next_available": "next available date"}
QUESTION_WORDS = {"I", "I'm", "I'd", "If", "Our", "Can", "Is", "Do", "Are", "When", "Where", "What", "How",
                  "Which", "Who", "Will"}
SEQUENTIAL = ("{a} Then {b}", "{a} After that, {b}")
PARALLEL = ("{a} Also, {b}", "{a} And {b}")


class _Canonical:
    """An RNG stand-in that always takes the first (canonical) surface form."""

    @staticmethod
    def random():
        return 0.99

    @staticmethod
    def integers(*_args, **_kw):
        return 0


def plain(spec: dict, value) -> str:
    """A value as a node text states it: its canonical form (ISO dates, 24-hour times, proper names)."""
    return surface(spec, value, _Canonical())


def noun(etype: str) -> str:
    return NOUNS.get(etype, etype[:-3] if etype.endswith("_id") else etype.replace("_", " "))


def words(name: str) -> str:
    return FIELD_WORDS.get(name, name.replace("_", " "))


def _item(list_name: str) -> str:
    return list_name[:-2] if list_name.endswith(("ches", "shes", "sses")) else list_name.rstrip("s")


def tidy(text: str) -> str:
    """A capital first letter, and no "and and" where an optional clause that starts with "and" is joined."""
    text = text.replace(" and and ", " and ")
    return text[:1].upper() + text[1:]


def lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    return text if first in ("I", "I'm", "I'd", "I've") or first[:2].isupper() else text[:1].lower() + text[1:]


@lru_cache(maxsize=512)
def node_template(u: Universe, tool: str) -> str:
    """The function's first imperative template ("Find flights from {origin} to {destination} on {date}.")."""
    for say in u.functions[tool].say:
        say = say[7].upper() + say[8:] if say.startswith("Please ") else say
        if _imperative(say):
            return say
    return u.functions[tool].description.rstrip(".") + " ({args})."


def _imperative(template: str) -> bool:
    return "?" not in template and template.split(" ", 1)[0] not in QUESTION_WORDS


def _drop_noun(template: str, param: str, etype_noun: str) -> str:
    """'Book flight {flight_id}' -> 'Book {flight_id}' when the reference names the flight itself."""
    return re.sub(rf"(?:\b(?:my|the|a|an)\s+)?\b(?:{re.escape(etype_noun)}|item)\s+(?=\{{{param}\}})", "",
                  template, flags=re.IGNORECASE)


class Wording:
    """Texts for one plan (and its context plan): `nodes()` and `request(rng)`."""

    def __init__(self, u: Universe, plan: Plan, condition_phrases: tuple[str, str] | None = None):
        self.u, self.plan, self.phrases = u, plan, condition_phrases
        tools = [s.tool for s in plan.steps] + [s.tool for s in (plan.context.steps if plan.context else ())]
        self.repeated = {t for t in tools if tools.count(t) > 1}
        self.spelled: set = set()  # (context, step) of producers whose references must spell out the call
        for user in (True, False):  # two sources that would read the same are both spelled out
            seen: dict[str, set] = {}
            for step in plan.steps:
                for param, link in step.links.items():
                    seen.setdefault(self.ref(step, param, user)[0], set()).add((link.context, link.step))
            self.spelled |= {src for sources in seen.values() if len(sources) > 1 for src in sources}

    def spec(self, tool: str, param: str) -> dict:
        return self.u.functions[tool].params[param.rstrip("[]")]

    def _etype(self, tool: str, param: str) -> str:
        spec = self.spec(tool, param)
        return spec["items"]["type"] if spec["type"] == "array" else spec["type"]

    # ---- references to linked values ----------------------------------------------------------------
    def ref(self, step: Step, param: str, user: bool) -> tuple[str, str]:
        """(the reference phrase, the noun a template may drop before it)."""
        link = step.links[param]
        source = (self.plan.context if link.context else self.plan).steps[link.step]
        etype_noun = noun(self._etype(step.tool, param))
        head, _, field = link.output.partition(".")
        name = head.rstrip("[]")
        found = ("you found before" if user else "found earlier") if link.context else \
            ("you find" if user else "found")
        got = ("you got before" if user else "obtained earlier") if link.context else \
            ("you get" if user else "obtained")
        if field:
            item = _item(name)
            core = f"{link.which} {item}" if noun(field) == item or field.rstrip("_id") == item or \
                etype_noun == item else f"{words(field)} of the {link.which} {item}"
            phrase = f"the {core} {found}"
        elif head.endswith("[]"):
            phrase = f"the {link.which} of the {words(name)} {found}"
        else:
            phrase = f"the {words(name)} {got}"
        if source.masked or source.tool in self.repeated or (link.context, link.step) in self.spelled:
            phrase += self.descriptor(source, user)
        elif not field and not head.endswith("[]"):  # "the date you get" needs its origin; an item names it
            phrase += f" from {words(source.tool)}"
        return (f"[{phrase}]" if user else phrase), etype_noun

    def descriptor(self, step: Step, user: bool) -> str:
        """The producer's call spelled out: ' with search flights for origin Paris and date March 3, 2025'."""
        values = step.surfaces if user else {p: plain(self.spec(step.tool, p), v) for p, v in step.args.items()}
        # a value with its own phrase ("make it public", "in business class") reads without its name
        said = [v if isinstance(self.spec(step.tool, p).get("say"), dict) else f"{words(p)} {v}"
                for p, v in values.items()]
        return f" {'with' if user else 'by'} {words(step.tool)}" + (f" for {join_words(said)}" if said else "")

    # ---- node texts ---------------------------------------------------------------------------------------
    def node(self, i: int) -> str:
        plan = self.plan
        step = plan.steps[i]
        text = self.natural(step) if step.natural else self.tool_form(step)
        cond = plan.condition
        if cond is not None and self.phrases is not None and i in (cond["then"], cond["else"]):
            text = f"If {self.phrases[0 if i == cond['then'] else 1]}, {lower_first(text)}"
        return text

    def natural(self, step: Step) -> str:
        fn = self.u.functions[step.tool]
        template = node_template(self.u, step.tool)
        values = {p: plain(self.spec(step.tool, p), v) for p, v in step.args.items()}
        for param in step.links:
            phrase, etype_noun = self.ref(step, param, user=False)
            template = _drop_noun(template, param.rstrip("[]"), etype_noun)
            values[param.rstrip("[]")] = phrase
        if "{args}" in template:
            return template.format(args=join_words([f"{words(p)} {v}" for p, v in values.items()]) or "no arguments")
        text = template.format(**{p: values[p] for p in fn.required})
        extras = [fn.opt[p][0].format(**{p: values[p]}) for p in fn.optional if p in values and p in fn.opt]
        if extras:
            clause = join_words(extras)
            text = f"{text[:-1]} {clause}{text[-1]}" if text[-1] in ".?!" else f"{text} {clause}"
        return tidy(text)

    def tool_form(self, step: Step) -> str:
        parts = [f"{p} {plain(self.spec(step.tool, p), v)}" for p, v in step.args.items()]
        parts += [f"{p.rstrip('[]')} from {self.ref(step, p, user=False)[0]}" for p in step.links]
        return f"Call {step.tool}" + (f" with {join_words(parts)}." if parts else ".")

    def nodes(self) -> list[str]:
        return [self.node(i) for i in range(len(self.plan.steps))]

    # ---- the request --------------------------------------------------------------------------------------
    def sentence(self, step: Step, rng, imperative: bool = False) -> str:
        """The step's request; `imperative` keeps to templates that read as an order (after "If ...,")."""
        surfaces = dict(step.surfaces)
        for param in step.links:
            surfaces[param.rstrip("[]")] = self.ref(step, param, user=True)[0]
        for param in step.inherits:
            surfaces[param] = f"the same {noun(self._etype(step.tool, param))} as in my earlier request"
        fn = self.u.functions[step.tool]
        if imperative:
            fn = replace(fn, say=tuple(t for t in fn.say if _imperative(t)) or (node_template(self.u, step.tool),))
        text = tidy(render_request(fn, surfaces, rng))
        return text if text[-1:] in ".?!" else text + "."

    def request(self, rng) -> str:
        """The user's request: one sentence per visible step (a condition's branches join its check)."""
        plan = self.plan
        cond = plan.condition or {}
        branches = {cond.get("then"), cond.get("else")} - {None}
        edges = plan.edges()
        units, listed = [], set()
        for i in range(len(plan.steps)):
            step = plan.steps[i]
            if step.masked or i in branches:
                continue
            text = self.sentence(step, rng)
            if step.role == "check" and self.phrases is not None:
                then = self.sentence(plan.steps[cond["then"]], rng, imperative=True)
                text += f" If {self.phrases[0]}, {lower_first(then)}"
                if cond.get("else") is not None:
                    other = self.sentence(plan.steps[cond["else"]], rng, imperative=True)
                    text += f" Otherwise, {lower_first(other)}"
            # prose says "Then" after anything it needs; a list says "After that" only for a stated order,
            # which follows every item before it (data links speak for themselves through the brackets)
            units.append((text, any(a in listed for a, b in edges if b == i),
                          any(a in listed for a, b in plan.order if b == i)))
            listed |= {i} | (branches if step.role == "check" else set())
        if len(units) > 3:
            lines = [("After that, " + lower_first(t) if ordered else t) for t, _, ordered in units]
            return "Please help me with the following:\n" + "\n".join(f"- {t}" for t in lines)
        out = units[0][0]
        for text, after, _ in units[1:]:
            joiner = SEQUENTIAL if after else PARALLEL
            out = joiner[int(rng.integers(len(joiner)))].format(a=out, b=lower_first(text))
        return out
