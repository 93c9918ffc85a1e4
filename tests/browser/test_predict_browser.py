"""In a real browser: Predict first on the KL page. The switch hides π* (no orange bars, no slider, "?" readouts,
nothing in the page's text), a typed guess brings back the truth beside the guess, and the guess is in the link."""

import re

import pytest

from pages.frame import PREDICT_CAPTION

pytestmark = pytest.mark.browser

TRUTH = "0.881"  # π*(y1) = e²/(e² + 1) at β = 0.5 for π_ref = (½, ½), r = (1, 0)


def test_predict_first_hides_then_reveals(open_first):
    watch = open_first("/KL_leash?beta=0.5")
    page = watch.page
    page.wait_for_selector("g.slider-container", timeout=30_000)  # normal mode: the β slider under the bars
    assert TRUTH in page.locator("[data-testid='stMain']").inner_text()

    page.locator("label:has-text('Predict first')").first.click()
    watch.wait_idle()
    page.wait_for_selector("text=Enter your guess in the sidebar", timeout=30_000)
    # the answer's slider steps leave the page (plotly redraws the chart a moment after the rerun ends)
    page.wait_for_function("document.querySelectorAll('g.slider-container').length === 0", timeout=15_000)
    # and the answer's text with them: on a busy machine plotly's redraw can finish after the slider has gone
    page.wait_for_function(f"() => !document.documentElement.outerHTML.includes('{TRUTH}')", timeout=15_000)
    assert TRUTH not in page.content()
    assert "predict_kl=true" in page.url
    assert page.get_by_text(PREDICT_CAPTION).count() >= 1  # the quick check's answer is held back too
    watch.shot("kl-predict-hidden")

    box = page.get_by_label("Your guess: π* of the top-reward answer", exact=True)
    box.fill("0.7")
    box.press("Enter")
    watch.wait_idle()
    page.wait_for_function(
        f"() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('{TRUTH}')", timeout=30_000
    )
    main = page.locator("[data-testid='stMain']").inner_text()
    assert "Your guess" in main and "-0.181" in main  # the guess and the error beside the truth
    assert page.get_by_text("your guess 0.700").count() >= 1  # the line on the figure
    assert re.search(r"[?&]guess_pi=0\.7(&|$)", page.url), page.url
    # answers hidden while the guess was missing come back: each rerun of the body starts from the frame's state
    page.wait_for_selector("text=Reveal the answer", timeout=15_000)
    assert page.get_by_text(PREDICT_CAPTION).count() == 0
    watch.shot("kl-predict-revealed")
    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
