"""Figures of the positions page: RoPE's wavelengths against the trained context and a scaling method's new ones
(with a plotly slider over the scaling factor s), the score matrix of one q and one k at shifted positions, and
RoFormer's decay bound beside the mean score.

Builders take numbers computed by core.rope (the view calls core, then these) and do no math beyond laying them out.
Every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type for a room).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.style import colorscale, figure, get_theme, grid, readout_panel, unlabelled_slider

# room under the plot for the x axis's ticks and title, above the slider (as the other pages' sliders)
_SLIDER_PAD, _SLIDER_PAD_PRESENTER = 56, 72
_SLIDER_HEIGHT = 80  # the figure grows by about what the slider takes under the plot
# the plot's share of the width when a readout panel stands right of it (normal, presenter mode)
_PLOT_WIDTH, _PLOT_WIDTH_PRESENTER = 0.7, 0.64


def _log_range(low: float, high: float) -> list[float]:
    """A log axis's range (plotly's log10 units) with a little room above and below."""
    return [math.log10(low) - 0.15, math.log10(high) + 0.25]


def wavelength_figure(
    original: np.ndarray,
    context: int,
    *,
    scaled: np.ndarray | None = None,
    new_context: Sequence[float] = (),
    panels: Sequence[str] = (),
    s_values: Sequence[float] = (),
    active: int = 0,
    method_label: str = "",
    y_high: float | None = None,
    height: int = 470,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Each pair's wavelength λ_i = 2π/θ_i in tokens (log axis) against the pair index i, and the trained context L.

    ``original``: the d/2 plain wavelengths. ``scaled`` (S, d/2): a scaling method's wavelengths at each step of the
    slider over s (``s_values``, the page's s at ``active``), ``new_context`` (S,) the line s·L at each step and
    ``panels`` (S,) the readout panel's text at each step; without ``scaled`` the figure has no slider. ``y_high``: the
    top of the y axis, fixed over the steps so that the curve moves and the axis does not. Trace 0: the original
    wavelengths; 1: the trained context; 2 and 3 (with ``scaled``): the scaled wavelengths and the new context.
    """
    t = get_theme(theme)
    pal = t.palette
    lam = np.asarray(original, dtype=np.float64)
    P = lam.size
    i = np.arange(P)
    edge = [-0.5, P - 0.5]
    data: list[dict[str, Any]] = [
        {
            "type": "scatter", "x": i, "y": lam, "mode": "lines+markers", "name": "original λ = 2π·base^(2i/d)",
            "line": {"color": pal["reference"], "width": 2.5}, "marker": {"size": 5, "color": pal["reference"]},
            "hovertemplate": "pair %{x}: λ = %{y:,.4g} tokens<extra>original</extra>",
        },
        {
            "type": "scatter", "x": edge, "y": [context, context], "mode": "lines",
            "name": f"trained context L = {context:,}", "line": {"color": pal["neutral"], "width": 2, "dash": "dash"},
            "hovertemplate": "L = %{y:,} tokens<extra></extra>",
        },
    ]  # fmt: skip
    high = float(y_high) if y_high is not None else max(float(lam.max()), float(context)) * 1.5
    layout: dict[str, Any] = {
        "xaxis": {"title": {"text": "pair i (dimensions 2i, 2i+1)"}, "range": edge, "zeroline": False},
        "yaxis": {"title": {"text": "wavelength λ (tokens)"}, "type": "log", "range": _log_range(2.0, high)},
        "hovermode": "closest",
        "uirevision": "positions-wavelengths",
        "legend": {"y": 1.02},
    }
    title = "RoPE: the wavelength of each pair against the trained context"
    if scaled is not None:
        sc = np.asarray(scaled, dtype=np.float64)  # (S, P)
        data += [
            {
                "type": "scatter", "x": i, "y": sc[active], "mode": "lines+markers", "name": f"{method_label}",
                "line": {"color": pal["optimised"], "width": 2.5}, "marker": {"size": 5, "color": pal["optimised"]},
                "hovertemplate": "pair %{x}: λ' = %{y:,.4g} tokens<extra>scaled</extra>",
            },
            {
                "type": "scatter", "x": edge, "y": [new_context[active]] * 2, "mode": "lines",
                "name": "s·L (s times the trained context)",
                "line": {"color": pal["optimised"], "width": 1.5, "dash": "dot"},
                "hovertemplate": "s·L = %{y:,} tokens<extra></extra>",
            },
        ]  # fmt: skip
        # the plot narrowed: the readout panel stands in the column right of it (wider at presenter size)
        layout["xaxis"]["domain"] = [0.0, _PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH]
        layout["annotations"] = [readout_panel(panels[active], t)]
        steps = [
            {
                "method": "update",
                "label": f"{s:g}",
                "args": [{"y": [sc[k], [new_context[k]] * 2]}, {"annotations[0].text": panels[k]}, [2, 3]],
            }
            for k, s in enumerate(s_values)
        ]
        pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
        layout["sliders"] = [unlabelled_slider(steps, active, "scaling factor s = ", pad)]
        height += _SLIDER_HEIGHT
    layout["title"] = {"text": title}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def relative_figure(
    scores: np.ndarray,
    shifted: np.ndarray,
    start: int,
    shift: int,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Two heatmaps of S_mn = q_m · k_n for one query vector q and one key vector k placed at every position: queries
    and keys at ``start`` .. ``start`` + T − 1 (left), and the same positions moved by ``shift`` (right). One colour
    scale for both, symmetric about 0."""
    a, b = np.asarray(scores, dtype=np.float64), np.asarray(shifted, dtype=np.float64)
    T = a.shape[0]
    peak = float(max(np.abs(a).max(), np.abs(b).max(), 1e-12))
    ids, layout = grid(
        1,
        2,
        hgap=0.1,
        titles=[
            f"positions {start}–{start + T - 1}",
            f"shifted: positions {start + shift:,}–{start + shift + T - 1:,}",
        ],
    )
    data = []
    for k, (z, (x, y)) in enumerate(zip((a, b), ids, strict=True)):
        pos = np.arange(T) + start + (shift if k else 0)
        data.append(
            {
                "type": "heatmap", "z": z, "x": pos, "y": pos, "xaxis": x, "yaxis": y, "coloraxis": "coloraxis",
                "name": "shifted" if k else "original",
                "hovertemplate": "query m = %{y}, key n = %{x}: q·k = %{z:.4f}<extra></extra>",
            }
        )  # fmt: skip
        layout[f"xaxis{'' if k == 0 else k + 1}"] |= {"title": {"text": "key position n"}}
        layout[f"yaxis{'' if k == 0 else k + 1}"] |= {"autorange": "reversed"}
    layout["yaxis"]["title"] = {"text": "query position m"}
    layout["coloraxis"] = {
        "colorscale": colorscale("diverging", theme),
        "cmin": -peak,
        "cmax": peak,
        "colorbar": {"title": {"text": "q·k"}},
    }
    layout["title"] = {"text": "The score of one q and one k at every pair of positions: only m − n matters"}
    layout["margin"] = {"t": 90}
    return figure(data, layout, theme=theme, presenter=presenter, height=height, legend=False)


def decay_figure(
    distances: np.ndarray,
    bound: np.ndarray,
    same: np.ndarray,
    context: int,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Against the distance m − n (log axis): RoFormer's relative upper bound divided by its value at distance 0
    (``bound``), the expected score of q = k with unit-variance components divided by d (``same``), and the expected
    score of independent q, k (0 at every distance). A dashed line marks the trained context."""
    t = get_theme(theme)
    pal = t.palette
    x = np.asarray(distances, dtype=np.float64)
    data = [
        {
            "type": "scatter", "x": x, "y": bound, "mode": "lines", "name": "RoFormer's bound ÷ its value at 0",
            "line": {"color": pal["reference"], "width": 2.5},
            "hovertemplate": "m − n = %{x:,}: %{y:.4f}<extra>bound</extra>",
        },
        {
            "type": "scatter", "x": x, "y": same, "mode": "lines", "name": "mean score, q = k, ÷ d",
            "line": {"color": pal["optimised"], "width": 2},
            "hovertemplate": "m − n = %{x:,}: %{y:.4f}<extra>q = k</extra>",
        },
        {
            "type": "scatter", "x": [x[0], x[-1]], "y": [0.0, 0.0], "mode": "lines",
            "name": "mean score, independent q, k", "line": {"color": pal["optimum"], "width": 2, "dash": "dot"},
            "hovertemplate": "E[q·k] = 0<extra>independent</extra>",
        },
        {
            "type": "scatter", "x": [context, context], "y": [-0.5, 1.05], "mode": "lines",
            "name": f"trained context L = {context:,}", "line": {"color": pal["neutral"], "width": 1.5, "dash": "dash"},
            "hoverinfo": "skip",
        },
    ]  # fmt: skip
    layout = {
        "xaxis": {"title": {"text": "distance m − n (tokens)"}, "type": "log"},
        "yaxis": {"title": {"text": "relative to distance 0"}, "range": [-0.5, 1.05]},
        "title": {"text": "RoFormer's bound decays; the mean score need not (0 for independent q, k)"},
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
