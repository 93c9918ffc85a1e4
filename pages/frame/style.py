"""The frame's CSS: presenter mode's first screen, the readout and control strips, the dark theme's button."""

from __future__ import annotations

from collections.abc import Callable

# Presenter mode lays out the first screen for a projector (1280 x 720 and up): a one-line title, then the figure
# beside a narrow column of readouts. Every chart is as tall as the screen leaves under the title, so the main figure
# is whole on the first screen at 1280 x 720 and at 1920 x 1080; Streamlit cannot read the viewport, CSS can (the
# chart is drawn with height="stretch" inside a keyed container whose height this sets). PRESENTER_TOP_PX is the
# space above the chart: header, title and a tab bar.
PRESENTER_CHART_CLASS = "present-chart"
# The class of the element that holds a live chart: page CSS (presenter sizing), tests and benchmarks select it.
CHART_CLASS = "lesson-chart"
PRESENTER_TOP_PX = 245
# presenter mode's figure column on a page that opens on a figure: as tall as its chart from the first paint
PRESENTER_FIGURE_KEY = "lesson-present-figure"
# a page whose figure sits under a tab bar (Page.setup(figure_tabs=True)) keeps the bar's room above it too: the bar and
# the gap under it, 77 px at presenter mode's 22-px base (measured on Attention and pass@k, 2026-12-04)
PRESENTER_TAB_BAR_REM = 3.5
PRESENTER_READOUTS = 5  # readouts beside the figure; the rest fold under them
# presenter mode's readouts column beside the figure: a readout stands in as Streamlit's skeleton (2.5rem) until the
# metric's lazily loaded script has run (1-2 s on a fresh tab), then grew to its height and pushed the readouts under it
# down (PPO 0.017 a load); the skeleton now takes a one-line readout's height (78.5 px at 22 px, measured: the
# readouts' pitch 100.5 px less the 1rem gap)
PRESENTER_READOUTS_KEY = "lesson-present-readouts"
PRESENTER_READOUT_REM = 3.57
# and the column holds its readouts' room from the first paint: it is taller than the figure's place at 1280 x 720 (558
# px against 475), and when it landed after the figure the folds under the row moved down 82 px (Serving 0.056, one
# load in three). Room for PRESENTER_READOUTS one-line readouts, the 1rem gap under each, and the fold of the rest: a
# page with fewer readouts keeps that room empty under them. Lesson pages only (the anchor: Page.sections).
PRESENTER_READOUTS_REM = PRESENTER_READOUTS * (PRESENTER_READOUT_REM + 1) + 2.5
# the first screen under the figure's top at 1280 x 720 (720 px less the 220 px of header, title and takeaway): held
# in the main figure's place on a page's first run until the figure lands (Page.sections)
FIGURE_HOLD_PX = 500

READOUT_STRIP_CLASS = "readouts"
READOUTS_PER_ROW_MAX = 6
CONTROL_ROW_CLASS = "controls"
CONTROLS_PER_ROW_MAX = 5


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

# The sidebar's navigation (pages/frame/nav.py), compact so that the page's presets and first control stay on the first
# screen at 1280 x 720: the stage groups as borderless folds with short headers, links with little padding. (The gap
# above the page and the title's size are the theme's, config.toml: this CSS may arrive after the first elements are
# drawn, and what it moves then counts as a layout shift.)
NAV_CLASS = "lesson-nav"
# The navigation's height once this CSS has compacted it, in px at the theme's 17-px base (measured in chromium,
# 2026-12-04): the finder's row and Home's link, a fold per stage group, and the open group's links. The sidebar draws
# the navigation in a box of this height (pages/frame/sidebar.py) so that its compaction, when this CSS lands (0.1-1 s
# after the sidebar), moves nothing under it; the CSS then lets the box take its content's height (within a pixel). At
# the sidebar's default width: a sidebar made narrower wraps long labels, and the box then follows its content once
# the CSS is in.
NAV_TOP_PX = 56.33
NAV_FOLD_PX = 27.17
NAV_LINK_PX = 30.81  # a link in the open fold
NAV_OPEN_PX = -12.62  # the open fold's own padding less its first link's margins


def nav_height(groups: int, open_links: int) -> float:
    """The compact navigation's height (px) with ``groups`` folds, the open one holding ``open_links`` links (0: none
    open)."""
    open_px = NAV_LINK_PX * open_links + NAV_OPEN_PX if open_links else 0.0
    return NAV_TOP_PX + NAV_FOLD_PX * groups + open_px


_NAV_CSS = (
    f"  [data-testid='stLayoutWrapper']:has(> .st-key-{NAV_CLASS}) {{ flex: 0 0 auto !important; "
    "height: auto !important; }\n"
    f"  .st-key-{NAV_CLASS} {{ height: auto !important; overflow: visible !important; }}\n"
    f"  .st-key-{NAV_CLASS} [data-testid='stExpander'] details {{ border: none; margin: 0; }}\n"
    f"  .st-key-{NAV_CLASS} [data-testid='stExpander'] summary {{ padding: 0.1rem 0.4rem; min-height: 0; }}\n"
    f"  .st-key-{NAV_CLASS} [data-testid='stExpanderDetails'] {{ padding: 0 0 0.2rem 0.6rem; gap: 0; }}\n"
    f"  .st-key-{NAV_CLASS} [data-testid='stPageLink-NavLink'] {{ padding-top: 0; padding-bottom: 0; min-height: 0; "
    "line-height: 1.5; }\n"
    f"  .st-key-{NAV_CLASS} [data-testid='stPageLink'] {{ margin: 0; }}\n"
    # a link stands in as Streamlit's 43-px skeleton until its lazily loaded script has run: the skeleton takes the
    # link's height (measured: 26.56 px at the 17-px base), so the links landing move nothing below them
    f"  .st-key-{NAV_CLASS} [data-testid='stSkeleton'] {{ height: 1.5625rem; }}\n"
    # and its element container the link's margins (Streamlit gives a page link's container -0.375rem above and below
    # once the link is drawn): without them each link that landed pulled the links under it up 12.75 px. Not the
    # shims' containers (keyed), which stand as skeletons of no height until their scripts load
    f"  .st-key-{NAV_CLASS} .stElementContainer:not([class*='st-key-']):has(> [data-testid='stSkeleton']) "
    "{ margin: -0.375rem 0; }\n"
)
# A disabled control's label: Streamlit greys it to 2.6:1 on the sidebar (axe-core, serious, once the sidebar put such
# a control on the first screen); drawn as a caption is instead, the text colour at 60% (4.7:1 light, 5.3:1 dark).
_DISABLED_LABEL = ".stElementContainer:has(input:disabled) [data-testid='stWidgetLabel'] p"
_DISABLED_CSS = f"  {_DISABLED_LABEL} {{ color: rgba(20, 19, 18, 0.6); }}\n"
# A readout's label wraps onto a second line rather than being cut short with an ellipsis (Streamlit's default).
_PRESENTER_CSS = f"""
<style>
{_STRIP_CSS}{_NAV_CSS}{_DISABLED_CSS}  html {{ font-size: 22px; --lesson-frame: presenter; }}
  [data-testid="stMain"] .block-container {{ max-width: 100%; padding: 3.6rem 1.5rem 2rem 1.5rem; }}
  [data-testid="stMetricValue"] {{ font-size: 1.35rem; }}
  [data-testid="stMetricLabel"] p {{ font-size: 0.75rem; }}
  [data-testid="stMetricLabel"] .stMarkdownEllipsis, [data-testid="stMetricLabel"] p {{ white-space: normal !important;
        overflow: visible; }}
  h1 {{ font-size: 1.9rem !important; padding: 0 0 0.2rem 0 !important; white-space: nowrap; overflow: hidden;
        text-overflow: ellipsis; }}
  [class*="st-key-{PRESENTER_CHART_CLASS}-"] {{ height: calc(100vh - {PRESENTER_TOP_PX}px) !important;
        min-height: 360px; flex: 0 0 auto !important; }}
  .st-key-{PRESENTER_FIGURE_KEY} {{ min-height: max(calc(100vh - {PRESENTER_TOP_PX}px), 360px); }}
  .st-key-{PRESENTER_FIGURE_KEY}-tabs {{ min-height: calc(max(calc(100vh - {PRESENTER_TOP_PX}px), 360px)
        + {PRESENTER_TAB_BAR_REM}rem); }}
  [data-testid="stLayoutWrapper"]:has(> .st-key-{PRESENTER_FIGURE_KEY}-anchor),
  [data-testid="stLayoutWrapper"]:has(> .st-key-{PRESENTER_READOUTS_KEY}-anchor) {{ display: none; }}
  .st-key-{PRESENTER_READOUTS_KEY} [data-testid="stSkeleton"] {{ height: {PRESENTER_READOUT_REM}rem; }}
  .st-key-{PRESENTER_READOUTS_KEY}:has(.st-key-{PRESENTER_READOUTS_KEY}-anchor) {{
        min-height: {PRESENTER_READOUTS_REM}rem; }}
</style>
"""
# Streamlit may draw the sidebar a moment after the page's first elements, and it pushes them aside (a layout shift of
# 0.25 at 1280 x 720): the page (and Streamlit's header bar over it) is hidden until the sidebar is there. A partial
# measure: it works on the loads where this CSS arrives before the page's first elements, not on the others (issue 30,
# tests/browser/test_first_screen_browser.py).
_WAIT_FOR_SIDEBAR_CSS = (
    "  [data-testid='stAppViewContainer']:not(:has([data-testid='stSidebar'])) > * { visibility: hidden; }\n"
)
_BASE_CSS = f"""
<style>
{_STRIP_CSS}{_NAV_CSS}{_WAIT_FOR_SIDEBAR_CSS}{_DISABLED_CSS}  html {{ --lesson-frame: normal; }}
  [data-testid="stMetricValue"] {{ font-size: 1.6rem; }}
  [data-testid="stMetricLabel"] .stMarkdownEllipsis, [data-testid="stMetricLabel"] p {{ white-space: normal !important;
        overflow: visible; }}
  /* a page link in the page (Home's table, the lesson-order links) wraps instead of ending in "Sampling and decodi" */
  [data-testid="stMain"] [data-testid="stPageLink"] span {{ white-space: normal; overflow: visible;
        text-overflow: clip; }}
</style>
"""
# Streamlit writes a primary button's label in white; on the dark theme's light blue (config.toml) that is 2.6:1, so
# the label takes the dark background colour there (7.0:1). Sent with the dark theme only (see viewer_theme).
_DARK_CSS = f"""
<style>
  button[kind="primary"], button[kind="primary"] p {{ color: #171614 !important; }}
  {_DISABLED_LABEL} {{ color: rgba(237, 235, 232, 0.6); }}
</style>
"""
