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


@dataclass
class View:
    """A page's output for one state: figures by name, readouts, messages and the tables behind the figures."""

    figures: dict[str, go.Figure] = field(default_factory=dict)
    readouts: list[Readout] = field(default_factory=list)
    notices: list[tuple[str, str]] = field(default_factory=list)  # (kind, text): "warning" or "info"
    tables: dict[str, Callable[[], pd.DataFrame]] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)  # numbers the page's texts quote


DEFAULT = Options()
