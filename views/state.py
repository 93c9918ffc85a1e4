"""The typed state contract of a page: its fields, how each round-trips through the URL, and its presets.

A page declares its state once, as a :class:`Spec` of :class:`Field` s (URL name, type, default, range or choices,
label, help, old names). Everything else reads the spec: the widgets (``pages.frame``), link parsing and clamping,
presets, the "Link to this exact view" box, lecture decks and cards. This module imports no Streamlit, so a link,
a deck slide or a card can be checked without running a page.

Rules the spec enforces (tests check them for every page):
- a field's URL name is also its widget key, and no two pages share one (widget keys live in one session state
  for the whole app, so a shared key would hand one page's value to another);
- a value from a link that is not valid gives a clear message and the field's default (Streamlit's bound widgets
  drop such a value, so the link and the page agree), never an exception;
- every preset names real fields with valid values (checked when the spec is built).

The URL holds only values that differ from the default, as text: :meth:`Spec.query` and :meth:`Spec.parse`
round-trip every valid state.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["float", "int", "choice", "multi", "bool", "text"]

# App-wide link parameters: settings of the session, not state of any page.
APP_PARAMS: frozenset[str] = frozenset({"present", "hide", "image_format"})


@dataclass(frozen=True)
class Field:
    """One piece of a page's state.

    ``name`` is the URL parameter and the widget key. ``widget`` says how the frame draws it: ``number``,
    ``slider``, ``select_slider``, ``selectbox``, ``radio``, ``segmented``, ``toggle``, ``text`` or ``tabs``.
    ``aliases`` are older URL names that links made before a rename still use. A ``multi`` field holds a tuple
    of its choices (written ``a,b,c`` in a link); an ``optional`` number may also be None (empty).
    """

    name: str
    label: str
    kind: Kind
    default: Any
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] = ()
    widget: str = ""
    step: float | None = None
    fmt: str | None = None
    help: str | None = None
    aliases: tuple[str, ...] = ()
    max_chars: int = 2000
    optional: bool = False
    extra: tuple[tuple[str, Any], ...] = ()  # further widget arguments (placeholder, captions, ...)

    def __post_init__(self) -> None:
        if self.kind in ("float", "int") and (self.lo is None or self.hi is None or not self.lo <= self.hi):
            raise ValueError(f"field {self.name!r}: a number needs lo <= hi")
        if self.kind in ("choice", "multi") and not self.choices:
            raise ValueError(f"field {self.name!r}: a choice needs choices")
        if not self.widget:
            default_widget = {
                "float": "number",
                "int": "number",
                "choice": "selectbox",
                "bool": "toggle",
                "multi": "pills",
            }
            object.__setattr__(self, "widget", default_widget.get(self.kind, "text"))
        problem = self.check(self.default)
        if problem:
            raise ValueError(f"field {self.name!r}: default {self.default!r}: {problem}")

    # ------------------------------------------------------------------ values
    def check(self, value: Any) -> str | None:
        """Why ``value`` is not a valid value of this field, or None if it is."""
        if self.kind == "bool":
            return None if isinstance(value, bool) else "not true or false"
        if self.kind == "choice":
            return None if value in self.choices else f"not one of {', '.join(self.choices)}"
        if self.kind == "multi":
            ok = isinstance(value, tuple) and all(v in self.choices for v in value)
            return None if ok else f"not a tuple of {', '.join(self.choices)}"
        if self.kind == "text":
            return None if isinstance(value, str) and len(value) <= self.max_chars else "not a short text"
        if value is None and self.optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "not a number"
        if not math.isfinite(value):
            return "not a finite number"
        if self.kind == "int" and value != int(value):
            return "not a whole number"
        if not self.lo <= value <= self.hi:
            return f"outside {_num(self.lo)} to {_num(self.hi)}"
        return None

    def to_text(self, value: Any) -> str:
        """The value as the URL writes it."""
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "multi":
            return ",".join(value)
        if value is None:
            return ""
        if self.kind == "int":
            return str(int(value))
        if self.kind == "float":
            return _num(value)
        return str(value)

    def parse(self, raw: str) -> tuple[Any, str | None]:
        """A URL value -> (the value to use, a message if the link's value could not be used as it is)."""
        text = raw.strip()
        if self.kind == "bool":
            if text.lower() in ("true", "false"):
                return text.lower() == "true", None
            return self.default, self._refused(raw, "it is not true or false")
        if self.kind == "choice":
            if text in self.choices:
                return text, None
            folded = {c.lower(): c for c in self.choices}
            if text.lower() in folded:
                return folded[text.lower()], None
            return self.default, self._refused(raw, f"it is not one of {', '.join(self.choices)}")
        if self.kind == "multi":
            parts = [p.strip() for p in text.split(",") if p.strip()]
            unknown = [p for p in parts if p not in self.choices]
            kept = tuple(c for c in self.choices if c in parts)  # in the field's order, once each
            if unknown:
                why = f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not among {', '.join(self.choices)}"
                return kept, (
                    f"The link asked for `{self.name}={_short(raw)}`, which is not a valid value here ({why}); "
                    f"using `{','.join(kept)}` instead."
                )
            return kept, None
        if self.kind == "text":
            if len(raw) > self.max_chars:
                return self.default, self._refused(raw, f"it is longer than {self.max_chars:,} characters")
            return raw, None
        if not text and self.optional:
            return None, None
        try:
            number = float(text)
        except ValueError:
            return self.default, self._refused(raw, "it is not a number")
        if not math.isfinite(number):
            return self.default, self._refused(raw, "it is not a finite number")
        if not self.lo <= number <= self.hi:  # the default, not the nearest bound: Streamlit drops such a value
            return self.default, self._refused(raw, f"it is outside {_num(self.lo)} to {_num(self.hi)}")
        if self.kind == "int" and not number.is_integer():
            return round(
                number
            ), f"The link asked for `{self.name}={_short(raw)}`, a whole number here; using `{round(number)}`."
        return (int(number) if self.kind == "int" else number), None

    def _refused(self, raw: str, why: str) -> str:
        return (
            f"The link asked for `{self.name}={_short(raw)}`, which is not a valid value here ({why}); "
            f"using `{self.to_text(self.default)}` instead."
        )


class State(Mapping[str, Any]):
    """A page's values, one per field of its spec: read-only, hashable (a cache key), with attribute access."""

    __slots__ = ("_items", "_values")

    def __init__(self, values: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_items", tuple(sorted(self._values.items())))

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __getattr__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("State is read-only; use replace()")

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self._items == other._items

    def __repr__(self) -> str:
        return f"State({self._values!r})"

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:  # pickling (Streamlit's cache keys)
        return State, (dict(self._items),)

    def replace(self, **changes: Any) -> State:
        return State({**self._values, **changes})


@dataclass(frozen=True)
class Answer:
    """What a preset asks, answered: the readout that shows it (first in its row while the preset is on) and the
    answer its source states, as the source prints it (a number, or a range "60–70%")."""

    readout: str  # the readout's label, in plain words
    stated: str
    source: str
    row: str = "readouts"  # the view's readouts, or the name of a row of readouts in the view's facts (a tab's)
    tolerance: float = 0.0  # relative, where the source's rounding differs from core's (a problem's own tolerance)


@dataclass(frozen=True)
class Spec:
    """A page's state: its URL path, its fields (in the order the page shows them), and its presets.

    ``answers``: the presets that state an answer, and where the page shows it (:func:`views.with_answers` puts
    that readout first while the page's values are the preset's)."""

    page: str
    fields: tuple[Field, ...]
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    preset_help: Mapping[str, str] = field(default_factory=dict)
    answers: Mapping[str, Answer] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [f.name for f in self.fields]
        every = names + [a for f in self.fields for a in f.aliases]
        if len(set(every)) != len(every):
            raise ValueError(f"{self.page}: a field name or alias is used twice: {sorted(every)}")
        if APP_PARAMS & set(every):
            raise ValueError(f"{self.page}: {sorted(APP_PARAMS & set(every))} are app-wide settings")
        for preset, values in self.presets.items():
            for problem in self.check(values):
                raise ValueError(f"{self.page}: preset {preset!r}: {problem}")
        for preset in self.answers:
            if preset not in self.presets:
                raise ValueError(f"{self.page}: an answer for {preset!r}, which is not a preset")

    def preset_of(self, state: State) -> str | None:
        """The first preset whose every value equals the state's (floats to 1e-9), or None."""
        for name, values in self.presets.items():
            if all(same_value(state[f], v) for f, v in values.items()):
                return name
        return None

    @property
    def by_name(self) -> dict[str, Field]:
        return {f.name: f for f in self.fields}

    def __getitem__(self, name: str) -> Field:
        return self.by_name[name]

    def defaults(self) -> State:
        return State({f.name: f.default for f in self.fields})

    def check(self, values: Mapping[str, Any]) -> list[str]:
        """Problems of a partial set of values (a preset, a deck slide): unknown fields and invalid values."""
        fields = self.by_name
        problems = []
        for name, value in values.items():
            if name not in fields:
                problems.append(f"`{name}` is not a field of this page (fields: {', '.join(fields)})")
            elif (why := fields[name].check(value)) is not None:
                problems.append(f"`{name}` = {value!r} is {why}")
        return problems

    def resolve_aliases(self, query: Mapping[str, str]) -> dict[str, str]:
        """The link's parameters with old names replaced by the current ones (a current name wins a tie)."""
        rename = {a: f.name for f in self.fields for a in f.aliases}
        out = {k: v for k, v in query.items() if k not in rename}
        for old, new in rename.items():
            if old in query and new not in out:
                out[new] = query[old]
        return out

    def parse(self, query: Mapping[str, str]) -> tuple[State, list[str]]:
        """A link's parameters -> the page's full state and messages for what could not be used as it was."""
        query = self.resolve_aliases(query)
        fields = self.by_name
        values = {f.name: f.default for f in self.fields}
        problems = []
        for name, raw in query.items():
            if name in APP_PARAMS:
                continue
            if name not in fields:
                problems.append(
                    f"Ignored the unknown link parameter `{name}={_short(raw)}`: this page has no such control."
                )
                continue
            values[name], problem = fields[name].parse(raw)
            if problem:
                problems.append(problem)
        return State(values), problems

    def query(self, state: Mapping[str, Any]) -> dict[str, str]:
        """The URL parameters of a state: every value that differs from its field's default, as text."""
        return {f.name: f.to_text(state[f.name]) for f in self.fields if f.name in state and state[f.name] != f.default}

    def state(self, values: Mapping[str, Any] | None = None) -> State:
        """Defaults updated by ``values`` (a preset, say), which must be valid."""
        problems = self.check(values or {})
        if problems:
            raise ValueError("; ".join(problems))
        return State({**self.defaults(), **(values or {})})


def check_unique(specs: list[Spec]) -> list[str]:
    """Names that more than one page uses as a widget key (they would leak between pages in one session)."""
    seen: dict[str, str] = {}
    clashes = []
    for spec in specs:
        for f in spec.fields:
            if f.name in seen:
                clashes.append(f"`{f.name}` is a field of both {seen[f.name]} and {spec.page}")
            seen[f.name] = spec.page
    return clashes


def _num(x: float) -> str:
    """A number as a link writes it: short, exact for round values (1e+21 -> 1e21)."""
    if isinstance(x, int) or (float(x).is_integer() and abs(x) < 1e15):
        return str(int(x))
    return f"{x:.10g}".replace("e+", "e")


def _short(raw: str, limit: int = 60) -> str:
    return raw if len(raw) <= limit else raw[:limit] + "…"


def same_value(a: Any, b: Any) -> bool:
    """Whether two values of a field are the same: numbers within round-off (a link's ``1e21`` and a preset's
    ``1e21`` as float or int), lists and tuples element by element, anything else by ``==``."""
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return list(a) == list(b)
    return bool(a == b)
