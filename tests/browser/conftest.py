"""Browser-test fixtures: a real server started as the README's run command does, and Debian's chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bench.harness import SERVERS, running_server
from pages.frame.charts import CHART_CLASS
from pages.frame.shims import STYLED_GATE_KEY
from views import catalog

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"

# The drag row under a chart (pages/frame/charts.py): its class, the chart's class when it has one, the grip's width
DRAG_ROW_CLASS = f"{CHART_CLASS}-drag"
DRAGGED_CLASS = f"{CHART_CLASS}-dragged"
GRIP_PX = 22
# true once the first dragged chart has drawn the step its row's input is on
DRAG_DRAWN_JS = f"""() => {{
  const input = document.querySelector(".{DRAG_ROW_CLASS} input");
  const host = document.querySelector(".{DRAGGED_CLASS}");
  return !!input && !!host && host.dataset.dragIndex === input.value;
}}"""


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("Debian's chromium is not installed; `make test` installs it with apt-get")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=chromium_path,
            args=[
                # the tabs of one context share one renderer process (and its compiled scripts): a tab after the
                # first costs about half the CPU of a new context's (docs/performance.md, the test suite)
                "--process-per-site",
                "--disable-dev-shm-usage",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        new_context = b.new_context

        def counted_context(**kwargs):  # every tab of every test counts its app's finished runs (RUNS_JS)
            # "reduce motion", as a viewer may ask of their system: Streamlit's transitions are skipped, which cut
            # chromium's CPU for six page loads by about a sixth (26.3 s to 21.9 s, three runs each); a test that
            # wants the default motion passes reduced_motion="no-preference"
            kwargs.setdefault("reduced_motion", "reduce")
            ctx = new_context(**kwargs)
            ctx.add_init_script(RUNS_JS)
            return ctx

        b.new_context = counted_context
        yield b
        b.close()


# Counts the app's finished script runs (full and fragment reruns alike) in ``window.__lessonRuns``: each
# ForwardMsg on Streamlit's websocket whose ``script_finished`` field (field 6, a varint at the top level of the
# protobuf) says a run ended, except FINISHED_EARLY_FOR_RERUN (2: another run follows at once). Counted a task after
# the message arrives, once Streamlit has handled it. With the count read before an action, a test waits for the very
# rerun the action started (:func:`wait_rerun`) instead of guessing how long one takes to begin. (A MutationObserver on
# the app's ``data-test-script-state`` missed runs: a fragment rerun that ends within one React render never shows
# "running" in the DOM, so a preset click or a Back once waited 60 s for a rerun that had finished.)
RUNS_JS = """(() => {
  window.__lessonRuns = 0;
  const Native = window.WebSocket;
  const finished = data => {
    const b = new Uint8Array(data);
    let i = 0;
    const varint = () => {
      let v = 0, shift = 0, x;
      do { x = b[i++]; v += (x & 0x7f) * 2 ** shift; shift += 7; } while (x & 0x80 && i < b.length);
      return v;
    };
    while (i < b.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag % 8;
      if (wire === 0) { const v = varint(); if (field === 6) return v !== 2; }
      else if (wire === 2) { const n = varint(); i += n; }
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return false;
    }
    return false;
  };
  window.__lessonSent = 0;  // messages the app sent to the server (each rerun it asks for is one)
  window.WebSocket = class extends Native {
    send(data) {
      window.__lessonSent += 1;
      return super.send(data);
    }
    constructor(...args) {
      super(...args);
      this.addEventListener('message', event => {
        if (event.data instanceof ArrayBuffer && finished(event.data)) {
          setTimeout(() => { window.__lessonRuns += 1; }, 0);
        }
      });
    }
  };
})();"""


def runs_done(page) -> int:
    """The app's finished script runs in this tab since it loaded (:data:`RUNS_JS`)."""
    return page.evaluate("window.__lessonRuns")


# The page's readouts (Streamlit's metrics): label and value in page order ("" for a part not drawn yet), read in one
# call: a locator per readout cost about 45 round trips to the browser for a page of fifteen readouts.
READOUTS_JS = """() => [...document.querySelectorAll("[data-testid='stMetric']")].map(m => [
    m.querySelector("[data-testid='stMetricLabel']")?.innerText ?? "",
    m.querySelector("[data-testid='stMetricValue']")?.innerText ?? ""])"""


def metric_value(page, label: str) -> str:
    """The value of the first readout whose text contains ``label``, as drawn now (no wait)."""
    box = page.locator("[data-testid='stMetric']").filter(has_text=label).first
    return box.locator("[data-testid='stMetricValue']").text_content().strip()


def wait_metric(page, value: str) -> None:
    """Wait until some readout shows exactly ``value`` (the next run's readouts have arrived)."""
    page.wait_for_function(
        "v => [...document.querySelectorAll('[data-testid=stMetricValue]')].some(e => e.textContent.trim() === v)",
        arg=value,
        timeout=30_000,
    )


def settled_readouts(page) -> list[tuple[str, str]]:
    """The page's readouts, (label, value) in page order, once they hold still: on a loaded machine Streamlit draws
    the metrics over several frames (their code is loaded on first use), so one read may catch a part of them."""

    def read() -> list[tuple[str, str]]:
        return [(label, value) for label, value in page.evaluate(READOUTS_JS)]

    readouts, previous = read(), None
    for _ in range(40):
        if readouts == previous and readouts:
            return readouts
        next_frames(page, 3)
        previous, readouts = readouts, read()
    if readouts == previous == []:  # a page without readouts (the home page, the deck player)
        return []
    raise AssertionError(f"the readouts did not hold still: {previous} then {readouts}")


def wait_rerun(page, before: int, timeout: float = 60_000) -> None:
    """Wait until a run has finished since ``before`` (:func:`runs_done` read before the action) and the app is idle,
    then for two drawn frames."""
    try:
        page.wait_for_function(
            """n => window.__lessonRuns > n
                   && document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']") !== null""",
            arg=before,
            timeout=timeout,
        )
    except Exception as error:
        state = page.evaluate(
            """() => [window.__lessonRuns, window.__lessonThemeChecks,
                      document.querySelector("[data-testid='stApp']")?.getAttribute('data-test-script-state'),
                      document.querySelector("[data-testid='stApp']")?.getAttribute('data-test-connection-state')]"""
        )
        raise AssertionError(
            f"no rerun finished after {before} runs (runs, theme checks, state, connection): {state}"
        ) from error
    next_frames(page)


@contextmanager
def rerun(page, timeout: float = 60_000) -> Iterator[None]:
    """``with rerun(page): click()``: returns once the rerun the action starts has finished (:func:`wait_rerun`)."""
    before = runs_done(page)
    yield
    wait_rerun(page, before, timeout)


@pytest.fixture(scope="module")
def module_server() -> Iterator[str]:
    """One server for a test file's tests that do not need to be its first request (presets, drags); its process is
    ``bench.harness.SERVERS[url]`` (a test that stalls it)."""
    with running_server() as url:
        yield url


def next_frames(page, frames: int = 2) -> None:
    """Return once the browser has drawn ``frames`` more frames: what the last messages changed is on screen (a
    state to wait for, not a fixed time)."""
    page.evaluate(
        """n => new Promise(done => { const step = k => k ? requestAnimationFrame(() => step(k - 1)) : done();
                                        step(n); })""",
        frames,
    )


def wait_for_text(page, text: str, timeout: float = 40) -> None:
    """Wait until the page's text (SVG text included) contains ``text``, asked from here every 200 ms: a tab behind
    another (a teacher's or interviewer's, while the other side acts) runs no timers of its own, so a wait polled
    inside the page never saw a state that was already on it. A traceback on the page fails the wait at once, with
    its text. ``timeout`` in seconds."""
    deadline = time.monotonic() + timeout
    while not page.evaluate("t => document.body.textContent.includes(t)", text):
        error = page.locator("[data-testid='stException']")
        if error.count():
            raise AssertionError(f"an error on {page.url} while waiting for {text!r}: {error.first.inner_text()[:800]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"not on the page within {timeout:.0f} s: {text!r}")
        page.wait_for_timeout(200)


def wait_app_idle(page, timeout: float = 30_000) -> None:
    """Wait until the app is connected and its script has finished running (Streamlit's own e2e suite waits on both:
    before the websocket connects, a cold page also reads 'notRunning'), and no page body is waiting for the frame's
    CSS (a session's first run in presenter mode stops before the body: pages/frame/shims.py); then two frames."""
    page.wait_for_function(
        f"""() => document.querySelector(
              "[data-testid='stApp'][data-test-connection-state='CONNECTED'][data-test-script-state='notRunning']")
            && !document.querySelector(".st-key-{STYLED_GATE_KEY}")""",
        timeout=timeout,
    )
    next_frames(page)


class PageWatch:
    """Records requests that leave localhost and console errors of one browser page."""

    def __init__(self, page, base: str) -> None:
        self.page = page
        self.base = base
        self.external: list[str] = []
        self.errors: list[str] = []
        page.on("request", self._on_request)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _on_request(self, request) -> None:
        url = request.url
        if not (url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:"))):
            self.external.append(url)

    def wait_idle(self, timeout: float = 30_000) -> None:
        """:func:`wait_app_idle` on this page."""
        wait_app_idle(self.page, timeout)

    def drag_slider(self, fractions: tuple[float, ...], read: Callable[[], Any]) -> list[Any]:
        """Drag the grip of the first chart's drag row (``pages/frame/charts.py``: a range input under the figure)
        through ``fractions`` of its rail, calling ``read()`` after each move while the mouse button is still down,
        once the figure has drawn the step the grip is on (the row applies its steps in the browser)."""
        page = self.page
        rail = page.locator(f".{DRAG_ROW_CLASS} input[type=range]").first
        rail.wait_for(timeout=30_000)
        # a step is drawn only into a chart that plotly has drawn
        page.wait_for_function(f"() => !!document.querySelector('.{DRAGGED_CLASS}')?.dataset.drawn", timeout=30_000)
        rail.scroll_into_view_if_needed()
        next_frames(page)
        r = rail.bounding_box()
        value, top = (int(v) for v in rail.evaluate("(i) => [i.value, i.max]"))
        y = r["y"] + r["height"] / 2

        def x_at(frac: float) -> float:  # the grip's centre at a fraction of the rail (it stays inside the input)
            return r["x"] + GRIP_PX / 2 + (r["width"] - GRIP_PX) * frac

        page.mouse.move(x_at(value / max(top, 1)), y)
        page.mouse.down()
        seen = []
        for frac in fractions:
            page.mouse.move(x_at(frac), y, steps=4)
            page.wait_for_function(DRAG_DRAWN_JS, timeout=30_000)  # the figure shows the grip's step
            next_frames(page)
            seen.append(read())
        page.mouse.up()
        return seen

    def shot(self, name: str) -> Path | None:
        """A full-page screenshot in ``test-artifacts/`` when ``LESSON_TEST_SHOTS=1`` (to look at what a test saw; a
        full-page capture costs chromium about a second, so a plain run takes none)."""
        if os.environ.get("LESSON_TEST_SHOTS") != "1":
            return None
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


# The URL pages (Home is "") whose first screen may have no figure: the home page has none; the drills draw the
# current card's figure beside the card, but before its answer only when the card's page can hold the answer back
# (Predict first); the class page is a join form until a student joins. Every other page, the deck player included,
# opens on a figure.
NO_FIGURE_FIRST = ("", "Drills", "Class")

# the servers a test has opened a tab on: their processes, not their URLs (a later server of the same worker may get a
# port back: "not the first request" of a fresh server, once on a full run)
_OPENED: set[subprocess.Popen] = set()


@pytest.fixture(scope="module")
def shared_context(browser) -> Iterator:
    """One browser context for a test file's tabs (:func:`open_shared`, :func:`open_first`, and the tabs a test opens
    beside them): its tabs share a renderer process (``--process-per-site``) and a cache. Each tab is still a new
    Streamlit session (a new websocket)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield ctx
    ctx.close()


def _opener(context, base: str, first: bool = False) -> Iterator[Callable[..., PageWatch]]:
    before = set(context.pages)
    opened: list[str] = []

    def _open(path: str, width: int = 1400, height: int = 1000, color_scheme: str = "light") -> PageWatch:
        server = SERVERS[base]
        if first and not opened:
            assert server not in _OPENED, f"{path} is not the first request of the server at {base}"
        _OPENED.add(server)
        opened.append(path)
        page = context.new_page()
        page.set_viewport_size({"width": width, "height": height})
        if color_scheme != "light":
            page.emulate_media(color_scheme=color_scheme)
        watch = PageWatch(page, base)
        page.goto(base + path, wait_until="domcontentloaded")
        page.wait_for_selector("[data-testid='stApp']", timeout=60_000)
        watch.wait_idle(60_000)
        return watch

    yield _open
    for page in context.pages:  # every tab the test opened (speaker views and fresh sessions included)
        if page not in before:
            page.close()


@pytest.fixture
def open_shared(shared_context, module_server):
    """open_shared(path) -> PageWatch: a new tab (a new session) on the test file's shared server, at ``path``."""
    yield from _opener(shared_context, module_server)


@pytest.fixture
def open_first(shared_context, module_server):
    """As :func:`open_shared`, for a test whose first tab must be the very first request of the test file's server (a
    deep link into a server that has run no page yet: the file's first test). It fails if another test came first."""
    yield from _opener(shared_context, module_server, first=True)


def preset_option(page, name: str):
    """Open the preset box that lists ``name`` (the sidebar's, or a tab's: ``preset-<page>[-<group>]``) and return
    the option, for the caller to click (the click reruns the page)."""
    boxes = page.locator("[class*='st-key-preset-'] input[role='combobox']")
    boxes.first.wait_for(timeout=60_000)  # the page's body has drawn its controls
    for _ in range(2):  # a rerun that lands while the name is typed draws the box again, closed: once more
        for i in range(boxes.count()):
            box = boxes.nth(i)
            if not box.is_visible():
                continue
            box.click()
            box.fill(name)  # typed: the box lists the presets whose name contains it
            option = page.locator("[role='option']", has_text=name).first
            try:
                option.wait_for(timeout=10_000)  # the list is filtered as typed: on a busy machine, seconds
                return option
            except Exception:
                page.keyboard.press("Escape")  # not this box's preset
                box.fill("")
        page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=30_000)
    raise AssertionError(f"no preset box lists {name!r}: {boxes.count()} boxes")


def choose_preset(page, name: str) -> None:
    """Choose the preset ``name`` as a viewer does (its box opened, the option clicked); returns once the rerun it
    started has finished."""
    option = preset_option(page, name)
    with rerun(page):
        option.click()


def open_switches(page) -> None:
    """Open the sidebar's switches (presenter mode, hidden answers), behind the button beside the page finder (their
    panel is drawn over the page, outside the sidebar's element)."""
    toggle = page.locator("label:has-text('Presenter mode')")
    if not toggle.first.is_visible():
        page.locator(".st-key-lesson-switches [data-testid='stPopoverButton']").first.click()
    toggle.first.wait_for(timeout=30_000)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """After a browser run that checked every page's first screen: a page's share of its time (tests/shares.py), to
    hold against the budget of about 20 s of ``make test`` per page (docs/performance.md)."""
    from tests.browser import walks
    from tests.shares import page_share

    reports = [
        r
        for group in terminalreporter.stats.values()
        for r in group
        if getattr(r, "when", None) in ("setup", "call", "teardown") and hasattr(r, "duration")
    ]
    workers = {getattr(getattr(getattr(r, "node", None), "gateway", None), "id", None) for r in reports} - {None}
    lessons = sum(1 for e in catalog.PAGES if e.group != "Practice")
    pairs = sum(len(v) for v in walks.pairs().values())
    share = page_share(((r.nodeid, r.duration) for r in reports), lessons, pairs, len(walks.ALL))
    if share is not None and share.checked == len(catalog.PAGES) + 1:  # every page's first screen, and Home's
        terminalreporter.section("a page's share")
        terminalreporter.write_line(share.line(len(workers) or 1))
