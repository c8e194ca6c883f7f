"""The one text space every MagicAgent env uses for observations and actions."""

from __future__ import annotations

import string

import numpy as np
from gymnasium import spaces

# Real benchmark prompts reach ~14k characters and tool results can be far longer; agents may also answer
# with megabytes of junk, which envs must score rather than reject. One generous bound serves both.
MAX_TEXT_CHARS = 1 << 21

_PRINTABLE = string.ascii_letters + string.digits + string.punctuation + " \n"


class AnyText(spaces.Text):
    """A `Text` space that contains any Python string up to `max_length` characters.

    Gymnasium's `Text.contains` only accepts characters of a fixed charset, but real records and model
    output hold any Unicode. `sample` still draws short printable strings (a junk action for smoke tests).
    """

    def __init__(self, max_length: int = MAX_TEXT_CHARS, seed: int | np.random.Generator | None = None):
        super().__init__(max_length=max_length, min_length=0, charset=_PRINTABLE, seed=seed)

    def contains(self, x) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask=None, probability=None) -> str:
        # Sampling up to max_length characters would build megabyte strings; 256 is plenty for junk.
        length = int(self.np_random.integers(0, min(self.max_length, 256) + 1))
        chars = self.np_random.choice(list(_PRINTABLE), size=length)
        return "".join(chars)

    def __repr__(self) -> str:
        return f"AnyText(max_length={self.max_length})"

    def __eq__(self, other) -> bool:
        return isinstance(other, AnyText) and other.max_length == self.max_length
