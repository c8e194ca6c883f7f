"""Numeric, boolean and enum entity types, with the unit conversions a request may need (km -> meters,
hours -> minutes, percent -> fraction, litres -> millilitres, metres -> centimetres)."""

from __future__ import annotations

import re

from magic_envs.tool_planning.universe.etypes import NUMBER_WORDS, BadValue, etype, pick


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _whole(x: float):
    """1.0 -> 1, 1.5 -> 1.5: numbers written as a person would."""
    return int(x) if float(x).is_integer() else x


def _grid(rng, spec, lo, hi, step):
    lo, hi = spec.get("range", (lo, hi))
    step = spec.get("step", step)
    value = lo + step * int(rng.integers(int((hi - lo) / step) + 1))
    return round(value, 6) if isinstance(step, float) else int(value)


def _unit_read(units: dict):
    """A reader for '<number> <unit>' texts: units maps each unit word to its factor to the canonical unit."""
    pattern = re.compile(r"([\d,]*\.?\d+) ?(%s)$" % "|".join(sorted(map(re.escape, units), key=len, reverse=True)))

    def read(text: str):
        m = pattern.match(text.strip())
        if not m:
            raise BadValue(f"cannot read {text!r}")
        return round(_num(m[1]) * units[m[2]], 6)
    return read


def count_read(text: str) -> int:
    text = text.strip().lower()
    return NUMBER_WORDS.index(text) if text in NUMBER_WORDS else int(text)


etype("count", "integer", sample=lambda rng, vocab, spec: _grid(rng, spec, 1, 6, 1),
      surface=lambda v, rng: NUMBER_WORDS[v] if v <= 10 and rng.random() < 0.4 else str(v), read=count_read)
etype("integer", "integer", sample=lambda rng, vocab, spec: _grid(rng, spec, 1, 100, 1), read=count_read)
etype("number", "number", sample=lambda rng, vocab, spec: _grid(rng, spec, -50, 50, 0.5),
      surface=lambda v, rng: str(_whole(v)), read=_num)
etype("latitude", "number", sample=lambda rng, vocab, spec: round(float(rng.uniform(-60, 70)), 4), read=_num)
etype("longitude", "number", sample=lambda rng, vocab, spec: round(float(rng.uniform(-170, 170)), 4), read=_num)
etype("rating", "number", sample=lambda rng, vocab, spec: _grid(rng, spec, 3.0, 4.5, 0.5), read=_num,
      surface=lambda v, rng: str(_whole(v)))

etype("distance_m", "integer", sample=lambda rng, vocab, spec: _grid(rng, spec, 500, 10000, 500),
      surface=lambda v, rng: pick(rng, (f"{_whole(v / 1000)} km", f"{v} meters", f"{v:,} m")),
      read=lambda t: int(_unit_read({"km": 1000, "meters": 1, "m": 1})(t)))
etype("distance_km", "number", sample=lambda rng, vocab, spec: _grid(rng, spec, 5, 500, 5),
      surface=lambda v, rng: pick(rng, (f"{_whole(v)} km", f"{_whole(v)} kilometers")),
      read=_unit_read({"km": 1, "kilometers": 1}))


def duration_surface(v: int, rng) -> str:
    forms = [f"{v} minutes"]
    if v % 30 == 0 and v >= 60:
        forms.append(f"{_whole(v / 60)} hours" if v != 60 else "1 hour")
    if v % 60 and v > 60:
        forms.append(f"{v // 60} hour{'s' if v >= 120 else ''} and {v % 60} minutes")
    return pick(rng, forms)


def duration_read(text: str) -> int:
    m = re.fullmatch(r"(\d+) hours? and (\d+) minutes", text.strip())
    if m:
        return int(m[1]) * 60 + int(m[2])
    return int(_unit_read({"minutes": 1, "hours": 60, "hour": 60})(text))


etype("duration_min", "integer", sample=lambda rng, vocab, spec: _grid(rng, spec, 15, 180, 15),
      surface=duration_surface, read=duration_read)
etype("fraction", "number", sample=lambda rng, vocab, spec: _grid(rng, spec, 5, 30, 1) / 100,
      surface=lambda v, rng: pick(rng, (f"{_whole(round(v * 100, 4))}%", f"{_whole(round(v * 100, 4))} percent")),
      read=_unit_read({"%": 0.01, "percent": 0.01}))
etype("percent", "number", sample=lambda rng, vocab, spec: _grid(rng, spec, 10, 100, 10),
      surface=lambda v, rng: pick(rng, (f"{_whole(v)}%", f"{_whole(v)} percent")),
      read=_unit_read({"%": 1, "percent": 1}))
etype("temperature", "number", sample=lambda rng, vocab, spec: _grid(rng, spec, 16.0, 26.0, 0.5),
      surface=lambda v, rng: pick(rng, (f"{_whole(v)} degrees", f"{_whole(v)}°C", f"{_whole(v)} degrees Celsius")),
      read=lambda t: _unit_read({"degrees": 1, "°C": 1, "degrees Celsius": 1})(t))
etype("weight_kg", "number", sample=lambda rng, vocab, spec: _grid(rng, spec, 50.0, 110.0, 0.5),
      surface=lambda v, rng: pick(rng, (f"{_whole(v)} kg", f"{_whole(v)} kilograms")),
      read=_unit_read({"kg": 1, "kilograms": 1}))
etype("height_cm", "integer", sample=lambda rng, vocab, spec: _grid(rng, spec, 150, 200, 1),
      surface=lambda v, rng: pick(rng, (f"{v} cm", f"{v / 100:.2f} m", f"{v / 100:.2f} meters")),
      read=lambda t: int(round(_unit_read({"cm": 1, "m": 100, "meters": 100})(t))))
etype("volume_ml", "integer", sample=lambda rng, vocab, spec: _grid(rng, spec, 250, 3000, 250),
      surface=lambda v, rng: pick(rng, (f"{v} ml", f"{_whole(v / 1000)} liters", f"{v:,} milliliters")),
      read=lambda t: int(_unit_read({"ml": 1, "liters": 1000, "milliliters": 1})(t)))
etype("grams", "integer", sample=lambda rng, vocab, spec: _grid(rng, spec, 50, 500, 50),
      surface=lambda v, rng: pick(rng, (f"{v} g", f"{v} grams")), read=lambda t: int(_unit_read({"g": 1,
                                                                                                 "grams": 1})(t)))


# Booleans and enums read their surface from the parameter's own `say` words (what "true" means differs
# per parameter: "only unread ones", "make it public"); plain enums fall back to the value with spaces.
def enum_surface(value, spec) -> str:
    say = spec.get("say", {})
    return say.get(value, str(value).replace("_", " ")) if isinstance(say, dict) else str(value)


etype("boolean", "boolean", sample=lambda rng, vocab, spec: bool(rng.random() < 0.5))
etype("enum", "string", sample=lambda rng, vocab, spec: pick(rng, spec["enum"]))
