"""In a real browser: the number-formats page opened by a deep link as a fresh server's first request, its numbers,
a preset and the drag over x on the row under the number line (the readout panel following the grip while the button
is down, x in the link on release), all on that one load, with no request leaving localhost."""

import re

import pytest

from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset, metric_value, rerun, wait_metric

pytestmark = pytest.mark.browser

DEEP_LINK = "/Number_formats?fmt_x=100000"


def _panel(page) -> str:
    """The number line's readout panel (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def test_deep_link_first_request_then_preset_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "Number formats" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    # torch's CPU cast: E4M3 saturates at 448, fp16 and E5M2 overflow (tests/test_views_number_formats.py)
    assert metric_value(page, "fp8 E4M3 stores") == "448 (saturated)"
    assert metric_value(page, "fp16 stores") == "∞ (overflow)"
    assert page.locator(".js-plotly-plot .gtitle").first.text_content().startswith("Five formats on one log line")

    choose_preset(page, "A5.3.1: a small gradient, 1e-7, in fp16 and bf16")
    wait_metric(page, "1.19209e-07")  # 2⁻²³: fp16's subnormal nearest 1e-7, as torch casts it
    assert re.search(r"[?&]fmt_x=1e-07(&|$)", page.url), page.url
    watch.shot("number-formats-preset")

    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert "x = 1e-07" in _panel(page)
    with rerun(page):
        low, high = watch.drag_slider((0.0, 1.0), lambda: _panel(page))
    assert "x = 1e-08" in low and "fp16: 0 (underflow: rounds to 0)" in low, low
    assert "x = 100000" in high and "fp8 E4M3: 448 (saturated)" in high, high
    wait_metric(page, "448 (saturated)")
    assert re.search(r"[?&]fmt_x=100000(&|$)", page.url), page.url

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
