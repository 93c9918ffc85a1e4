"""Helpers for tests/test_page_numbers.py: the texts a learner reads on a lesson page at its defaults, and the
numbers in them, read by the deck test's parser (tests/test_deck_numbers.py ``numbers``: the number as written, its
value in the printed unit, half a unit of its last printed digit; citation years skipped).

The texts: every markdown, LaTeX and caption element and every notice (info, warning, success, error) of the page,
in the main area and the sidebar (the takeaway, the equation, the explanation in its expander, the quick check and
its answer, the interview answer, the common mistakes, captions under figures and controls). Not read: widget values
and labels, and readouts (st.metric), which are computed live and checked by the pages' own tests.
The controls' static texts (labels, help texts, preset names) are read from the page's SPEC by ``control_texts``.

``view_texts`` reads the rest of what a view shows: each readout (st.metric) as "label: value (delta)" and its help as
"label help: ...", and each figure's title, annotations, axis titles and legend entries (HTML tags as spaces), at the
defaults, with another tab open, or with a preset's values in the link (``views`` lists them).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from tests.apptest import figures, open_page, opened
from tests.card_references import parse_shown
from tests.test_deck_numbers import _CITATION, _NUMBER, _plain
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
    return _texts(opened(page))


def _texts(at: Any) -> list[str]:
    out = []
    for kind in ("markdown", "latex", "caption", "info", "warning", "success", "error"):
        for element in getattr(at, kind):
            value = element.value
            if isinstance(value, str) and value.strip() and not FRAME_TEXTS.match(value.strip()):
                if flat(value) not in _preset_notes():  # checked once, with the controls' texts (control_texts)
                    out.append(flat(value))
    return out


@functools.cache
def _preset_notes() -> frozenset[str]:
    """Every page's preset notes (the caption under the preset box while the page's values match that preset)."""
    import importlib

    from views import catalog

    specs = [importlib.import_module(f"views.{e.view}").SPEC for e in catalog.PAGES if e.view]
    return frozenset(flat(n) for spec in specs for n in spec.preset_help.values() if n.strip())


def _readouts(at: Any) -> list[str]:
    out = []
    for m in at.metric:
        delta = f" ({m.delta})" if getattr(m, "delta", None) else ""
        out.append(flat(f"{m.label}: {m.value}{delta}"))
        if m.proto.help.strip():
            out.append(flat(f"{m.label} help: {m.proto.help}"))
    return out


def _html(text: str) -> str:
    return flat(re.sub(r"<[^>]+>", " ", text))


def _figure_texts(at: Any) -> list[str]:
    out: list[str] = []
    for fig in figures(at):
        layout = fig.get("layout", {})
        title = layout.get("title")
        if isinstance(title, dict) and title.get("text"):
            out.append(_html(title["text"]))
        out += [_html(a["text"]) for a in layout.get("annotations") or [] if a.get("text")]
        for key, axis in sorted(layout.items()):
            if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
                t = axis.get("title")
                if isinstance(t, dict) and t.get("text"):
                    out.append(_html(t["text"]))
        out += [_html(tr["name"]) for tr in fig.get("data", []) if tr.get("name") and tr.get("showlegend") is not False]
    return list(dict.fromkeys(t for t in out if t))


@functools.cache
def _view(page: str, query: tuple[tuple[str, str], ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(texts, readouts and figure texts) of ``page`` opened from a link with ``query`` (once per process)."""
    at = opened(page) if not query else open_page(page, dict(query))
    return tuple(_texts(at)), tuple(_readouts(at) + _figure_texts(at))


def views(page: str, spec: Any) -> dict[str, dict[str, str]]:
    """The views of a page a learner reaches without typing: "defaults", "tab <name>" for each tab that is not open
    at first (the link opens it), and "preset <name>" for each preset (its values in the link, as the preset's
    button sets them; one that only repeats the defaults or an earlier view is left out)."""
    out: dict[str, dict[str, str]] = {"defaults": {}}
    for f in spec.fields:
        if f.widget == "tabs":
            out |= {f"tab {c}": {f.name: c} for c in f.choices if c != f.default}
    for name, values in spec.presets.items():
        query = spec.query(spec.state(values))
        if query not in out.values():  # a preset that sets the defaults (or another view) shows nothing new
            out[f"preset {name}"] = query
    return out


def view_texts(page: str, query: dict[str, str] | None = None) -> list[str]:
    """What a view of ``page`` shows that no earlier check reads: at the defaults, its readouts and figure texts
    (``page_texts`` holds the rest); in another view, every text, readout and figure text that the defaults do not
    show word for word (a readout above the tabs that a tab leaves unchanged is checked once, at the defaults)."""
    texts, shown = _view(page, ())
    if not query:
        return list(shown)
    seen = set(texts) | set(shown)
    other_texts, other_shown = _view(page, tuple(sorted(query.items())))
    return [t for t in dict.fromkeys(other_texts + other_shown) if t not in seen]


def control_texts(spec: object) -> list[str]:
    """The static texts of a page's controls, read from its ``SPEC`` (views/state.py) without running it: each
    field's label and help, the strings among its further widget arguments (a placeholder, the captions of its
    options), each preset's name and note. Not read: the options themselves (values the learner picks) and texts a view
    writes at run time. Each text is prefixed with where it sits ("n help: 1 to 100,000", "preset: Greedy: T = 0"),
    so that a table's passage can say which control's "0 to 1" it means."""
    out = []
    for f in spec.fields:
        strings = [("label", f.label), ("help", f.help)]
        for _, value in f.extra:
            strings += [("extra", v) for v in (value if isinstance(value, tuple | list) else [value])]
        out += [f"{f.name} {where}: {flat(t)}" for where, t in strings if isinstance(t, str) and t.strip()]
    out += [f"preset: {flat(name)}" for name in spec.presets]
    # a preset's note: the caption under the preset box while the page's values match it (pages/frame/binding.py)
    return out + [f"preset note: {flat(note)}" for note in spec.preset_help.values() if note.strip()]


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


def prepare(text: str) -> str:
    """A text as its numbers are read: white space flattened, citations removed, "2.7×10²⁰" written "2.7e20"."""
    return _plain(_CITATION.sub(" ", _powers(flat(text))))


def _numbers_at(prepared: str) -> list[tuple[int, str, float, float]]:
    """(start, as written, value, half a unit of its last digit) of each number of a prepared text."""
    out = []
    for m in _NUMBER.finditer(prepared):
        (written, value, half), *_ = _deck_numbers(prepared[m.start() : m.end() + 7])  # with its "GFLOP", if any
        if "," in written:  # "1,900": trailing zeros after a thousands separator are not significant (parse_shown)
            shown = parse_shown(written)
            half = float(shown.half_unit) * value / float(shown.number) if shown.number else half
        out.append((m.start() + (len(m.group(0)) - len(m.group(0).lstrip())), written, value, half))
    return out


# any number where a passage had one (a passage whose numbers changed is still found, and its numbers checked)
_ANY_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?[kKMBT]?"


def check_page(texts: list[str], refs: list[Ref]) -> list[str]:
    """Problems of a page's table ``refs`` against its ``texts``: a passage whose count of values is not its count
    of numbers, a number its reference does not print as (also in a passage found again with other numbers), a
    passage no text holds even with other numbers, and every number of the texts no passage covers (in context).

    A passage's numbers match any number, so that a changed number is found and reported; a passage with digits inside
    a name ("H100", "bf16", "A10-08") is matched word for word instead (its numbers must then be printed exactly as
    written, and a changed one reports the passage as not on the page). Either way every number is compared with its
    reference. A passage written with a leading "^" matches a whole text only (a bar's bare label, "^58.1 GiB"), so
    that it cannot cover the same words inside longer texts."""
    problems = []
    prepared = [prepare(t) for t in texts]
    covered: list[set[int]] = [set() for _ in texts]
    for ref in refs:
        whole = ref.snippet.startswith("^")  # a passage that must be a whole text (a bar's label "58.1 GiB")
        snippet = prepare(ref.snippet.removeprefix("^"))
        nums = _numbers_at(snippet)
        values = ref.values * len(nums) if len(ref.values) == 1 and isinstance(ref.values[0], str) else ref.values
        if len(nums) != len(values):
            problems.append(f"{ref.snippet!r}: {len(nums)} numbers {[n[1] for n in nums]}, {len(values)} values")
            continue
        pieces = re.split(_ANY_NUMBER, snippet) if nums else [snippet]
        pattern = re.compile(_ANY_NUMBER.join(re.escape(p) for p in pieces) if len(pieces) == len(nums) + 1 else
                             re.escape(snippet))  # fmt: skip
        found = False
        for i, text in enumerate(prepared):
            for m in [pattern.fullmatch(text)] if whole else pattern.finditer(text):
                if m is None:
                    continue
                found = True
                here = _numbers_at(m.group(0))
                if [w for _, w, _, _ in here] != [w for _, w, _, _ in nums] and len(here) == len(nums):
                    where = f"{ref.snippet!r}, now {m.group(0)!r}"
                else:
                    where = repr(ref.snippet)
                for (start, written, value, half), ref_value in zip(here, values, strict=False):
                    covered[i].add(m.start() + start)
                    if isinstance(ref_value, str):
                        continue
                    if not abs(ref_value - value) <= half + 1e-9 * max(abs(value), 1e-12):
                        problems.append(f"{where}: {written} is printed, the reference gives {ref_value:.6g}")
        if not found:
            problems.append(f"passage not on the page (the text changed?): {ref.snippet!r}")
    for i, text in enumerate(prepared):
        for start, written, _, _ in _numbers_at(text):
            if start not in covered[i]:
                context = text[max(0, start - 60) : start + len(written) + 30]
                problems.append(f"no reference or reason for {written!r} in: ...{context}...")
    return problems
