"""The shared page frame: page set-up, presenter mode, URL checks, and the standard sections of every page.

A page script reads its controls, calls its view (views/, through functions it caches; the view calls core and
viz), and hands the view's figures and readouts to a :class:`Page`, which lays them out the same way on every page
(pages/frame/page.py).

In presenter mode (``?present=true``, for lectures and screen-sharing) the type is larger, the figure comes
first, and the equation and explanations fold away until revealed. With answers hidden (``?hide=true``, for
screen-sharing in a mock interview) quick checks and interview prompts show their question but not the answer.
Every control of a page is bound to the URL (``bind="query-params"``), so the address bar is always a link to
the exact figure; URL values that Streamlit refuses are reported on the page instead of silently ignored.

One idea per module: ``page`` (the Page: set-up, body, controls, figures), ``layout`` (where its sections go, the
first screen's held places), ``answers`` (the sections that hold answers), ``binding`` (the state contract bound to
widgets and the URL), ``sidebar`` (the shared sidebar, set-up, share link, deck collection), ``nav`` (the list of
pages), ``style`` (CSS), ``shims`` (the history and theme shims), ``charts`` (the live chart), ``alt`` (text
alternatives), ``cache``, ``follow`` (class mode's follow signal).
"""

from __future__ import annotations

# The frame in modules of one idea each; this package re-exports what pages, decks, tests and benches use.
from pages.frame.alt import ALT_READOUTS, figure_alt
from pages.frame.answers import InterviewAnswer
from pages.frame.binding import (
    drag_sync,
    draw_field,
    draw_tabs,
    preset_buttons,
)
from pages.frame.cache import CACHE_ENTRIES, cached, cached_figures, cached_view
from pages.frame.layout import metric_row
from pages.frame.nav import FINDER_KEY, PAGES, ROOT, existing_pages, page_link
from pages.frame.page import BODY_CUTS, Page
from pages.frame.shims import history_shim, theme_watch
from pages.frame.sidebar import (
    DECK_DRAFT,
    HIDDEN_CAPTION,
    HIDE_KEY,
    IMAGE_FORMAT_KEY,
    PREDICT_CAPTION,
    PRESENT_KEY,
    add_to_deck,
    carried_params,
    home_frame,
    loopback_warning,
    share_link,
    viewer_theme,
)
from pages.frame.style import (
    _BASE_CSS,
    _DARK_CSS,
    _PRESENTER_CSS,
    CONTROL_ROW_CLASS,
    CONTROLS_PER_ROW_MAX,
    PRESENTER_CHART_CLASS,
    PRESENTER_READOUTS,
    PRESENTER_TOP_PX,
    READOUT_STRIP_CLASS,
    READOUTS_PER_ROW_MAX,
)

__all__ = [
    "ALT_READOUTS",
    "BODY_CUTS",
    "CACHE_ENTRIES",
    "CONTROLS_PER_ROW_MAX",
    "CONTROL_ROW_CLASS",
    "DECK_DRAFT",
    "FINDER_KEY",
    "HIDDEN_CAPTION",
    "HIDE_KEY",
    "IMAGE_FORMAT_KEY",
    "PAGES",
    "PREDICT_CAPTION",
    "PRESENTER_CHART_CLASS",
    "PRESENTER_READOUTS",
    "PRESENTER_TOP_PX",
    "PRESENT_KEY",
    "READOUTS_PER_ROW_MAX",
    "READOUT_STRIP_CLASS",
    "ROOT",
    "_BASE_CSS",
    "_DARK_CSS",
    "_PRESENTER_CSS",
    "InterviewAnswer",
    "Page",
    "add_to_deck",
    "cached",
    "cached_figures",
    "cached_view",
    "carried_params",
    "drag_sync",
    "draw_field",
    "draw_tabs",
    "existing_pages",
    "figure_alt",
    "history_shim",
    "home_frame",
    "loopback_warning",
    "metric_row",
    "page_link",
    "preset_buttons",
    "share_link",
    "theme_watch",
    "viewer_theme",
]
