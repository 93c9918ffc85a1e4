"""Where a lesson page's sections go (:class:`SectionLayout`, a part of :class:`pages.frame.page.Page`): their order
in the normal layout and in presenter mode, the places held for the figure and its readouts on the first screen, the
readouts' strips, the equation and the explanation.

    title and takeaway · figure · live readouts · equation · more views · explanation · Quick check ·
    Say it in an interview · Common mistakes · CSV download
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import streamlit as st

from pages.frame.binding import draw_tabs
from pages.frame.style import (
    FIGURE_HOLD_PX,
    PRESENTER_FIGURE_KEY,
    PRESENTER_READOUTS,
    PRESENTER_READOUTS_KEY,
    READOUT_STRIP_CLASS,
    READOUTS_PER_ROW_MAX,
)
from views import Options, Readout, View
from views.state import Spec, State


class _BodyCut(Exception):
    """Raised by the sections that LESSON_BODY leaves out; :meth:`pages.frame.page.Page.run` ends the body there."""


class SectionLayout:
    """The layout of :class:`pages.frame.page.Page`'s sections (which holds the page's settings and the slots)."""

    presenter: bool
    heading: bool
    figure_first: bool
    figure_tabs: bool
    hide: bool
    equation: str | None
    takeaway: str
    spec: Spec | None
    hidden_caption: str
    _slots: dict[str, Any]
    _cut: str | None
    _figure_place: Any
    _holding: bool
    _equation_drawn: bool
    shown_takeaway: str  # Page's property: the takeaway, or the question with answers hidden
    held_back: Callable[[Sequence[Readout]], list[Readout]]  # Page's: readouts as they may be shown

    def sections(self) -> None:
        """Lay out the page's sections here, in their order: notices, equation, figure, readouts, more views,
        explanation, checks, data. :meth:`run` does it inside the body's fragment; a page without a body (the deck
        player, the drills) calls it right after :meth:`setup`."""
        self._slots = {}
        if self.heading:
            self._slots["notices"] = st.container()
        else:  # a player's own title (a slide's) the whole width above the figure; the slide's notices under it (an
            # info above the title pushed the chart's axis off a projector's first screen: walkthrough 3.5)
            self._slots["title"] = st.container()
        if self.presenter:
            # the first screen: the figure with its readouts beside it (a deck's slide too: under its figure, the
            # first readout's label hung at the projector's bottom edge with its value cut off); the takeaway folds
            figure_column, readout_column = st.columns([4, 1], gap="small")
            # the figure's place as tall as its chart from the first paint (PRESENTER_FIGURE_KEY's CSS): what comes
            # below it (the takeaway's fold, the tab bars, the other folds) is drawn below the fold at once instead of
            # under the title, to be pushed down when the figure lands (a layout shift of 0.02-0.48, issue 30)
            hold = self.heading and self.figure_first
            key = f"{PRESENTER_FIGURE_KEY}-tabs" if self.figure_tabs else PRESENTER_FIGURE_KEY
            self._slots["figure"] = figure_column.container(key=key if hold else None)
            if hold:  # Streamlit draws no empty container: an element that takes no room (its CSS) has it drawn
                self._slots["figure"].container(height=1, border=False, key=f"{PRESENTER_FIGURE_KEY}-anchor")
            self._slots["readouts"] = readout_column.container(key=PRESENTER_READOUTS_KEY)
            if hold:  # its room too (PRESENTER_READOUTS_KEY's CSS), from the first paint: drawn, as the figure's
                self._slots["readouts"].container(height=1, border=False, key=f"{PRESENTER_READOUTS_KEY}-anchor")
            if self.heading:
                with st.expander(
                    "The question" if self.shown_takeaway != self.takeaway else "The takeaway", expanded=False
                ):
                    st.markdown(f"**{self.shown_takeaway}**")
            order: tuple[str, ...] = ("views", "equation", "explain", "checks", "data")
        elif not self.heading:
            order = ("figure", "readouts", "views", "equation", "explain", "checks", "data")
        else:
            # the figure right under the takeaway (on the first screen at 1280 x 720); the equation under the readouts
            order = ("figure", "readouts", "equation", "views", "explain", "checks", "data")
        if not self.heading:
            self._slots["notices"] = st.container()
        for name in order:
            if name == "figure":
                # The main figure (Page.figure) goes into a place of its own, one element, above the rest of the figure
                # section. On the page's first run in this session that place first holds the rest of the first
                # screen (an empty block) and the figure replaces it in one step: what a body draws below the figure
                # before computing its view (a tab bar with its controls) waits below the fold instead of standing
                # under the takeaway and jumping down when the figure lands (0.05-0.1 of layout shift on Serving and
                # Loss and units, issue 30). Not on later runs: a drag's rerun would blank the figure for a frame.
                self._figure_place = st.empty()
                if self.spec is not None and not st.session_state.get(self._drawn_key):
                    self._figure_place.container(height=FIGURE_HOLD_PX, border=False)
                    self._holding = True
            self._slots[name] = st.container()
        if self.presenter or not self.heading:  # under the first screen's figure and readouts: drawn now
            self._draw_equation()

    @property
    def _drawn_key(self) -> str:
        return f"_page_drawn_{self.spec.page if self.spec is not None else ''}"

    def _release_hold(self) -> None:
        """Give back the space held for the figure (a page whose first figure is not the main one, or none)."""
        if self._holding and self._figure_place is not None:
            self._figure_place.empty()
        self._holding = False

    def _draw_equation(self) -> None:
        """The page's equation, once: folded in presenter mode. In the normal layout it sits under the figure and
        its readouts and is drawn after them: drawn first, it stood under the takeaway until the figure landed and
        then jumped below the fold (a layout shift of 0.08-0.25 on LoRA's first load, issue 30)."""
        if not self.equation or self._equation_drawn:
            return
        self._equation_drawn = True
        with self._slots["equation"]:
            if self.presenter:
                with st.expander("The equation", expanded=False):
                    st.latex(self.equation)
            else:
                st.latex(self.equation)

    @contextmanager
    def title_area(self) -> Iterator[None]:
        """Write a player's own title (``heading=False``): the whole width, above the figure and its readouts."""
        with self._slots["title"]:
            yield

    @contextmanager
    def views(self) -> Iterator[None]:
        """Write secondary views (more figures, tabs) below the main figure's readouts."""
        with self._slots["views"]:
            yield

    @contextmanager
    def figure_area(self) -> Iterator[None]:
        """Write extra elements (a second figure, tabs) into the figure section."""
        self._release_hold()
        with self._slots["figure"]:
            yield

    def view_tabs(self, field: str, names: Sequence[str]) -> dict[str, Any]:
        """The figure area's tabs of the spec's ``field`` (a ``widget="tabs"`` choice), keyed by ``names``: the open
        one is drawn now, the others only when a user opens them."""
        with self.figure_area():
            return dict(zip(names, draw_tabs(self.spec[field]), strict=True))

    def open_view(self, figures: Callable[[State, Options], View], tabs: Mapping[str, Any]) -> View:
        """The page's view for the open tabs only (``figures``, a views module's, on the page's state and look), its
        notices shown, and predict-first's hiding set when no guess is in yet."""
        open_tabs = frozenset(name for name, tab in tabs.items() if tab.open)
        out = figures(self.state(), Options(theme=self.theme, presenter=self.presenter, parts=open_tabs))
        self.show_notices(out)
        self.predict_first(out.facts["predict"] == "hidden")
        return out

    def readouts(self, items: Sequence[Readout], per_row: int = 4) -> None:
        """The live numbers: one wrapping strip, ``per_row`` to a line (at most READOUTS_PER_ROW_MAX); in presenter
        mode a column beside the figure."""
        if self._cut == "figure":
            raise _BodyCut
        self._release_hold()
        self._draw_readouts(self.held_back(items), per_row)
        self._draw_equation()
        if self._cut == "readouts":
            raise _BodyCut

    def _draw_readouts(self, items: Sequence[Readout], per_row: int) -> None:
        if self.presenter:
            with self._slots["readouts"]:
                for item in items[:PRESENTER_READOUTS]:
                    st.metric(item.label, item.value, help=item.help)
                if len(items) > PRESENTER_READOUTS:
                    with st.expander(f"{len(items) - PRESENTER_READOUTS} more", expanded=False):
                        for item in items[PRESENTER_READOUTS:]:
                            st.metric(item.label, item.value, help=item.help)
            return
        per_row = max(1, min(per_row, READOUTS_PER_ROW_MAX))
        with self._slots["readouts"]:
            _metric_strip(items, key=f"{READOUT_STRIP_CLASS}-{per_row}")

    def explain(self, label: str = "What the figure shows") -> Callable[[Callable[[], None]], None]:
        """Explanations, as a decorator that draws the function it decorates at once: shown in normal mode, folded
        away in presenter mode, and with answers hidden not drawn at all (the explanation states the answers; a
        function is not called, where a ``with`` block would still run and send its text)::

            @page.explain()
            def _explanation() -> None:
                st.markdown(...)
        """

        def draw(body: Callable[[], None]) -> None:
            with self._slots["explain"]:
                if self.hide:
                    st.subheader(label)
                    st.caption(f"{self.hidden_caption}: the explanation states the answers.")
                elif self.presenter:
                    with st.expander(label, expanded=False):
                        body()
                else:
                    st.subheader(label)
                    body()

        return draw


def metric_row(items: Sequence[Readout]) -> None:
    """One row of live numbers where the page is drawing now (inside a tab, beside that tab's controls);
    :meth:`Page.readouts` draws the page's main readouts in their own place."""
    _metric_strip(items)


# One container of n metrics is n + 1 elements for the browser to render on every rerun; the grid of st.columns it
# replaced was 2n + rows (27 of the scaling body's 91 elements for its 12 readouts). The layout is _STRIP_CSS's.
def _metric_strip(items: Sequence[Readout], key: str | None = None) -> None:
    with st.container(horizontal=True, gap="small", key=key):
        for item in items:
            st.metric(item.label, item.value, help=item.help)
