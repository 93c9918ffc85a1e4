"""In a real browser: the test-time compute page opened by a deep link as a fresh server's first request, its numbers,
a preset and the drag over n on the row under the best-of-n figure (the readout panel following the grip while the
button is down, n in the link on release), all on that one load, with no request leaving localhost."""

import math
import re

import pytest

from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset, metric_value, rerun, wait_metric

pytestmark = pytest.mark.browser

DEEP_LINK = "/Test_time_compute?ttc_p=0.2"


def _kl(n: int) -> str:
    """log n - (n - 1)/n, as the readout prints it."""
    return f"{math.log(n) - (n - 1) / n:.2f} nats"


def _panel(page) -> str:
    """The best-of-n figure's readout panel (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def test_deep_link_first_request_then_preset_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "Test-time compute" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    assert metric_value(page, "Best-of-n with a verifier") == f"{1 - 0.8**16:.3f}"
    assert page.locator(".js-plotly-plot .gtitle").first.text_content().startswith("Best-of-n")

    choose_preset(page, "A7.1.2: best-of-512 against a reward model, past the gold score's peak")
    wait_metric(page, _kl(512))
    assert "ttc_n=512" in page.url, page.url
    watch.shot("test-time-compute-preset")

    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert "n = 512" in _panel(page)
    with rerun(page):
        low, high = watch.drag_slider((0.0, 1.0), lambda: _panel(page))
    assert "n = 1" in low and "KL: 0.00 nats" in low, low
    assert "n = 1024" in high and f"KL: {_kl(1024)}" in high, high
    wait_metric(page, _kl(1024))
    assert re.search(r"[?&]ttc_n=1024(&|$)", page.url), page.url

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
