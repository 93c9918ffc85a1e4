"""Presentation in a real browser: presenter mode's first screen at 1280 x 720 and 1920 x 1080 (its labels included),
and a theme switch that the figures follow at once. (axe-core's check and the dark scheme of every page run on the
normal first screen's page load: test_first_screen_browser.py.)

One server for the module and one browser tab per theme and screen size, reused from page to page (each page is
opened by its link, a new session each time): no page ever fetches anything off localhost.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from decks import views
from pages.frame import PAGES
from pages.frame.style import PRESENTER_FIGURE_KEY
from tests.browser.checks import OVERLAP_JS, SHIFT_SUMS_JS, SHIFTS_JS, luminance
from tests.browser.conftest import NO_FIGURE_FIRST, next_frames, rerun, wait_app_idle
from viz.style import READOUT

pytestmark = pytest.mark.browser


def _url_page(path: str) -> str:
    return "" if path == "app.py" else path.split("_", 1)[1].removesuffix(".py")


ALL = [_url_page(path) for path, _, _ in PAGES]
FIGURE_PAGES = [p for p in ALL if p not in NO_FIGURE_FIRST]


@pytest.fixture(scope="module")
def base(module_server: str) -> str:
    return module_server


@pytest.fixture(scope="module")
def tabs(browser, base) -> Iterator[dict]:
    """One tab per (theme, viewport), opened lazily and reused."""
    made: dict = {}
    contexts = []

    def tab(scheme: str, width: int = 1280, height: int = 720):
        if (scheme, width, height) not in made:
            ctx = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
            ctx.add_init_script(SHIFTS_JS)  # every load's layout shifts (the presenter check reads them)
            contexts.append(ctx)
            page = ctx.new_page()
            external: list[str] = []
            page.on(
                "request",
                lambda r: None if r.url.startswith((base, "blob:" + base, "data:")) else external.append(r.url),
            )
            made[(scheme, width, height)] = (page, external)
        return made[(scheme, width, height)]

    yield tab
    for ctx in contexts:
        ctx.close()


# The first chart's box holds still: two reads 200 ms apart agree, the fonts are loaded, and (after a change of the
# window's size) it differs from the box before the change (plotly redraws a chart to its container's new size after a
# short debounce). ``old``: the box before the change, or null.
_RESIZED_JS = """old => {
  const e = document.querySelector(".js-plotly-plot .main-svg");
  if (!e) return false;
  const r = e.getBoundingClientRect();
  const now = [r.width, r.height].map(Math.round).join("x");
  const same = window.__box === now;
  window.__box = now;
  return same && now !== old && document.fonts.status === "loaded";
}"""


def _first_box(page) -> str:
    return page.evaluate(
        """() => { const r = document.querySelector(".js-plotly-plot .main-svg").getBoundingClientRect();
                   return [r.width, r.height].map(Math.round).join("x"); }"""
    )


def _open(page, url: str, figure: bool = True) -> None:
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=60_000)
    if figure:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        # every chart of the page drawn: on a busy machine a later chart can be drawn before the main one, and the
        # first chart in the page would then be the wrong one; wait until two polls half a second apart agree
        page.wait_for_function(
            "() => { const n = document.querySelectorAll('.js-plotly-plot .main-svg').length;"
            " const same = window.__charts === n; window.__charts = n; return same; }",
            polling=500,
            timeout=30_000,
        )
        page.wait_for_function(_RESIZED_JS, arg=None, polling=200, timeout=30_000)  # sized to its container
    # the body's run finished too (presenter mode's first run stops before the body, and a figure can be drawn while
    # the run that draws the readouts below it goes on)
    wait_app_idle(page, 60_000)


def _box(page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


_FIGURE_JS = """() => {
  // the first figure's plot areas, its text sizes, and the readouts drawn on it or beside it that cover a plot area
  const chart = document.querySelector(".js-plotly-plot");
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const areas = [...chart.querySelectorAll(".nsewdrag")].map(box);
  const covers = (b) => areas.some(a => Math.min(a[2], b[2]) - Math.max(a[0], b[0]) > 1
                                     && Math.min(a[3], b[3]) - Math.max(a[1], b[1]) > 1);
  // readout panels: the annotations that viz names READOUT (labels on a curve are meant to sit on it)
  const named = ((chart.layout || {}).annotations || [])
    .map((a, i) => (a.name === "%s" ? String(i) : null)).filter(i => i !== null);
  const panels = [...chart.querySelectorAll("g.annotation")].filter(g => named.includes(g.dataset.index));
  const row = chart.closest("[data-testid='stHorizontalBlock']");
  const metrics = [...(row ? row.querySelectorAll("[data-testid='stMetric']") : [])]
    .filter(e => !e.closest("details:not([open])"));
  const texts = [...chart.querySelectorAll("text")]
    .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0)
    .map(t => [parseFloat(getComputedStyle(t).fontSize), t.textContent.trim().slice(0, 30)]);
  return {
    metrics_bottom: metrics.length ? Math.max(...metrics.map(e => e.getBoundingClientRect().bottom)) : -1,
    smallest_text: texts.reduce((a, b) => (b[0] < a[0] ? b : a), [Infinity, ""]),
    covering: [...panels.filter(g => covers(box(g))).map(g => "panel: " + g.textContent.slice(0, 40)),
               ...metrics.filter(e => covers(box(e))).map(e => "readout: " + e.textContent.slice(0, 40))],
    smallest_panel: areas.length ? Math.min(...areas.map(a => Math.min(a[2] - a[0], a[3] - a[1]))) : 0,
    in_tabs: chart.closest("[data-testid='stTabs']") !== null,
    tabs_held: document.querySelector(".st-key-%s-tabs") !== null,  // the figure's place holds a tab bar's room
    readout_panels: [named.length, panels.length],  // named in the figure, found in the drawing
  };
}"""


def presenter_geometry(page) -> dict:
    """Where presenter mode put the title, the first figure, the readouts and the sidebar (px, viewport coords), the
    figure's smallest text (px, text), and the readouts (panels on the figure, numbers beside it) that cover a plot
    area."""
    chart = _box(page, ".js-plotly-plot")
    heading = "[data-testid='stMain'] h1, [data-testid='stMain'] h2"  # a deck's slide title is an h2
    title = _box(page, heading)
    sidebar = page.locator("[data-testid='stSidebar']")
    return {
        "top": chart["y"],
        "height": chart["height"],
        "width": chart["width"],
        "title_height": title["height"]  # its lines, without the heading's padding
        - page.eval_on_selector(
            heading, "e => parseFloat(getComputedStyle(e).paddingTop) + parseFloat(getComputedStyle(e).paddingBottom)"
        ),
        "title_font": float(page.eval_on_selector(heading, "e => getComputedStyle(e).fontSize")[:-2]),
        "sidebar_open": sidebar.get_attribute("aria-expanded") == "true",
        "clipped": page.evaluate(_CLIPPED_JS),
        **page.evaluate(_FIGURE_JS % (READOUT, PRESENTER_FIGURE_KEY)),
    }


_CLIPPED_JS = """() => {
  // the readouts on the first screen whose label or number the column cuts short with an ellipsis
  const out = [];
  for (const m of document.querySelectorAll("[data-testid='stMetricValue'], [data-testid='stMetricLabel']")) {
    const r = m.getBoundingClientRect();
    if (r.height === 0 || r.bottom > innerHeight) continue;
    if ([m, ...m.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1
        && getComputedStyle(e).overflow !== 'visible')) out.push(m.textContent.trim());
  }
  return out;
}"""


SIZES = [(1280, 720), (1920, 1080)]
CLS = 0.1  # issue 30's bound on a page load's layout shift


def _check_first_screen(g: dict, width: int, height: int, readouts: bool = True) -> None:
    """Presenter mode's rule for the first screen of a page (or of one of its figure's tabs). ``readouts``: the
    page's readouts sit beside the figure (a deck's slide gives its figure the whole screen, and its numbers come
    below it, the figure's own panel showing the plan)."""
    assert g["top"] >= 0 and g["top"] + g["height"] <= height, g  # the whole figure on the first screen
    assert g["height"] >= height / 2, g  # at least half the screen tall
    assert g["width"] >= 0.65 * width, g  # the sidebar is collapsed: the figure has the width
    assert not g["sidebar_open"], g
    assert g["title_height"] < 1.6 * g["title_font"], g  # one line
    assert not readouts or 0 < g["metrics_bottom"] <= height, g  # readouts beside the figure, on the same screen
    assert g["smallest_text"][0] >= 16, g  # every text of the figure readable from the back of a room
    assert g["covering"] == [], g  # no readout covers a plot
    assert g["readout_panels"][0] == g["readout_panels"][1], g
    assert g["clipped"] == [], g  # every readout's label and number whole, not cut short with "..."


# Grids of heatmaps: the smallest side of a panel, as a share of the screen's height. Measured at 1280 x 720 before
# presenter mode gave them the chart's height: LoRA's square panels 109 px (0.15), the attention heads 89 px (0.12).
HEATMAP_PANELS = {"LoRA": 0.3, "Attention": 0.15}


def _figure_tabs(name: str) -> tuple[str, tuple[str, ...]]:
    """The URL name of the page's tabs and their choices (the page's spec)."""
    tabs = next(f for f in views()[name].SPEC.fields if f.widget == "tabs")
    return tabs.name, tuple(tabs.choices)


def _rounded(g: dict) -> dict:
    return {k: round(v) if isinstance(v, float) else v for k, v in g.items()}


def _no_overlap(page, name: str) -> None:
    """No two text boxes of the main figure overlap in presenter mode (larger type, the figure as tall as the screen
    leaves): the same check as on the normal first screen (test_first_screen_browser.py). Dark mode draws each main
    figure exactly as light does but for its colours (tests/test_viz_style.py), so its labels sit where light's do."""
    labels = page.evaluate(OVERLAP_JS)
    assert labels["n"] > 0 and labels["overlaps"] == [], (name, labels)


@pytest.mark.parametrize("name", FIGURE_PAGES)
def test_presenter_mode_first_screen(tabs, base, name) -> None:
    """The main figure, and where the page's tabs sit above it each tab's figure, is whole on the first screen at
    1280 x 720, and again once the window is made 1920 x 1080 (presenter mode's layout is in CSS, relative to the
    window: one page load serves both sizes); grids of heatmaps get panels that use the screen; no label of the main
    figure over another at either size."""
    (width, height), (big_width, big_height) = SIZES
    page, external = tabs("light", width, height)
    page.set_viewport_size({"width": width, "height": height})  # the tab is reused: every page starts small
    _open(page, f"{base}/{name}?present=true")
    # The layout shift of opening a presenter link, less Streamlit's own start (tests/browser/checks.py): the body
    # waits for the frame's CSS (pages/frame/shims.py) and the figure's column is as tall as its chart from the first
    # paint (pages/frame/page.py), so the folds and tab bars below it no longer stand under the title until the figure
    # lands (0.02-0.48 before, 2026-12-03; 0.007-0.068 after, 2026-12-04). What the load has shifted once drawn (no
    # wait for stillness: the first-screen test, which waits, holds the normal layout's).
    shifts = page.evaluate(SHIFT_SUMS_JS)
    g = presenter_geometry(page)
    shifted = shifts["cls_page"] + shifts["cls_sidebar"]
    print(name, SIZES[0], _rounded(g), "layout shift", round(shifted, 3))
    assert not shifts["bare"] and shifted <= CLS, (name, shifts)
    _check_first_screen(g, width, height, readouts=name != "Deck")
    assert g["smallest_panel"] >= HEATMAP_PANELS.get(name, 0) * height, g
    _no_overlap(page, name)
    in_tabs = g["in_tabs"]
    # a page whose figure sits under a tab bar holds the bar's room from the first paint (Page.setup(figure_tabs=
    # True)): without it the bar came on top of the held place and moved what is under the row (pass@k 0.04)
    assert name == "Deck" or g["tabs_held"] == in_tabs, (name, g)
    before = _first_box(page)
    page.set_viewport_size({"width": big_width, "height": big_height})
    page.wait_for_function(_RESIZED_JS, arg=before, polling=200, timeout=30_000)
    g = presenter_geometry(page)
    print(name, SIZES[1], _rounded(g))
    _check_first_screen(g, big_width, big_height, readouts=name != "Deck")
    assert g["smallest_panel"] >= HEATMAP_PANELS.get(name, 0) * big_height, g
    _no_overlap(page, name)
    page.set_viewport_size({"width": width, "height": height})
    # the figure is one tab's: the other tabs take the same first screen (checked on the smaller screen only, to keep
    # the test short: the frame gives every chart the same height at both sizes)
    if in_tabs:
        key, choices = _figure_tabs(name)
        page.wait_for_function(_RESIZED_JS, arg=None, polling=200, timeout=30_000)  # back to the small size
        for choice in choices[1:]:
            with rerun(page):  # a click on the tab runs that tab's body (the tabs are bound to the link)
                page.locator("[data-testid='stTab']", has_text=choice).first.click()
            assert f"{key}={choice.replace(' ', '+')}" in page.url, (choice, page.url)
            if page.locator(".js-plotly-plot").count() == 0:
                continue  # no figure in this tab here (the real model is an optional install)
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
            page.wait_for_function(_RESIZED_JS, arg=None, polling=200, timeout=30_000)
            g = presenter_geometry(page)
            print("  tab", choice, _rounded(g))
            _check_first_screen(g, width, height)
    assert external == []


@pytest.mark.parametrize("name", NO_FIGURE_FIRST, ids=lambda n: n or "Home")
def test_presenter_mode_first_screen_without_a_figure(tabs, base, name) -> None:
    """The pages whose first screen has no figure (Home; the drills before a card's answer): presenter mode closes
    the sidebar, the title is one line at 1280 x 720 in presenter type, nothing runs past the window's width, and no
    label or number is cut short."""
    width, height = SIZES[0]
    page, external = tabs("light", width, height)
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{base}/{name}?present=true", wait_until="domcontentloaded")
    page.wait_for_selector(
        "[data-testid='stApp'][data-test-connection-state='CONNECTED'][data-test-script-state='notRunning']"
        " [data-testid='stMain'] h1",
        timeout=60_000,
    )
    page.evaluate("() => document.fonts.ready.then(() => true)")  # the title measured in its own font
    next_frames(page)
    heading = "[data-testid='stMain'] h1"
    title = _box(page, heading)
    padding = page.eval_on_selector(
        heading, "e => parseFloat(getComputedStyle(e).paddingTop) + parseFloat(getComputedStyle(e).paddingBottom)"
    )
    font = float(page.eval_on_selector(heading, "e => getComputedStyle(e).fontSize")[:-2])
    assert font >= 32, font  # presenter type
    # one line. Seen once (Drills, a full run, 2026-12-03): 94 px tall at 41.8 px type, not reproduced in six runs
    # alone; the heading's markup and style go into the message to tell what made it wrap
    assert title["height"] - padding < 1.6 * font, (title, font, page.evaluate(_HEADING_STATE_JS))
    assert 0 <= title["y"] and title["y"] + title["height"] <= height, title
    assert page.locator("[data-testid='stSidebar']").get_attribute("aria-expanded") != "true"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.evaluate(_CLIPPED_JS) == []
    assert external == []


_HEADING_STATE_JS = """() => {
  const h = document.querySelector("[data-testid='stMain'] h1"); const c = getComputedStyle(h);
  return {html: h.outerHTML.slice(0, 400), whiteSpace: c.whiteSpace, lineHeight: c.lineHeight, display: c.display,
          headings: document.querySelectorAll("[data-testid='stMain'] h1").length, url: location.href,
          script: document.querySelector("[data-testid='stApp']").getAttribute('data-test-script-state'),
          runs: window.__lessonRuns, theme: window.__lessonThemeDrawn}; }"""


def _figure_luminance(page) -> float:
    return luminance(page.eval_on_selector(".js-plotly-plot .main-svg", "e => getComputedStyle(e).backgroundColor"))


_FIGURE_DARK = """() => {
  const e = document.querySelector(".js-plotly-plot .main-svg");
  const v = e && getComputedStyle(e).backgroundColor.match(/\\d+/g).map(Number);
  return v && 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2] < %s;
}"""


def _menu_theme(page, choice: str) -> None:
    """Streamlit's main menu (top right): its theme items, System, Light or Dark."""
    item = page.locator(f"[data-testid='stMainMenuItem-theme-{choice}']")
    if not item.is_visible():  # the menu stays open after a choice
        page.locator("[data-testid='stMainMenu'] button").first.click()
    item.click()


def test_the_figures_follow_a_theme_switch_at_once(browser, base) -> None:
    """The viewer picks Dark in Streamlit's menu while a page is open: the figure turns dark by itself, with one rerun
    and no loop. Back to System (the default, which follows the system's scheme: light here), the figure turns light;
    and when the system's scheme turns dark, dark again."""
    ctx = browser.new_context(  # the default motion: the theme's change is seen through Streamlit's transitions
        viewport={"width": 1280, "height": 720}, color_scheme="light", reduced_motion="no-preference"
    )
    try:
        page = ctx.new_page()
        sent: list[int] = []  # messages from the browser to the server (each rerun is one)
        page.on("websocket", lambda ws: ws.on("framesent", lambda _: sent.append(1)))
        _open(page, f"{base}/Sampling")
        assert _figure_luminance(page) > 0.9
        before = len(sent)
        _menu_theme(page, "Dark")
        page.wait_for_function(_FIGURE_DARK % "128", timeout=30_000)  # no other action: the watcher's rerun
        # with the default motion the app's background fades in over Streamlit's transition: wait for its end
        page.wait_for_function(
            """() => { const m = getComputedStyle(document.querySelector("[data-testid='stApp']")).backgroundColor
                         .match(/[\\d.]+/g).map(Number);
                       return m[0] + m[1] + m[2] < 3 * 40; }""",
            timeout=30_000,
        )
        app = page.eval_on_selector("[data-testid='stApp']", "e => getComputedStyle(e).backgroundColor")
        assert luminance(app) < 0.05 and _figure_luminance(page) < 0.05
        page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']")
        settled = len(sent)
        checks = page.evaluate("window.__lessonThemeChecks")
        # five more of the watcher's checks (pages/frame/shims.py): it asks no more
        page.wait_for_function("n => window.__lessonThemeChecks >= n + 5", arg=checks, timeout=30_000)
        assert len(sent) == settled and 1 <= settled - before <= 2, (before, settled, len(sent))
        _menu_theme(page, "System")
        page.wait_for_function("!(" + _FIGURE_DARK % "128" + ")()", timeout=30_000)
        assert _figure_luminance(page) > 0.9
        page.emulate_media(color_scheme="dark")
        page.wait_for_function(_FIGURE_DARK % "128", timeout=30_000)
        assert _figure_luminance(page) < 0.05
    finally:
        ctx.close()
