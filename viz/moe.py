"""Figures of the MoE page: the expert loads of a skewed top-k router against the capacity, kept and dropped (with a
plotly slider over the capacity factor), the load imbalance and balance loss of DeepSeek-V3's bias balancing
against the same router without a bias, and total against active parameters of the catalogue's MoE models.

Builders take numbers computed by core.moe and core.model_spec (the view calls core, then these) and do no math
beyond laying them out. Every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.style import figure, figure_from_dict, get_theme, grid, readout_panel, unlabelled_slider

_SLIDER_PAD, _SLIDER_PAD_PRESENTER = 56, 72
_SLIDER_HEIGHT = 80
# the plot's share of the width: the readout panel stands in the column right of it (wider in presenter type)
_PLOT_WIDTH, _PLOT_WIDTH_PRESENTER = 0.7, 0.6


def routing_figure(
    kept: Sequence[np.ndarray],
    dropped: Sequence[np.ndarray],
    capacities: Sequence[int],
    factors: Sequence[float],
    panels: Sequence[str],
    *,
    active: int = 0,
    height: int = 430,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Assignments per expert, kept (processed) and dropped (over capacity), stacked, with the capacity C as a dashed
    line; a plotly slider over the capacity factors (``factors``, the page's at ``active``) swaps the bars, the line
    and the readout panel (``panels``, one per factor).

    Trace 0: kept; 1: dropped; 2: the capacity line.
    """
    pal = get_theme(theme).palette
    E = len(kept[active])
    experts = np.arange(E)
    line_x = [-0.5, E - 0.5]
    data: list[dict[str, Any]] = [
        {
            "type": "bar", "x": experts, "y": np.asarray(kept[active]), "name": "kept (processed)",
            "marker": {"color": pal["optimised"]}, "hovertemplate": "expert %{x}: %{y} kept<extra></extra>",
        },
        {
            "type": "bar", "x": experts, "y": np.asarray(dropped[active]), "name": "dropped (over capacity)",
            "marker": {"color": pal["reference"], "pattern": {"shape": "/"}},
            "hovertemplate": "expert %{x}: %{y} dropped<extra></extra>",
        },
        {
            "type": "scatter", "x": line_x, "y": [capacities[active]] * 2, "mode": "lines",
            "name": "capacity C per expert", "line": {"color": pal["neutral"], "width": 2, "dash": "dash"},
            "hoverinfo": "skip",
        },
    ]  # fmt: skip
    peak = max(int(np.max(np.asarray(k) + np.asarray(d))) for k, d in zip(kept, dropped, strict=True))
    top = max(peak, max(capacities)) * 1.1 + 1
    layout: dict[str, Any] = {
        "barmode": "stack",
        "xaxis": {
            "title": {"text": "expert"},
            "dtick": 1 if E <= 16 else None,
            "zeroline": False,
            "domain": [0.0, _PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH],
        },
        "yaxis": {"title": {"text": "assignments (token, expert)"}, "range": [0, top]},
        "title": {"text": "A skewed top-k router: each expert keeps at most C assignments"},
        "annotations": [readout_panel(panels[active], get_theme(theme))],
        "legend": {"y": 1.02},
        "hovermode": "closest",
        "uirevision": "moe-routing",
    }
    steps = [
        {
            "method": "update",
            "label": f"{f:g}",
            "args": [
                {"y": [np.asarray(kept[i]), np.asarray(dropped[i]), [capacities[i]] * 2]},
                {"annotations[0].text": panels[i]},
                [0, 1, 2],
            ],
        }
        for i, f in enumerate(factors)
    ]
    pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
    layout["sliders"] = [unlabelled_slider(steps, active, "capacity factor ", pad)]
    return figure(data, layout, theme=theme, presenter=presenter, height=height + _SLIDER_HEIGHT)


def with_panel_line(fig: go.Figure, line: str) -> go.Figure:
    """A copy of a routing figure with ``line`` added under its readout panel's text, at every step of its slider
    (the Predict-first guess: a number of assignments dropped has no height on the per-expert axis to mark)."""
    data = fig.to_dict()
    layout = data["layout"]
    layout["annotations"][0]["text"] += f"<br>{line}"
    for step in layout.get("sliders", [{}])[0].get("steps", []):
        step["args"][1]["annotations[0].text"] += f"<br>{line}"
    return figure_from_dict(data["data"], layout)


def balance_figure(
    imbalance_none: np.ndarray,
    imbalance_aux: np.ndarray,
    imbalance_bias: np.ndarray,
    shift_aux: np.ndarray,
    *,
    height: int = 470,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Top: max/mean expert load per step for one skewed router left alone, balanced by the auxiliary loss, and
    balanced by a selection bias. Bottom: how far each method moved the router's own probabilities (mean total
    variation; the bias leaves them untouched)."""
    pal = get_theme(theme).palette
    steps = np.arange(1, len(imbalance_none) + 1)
    ids, layout = grid(2, 1, heights=[1.4, 1], vgap=0.1)
    (x1, y1), (x2, y2) = ids
    lines = (
        ("no balancing", imbalance_none, pal["reference"], "solid"),
        ("auxiliary loss", imbalance_aux, pal["highlight"], "dash"),
        ("selection bias", imbalance_bias, pal["optimised"], "solid"),
    )
    data = [
        {
            "type": "scatter", "x": steps, "y": y, "mode": "lines", "name": name, "legendgroup": name,
            "line": {"color": color, "width": 2.5, "dash": dash}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": f"step %{{x}}: max/mean %{{y:.2f}}<extra>{name}</extra>",
        }
        for name, y, color, dash in lines
    ]  # fmt: skip
    data += [
        {
            "type": "scatter", "x": steps, "y": shift_aux, "mode": "lines", "name": "auxiliary loss",
            "legendgroup": "auxiliary loss", "showlegend": False,
            "line": {"color": pal["highlight"], "width": 2.5, "dash": "dash"}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": "step %{x}: %{y:.3f}<extra>auxiliary loss</extra>",
        },
        {
            "type": "scatter", "x": steps, "y": np.zeros(len(steps)), "mode": "lines", "name": "selection bias",
            "legendgroup": "selection bias", "showlegend": False,
            "line": {"color": pal["optimised"], "width": 2.5}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": "step %{x}: 0 (the affinities are the router's own)<extra>selection bias</extra>",
        },
    ]  # fmt: skip
    layout["xaxis"] |= {"showticklabels": False}
    layout["yaxis"] |= {"title": {"text": "max ÷ mean load"}, "rangemode": "tozero"}
    layout["xaxis2"] |= {"title": {"text": "step (a fresh batch each)"}, "matches": "x"}
    layout["yaxis2"] |= {"title": {"text": "p moved (TV)"}, "rangemode": "tozero"}
    layout["title"] = {"text": "One skewed router balanced two ways: only the loss changes its probabilities"}
    layout["hovermode"] = "closest"
    layout["legend"] = {"y": 1.02}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def parameters_figure(
    names: Sequence[str],
    total: Sequence[float],
    active: Sequence[float],
    chosen: int,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Total (resident: memory) against active (used per token: FLOPs) parameters of each MoE model, in billions;
    the page's model outlined."""
    pal = get_theme(theme).palette
    width = [3 if i == chosen else 0 for i in range(len(names))]
    data = [
        {
            "type": "bar", "x": list(names), "y": np.asarray(total) / 1e9, "name": "total: every expert resident",
            "marker": {"color": pal["reference"], "line": {"width": width, "color": pal["highlight"]}},
            "hovertemplate": "%{x}: %{y:.1f}B total<extra></extra>",
        },
        {
            "type": "bar", "x": list(names), "y": np.asarray(active) / 1e9, "name": "active: used by one token",
            "marker": {"color": pal["optimised"], "line": {"width": width, "color": pal["highlight"]}},
            "hovertemplate": "%{x}: %{y:.1f}B active<extra></extra>",
        },
    ]  # fmt: skip
    layout: dict[str, Any] = {
        "barmode": "group",
        "yaxis": {
            "title": {"text": "parameters (billions)"},
            "type": "log",
            "tickvals": [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
        },
        "xaxis": {"title": {"text": "model"}},
        "title": {"text": "Memory follows total parameters, FLOPs per token the active ones"},
        "legend": {"y": 1.02},
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
