"""In a real browser: the MoE page opened by a deep link as a fresh server's first request, its numbers, a preset and
the drag over the capacity factor on the row under the routing figure (the readout panel following the grip while
the button is down, the factor in the link on release), all on that one load, with no request leaving localhost."""

import math
import re

import pytest

from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset, metric_value, rerun, wait_metric

pytestmark = pytest.mark.browser

DEEP_LINK = "/MoE?moe_cf=1.5"


def _panel(page) -> str:
    """The routing figure's readout panel (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def test_deep_link_first_request_then_preset_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "Mixture of experts" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    assert metric_value(page, "Capacity C") == f"{math.ceil(1.5 * 512 * 2 / 8)}"
    assert page.locator(".js-plotly-plot .gtitle").first.text_content().startswith("A skewed top-k router")

    choose_preset(page, "A2.8: top-2 of 8, skewed, capacity factor 1.0")
    wait_metric(page, f"{math.ceil(1.0 * 512 * 2 / 8)}")
    assert metric_value(page, "Assignments dropped") == "245 of 1,024"  # a plain loop in tests/test_views_moe.py
    assert "moe_cf" not in page.url, page.url  # the preset is the defaults
    watch.shot("moe-preset")

    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert f"C = {math.ceil(1.0 * 1024 / 8)} slots" in _panel(page)
    with rerun(page):
        low, high = watch.drag_slider((0.0, 1.0), lambda: _panel(page))
    assert "capacity factor 0.5" in low and f"C = {math.ceil(0.5 * 1024 / 8)} slots" in low, low
    assert "capacity factor 3" in high and f"C = {3 * 1024 // 8} slots" in high and "dropped: 0 of" in high, high
    wait_metric(page, f"{3 * 1024 // 8}")
    assert re.search(r"[?&]moe_cf=3(&|$)", page.url), page.url

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
