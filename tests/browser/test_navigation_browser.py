"""One browser session across pages: sidebar clicks, Back and Forward, controls, and in-browser drags.

The page and every control must match the address bar after each step, no page may show another page's values
(or a traceback, or a warning), and a link copied at any step must reproduce what the page shows.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import signal
import time
import urllib.parse
from typing import Any

import pytest
from playwright.sync_api import expect

import views
from bench.harness import SERVERS
from pages.frame import PAGES
from tests.browser import walks
from tests.browser.conftest import (
    NO_FIGURE_FIRST,
    next_frames,
    preset_option,
    rerun,
    runs_done,
    settled_readouts,
    wait_rerun,
)
from tests.conftest import CLICKS_FILE
from tests.links import deep_link
from views import catalog
from views.state import APP_PARAMS

pytestmark = pytest.mark.browser

SPECS = {
    m.SPEC.page: m.SPEC
    for m in (importlib.import_module(f"views.{i.name}") for i in pkgutil.iter_modules(views.__path__))
    if hasattr(m, "SPEC")
}
HOME_TITLE = "The LLM lesson explorer"
GROUP_OF = {e.label: e.group for e in catalog.PAGES}  # a page link's stage group in the sidebar

# What the page shows when a click on a sidebar link was not taken: the script's state, whether the link is drawn as
# disabled (Streamlit ignores clicks on it then), and which element is under the link's centre.
_CLICK_STATE_JS = """link => {
    const box = link.getBoundingClientRect();
    const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    const app = document.querySelector("[data-testid='stApp']");
    return JSON.stringify({
        script: app && app.getAttribute('data-test-script-state'),
        cursor: getComputedStyle(link).cursor,
        box: [Math.round(box.x), Math.round(box.y), Math.round(box.width), Math.round(box.height)],
        hit_is_link: !!(hit && link.contains(hit)),
        hit: hit ? (hit.getAttribute('data-testid') || hit.tagName) : null,
        path: window.location.pathname,
        runs: window.__lessonRuns,
        sent: window.__lessonSent,
    });
}"""


def _url_page(path: str) -> str:
    """The URL path of a page script ("" for the home page)."""
    return "" if path == "app.py" else path.split("_", 1)[1].removesuffix(".py")


def _idle(page) -> None:
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=60_000)
    # the frame's history shim loads with the page's first elements; a click before it is in place (within the
    # first second or so of a fresh page) would still leave Streamlit's stray history entry
    page.wait_for_function("window.__lessonHistory === true", timeout=30_000)
    next_frames(page)


def _check(page, url_page: str) -> None:
    """The page shown is the one in the address bar, with no traceback, no warning and no foreign parameter."""
    url = urllib.parse.urlparse(page.url)
    assert url.path.strip("/") == url_page, (page.url, url_page)
    assert page.locator("[data-testid='stException']").count() == 0, page.url
    warnings = page.locator("[data-testid='stAlertContentWarning']")
    assert warnings.count() == 0, (page.url, [w.inner_text() for w in warnings.all()])
    params = set(urllib.parse.parse_qs(url.query, keep_blank_values=True))
    allowed = set(APP_PARAMS) | ({f.name for f in SPECS[url_page].fields} if url_page else set())
    assert params <= allowed, (page.url, params - allowed)
    if url_page and url_page != "Deck":  # the page's own marker (a lesson page's reset button): the address bar's page
        marker = {"Class": ".st-key-class-page"}.get(url_page, f".st-key-reset-{url_page}")
        assert page.locator(marker).count() == 1, page.url


def _open_deep(open_shared, link: str, url_page: str, figure: str = ".js-plotly-plot g.annotation-text-g"):
    """A new session on ``link`` (a deep link into ``url_page``), once its figure (``figure``) and readouts are drawn
    and its run has finished: (watch, page)."""
    watch = open_shared(link)
    watch.page.wait_for_selector(figure, timeout=30_000)
    # the readouts come after the figure, which plotly can draw before they arrive
    watch.page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    watch.wait_idle()
    _check(watch.page, url_page)
    return watch, watch.page


def _preset(page, name: str, url_page: str) -> dict[str, str]:
    """Click the sidebar preset ``name``; once its rerun has finished, the page's readouts (label: value)."""
    _press(page, preset_option(page, name), name)
    _check(page, url_page)
    return dict(_readouts(page))


def _query(page) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)


def _label_path() -> dict[str, str]:
    return {label: _url_page(path) for path, label, _ in PAGES}


def _labels() -> dict[str, str]:
    return {_url_page(path): label for path, label, _ in PAGES}


def _page_values(url: str) -> tuple[str, dict[str, list[str]]]:
    """The page of a URL and its query without the app-wide settings (the deck turns presenter mode on)."""
    parsed = urllib.parse.urlparse(url)
    query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
    return parsed.path.strip("/"), {k: v for k, v in query.items() if k not in APP_PARAMS}


# The page in the address bar has finished its run: Streamlit's script state is idle and an element that only that
# page's own run draws is on screen (its reset button; the deck's selector; the home page's title). While a run
# goes on, the previous page's elements stay on screen, but none of them is this page's marker.
_ARRIVED_JS = """([path, marker, title]) =>
    window.location.pathname.replace(/\\/$/, '') === path
    && window.__lessonHistory === true
    && document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']") !== null
    && (marker ? document.querySelector(marker) !== null
        : [...document.querySelectorAll("[data-testid='stMain'] h1")].some(h => h.textContent.trim() === title))"""


def _arrive(page, url_page: str) -> None:
    """Wait until ``url_page`` is in the address bar and its own run has finished (no fixed sleep)."""
    players = {"": None, "Deck": ".st-key-deck", "Class": ".st-key-class-page"}  # pages without a preset row
    marker = players.get(url_page, f".st-key-reset-{url_page}")
    page.wait_for_function(_ARRIVED_JS, arg=["/" + url_page if url_page else "", marker, HOME_TITLE], timeout=60_000)


def _click(page, label: str) -> None:
    """Click a sidebar page link and wait until that page has loaded and finished its run."""
    expand = page.locator("[data-testid='stExpandSidebarButton']")
    if expand.is_visible():  # presenter mode (the deck turns it on) starts with the sidebar closed: open it
        expand.click()
    link = page.locator("[data-testid='stSidebar'] a", has_text=label).first
    group = GROUP_OF.get(label)  # None for Home, which sits above the groups
    if group is not None:  # in a stage group: unfold it if it is folded (only the current page's is open)
        fold = page.locator("[data-testid='stSidebar'] [data-testid='stExpander'] details", has_text=group).first
        fold.wait_for(state="visible", timeout=30_000)
        if fold.get_attribute("open") is None:
            fold.locator("summary").click()
    link.wait_for(state="visible", timeout=30_000)
    target = "/" + _label_path()[label] if _label_path()[label] else ""
    counts = _counts(page)
    link.click()
    try:  # the address bar changes as soon as the app takes the click
        page.wait_for_function("p => window.location.pathname.replace(/\\/$/, '') === p", arg=target, timeout=20_000)
    except Exception:
        # Known, not yet understood (issue 29's note): on a loaded machine a click on a link just unfolded is
        # sometimes not taken at all (the address bar never changes). Counted and clicked once more.
        _not_taken(label, link, counts)
        link.click()
    _arrive(page, _label_path()[label])


def _counts(page) -> str:
    """The tab's finished runs and sent messages so far (tests/browser/conftest.py RUNS_JS)."""
    return page.evaluate("`runs ${window.__lessonRuns}, sent ${window.__lessonSent}`")


def _not_taken(label: str, element, before: str) -> None:
    """Write a click that was not taken, with what the page showed (and its runs and sent messages ``before`` the
    click, to tell a click the app ignored from a rerun it asked for and never got), to the run's file (its summary
    lists them)."""
    CLICKS_FILE.parent.mkdir(exist_ok=True)
    with CLICKS_FILE.open("a", encoding="utf-8") as f:
        f.write(f"{label}: before the click {before}; {element.evaluate(_CLICK_STATE_JS)}\n")


def _press(page, button, label: str) -> None:
    """Click a button or a preset's option that reruns the script and wait for that rerun to finish; a click the app
    did not take (no rerun within 20 s, as with the sidebar links in :func:`_click`) is written down and clicked once
    more."""
    before, counts = runs_done(page), _counts(page)
    button.click()
    try:
        wait_rerun(page, before, timeout=20_000)
    except AssertionError:
        _not_taken(label, button, counts)
        button.click()
        wait_rerun(page, before)


def _back(page, expect: str | None = None) -> None:
    """Browser Back; with ``expect`` (the URL page Back must return to), wait for that page's run to finish."""
    if expect is None:
        with rerun(page):
            page.go_back(wait_until="commit")
    else:
        page.go_back(wait_until="commit")
        _arrive(page, expect)


_readouts = settled_readouts  # the page's readouts once they hold still (the other browser files import this name)


# The first figure's traces as plotly holds them in the page: name and data arrays (not styling or ids).
_TRACES_JS = """el => JSON.stringify(el.data.map(t => [t.name ?? null, t.x ?? null, t.y ?? null, t.z ?? null,
    t.text ?? null]))"""


def _figure(page) -> tuple[list[str], str]:
    """The first figure's annotation texts (labels and readout panel) and its traces' names and data."""
    plot = page.locator(".js-plotly-plot").first  # plotly's own element, in either kind of chart
    plot.wait_for(timeout=30_000)
    return plot.locator("g.annotation-text-g").all_text_contents(), plot.evaluate(_TRACES_JS)


def _fresh(browser_page_factory, url: str, figure: bool = False) -> Any:
    """The readouts of a new session opened on ``url`` (a new tab: a new Streamlit session); with ``figure``,
    (readouts, its first figure's :func:`_figure`)."""
    return _fresh_many(browser_page_factory, [url], figure)[0]


def _fresh_many(browser_page_factory, urls: list[str], figure: bool = False) -> list[Any]:
    """:func:`_fresh` for each of ``urls`` in turn, in one new tab: each load of the tab is a new Streamlit session (a
    new websocket), and a tab reloaded costs the browser about a third of a new one."""
    tab = browser_page_factory()
    out = []
    for url in urls:
        tab.goto(url, wait_until="commit")
        _idle(tab)
        readouts = _readouts(tab)
        out.append((readouts, _figure(tab)) if figure else readouts)
    tab.close()
    return out


WALKS = walks.pairs()


@pytest.mark.parametrize("a", list(WALKS), ids=lambda a: a or "Home")
def test_pairs_of_pages_with_back_and_forward(open_shared, a: str) -> None:
    """From page ``a`` (opened from a deep link with non-default values), the pages the walk pairs with it
    (tests/browser/walks.py: every other page with LESSON_WALK=all) in turn, each from the sidebar with Back after
    it: Back returns to ``a`` with its own values, Forward to the last page opened."""
    link = deep_link(a)
    watch = open_shared(link)
    page = watch.page
    start = urllib.parse.urlparse(link).path.strip("/")
    _arrive(page, start)
    _check(page, start)
    assert (
        urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).keys()
        >= urllib.parse.parse_qs(urllib.parse.urlparse(link).query).keys()
    ), page.url  # the deep link's values are in place
    if a != start:  # Home: from GRPO's deep link, in the sidebar
        _click(page, _labels()[a])
        _check(page, a)
    at_a = _page_values(page.url)
    last = a
    for b in WALKS[a]:
        label = _labels()[b]
        _click(page, label)
        _check(page, b)
        if b not in NO_FIGURE_FIRST:  # the page's figure is drawn
            page.wait_for_selector(".js-plotly-plot", timeout=30_000)
        _back(page, a)
        _check(page, a)
        # back on a, with a's values (the shim's last writes, to tell what went wrong)
        assert _page_values(page.url) == at_a, (b, page.url, at_a, page.evaluate("window.__lessonHistoryLog"))
        last = b
    page.go_forward(wait_until="commit")  # Forward returns to the last page opened from a
    _arrive(page, last)
    _check(page, last)
    assert watch.errors == [] and watch.external == []


# The server's answer to a click on a page link held back this long: the history shim used to drop the switch's stray
# write (the old page's link cleared) only within 5 s of the click, and a loaded server had answered later than that
LATE_ANSWER_S = 6


def test_a_page_switch_the_server_answers_late_leaves_back_on_the_old_pages_link(open_shared, module_server) -> None:
    """A loaded server answers a click on a page link late: Back must still return to the old page with its own
    link. The server is stopped (SIGSTOP) from just before the click until LATE_ANSWER_S after the browser has taken
    it; that hold is the condition under test (a slow server), not a wait for a state. Seen under load before the
    fix: Back landed on KL leash with an empty link (make test-busy, seed 630775)."""
    link = deep_link("KL_leash")
    watch = open_shared(link)
    page = watch.page
    _arrive(page, "KL_leash")
    at_a = _page_values(page.url)
    assert at_a[1], page.url  # the deep link's values are in the address bar
    home = page.locator("[data-testid='stSidebar'] a", has_text="Home").first
    home.wait_for(state="visible", timeout=30_000)
    server = SERVERS[module_server]
    os.kill(server.pid, signal.SIGSTOP)
    try:
        home.click()
        page.wait_for_function("window.__lessonHistoryLog.some(e => e[1] === 'page link')", timeout=30_000)
        time.sleep(LATE_ANSWER_S)
    finally:
        os.kill(server.pid, signal.SIGCONT)
    _arrive(page, "")
    _check(page, "")
    _back(page, "KL_leash")
    assert _page_values(page.url) == at_a, (page.url, page.evaluate("window.__lessonHistoryLog"))
    page.go_forward(wait_until="commit")
    _arrive(page, "")
    assert watch.errors == [] and watch.external == []


def test_steps_and_backs_each_match_a_fresh_session_on_the_address_bar(open_shared, browser) -> None:
    """A walk of presets, page links and a number typed by hand; Back through every step restores its link and
    readouts, and each step's link opened in a new session shows the same readouts. Six steps over four pages by
    default (each kind of step: two presets, three links, a typed number); eleven over six pages with
    ``LESSON_WALK=all`` (``make test-walks``)."""
    watch = open_shared("/Scaling_laws?N=3e9&C=6e20")
    page = watch.page
    _idle(page)
    page.wait_for_selector("[data-testid='stMetricValue']", timeout=30_000)

    def preset(name: str) -> None:
        _press(page, preset_option(page, name), name)

    def number(key: str, value: str) -> None:  # type into a number input, key by key as a person does, then Enter
        box = page.locator(f".st-key-{key} input").first
        box.click()
        box.press("ControlOrMeta+a")
        box.press_sequentially(value)
        with rerun(page):
            box.press("Enter")
        in_url = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).get(key)
        assert in_url == [box.input_value()] == [value], (page.url, box.input_value())  # the widget is the URL

    steps = [
        lambda: preset("Worked example A"),
        lambda: _click(page, "GRPO"),
        lambda: preset("One correct of 16"),
        lambda: _click(page, "KL leash and DPO"),
        lambda: preset("Reward hack"),
        lambda: _click(page, "pass@k and error bars"),
        lambda: preset("Code benchmark"),
        lambda: number("k", "7"),  # a control typed by hand, not a preset
        lambda: _click(page, "LoRA"),
        lambda: preset("Fast decay"),
        lambda: _click(page, "Attention"),
    ]
    if not walks.EXHAUSTIVE:  # every kind of step: presets, links, a typed number, over four pages
        steps = [steps[i] for i in (0, 1, 2, 5, 7, 8)]
    seen = [(page.url, _readouts(page))]
    for step in steps:
        step()
        url_page = urllib.parse.urlparse(page.url).path.strip("/")
        _check(page, url_page)
        seen.append((page.url, _readouts(page)))
    for url, shown in reversed(seen[:-1]):
        _back(page)
        assert page.url == url
        _check(page, urllib.parse.urlparse(url).path.strip("/"))
        assert _readouts(page) == shown, url
    # each step's address bar, opened in a new session, shows that step's readouts
    fresh = _fresh_many(page.context.new_page, [url for url, _ in seen[1:]])
    for (url, shown), again in zip(seen[1:], fresh, strict=True):
        assert shown == again, url
    assert watch.errors == [] and watch.external == []


# A topic typed into the sidebar's page finder, and the page it must open: the first the finder offers for it.
FINDER_TOPICS = {"ZeRO": "Training_memory", "KV cache": "Attention", "Chinchilla": "Scaling_laws"}


def test_the_page_finder_opens_a_topic_in_one_selection(open_shared) -> None:
    """Typing a topic into the page finder offers the pages whose title or keywords hold it, in lesson order; one
    selection (Enter on the first) opens that page, with presenter mode carried."""
    watch = open_shared("/Drills?present=true")
    page = watch.page
    _idle(page)
    for topic, url_page in FINDER_TOPICS.items():
        assert catalog.find(topic)[0].url == url_page, topic
        expand = page.locator("[data-testid='stExpandSidebarButton']")
        if expand.is_visible():  # presenter mode starts with the sidebar closed
            expand.click()
        finder = page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox'] input").first
        finder.click()
        finder.press_sequentially(topic)
        # the list is filtered as typed, on a busy machine over seconds: wait for the filtered list itself
        expected = [e.label for e in catalog.find(topic)]
        pattern = [re.compile("^" + re.escape(label) + "( · |$)") for label in expected]
        expect(page.locator("[role='option']")).to_have_text(pattern, use_inner_text=True, timeout=30_000)
        finder.press("Enter")
        _arrive(page, url_page)
        _check(page, url_page)
        assert _query(page).get("present") == ["true"], page.url
    assert watch.errors == [] and watch.external == []
