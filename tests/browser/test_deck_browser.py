"""The deck player in chromium: keys step, jump and blank; the speaker view follows; handouts open offline."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import pytest
from playwright.sync_api import expect

from decks import DECKS_DIR, load_deck
from decks.handout import build_handout
from tests.browser.conftest import rerun

pytestmark = pytest.mark.browser


def _slide(page) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).get("slide", ["1"])[0]


def _press(page, key: str, slide: int | None = None) -> None:
    """Press a key with no text box focused; wait until the progress strip shows slide ``slide``."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    with rerun(page):  # each key is a button's shortcut: its click reruns the page
        page.keyboard.press(key)
    if slide is not None:
        _at(page, slide)


def _at(page, number: int) -> None:
    page.wait_for_function(
        "n => { const s = document.querySelector(\"[data-testid='deck-progress']\");"
        " return !!s && s.innerText.startsWith(n + ' / '); }",
        arg=number,
        timeout=60_000,
    )


def test_keyboard_steps_jumps_blanks_and_the_speaker_view_follows(open_shared) -> None:
    total = len(load_deck(DECKS_DIR / "lesson.toml").slides)  # the speaker view reads "slide / total"
    main = open_shared("/Deck?deck=lesson&slide=7")
    page = main.page
    _at(page, 7)
    # the keys are the buttons' shortcuts: wait until the last of them is on the page (the slide's figures, drawn
    # first, may come before them)
    page.wait_for_selector(".st-key-deck-prev-pageup button", state="attached", timeout=30_000)
    main.wait_idle()
    assert page.locator("[data-testid='stException']").count() == 0
    talk = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["talk"][0]
    assert "present=true" in page.url

    speaker = main.page.context.new_page()
    speaker.goto(f"{main.base}/Deck?deck=lesson&talk={talk}&speaker=true", wait_until="domcontentloaded")
    speaker.wait_for_selector(f"text=7 / {total}", timeout=30_000)

    for key, slide in (("ArrowRight", 8), ("Space", 9), ("PageDown", 10), ("ArrowLeft", 9), ("PageUp", 8)):
        _press(page, key, slide)
        assert _slide(page) == str(slide)
    # the speaker view polls every second: it follows within about a second, on a machine busy with the deck's
    # warming (a run of its own) within a few; its next slide's title comes in a later part of the same run
    speaker.wait_for_selector(f"text=8 / {total}", timeout=20_000)
    expect(speaker.locator("body")).to_contain_text("Next: 9.", timeout=20_000)

    page.evaluate("document.activeElement && document.activeElement.blur()")
    with rerun(page):
        for key in ("1", "5", "Enter"):
            page.keyboard.press(key)
    _at(page, 15)
    main.wait_idle()
    assert _slide(page) == "15"
    speaker.wait_for_selector(f"text=15 / {total}", timeout=20_000)

    _press(page, "b")
    page.get_by_test_id("deck-blank").wait_for(timeout=20_000)
    speaker.wait_for_selector("text=screen blanked", timeout=20_000)
    _press(page, "b", 15)
    # the slide number reads 15 while blanked too, and the deck's warming reruns a fragment every second (a run that
    # rerun() may count): wait for the blank itself to go
    expect(page.get_by_test_id("deck-blank")).to_have_count(0, timeout=30_000)

    page.reload(wait_until="domcontentloaded")
    _at(page, 15)  # a reload keeps the place
    assert main.external == [] and main.errors == []


@pytest.mark.parametrize("name", ["lesson", "interview"])
def test_handout_opens_offline_with_every_figure_drawn(browser, tmp_path: Path, name: str) -> None:
    deck = load_deck(DECKS_DIR / f"{name}.toml")
    path = tmp_path / f"{name}.html"
    path.write_text(build_handout(deck), encoding="utf-8")
    expected = len(re.findall(r'class="figure-data"', path.read_text()))
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_function(f"document.querySelectorAll('[data-drawn=\"true\"]').length === {expected}", timeout=60_000)
    assert page.locator(".js-plotly-plot").count() == expected
    assert [u for u in requests if not u.startswith(("file://", "data:", "blob:"))] == []
    assert errors == []
    ctx.close()


# Counts, at every animation frame from a key press until the move is drawn, the frames in which the main figure
# area holds no drawn plot: a slide change must leave the old figure on screen until the new one is drawn.
_WATCH_JS = """() => { window.__emptyFrames = 0; window.__watching = true;
  const tick = () => { if (!window.__watching) return;
    const svg = document.querySelector("[data-testid='stMain'] .js-plotly-plot .main-svg");
    if (!svg || svg.getBoundingClientRect().height < 50) window.__emptyFrames += 1;
    requestAnimationFrame(tick); };
  requestAnimationFrame(tick); }"""
_DRAWN_JS = """n => { const s = document.querySelector("[data-testid='deck-progress']");
  return !!s && s.innerText.startsWith(n + ' / ')
    && !!document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']")
    && [...document.querySelectorAll("[data-testid='stMain'] .js-plotly-plot")].every(e => e.querySelector('.main-svg'))
    && !!document.querySelector("[data-testid='stMain'] .js-plotly-plot .main-svg"); }"""


# What of the slide the progress strip (fixed on the window, at its top) lies over: a plot area or a text of a figure
# (not its empty margins), a readout, a fold's summary, a button or a field of the main column, as [what, px of
# overlap in x, in y].
_UNDER_STRIP_JS = """() => {
  const strip = document.querySelector("[data-testid='deck-progress']").getBoundingClientRect();
  const main = document.querySelector("[data-testid='stMain']");
  const marks = ".js-plotly-plot .nsewdrag, .js-plotly-plot text, [data-testid='stMetric'], summary, button, input";
  return [...main.querySelectorAll(marks)].filter(e => !e.closest('.modebar') && e.textContent !== '')
    .map(e => [e, e.getBoundingClientRect()]).filter(([e, r]) => r.width > 0 && r.height > 0)
    .map(([e, r]) => [(e.getAttribute('aria-label') || e.textContent || e.getAttribute('class')).slice(0, 30),
                      Math.min(r.right, strip.right) - Math.max(r.left, strip.left),
                      Math.min(r.bottom, strip.bottom) - Math.max(r.top, strip.top)])
    .filter(([_, x, y]) => x > 1 && y > 1);
}"""


def _timed_move(page, key: str, slide: int) -> tuple[float, int]:
    """Seconds from the key press until slide ``slide`` is drawn (its number, the run finished, every figure
    drawn, two frames painted), and the frames in between with no figure on screen."""
    import time

    page.evaluate(_WATCH_JS)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    start = time.perf_counter()
    page.keyboard.press(key)
    page.wait_for_function(_DRAWN_JS, arg=slide, timeout=60_000)
    page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    took = time.perf_counter() - start
    empty = page.evaluate("window.__watching = false, window.__emptyFrames")
    return took, empty


def _first_and_warm_in_a_fresh_session(open_shared, n: int) -> tuple[float, float]:
    """Slide ``n``'s first visit in a new session (after one unmeasured move: a session's first move carries its
    one-time costs) and a warm visit of it right after, in seconds."""
    fresh = open_shared(f"/Deck?deck=lesson&slide={n - 2}", width=1280, height=720)
    fresh.page.wait_for_function(_DRAWN_JS, arg=n - 2, timeout=60_000)
    fresh.page.wait_for_selector(".st-key-deck-prev-pageup button", state="attached", timeout=30_000)
    fresh.wait_idle()
    _press(fresh.page, "ArrowRight", n - 1)
    first, _ = _timed_move(fresh.page, "ArrowRight", n)
    _timed_move(fresh.page, "ArrowLeft", n - 1)
    warm, _ = _timed_move(fresh.page, "ArrowRight", n)
    fresh.page.close()
    return first, warm


def test_a_warmed_deck_moves_without_an_empty_figure_and_its_handout_downloads_every_time(open_shared) -> None:
    """The lesson deck at 1280 x 720 (issue 30): opening it warms every slide in the background and says when that
    is done; after that, the first visits of slides 5-13 take at most twice their warm visits in sum, and each at
    most twice its own plus a second (the session's first move not counted), and no move leaves the figure area
    empty (the old figure stays until the new one is drawn); the handout downloads complete 20 times in 20 clicks,
    right after a slide change and after Play included."""
    main = open_shared("/Deck?deck=lesson&slide=3", width=1280, height=720)
    page = main.page
    page.get_by_text("slides and the handout are ready").wait_for(state="attached", timeout=240_000)
    page.wait_for_function(_DRAWN_JS, arg=3, timeout=60_000)
    # the keys are the buttons' shortcuts: the last of them on the page, and the run that drew them finished
    page.wait_for_selector(".st-key-deck-prev-pageup button", state="attached", timeout=30_000)
    main.wait_idle()

    # The first move of a session carries its one-time costs whatever the slide (3.1 s against 1.1 s for the same
    # slide warm, once, on a loaded machine): it is not measured. Then slides 5-13, each with a figure (2 and 17 open
    # withheld, with none); 9 is LoRA's, 2.4-5 s cold before the warming.
    _press(page, "ArrowRight", 4)
    first, covered = {}, {}
    for n in range(5, 14):
        first[n] = _timed_move(page, "ArrowRight", n)
        if under := page.evaluate(_UNDER_STRIP_JS):  # read after the move is timed
            covered[n] = under
    # the progress strip covers nothing of a slide's first screen (at the bottom right it hid "1 more" on slide 6)
    assert covered == {}, covered
    warm = {n: _timed_move(page, "ArrowLeft", n) for n in range(12, 4, -1)}
    print({n: (round(first[n][0], 2), round(warm[n][0], 2)) for n in warm})
    # the sum holds the goal (twice); one slide may stray by a second: with the other browser worker beside it, a
    # move took 1.87 s first and 0.66 s warm once (a cold slide stalled 2.4-5 s before the warming)
    assert sum(first[n][0] for n in warm) <= 2 * sum(warm[n][0] for n in warm), (first, warm)
    # A slide that strays further is measured again in a fresh session (the views are warmed per server, so its first
    # visit there is again a first visit after the warming): under CI's load one first visit took 5.58 s against
    # 1.42 s warm while the other 7 held, a stall of the machine, not of the slide, which a second try tells apart.
    strays = [n for n in warm if first[n][0] > 2 * warm[n][0] + 1.0]
    retried = {n: _first_and_warm_in_a_fresh_session(open_shared, n) for n in strays[:2]}
    print("retried", {n: (round(f, 2), round(w, 2)) for n, (f, w) in retried.items()})
    assert len(strays) <= 2 and all(f <= 2 * w + 1.0 for f, w in retried.values()), (first, warm, retried)
    empty = {f"to {n} (first)": e for n, (_, e) in first.items() if e}
    empty |= {f"to {n}": e for n, (_, e) in warm.items() if e}
    assert empty == {}, empty  # frames with no figure on screen, by move

    page.locator("[data-testid='stExpandSidebarButton']").click()  # presenter mode starts with the sidebar closed
    button = page.locator(".st-key-deck-handout button")
    sizes = []
    for i in range(20):
        if i == 5:
            _press(page, "ArrowLeft", 4)  # a slide change right before the click (the warm visits ended on 5)
        if i == 10:
            _press(page, "ArrowRight", 5)  # the KL leash slide: Play its sweep of β, then click
            page.get_by_role("button", name=re.compile("Play the sweep")).click()
        with page.expect_download(timeout=60_000) as download:
            button.click()
        path = download.value.path()
        text = Path(path).read_text(encoding="utf-8")
        assert text.rstrip().endswith("</html>") and "Predict 1: 10B parameters on 20B tokens?" in text, i
        sizes.append(len(text))
    assert len(sizes) == 20 and len(set(sizes)) == 1  # twenty complete, identical files
    assert main.external == [] and main.errors == []
