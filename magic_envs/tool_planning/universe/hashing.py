"""Stable hashing: every simulated value is a pure function of (world seed, what is asked).

Python's `hash` is salted per process, so values come from blake2b over a canonical text instead; a tiny
splitmix64 stream then draws several values from one hash without the cost of seeding a full PRNG.
"""

from __future__ import annotations

import json
from hashlib import blake2b

_MASK = (1 << 64) - 1
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I, as booking references avoid them


def canonical(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def stable_hash(*parts) -> int:
    """A 64-bit hash of `parts` that is the same in every process and on every machine."""
    text = "\x1f".join(p if isinstance(p, str) else canonical(p) for p in parts)
    return int.from_bytes(blake2b(text.encode(), digest_size=8).digest(), "little")


class Stream:
    """Deterministic draws from one seed (splitmix64): unit floats, ints, choices, booleans."""

    __slots__ = ("state",)

    def __init__(self, *parts):
        self.state = stable_hash(*parts)

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def unit(self) -> float:
        return (self.next() >> 11) / float(1 << 53)

    def int(self, lo: int, hi: int) -> int:
        """An int in [lo, hi], both ends included."""
        return lo + self.next() % (hi - lo + 1)

    def uniform(self, lo: float, hi: float, digits: int = 2) -> float:
        return round(lo + (hi - lo) * self.unit(), digits)

    def pick(self, seq):
        return seq[self.next() % len(seq)]

    def chance(self, p: float) -> bool:
        return self.unit() < p

    def sample(self, seq, k: int) -> list:
        """k distinct items of seq, in seq's order (so results read naturally)."""
        chosen = set()
        while len(chosen) < min(k, len(seq)):
            chosen.add(self.next() % len(seq))
        return [seq[i] for i in sorted(chosen)]

    def code(self, n: int = 6) -> str:
        return "".join(_ALPHABET[self.next() % len(_ALPHABET)] for _ in range(n))
