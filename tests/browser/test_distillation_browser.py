"""In a real browser: the distillation page opened by a deep link as a fresh server's first request, its numbers, a
preset and the drag over the distance between the teacher's modes on the row under the KL figure (the readout panel
following the grip while the button is down, d in the link on release), all on that one load, with no request leaving
localhost."""

import re

import pytest

from tests import distillation_reference as ref
from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset, metric_value, rerun, wait_metric

pytestmark = pytest.mark.browser

DEEP_LINK = "/Distillation?dist_d=8"


def _panel(page) -> str:
    """The KL figure's readout panel (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def _kls(d: float) -> str:
    return "{:.3f}, {:.3f}".format(*ref.reverse_kls(d))


def test_deep_link_first_request_then_preset_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "Distillation" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    assert metric_value(page, "Reverse fit: KL(p‖q), KL(q‖p)") == _kls(8.0)
    assert page.locator(".js-plotly-plot .gtitle").first.text_content().startswith("Fitting a student")

    choose_preset(page, "Two clear peaks (d = 5): where does the reverse fit sit?")
    wait_metric(page, _kls(5.0))
    watch.shot("distillation-preset")

    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert "modes d = 5 widths apart" in _panel(page)
    with rerun(page):
        low, high = watch.drag_slider((0.0, 1.0), lambda: _panel(page))
    assert "modes d = 0 widths apart" in low, low
    assert "modes d = 10 widths apart" in high and "reverse fit: mean −5.00" in high, high
    wait_metric(page, _kls(10.0))
    assert re.search(r"[?&]dist_d=10(&|$)", page.url), page.url

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
