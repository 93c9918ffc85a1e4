"""The deck player in chromium: keys step, jump and blank; the speaker view follows; handouts open offline."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import pytest

from decks import DECKS_DIR, load_deck
from decks.handout import build_handout
from tests.browser.conftest import rerun

pytestmark = pytest.mark.browser


def _slide(page) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).get("slide", ["1"])[0].removesuffix(".0")


def _press(page, key: str, expect: int | None = None) -> None:
    """Press a key with no text box focused; wait until the progress strip shows slide ``expect``."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    with rerun(page):  # each key is a button's shortcut: its click reruns the page
        page.keyboard.press(key)
    if expect is not None:
        _at(page, expect)


def _at(page, number: int) -> None:
    page.wait_for_function(
        "n => { const s = document.querySelector(\"[data-testid='deck-progress']\");"
        " return !!s && s.innerText.startsWith(n + ' / '); }",
        arg=number,
        timeout=60_000,
    )


def test_keyboard_steps_jumps_blanks_and_the_speaker_view_follows(open_shared) -> None:
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
    speaker.wait_for_selector("text=7 / 23", timeout=30_000)

    for key, expect in (("ArrowRight", 8), ("Space", 9), ("PageDown", 10), ("ArrowLeft", 9), ("PageUp", 8)):
        _press(page, key, expect)
        assert _slide(page) == str(expect)
    speaker.wait_for_selector("text=8 / 23", timeout=5_000)  # follows within about a second (polled every second)
    assert "Next: 9." in speaker.inner_text("body")

    page.evaluate("document.activeElement && document.activeElement.blur()")
    with rerun(page):
        for key in ("1", "5", "Enter"):
            page.keyboard.press(key)
    _at(page, 15)
    main.wait_idle()
    assert _slide(page) == "15"
    speaker.wait_for_selector("text=15 / 23", timeout=5_000)

    _press(page, "b")
    page.get_by_test_id("deck-blank").wait_for(timeout=20_000)
    speaker.wait_for_selector("text=screen blanked", timeout=5_000)
    _press(page, "b", 15)
    assert page.get_by_test_id("deck-blank").count() == 0

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
