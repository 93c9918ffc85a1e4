"""The shared page frame: page set-up, presenter mode, URL checks, and the standard sections of every page.

A page script reads its controls, calls core (through functions it caches), calls a viz builder, and hands
the results to a :class:`Page`, which lays them out the same way on every page:

    title and takeaway · equation · figure · live readouts · more views · explanation · Quick check ·
    Say it in an interview · Common mistakes · CSV download

In presenter mode (``?present=true``, for lectures and screen-sharing) the type is larger, the figure comes
first, and the equation and explanations fold away until revealed. With answers hidden (``?hide=true``, for
screen-sharing in a mock interview) quick checks and interview prompts show their question but not the answer.
Every control of a page is bound to the URL (``bind="query-params"``), so the address bar is always a link to
the exact figure; URL values that Streamlit refuses are reported on the page instead of silently ignored.

Streamlit 1.67 caveats for bound widgets (checked by tests): a selectbox with ``format_func`` puts the
*formatted* label in the URL, so use short readable options instead; and an *integer* ``number_input`` seeded
from the URL with ``inf`` or ``1e400`` raises OverflowError inside Streamlit, so bound number inputs are
floats (``format="%.0f"`` for counts) and the page converts.

A lesson page puts everything below its set-up in a body function and hands it to :meth:`Page.run`, which runs it
in ``st.fragment``: a change of one of the page's own controls reruns the body alone, and the shared frame
(navigation, presenter and theme switches, title, takeaway) stays on screen as it was, unsent.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitAPIException, StreamlitPageNotFoundError
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from core.device import device_summary
from pages.frame.charts import component_data, live_chart, live_chart_ready
from pages.views import Readout, View
from pages.views.state import APP_PARAMS, Field, Spec, State
from viz.style import plotly_config

if TYPE_CHECKING:  # pandas takes 0.6 s to import: a page imports it when it builds a table, not before
    import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
PRESENT_KEY = "present"
HIDE_KEY = "hide"
IMAGE_FORMAT_KEY = "image_format"
_PRESENTER_STATE = "_presenter_mode"
_HIDE_STATE = "_hide_answers"
HIDDEN_CAPTION = "Answers hidden for screen-sharing (hide=true)"

# Every page of the explorer: (script relative to app.py, label, icon). The sidebar and the home page list
# the ones whose file exists.
PAGES: tuple[tuple[str, str, str], ...] = (
    ("app.py", "Home", ":material/explore:"),
    ("pages/1_Scaling_laws.py", "Scaling laws", ":material/trending_up:"),
    ("pages/2_KL_leash.py", "KL leash and DPO", ":material/compare_arrows:"),
    ("pages/3_LoRA.py", "LoRA", ":material/extension:"),
    ("pages/4_GRPO.py", "GRPO", ":material/groups:"),
    ("pages/5_Evaluation.py", "pass@k and error bars", ":material/straighten:"),
    ("pages/6_Attention.py", "Attention", ":material/visibility:"),
    ("pages/7_Training_memory.py", "Training memory", ":material/memory:"),
    ("pages/8_Serving.py", "Serving", ":material/rocket_launch:"),
    ("pages/9_PPO.py", "PPO: clip and advantage", ":material/content_cut:"),
    ("pages/10_Reward_model.py", "Reward model", ":material/balance:"),
    ("pages/11_Sampling.py", "Sampling and decoding", ":material/casino:"),
    ("pages/12_Loss_and_units.py", "Loss, units and SFT mask", ":material/calculate:"),
    ("pages/13_Schedules.py", "LR schedules and mid-training", ":material/trending_down:"),
    ("pages/14_Drills.py", "Interview drills", ":material/mic:"),
    ("pages/15_Deck.py", "Lecture decks", ":material/slideshow:"),
)


def existing_pages() -> list[tuple[str, str, str]]:
    """The entries of :data:`PAGES` whose script exists."""
    return [entry for entry in PAGES if (ROOT / entry[0]).exists()]


# Presenter mode lays out the first screen for a projector (1280 x 720 and up): a one-line title, then the figure
# beside a narrow column of readouts. Every chart is as tall as the screen leaves under the title, so the main figure
# is whole on the first screen at 1280 x 720 and at 1920 x 1080; Streamlit cannot read the viewport, CSS can (the
# chart is drawn with height="stretch" inside a keyed container whose height this sets). PRESENTER_TOP_PX is the
# space above the chart: header, title and a tab bar.
PRESENTER_CHART_CLASS = "present-chart"
PRESENTER_TOP_PX = 245
PRESENTER_READOUTS = 5  # readouts beside the figure; the rest fold under them

READOUT_STRIP_CLASS = "readouts"
READOUTS_PER_ROW_MAX = 6
CONTROL_ROW_CLASS = "controls"
CONTROLS_PER_ROW_MAX = 5
# For comparison only (bench/bench_body.py): LESSON_BODY=figure ends each page's body where its readouts would start
# (the frame, the controls and the main figure stay), LESSON_BODY=readouts right after its readouts.
BODY_CUTS = ("figure", "readouts")


class _BodyCut(Exception):
    """Raised by the sections that LESSON_BODY leaves out; :meth:`Page.run` ends the body there."""


# A keyed strip of readouts, `readouts-N`, holds N to a line: each takes 1/N of the width less its share of the gaps
# (Streamlit's "small" gap, 1rem), as the columns it replaced did. An unkeyed strip (metric_row, a tab's row) shares
# its line equally. Two to a line on a phone.
_STRIP_ITEM = '> [data-testid="stElementContainer"]'


def _line_shares(strip: Callable[[int], str], most: int) -> str:
    """CSS that puts n items of the strip ``strip(n)`` on a line, for n = 1..most: 1/n of the width less the gaps."""
    return "".join(
        f"  {strip(n)} {_STRIP_ITEM} {{ flex: 0 0 calc((100% - {n - 1}rem) / {n}); min-width: 0; }}\n"
        for n in range(1, most + 1)
    )


_STRIP_CSS = (
    _line_shares(lambda n: f".st-key-{READOUT_STRIP_CLASS}-{n}", READOUTS_PER_ROW_MAX)
    + f'  [data-testid="stHorizontalBlock"]:not([class*="st-key-{READOUT_STRIP_CLASS}-"])'
    f':has({_STRIP_ITEM} > [data-testid="stMetric"]) {_STRIP_ITEM} {{ flex: 1 1 0; min-width: 0; }}\n'
    + f'  @media (max-width: 640px) {{ [data-testid="stHorizontalBlock"]:has({_STRIP_ITEM} > [data-testid="stMetric"]) '
    f"{_STRIP_ITEM} {{ flex-basis: calc(50% - 0.5rem) !important; }} }}\n"
    # a row of controls (Page.control_row), keyed `controls-N-<first field>`: N to a line, one to a line on a phone
    + _line_shares(lambda n: f'[class*="st-key-{CONTROL_ROW_CLASS}-{n}-"]', CONTROLS_PER_ROW_MAX)
    + f'  @media (max-width: 640px) {{ [class*="st-key-{CONTROL_ROW_CLASS}-"] {_STRIP_ITEM} '
    f"{{ flex-basis: 100% !important; }} }}\n"
)
# A readout's label wraps onto a second line rather than being cut short with an ellipsis (Streamlit's default).
_PRESENTER_CSS = f"""
<style>
{_STRIP_CSS}  html {{ font-size: 22px; }}
  [data-testid="stMain"] .block-container {{ max-width: 100%; padding: 3.6rem 1.5rem 2rem 1.5rem; }}
  [data-testid="stMetricValue"] {{ font-size: 1.35rem; }}
  [data-testid="stMetricLabel"] p {{ font-size: 0.75rem; }}
  [data-testid="stMetricLabel"] .stMarkdownEllipsis, [data-testid="stMetricLabel"] p {{ white-space: normal !important;
        overflow: visible; }}
  h1 {{ font-size: 1.9rem !important; padding: 0 0 0.2rem 0 !important; white-space: nowrap; overflow: hidden;
        text-overflow: ellipsis; }}
  [class*="st-key-{PRESENTER_CHART_CLASS}-"] {{ height: calc(100vh - {PRESENTER_TOP_PX}px) !important;
        min-height: 360px; flex: 0 0 auto !important; }}
</style>
"""
_BASE_CSS = f"""
<style>
{_STRIP_CSS}  [data-testid="stMetricValue"] {{ font-size: 1.6rem; }}
  [data-testid="stMetricLabel"] .stMarkdownEllipsis, [data-testid="stMetricLabel"] p {{ white-space: normal !important;
        overflow: visible; }}
</style>
"""
# Streamlit writes a primary button's label in white; on the dark theme's light blue (config.toml) that is 2.6:1, so
# the label takes the dark background colour there (7.0:1). Sent with the dark theme only (see viewer_theme).
_DARK_CSS = """
<style>
  button[kind="primary"], button[kind="primary"] p { color: #171614 !important; }
</style>
"""


@dataclass(frozen=True)
class InterviewAnswer:
    """A 60-90 second answer: one sentence, one equation, one number, one trade-off."""

    sentence: str
    equation: str  # LaTeX
    number: str
    trade_off: str


@dataclass
class Page:
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
    short_title: str = ""  # presenter mode's one-line title
    _view: View | None = None  # the page's view (from show_notices): its readouts describe its figures
    _cut: str | None = None  # LESSON_BODY in a body run (bench/bench_body.py): where the body ends; None: nowhere

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
    ) -> Page:
        """Configure the page, read its link through its spec, draw the shared sidebar and the page's title.

        The sections follow: :meth:`run` lays them out in the body's fragment, or :meth:`sections` here.

        ``icon``: a Material Symbols name (``":material/trending_up:"``). ``short_title``: the title presenter mode
        shows on one line; by default the part of ``title`` before its first colon. ``heading=False`` leaves out the
        title and takeaway (the deck player shows its slide's title instead).
        """
        _page_config(f"{title} · LLM lesson explorer")
        problems = _enter(spec) if spec is not None else []
        presenter, image_format, hide = _sidebar_frame()
        page = cls(title, icon, takeaway, equation, presenter, image_format, spec, problems, hide=hide)
        page.short_title = short_title or title.split(":")[0].strip()
        page.theme = viewer_theme()
        page.heading = heading
        page._heading()
        return page

    def _heading(self) -> None:
        """What stays on screen while the body reruns: the page's CSS, its title and (normal mode) its takeaway."""
        st.html((_PRESENTER_CSS if self.presenter else _BASE_CSS) + (_DARK_CSS if self.theme == "dark" else ""))
        if not self.heading:
            return
        if self.presenter:  # a one-line title; the takeaway folds away below the figure (sections)
            st.title(self.short_title, anchor=False, help=None if self.short_title == self.title else self.title)
        else:
            st.title(self.title)
            st.markdown(f"**{self.takeaway}**")

    def sections(self) -> None:
        """Lay out the page's sections here, in their order: notices, equation, figure, readouts, more views,
        explanation, checks, data. :meth:`run` does it inside the body's fragment; a page without a body (the deck
        player, the drills) calls it right after :meth:`setup`."""
        self._slots = {"notices": st.container()}
        if not self.heading:
            order: tuple[str, ...] = ("figure", "readouts", "views", "equation", "explain", "checks", "data")
        elif self.presenter:
            # the first screen: the figure with its readouts beside it; the takeaway folds
            figure_column, readout_column = st.columns([4, 1], gap="small")
            self._slots["figure"] = figure_column.container()
            self._slots["readouts"] = readout_column.container()
            with st.expander("The takeaway", expanded=False):
                st.markdown(f"**{self.takeaway}**")
            order = ("views", "equation", "explain", "checks", "data")
        else:
            order = ("equation", "figure", "readouts", "views", "explain", "checks", "data")
        for name in order:
            self._slots[name] = st.container()
        if self.equation:
            with self._slots["equation"]:
                if self.presenter:
                    with st.expander("The equation", expanded=False):
                        st.latex(self.equation)
                else:
                    st.latex(self.equation)

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
            fresh = dataclasses.replace(self, _values={}, _slots={}, _view=None, _cut=cut if cut in BODY_CUTS else None)
            self._problems = []  # reported by this run's finish(); a rerun of the body alone does not repeat them
            fresh.sections()
            try:
                body(fresh)
            except _BodyCut:  # LESSON_BODY (bench/bench_body.py): the rest of the body left out
                fresh.finish()

        if os.environ.get("LESSON_FRAGMENT") == "off":  # the whole page on every rerun, for comparison (bench/)
            _body()
            return
        st.fragment(_body, key=f"body-{self.spec.page if self.spec else self.short_title}")()

    # ------------------------------------------------------------------ sections
    @contextmanager
    def controls(self, presets: Sequence[str] | None = None) -> Iterator[None]:
        """Controls live in the sidebar, under the page's own heading, after the presets (all of the spec's, or
        ``presets``) and a reset."""
        with st.sidebar:
            st.header("Controls")
            if self.spec is not None:
                if self.spec.presets and (presets is None or presets):
                    preset_buttons(self.spec, presets)
                st.button(
                    "Reset to defaults",
                    key=f"reset-{self.spec.page}",
                    on_click=_load_values,
                    args=(self.spec, self.spec.defaults()),
                    help="Every control of this page back to its default value.",
                    width="stretch",
                )
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
        **kwargs: Any,
    ) -> Any:
        """Render a plotly figure in the figure section (see :meth:`chart`)."""
        with self._slots["figure"]:
            return self.chart(fig, key, filename, drag=drag, drag_values=drag_values, **kwargs)

    def chart(
        self,
        fig: go.Figure,
        key: str,
        filename: str,
        drag: str | None = None,
        drag_values: Sequence[Any] | None = None,
        slot: Any | None = None,
        **kwargs: Any,
    ) -> Any:
        """Render a plotly figure here (inside a tab, say), with PNG or SVG export from the camera button. Without
        extra keyword arguments or a ``slot`` it goes into a live chart that stays mounted across reruns
        (:mod:`pages.frame.charts`); extra keyword arguments go to ``st.plotly_chart`` (``on_select``, ...), which
        builds a new chart whenever the figure changes. The figure is drawn as it comes: its
        builder already chose the theme and presenter mode's type (``Options(theme=page.theme,
        presenter=page.presenter)``), and it is not mutated here (it may be shared through a cache).

        ``slot``: a slot from :meth:`chart_slot` to draw into, so that a later call replaces the figure in place (a
        deck's sweep).

        ``drag``: the field that the figure's plotly slider moves in the browser. When the drag ends, the
        value of the step it ended on (``drag_values[step]``, or the step's own ``value``) is written into that
        field, so the URL, the link and every readout follow.
        """
        if drag is not None:
            assert self.spec is not None, "drag needs a page spec"
            drag_sync(self.spec[drag], key, drag_values)
        kwargs.setdefault("alt", figure_alt(fig, drag is not None, self._readouts_of(fig)))
        config = plotly_config(filename, self.image_format)
        if slot is not None:
            height = {"height": "stretch"} if self.presenter else {}
            return slot.plotly_chart(fig, key=key, config=config, width="stretch", **height, **kwargs)
        live = set(kwargs) == {"alt"} and live_chart_ready()  # stays mounted, diffs each new figure in

        def draw(stretch: bool) -> Any:
            if live:
                return live_chart(fig, key, config, kwargs["alt"], stretch=stretch)
            height = {"height": "stretch"} if stretch else {}
            return st.plotly_chart(fig, key=key, config=config, width="stretch", **height, **kwargs)

        if self.presenter:  # as tall as the screen leaves (see _PRESENTER_CSS)
            with st.container(key=f"{PRESENTER_CHART_CLASS}-{key}"):
                return draw(stretch=True)
        return draw(stretch=False)

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

    @contextmanager
    def views(self) -> Iterator[None]:
        """Write secondary views (more figures, tabs) below the main figure's readouts."""
        with self._slots["views"]:
            yield

    @contextmanager
    def figure_area(self) -> Iterator[None]:
        """Write extra elements (a second figure, tabs) into the figure section."""
        with self._slots["figure"]:
            yield

    def readouts(self, items: Sequence[Readout], per_row: int = 4) -> None:
        """The live numbers: one wrapping strip, ``per_row`` to a line (at most READOUTS_PER_ROW_MAX); in presenter
        mode a column beside the figure."""
        if self._cut == "figure":
            raise _BodyCut
        self._draw_readouts(items, per_row)
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

    @contextmanager
    def explain(self, label: str = "What the figure shows") -> Iterator[None]:
        """Explanations: shown in normal mode, folded away in presenter mode."""
        with self._slots["explain"]:
            if self.presenter:
                with st.expander(label, expanded=False):
                    yield
            else:
                st.subheader(label)
                yield

    def quick_check(self, question: str, answer: str) -> None:
        """A question with its answer hidden until revealed (not sent at all when answers are hidden)."""
        with self._slots["checks"]:
            st.subheader("Quick check")
            st.markdown(question)
            if self.hide:
                st.caption(HIDDEN_CAPTION)
                return
            with st.expander("Reveal the answer", expanded=False):
                st.markdown(answer)

    def interview(self, prompt: str, answer: InterviewAnswer) -> None:
        """'Say it in an interview': a prompt, and a model answer hidden until revealed (not sent at all when
        answers are hidden)."""
        with self._slots["checks"]:
            st.subheader("Say it in an interview")
            st.markdown(f"*{prompt}*")
            if self.hide:
                st.caption(HIDDEN_CAPTION)
                return
            with st.expander("Reveal a 60-90 second answer", expanded=False):
                st.markdown(f"**In one sentence.** {answer.sentence}")
                st.markdown("**One equation.**")
                st.latex(answer.equation)
                st.markdown(f"**One number.** {answer.number}")
                st.markdown(f"**One trade-off.** {answer.trade_off}")

    def mistakes(self, items: Sequence[str]) -> None:
        """Common mistakes, as a list."""
        with self._slots["checks"]:
            st.subheader("Common mistakes")
            st.markdown("\n".join(f"- {item}" for item in items))

    def download(self, frames: dict[str, pd.DataFrame | Callable[[], pd.DataFrame]], filename_stem: str) -> None:
        """CSV downloads of the plotted data, one button per table.

        A table may be given as a function: it is then built only when its button is clicked (large tables).
        """
        with self._slots["data"]:
            st.subheader("The data behind the figure")
            with st.container(horizontal=True, gap="small"):  # one row of buttons, wrapping on a narrow screen
                for name, df in frames.items():
                    st.download_button(
                        f"{name} (CSV)",
                        (lambda make=df: make().to_csv(index=False)) if callable(df) else df.to_csv(index=False),
                        file_name=f"{filename_stem}-{name.lower().replace(' ', '-')}.csv",
                        mime="text/csv",
                        icon=":material/download:",
                        key=f"csv-{filename_stem}-{name}",
                    )

    def finish(self) -> None:
        """Report link values that could not be used as they were, and show the share link. Call last."""
        for message in self._problems:
            self.notice(message)
        with st.sidebar:
            share_link()
            if self.spec is not None and self.spec.page not in ("Deck", "Drills"):  # views, not players
                add_to_deck(self.spec.page, self.spec.query(self.state()))


# ---------------------------------------------------------------------- collecting views for a deck
# The session's draft deck: dicts (page, query, title, notes; sweep and parts for a slide copied from a deck), read
# by the deck player.
DECK_DRAFT = "_deck_draft"


def add_to_deck(page: str, query: dict[str, str]) -> None:
    """'Add this view to a deck': record this page and its link values in the session's draft deck."""
    draft = st.session_state.setdefault(DECK_DRAFT, [])
    with st.expander(f":material/slideshow: Add this view to a deck ({len(draft)} so far)"):
        st.text_input("Slide title (optional)", key="deck-add-title", max_chars=120)
        st.text_area("Speaker notes (optional, Markdown)", key="deck-add-notes", height=90, max_chars=4000)
        st.button("Add this view", key="deck-add", on_click=_add_view, args=(page, dict(query)), width="stretch")
        if draft:
            try:
                st.page_link(
                    "pages/15_Deck.py",
                    label="Open the draft deck",
                    icon=":material/slideshow:",
                    query_params={"deck": "draft"},
                )
            except StreamlitPageNotFoundError:  # a page script run on its own has no other pages
                pass


def _add_view(page: str, query: dict[str, str]) -> None:
    st.session_state.setdefault(DECK_DRAFT, []).append(
        {
            "page": page,
            "query": query,
            "title": st.session_state.get("deck-add-title", ""),
            "notes": st.session_state.get("deck-add-notes", ""),
        }
    )
    st.session_state["deck-add-title"] = ""
    st.session_state["deck-add-notes"] = ""
    st.toast(f"Added to the draft deck ({len(st.session_state[DECK_DRAFT])} views)")


def home_frame() -> None:
    """The frame of the home page: page config and the shared sidebar."""
    _page_config("LLM lesson explorer")
    presenter, _, _ = _sidebar_frame()
    st.html((_PRESENTER_CSS if presenter else _BASE_CSS) + (_DARK_CSS if viewer_theme() == "dark" else ""))


def _page_config(title: str) -> None:
    """``st.set_page_config`` for every page: wide, and in presenter mode the sidebar starts collapsed (its controls
    stay one click away, behind the arrow at the top left) so that the figure has the screen's width.

    No page icon: Streamlit 1.67 draws a ``:material/...:`` favicon by fetching its SVG from fonts.gstatic.com (a
    request off the machine; checked in the browser tests), and an emoji favicon needs a colour-emoji font. The
    tab keeps Streamlit's own icon."""
    st.set_page_config(
        page_title=title,
        layout="wide",
        initial_sidebar_state="collapsed" if _presenter_requested() else "auto",
    )


_TAG = re.compile(r"<[^>]+>")


ALT_READOUTS = 4  # readouts quoted in a figure's text alternative; the rest are in the readouts themselves


def figure_alt(fig: go.Figure, draggable: bool = False, readouts: Sequence[Readout] = ()) -> str:
    """A short text alternative for a figure (Streamlit gives it to the chart as its accessible name): its title,
    what its axes measure, and its live numbers as text (the first :data:`ALT_READOUTS` of ``readouts``, "label:
    value"), so that a screen reader hears what the figure shows."""
    layout = fig.layout

    def text(obj: Any) -> str:
        raw = getattr(getattr(obj, "title", None), "text", None) or ""
        return " ".join(_TAG.sub(" ", raw.replace("<br>", ". ")).split())

    def plain(raw: str) -> str:
        return " ".join(_TAG.sub(" ", raw).split())

    parts = [text(layout) or "Figure"]
    axes = [f"{name[0]}: {label}" for name in ("xaxis", "yaxis") if (label := text(getattr(layout, name, None)))]
    if axes:
        parts.append("Axes, " + "; ".join(axes))
    if readouts:
        shown = "; ".join(f"{plain(r.label)}: {plain(r.value)}" for r in readouts[:ALT_READOUTS])
        parts.append(f"Readouts, {shown}")
        if len(readouts) > ALT_READOUTS:
            parts.append("More readouts beside the figure, as text")
    else:
        parts.append("Its live numbers are in the readouts, as text")
    if draggable:
        parts.append("Its slider is also a control in the sidebar")
    return ". ".join(p.rstrip(". ") for p in parts) + "."


# ---------------------------------------------------------------------- shared sidebar
def viewer_theme() -> str:
    """The viewer's theme, "light" or "dark", as the browser reports it (``st.context.theme.type``); "light" while
    neither it nor the watcher knows.

    Read once per run by :meth:`Page.setup`. Streamlit 1.67 caveats: switching the theme in the main menu (or
    the system's scheme) does not rerun the script, so :func:`theme_watch` asks for the rerun; and the first run of a
    session may report the wrong type (streamlit issue #11920), which the watcher's rerun corrects. While Streamlit
    reports no type, the theme the watcher last saw in the browser counts.
    """
    kind = st.context.theme.type
    if kind in ("light", "dark"):
        return kind
    return st.session_state.get(_SEEN_THEME, "light")


def _sidebar_frame() -> tuple[bool, str, bool]:
    """The sidebar every page shares: presenter mode, hidden answers, image export format, and where core
    computes. Returns (presenter, image format, hide)."""
    with st.sidebar:
        history_shim()
        theme_watch()
        nav = st.container()  # filled after the toggles, so that the links can carry presenter mode and hide
        presenter = _presenter_toggle()
        hide = _hide_toggle()
        image_format = st.segmented_control(
            "Figure download (camera button)",
            ["png", "svg"],
            format_func=str.upper,
            key=IMAGE_FORMAT_KEY,
            default="png",
            persist_state="session",
        )
        st.caption(f"Core computes on: {device_summary()}")
    with nav:
        carry = carried_params() or None
        for path, label, icon in existing_pages():
            try:
                st.page_link(path, label=label, icon=icon, query_params=carry)
            except StreamlitPageNotFoundError:  # a page script run on its own has no other pages
                pass
        st.divider()
    return bool(presenter), image_format or "png", hide


def carried_params() -> dict[str, str]:
    """The session settings a link to another page carries (presenter mode, hidden answers), as link values."""
    out = {}
    if st.session_state.get(_PRESENTER_STATE, False):
        out[PRESENT_KEY] = "true"
    if st.session_state.get(_HIDE_STATE, False):
        out[HIDE_KEY] = "true"
    return out


def _presenter_toggle() -> bool:
    """Presenter mode: in the URL (``?present=true``) like every control, and kept across page switches.

    It is not ``bind="query-params"``: Streamlit drops bound parameters on a page switch, and a lecture should
    not fall out of presenter mode when the teacher opens the next page. The session keeps the mode; the URL
    mirrors it on every page, so a shared link carries it too.
    """
    return _carried_toggle(
        PRESENT_KEY,
        _PRESENTER_STATE,
        ":material/co_present: Presenter mode",
        "Larger type, figure first, explanations folded. Stays in the link you share and across pages.",
    )


def _presenter_requested() -> bool:
    """Presenter mode as the link (``?present=true``/``false``) or else the session has it."""
    return _carried_requested(PRESENT_KEY, _PRESENTER_STATE)


def _hide_toggle() -> bool:
    """Hidden answers (``?hide=true``): carried like presenter mode, in the link and across page switches."""
    return _carried_toggle(
        HIDE_KEY,
        _HIDE_STATE,
        ":material/visibility_off: Hide answers",
        "For screen-sharing: quick checks and interview prompts show no answer at all. Stays in the link "
        "you share and across pages.",
    )


def _carried_requested(key: str, state_key: str) -> bool:
    """A carried switch as the link (``?<key>=true``/``false``) sets it, or else as the session keeps it (under
    ``state_key``, which survives page switches; the widget's own key does not)."""
    raw = (st.query_params.get(key) or "").strip().lower()
    if raw in ("true", "false"):
        st.session_state[state_key] = raw == "true"
    return bool(st.session_state.get(state_key, False))


def _carried_toggle(key: str, state_key: str, label: str, help: str) -> bool:
    """The sidebar toggle of a carried switch: its value from :func:`_carried_requested`, mirrored in the URL."""
    on = _carried_requested(key, state_key)
    st.session_state[key] = on
    st.toggle(label, key=key, on_change=_on_carried_change, args=(key, state_key), help=help)
    if on:
        st.query_params[key] = "true"
    return on


def _on_carried_change(key: str, state_key: str) -> None:
    value = bool(st.session_state[key])
    st.session_state[state_key] = value
    if value:
        st.query_params[key] = "true"
    elif key in st.query_params:
        del st.query_params[key]


def share_link() -> None:
    """The link that reproduces this exact view (the address bar holds the same)."""
    query = urllib.parse.urlencode({k: st.query_params.get(k) for k in st.query_params})
    url = str(getattr(st.context, "url", "") or "").split("?")[0]
    # a popover, not an expander: the browser draws a popover's body only when it is opened, so the code box's
    # syntax highlighter (a 280 ms script on a cold start, bench/bench_cold.py) is not loaded for every page view
    with st.popover("Link to this exact view", icon=":material/link:", width="stretch"):
        st.code(f"{url}?{query}" if query else url, language=None, wrap_lines=True)
        st.caption("Every control is in the link. Answers stay hidden until revealed.")


# ---------------------------------------------------------------------- the state contract in Streamlit
_CURRENT_PAGE = "_frame_current_page"


def _enter(spec: Spec) -> list[str]:
    """Read the link through the page's spec when the page's widgets are about to be created from it.

    That happens when a session opens this page (first request, sidebar click, a link) and on the browser's
    Back and Forward. Old parameter names are renamed, values that cannot be used are replaced by sane ones
    (clamped into range or the default) before the widgets read the URL, and the messages are returned.
    On other reruns the widgets hold the state and the URL only mirrors it.
    """
    ctx = get_script_run_ctx()
    history = bool(ctx is not None and getattr(ctx, "is_history_navigation", False))
    entering = st.session_state.get(_CURRENT_PAGE) != spec.page
    st.session_state[_CURRENT_PAGE] = spec.page
    if not (entering or history):
        return []
    fields = spec.by_name
    by_alias = {a: f for f in spec.fields for a in f.aliases}
    raw = {k: _raw_param(fields.get(k) or by_alias.get(k), k) for k in st.query_params}
    resolved = spec.resolve_aliases(raw)
    for name, value in resolved.items():
        if name not in fields:
            continue
        parsed, problem = fields[name].parse(value)
        comma = fields[name].kind == "multi" and "," in value and len(st.query_params.get_all(name)) == 1
        if problem is not None or name not in raw or comma:  # refused, an old name, or a=x,y: set the widget
            st.session_state[name] = _widget_value(fields[name], parsed)
            _set_param(fields[name], parsed)
    for name in raw:  # old names (now renamed) and parameters this page does not know leave the link
        if name not in fields and name not in APP_PARAMS:
            _drop_param(name)
    _reseed_from_current_link(ctx)
    return spec.parse(raw)[1]


def _reseed_from_current_link(ctx: Any) -> None:
    """Make the widgets read the corrected link, not the one the browser sent.

    Streamlit seeds URL-bound widgets from the query string it received (a snapshot); a value its widget accepts
    but this page corrects (7.6 for a whole number) would otherwise show in the box while the page computes with 8.
    ``set_initial_query_params_from_current`` is the method Streamlit itself calls after a page switch.
    """
    try:
        with ctx.session_state.query_params() as qp:
            qp.set_initial_query_params_from_current()
    except (AttributeError, TypeError):  # another Streamlit version: the page still computes with the right value
        pass


def _raw_param(f: Field | None, name: str) -> str:
    """A link parameter as text (a multi-choice widget writes one parameter per choice: joined with commas)."""
    if f is not None and f.kind == "multi":
        return ",".join(st.query_params.get_all(name))
    return st.query_params.get(name)


def _set_param(f: Field, value: Any) -> None:
    """Write a field's value into the link (not at all when it is the default, as Streamlit does)."""
    if value == f.default:
        _drop_param(f.name)
        return
    try:
        if f.kind == "multi":
            st.query_params[f.name] = list(value)
        else:
            st.query_params[f.name] = f.to_text(value)
    except StreamlitAPIException:  # already bound to its widget (Back or Forward): the widget writes it
        pass


def _drop_param(name: str) -> None:
    try:
        del st.query_params[name]
    except (KeyError, StreamlitAPIException):
        pass


def _widget_value(f: Field, value: Any) -> Any:
    """A field's value as its widget holds it (integers in float number boxes, see the module's notes)."""
    if f.kind == "int" and f.widget == "number" and value is not None:
        return float(value)
    if f.kind == "multi":
        return list(value)
    return value


def _load_values(spec: Spec, values: Any) -> None:
    """Write values (a preset, the defaults) into the page's URL-bound widgets."""
    for name, value in values.items():
        st.session_state[name] = _widget_value(spec[name], value)


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


def preset_buttons(spec: Spec, names: Sequence[str] | None = None) -> None:
    """One button per preset of the spec (or of ``names``); a click writes the preset's values into the widgets."""
    st.caption("Presets")
    for name in spec.presets if names is None else names:
        st.button(
            name,
            key=f"preset-{spec.page}-{name}",
            on_click=_load_values,
            args=(spec, spec.presets[name]),
            help=spec.preset_help.get(name),
            width="stretch",
        )


def draw_field(f: Field, **overrides: Any) -> Any:
    """The Streamlit widget of one field: keyed by its URL name, bound to the URL. Returns its typed value."""
    extra = dict(f.extra)
    extra.update(overrides)
    common = {"key": f.name, "bind": "query-params", "help": f.help, **extra}
    w = f.widget
    if w == "number":
        default = f.default if f.default is None else float(f.default)
        if f.kind == "int":  # a float box: an int number_input seeded with inf from a link overflows in Streamlit
            value = st.number_input(
                f.label, float(f.lo), float(f.hi), default, float(f.step or 1), f.fmt or "%.0f", **common
            )
            return round(value) if value is not None else f.default
        value = st.number_input(f.label, f.lo, f.hi, default, f.step, f.fmt, **common)
        return f.default if value is None else float(value)
    if w == "slider":
        if f.kind == "int":
            return int(st.slider(f.label, int(f.lo), int(f.hi), int(f.default), int(f.step or 1), **common))
        return float(st.slider(f.label, float(f.lo), float(f.hi), float(f.default), f.step, f.fmt, **common))
    if w == "select_slider":
        return st.select_slider(f.label, list(f.choices), f.default, **common)
    if w == "selectbox":
        return st.selectbox(f.label, list(f.choices), list(f.choices).index(f.default), **common)
    if w == "radio":
        return st.radio(f.label, list(f.choices), list(f.choices).index(f.default), **common)
    if w == "segmented":
        value = st.segmented_control(f.label, list(f.choices), default=f.default, **common)
        return f.default if value is None else value
    if w == "pills":
        value = st.pills(f.label, list(f.choices), selection_mode="multi", default=list(f.default), **common)
        return tuple(c for c in f.choices if c in (value or []))
    if w == "toggle":
        return bool(st.toggle(f.label, f.default, **common))
    if w == "text":
        return st.text_input(f.label, f.default, **common)
    raise ValueError(f"field {f.name!r}: unknown widget {w!r}")


def draw_tabs(f: Field) -> Any:
    """The tabs of a field whose widget is ``tabs``: only the open tab's body needs to run (check ``.open``)."""
    return st.tabs(list(f.choices), default=f.default, key=f.name, bind="query-params")


# A few lines of JavaScript, rendered in the page itself (components v2: no iframe, no second plotly.js): when
# a drag of the chart's own plotly slider ends, report the step's value so that the page's state follows.
_DRAG_JS = """
export default function (component) {
  const { setTriggerValue } = component;
  const data = component.data[0];  // sent as a one-item list (component_data)
  const selector = `.st-key-${data.chart} .js-plotly-plot`;
  const attach = () => {
    const gd = document.querySelector(selector);
    if (!gd || typeof gd.on !== "function" || gd.__lessonDrag === data.field) return;
    gd.__lessonDrag = data.field;
    gd.on("plotly_sliderend", (event) => {
      const step = event && event.step;
      if (!step) return;
      const index = step._index !== undefined ? step._index : (event.slider ? event.slider.active : null);
      setTriggerValue("value", JSON.stringify({ index: index, value: step.value, at: Date.now() }));
    });
  };
  attach();
  const timer = setInterval(attach, 400);
  return () => clearInterval(timer);
}
"""
_drag_component = None

# Streamlit 1.67 pushes a history entry for every change of the link, which breaks Back in three ways: on a page
# switch it first pushes the old page's path with its link cleared (Back landed on the old page with its defaults);
# the new page's restored values come as another push (Back needed two steps); and one rerun writes each changed
# control as its own push (a preset took several Backs). This shim keeps one history entry per action of the
# person: the first same-page push after a key press or a pointer press adds an entry, later ones replace it,
# same-page pushes between a click on a page link and the new page's push are dropped, and page switches go
# through unchanged. A value the browser commits itself (a number typed, then Enter) comes as a replaceState: the
# first one after a press also adds an entry. So Back undoes a whole action (a preset, a drag, a typed value) or
# returns to the last page.
_HISTORY_JS = """
export default function () {
  if (window.__lessonHistory) return;
  window.__lessonHistory = true;
  const push = window.history.pushState.bind(window.history);
  const replace = window.history.replaceState.bind(window.history);
  let switching = 0;
  let acted = false;
  const act = () => { acted = true; };
  document.addEventListener("pointerdown", act, true);
  document.addEventListener("keydown", act, true);
  document.addEventListener("click", (event) => {
    // page links have no href of their own: any click on one may switch the page
    const link = event.target.closest && event.target.closest("[data-testid='stPageLink-NavLink']");
    if (link) switching = Date.now();
  }, true);
  window.history.pushState = function (state, title, url) {
    const target = new URL(url, window.location.href);
    if (target.pathname !== window.location.pathname) {
      switching = 0;
      acted = false;
      return push(state, title, url);
    }
    if (switching && Date.now() - switching < 5000) return;
    if (!acted) return replace(state, title, url);
    acted = false;
    return push(state, title, url);
  };
  // A value typed into a number box (or another widget the browser commits itself) reaches the address bar by
  // replaceState: after a press of the person's, a same-page change of the link is an action of its own.
  window.history.replaceState = function (state, title, url) {
    const target = new URL(url, window.location.href);
    const same = target.pathname === window.location.pathname && target.href !== window.location.href;
    if (!acted || !same || (switching && Date.now() - switching < 5000)) {
      return replace(state, title, url);
    }
    acted = false;
    return push(state, title, url);
  };
  // Back and Forward are no action on the page: what Streamlit writes after them replaces the entry.
  window.addEventListener("popstate", () => { acted = false; switching = 0; });
}
"""
_history_component = None


def history_shim() -> None:
    """Mount the history shim (see ``_HISTORY_JS``) once per page."""
    global _history_component
    if _history_component is None:
        _history_component = st.components.v2.component("lesson_history", js=_HISTORY_JS)
    _history_component(key="lesson-history", height=0)


# Streamlit's main menu (or the system's colour scheme, which its default "System" follows) switches the app's
# theme in the browser without rerunning the script, so the figures, drawn for the theme the last run read, would
# keep their old background until the next rerun. This piece compares the app's background with the first figure's:
# when one is dark and the other light it asks for one rerun (which reads the new theme), and it asks at most once per
# theme the app shows. If the rerun still draws the other theme, nothing more happens until the person switches again:
# it never loops.
_THEME_JS = """
export default function (component) {
  const { setTriggerValue } = component;
  const rgb = (css) => {
    const m = css && css.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const v = m[1].split(",").map(Number);
    return v.length > 3 && v[3] === 0 ? null : v.slice(0, 3);
  };
  const dark = (css) => {
    const v = rgb(css);
    return v === null ? null : 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2] < 128;
  };
  const check = () => {
    const app = document.querySelector("[data-testid='stApp']");
    const paper = document.querySelector("[data-testid='stPlotlyChart'] .main-svg, .lesson-chart .main-svg");
    if (!app || !paper) return;
    const appDark = dark(getComputedStyle(app).backgroundColor);
    const paperDark = dark(getComputedStyle(paper).backgroundColor);
    if (appDark === null || paperDark === null) return;
    if (appDark === paperDark) { window.__lessonThemeAsked = null; return; }
    const kind = appDark ? "dark" : "light";
    if (window.__lessonThemeAsked === kind) return;
    window.__lessonThemeAsked = kind;
    setTriggerValue("theme", kind);
  };
  check();
  const timer = setInterval(check, 300);
  return () => clearInterval(timer);
}
"""
_theme_component = None
_SEEN_THEME = "_frame_seen_theme"


def theme_watch() -> None:
    """Mount the theme watcher (see ``_THEME_JS``) once per page: a theme switch in the browser reruns the page."""
    global _theme_component
    if _theme_component is None:
        _theme_component = st.components.v2.component("lesson_theme_watch", js=_THEME_JS)

    def _on_switch() -> None:
        kind = getattr(st.session_state.get("lesson-theme"), "theme", None)
        if kind in ("light", "dark"):
            st.session_state[_SEEN_THEME] = kind

    _theme_component(key="lesson-theme", on_theme_change=_on_switch, height=0)


def drag_sync(f: Field, chart_key: str, values: Sequence[Any] | None = None) -> None:
    """Mount the listener that writes the value a plotly slider was dragged to into field ``f``.

    ``values``: the field's value at each slider step, in order; without them the step's ``value`` is parsed.
    """
    global _drag_component
    if _drag_component is None:
        _drag_component = st.components.v2.component("lesson_drag_sync", js=_DRAG_JS)
    key = f"drag-{chart_key}"

    def _on_drag() -> None:
        result = st.session_state.get(key)
        try:
            event = json.loads(getattr(result, "value", None) or "{}")
            index = event.get("index")
            raw = values[int(index)] if values is not None and index is not None else event.get("value")
        except (TypeError, ValueError, IndexError, AttributeError):
            return  # a message the page cannot read changes nothing
        if raw is None:
            return
        value, problem = f.parse(raw if isinstance(raw, str) else f.to_text(raw))
        if problem is None:
            st.session_state[f.name] = _widget_value(f, value)

    _drag_component(
        key=key, data=component_data({"chart": chart_key, "field": f.name}), on_value_change=_on_drag, height=0
    )


# Entries per cached function (one per page): enough for a class going back and forth between a few views, and small
# enough that the caches are full after a few hundred distinct interactions, so that memory levels off
# (bench/bench_memory.py: with 64 entries a worker still grew 15% between the 500th and the 1,000th).
CACHE_ENTRIES = 16


def cached(func: Callable[..., Any]) -> Callable[..., Any]:
    """The page layer's cache for core calls: bounded, shared by sessions, keyed by plain arguments."""
    return st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)(func)


def cached_view(func: Callable[..., View]) -> Callable[..., View]:
    """A page's ``figures(state, options)``, cached per state and options (theme and presenter mode included),
    shared by sessions. Figures are not copied: nothing downstream mutates them (:meth:`Page.chart` draws them as
    they are)."""
    return st.cache_resource(max_entries=CACHE_ENTRIES, show_spinner=False)(func)


def cached_figures(func: Callable[..., Any]) -> Callable[..., Any]:
    """A cache for built figures (plotly's validation makes building them the slowest step of a rerun).

    Unlike :func:`cached` it returns the same objects without copying them, so callers must not mutate the
    figures it returns (:meth:`Page.figure` draws them as they are).
    """
    return st.cache_resource(max_entries=32, show_spinner=False)(func)
