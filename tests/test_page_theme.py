"""Every page draws its figures for the viewer's theme (``st.context.theme.type``) and, in presenter mode, with
type of at least 16 px: the page frame reads the theme once per run and hands it, with presenter mode, through
``Options`` to the page's view and on to each viz builder."""

from __future__ import annotations

import pytest
from apptest import figures, font_sizes, no_exception, open_page

from pages.frame import PAGES
from viz.style import DARK, FONT_SIZE, LIGHT, PRESENTER_MIN

# the lesson pages draw figures, and the deck player its first slide's; the drills page draws a card's figure only on
# "Show me" (tests/test_page_drills.py), the class page a slide's only once a student has joined (tests/class_mode)
FIGURE_PAGES = [script for script, _, _ in PAGES
                if script.startswith("pages/") and not script.endswith(("Drills.py", "Class.py"))]  # fmt: skip


def test_every_page_with_figures_is_covered():
    assert len(FIGURE_PAGES) == 24  # the 23 lesson pages and the deck player


@pytest.mark.parametrize("page", FIGURE_PAGES)
def test_dark_viewer_and_presenter_mode_reach_the_main_figure(page):
    at = open_page(page, {"present": "true"}, context={"theme": "dark"})
    assert no_exception(at), [e.value for e in at.exception]
    main = figures(at)[0]
    layout = main["layout"]
    assert layout["paper_bgcolor"] == layout["plot_bgcolor"] == DARK.background
    assert layout["font"]["color"] == DARK.text
    small = [(where, size) for where, size in font_sizes(main) if size < PRESENTER_MIN]
    assert layout["font"]["size"] >= PRESENTER_MIN and not small, small


def test_an_unknown_theme_draws_light_in_normal_type():
    """No theme reported (the browser has not said yet): the light figures, at the normal size."""
    at = open_page(FIGURE_PAGES[0])
    layout = figures(at)[0]["layout"]
    assert layout["paper_bgcolor"] == LIGHT.background and layout["font"]["size"] == FONT_SIZE


def test_the_theme_the_browser_showed_counts_while_streamlit_reports_none():
    """The theme watcher (pages/frame) saw a dark app: with no type from ``st.context`` the next run draws dark, and
    a type that Streamlit does report wins over it."""
    at = open_page(FIGURE_PAGES[0])
    at.session_state["_frame_seen_theme"] = "dark"
    assert figures(at.run())[0]["layout"]["paper_bgcolor"] == DARK.background
    at.context["theme"] = "light"
    assert figures(at.run())[0]["layout"]["paper_bgcolor"] == LIGHT.background
