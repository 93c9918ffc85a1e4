"""The frame of one lesson page (:class:`Page`): its set-up, its body, its controls and figures; its standard sections,
in the same order on every page, come from :class:`pages.frame.layout.SectionLayout` and
:class:`pages.frame.answers.AnswerSections`.

A lesson page puts everything below its set-up in a body function and hands it to :meth:`Page.run`, which runs it
in ``st.fragment``: a change of one of the page's own controls reruns the body alone, and the shared frame
(navigation, presenter and theme switches, title, takeaway) stays on screen as it was, unsent.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from pages.frame.alt import figure_alt
from pages.frame.answers import AnswerSections
from pages.frame.binding import _enter, drag_sync, drag_writer, draw_field, preset_buttons, reset_button
from pages.frame.charts import DragRow, click_handlers, live_chart, live_chart_draws, live_chart_ready
from pages.frame.drag import first_slider_prefix, slider_label
from pages.frame.layout import SectionLayout, _BodyCut
from pages.frame.nav import lesson_links
from pages.frame.sidebar import (
    HIDDEN_CAPTION,
    PREDICT_CAPTION,
    _page_config,
    _sidebar_frame,
    add_to_deck,
    carried_params,
    image_format,
    share_link,
    sidebar_footer,
    viewer_theme,
)
from pages.frame.style import (
    CONTROL_ROW_CLASS,
    CONTROLS_PER_ROW_MAX,
    PRESENTER_CHART_CLASS,
)
from views import Drag, Readout, View
from views.state import Spec, State
from viz.style import get_theme, plotly_config

# For comparison only (bench/bench_body.py): LESSON_BODY=figure ends each page's body where its readouts would start
# (the frame, the controls and the main figure stay), LESSON_BODY=readouts right after its readouts.
BODY_CUTS = ("figure", "readouts")


@dataclass
class Page(SectionLayout, AnswerSections):
    """The frame of one page. Create it first thing in the page script, then fill its sections in any order."""

    title: str
    icon: str  # a Material Symbols name, ":material/...:" (emoji need a colour-emoji font)
    takeaway: str
    equation: str | None = None
    presenter: bool = False
    image_format: str = "png"
    spec: Spec | None = None
    _problems: list[str] = field(default_factory=list)
    _values: dict[str, Any] = field(default_factory=dict)
    _slots: dict[str, Any] = field(default_factory=dict)
    hide: bool = False  # answers hidden (?hide=true): quick checks and interview prompts show no answer
    theme: str = "light"  # the viewer's theme, "light" or "dark": figures are drawn for it (viz.style)
    heading: bool = True  # the title and takeaway on top (the deck player draws its slide's title instead)
    figure_first: bool = True  # the page opens on a figure (the drills open on a card, whose figure may come later)
    figure_tabs: bool = False  # the figure sits under a tab bar (presenter mode keeps the bar's room too)
    short_title: str = ""  # presenter mode's one-line title
    question: str = ""  # the page's interview question: with answers hidden it replaces the takeaway
    _predicting: bool = False  # answers held back by Predict first (no guess yet), not by hide=true
    answer_phrases: tuple[str, ...] = ()  # the answer's key phrases (its view's ANSWER_PHRASES): never sent when hidden
    _view: View | None = None  # the page's view (from show_notices): its readouts describe its figures
    _cut: str | None = None  # LESSON_BODY in a body run (bench/bench_body.py): where the body ends; None: nowhere
    _figure_place: Any = None  # the main figure's own place (normal layout; sections)
    _holding: bool = False  # that place holds the first screen's space on a page's first run
    _equation_drawn: bool = False  # this run drew the equation (Page._draw_equation)
    _in_body: bool = False  # a copy running the body (run): the lesson-order links are drawn after it, outside

    # ------------------------------------------------------------------ set-up
    @classmethod
    def setup(
        cls,
        title: str,
        icon: str,
        takeaway: str,
        equation: str | None = None,
        spec: Spec | None = None,
        short_title: str | None = None,
        heading: bool = True,
        question: str = "",
        answer_phrases: Sequence[str] = (),
        figure_first: bool = True,
        figure_tabs: bool = False,
    ) -> Page:
        """Configure the page, read its link through its spec, draw the shared sidebar and the page's title.

        The sections follow: :meth:`run` lays them out in the body's fragment, or :meth:`sections` here.

        ``icon``: a Material Symbols name (``":material/trending_up:"``). ``short_title``: the title presenter mode
        shows on one line; by default the part of ``title`` before its first colon. ``heading=False`` leaves out the
        title and takeaway (the deck player shows its slide's title instead).
        ``question``: the page's interview question (its view's ``QUESTION``), shown
        instead of the takeaway when answers are hidden (the takeaway states the answer, so it is not sent at all).
        ``answer_phrases``: the answer's key phrases and numbers (its view's ``ANSWER_PHRASES``); with answers hidden a
        readout's help that quotes one is left out. ``figure_first=False``: the page may open without a figure (the
        drills), so presenter mode keeps no place for one. ``figure_tabs``: the page's figure sits under a tab bar
        (:meth:`figure_area` draws tabs), so presenter mode keeps the bar's room above the figure's place too.
        """
        _page_config(f"{title} · LLM lesson explorer")
        problems = _enter(spec) if spec is not None else []
        presenter, image_format, hide = _sidebar_frame(current=spec.page if spec is not None else None)
        page = cls(title, icon, takeaway, equation, presenter, image_format, spec, problems, hide=hide)
        page.short_title = short_title or title.split(":")[0].strip()
        page.question = question
        page.answer_phrases = tuple(answer_phrases)
        page.theme = viewer_theme()
        page.heading = heading
        page.figure_first = figure_first
        page.figure_tabs = figure_tabs
        page._heading()
        return page

    def _heading(self) -> None:
        """What stays on screen while the body reruns: the page's title and (normal mode) its takeaway (the frame's CSS
        came first, with the page's config)."""
        if not self.heading:
            return
        if self.presenter:  # a one-line title; the takeaway folds away below the figure (sections)
            st.title(self.short_title, anchor=False, help=None if self.short_title == self.title else self.title)
        else:
            st.title(self.title)
            st.markdown(f"**{self.shown_takeaway}**")

    def gives_away(self, text: str | None) -> bool:
        """Whether ``text`` quotes one of the answer's key phrases while answers are hidden."""
        low = (text or "").lower()
        return self.hide and any(p.lower() in low for p in self.answer_phrases)

    def held_back(self, items: Sequence[Readout]) -> list[Readout]:
        """Readouts as they may be shown: with answers hidden, a help that quotes the answer is left out (the
        number itself belongs to the figure, which stays)."""
        return [dataclasses.replace(r, help=None) if self.gives_away(r.help) else r for r in items]

    def note(self, text: str) -> None:
        """A paragraph under a tab's figure (Markdown): with answers hidden, one that quotes the answer is replaced
        by a caption saying why."""
        if self.gives_away(text):
            st.caption(f"{self.hidden_caption}: the note under this figure states the answer.")
        else:
            st.markdown(text)

    def predict_first(self, hidden: bool) -> None:
        """Predict first with no guess committed yet (``hidden``): every text that states the answer is held back
        as with hide=true, under a caption that says a guess brings it back."""
        if hidden and not self.hide:
            self.hide, self._predicting = True, True

    @property
    def hidden_caption(self) -> str:
        """Why an answer is not shown: hide=true, or Predict first before a guess."""
        return PREDICT_CAPTION if self._predicting else HIDDEN_CAPTION

    @property
    def shown_takeaway(self) -> str:
        """The takeaway, or with answers hidden the page's question (the takeaway states its answer)."""
        if self.hide and not self._predicting and self.question:
            return f"Question: {self.question}"
        return self.takeaway

    # ------------------------------------------------------------------ the body
    def run(self, body: Callable[[Page], None]) -> None:
        """Run the page's body (its controls, figures, readouts and texts) in a fragment.

        A change of a control drawn by the body reruns the body alone: Streamlit leaves the frame that
        :meth:`setup` drew (navigation, presenter mode, title, takeaway) on screen as it is and sends only the
        body's elements. Measured both ways in turn (bench/bench_controls.py, ``LESSON_FRAGMENT=off``), that made the
        rerun's messages arrive 31% sooner and the redrawn figure 7% sooner (README, Performance). The frame's own
        switches still rerun the whole page. Each run of the body gets a fresh copy of this page: what a run sets
        (``hide`` for predict-first, the controls' values, the view) does not leak into the next one, and the link's
        problems are reported once.
        """

        def _body() -> None:
            cut = os.environ.get("LESSON_BODY")
            fresh = dataclasses.replace(
                self,
                _values={},
                _slots={},
                _view=None,
                _cut=cut if cut in BODY_CUTS else None,
                _in_body=True,
                _equation_drawn=False,
                _figure_place=None,
                _holding=False,
            )
            self._problems = []  # reported by this run's finish(); a rerun of the body alone does not repeat them
            fresh.sections()
            try:
                body(fresh)
            except _BodyCut:  # LESSON_BODY (bench/bench_body.py): the rest of the body left out
                fresh.finish()

        if os.environ.get("LESSON_FRAGMENT") == "off":  # the whole page on every rerun, for comparison (bench/)
            _body()
        else:
            st.fragment(_body, key=f"body-{self.spec.page if self.spec else self.short_title}")()
        if self.spec is not None:  # part of the frame: a rerun of the body alone does not send them again
            lesson_links(self.spec.page, carried_params() or None)

    # ------------------------------------------------------------------ sections
    @contextmanager
    def controls(self, presets: Sequence[str] | None = None) -> Iterator[None]:
        """Controls live in the sidebar under the navigation, after the presets (all of the spec's, or ``presets``)
        and a reset."""
        with st.sidebar:
            # no heading: the presets' row starts the page's controls, so that its first control is on the first
            # screen at 1280 x 720 under the navigation (issue 30)
            if self.spec is not None:
                if self.spec.presets and (presets is None or presets):
                    preset_buttons(self.spec, presets)  # the reset beside them
                else:
                    reset_button(self.spec, "Reset to defaults")
            yield

    def control(self, name: str, **overrides: Any) -> Any:
        """Draw the widget of the spec's field ``name`` here (sidebar, tab or column) and return its value.

        The widget's key is the field's URL name and it is bound to the URL; ``overrides`` are extra widget
        arguments for this call (``disabled``, ``on_change``, ``label_visibility``...).
        """
        assert self.spec is not None, "control() needs a page spec"
        value = draw_field(self.spec[name], **overrides)
        self._values[name] = value
        return value

    def control_row(
        self, *names: str, per_row: int | None = None, overrides: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        """Draw the spec's fields side by side (a tab's own controls): one wrapping row, ``per_row`` to a line (all of
        them by default, at most CONTROLS_PER_ROW_MAX), one to a line on a phone. ``overrides``: extra widget
        arguments by field name, as for :meth:`control`.

        One horizontal container rather than ``st.columns``: a column is a block of its own, and every block of the
        body is rendered again on each rerun (README, Performance)."""
        n = max(1, min(per_row or len(names), CONTROLS_PER_ROW_MAX))
        with st.container(horizontal=True, gap="small", key=f"{CONTROL_ROW_CLASS}-{n}-{names[0]}"):
            for name in names:
                self.control(name, **(overrides or {}).get(name, {}))

    def state(self) -> State:
        """The page's typed state: the values of the controls drawn so far, defaults for the rest."""
        assert self.spec is not None, "state() needs a page spec"
        return State({f.name: self._values.get(f.name, f.default) for f in self.spec.fields})

    def show_notices(self, view: View) -> None:
        """The messages a view produced (clamped or renormalised inputs). The view is also the page's: each of
        its figures that :meth:`chart` draws gets the view's readouts in its text alternative."""
        self._view = view
        for kind, text in view.notices:
            self.notice(text, kind)

    def notice(self, text: str, kind: str = "warning") -> None:
        """A message at the top of the page (bad input, clamped values, renormalised inputs)."""
        with self._slots["notices"]:
            {"warning": st.warning, "info": st.info, "error": st.error}[kind](text)

    def figure(
        self,
        fig: go.Figure,
        key: str,
        filename: str,
        drag: str | None = None,
        drag_values: Sequence[Any] | None = None,
        on_click: Callable[[int], None] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Render a plotly figure in the figure section (see :meth:`chart`): the first one in the main figure's own
        place (one element: a second one there would replace it), any further one under it."""
        place, self._figure_place = self._figure_place, None
        with self._slots["figure"]:  # what goes with the chart (the drag's listener) goes under it
            return self.chart(fig, key, filename, drag, drag_values, on_click=on_click, _place=place, **kwargs)

    def chart(
        self,
        fig: go.Figure,
        key: str,
        filename: str,
        drag: str | None = None,
        drag_values: Sequence[Any] | None = None,
        slot: Any | None = None,
        on_click: Callable[[int], None] | None = None,
        _place: Any | None = None,
        **kwargs: Any,
    ) -> Any:
        """Render a plotly figure here (inside a tab, say), with PNG or SVG export from the camera button. Without
        extra keyword arguments or a ``slot`` it goes into a live chart that stays mounted across reruns
        (:mod:`pages.frame.charts`); extra keyword arguments go to ``st.plotly_chart`` (``on_select``, ...), which
        builds a new chart whenever the figure changes. The figure is drawn as it comes: its
        builder already chose the theme and presenter mode's type (``Options(theme=page.theme,
        presenter=page.presenter)``), and it is not mutated here (it may be shared through a cache).

        ``slot``: a slot from :meth:`chart_slot` to draw into, so that a later call replaces the figure in place (a
        deck's sweep). ``on_click``: called with the index of a point clicked in the figure.

        ``drag``: the field that the figure's plotly slider moves in the browser, ``drag_values`` the field's value
        at each step; by default the drag the page's view declares for this figure (``View.drags``). In a live chart
        the slider becomes a drag row under the figure (:func:`pages.frame.drag.split_slider`); in Streamlit's
        chart plotly draws it. When the drag ends, the value of the step it ended on (``drag_values[step]``, or the
        step's own ``value``) is written into that field, so the URL, the link and every readout follow. A live
        chart's slider that writes no field of this page (a deck draws a lesson page's figure) becomes a free drag
        row: its steps are drawn in the browser and nothing goes to the server.
        """
        if drag is None:
            declared = self._drag_of(fig)
            # the page's own field: a deck draws a lesson page's view, whose drag writes a field the deck has not
            if declared is not None and self.spec is not None and declared.field in self.spec.by_name:
                drag, drag_values = declared.field, declared.values
        if drag is not None:
            assert self.spec is not None, "drag needs a page spec"
        prefix = first_slider_prefix(fig)  # None: no slider
        has_slider = prefix is not None
        kwargs.setdefault("alt", figure_alt(fig, drag is not None and has_slider, self._readouts_of(fig)))
        config = plotly_config(filename, image_format())  # the session's, which the body may have changed
        if slot is not None:
            height = {"height": "stretch"} if self.presenter else {}
            return slot.plotly_chart(fig, key=key, config=config, width="stretch", **height, **kwargs)
        # stays mounted, diffs each new figure in (a trace type the served plotly.js lacks: Streamlit's chart)
        live = set(kwargs) == {"alt"} and live_chart_ready() and live_chart_draws(fig)
        clicked, selected = click_handlers(key, on_click) if on_click is not None else (None, None)
        if selected is not None and not live:
            kwargs |= {"on_select": selected, "selection_mode": "points"}
        row = None
        look = get_theme(self.theme)
        colours = {"ink": look.text, "accent": look.palette["highlight"], "rail": look.axis}
        if drag is not None and live:
            f = self.spec[drag]
            row = DragRow(f.label, drag_writer(f, key, drag_values), **colours)
        elif live and has_slider:  # a figure's slider that writes no field of this page (a deck's): a free row
            row = DragRow(slider_label(prefix or ""), **colours)
        elif drag is not None and has_slider:
            drag_sync(self.spec[drag], key, drag_values)

        def draw(stretch: bool) -> Any:
            if live:
                return live_chart(fig, key, config, kwargs["alt"], stretch=stretch, drag=row, on_click=clicked)
            height = {"height": "stretch"} if stretch else {}
            return st.plotly_chart(fig, key=key, config=config, width="stretch", **height, **kwargs)

        if self.presenter:  # as tall as the screen leaves (see _PRESENTER_CSS)
            with st.container(key=f"{PRESENTER_CHART_CLASS}-{key}"):
                return draw(stretch=True)
        if _place is None:
            self._release_hold()
            return draw(stretch=False)
        self._holding = False  # the chart replaces the held space in one step (a live chart's place has its height)
        with _place:
            return draw(stretch=False)

    def _drag_of(self, fig: go.Figure) -> Drag | None:
        """The drag the page's view declares for ``fig`` (``View.drags``), when ``fig`` is one of its figures."""
        view = self._view
        if view is None:
            return None
        for name, other in view.figures.items():
            if fig is other:
                return view.drags.get(name)
        return None

    def _readouts_of(self, fig: go.Figure) -> Sequence[Readout]:
        """The readouts that go with ``fig``: the page's view's, when the figure is one of that view's."""
        view = self._view
        if view is not None and any(fig is other for other in view.figures.values()):
            return view.readouts
        return ()

    def chart_slot(self, key: str) -> Any:
        """An empty place for a figure that :meth:`chart` (``slot=``) fills and may replace in place; in presenter
        mode it is as tall as the screen leaves, like every main figure."""
        if self.presenter:
            with st.container(key=f"{PRESENTER_CHART_CLASS}-{key}"):
                return st.empty()
        return st.empty()

    def finish(self) -> None:
        """Report link values that could not be used as they were, show the share link, and the previous and next
        page in lesson order. Call last."""
        for message in self._problems:
            self.notice(message)
        if self._slots:  # a page that drew no readouts: its equation now
            self._draw_equation()
        self._release_hold()
        if self.spec is not None:
            st.session_state[self._drawn_key] = True
        if self.spec is not None and not self._in_body and "data" in self._slots:  # a player without a body: here
            with self._slots["data"]:
                lesson_links(self.spec.page, carried_params() or None)
        with st.sidebar:
            share_link()
            if self.spec is not None and self.spec.page not in ("Deck", "Drills", "Class"):  # views, not players
                add_to_deck(self.spec.page, self.spec.query(self.state()))
                if st.session_state.get("_interview_drive"):  # a mock interview's candidate follows this view
                    from pages.frame.interview_ui import publish

                    publish(self.spec.page, self.spec.query(self.state()))
        sidebar_footer()
