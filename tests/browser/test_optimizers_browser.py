"""In a real browser: the optimizers page opened by a deep link as a fresh server's first request, its numbers, a
preset and the drag over the learning rate on the row under the paths figure (the readout panel following the grip
while the button is down, the learning rate in the link on release), all on that one load, with no request leaving
localhost."""

import re

import pytest

from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset, metric_value, rerun, wait_metric

pytestmark = pytest.mark.browser

DEEP_LINK = "/Optimizers?opt_kappa=25"


def _panel(page) -> str:
    """The paths figure's readout panel (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def test_deep_link_first_request_then_preset_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "Optimizers and normalisation" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    assert metric_value(page, "SGD's stable limit η_max") == f"{2 / 25:.3g}"  # the bowl's Hessian diag(25, 1)
    assert page.locator(".js-plotly-plot .gtitle").first.text_content().startswith("Five optimizers")

    choose_preset(page, "A1.5: SGD against Adam on a bowl of κ = 50")
    wait_metric(page, f"{2 / 50:.3g}")
    assert "opt_kappa=50" in page.url, page.url
    watch.shot("optimizers-preset")

    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert "η = 0.1" in _panel(page) and "SGD: diverged" in _panel(page)
    with rerun(page):
        low, high = watch.drag_slider((0.0, 1.0), lambda: _panel(page))
    assert "η = 0.001" in low and "η = 1" in high, (low, high)
    assert "SGD: diverged" not in low, low  # 0.001 is below SGD's limit 2/50
    page.wait_for_function("() => /[?&]opt_lr=1(&|$)/.test(location.search)", timeout=30_000)
    assert re.search(r"[?&]opt_lr=1(&|$)", page.url), page.url

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
