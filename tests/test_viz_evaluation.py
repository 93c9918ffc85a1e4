"""viz.evaluation: the figures carry the right data (curves, markers, readouts, intervals) and stay small."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from core import evaluation
from viz import format as fmt
from viz.evaluation import (
    MAX_POINTS,
    comparison_figure,
    comparison_figure_of,
    curve_figures,
    k_sweep_of,
    pass_at_k_figure,
    pass_hat_k_figure,
    simulation_figure,
    simulation_figure_of,
)
from viz.style import PALETTE


def _curve_figure(n: int, c: int, k: int, ks=None):
    ks = evaluation.display_k_grid(n, include=[k]) if ks is None else ks
    return pass_at_k_figure(
        ks,
        evaluation.pass_at_k(n, c, ks),
        evaluation.pass_at_k_plugin(n, c, ks),
        n=n,
        c=c,
        k=k,
        unbiased_at_k=evaluation.pass_at_k(n, c, k),
        plugin_at_k=evaluation.pass_at_k_plugin(n, c, k),
    )


def _by_name(fig, start: str):
    return next(t for t in fig.data if (t.name or "").startswith(start))


def test_worked_example_e_curves_and_marker():
    fig = _curve_figure(10, 3, 5)
    unbiased, plugin = _by_name(fig, "unbiased"), _by_name(fig, "plug-in")
    np.testing.assert_array_equal(unbiased.x, np.arange(1, 11))
    np.testing.assert_allclose(unbiased.y, evaluation.pass_at_k(10, 3, np.arange(1, 11)))
    np.testing.assert_allclose(plugin.y, 1 - 0.7 ** np.arange(1, 11))
    assert unbiased.line.color == PALETTE["reference"] and plugin.line.color == PALETTE["optimised"]
    assert unbiased.y[0] == pytest.approx(plugin.y[0])  # they agree at k = 1
    assert unbiased.y[-1] == 1.0  # and the unbiased one is 1 at k = n
    marker = next(t for t in fig.data if t.mode == "markers")
    assert list(marker.x) == [5, 5]
    np.testing.assert_allclose(marker.y, [1 - 21 / 252, 1 - 0.7**5])
    text = fig.layout.annotations[0].text
    assert "unbiased 0.917" in text and "plug-in 0.832" in text and "gap 0.085" in text
    assert fig.layout.xaxis.type != "log" and fig.layout.uirevision == "pass_at_k"
    assert "all 10 values" in fig.layout.xaxis.title.text


def test_big_n_is_downsampled_log_scaled_and_small():
    n, c, k = 100_000, 3, 5000
    fig = _curve_figure(n, c, k)
    unbiased = _by_name(fig, "unbiased")
    assert len(unbiased.x) <= MAX_POINTS and k in unbiased.x and unbiased.x[0] == 1 and unbiased.x[-1] == n
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.annotations[0].x == pytest.approx(np.log10(k))  # annotations on log axes use log10
    assert "log-spaced" in fig.layout.xaxis.title.text and "100,000" in fig.layout.xaxis.title.text
    assert len(fig.to_json()) <= 300_000


def test_full_arrays_are_thinned_by_the_builder():
    n, c, k = 100_000, 40, 777
    ks = np.arange(1, n + 1)
    fig = _curve_figure(n, c, k, ks=ks)
    unbiased = _by_name(fig, "unbiased")
    assert len(unbiased.x) <= MAX_POINTS + 3 and k in unbiased.x
    i = int(np.flatnonzero(unbiased.x == k)[0])
    assert unbiased.y[i] == pytest.approx(evaluation.pass_at_k(n, c, k))  # thinning keeps the exact values
    assert len(fig.to_json()) <= 300_000
    assert fig.layout.meta["shown"] == len(unbiased.x)


def test_mismatched_arrays_are_refused():
    with pytest.raises(ValueError, match="same length"):
        pass_at_k_figure([1, 2, 3], [0.1, 0.2], [0.1, 0.2, 0.3], n=3, c=1, k=1, unbiased_at_k=0.1, plugin_at_k=0.1)


def test_pass_hat_figure():
    n, c, k = 200, 20, 10
    ks = evaluation.display_k_grid(n)
    fig = pass_hat_k_figure(
        ks,
        evaluation.pass_at_k(n, c, ks),
        evaluation.pass_hat_k(n, c, ks),
        n=n,
        c=c,
        k=k,
        pass_at_at_k=evaluation.pass_at_k(n, c, k),
        pass_hat_at_k=evaluation.pass_hat_k(n, c, k),
        pass_at_plugin=evaluation.pass_at_k_plugin(n, c, ks),
        pass_hat_plugin=evaluation.pass_hat_k_plugin(n, c, ks),
    )
    at, hat = _by_name(fig, "pass@k: at least"), _by_name(fig, "pass^k: all")
    np.testing.assert_allclose(at.y, evaluation.pass_at_k(n, c, ks))
    np.testing.assert_allclose(hat.y, evaluation.pass_hat_k(n, c, ks))
    assert hat.fill == "tonexty" and fig.data.index(hat) == fig.data.index(at) + 1  # shaded band between them
    hat_plugin = _by_name(fig, "pass^k plug-in")
    assert hat_plugin.line.dash == "dot" and np.all(hat_plugin.y >= hat.y - 1e-12)  # plug-in overstates pass^k
    marker = next(t for t in fig.data if t.mode == "markers")
    np.testing.assert_allclose(marker.y, [evaluation.pass_at_k(n, c, k), evaluation.pass_hat_k(n, c, k)])
    assert fig.layout.legend.traceorder == "normal"
    assert "pass@k 0.660" in fig.layout.annotations[0].text


def test_pass_hat_figure_without_plugins_at_big_n():
    n, c, k = 100_000, 99_000, 50
    ks = evaluation.display_k_grid(n, include=[k])
    fig = pass_hat_k_figure(
        ks,
        evaluation.pass_at_k(n, c, ks),
        evaluation.pass_hat_k(n, c, ks),
        n=n,
        c=c,
        k=k,
        pass_at_at_k=evaluation.pass_at_k(n, c, k),
        pass_hat_at_k=evaluation.pass_hat_k(n, c, k),
    )
    assert len(fig.data) == 4  # two curves, the k line, the markers
    assert len(fig.to_json()) <= 300_000


def test_simulation_figure():
    sim = evaluation.simulate_estimators(0.3, 10, 5, 50_000, seed=2)
    fig = simulation_figure_of(sim)  # the page's path into simulation_figure
    bars = [t for t in fig.data if t.type == "bar"]
    assert [b.name for b in bars] == ["unbiased", "plug-in"]
    for bar, counts in zip(bars, (sim.counts_unbiased, sim.counts_plugin), strict=True):
        assert sum(bar.y) == pytest.approx(1.0)
        np.testing.assert_allclose(bar.y, counts / 50_000)
        np.testing.assert_allclose(bar.x, (sim.edges[:-1] + sim.edges[1:]) / 2)
    truth_lines = [t for t in fig.data if t.name == "truth"]
    assert len(truth_lines) == 2 and all(list(t.x) == [sim.truth, sim.truth] for t in truth_lines)
    mean_plugin = _by_name(fig, "plug-in mean")
    assert mean_plugin.x[0] == sim.mean_plugin < sim.truth and mean_plugin.line.dash == "dash"
    titles = [a.text for a in fig.layout.annotations]
    assert any(f"bias {sim.mean_plugin - sim.truth:+.4f}" in t for t in titles)
    assert "0.8319" in fig.layout.xaxis2.title.text  # the truth 1 - 0.7^5, in the note under the x axis


def test_simulation_figure_refuses_bad_shapes():
    with pytest.raises(ValueError):
        simulation_figure([0, 1, 2], [1, 2, 3], [1, 2], truth=0.5, mean_unbiased=0.5, mean_plugin=0.4, p=0.5, n=2, k=1)


def test_comparison_figure_example_d():
    independent = evaluation.compare_models(0.710, 0.725, 1000)
    paired = evaluation.compare_models(0.710, 0.725, 1000, only_a=15, only_b=30)
    fig = comparison_figure(0.710, 0.725, independent.se_a, independent.se_b, [independent, paired])
    acc = [t for t in fig.data if t.xaxis == "x"]
    assert [t.x[0] for t in acc] == pytest.approx([71.0, 72.5])
    assert acc[0].error_x.array[0] == pytest.approx(100 * 1.96 * independent.se_a, rel=1e-3)
    diffs = [t for t in fig.data if t.xaxis == "x2"]
    assert [t.y[0] for t in diffs] == ["independent", "paired"]
    assert diffs[0].x[0] == pytest.approx(1.5)
    assert diffs[0].error_x.array[0] == pytest.approx(100 * independent.half_width)  # 3.9 points
    assert round(diffs[0].error_x.array[0], 1) == 3.9
    assert diffs[0].marker.color == PALETTE["neutral"]  # not significant
    assert diffs[1].marker.color == PALETTE["optimum"]  # significant
    assert "not significant" in diffs[0].name and "[-2.4, +5.4]" in diffs[0].name
    zero = [s for s in fig.layout.shapes if s.x0 == 0 and s.x1 == 0]
    assert len(zero) == 1 and zero[0].xref == "x2"
    assert fig.layout.uirevision == "model_comparison"
    with pytest.raises(ValueError):
        comparison_figure(0.7, 0.7, 0.01, 0.01, [])


def test_mean_pm_keeps_a_tiny_standard_error_visible():
    assert fmt.mean_pm(0.8315, 0.00071) == "0.8315 ± 0.0007"
    assert fmt.mean_pm(0.6323, 1.46e-5) == "0.6323 ± 1.5e-05"
    assert fmt.mean_pm(0.5, 0.0) == "0.5000 ± 0.0000"


def test_shortcuts_from_core_results():
    r = evaluation.pass_at_k_curves(10, 3, 5)
    at_k, hat_k = curve_figures(r)
    marker = next(t for t in at_k.data if t.mode == "markers")
    assert np.allclose(marker.y, [r.unbiased_at_k, r.plugin_at_k])
    assert np.allclose(hat_k.data[1].y, r.hat)
    sim = evaluation.simulate_estimators(0.3, 10, 5, 2000)
    fig = simulation_figure_of(sim)
    assert np.isclose(np.sum(fig.data[0].y), 1.0)
    comps = [
        evaluation.compare_models(0.71, 0.725, 1000),
        evaluation.compare_models(0.71, 0.725, 1000, only_a=40, only_b=55),
    ]
    fig = comparison_figure_of(comps)
    diffs = [t for t in fig.data if t.marker.symbol == "diamond"]
    assert [round(float(t.x[0]), 1) for t in diffs] == [1.5, 1.5]
    assert round(float(diffs[0].error_x.array[0]), 1) == 3.9


def test_k_labels_stay_inside_the_plot():
    low = evaluation.pass_at_k_curves(100_000, 3, 20)  # both values near 0: the label goes above the point
    at_k, hat_k = curve_figures(low)
    assert at_k.layout.annotations[0].ay < 0 and hat_k.layout.annotations[0].yanchor == "bottom"
    high = evaluation.pass_at_k_curves(10, 9, 2)  # both near 1: below
    at_k, hat_k = curve_figures(high)
    assert at_k.layout.annotations[0].ay > 0 and hat_k.layout.annotations[0].yanchor == "top"


def test_the_k_slider_moves_the_marks_at_k_and_only_those():
    r = evaluation.pass_at_k_curves(10, 3, 5)
    at_k, hat = curve_figures(r, slider_ks=range(1, 11))
    go.Figure(at_k.to_dict())  # the slider passes plotly's validation
    plain = curve_figures(r)[0]
    assert not plain.layout.sliders and not hat.layout.sliders  # pass^k keeps no slider
    assert at_k.layout.height == plain.layout.height + 100  # what the slider takes under the plot
    slider = at_k.layout.sliders[0]
    assert slider.active == 4 and [s.label for s in slider.steps] == [str(k) for k in range(1, 11)]
    traces, layout, indices = slider.steps[0].args
    assert list(indices) == [2, 3]  # the markers at k and the dotted line; the curves stay
    assert traces["x"] == [[1, 1], [1, 1]] and traces["y"] == [[0.3, 0.3], [0, 1]]
    # k = 1 sits in the left half: the label goes right of its arrow, and below it (pass@1 = 0.3 < 0.5)
    assert layout["annotations[0].xanchor"] == "left" and layout["annotations[0].yanchor"] == "bottom"
    assert layout["annotations[0].text"] == "<b>k = 1</b><br>unbiased 0.300<br>plug-in 0.300<br>gap 0.000"
    # the figure itself shows the active step, as plain builds it
    assert json.loads(at_k.to_json())["data"] == json.loads(plain.to_json())["data"]
    assert at_k.layout.annotations == plain.layout.annotations
    presenter = curve_figures(r, slider_ks=range(1, 11), presenter=True)[0].layout.sliders[0]
    assert presenter.pad.t > slider.pad.t


def test_the_k_slider_on_a_log_axis_places_the_label_at_log10_k():
    r = evaluation.pass_at_k_curves(200, 20, 10)
    fig = curve_figures(r, slider_ks=[1, 10, 100, 200])[0]
    assert fig.layout.xaxis.type == "log"
    last = fig.layout.sliders[0].steps[-1].args[1]
    assert last["annotations[0].x"] == pytest.approx(np.log10(200)) and last["annotations[0].xanchor"] == "right"
    with pytest.raises(ValueError, match="grid"):
        k_sweep_of(evaluation.pass_at_k_curves(100_000, 30, 10), [1, 10, 99_999])  # 99,999 is off the display grid
