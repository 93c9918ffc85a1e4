"""Figures of the number-formats page: the five formats' spacing ulp(x) against x on a log number line (where each
overflows and underflows), with a plotly slider over a log grid of values x that moves a marker and a readout panel of
what each format stores; the share of seeded fp16 gradients zeroed, subnormal, normal or overflowing under a loss
scale with a dynamic scaler's run below it; softmax with and without the max subtracted; a running sum that stalls.

Builders take numbers computed by core.number_formats (the view calls core, then these) and do no math beyond laying
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
_PLOT_WIDTH, _PLOT_WIDTH_PRESENTER = 0.68, 0.58
_COLORS = ("reference", "optimised", "negative", "optimum", "highlight")


def _color(pal: Any, i: int) -> str:
    return pal[_COLORS[i % len(_COLORS)]]


def spacing_figure(
    names: Sequence[str],
    stairs: Sequence[tuple[np.ndarray, np.ndarray]],
    limits: Sequence[tuple[float, float, float]],
    xs: Sequence[float],
    labels: Sequence[str],
    ulps: Sequence[Sequence[float]],
    panels: Sequence[str],
    *,
    x_range: tuple[float, float],
    bands: Sequence[tuple[str, float, float, float]] = (),
    band_source: str = "",
    active: int = 0,
    height: int = 470,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Each format's spacing ulp(x) against x, log-log, as a staircase over its range (``stairs[i]`` = (x, ulp)),
    with its smallest subnormal and its largest finite value marked (``limits[i]`` = (smallest subnormal, smallest
    normal, largest)); a plotly slider over ``xs`` (labelled ``labels``, the page's at ``active``) moves the vertical
    line at x, the markers of each format's spacing there (``ulps[j][i]``, NaN where x is outside its range) and the
    readout panel (``panels[j]``). ``bands``: (label, low, median, high) of a quantity's magnitudes (``band_source``
    says whose), each drawn as a horizontal band from low to high near the top of the plot with its median marked
    and labelled; they are the same at every step of the slider.

    Traces 0..n-1: the staircases; n: the limits' markers; n+1: the line at x; n+2: the spacing markers at x; with
    ``bands``, n+3: the bands and n+4: their medians (the slider restyles n+1 and n+2 only).
    """
    t = get_theme(theme)
    pal = t.palette
    n = len(names)
    data: list[dict[str, Any]] = []
    for i, (name, (sx, sy)) in enumerate(zip(names, stairs, strict=True)):
        data.append({
            "type": "scatter", "x": sx, "y": sy, "mode": "lines", "name": name, "line": {"shape": "hv", "width": 2.5,
            "color": _color(pal, i), "dash": ("solid", "dash", "dot", "dashdot", "longdash")[i % 5]},
            "hovertemplate": f"{name}: spacing %{{y:.3g}} from x = %{{x:.3g}}<extra></extra>",
        })  # fmt: skip
    mx, my, mt = [], [], []
    for i, (name, (sub, _normal, top)) in enumerate(zip(names, limits, strict=True)):
        sx, sy = stairs[i]
        if x_range[0] <= sub <= x_range[1]:
            mx.append(sub), my.append(float(sy[0])), mt.append(f"{name}: smallest subnormal {sub:.3g}")
        if x_range[0] <= top <= x_range[1]:
            mx.append(top), my.append(float(sy[-1])), mt.append(f"{name}: largest finite {top:,.6g}")
    data.append({
        "type": "scatter", "x": mx, "y": my, "mode": "markers", "name": "underflow / overflow edge",
        "marker": {"symbol": "x", "size": 10, "color": pal["neutral"]}, "showlegend": not presenter,
        "text": mt, "hovertemplate": "%{text}<extra></extra>",
    })  # fmt: skip
    y_lo = min(float(np.nanmin(sy)) for _, sy in stairs)
    y_hi = max(float(np.nanmax(sy)) for _, sy in stairs)
    data.append({
        "type": "scatter", "x": [xs[active]] * 2, "y": [y_lo, y_hi], "mode": "lines", "name": "x",
        "line": {"color": t.text, "width": 1.5, "dash": "dot"}, "hoverinfo": "skip", "showlegend": False,
    })  # fmt: skip
    data.append({
        "type": "scatter", "x": [xs[active]] * n, "y": list(ulps[active]), "mode": "markers", "name": "spacing at x",
        "marker": {"size": 11, "color": [_color(pal, i) for i in range(n)], "line": {"width": 1, "color": t.text}},
        "text": list(names), "hovertemplate": "%{text}: spacing %{y:.3g} at x<extra></extra>", "showlegend": False,
    })  # fmt: skip
    if bands:
        # one row per quantity in the top decades of the plot, where the staircases have not reached yet
        top = np.log10(y_hi)
        ys = [10.0 ** (top - 1.5 - 3.3 * k) for k in range(len(bands))]  # rows apart by more than a label's height
        bx: list[float | None] = []
        by: list[float | None] = []
        bt: list[str] = []
        for (label, lo, _mid, hi), y in zip(bands, ys, strict=True):
            bx += [lo, hi, None]
            by += [y, y, None]
            bt += [f"{label}: 1st percentile {lo:.3g}", f"{label}: 99th percentile {hi:.3g}", ""]
        data.append({
            "type": "scatter", "x": bx, "y": by, "mode": "lines", "name": f"{band_source}: 1st to 99th percentile",
            "line": {"color": pal["neutral"], "width": 9}, "opacity": 0.55, "text": bt, "showlegend": not presenter,
            "hovertemplate": "%{text}<extra></extra>",
        })  # fmt: skip
        data.append({
            "type": "scatter", "x": [b[2] for b in bands], "y": ys, "mode": "markers+text", "name": "median",
            "marker": {"symbol": "diamond", "size": 11, "color": t.text}, "text": [b[0] for b in bands],
            "showlegend": not presenter,
            "textposition": "top center", "textfont": {"color": t.text},
            "customdata": [f"{b[0]}: median {b[2]:.3g}" for b in bands],
            "hovertemplate": "%{customdata}<extra></extra>",
        })  # fmt: skip
    layout: dict[str, Any] = {
        "xaxis": {
            "title": {"text": "x"}, "type": "log", "range": [np.log10(x_range[0]), np.log10(x_range[1])],
            "domain": [0.0, _PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH], "exponentformat": "power",
        },
        "yaxis": {"title": {"text": "spacing ulp(x)"}, "type": "log", "exponentformat": "power"},
        "title": {"text": "Five formats on one log line: range across, spacing up"},
        "annotations": [readout_panel(panels[active], t)],
        # under the readout panel, beside the plot (above it, its eight entries took most of the height): one column;
        # in presenter mode, whose larger panel and type leave less room, the five formats only, reaching down beside
        # the x axis's labels (the bands and medians are labelled on the plot, the edges' crosses in the caption)
        "legend": {
            "orientation": "v", "x": (_PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH) + 0.03, "xanchor": "left",
            "y": -0.18 if presenter else 0.0, "yanchor": "bottom",
        },
        "hovermode": "closest",
        "uirevision": "fmt-line",
    }  # fmt: skip
    steps = [
        {
            "method": "update",
            "label": label,
            "args": [
                {"x": [[xs[j]] * 2, [xs[j]] * n], "y": [[y_lo, y_hi], list(ulps[j])]},
                {"annotations[0].text": panels[j]},
                [n + 1, n + 2],
            ],
        }
        for j, label in enumerate(labels)
    ]
    pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
    layout["sliders"] = [unlabelled_slider(steps, active, "x = ", pad)]
    return figure(data, layout, theme=theme, presenter=presenter, height=height + _SLIDER_HEIGHT)


def loss_scale_figure(
    edges: np.ndarray,
    counts: np.ndarray,
    bounds: Sequence[tuple[str, float]],
    steps: np.ndarray,
    log2_scales: np.ndarray,
    skipped: np.ndarray,
    *,
    scale_text: str,
    height: int = 520,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Top: a histogram of log10 |S·g| for seeded gradient magnitudes (``edges``, ``counts``) with fp16's edges as
    vertical lines (``bounds``: (name, value)). Bottom: a dynamic loss scaler's log2 scale per step with the skipped
    steps marked."""
    t = get_theme(theme)
    pal = t.palette
    ids, layout = grid(
        2, 1, heights=[1.2, 1], vgap=0.22 if presenter else 0.16
    )  # presenter mode: room for the larger axis title
    (x1, y1), (x2, y2) = ids
    centres = (edges[:-1] + edges[1:]) / 2
    data: list[dict[str, Any]] = [
        {
            "type": "bar", "x": centres, "y": counts, "width": float(edges[1] - edges[0]), "name": scale_text,
            "marker": {"color": pal["optimised"]}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": "log10 |S·g| %{x:.2f}: %{y} gradients<extra></extra>",
        },
        {
            "type": "scatter", "x": steps, "y": log2_scales, "mode": "lines", "name": "dynamic scaler: log2 S",
            "line": {"color": pal["reference"], "width": 2, "shape": "hv"}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": "step %{x}: S = 2^%{y}<extra></extra>",
        },
        {
            "type": "scatter", "x": steps[skipped], "y": log2_scales[skipped], "mode": "markers",
            "name": "skipped step (∞ or NaN in the gradients)", "marker": {"symbol": "x", "size": 8,
            "color": pal["highlight"]}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": "step %{x}: overflow, skipped, S halved<extra></extra>",
        },
    ]  # fmt: skip
    shapes = [
        {"type": "line", "xref": x1, "yref": f"{y1} domain", "x0": np.log10(v), "x1": np.log10(v), "y0": 0, "y1": 1,
         "line": {"color": t.text, "width": 1.5, "dash": "dash"}}
        for _, v in bounds
    ]  # fmt: skip
    notes = [
        # inside the plot's top, beside each line (above it they ran into the title and the legend): the first
        # bound's name on its left, the others' on their right but the last's, on its left (the plot's edge is near)
        {"text": name, "xref": x1, "yref": f"{y1} domain", "x": np.log10(v), "y": 0.98, "yanchor": "top",
         "showarrow": False, "xanchor": "right" if i in (0, len(bounds) - 1) else "left", "xshift": -4 if i in
         (0, len(bounds) - 1) else 4}
        for i, (name, v) in enumerate(bounds)
    ]  # fmt: skip
    layout["shapes"] = shapes
    layout["annotations"] = layout.get("annotations", []) + notes
    layout["xaxis"] |= {"title": {"text": "log10 |S·g| in fp16"}}
    layout["yaxis"] |= {"title": {"text": "gradients"}}
    layout["xaxis2"] |= {"title": {"text": "step"}}
    layout["yaxis2"] |= {"title": {"text": "log2 S"}}
    layout["title"] = {"text": "fp16 gradients under a loss scale S"}
    layout["legend"] = {"y": 1.02}
    layout["hovermode"] = "closest"
    layout["bargap"] = 0
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def softmax_figure(
    index: np.ndarray,
    series: Sequence[tuple[str, np.ndarray]],
    *,
    height: int = 430,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Softmax probabilities per logit, one bar group per way of computing them (a NaN draws no bar)."""
    pal = get_theme(theme).palette
    colors = (pal["reference"], pal["optimised"], pal["neutral"])
    data = [
        {
            "type": "bar", "x": index, "y": np.where(np.isfinite(p), p, None), "name": name,
            "marker": {"color": colors[i % len(colors)]}, "hovertemplate": f"logit %{{x}}: %{{y:.4f}}<extra>{name}"
            "</extra>",
        }
        for i, (name, p) in enumerate(series)
    ]  # fmt: skip
    layout = {
        "barmode": "group",
        "xaxis": {"title": {"text": "logit index"}, "dtick": 1},
        "yaxis": {"title": {"text": "probability"}, "range": [0, 1]},
        "title": {"text": "Softmax in fp16, with and without the max subtracted"},
        "legend": {"y": 1.02},
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def running_sum_figure(
    steps: np.ndarray,
    series: Sequence[tuple[str, np.ndarray]],
    *,
    height: int = 430,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The running sum per step in each format, and the exact sum."""
    pal = get_theme(theme).palette
    colors = (pal["reference"], pal["highlight"], pal["optimised"])
    data = [
        {
            "type": "scatter", "x": steps, "y": y, "mode": "lines", "name": name,
            "line": {"color": colors[i % len(colors)], "width": 2.5, "dash": ("solid", "dash", "dot")[i % 3]},
            "hovertemplate": f"step %{{x}}: %{{y:.6g}}<extra>{name}</extra>",
        }
        for i, (name, y) in enumerate(series)
    ]  # fmt: skip
    layout = {
        "xaxis": {"title": {"text": "additions"}},
        "yaxis": {"title": {"text": "running sum"}},
        "title": {"text": "Adding the same increment: the bf16 sum stops growing"},
        "legend": {"y": 1.02},
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
