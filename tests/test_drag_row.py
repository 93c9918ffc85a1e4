"""The drag row (pages/frame/drag.py): a figure's plotly slider taken out of the figure and sent as the chart's
sweep, the room under the plot kept, the step a drag ends on written into the page's field, and the views' declared
drags matching the steps of their figures' sliders."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest
import streamlit as st

from pages.frame.binding import drag_writer
from pages.frame.drag import PLOTLY_MARGIN_B, PLOTLY_SLIDER_PAD_TOP, SLIDER_BODY_PX, slider_label, split_slider
from tests.apptest import charts, figures, open_page
from views.state import Field


def _figure(pad: dict | None = None, margin: dict | None = None, height: int | None = 500) -> dict:
    steps = [
        {"method": "update", "label": f"{v:g}", "args": [{"y": [[v]]}, {"annotations[0].text": f"v = {v}"}, [1]]}
        for v in (0.5, 1.0, 2.0)
    ]
    slider: dict = {"active": 1, "steps": steps, "currentvalue": {"prefix": "v = "}}
    if pad is not None:
        slider["pad"] = pad
    layout: dict = {"sliders": [slider], "annotations": [{"text": "v = 1.0"}]}
    if margin is not None:
        layout["margin"] = margin
    if height is not None:
        layout["height"] = height
    return {"data": [{"y": [1]}, {"y": [1.0]}], "layout": layout}


def test_the_slider_leaves_the_figure_as_a_sweep_of_its_steps():
    fig = _figure(pad={"t": 60, "b": 10}, margin={"l": 60, "b": 40})
    before = copy.deepcopy(fig)
    out, sweep = split_slider(fig, "Value v")
    assert fig == before  # the cached figure is not changed
    assert "sliders" not in out["layout"] and out["data"] == fig["data"]
    assert sweep == {
        "steps": [{"method": "update", "args": s["args"]} for s in fig["layout"]["sliders"][0]["steps"]],
        "labels": ["0.5", "1", "2"],
        "active": 1,
        "prefix": "v = ",
        "label": "Value v",
    }
    # the plot keeps its height: plotly's slider took max(40, 60 + 10 + body) under the plot; the bottom margin
    # now keeps the slider's top pad (and 8 px), and the figure is that much shorter
    below = 60 + 10 + SLIDER_BODY_PX
    assert out["layout"]["margin"] == {"l": 60, "b": 68}
    assert out["layout"]["height"] == 500 - below + 68
    assert out["layout"]["annotations"] == fig["layout"]["annotations"]


def test_plotlys_defaults_are_used_where_the_figure_names_none():
    out, sweep = split_slider(_figure(height=450), "v")
    below = max(PLOTLY_MARGIN_B, PLOTLY_SLIDER_PAD_TOP + SLIDER_BODY_PX)  # pad t 20, b 0 by default
    assert out["layout"]["margin"] == {"b": max(PLOTLY_MARGIN_B, PLOTLY_SLIDER_PAD_TOP + 8)}
    assert out["layout"]["height"] == 450 - below + PLOTLY_MARGIN_B
    assert sweep is not None and sweep["prefix"] == "v = "
    # no height: plotly's default (or the container's, in presenter mode) stays in charge
    assert "height" not in split_slider(_figure(height=None), "v")[0]["layout"]


@pytest.mark.parametrize("active", [7, -1, "1", None])
def test_an_active_step_out_of_range_starts_the_row_at_the_first(active):
    fig = _figure()
    fig["layout"]["sliders"][0]["active"] = active
    assert split_slider(fig, "v")[1]["active"] == 0


def test_figures_without_a_slider_or_steps_come_back_as_they_are():
    plain = {"data": [], "layout": {"height": 300}}
    assert split_slider(plain, "v") == (plain, None)
    empty = _figure()
    empty["layout"]["sliders"][0]["steps"] = []
    assert split_slider(empty, "v") == (empty, None)


@pytest.mark.parametrize(
    ("prefix", "label"),
    [
        ("plan: N = ", "plan: N"),
        ("T = ", "T"),
        ("BPE merges learned: ", "BPE merges learned"),
        ("", "Step"),
        (" = ", "Step"),
    ],
)
def test_a_free_rows_name_is_its_sliders_prefix_without_the_equals_sign(prefix, label):
    assert slider_label(prefix) == label


def _writer(monkeypatch, values, event):
    state: dict = {"chart": SimpleNamespace(value=event)}
    monkeypatch.setattr(st, "session_state", state)
    f = Field("v", "Value v", "float", 1.0, lo=0.0, hi=10.0)
    drag_writer(f, "chart", values)()
    return state.get("v")


def test_the_step_a_drag_ends_on_is_written_into_the_field(monkeypatch):
    assert _writer(monkeypatch, (0.5, 1.0, 2.0), json.dumps({"index": 2, "at": 1})) == 2.0
    assert _writer(monkeypatch, None, json.dumps({"value": "3.5"})) == 3.5  # plotly's own slider sends the value


@pytest.mark.parametrize(
    "event", ["not json", json.dumps({"index": 3}), json.dumps({"index": -1}), json.dumps({"index": "x"}), "{}", None]
)
def test_a_message_the_page_cannot_read_changes_nothing(monkeypatch, event):
    assert _writer(monkeypatch, (0.5, 1.0, 2.0), event) is None


def test_a_value_the_field_refuses_changes_nothing(monkeypatch):
    assert _writer(monkeypatch, (0.5, 99.0), json.dumps({"index": 1})) is None  # above the field's hi


# page -> (the view, the figure's name in it, its field, a link that shows it)
DRAGS = {
    "pages/1_Scaling_laws.py": ("scaling", "main", "N", {"N": "3e9"}),
    "pages/2_KL_leash.py": ("kl_leash", "main", "beta", {"beta": "2"}),
    "pages/3_LoRA.py": ("lora", "rank", "rank", {"rank": "12"}),  # the part "rank" draws the figure "heatmaps"
    "pages/9_PPO.py": ("ppo", "main", "rho", {"rho": "1.3"}),
    "pages/11_Sampling.py": ("sampling", "main", "T", {"T": "0.7"}),
}


@pytest.mark.parametrize("page", list(DRAGS))
def test_each_declared_drag_reaches_the_browser_as_a_row_at_the_pages_value(page):
    """The page sends its figure without plotly's slider and with a sweep whose steps are the view's declared values:
    the row starts on the step of the page's value, and each step's label names that step's value."""
    import importlib

    from views import Options

    name, part, field, query = DRAGS[page]
    view_module = importlib.import_module(f"views.{name}")
    at = open_page(page, query)
    value = at.session_state[field]
    state, problems = view_module.SPEC.parse(query)
    assert problems == []
    (drag,) = view_module.figures(state, Options(parts=frozenset({part}))).drags.values()
    assert drag.field == field
    live = [(c, f) for c, f in zip(charts(at), figures(at), strict=True) if c.sweep is not None]
    assert len(live) == 1
    chart, fig = live[0]
    assert chart.live and "sliders" not in fig["layout"]
    sweep = fig["sweep"]
    assert len(sweep["labels"]) == len(sweep["steps"]) == len(drag.values) >= 15
    assert float(drag.values[sweep["active"]]) == pytest.approx(float(value), rel=1e-9)
    assert sweep["label"] == view_module.SPEC[field].label and sweep["prefix"]


def test_first_reads_of_a_shared_figures_slider_from_many_threads_at_once() -> None:
    """A slide that every student's session draws at once: each thread's first read of the shared figure's slider gets
    its prefix. Plotly builds the slider objects on the first read, and a slider finds itself in that list by identity:
    unguarded, two first reads at once failed (ValueError) in 3,172 of 12,000 reads (measured 2026-12-06)."""
    import sys
    import threading

    import plotly.graph_objects as go

    from pages.frame.drag import first_slider_prefix
    from viz.style import figure

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    got: list[object] = []
    try:
        for _ in range(300):
            layout = _figure()["layout"]
            fig = figure([{"type": "scatter", "y": [1.0]}], layout)  # as the views build theirs
            gate = threading.Barrier(4)

            def read(fig: go.Figure = fig, gate: threading.Barrier = gate) -> None:
                gate.wait()
                try:
                    got.append(first_slider_prefix(fig))
                except Exception as exc:  # what the test is about: none may fail
                    got.append(exc)

            threads = [threading.Thread(target=read) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        sys.setswitchinterval(old)
    assert got == ["v = "] * 1200
    assert first_slider_prefix(go.Figure()) is None
    assert first_slider_prefix(go.Figure(layout={"sliders": [{"steps": [{"label": "a"}]}]})) == ""
