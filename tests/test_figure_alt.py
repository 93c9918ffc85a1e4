"""Each figure's text alternative (its accessible name in the browser) reads out the page's live numbers: the
frame gives every figure of the page's view the view's first readouts as "label: value"."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
from apptest import charts, opened

from pages.frame import ALT_READOUTS, figure_alt
from views import Readout


def test_figure_alt_quotes_the_first_readouts_and_the_axes():
    fig = go.Figure(layout={"title": {"text": "<b>Loss</b> at one budget<br>C = 10²¹"}, "xaxis_title": "N"})
    readouts = [Readout(f"r{i}", f"{i}.5", "help is not read") for i in range(ALT_READOUTS + 2)]
    alt = figure_alt(fig, draggable=True, readouts=readouts)
    assert alt.startswith("Loss at one budget. C = 10²¹. Axes, x: N. Readouts, r0: 0.5; r1: 1.5;")
    assert f"r{ALT_READOUTS - 1}: {ALT_READOUTS - 1}.5" in alt and f"r{ALT_READOUTS}:" not in alt
    assert "More readouts" in alt and "slider" in alt and "help" not in alt
    assert "<" not in alt
    assert "in the readouts" in figure_alt(fig)  # no readouts known: it says where the numbers are


# Scaling draws its main figure through page.figure; LoRA draws its charts (in tabs) before the readouts row.
@pytest.mark.parametrize("page", ["pages/1_Scaling_laws.py", "pages/3_LoRA.py", "pages/8_Serving.py"])
def test_main_chart_alt_holds_the_readouts_the_page_shows(page):
    at = opened(page)
    shown = [(m.label, m.value) for m in at.main.metric]  # the readouts row, as the page draws it
    assert len(shown) >= 2
    alt = charts(at)[0].alt
    for label, value in shown[: min(ALT_READOUTS, len(shown))]:
        assert f"{label}: {value}" in alt, (label, value, alt)
    assert any(ch.isdigit() for ch in alt)
