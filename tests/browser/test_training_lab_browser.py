"""In a real browser: the training lab opened by a deep link as a fresh server's first request, its numbers from the
shipped sweep, a preset (its shipped curve beside its twin's) and the drag over the learning rate on the row under
the figure (the readout panel following the grip while the button is down, the rate in the link on release), all on
that one load, with no request leaving localhost. Nothing here presses Run."""

import math
import re

import pytest

from core import training_lab as lab
from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset, metric_value, rerun, wait_metric
from views import training_lab as view_of

pytestmark = pytest.mark.browser

DEEP_LINK = "/Training_lab?lab_lr=1e-3"
CURVES = view_of.shipped()


def _bits(s: lab.Settings) -> str:
    return f"{CURVES[s.key()].val_loss[-1] / math.log(2):.2f} bits/byte"


def _panel(page) -> str:
    """The figure's readout panel (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def test_deep_link_first_request_then_preset_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "Training lab" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)
    assert metric_value(page, "Held-out loss, last evaluation") == _bits(lab.Settings(lr=1e-3))

    choose_preset(page, view_of.NO_CLIP)
    wait_metric(page, _bits(lab.PRESETS["no_clip"]))
    assert metric_value(page, "Its twin's held-out loss") == _bits(lab.PRESETS["good"])
    assert "lab_clip=off" in page.url, page.url
    watch.shot("training-lab-preset")

    choose_preset(page, view_of.GOOD)
    wait_metric(page, _bits(lab.DEFAULT))
    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert "peak LR 3e-3" in _panel(page)
    with rerun(page):
        low, high = watch.drag_slider((0.0, 1.0), lambda: _panel(page))
    assert "peak LR 1e-4" in low and _bits(lab.Settings(lr=1e-4)) in low, low
    assert "peak LR 3e-1" in high and _bits(lab.Settings(lr=3e-1)) in high, high
    wait_metric(page, _bits(lab.Settings(lr=3e-1)))
    assert re.search(r"[?&]lab_lr=3e-1(&|$)", page.url), page.url

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
