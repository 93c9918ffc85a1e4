"""Helpers for tests/test_page_numbers.py: the texts a learner reads on a lesson page at its defaults, and the
numbers in them, read by the deck test's parser (tests/test_deck_numbers.py ``numbers``: the number as written, its
value in the printed unit, half a unit of its last printed digit; citation years skipped).

The texts: every markdown, LaTeX and caption element and every notice (info, warning, success, error) of the page,
in the main area and the sidebar (the takeaway, the equation, the explanation in its expander, the quick check and
its answer, the interview answer, the common mistakes, captions under figures and controls). Not read: widget values
and labels, and readouts (st.metric), which are computed live and checked by the pages' own tests.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tests.apptest import opened
from tests.card_references import parse_shown
from tests.test_deck_numbers import _plain
from tests.test_deck_numbers import numbers as _deck_numbers

# Captions every page's frame shows (the sidebar's device line names torch's version; not lesson text).
FRAME_TEXTS = re.compile(r"^(Core computes on: .*|Presets|Every control is in the link\..*)$")

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def _powers(text: str) -> str:
    """A bare power of ten ("10²⁰", "10⁻⁴") written as "1e20", so the deck parser reads it as one number (it reads
    "2.7×10²⁰" itself); citations the deck parser does not know ("Hu et al. (2021)", a seed's section) removed."""
    text = re.sub(r"(?<![\d.×])10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)", lambda m: "1e" + m.group(1).translate(_SUPERSCRIPT), text)
    text = re.sub(r"(et al\.|[A-Z][\w-]+) \(((?:19|20)\d\d)\)", r"\1 \2", text)  # "Hu et al. (2021)": a citation
    return SEED_REFERENCE.sub(" ", text)


# A seed and its section, cited like a paper: "seed 002, A6.6", "seed 001, section 3.1", "seed 003, Q2 and Q6",
# "seed 003", and the short forms "(001 §3.2; 002 A10-09)", "002 A8.1/A10-11". Not numbers of the lesson.
_SECTION = r"(?:A\d+(?:[.-]\d+)?(?:/A\d+(?:[.-]\d+)?)?|Q\d+|section \d+(?:\.\d+)?|§\d+(?:\.\d+)?)"
SEED_REFERENCE = re.compile(
    rf"\bseed 00[0-3](?:,? {_SECTION}(?:(?:,| and) {_SECTION})*)?|\b00[0-3],? {_SECTION}(?:(?:,| and) {_SECTION})*"
)


def numbers(text: str) -> list[tuple[str, float, float]]:
    """The numbers of ``text``: (as written, value in the printed unit, half a unit of the last printed digit)."""
    return _deck_numbers(_powers(text))


def page_texts(page: str) -> list[str]:
    """The learner's texts of ``page`` at its defaults (opened once per process)."""
    at = opened(page)
    out = []
    for kind in ("markdown", "latex", "caption", "info", "warning", "success", "error"):
        for element in getattr(at, kind):
            value = element.value
            if isinstance(value, str) and value.strip() and not FRAME_TEXTS.match(value.strip()):
                out.append(flat(value))
    return out


def flat(text: str) -> str:
    """A text with every run of white space as one space (a snippet need not copy the source's line breaks)."""
    return re.sub(r"\s+", " ", text.strip())


@dataclass(frozen=True)
class Ref:
    """A passage of a page text and, for each number in it in order, its independent reference (a float in the
    printed unit, compared at the printed precision) or the reason it needs none (a str); one reason alone covers
    every number of the passage."""

    snippet: str
    values: tuple[float | str, ...]

    def __init__(self, snippet: str, *values: float | str) -> None:
        object.__setattr__(self, "snippet", snippet)
        object.__setattr__(self, "values", values)


def check_page(texts: list[str], refs: list[Ref]) -> list[str]:
    """Problems of a page's table ``refs`` against its ``texts``: a passage no text holds (the text changed), a
    passage whose count of values is not its count of numbers, a number its reference does not print as, and
    every number of the texts that no passage covers (with its context)."""
    problems = []
    covered: list[Counter] = [Counter() for _ in texts]
    for ref in refs:
        snippet = flat(ref.snippet)
        found = [(i, t.count(snippet)) for i, t in enumerate(texts) if snippet in t]
        if not found:
            problems.append(f"passage not on the page (the text changed?): {ref.snippet!r}")
            continue
        nums = numbers(snippet)
        values = ref.values * len(nums) if len(ref.values) == 1 and isinstance(ref.values[0], str) else ref.values
        if len(nums) != len(values):
            problems.append(f"{ref.snippet!r}: {len(nums)} numbers {[n[0] for n in nums]}, {len(ref.values)} values")
            continue
        for (written, value, half), ref_value in zip(nums, values, strict=True):
            if isinstance(ref_value, str):
                continue
            if "," in written:  # "1,900": trailing zeros after a thousands separator are not significant
                half = float(parse_shown(written).half_unit) * value / float(parse_shown(written).number)
            if not abs(ref_value - value) <= half + 1e-9 * max(abs(value), 1e-12):
                problems.append(f"{ref.snippet!r}: {written} is printed, the reference gives {ref_value:.6g}")
        for i, count in found:
            for written, _, _ in nums:
                covered[i][written] += count
    for i, text in enumerate(texts):
        left = Counter(w for w, _, _ in numbers(text)) - covered[i]
        for written in left:
            plain = _plain(_powers(text))
            spots = [m.start() for m in re.finditer(rf"(?<![\w.,]){re.escape(written)}(?![\d]|[.,]\d)", plain)]
            contexts = " | ".join(f"...{plain[max(0, at - 60) : at + len(written) + 30]}..." for at in spots)
            problems.append(f"no reference or reason for {written!r} ({left[written]} of {len(spots)}): {contexts}")
    return problems
