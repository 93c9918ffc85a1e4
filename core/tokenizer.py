"""Tokens for the attention page without a tokenizer download: a whitespace or user-perceived-character split,
and seeded random words.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

import numpy as np

DISPLAY_TOKENS = 64  # most tokens shown from typed text
MAX_RANDOM_TOKENS = 4096
DEFAULT_TEXT = "the cat sat on the mat because the cat was tired"
_RANDOM_VOCAB: tuple[str, ...] = tuple(
    "the a cat dog sat ran on under mat rug because when it was tired happy and then slept ate fish big small "
    "red blue bird flew over tree house old new saw my your we they sun rain day night".split()
)

# One user-perceived character: a regional-indicator pair (a flag), or a character followed by combining marks,
# variation selectors, skin-tone modifiers or tag characters, possibly joined to more by zero-width joiners.
_EXTEND = (
    "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"  # combining marks
    "\ufe00-\ufe0f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]"  # variation selectors, skin tones, tags
)
_GRAPHEME = re.compile(rf"[\U0001F1E6-\U0001F1FF]{{2}}|\r\n|.{_EXTEND}*(?:\u200d.{_EXTEND}*)*", re.DOTALL)


def _check_positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")


@dataclass(frozen=True)
class Tokens:
    """Tokens to show, how many the text had, and a note for the page ('' when there is nothing to say)."""

    tokens: tuple[str, ...]
    total: int
    mode: str
    note: str = ""

    @property
    def truncated(self) -> bool:
        """True when the text had more tokens than are shown."""
        return self.total > len(self.tokens)


def tokenize(text: str, mode: Literal["word", "char"] = "word", max_tokens: int = DISPLAY_TOKENS) -> Tokens:
    """Split text into tokens: on whitespace ('word') or into user-perceived characters ('char', emoji and flags
    stay whole). Keeps the first max_tokens and says so; text with no tokens gives no tokens (and a note).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if mode not in ("word", "char"):
        raise ValueError(f"mode must be 'word' or 'char', got {mode!r}")
    _check_positive_int("max_tokens", max_tokens)
    pieces = text.split() if mode == "word" else _GRAPHEME.findall(text)
    if not pieces:
        return Tokens((), 0, mode, "No text to split.")
    note = ""
    if len(pieces) > max_tokens:
        note = f"Showing the first {max_tokens} of {len(pieces):,} tokens."
    return Tokens(tuple(pieces[:max_tokens]), len(pieces), mode, note)


def random_tokens(n: int, seed: int = 0) -> Tokens:
    """n tokens drawn (with repeats) from a small fixed vocabulary of English words, reproducible from seed."""
    _check_positive_int("n", n)
    if n > MAX_RANDOM_TOKENS:
        raise ValueError(f"at most {MAX_RANDOM_TOKENS} random tokens, got {n}")
    idx = np.random.default_rng(seed).integers(len(_RANDOM_VOCAB), size=n)
    return Tokens(tuple(_RANDOM_VOCAB[i] for i in idx), n, "random")


def word_key(token: str) -> str:
    """What makes two tokens 'the same word': case-folded, with leading and trailing punctuation removed."""
    folded = token.casefold()
    is_punct = [unicodedata.category(c).startswith("P") for c in folded]
    if all(is_punct):
        return folded
    start = is_punct.index(False)
    stop = len(folded) - is_punct[::-1].index(False)
    return folded[start:stop]
