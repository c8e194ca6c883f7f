"""Entity types: what a parameter or a return field holds, beyond its JSON type.

An entity type knows how to draw a realistic canonical value (`sample`), how a person would write it in a
request (`surface`, e.g. "March 3, 2025" or "2.5 km"), how to read that text back (`read`, the inverse,
which proves a request carries the value), and how the simulator checks and canonicalises what an agent
sends (`canon`, raising BadValue with a sentence the agent can read). Linkable types name things that
flow between tools (a city, a flight id, an email address): they make the dependency and sharing graphs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Callable

from magic_envs.tool_planning.universe import pools, words

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
DATE_RANGE = (date(2025, 1, 1), 730)  # requests draw dates from 2025-01-01 on, for two years


class BadValue(ValueError):
    """A schema-valid value the world cannot use (unknown city, malformed date): an error result."""


def pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def vocab_pool(pool, vocab: str):
    return pool[vocab] if isinstance(pool, dict) else pool


@dataclass(frozen=True)
class EType:
    name: str
    json: str
    sample: Callable[[Any, str, dict], Any]
    surface: Callable[[Any, Any], str] = lambda v, rng: str(v)
    read: Callable[[str], Any] = lambda text: text
    canon: Callable[[Any], Any] = lambda v: v
    linkable: bool = False
    values: tuple = field(default=())


ETYPES: dict[str, EType] = {}


def etype(name, json="string", **kw) -> EType:
    ETYPES[name] = EType(name, json, **kw)
    return ETYPES[name]


# ---- places ------------------------------------------------------------------------------------------
def _city_canon(v):
    city = pools.CITY_BY_KEY.get(str(v).strip().lower())
    if city is None:
        raise BadValue(f"unknown city {str(v)[:60]!r}; give the city name, e.g. 'Paris'")
    return city["name"]


etype("city", sample=lambda rng, vocab, spec: pick(rng, [c["name"] for c in pools.CITIES if c["vocab"] == vocab]),
      surface=lambda v, rng: v.lower() if rng.random() < 0.3 else v, read=_city_canon, canon=_city_canon,
      linkable=True)
_COUNTRY = {c.lower(): c for c in pools.COUNTRIES} | {"usa": "United States", "us": "United States",
                                                       "uk": "United Kingdom", "uae": "United Arab Emirates"}


def _country_canon(v):
    if str(v).strip().lower() not in _COUNTRY:
        raise BadValue(f"unknown country {str(v)[:60]!r}")
    return _COUNTRY[str(v).strip().lower()]


etype("country", sample=lambda rng, vocab, spec: pick(rng, sorted({c["country"] for c in pools.CITIES
                                                                   if c["vocab"] == vocab})),
      read=_country_canon, canon=_country_canon, linkable=True)


# ---- dates and times ---------------------------------------------------------------------------------
def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def date_surface(v: str, rng) -> str:
    d = date.fromisoformat(v)
    month = MONTHS[d.month - 1]
    return pick(rng, (v, f"{month} {d.day}, {d.year}", f"{d.day} {month} {d.year}",
                      f"{month[:3]} {_ordinal(d.day)}, {d.year}", f"the {_ordinal(d.day)} of {month} {d.year}"))


_DATE_TEXT = re.compile(r"(?:the )?(?:(\d{1,2})(?:st|nd|rd|th)? (?:of )?([A-Za-z]+)|([A-Za-z]+) (\d{1,2})"
                        r"(?:st|nd|rd|th)?,?) (\d{4})$")


def date_read(text: str) -> str:
    text = text.strip()
    m = _DATE_TEXT.match(text)
    if not m:
        return date_canon(text)
    day, month = (m[1], m[2]) if m[1] else (m[4], m[3])
    index = [n[:3].lower() for n in MONTHS].index(month[:3].lower()) + 1
    return date(int(m[5]), index, int(day)).isoformat()


def date_canon(v) -> str:
    text = str(v).strip()
    try:
        if not re.fullmatch(r"(19|20)\d{2}-\d{2}-\d{2}|2100-\d{2}-\d{2}", text):
            raise ValueError  # the world's calendar runs from 1900 to 2100
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise BadValue(f"invalid date {text[:40]!r}: write dates as YYYY-MM-DD (years 1900 to 2100)") from None


def _date_sample(rng, vocab, spec):
    start, span = DATE_RANGE
    return (start + timedelta(days=int(rng.integers(span)))).isoformat()


etype("date", sample=_date_sample, surface=date_surface, read=date_read, canon=date_canon, linkable=True)


def time_surface(v: str, rng) -> str:
    h, m = map(int, v.split(":"))
    twelve = f"{(h - 1) % 12 + 1}:{m:02d}"
    half = "AM" if h < 12 else "PM"
    return pick(rng, (v, f"{twelve} {half}", f"{twelve}{half.lower()}"))


def time_canon(v) -> str:
    text = str(v).strip()
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", text)
    if not m or int(m[1]) > 23 or int(m[2]) > 59:
        raise BadValue(f"invalid time {text[:40]!r}: write times as HH:MM on a 24-hour clock")
    return f"{int(m[1]):02d}:{m[2]}"


def time_read(text: str) -> str:
    m = re.fullmatch(r"(\d{1,2}):(\d{2}) ?([AaPp][Mm])?", text.strip())
    if not m or not m[3]:
        return time_canon(text)
    return f"{int(m[1]) % 12 + (12 if m[3].lower() == 'pm' else 0):02d}:{m[2]}"


def _time_sample(rng, vocab, spec):
    lo, hi = spec.get("range", (7 * 60, 20 * 60))
    minutes = lo + 15 * int(rng.integers((hi - lo) // 15 + 1))
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


etype("time", sample=_time_sample, surface=time_surface, read=time_read, canon=time_canon, linkable=True)
# Dates and times that describe a record (a file's modification day, an email's date) rather than a moment a
# user plans around: not linkable, so they do not flood the dependency graph with meaningless edges.
etype("record_date", sample=_date_sample, surface=date_surface, read=date_read, canon=date_canon)
etype("record_time", sample=_time_sample, surface=time_surface, read=time_read, canon=time_canon)
etype("year", "integer", read=int, sample=lambda rng, vocab, spec: int(rng.integers(
    spec.get("range", (1990, 2025))[0], spec.get("range", (1990, 2025))[1] + 1)))


# ---- people and messages -----------------------------------------------------------------------------
def person(rng, vocab) -> tuple[str, str]:
    return pick(rng, words.FIRST_NAMES[vocab]), pick(rng, words.LAST_NAMES[vocab])


def _nonempty(v, what="value", limit=500):
    text = str(v).strip()
    if not text or len(text) > limit:
        raise BadValue(f"the {what} must be a non-empty text of at most {limit} characters")
    return text


def email_canon(v) -> str:
    text = str(v).strip().lower()
    if not re.fullmatch(r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}", text):
        raise BadValue(f"invalid email address {str(v)[:60]!r}")
    return text


def email_of(first: str, last: str) -> str:
    return f"{first}.{last}@{words.MAIL_DOMAINS[(len(first) + len(last)) % len(words.MAIL_DOMAINS)]}".lower()


etype("person_name", sample=lambda rng, vocab, spec: " ".join(person(rng, vocab)),
      canon=lambda v: _nonempty(v, "name", 100), linkable=True)
etype("email_address", sample=lambda rng, vocab, spec: email_of(*person(rng, vocab)), canon=email_canon,
      read=email_canon, linkable=True)


def phone_canon(v) -> str:
    text = re.sub(r"[\s\-().]", "", str(v))
    if not re.fullmatch(r"\+\d{8,15}", text):
        raise BadValue(f"invalid phone number {str(v)[:40]!r}: use the international form, e.g. +15550123456")
    return text


etype("phone_number", sample=lambda rng, vocab, spec: f"+1555{int(rng.integers(1000000, 9999999))}",
      surface=lambda v, rng: pick(rng, (v, f"{v[:2]} {v[2:5]}-{v[5:8]}-{v[8:]}")), read=phone_canon,
      canon=phone_canon, linkable=True)
etype("text", sample=lambda rng, vocab, spec: pick(rng, vocab_pool(spec["pool"], vocab)),
      surface=lambda v, rng: f'"{v}"', read=lambda t: t.strip().strip('"'), canon=_nonempty)


# ---- money and markets -------------------------------------------------------------------------------
_CURRENCY_NAMES = {name.lower(): code for code, (name, _) in pools.CURRENCIES.items()}


def currency_canon(v) -> str:
    text = str(v).strip()
    code = _CURRENCY_NAMES.get(text.lower(), text.upper())
    if code not in pools.CURRENCIES:
        raise BadValue(f"unknown currency {text[:40]!r}: use an ISO 4217 code such as EUR")
    return code


etype("currency", sample=lambda rng, vocab, spec: pick(rng, pools.CURRENCY_VOCAB[vocab]),
      surface=lambda v, rng: pick(rng, (v, pools.CURRENCIES[v][0])), read=currency_canon, canon=currency_canon,
      linkable=True)


def stock_canon(v) -> str:
    symbol = str(v).strip().upper()
    if symbol not in pools.STOCKS:
        raise BadValue(f"unknown stock symbol {str(v)[:20]!r}")
    return symbol


etype("stock_symbol", sample=lambda rng, vocab, spec: pick(rng, [s for s, r in pools.STOCKS.items()
                                                                 if r["vocab"] == vocab]),
      surface=lambda v, rng: v.lower() if rng.random() < 0.2 else v, read=stock_canon, canon=stock_canon,
      linkable=True)


def _amount_sample(rng, vocab, spec):
    lo, hi = spec.get("range", (10, 2000))
    value = lo + (hi - lo) * rng.random()
    return float(round(value)) if rng.random() < 0.5 else round(value, 2)


def amount_surface(v, rng) -> str:
    text = f"{v:,.2f}" if v != int(v) or rng.random() < 0.3 else f"{int(v):,}"
    return text.replace(",", "") if rng.random() < 0.5 else text


etype("amount", "number", sample=_amount_sample, surface=amount_surface,
      read=lambda t: float(t.replace(",", "")))
