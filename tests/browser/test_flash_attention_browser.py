"""In a real browser: the FlashAttention page opened by a deep link as a fresh server's first request, its numbers, a
preset and the drag over the step on the row under the tiles figure (the readout panel following the grip while the
button is down, the step in the link on release), all on that one load, with no request leaving localhost."""

import re

import pytest

from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset, rerun

pytestmark = pytest.mark.browser

DEEP_LINK = "/FlashAttention?fa_causal=false&fa_step=3"


def _metric(page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']").filter(has_text=label).first
    return box.locator("[data-testid='stMetricValue']").text_content().strip()


def _wait_metric(page, value: str) -> None:
    page.wait_for_function(
        "v => [...document.querySelectorAll('[data-testid=stMetricValue]')].some(e => e.textContent.trim() === v)",
        arg=value,
        timeout=30_000,
    )


def _panel(page) -> str:
    """The tiles figure's readout panel (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def _skipped(T: int, b: int) -> int:
    """Causal tiles of T tokens in b × b blocks whose first key comes after their last query."""
    return sum(c0 > min(r0 + b, T) - 1 for r0 in range(0, T, b) for c0 in range(0, T, b))


def test_deep_link_first_request_then_preset_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "FlashAttention" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    assert _metric(page, "Blocks skipped") == "0 of 16"
    assert _metric(page, "Step") == "3 of 16"
    assert page.locator(".js-plotly-plot .gtitle").first.text_content().startswith("The tiled forward")

    choose_preset(page, "Causal: T = 16, 4 × 4 blocks")
    _wait_metric(page, f"{_skipped(16, 4)} of 16")
    assert _metric(page, "Step") == "6 of 16"
    assert "fa_causal=false" not in page.url and "fa_step" not in page.url, page.url  # the preset is the defaults
    watch.shot("flash-causal-preset")

    # the drag over the step, from the rail's ends: the panel follows the grip with the button down; on release one
    # rerun writes the step into the link and the readouts
    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert "step 6 of 16" in _panel(page)
    with rerun(page):
        low, high = watch.drag_slider((0.0, 1.0), lambda: _panel(page))
    assert "step 1 of 16" in low and "queries 0–3, keys 0–3" in low and "first block" in low, low
    assert "step 16 of 16" in high and "queries 12–15, keys 12–15" in high, high
    _wait_metric(page, "16 of 16")
    assert re.search(r"[?&]fa_step=16(&|$)", page.url), page.url

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
