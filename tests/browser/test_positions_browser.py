"""In a real browser: the positions page opened by a deep link as a fresh server's first request, its numbers, a
preset and the drag over s on the row under the wavelength figure (the readout panel changing while the button is
down, the value in the link on release), all on that one load, with no request leaving localhost."""

import math
import re

import pytest

from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset, metric_value, rerun, wait_metric

pytestmark = pytest.mark.browser

DEEP_LINK = "/Positions?rope_base=500000&rope_method=linear&rope_s=2"


def _panel(page) -> str:
    """The wavelength figure's readout panel (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def test_deep_link_first_request_then_preset_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "Positions" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    beyond = sum(2 * math.pi * 500_000 ** (2 * i / 128) > 8192 for i in range(64))
    assert metric_value(page, "Pairs with λ > L") == f"{beyond} of 64"
    assert metric_value(page, "s·L") == f"{2 * 8192:,} tokens"
    assert page.locator(".js-plotly-plot .gtitle").first.text_content().startswith("RoPE: the wavelength")

    choose_preset(page, "A8.10: 8k to 128k with YaRN (s = 16)")
    wait_metric(page, f"{0.1 * math.log(16) + 1:.4f}")
    assert metric_value(page, "s·L") == f"{16 * 8192:,} tokens"
    assert re.search(r"[?&]rope_s=16", page.url) and "rope_method=linear" not in page.url, page.url
    watch.shot("positions-yarn-preset")

    # the drag over s, from the rail's ends: s = 1 (YaRN's attention factor is 1 there) and s = 64, the panel
    # following the grip with the button down; on release, one rerun writes s into the link and the readouts
    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert f"s·L = {16 * 8192:,} tokens" in _panel(page)
    with rerun(page):
        low, high = watch.drag_slider((0.0, 1.0), lambda: _panel(page))
    assert f"s = 1: s·L = {8192:,} tokens" in low and "attention factor 1.0000" in low, low
    assert f"s = 64: s·L = {64 * 8192:,} tokens" in high and f"attention factor {0.1 * math.log(64) + 1:.4f}" in high
    wait_metric(page, f"{64 * 8192:,} tokens")
    assert re.search(r"[?&]rope_s=64(\.0)?(&|$)", page.url), page.url  # the widget writes a float as "64.0"
    assert metric_value(page, "YaRN attention factor") == f"{0.1 * math.log(64) + 1:.4f}"

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
