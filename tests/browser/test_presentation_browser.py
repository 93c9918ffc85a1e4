"""Presentation in a real browser: presenter mode's first screen, the dark theme, and axe-core's WCAG 2 AA check.

One server for the module and one browser tab per theme, reused from page to page (each page is opened by its
link, a new session each time). axe-core comes from the npm registry through ``make test`` (``.cache/axe``) and
is injected from disk: no page ever fetches anything off localhost.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pages.frame import PAGES
from tests.browser.conftest import _free_port, start_server

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"


def _url_page(path: str) -> str:
    return "" if path == "app.py" else path.split("_", 1)[1].removesuffix(".py")


ALL = [_url_page(path) for path, _, _ in PAGES]
# the home page and the drills have no figure; the deck player shows other pages' figures under its own strip
FIGURE_PAGES = [p for p in ALL if p not in ("", "Drills", "Deck")]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    port = _free_port()
    proc = start_server(port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def tabs(browser, base) -> Iterator[dict]:
    """One tab per (theme, viewport), opened lazily and reused."""
    made: dict = {}
    contexts = []

    def tab(scheme: str, width: int = 1280, height: int = 720):
        if (scheme, width, height) not in made:
            ctx = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
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


def _open(page, url: str, figure: bool = True) -> None:
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=60_000)
    if figure:
        page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg", timeout=60_000)
    page.wait_for_timeout(400)  # the chart's resize to its container, fonts


def _box(page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def _luminance(css: str) -> float:
    """Relative luminance (WCAG 2) of a CSS rgb()/rgba() colour."""
    parts = [float(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in parts]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def presenter_geometry(page) -> dict:
    """Where presenter mode put the title, the first figure, the readouts and the sidebar (px, viewport coords)."""
    chart = _box(page, "[data-testid='stPlotlyChart']")
    title = _box(page, "[data-testid='stMain'] h1")
    metrics_bottom = page.evaluate(  # the page's readouts beside the figure (not those folded in an expander)
        """() => {
          const chart = document.querySelector("[data-testid='stPlotlyChart']");
          const row = chart.closest("[data-testid='stHorizontalBlock']");
          const shown = [...(row ? row.querySelectorAll("[data-testid='stMetric']") : [])]
            .filter(e => !e.closest("details:not([open])"));
          return shown.length ? Math.max(...shown.map(e => e.getBoundingClientRect().bottom)) : -1;
        }"""
    )
    sidebar = page.locator("[data-testid='stSidebar']")
    return {
        "top": chart["y"],
        "height": chart["height"],
        "width": chart["width"],
        "title_height": title["height"],
        "title_font": float(
            page.eval_on_selector("[data-testid='stMain'] h1", "e => getComputedStyle(e).fontSize")[:-2]
        ),
        "metrics_bottom": metrics_bottom,
        "sidebar_open": sidebar.get_attribute("aria-expanded") == "true",
    }


@pytest.mark.parametrize("name", FIGURE_PAGES)
def test_presenter_mode_first_screen_at_1280x720(tabs, base, name) -> None:
    page, external = tabs("light")
    _open(page, f"{base}/{name}?present=true")
    g = presenter_geometry(page)
    assert g["top"] >= 0 and g["top"] + g["height"] <= 720, g  # the whole figure on the first screen
    assert g["height"] >= 360, g  # at least half the screen tall
    print(name, {k: round(v) if isinstance(v, float) else v for k, v in g.items()})
    assert g["width"] >= 0.65 * 1280, g  # the sidebar is collapsed: the figure has the width
    assert not g["sidebar_open"], g
    assert g["title_height"] < 1.6 * g["title_font"], g  # one line
    assert 0 < g["metrics_bottom"] <= 720, g  # readouts beside the figure, on the same screen
    assert external == []


def _axe(page) -> list[dict]:
    """axe-core's serious and critical WCAG 2 A/AA violations on the open page (rule, impact, targets)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        """async () => {
          const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']}});
          return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical').map(v => ({
            id: v.id, impact: v.impact,
            nodes: v.nodes.slice(0, 4).map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || '').slice(0, 160)),
          }));
        }"""
    )
    return result


def _dark_backgrounds(page, name: str) -> None:
    """The dark scheme gives a dark app background and dark figure backgrounds."""
    app = page.eval_on_selector("[data-testid='stApp']", "e => getComputedStyle(e).backgroundColor")
    assert _luminance(app) < 0.05, app
    if name not in FIGURE_PAGES:
        return
    backgrounds = page.eval_on_selector_all(
        "[data-testid='stPlotlyChart'] .main-svg:first-child", "es => es.map(e => getComputedStyle(e).backgroundColor)"
    )
    paper = [_luminance(b) for b in backgrounds if "rgba(0, 0, 0, 0)" not in b]
    assert paper and max(paper) < 0.05, backgrounds


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", ALL)
def test_axe_finds_no_serious_violation_and_the_theme_holds(tabs, base, name, scheme) -> None:
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}; `make test` installs it (npm)")
    page, external = tabs(scheme, 1400, 1000)
    _open(page, f"{base}/{name}", figure=name in FIGURE_PAGES)
    if scheme == "dark":
        _dark_backgrounds(page, name)
    assert _axe(page) == []
    assert external == []


def _figure_luminance(page) -> float:
    return _luminance(
        page.eval_on_selector("[data-testid='stPlotlyChart'] .main-svg", "e => getComputedStyle(e).backgroundColor")
    )


_FIGURE_DARK = """() => {
  const e = document.querySelector("[data-testid='stPlotlyChart'] .main-svg");
  const v = e && getComputedStyle(e).backgroundColor.match(/\\d+/g).map(Number);
  return v && 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2] < %s;
}"""


def test_the_figures_follow_a_theme_switch_at_once(browser, base) -> None:
    """The viewer's scheme turns dark while a page is open (the app follows the system's setting by default): the
    figure turns dark by itself, with one rerun and no loop, and turns light again when the scheme does."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 720}, color_scheme="light")
    try:
        page = ctx.new_page()
        sent: list[int] = []  # messages from the browser to the server (each rerun is one)
        page.on("websocket", lambda ws: ws.on("framesent", lambda _: sent.append(1)))
        _open(page, f"{base}/Sampling")
        assert _figure_luminance(page) > 0.9
        before = len(sent)
        page.emulate_media(color_scheme="dark")
        page.wait_for_function(_FIGURE_DARK % "128", timeout=30_000)  # no click, no key: the watcher's rerun
        app = page.eval_on_selector("[data-testid='stApp']", "e => getComputedStyle(e).backgroundColor")
        assert _luminance(app) < 0.05 and _figure_luminance(page) < 0.05
        page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']")
        settled = len(sent)
        page.wait_for_timeout(1500)  # five of the watcher's checks: it asks no more
        assert len(sent) == settled and 1 <= settled - before <= 2, (before, settled, len(sent))
        page.emulate_media(color_scheme="light")
        page.wait_for_function("!(" + _FIGURE_DARK % "128" + ")()", timeout=30_000)
        assert _figure_luminance(page) > 0.9
    finally:
        ctx.close()
