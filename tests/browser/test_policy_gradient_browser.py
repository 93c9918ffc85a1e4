"""In a real browser: the policy-gradient page opened by a deep link as a fresh server's first request, its numbers, a
preset and the drag over the group size on the row under the spread figure (the readout panel following the grip while
the button is down, G in the link on release), all on that one load, with no request leaving localhost."""

import re

import pytest

from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset, metric_value, rerun, wait_metric

pytestmark = pytest.mark.browser

DEEP_LINK = "/Policy_gradient?pg_G=8"


def _panel(page) -> str:
    """The spread figure's readout panel (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def test_deep_link_first_request_then_preset_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "policy gradient" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    assert metric_value(page, "Group mean: E[g] on ∇J") == f"{7 / 8:.3f}"  # (G − 1)/G at G = 8
    assert page.locator(".js-plotly-plot .gtitle").first.text_content().startswith("One update's gradient estimate")

    choose_preset(page, "RLOO: unbiased, the group mean's signal-to-noise")
    wait_metric(page, f"{(2 / 1) ** 2:.2f}")  # RLOO's variance over the group mean's, (G/(G − 1))² at G = 2
    assert metric_value(page, "Group mean: E[g] on ∇J") == f"{1 / 2:.3f}"
    watch.shot("policy-gradient-preset")

    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert "G = 2 answers per update" in _panel(page)
    with rerun(page):
        low, high = watch.drag_slider((0.0, 1.0), lambda: _panel(page))
    assert "G = 2 answers per update" in low and f"E[g] = {1 / 2:.3f} ∇J" in low, low
    assert "G = 16 answers per update" in high and f"E[g] = {15 / 16:.3f} ∇J" in high, high
    wait_metric(page, f"{15 / 16:.3f}")
    assert re.search(r"[?&]pg_G=16(&|$)", page.url), page.url

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
