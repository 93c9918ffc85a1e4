"""In a real browser: the calibration page opened by a deep link as a fresh server's first request, its numbers, a
preset and the drag over the tuning strength κ on the row under the reliability diagram (the readout panel following
the grip while the button is down, κ in the link on release), all on that one load, with no request leaving
localhost."""

import re

import pytest

from tests import calibration_reference as ref
from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset, metric_value, rerun, wait_metric

pytestmark = pytest.mark.browser

DEEP_LINK = "/Calibration?cal_kappa=2"


def _panel(page) -> str:
    """The reliability diagram's readout panel (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def test_deep_link_first_request_then_preset_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "Calibration" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    assert metric_value(page, "ECE after tuning") == f"{ref.toy(2.0)['tuned']:.3f}"
    assert page.locator(".js-plotly-plot .gtitle").first.text_content().startswith("Reliability diagram")

    choose_preset(page, "A13.3: ECE after strong tuning (κ = 4) with equal-width bins")
    wait_metric(page, f"{ref.toy(4.0)['tuned']:.3f}")
    assert "cal_kappa=4" in page.url, page.url
    watch.shot("calibration-preset")

    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert "κ = 4" in _panel(page)
    with rerun(page):
        low, high = watch.drag_slider((0.0, 1.0), lambda: _panel(page))
    assert "κ = 1" in low and f"tuned {ref.toy(1.0)['tuned']:.3f}" in low, low
    assert "κ = 6" in high and f"tuned {ref.toy(6.0)['tuned']:.3f}" in high, high
    wait_metric(page, f"{ref.toy(6.0)['tuned']:.3f}")
    assert re.search(r"[?&]cal_kappa=6(&|$)", page.url), page.url

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
