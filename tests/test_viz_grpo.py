"""viz.grpo: the data inside the figures (bar heights, colours, click targets, curves, markers), not whole dicts."""

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core.grpo import (
    batch_normalised_advantages,
    expected_abs_advantage,
    group_signal_probability,
    group_stats,
    grpo_advantages,
)
from viz import format as fmt
from viz.grpo import (
    DOWN,
    NO_SIGNAL_TEXT,
    PRESENTER_HEADROOM,
    UP,
    ZERO,
    EpsSweep,
    grpo_advantages_figure,
    grpo_batch_contrast_figure,
    grpo_difficulty_figure,
    ppo_vs_grpo_figure,
    ppo_vs_grpo_table,
)

EXAMPLE_C = np.array([1, 0, 0, 1, 1, 0, 0, 0], dtype=float)


def _adv_fig(r, std="population", eps=0.0):
    s = group_stats(r)
    A = grpo_advantages(r, std, eps)
    denom = None if std == "none" else (s.std_population if std == "population" else s.std_sample) + eps
    return grpo_advantages_figure(r, A, mean=s.mean, denominator=denom), A


def test_advantage_bars_worked_example_c():
    fig, A = _adv_fig(EXAMPLE_C)
    slot, bars = fig.data[0], fig.data[1]
    np.testing.assert_allclose(bars.y, A)
    assert np.round(bars.y, 2).tolist() == [1.29, -0.77, -0.77, 1.29, 1.29, -0.77, -0.77, -0.77]
    assert list(bars.marker.color) == [UP if a > 0 else DOWN for a in A]  # blue up, orange down
    assert list(bars.x) == list(range(1, 9))
    assert list(bars.text) == ["+1.29", "-0.77", "-0.77", "+1.29", "+1.29", "-0.77", "-0.77", "-0.77"]
    # click targets: customdata[:, 0] is the answer index on both traces; the slot spans the whole y range
    for tr in (slot, bars):
        np.testing.assert_array_equal(np.asarray(tr.customdata)[:, 0], np.arange(8))
        np.testing.assert_array_equal(np.asarray(tr.customdata)[:, 1], EXAMPLE_C)
    lo, hi = fig.layout.yaxis.range
    assert slot.base == pytest.approx(lo)
    np.testing.assert_allclose(slot.base + np.asarray(slot.y), hi)
    assert hi == pytest.approx(-lo) and hi > A.max()
    assert fig.layout.clickmode == "event+select" and fig.layout.dragmode is False
    assert fig.layout.uirevision == "grpo-advantages"
    assert list(fig.layout.xaxis.ticktext)[:2] == ["1<br>r=1", "2<br>r=0"]
    assert "0.375" in bars.hovertemplate and "0.4841" in bars.hovertemplate  # formula with the values put in
    assert not any(a.text == NO_SIGNAL_TEXT for a in fig.layout.annotations)


def test_all_equal_group_says_no_signal_and_stays_clickable():
    fig, _ = _adv_fig(np.ones(4))
    bars = fig.data[1]
    assert np.all(np.asarray(bars.y) == 0) and list(bars.marker.color) == [ZERO] * 4
    assert any(a.text == NO_SIGNAL_TEXT for a in fig.layout.annotations)
    slot = fig.data[0]
    assert np.all(np.asarray(slot.y) > 0)  # the faint columns still give something to click
    assert fig.layout.yaxis.range[1] == pytest.approx(1.0)


def test_modes_change_only_the_scale_in_the_figure():
    pop, _ = _adv_fig(EXAMPLE_C)
    sam, _ = _adv_fig(EXAMPLE_C, "sample")
    none, _ = _adv_fig(EXAMPLE_C, "none")
    np.testing.assert_allclose(sam.data[1].y, np.asarray(pop.data[1].y) * np.sqrt(7 / 8))
    np.testing.assert_allclose(none.data[1].y, EXAMPLE_C - 0.375)
    assert "reward units" in none.layout.yaxis.title.text and "std" in pop.layout.yaxis.title.text
    assert list(none.data[1].marker.color) == list(pop.data[1].marker.color)


def test_fixed_y_axis():
    A = grpo_advantages(EXAMPLE_C, "none")
    fig = grpo_advantages_figure(EXAMPLE_C, A, mean=0.375, y_max=1.5)
    assert fig.layout.yaxis.range == (-1.5, 1.5) and fig.data[0].base == -1.5


def test_presenter_mode_gives_the_bar_labels_headroom_on_the_same_shared_axis():
    """At presenter type the tallest bar's label (drawn above it) reached out of the 1.18 x |A| headroom into the
    legend over the plot at 1280 x 720; presenter mode's axis is PRESENTER_HEADROOM times the page's, for every mode
    and step alike (still one axis: the bars move, the axis does not)."""
    A = grpo_advantages(EXAMPLE_C)
    for y_max in (1.5, None):
        plain = grpo_advantages_figure(EXAMPLE_C, A, mean=0.375, y_max=y_max)
        big = grpo_advantages_figure(EXAMPLE_C, A, mean=0.375, y_max=y_max, presenter=True)
        lo, hi = big.layout.yaxis.range
        assert hi == pytest.approx(PRESENTER_HEADROOM * plain.layout.yaxis.range[1]) and lo == -hi
        assert big.data[0].base == lo and max(big.data[0].y) == pytest.approx(2 * hi)  # the click slots span it
    # the tallest bar (+1.29) leaves 0.32 of the half-axis above it: 37 px of a 114 px half at 1280 x 720, where
    # its label takes 27 px
    assert 1 - A.max() / (PRESENTER_HEADROOM * 1.18 * A.max()) > 0.3
    # no signal: nothing to label, the axis stays +-1
    flat = grpo_advantages_figure(np.ones(8), np.zeros(8), mean=1.0, presenter=True)
    assert flat.layout.yaxis.range == (-1.0, 1.0)


def test_large_group_drops_per_bar_labels_and_stays_small():
    r = np.r_[1.0, np.zeros(63)]
    fig, _ = _adv_fig(r)
    assert len(fig.data[1].y) == 64 and fig.data[1].text is None
    assert fig.data[1].y[0] == pytest.approx(np.sqrt(63))
    assert len(fig.to_json()) < 40_000


def test_advantages_figure_rejects_mismatched_input():
    with pytest.raises(ValueError, match="same length"):
        grpo_advantages_figure([1, 0], [1.0], mean=0.5)


def test_difficulty_figure_curves_and_marker():
    p = np.linspace(0, 1, 201)
    sig = group_signal_probability(p, 8)
    size = expected_abs_advantage(p, 8)
    fig = grpo_difficulty_figure(
        p, sig, size, G=8, current_p=0.375, current_label="this group: 3/8 correct",
        other_modes={"no std": expected_abs_advantage(p, 8, "none")},
    )  # fmt: skip
    names = [t.name for t in fig.data]
    assert names[:3] == [
        "P(group has signal), G = 8",
        "expected mean |A| (population std)",
        "expected mean |A| (no std)",
    ]
    np.testing.assert_allclose(fig.data[0].y, sig)
    np.testing.assert_allclose(fig.data[1].y, size)
    markers = [t for t in fig.data if t.name and t.name.startswith("this group")]
    assert len(markers) == 2
    assert markers[0].x[0] == 0.375
    assert markers[0].y[0] == pytest.approx(group_signal_probability(0.375, 8), abs=1e-3)
    assert markers[1].y[0] == pytest.approx(expected_abs_advantage(0.375, 8), abs=1e-3)
    assert any(a.text == "this group: 3/8 correct" for a in fig.layout.annotations)
    assert fig.layout.xaxis.range == (0, 1)
    assert len(fig.to_json()) < 60_000


def test_difficulty_figure_without_marker():
    p = np.linspace(0, 1, 11)
    fig = grpo_difficulty_figure(p, group_signal_probability(p, 4), expected_abs_advantage(p, 4), G=4)
    assert len(fig.data) == 2 and not fig.layout.annotations
    with pytest.raises(ValueError, match="same length"):
        grpo_difficulty_figure(p, p[:-1], p, G=4)


def test_ppo_vs_grpo_table():
    df = ppo_vs_grpo_table()
    assert isinstance(df, pd.DataFrame) and list(df.columns) == ["PPO", "GRPO"]
    assert df.loc["Models in memory", "PPO"].startswith("4")
    assert df.loc["Models in memory", "GRPO"].startswith("2")
    assert "value model" in df.loc["Baseline for the advantage", "PPO"]
    assert "mean reward" in df.loc["Baseline for the advantage", "GRPO"]
    assert df.loc["Answers sampled per prompt", "PPO"] == "1"


@pytest.mark.parametrize("G", [2, 8, 64])
def test_ppo_vs_grpo_figure(G):
    fig = ppo_vs_grpo_figure(G)
    by_name = {t.name: t for t in fig.data}
    ppo, grpo = by_name["PPO models"], by_name["GRPO models"]
    assert len(ppo.x) == 4 and len(grpo.x) == 2
    assert [c[1] for c in ppo.customdata] == ["trained", "trained", "frozen", "frozen"]
    assert [c[1] for c in grpo.customdata] == ["trained", "frozen"]
    assert list(ppo.marker.color) == [DOWN, DOWN, "#FFFFFF", "#FFFFFF"]  # frozen: hollow (the background)
    assert len(by_name["PPO answers"].x) == 1 and len(by_name["GRPO answers"].x) == G
    with pytest.raises(ValueError):
        ppo_vs_grpo_figure(0)


def test_batch_contrast_figure():
    R = np.stack([np.ones(8), EXAMPLE_C, np.zeros(8)])
    Ag, Ab = grpo_advantages(R), batch_normalised_advantages(R)
    fig = grpo_batch_contrast_figure(R, Ag, Ab)
    within, across = fig.data[0], fig.data[1]
    np.testing.assert_allclose(within.y, Ag.ravel())
    np.testing.assert_allclose(across.y, Ab.ravel())
    assert list(across.marker.color[:8]) == [UP] * 8  # the easy prompt is pushed up by the mistake
    assert list(within.marker.color[:8]) == [ZERO] * 8
    # a gap of one bar between groups
    assert list(within.x[:9]) == [0, 1, 2, 3, 4, 5, 6, 7, 9]
    assert list(fig.layout.xaxis.ticktext) == ["prompt 1<br>8/8 correct", "prompt 2<br>3/8 correct",
                                               "prompt 3<br>0/8 correct"]  # fmt: skip
    assert sum("no signal" in a.text for a in fig.layout.annotations) == 2
    np.testing.assert_array_equal(np.asarray(within.customdata)[8], [2, 1, 1.0])
    with pytest.raises(ValueError, match="same shape"):
        grpo_batch_contrast_figure(R, Ag[:2], Ab)


def test_figures_are_json_serialisable():
    fig, _ = _adv_fig(EXAMPLE_C)
    spec = json.loads(fig.to_json())
    assert spec["layout"]["clickmode"] == "event+select"


def test_bar_labels_keep_tiny_advantages_visible():
    assert [fmt.signed(a) for a in (1.2910, -0.7746, 0.0, 8.75e-4, -1e-6)] == [
        "+1.29", "-0.77", "0", "+8.8e-04", "-1.0e-06",
    ]  # fmt: skip
    r = np.array([0.5] * 7 + [0.501])
    fig, A = _adv_fig(r, "none")
    assert list(fig.data[1].text) == [fmt.signed(a) for a in A] and fig.data[1].text[-1] == "+8.8e-04"


def test_difficulty_marker_at_the_edge_is_not_clipped():
    p = np.linspace(0, 1, 11)
    fig = grpo_difficulty_figure(p, group_signal_probability(p, 4), expected_abs_advantage(p, 4), G=4, current_p=1.0)
    markers = [t for t in fig.data if t.name.startswith("this group")]
    assert len(markers) == 2 and all(t.cliponaxis is False and t.x == (1.0,) for t in markers)


def test_every_builder_passes_plotly_validation():
    p = np.linspace(0, 1, 21)
    R = np.array([EXAMPLE_C, np.ones(8), np.zeros(8)])
    for fig in (
        _adv_fig(EXAMPLE_C)[0],
        _adv_fig(np.ones(4))[0],
        grpo_difficulty_figure(p, group_signal_probability(p, 8), expected_abs_advantage(p, 8), G=8, current_p=0.4),
        ppo_vs_grpo_figure(16),
        grpo_batch_contrast_figure(R, grpo_advantages(R), batch_normalised_advantages(R)),
    ):
        go.Figure(fig.to_dict())  # raises on an invalid property


def _eps_fig(eps=(0.0, 0.01, 0.1), active=1, r=EXAMPLE_C, presenter=False):
    s = group_stats(r)
    denominators = s.std_population + np.asarray(eps)
    sweep = EpsSweep(tuple(f"{e:g}" for e in eps), (r - s.mean) / denominators[:, None], denominators, active)
    A = grpo_advantages(r, eps=eps[active])
    fig = grpo_advantages_figure(
        r, A, mean=s.mean, denominator=denominators[active], y_max=1.18 * np.abs(A).max(), eps_sweep=sweep,
        presenter=presenter,
    )  # fmt: skip
    return fig, sweep


def test_the_eps_slider_restyles_both_bar_traces_and_nothing_else():
    fig, sweep = _eps_fig()
    go.Figure(fig.to_dict())  # the slider passes plotly's validation
    slot, bars = fig.data[0], fig.data[1]
    np.testing.assert_array_equal(bars.y, sweep.advantages[1])  # the bars show the active step
    slider = fig.layout.sliders[0]
    assert slider.active == 1 and [s.label for s in slider.steps] == ["0", "0.01", "0.1"]
    traces, layout, indices = slider.steps[2].args
    assert list(indices) == [0, 1] and layout == {} and set(traces) == {"y", "customdata", "hovertemplate", "text"}
    A = (EXAMPLE_C - 0.375) / (np.sqrt(0.375 * 0.625) + 0.1)  # the population std of 3 of 8 is sqrt(p (1 - p))
    np.testing.assert_allclose(traces["y"][1], A, rtol=1e-12)
    np.testing.assert_array_equal(traces["y"][0], slot.y)  # the slot's heights go along unchanged
    for custom in traces["customdata"]:
        np.testing.assert_array_equal(custom[:, :3], np.asarray(bars.customdata)[:, :3])  # index, r, r − mean
        np.testing.assert_allclose(custom[:, 3], A, rtol=1e-12)
    assert traces["text"][1] == [fmt.signed(a) for a in A] and traces["text"][1][:2] == ["+1.07", "-0.64"]
    assert all(f"/ {np.sqrt(15 / 64) + 0.1:.4g} =" in h for h in traces["hovertemplate"])
    assert slot.textposition == "none" and list(slot.text) == list(bars.text)  # the slot's copy is never drawn
    # the figure grows by what the slider takes under it; presenter mode leaves more room for larger ticks
    plain = _adv_fig(EXAMPLE_C)[0]
    assert not plain.layout.sliders and plain.data[0].text is None
    assert fig.layout.height == plain.layout.height + 90
    assert _eps_fig(presenter=True)[0].layout.sliders[0].pad.t > slider.pad.t


def test_a_large_group_steps_without_bar_labels():
    r = np.array([1.0] + [0.0] * 20)
    fig, _ = _eps_fig(r=r, active=0)
    assert fig.data[1].text is None and fig.data[0].text is None
    assert "text" not in fig.layout.sliders[0].steps[1].args[0]
