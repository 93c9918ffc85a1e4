"""The shared page frame: page set-up, presenter mode, URL checks, and the standard sections of every page.

A page script reads its controls, calls core (through functions it caches), calls a viz builder, and hands
the results to a :class:`Page`, which lays them out the same way on every page:

    title and takeaway · equation · figure · live readouts · more views · explanation · Quick check ·
    Say it in an interview · Common mistakes · CSV download

In presenter mode (``?present=true``, for lectures and screen-sharing) the type is larger, the figure comes
first, and the equation and explanations fold away until revealed. Every control of a page is bound to the
URL (``bind="query-params"``), so the address bar is always a link to the exact figure; URL values that
Streamlit refuses are reported on the page instead of silently ignored.

Streamlit 1.67 caveats for bound widgets (checked by tests): a selectbox with ``format_func`` puts the
*formatted* label in the URL, so use short readable options instead; and an *integer* ``number_input`` seeded
from the URL with ``inf`` or ``1e400`` raises OverflowError inside Streamlit, so bound number inputs are
floats (``format="%.0f"`` for counts) and the page converts.
"""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from core.device import device_summary
from viz.style import figure_from_dict, plotly_config

ROOT = Path(__file__).resolve().parents[2]
PRESENT_KEY = "present"
IMAGE_FORMAT_KEY = "image_format"
_PRESENTER_STATE = "_presenter_mode"

# Every page of the explorer: (script relative to app.py, label, icon). The sidebar and the home page list
# the ones whose file exists.
PAGES: tuple[tuple[str, str, str], ...] = (
    ("app.py", "Home", "🧭"),
    ("pages/1_Scaling_laws.py", "Scaling laws", "📈"),
    ("pages/2_KL_leash.py", "KL leash and DPO", "🪢"),
    ("pages/3_LoRA.py", "LoRA", "🧩"),
    ("pages/4_GRPO.py", "GRPO", "🎯"),
    ("pages/5_Evaluation.py", "pass@k and error bars", "📏"),
    ("pages/6_Attention.py", "Attention", "🔦"),
)


def existing_pages() -> list[tuple[str, str, str]]:
    """The entries of :data:`PAGES` whose script exists."""
    return [entry for entry in PAGES if (ROOT / entry[0]).exists()]


_PRESENTER_CSS = """
<style>
  html { font-size: 22px; }
  [data-testid="stMain"] .block-container { max-width: 100%; padding-top: 2rem; }
  [data-testid="stMetricValue"] { font-size: 2.1rem; }
  [data-testid="stMetricLabel"] p { font-size: 1.05rem; }
  h1 { font-size: 2.6rem !important; }
</style>
"""
_BASE_CSS = """
<style>
  [data-testid="stMetricValue"] { font-size: 1.6rem; }
</style>
"""


@dataclass(frozen=True)
class Readout:
    """One live number under the figure."""

    label: str
    value: str
    help: str | None = None


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
    icon: str
    takeaway: str
    equation: str | None = None
    presenter: bool = False
    image_format: str = "png"
    _url_snapshot: dict[str, str] = field(default_factory=dict)
    _slots: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ set-up
    @classmethod
    def setup(cls, title: str, icon: str, takeaway: str, equation: str | None = None) -> Page:
        """Configure the page, draw the shared sidebar, and lay out the empty sections."""
        st.set_page_config(page_title=f"{title} · LLM lesson explorer", page_icon=icon, layout="wide")
        # The link is checked once per page and session: on later reruns the URL still holds the values from
        # before a preset or a callback changed the widgets, which is no fault of the link.
        first_run = f"_url_checked:{title}"
        snapshot = {} if st.session_state.get(first_run) else {k: st.query_params.get(k) for k in st.query_params}
        st.session_state[first_run] = True
        presenter, image_format = _sidebar_frame()
        page = cls(title, icon, takeaway, equation, presenter, image_format, snapshot)
        page._layout()
        return page

    def _layout(self) -> None:
        st.html(_PRESENTER_CSS if self.presenter else _BASE_CSS)
        st.title(f"{self.icon} {self.title}")
        st.markdown(f"**{self.takeaway}**")
        self._slots["notices"] = st.container()
        order = (
            ("figure", "readouts", "views", "equation", "explain", "checks", "data")
            if self.presenter
            else ("equation", "figure", "readouts", "views", "explain", "checks", "data")
        )
        for name in order:
            self._slots[name] = st.container()
        if self.equation:
            with self._slots["equation"]:
                if self.presenter:
                    with st.expander("The equation", expanded=False):
                        st.latex(self.equation)
                else:
                    st.latex(self.equation)

    # ------------------------------------------------------------------ sections
    @contextmanager
    def controls(self) -> Iterator[None]:
        """Controls live in the sidebar, under the page's own heading."""
        with st.sidebar:
            st.header("Controls")
            yield

    def notice(self, text: str, kind: str = "warning") -> None:
        """A message at the top of the page (bad input, clamped values, renormalised inputs)."""
        with self._slots["notices"]:
            {"warning": st.warning, "info": st.info, "error": st.error}[kind](text)

    def figure(self, fig: go.Figure, key: str, filename: str, **kwargs: Any) -> Any:
        """Render a plotly figure in the figure section (see :meth:`chart`)."""
        with self._slots["figure"]:
            return self.chart(fig, key, filename, **kwargs)

    def chart(self, fig: go.Figure, key: str, filename: str, **kwargs: Any) -> Any:
        """Render a plotly figure here (inside a tab, say), with PNG or SVG export from the camera button and
        larger type in presenter mode. Extra keyword arguments go to ``st.plotly_chart`` (``on_select``, ...)."""
        if self.presenter:  # a copy (cheap, unvalidated): the figure may be shared through cached_figures
            copy = fig.to_dict()
            fig = figure_from_dict(copy["data"], copy["layout"])
            taller = {"height": int(fig.layout.height * 1.2)} if fig.layout.height else {}  # room for larger type
            fig.update_layout(font={"size": 20}, hoverlabel={"font_size": 20}, **taller)
        return st.plotly_chart(
            fig, key=key, config=plotly_config(filename, self.image_format), width="stretch", **kwargs
        )

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
        """A row (or rows) of live numbers (fewer per row in presenter mode, where the type is larger)."""
        per_row = 3 if self.presenter else per_row
        with self._slots["readouts"]:
            for start in range(0, len(items), per_row):
                cols = st.columns(per_row)
                for col, item in zip(cols, items[start : start + per_row], strict=False):
                    col.metric(item.label, item.value, help=item.help)

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
        """A question with its answer hidden until revealed."""
        with self._slots["checks"]:
            st.subheader("Quick check")
            st.markdown(question)
            with st.expander("Reveal the answer", expanded=False):
                st.markdown(answer)

    def interview(self, prompt: str, answer: InterviewAnswer) -> None:
        """'Say it in an interview': a prompt, and a model answer hidden until revealed."""
        with self._slots["checks"]:
            st.subheader("Say it in an interview")
            st.markdown(f"*{prompt}*")
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
            cols = st.columns(max(len(frames), 1))
            for col, (name, df) in zip(cols, frames.items(), strict=False):
                col.download_button(
                    f"⬇️ {name} (CSV)",
                    (lambda make=df: make().to_csv(index=False)) if callable(df) else df.to_csv(index=False),
                    file_name=f"{filename_stem}-{name.lower().replace(' ', '-')}.csv",
                    mime="text/csv",
                    key=f"csv-{filename_stem}-{name}",
                )

    def finish(self, known_keys: Sequence[str] = ()) -> None:
        """Report URL parameters that were refused or changed, and show the share link. Call last."""
        for message in url_problems(self._url_snapshot, st.session_state, known_keys):
            self.notice(message)
        with st.sidebar:
            share_link()


def home_frame() -> None:
    """The frame of the home page: page config and the shared sidebar."""
    st.set_page_config(page_title="LLM lesson explorer", page_icon="🧭", layout="wide")
    presenter, _ = _sidebar_frame()
    st.html(_PRESENTER_CSS if presenter else _BASE_CSS)


# ---------------------------------------------------------------------- shared sidebar
def _sidebar_frame() -> tuple[bool, str]:
    """The sidebar every page shares: presenter mode, image export format, and where core computes."""
    with st.sidebar:
        nav = st.container()  # filled after the toggle, so that the links can carry presenter mode
        presenter = _presenter_toggle()
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
        carry = {PRESENT_KEY: "true"} if presenter else None
        for path, label, icon in existing_pages():
            try:
                st.page_link(path, label=label, icon=icon, query_params=carry)
            except StreamlitPageNotFoundError:  # a page script run on its own has no other pages
                pass
        st.divider()
    return bool(presenter), image_format or "png"


def _presenter_toggle() -> bool:
    """Presenter mode: in the URL (``?present=true``) like every control, and kept across page switches.

    It is not ``bind="query-params"``: Streamlit drops bound parameters on a page switch, and a lecture should
    not fall out of presenter mode when the teacher opens the next page. The session keeps the mode; the URL
    mirrors it on every page, so a shared link carries it too.
    """
    raw = (st.query_params.get(PRESENT_KEY) or "").strip().lower()
    if raw in ("true", "false"):
        st.session_state[_PRESENTER_STATE] = raw == "true"
    presenter = bool(st.session_state.get(_PRESENTER_STATE, False))
    st.session_state[PRESENT_KEY] = presenter
    st.toggle(
        "🎤 Presenter mode",
        key=PRESENT_KEY,
        on_change=_on_presenter_change,
        help="Larger type, figure first, explanations folded. Stays in the link you share and across pages.",
    )
    if presenter:
        st.query_params[PRESENT_KEY] = "true"
    return presenter


def _on_presenter_change() -> None:
    value = bool(st.session_state[PRESENT_KEY])
    st.session_state[_PRESENTER_STATE] = value
    if value:
        st.query_params[PRESENT_KEY] = "true"
    elif PRESENT_KEY in st.query_params:
        del st.query_params[PRESENT_KEY]


def share_link() -> None:
    """The link that reproduces this exact view (the address bar holds the same)."""
    query = urllib.parse.urlencode({k: st.query_params.get(k) for k in st.query_params})
    url = str(getattr(st.context, "url", "") or "").split("?")[0]
    with st.expander("🔗 Link to this exact view"):
        st.code(f"{url}?{query}" if query else url, language=None, wrap_lines=True)
        st.caption("Every control is in the link. Answers stay hidden until revealed.")


# ---------------------------------------------------------------------- URL checks
def _matches(raw: str, value: Any) -> bool:
    """Did the widget take the value the URL asked for?"""
    if isinstance(value, bool):
        return raw.strip().lower() == str(value).lower()
    if isinstance(value, int | float):
        try:
            wanted = float(raw)
        except ValueError:
            return False
        return math.isfinite(wanted) and math.isclose(wanted, float(value), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(value, list | tuple):
        return raw in [str(v) for v in value]
    return raw == str(value)


def url_problems(snapshot: dict[str, str], state: Any, known_keys: Sequence[str] = ()) -> list[str]:
    """Messages for URL parameters that the page refused (unparsable, out of range) or does not know."""
    problems = []
    for key, raw in snapshot.items():
        if key not in state:
            if key not in known_keys:
                problems.append(f"Ignored the unknown link parameter `{key}={raw}`.")
            continue
        if not _matches(raw, state[key]):
            used = "leaving it empty" if state[key] is None else f"using `{state[key]}`"
            problems.append(f"The link asked for `{key}={raw}`, which is not a valid value here; {used} instead.")
    return problems


def preset_buttons(presets: dict[str, dict[str, Any]], help_texts: dict[str, str] | None = None) -> None:
    """One button per preset; a click writes the preset's values into the (URL-bound) widget states."""

    def load(values: dict[str, Any]) -> None:
        for key, value in values.items():
            st.session_state[key] = value

    st.caption("Presets")
    for name, values in presets.items():
        st.button(
            name,
            key=f"preset-{name}",
            on_click=load,
            args=(values,),
            help=(help_texts or {}).get(name),
            width="stretch",
        )


def cached(func: Callable[..., Any]) -> Callable[..., Any]:
    """The page layer's cache for core calls: bounded, shared by sessions, keyed by plain arguments."""
    return st.cache_data(max_entries=64, show_spinner=False)(func)


def cached_figures(func: Callable[..., Any]) -> Callable[..., Any]:
    """A cache for built figures (plotly's validation makes building them the slowest step of a rerun).

    Unlike :func:`cached` it returns the same objects without copying them, so callers must not mutate the
    figures it returns (:meth:`Page.figure` copies before restyling for presenter mode).
    """
    return st.cache_resource(max_entries=32, show_spinner=False)(func)
