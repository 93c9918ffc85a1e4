"""Lecture decks: ordered slides of the explorer's views, read from hand-written TOML files and checked on load.

A deck file (``decks/<name>.toml``)::

    title = "The lesson in about 20 views"

    [[slides]]
    title = "Predict: 10B parameters on 20B tokens"
    page = "Scaling_laws"                      # a page's URL name (its Spec.page)
    preset = "Predict Q1: 10B params on 20B tokens"   # optional: start from one of the page's presets
    values = { C = 1.2e21, N = 1e10 }          # optional: the link's values (TOML types or link text)
    link = "N=1e10"                            # optional: the same as a link's query string
    notes = "Markdown speaker notes"           # optional
    sweep = { field = "N", from = 1e9, to = 1e11, steps = 12 }   # optional: one control swept on a key press
    readouts = ["Loss L(N, D)", "20-tokens rule N"]   # optional: the readouts to show, by label (start), in order
    figures = ["DPO"]                          # optional: the figures to show, in order (default: all); each one
                                               # the slide draws (main, its tab's, or one of `parts`)
    withhold = true                            # optional: open with the view held back until it is revealed (v)

A slide whose title asks a question (it ends with "?" or starts with "Predict") must open with its answer withheld:
either the page's own "Predict first" switch is on in its values (the page then holds back its answer until a guess
is committed) or ``withhold = true`` (the player shows the title alone until the lecturer reveals the view).

Every slide's values go through the page's state contract (``Spec.parse`` and ``Spec.check``), so a value that a
page would refuse in a link is reported when the deck loads, with the slide and the field at fault. A bad file
never raises anything but :class:`DeckError`; :func:`load_decks` reports it and loads the other decks.

Nothing here imports Streamlit: the player page, the tests and the handout (``python -m decks.handout``) share it.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
import tomllib
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import plotly.graph_objects as go

from views import Options, Readout, View, catalog
from views.catalog import parts_for
from views.state import APP_PARAMS, Field, Spec, State

DECKS_DIR = Path(__file__).resolve().parent
SLIDE_KEYS = ("title", "page", "preset", "values", "link", "notes", "sweep", "parts", "readouts", "figures", "withhold")
SHOWN_READOUTS = 6  # readouts a slide shows when it names none: the first six of its view
SWEEP_KEYS = ("field", "from", "to", "steps", "scale")
MAX_SWEEP_STEPS = 60


class DeckError(ValueError):
    """A deck file that cannot be used: ``problems`` lists every message (slide and field named)."""

    def __init__(self, name: str, problems: Sequence[str]) -> None:
        self.name = name
        self.problems = list(problems)
        super().__init__(f"deck {name!r}: " + "; ".join(self.problems))


def views() -> dict[str, ModuleType]:
    """The view module of each page that a slide may show, by the page's URL name (``Spec.page``): the catalogue's."""
    return catalog.view_modules()


def page_label(page: str) -> str:
    """A page's URL name as words (``KL_leash`` -> ``KL leash``)."""
    return page.replace("_", " ")


@dataclass(frozen=True)
class Sweep:
    """One control swept from a value to another in ``len(values)`` steps, on a key press."""

    field: str
    values: tuple[Any, ...]
    scale: str = "linear"
    steps: int = 0  # as the deck asked (whole-number sweeps drop repeated steps)

    def to_toml(self) -> str:
        first, last, n = _toml(self.values[0]), _toml(self.values[-1]), self.steps or len(self.values)
        scale = ', scale = "log"' if self.scale == "log" else ""
        return f"{{ field = {_toml(self.field)}, from = {first}, to = {last}, steps = {n}{scale} }}"


@dataclass(frozen=True)
class Slide:
    """One slide: a page, its full state, a title, speaker notes (Markdown), an optional sweep."""

    page: str
    state: State
    title: str
    notes: str = ""
    sweep: Sweep | None = None
    parts: tuple[str, ...] = ()  # extra figures() parts to show besides the main one and the state's tab
    readouts: tuple[str, ...] = ()  # labels (or their starts) of the readouts to show, in order; () = the first six
    withhold: bool = False  # open with the view held back until the lecturer reveals it
    figures: tuple[str, ...] = ()  # the figures() parts to show, in this order; () = every figure of the view

    @property
    def asks(self) -> bool:
        """Whether the title asks a question (ends with "?" or starts with "Predict"): the room answers first."""
        return self.title.rstrip().endswith("?") or self.title.lstrip().lower().startswith("predict")

    @property
    def spec(self) -> Spec:
        return views()[self.page].SPEC

    @property
    def query(self) -> dict[str, str]:
        """The link's values of this slide (what the page's address bar would hold)."""
        return self.spec.query(self.state)

    @property
    def link(self) -> str:
        """The page's path and query string, relative to the app (``Scaling_laws?C=1.2e21``)."""
        query = urllib.parse.urlencode(self.query)
        return f"{self.page}?{query}" if query else self.page

    def options(self, theme: str = "light", presenter: bool = True) -> Options:
        """The parts the player draws (``main``, the open tab's, ``parts``); a named figure is one of them (checked
        on load), so the handout and the tests draw what the player draws."""
        return Options(theme=theme, presenter=presenter, parts=parts_for(self.page, self.state, self.parts))

    def view(self, theme: str = "light", presenter: bool = True, state: State | None = None) -> View:
        """The slide's figures, readouts and notices: the page's own ``figures(state, options)``."""
        return views()[self.page].figures(state or self.state, self.options(theme, presenter))

    def shown_figures(self, view: View) -> list[go.Figure]:
        """The figures the slide shows: every figure of the view; or, when ``figures`` names some, those first, in
        that order, then any other tab's figure the audience opens (the ``main`` figure only when named)."""
        if not self.figures:
            return unique_figures(view.figures)
        named = {name: view.figures[name] for name in self.figures if name in view.figures}
        rest = {name: fig for name, fig in view.figures.items() if name != "main" and name not in named}
        return unique_figures({**named, **rest})

    def shown_readouts(self, view: View) -> list[Readout]:
        """The readouts the slide shows: those its ``readouts`` names, in that order, from the view's readouts and
        the open tab's (``facts["<tab>_readouts"]``, which the page shows under the tab); or, when it names none,
        the view's first six. Once a "Predict first" guess is in, the truth, the guess and the error lead."""
        if not self.readouts:
            return list(view.readouts[:SHOWN_READOUTS])
        pool = [*view.readouts]
        for key, value in view.facts.items():
            if key.endswith("_readouts") and isinstance(value, list):
                pool += [r for r in value if isinstance(r, Readout)]
        picked = [r for name in self.readouts for r in pool if r.label.startswith(name)]
        picked = list(dict.fromkeys(picked))
        if view.facts.get("predict") == "revealed":
            picked = [*view.readouts[:3], *(r for r in picked if r not in view.readouts[:3])]
        return picked


@dataclass(frozen=True)
class Deck:
    name: str
    title: str
    slides: tuple[Slide, ...]
    description: str = ""

    def __len__(self) -> int:
        return len(self.slides)

    def slide(self, number: int) -> Slide:
        """Slide ``number``, counted from 1 and clamped into the deck."""
        return self.slides[min(max(int(number), 1), len(self.slides)) - 1]


def unique_figures(figures: Mapping[str, go.Figure]) -> list[go.Figure]:
    """A view's figures in order, each once (a view may file one figure under two part names)."""
    seen: set[int] = set()
    out = []
    for fig in figures.values():
        if id(fig) not in seen:
            seen.add(id(fig))
            out.append(fig)
    return out


# ---------------------------------------------------------------------- reading
def load_deck(path: str | Path) -> Deck:
    """Read and check one deck file. Raises :class:`DeckError` (never anything else) for a bad file."""
    path = Path(path)
    name = path.stem
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DeckError(name, [f"cannot read {path.name}: {exc}"]) from None
    return parse_deck(text, name)


def load_decks(folder: str | Path = DECKS_DIR) -> tuple[dict[str, Deck], dict[str, list[str]]]:
    """Every ``*.toml`` deck of ``folder``: (decks by name, problems by name of the files that could not load)."""
    decks: dict[str, Deck] = {}
    errors: dict[str, list[str]] = {}
    for path in sorted(Path(folder).glob("*.toml")):
        try:
            decks[path.stem] = load_deck(path)
        except DeckError as exc:
            errors[path.stem] = exc.problems
    return decks, errors


def parse_deck(text: str, name: str = "deck") -> Deck:
    """A deck from TOML text. Raises :class:`DeckError` listing every problem found."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DeckError(name, [f"not valid TOML: {exc}"]) from None
    problems: list[str] = []
    title = data.get("title", name)
    if not isinstance(title, str) or not title.strip():
        problems.append("the deck's `title` must be a non-empty text")
        title = name
    description = data.get("description", "")
    if not isinstance(description, str):
        problems.append("the deck's `description` must be a text")
        description = ""
    for key in data:
        if key not in ("title", "description", "slides"):
            problems.append(f"unknown top-level key `{key}` (known: title, description, [[slides]])")
    raw_slides = data.get("slides")
    if not isinstance(raw_slides, list) or not raw_slides:
        problems.append("no slides: add at least one `[[slides]]` table")
        raw_slides = []
    slides = []
    for number, raw in enumerate(raw_slides, start=1):
        slide, slide_problems = _slide(number, raw)
        problems.extend(slide_problems)
        if slide is not None:
            slides.append(slide)
    if problems:
        raise DeckError(name, problems)
    return Deck(name, title.strip(), tuple(slides), description.strip())


def _slide(number: int, raw: Any) -> tuple[Slide | None, list[str]]:
    where = f"slide {number}"
    if not isinstance(raw, dict):
        return None, [f"{where}: not a table (write it as `[[slides]]`)"]
    title = raw.get("title")
    if isinstance(title, str) and title.strip():
        where = f"slide {number} ({title.strip()!r})"
    problems = [f"{where}: unknown key `{k}` (known: {', '.join(SLIDE_KEYS)})" for k in raw if k not in SLIDE_KEYS]
    if not isinstance(title, str) or not title.strip():
        problems.append(f"{where}: missing field `title` (a short text)")
    notes = raw.get("notes", "")
    if not isinstance(notes, str):
        problems.append(f"{where}: field `notes` must be a text (Markdown)")
    page = raw.get("page")
    if page is None:
        return None, [*problems, f"{where}: missing field `page` (one of {', '.join(views())})"]
    module = _find_page(page)
    if module is None:
        return None, [*problems, f"{where}: field `page`: unknown page {page!r} (pages: {', '.join(views())})"]
    spec: Spec = module.SPEC
    values: dict[str, Any] = {}
    preset = raw.get("preset")
    preset = getattr(module, "PRESET_ALIASES", {}).get(preset, preset)  # a preset's name from before a rename
    if preset is not None:
        if preset not in spec.presets:
            problems.append(
                f"{where}: field `preset`: {preset!r} is not a preset of {spec.page} "
                f"(presets: {'; '.join(spec.presets) or 'none'})"
            )
        else:
            values.update(spec.presets[preset])
    texts: dict[str, tuple[str, Any]] = {}  # field -> (link text, as written)
    link = raw.get("link")
    if link is not None:
        if not isinstance(link, str):
            problems.append(f'{where}: field `link` must be a text such as "C=1e21&N=1e9"')
        else:
            for key, value in urllib.parse.parse_qsl(link.lstrip("?"), keep_blank_values=True):
                texts[key] = (value, value)
    raw_values = raw.get("values", {})
    if not isinstance(raw_values, dict):
        problems.append(f"{where}: field `values` must be a table such as {{ C = 1e21, N = 1e9 }}")
        raw_values = {}
    for key, value in raw_values.items():
        text = _as_link_text(value)
        if text is None:
            problems.append(f"{where}: `values.{key}` = {value!r} is not a text, number, true/false or list")
            continue
        texts[key] = (text, value)
    fields = spec.by_name
    for key, (text, written) in texts.items():
        f = _field_of(spec, key)
        if f is None:
            problems.append(f"{where}: `{key}`: {spec.page} has no such field (fields: {', '.join(fields)})")
            continue
        value, why = _parse_strict(f, text)
        if why is not None:
            problems.append(f"{where}: `{f.name}` = {written!r} is refused by {spec.page}: {why}")
            continue
        values[f.name] = value
    problems.extend(f"{where}: {p}" for p in spec.check(values))  # the contract's own check, once more
    sweep = None
    if "sweep" in raw:
        sweep, sweep_problems = _sweep(raw["sweep"], spec)
        problems.extend(f"{where}: field `sweep`: {p}" for p in sweep_problems)
    parts = raw.get("parts", [])
    if not (isinstance(parts, list) and all(isinstance(p, str) for p in parts)):
        problems.append(f"{where}: field `parts` must be a list of texts (names of figures() parts)")
        parts = []
    shown = raw.get("readouts", [])
    if not (isinstance(shown, list) and all(isinstance(r, str) and r.strip() for r in shown)):
        problems.append(f"{where}: field `readouts` must be a list of texts (readout labels, or their starts)")
        shown = []
    shown_figs = raw.get("figures", [])
    if not (isinstance(shown_figs, list) and all(isinstance(f, str) and f.strip() for f in shown_figs)):
        problems.append(f"{where}: field `figures` must be a list of texts (names of figures() parts)")
        shown_figs = []
    withhold = raw.get("withhold", False)
    if not isinstance(withhold, bool):
        problems.append(f"{where}: field `withhold` must be true or false")
        withhold = False
    if problems:
        return None, problems
    state = spec.state(values)
    drawn = parts_for(spec.page, state, parts)
    problems = [
        f"{where}: field `figures`: {name!r} is not drawn on this slide (name it in `parts`, or open its tab)"
        for name in shown_figs
        if name not in drawn
    ]
    if problems:
        return None, problems
    round_trip, link_problems = spec.parse(spec.query(state))
    if round_trip != state or link_problems:  # a state the link cannot carry: should never happen for a valid spec
        return None, [f"{where}: its values do not survive a link: {'; '.join(link_problems) or 'values differ'}"]
    slide = Slide(
        spec.page, state, title.strip(), notes.strip(), sweep, tuple(parts), tuple(shown), withhold, tuple(shown_figs)
    )
    return slide, []


def _find_page(page: Any) -> ModuleType | None:
    if not isinstance(page, str):
        return None
    table = views()
    if page in table:
        return table[page]
    folded = {k.lower(): v for k, v in table.items()}
    key = page.strip().strip("/").lower().replace(" ", "_")
    key = re.sub(r"^pages/\d+_|\.py$", "", key)
    key = re.sub(r"^\d+_", "", key)
    return folded.get(key)


def _field_of(spec: Spec, key: str) -> Field | None:
    """The field a slide's key names (its current name or an old one)."""
    if key in APP_PARAMS:
        return None
    for f in spec.fields:
        if key == f.name or key in f.aliases:
            return f
    return None


def _as_link_text(value: Any) -> str | None:
    """A TOML value as a link would write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _num(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    return None


def _parse_strict(f: Field, text: str) -> tuple[Any, str | None]:
    """A link value through the field's own parser; anything it would correct or replace is refused, with why."""
    value, problem = f.parse(text)
    if problem is None:
        return value, None
    match = re.search(r"\((.*)\); using", problem)
    if match:
        return value, match.group(1)
    if "whole number" in problem:
        return value, "it is not a whole number"
    return value, problem


def _sweep(raw: Any, spec: Spec) -> tuple[Sweep | None, list[str]]:
    if not isinstance(raw, dict):
        return None, ['must be a table such as { field = "beta", from = 10, to = 0.1, steps = 12 }']
    problems = [f"unknown key `{k}` (known: {', '.join(SWEEP_KEYS)})" for k in raw if k not in SWEEP_KEYS]
    missing = [k for k in ("field", "from", "to") if k not in raw]
    if missing:
        return None, [*problems, f"missing {', '.join(f'`{k}`' for k in missing)}"]
    f = _field_of(spec, str(raw["field"]))
    if f is None:
        return None, [*problems, f"{spec.page} has no field {raw['field']!r}"]
    if f.kind not in ("float", "int", "choice"):
        return None, [*problems, f"`{f.name}` is a {f.kind} field; only numbers and choices can be swept"]
    ends = []
    for key in ("from", "to"):
        text = _as_link_text(raw[key])
        value, why = _parse_strict(f, text) if text is not None else (None, "not a value")
        if why is not None or value is None:
            problems.append(f"`{key}` = {raw[key]!r} is refused by `{f.name}`: {why}")
        ends.append(value)
    steps = raw.get("steps", 10)
    if isinstance(steps, bool) or not isinstance(steps, int) or not 2 <= steps <= MAX_SWEEP_STEPS:
        problems.append(f"`steps` = {steps!r} must be a whole number from 2 to {MAX_SWEEP_STEPS}")
    scale = raw.get("scale", "linear")
    if scale not in ("linear", "log"):
        problems.append(f'`scale` = {scale!r} must be "linear" or "log"')
    if problems:
        return None, problems
    first, last = ends
    if f.kind == "choice":
        i, j = f.choices.index(first), f.choices.index(last)
        path = list(f.choices[i : j + 1] if i <= j else f.choices[j : i + 1][::-1])
        if len(path) > steps:  # keep the ends, thin the middle
            picks = sorted({round(k * (len(path) - 1) / (steps - 1)) for k in range(steps)})
            path = [path[k] for k in picks]
        return Sweep(f.name, tuple(path), scale, steps), []
    if scale == "log":
        if first <= 0 or last <= 0:
            return None, ["a log sweep needs `from` and `to` above 0"]
        values = [
            math.exp(math.log(first) + (math.log(last) - math.log(first)) * k / (steps - 1)) for k in range(steps)
        ]
    else:
        values = [first + (last - first) * k / (steps - 1) for k in range(steps)]
    values = [float(f"{v:.6g}") for v in values]
    values[0], values[-1] = first, last
    if f.kind == "int":
        values = list(dict.fromkeys(round(v) for v in values))
    bad = [v for v in values if f.check(v) is not None]
    if bad:
        return None, [f"step value {bad[0]!r} is refused by `{f.name}`: {f.check(bad[0])}"]
    return Sweep(f.name, tuple(values), scale, steps), []


# ---------------------------------------------------------------------- writing
def deck_to_toml(deck: Deck) -> str:
    """The deck as a TOML file that :func:`parse_deck` reads back to the same deck (values as link text)."""
    lines = [f"title = {_toml(deck.title)}"]
    if deck.description:
        lines.append(f"description = {_toml(deck.description)}")
    for slide in deck.slides:
        lines += ["", "[[slides]]", f"title = {_toml(slide.title)}", f"page = {_toml(slide.page)}"]
        query = slide.query
        if query:
            lines.append("values = { " + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in query.items()) + " }")
        if slide.sweep is not None:
            lines.append(f"sweep = {slide.sweep.to_toml()}")
        if slide.parts:
            lines.append(f"parts = [{', '.join(_toml(p) for p in slide.parts)}]")
        if slide.readouts:
            lines.append(f"readouts = [{', '.join(_toml(r) for r in slide.readouts)}]")
        if slide.figures:
            lines.append(f"figures = [{', '.join(_toml(f) for f in slide.figures)}]")
        if slide.withhold:
            lines.append("withhold = true")
        if slide.notes:
            lines.append(f"notes = {_toml(slide.notes)}")
    return "\n".join(lines) + "\n"


def slide_from_link(
    page: str,
    query: Mapping[str, str],
    title: str = "",
    notes: str = "",
    sweep: Sweep | None = None,
    parts: Sequence[str] = (),
    readouts: Sequence[str] = (),
    withhold: bool = False,
    figures: Sequence[str] = (),
) -> Slide:
    """A slide made from a page's link values (the "Add this view to a deck" collector, or a slide of an uploaded
    deck copied into the draft, which keeps its ``sweep``, ``parts``, ``readouts``, ``figures`` and ``withhold``).
    Raises DeckError."""
    toml = f"[[slides]]\ntitle = {_toml(title.strip() or page_label(page))}\npage = {_toml(page)}\n"
    if query:
        toml += "values = { " + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in query.items()) + " }\n"
    if sweep is not None:
        toml += f"sweep = {sweep.to_toml()}\n"
    if parts:
        toml += f"parts = [{', '.join(_toml(p) for p in parts)}]\n"
    if readouts:
        toml += f"readouts = [{', '.join(_toml(r) for r in readouts)}]\n"
    if figures:
        toml += f"figures = [{', '.join(_toml(f) for f in figures)}]\n"
    if withhold:
        toml += "withhold = true\n"
    if notes.strip():
        toml += f"notes = {_toml(notes)}\n"
    return parse_deck(toml, "draft").slides[0]


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a TOML basic string


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def _num(x: float) -> str:
    if math.isfinite(x) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


# ---------------------------------------------------------------------- a talk shared by two tabs
@dataclass
class Talk:
    """Where a deck being presented stands: the main tab writes it, the speaker view polls it."""

    deck: Deck
    slide: int
    blank: bool = False
    started: float = field(default_factory=time.time)
    slide_since: float = field(default_factory=time.time)


class Talks:
    """Talks in progress, by id (shared by the sessions of one server process; the oldest are forgotten)."""

    def __init__(self, limit: int = 200) -> None:
        self._talks: dict[str, Talk] = {}
        self._lock = threading.Lock()
        self.limit = limit

    def update(self, talk_id: str, deck: Deck, slide: int, blank: bool) -> Talk:
        with self._lock:
            talk = self._talks.get(talk_id)
            if talk is None:
                talk = self._talks[talk_id] = Talk(deck, slide, blank)
            elif talk.deck.name != deck.name or talk.slide != slide:
                talk.deck, talk.slide, talk.slide_since = deck, slide, time.time()
            talk.deck, talk.blank = deck, blank
            while len(self._talks) > self.limit:
                self._talks.pop(next(iter(self._talks)))
            return talk

    def get(self, talk_id: str) -> Talk | None:
        with self._lock:
            return self._talks.get(talk_id)


TALKS = Talks()
