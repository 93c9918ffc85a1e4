"""What each page shows, as a pure function of its typed state: ``figures(state, options) -> View``.

One module per page holds its :class:`~views.state.Spec` (``SPEC``) and its ``figures`` function. Nothing
here imports Streamlit, so the same function draws a page, a lecture deck's slide, a handout and a card's view.
``options.parts`` names the figures to build: a page asks for its main figure on every rerun and for a tab's
figures only when that tab is open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go

if TYPE_CHECKING:  # imported by a page's view when it builds a table (0.6 s; the scaling page's are built on a click)
    import pandas as pd

    from views.state import Spec, State


@dataclass(frozen=True)
class Readout:
    """One live number beside the figure."""

    label: str
    value: str
    help: str | None = None


@dataclass(frozen=True)
class Options:
    """How to draw a state: the theme, presenter mode, and which parts to build (``main`` and tab names)."""

    theme: str = "light"
    presenter: bool = False
    parts: frozenset[str] = frozenset({"main"})

    def wants(self, part: str) -> bool:
        return part in self.parts

    @property
    def look(self) -> dict[str, Any]:
        """The keyword arguments every viz builder takes for them: ``theme`` and ``presenter``."""
        return {"theme": self.theme, "presenter": self.presenter}


@dataclass(frozen=True)
class QuickCheck:
    """A page's quick check: a question, 2 to 5 options with the right one among them (``right``, counted from 0),
    and the worked answer shown once revealed. A lesson page lets its reader pick an option before revealing; a class
    answers it on the page's slides (docs/class-mode.md)."""

    question: str
    options: tuple[str, ...]
    right: int
    answer: str

    def __post_init__(self) -> None:
        if not 2 <= len(self.options) <= 5:
            raise ValueError(f"a quick check has 2 to 5 options, not {len(self.options)}: {self.question[:60]}")
        if not 0 <= self.right < len(self.options):
            raise ValueError(f"the right option must be one of the {len(self.options)}: {self.question[:60]}")
        if len(set(self.options)) != len(self.options):
            raise ValueError(f"two options read the same: {self.question[:60]}")


@dataclass(frozen=True)
class Drag:
    """A figure's main control dragged in the browser: the figure carries a plotly slider (``layout.sliders[0]``)
    whose step ``i`` shows the page at ``field = values[i]``; the page draws it as a drag row under the chart that
    moves the figure with no server round trip and writes ``values[i]`` into ``field`` when the drag ends."""

    field: str
    values: tuple[Any, ...]


@dataclass
class View:
    """A page's output for one state: figures by name, readouts, messages and the tables behind the figures."""

    figures: dict[str, go.Figure] = field(default_factory=dict)
    readouts: list[Readout] = field(default_factory=list)
    notices: list[tuple[str, str]] = field(default_factory=list)  # (kind, text): "warning" or "info"
    tables: dict[str, Callable[[], pd.DataFrame]] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)  # numbers the page's texts quote
    drags: dict[str, Drag] = field(default_factory=dict)  # figure name -> its in-browser drag

    def show_as_main(self, name: str) -> None:
        """Make the figure ``name`` (the open tab's) also the view's ``main`` figure, with its drag if it has one,
        for the players and links that draw ``main``; nothing when that figure was not built."""
        if name in self.figures:
            self.figures["main"] = self.figures[name]
            if name in self.drags:
                self.drags["main"] = self.drags[name]


DEFAULT = Options()


def with_answers(spec: Spec, state: State, view: View) -> View:
    """The view with the answer of the preset its state matches (``spec.answers``) as the first readout of its row:
    a preset that asks a question shows its answer first, not thirteenth. Rows without that readout stay as they
    are; ``view`` itself is changed and returned."""
    predict = view.facts.get("predict")
    if predict == "hidden":  # predict-first, no guess yet: the view shows what it may, in its own order
        return view
    kept = 3 if predict == "revealed" else 0  # the truth, the guess and the error stay first (views.predict.reveal)
    name = spec.preset_of(state)
    answer = spec.answers.get(name) if name is not None else None
    if answer is None:
        return view
    row = view.readouts[kept:] if answer.row == "readouts" else view.facts.get(answer.row)
    if not row:
        return view
    lead = [r for r in row if r.label == answer.readout]
    ordered = lead[:1] + [r for r in row if r is not (lead[0] if lead else None)]
    if answer.row == "readouts":
        view.readouts = view.readouts[:kept] + ordered
    else:
        view.facts[answer.row] = ordered
    return view
