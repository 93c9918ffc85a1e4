"""Figures of the calibration page: the reliability diagram of the preference-tuning toy before tuning, after it and
after temperature scaling, with the bin counts under it (a plotly slider over the tuning strength κ restyles the
tuned and rescaled traces); a known miscalibration (accuracy = c^γ) with its ECE against the number of bins; the NLL
against the temperature and the reliability before and after; emergence as a metric choice.

Builders take numbers computed by core.calibration (the view calls core, then these) and do no math beyond laying
them out. Every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.style import figure, get_theme, grid, readout_panel, unlabelled_slider

_SLIDER_PAD, _SLIDER_PAD_PRESENTER = 56, 72
_SLIDER_HEIGHT = 80
_PLOT_WIDTH, _PLOT_WIDTH_PRESENTER = 0.7, 0.6  # the readout panel stands right of the plots


def _diagonal(x: str, y: str, pal: dict[str, str] | Any, legend: bool = True) -> dict[str, Any]:
    return {"type": "scatter", "x": [0.0, 1.0], "y": [0.0, 1.0], "mode": "lines", "name": "perfect calibration",
            "showlegend": legend, "line": {"color": pal["neutral"], "width": 1.5, "dash": "dash"}, "xaxis": x,
            "yaxis": y, "hoverinfo": "skip"}  # fmt: skip


def _points(x: np.ndarray, y: np.ndarray, name: str, color: str, xa: str, ya: str, **more: Any) -> dict[str, Any]:
    return {"type": "scatter", "x": x, "y": y, "mode": "lines+markers", "name": name,
            "line": {"color": color, "width": 2}, "marker": {"color": color, "size": 8}, "xaxis": xa, "yaxis": ya,
            "connectgaps": True,
            "hovertemplate": f"bin mean %{{x:.3f}}: accuracy %{{y:.3f}}<extra>{name}</extra>"} | more  # fmt: skip


def reliability_figure(
    before: tuple[np.ndarray, np.ndarray],
    tuned: Sequence[tuple[np.ndarray, np.ndarray]],
    scaled: Sequence[tuple[np.ndarray, np.ndarray]],
    curve_x: np.ndarray,
    curves: Sequence[np.ndarray],
    centers: np.ndarray,
    counts_before: np.ndarray,
    counts_tuned: Sequence[np.ndarray],
    counts_scaled: Sequence[np.ndarray],
    kappas: Sequence[float],
    panels: Sequence[str],
    *,
    active: int = 0,
    height: int = 470,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Top: accuracy against confidence per bin (the diagonal, the pre-trained model, the tuned model, the tuned
    model after temperature scaling, the tuned model's exact curve sigmoid(logit c / κ) dotted). Bottom: how many
    predictions fall in each equal-width bin. ``tuned``, ``scaled``, ``curves``, ``counts_*`` and ``panels`` hold one
    entry per step of ``kappas``; the slider (the page's κ at ``active``) restyles traces 2, 3, 4, 6 and 7.

    Traces: 0 diagonal, 1 pre-trained, 2 tuned, 3 rescaled, 4 tuned curve, 5-7 counts (pre-trained, tuned, rescaled).
    """
    pal = get_theme(theme).palette
    ids, layout = grid(2, 1, heights=(0.68, 0.32), vgap=0.1)
    (x1, y1), (x2, y2) = ids
    share = _PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH
    for axis in ("xaxis", "xaxis2"):
        layout[axis]["domain"] = [round(v * share, 6) for v in layout[axis]["domain"]]
    c_before, c_tuned, c_scaled = pal["reference"], pal["negative"], pal["optimum"]
    data: list[dict[str, Any]] = [
        _diagonal(x1, y1, pal),
        _points(*before, "pre-trained (calibrated)", c_before, x1, y1),
        _points(*tuned[active], "after tuning (toy)", c_tuned, x1, y1),
        _points(*scaled[active], "after temperature scaling", c_scaled, x1, y1, line={"color": c_scaled, "width": 2,
                                                                                      "dash": "dot"}),
        {"type": "scatter", "x": curve_x, "y": curves[active], "mode": "lines", "name": "tuned, exact curve",
         "showlegend": False, "line": {"color": c_tuned, "width": 1, "dash": "dot"}, "xaxis": x1, "yaxis": y1,
         "hoverinfo": "skip"},
    ]  # fmt: skip
    width = float(centers[1] - centers[0]) / 3.4 if len(centers) > 1 else 0.3
    for j, (name, color, counts) in enumerate(
        (("pre-trained", c_before, counts_before), ("after tuning", c_tuned, counts_tuned[active]),
         ("after temperature scaling", c_scaled, counts_scaled[active]))
    ):  # fmt: skip
        data.append({"type": "bar", "x": centers + (j - 1) * width, "y": counts, "width": width, "name": name,
                     "showlegend": False, "marker": {"color": color}, "xaxis": x2, "yaxis": y2,
                     # the bin's centre: x is offset so the three bars stand side by side
                     "customdata": centers,
                     "hovertemplate": f"bin at %{{customdata:.2f}}: %{{y}} predictions<extra>{name}</extra>",
                     })  # fmt: skip
    # one x title, under the bars: the top panel's ran into the bars in presenter mode (both share the scale; a point
    # stands at its bin's mean confidence, as its hover says)
    layout["xaxis"] |= {"range": [0, 1]}
    layout["yaxis"] |= {"range": [0, 1], "title": {"text": "accuracy per bin"}}
    layout["xaxis2"] |= {"range": [0, 1], "title": {"text": "confidence (equal-width bins)"}}
    layout["yaxis2"] |= {"title": {"text": "predictions"}, "rangemode": "tozero", "nticks": 3}
    layout["annotations"] = [readout_panel(panels[active], get_theme(theme))]
    layout["title"] = {"text": "Reliability diagram: a calibrated model, the same after tuning (a toy), rescaled"}
    layout["legend"] = {"y": 1.02}
    layout["hovermode"] = "closest"
    layout["barmode"] = "overlay"
    layout["uirevision"] = "calibration-reliability"
    steps = [
        {
            "method": "update",
            "label": f"{k:g}",
            "args": [
                {
                    "x": [tuned[i][0], scaled[i][0], curve_x, centers, centers + width],
                    "y": [tuned[i][1], scaled[i][1], curves[i], counts_tuned[i], counts_scaled[i]],
                },
                {"annotations[0].text": panels[i]},
                [2, 3, 4, 6, 7],
            ],
        }
        for i, k in enumerate(kappas)
    ]
    pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
    layout["sliders"] = [unlabelled_slider(steps, active, "κ = ", pad)]
    return figure(data, layout, theme=theme, presenter=presenter, height=height + _SLIDER_HEIGHT)


def power_figure(
    width_points: tuple[np.ndarray, np.ndarray],
    mass_points: tuple[np.ndarray, np.ndarray],
    curve_x: np.ndarray,
    curve_y: np.ndarray,
    gamma: float,
    bins: np.ndarray,
    ece_width: np.ndarray,
    ece_mass: np.ndarray,
    expected: float,
    n_bins: int,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: a seeded sample's reliability diagram (equal-width and equal-mass bins) against the curve c^γ. Right:
    the sample's ECE against the number of bins for both binnings, and the closed-form population ECE (flat)."""
    pal = get_theme(theme).palette
    ids, layout = grid(1, 2, hgap=0.12)
    (x1, y1), (x2, y2) = ids
    data: list[dict[str, Any]] = [
        _diagonal(x1, y1, pal),
        {"type": "scatter", "x": curve_x, "y": curve_y, "mode": "lines", "name": f"accuracy = c^{gamma:g}",
         "line": {"color": pal["neutral"], "width": 2}, "xaxis": x1, "yaxis": y1, "hoverinfo": "skip"},
        _points(*width_points, f"sample, {n_bins} equal-width bins", pal["reference"], x1, y1, legendgroup="w"),
        _points(*mass_points, f"sample, {n_bins} equal-mass bins", pal["optimised"], x1, y1, legendgroup="m"),
        {"type": "scatter", "x": bins, "y": ece_width, "mode": "lines+markers", "name": "equal width",
         "showlegend": False, "legendgroup": "w", "line": {"color": pal["reference"], "width": 2},
         "marker": {"size": 5}, "xaxis": x2, "yaxis": y2,
         "hovertemplate": "M = %{x}: ECE %{y:.4f}<extra>equal width</extra>"},
        {"type": "scatter", "x": bins, "y": ece_mass, "mode": "lines+markers", "name": "equal mass",
         "showlegend": False, "legendgroup": "m", "line": {"color": pal["optimised"], "width": 2},
         "marker": {"size": 5}, "xaxis": x2, "yaxis": y2,
         "hovertemplate": "M = %{x}: ECE %{y:.4f}<extra>equal mass</extra>"},
        {"type": "scatter", "x": [float(bins[0]), float(bins[-1])], "y": [expected, expected], "mode": "lines",
         "name": "population ECE (closed form, any binning)", "line": {"color": pal["negative"], "width": 2,
                                                                       "dash": "dash"},
         "xaxis": x2, "yaxis": y2, "hoverinfo": "skip"},
    ]  # fmt: skip
    layout["xaxis"] |= {"range": [0, 1], "title": {"text": "confidence c"}}
    layout["yaxis"] |= {"range": [0, 1], "title": {"text": "accuracy per bin"}}
    layout["xaxis2"] |= {"title": {"text": "M: number of bins"}}
    top = float(np.nanmax(np.r_[ece_width, ece_mass, expected]))
    layout["yaxis2"] |= {"title": {"text": "ECE"}, "range": [0, 1.15 * top]}
    layout["title"] = {"text": "accuracy = c^γ: one infinite-sample ECE for every binning"}
    layout["legend"] = {"y": 1.02}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def temperature_scaling_figure(
    temps: np.ndarray,
    nll_val: np.ndarray,
    nll_test: np.ndarray,
    fitted: float,
    true_t: float,
    before: tuple[np.ndarray, np.ndarray],
    after: tuple[np.ndarray, np.ndarray],
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: the mean NLL against the temperature T (log) on the held-out and the test set, the fitted T and the
    true one marked. Right: the test set's reliability diagram at T = 1 and at the fitted T."""
    pal = get_theme(theme).palette
    ids, layout = grid(1, 2, hgap=0.12)
    (x1, y1), (x2, y2) = ids
    low = float(min(np.min(nll_val), np.min(nll_test)))
    data: list[dict[str, Any]] = [
        {"type": "scatter", "x": temps, "y": nll_val, "mode": "lines", "name": "NLL, held-out set",
         "line": {"color": pal["reference"], "width": 3}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "T = %{x:.2f}: %{y:.4f} nats<extra>held-out</extra>"},
        {"type": "scatter", "x": temps, "y": nll_test, "mode": "lines", "name": "NLL, test set",
         "line": {"color": pal["optimised"], "width": 2, "dash": "dot"}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "T = %{x:.2f}: %{y:.4f} nats<extra>test</extra>"},
        {"type": "scatter", "x": [fitted], "y": [low], "mode": "markers", "name": "fitted T",
         "marker": {"color": pal["highlight"], "size": 13, "symbol": "star"}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "fitted T = %{x:.3f}<extra></extra>"},
        {"type": "scatter", "x": [true_t], "y": [low], "mode": "markers", "name": "the simulation's T₀",
         "marker": {"color": pal["neutral"], "size": 10, "symbol": "x"}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "T₀ = %{x:.2f}<extra></extra>"},
        _diagonal(x2, y2, pal, legend=False),
        _points(*before, "test set, T = 1", pal["negative"], x2, y2),
        _points(*after, "test set, fitted T", pal["optimum"], x2, y2),
    ]  # fmt: skip
    layout["xaxis"] |= {"type": "log", "title": {"text": "temperature T (logits divided by T)"}}
    layout["yaxis"] |= {"title": {"text": "mean NLL (nats)"}}
    layout["xaxis2"] |= {"range": [0, 1], "title": {"text": "confidence (top class)"}}
    layout["yaxis2"] |= {"range": [0, 1], "title": {"text": "accuracy per bin"}}
    layout["title"] = {"text": "Temperature scaling: one T fitted on held-out data moves confidence, not accuracy"}
    layout["legend"] = {"y": 1.02}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def emergence_figure(
    x: np.ndarray,
    per_token: np.ndarray,
    exact: np.ndarray,
    edit: np.ndarray,
    k: int,
    threshold: float,
    crossing: float,
    crossing_one: float,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: per-token accuracy p and exact match p^k against log10-compute, the threshold τ and where each crosses
    it. Right: the expected token edit distance k (1 − p) on a log axis, the same model on a linear metric."""
    pal = get_theme(theme).palette
    ids, layout = grid(1, 2, hgap=0.12)
    (x1, y1), (x2, y2) = ids
    span = [float(x[0]), float(x[-1])]
    data: list[dict[str, Any]] = [
        {"type": "scatter", "x": x, "y": per_token, "mode": "lines", "name": "per-token accuracy p",
         "line": {"color": pal["reference"], "width": 3}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "log10 C = %{x:.2f}: p = %{y:.3f}<extra></extra>"},
        {"type": "scatter", "x": x, "y": exact, "mode": "lines", "name": f"exact match, {k}-token answers (p^{k})",
         "line": {"color": pal["negative"], "width": 3}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "log10 C = %{x:.2f}: %{y:.3f}<extra>exact match</extra>"},
        {"type": "scatter", "x": span, "y": [threshold, threshold], "mode": "lines", "name": "threshold τ",
         "line": {"color": pal["neutral"], "width": 1.5, "dash": "dot"}, "xaxis": x1, "yaxis": y1,
         "hoverinfo": "skip"},
        {"type": "scatter", "x": [crossing_one, crossing], "y": [threshold, threshold], "mode": "markers",
         "name": "crosses τ", "marker": {"color": pal["highlight"], "size": 11}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "log10 C = %{x:.2f}<extra>crosses τ</extra>"},
        {"type": "scatter", "x": x, "y": edit, "mode": "lines", "name": f"token edit distance k (1 − p), k = {k}",
         "line": {"color": pal["optimum"], "width": 3}, "xaxis": x2, "yaxis": y2,
         "hovertemplate": "log10 C = %{x:.2f}: %{y:.3g} tokens<extra></extra>"},
    ]  # fmt: skip
    layout["xaxis"] |= {"title": {"text": "log10 compute (illustrative)"}}
    layout["yaxis"] |= {"range": [0, 1.02], "title": {"text": "accuracy"}}
    layout["xaxis2"] |= {"title": {"text": "log10 compute (illustrative)"}}
    layout["yaxis2"] |= {"type": "log", "title": {"text": "wrong tokens per answer (log)"}}
    layout["title"] = {
        "text": "One smooth model, two metrics: exact match rises late; on log axes the edit distance "
        "falls smoothly, a straight line once p nears 1"
    }
    layout["legend"] = {"y": 1.02}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
