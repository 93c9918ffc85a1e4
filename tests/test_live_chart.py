"""The frame's live chart (pages/frame/charts.py): one element per chart key across reruns, a new figure in its
data, plotly.js copied from the plotly package, and Streamlit's own chart where the copy cannot be made."""

from __future__ import annotations

import json
from pathlib import Path

import plotly
import pytest

import pages.frame.charts as live
from tests.apptest import charts, figures, no_exception, open_page

SCALING = "pages/1_Scaling_laws.py"


def _texts(fig: dict) -> list[str]:
    return [a.get("text", "") for a in fig["layout"].get("annotations", [])]


def test_a_new_figure_reaches_the_same_element():
    at = open_page(SCALING, {"gpus": "8"})
    first = charts(at)
    assert first and all(c.live for c in first)  # every chart of the page is live
    before = figures(at)[0]
    at.number_input(key="gpus").set_value(64).run()
    no_exception(at)
    after = charts(at)
    # the element keeps its id (the browser updates the mounted chart) while the figure it carries changes
    assert [c.id for c in after] == [c.id for c in first]
    assert json.loads(after[0].spec) != before
    # 8 GPUs -> 64: an eighth of the training time (4.4 days x 24 / 8 = 13.2 h)
    assert "training 4.4 days" in _texts(before)[0] and "training 13.2 h" in _texts(figures(at)[0])[0]


def test_the_alt_text_and_the_export_config_travel_with_the_figure():
    at = open_page(SCALING)
    chart = next(e for e in at.get("bidi_component") if e.proto.component_name == live.COMPONENT)
    (data,) = json.loads(chart.proto.json)
    assert data["config"]["toImageButtonOptions"]["filename"] == "isoflop-u-curve"
    assert data["config"]["toImageButtonOptions"]["format"] == "png"
    assert "Readouts, " in data["alt"]
    assert data["stretch"] is False
    presenter = open_page(SCALING, {"present": "true"})
    stretched = [
        json.loads(c.proto.json)[0]["stretch"]
        for c in presenter.get("bidi_component")
        if c.proto.component_name == live.COMPONENT
    ]
    assert stretched and all(stretched)  # presenter mode: as tall as the screen leaves


def test_plotly_js_is_copied_from_the_plotly_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    source = Path(plotly.__file__).parent / "package_data" / live.PLOTLY_JS
    monkeypatch.setattr(live, "STATIC", tmp_path / "static")
    monkeypatch.setattr(live, "_ready", None)
    assert live.live_chart_ready()
    assert (tmp_path / "static" / live.PLOTLY_JS).read_bytes() == source.read_bytes()
    # a stale copy (another plotly version) is replaced
    (tmp_path / "static" / live.PLOTLY_JS).write_text("old")
    monkeypatch.setattr(live, "_ready", None)
    assert live.live_chart_ready()
    assert (tmp_path / "static" / live.PLOTLY_JS).stat().st_size == source.stat().st_size


def test_unwritable_static_folder_falls_back_to_streamlits_chart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    blocker = tmp_path / "static"
    blocker.write_text("a file where the folder should be")  # mkdir fails even for root
    monkeypatch.setattr(live, "STATIC", blocker)
    monkeypatch.setattr(live, "_ready", None)
    assert not live.live_chart_ready()
    at = open_page(SCALING)
    no_exception(at)
    assert charts(at) and not any(c.live for c in charts(at))
    assert at.get("plotly_chart")  # the same figures, drawn by st.plotly_chart


def test_the_environment_switch_gives_streamlits_chart(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LESSON_CHART", "streamlit")
    at = open_page(SCALING)
    no_exception(at)
    assert charts(at) and not any(c.live for c in charts(at))
