"""In a real browser: Predict first on the KL page. The switch hides π* (no orange bars, no slider, "?" readouts,
nothing in the page's text), a typed guess brings back the truth beside the guess, and the guess is in the link."""

import re

import pytest
from playwright.sync_api import expect

from pages.frame import PREDICT_CAPTION
from tests.browser.conftest import DRAG_ROW_CLASS, rerun

pytestmark = pytest.mark.browser

TRUTH = "0.881"  # π*(y1) = e²/(e² + 1) at β = 0.5 for π_ref = (½, ½), r = (1, 0)


def test_predict_first_hides_then_reveals(open_first):
    watch = open_first("/KL_leash?beta=0.5")
    page = watch.page
    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)  # normal mode: the β drag row under the bars
    # the truth is in the readouts, which can arrive a frame after the chart's drag row: wait for it, not a moment
    expect(page.locator("[data-testid='stMain']")).to_contain_text(TRUTH, timeout=30_000)

    page.locator("label:has-text('Predict first')").first.click()
    watch.wait_idle()
    page.wait_for_selector("text=Enter your guess in the sidebar", timeout=30_000)
    # the answer's drag row leaves the page (the chart is redrawn a moment after the rerun ends)
    page.wait_for_function(f"document.querySelectorAll('.{DRAG_ROW_CLASS}').length === 0", timeout=15_000)
    # and the answer's text with it: on a busy machine plotly's redraw can finish after the row has gone
    page.wait_for_function(f"() => !document.documentElement.outerHTML.includes('{TRUTH}')", timeout=15_000)
    assert TRUTH not in page.content()
    assert "predict_kl=true" in page.url
    expect(page.get_by_text(PREDICT_CAPTION).first).to_be_attached(timeout=30_000)  # the quick check's answer too
    watch.shot("kl-predict-hidden")

    box = page.get_by_label("Your guess: π* of the top-reward answer", exact=True)
    box.fill("0.7")
    with rerun(page):
        box.press("Enter")
    # the run's parts arrive over several frames (and the figure is drawn by plotly.js after them): wait for each
    main = page.locator("[data-testid='stMain']")
    for text in (TRUTH, "Your guess", "-0.181"):  # the truth, the guess and the error beside it
        expect(main).to_contain_text(text, timeout=30_000)
    expect(page.get_by_text("your guess 0.700").first).to_be_attached(timeout=30_000)  # the line on the figure
    assert re.search(r"[?&]guess_pi=0\.7(&|$)", page.url), page.url
    # answers hidden while the guess was missing come back: each rerun of the body starts from the frame's state
    page.wait_for_selector("text=Reveal the answer", timeout=15_000)
    expect(page.get_by_text(PREDICT_CAPTION)).to_have_count(0, timeout=30_000)
    watch.shot("kl-predict-revealed")
    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
