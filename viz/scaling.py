"""Figures of the scaling page: the iso-FLOP U-curve with a draggable plan, and a family of budgets.

Both are assembled as plain dicts through :func:`viz.style.figure` (no per-property validation: with a hundred
slider steps it would be the slowest part of a page rerun); tests/test_viz_style.py validates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from core.scaling import Plan
from viz import format as fmt
from viz.style import READOUT, figure, get_theme

PLAN_TRACE = 3  # index of the plan marker, the trace the slider moves


def plan_readout(p: Plan, i: int | None = None, *, compact: bool = False) -> str:
    """The annotation text for one plan (entry ``i`` of a sweep, or a scalar plan).

    ``compact``: five short lines for the narrow column beside the plot in presenter mode (same numbers).
    """

    def pick(v: float | NDArray) -> float:
        return float(v[i]) if i is not None else float(v)

    if compact:
        return (
            f"<b>Your plan</b>: N = {fmt.count(pick(p.N))}<br>"
            f"D = {fmt.count(pick(p.D))} ({pick(p.tokens_per_param):.1f} tok/param)<br>"
            f"loss {pick(p.loss):.3f}, {pick(p.excess_pct):+.2f}% vs min<br>"
            f"{fmt.duration(p.train_seconds)} · states {fmt.nbytes(pick(p.memory_bytes))}<br>"
            f"serving {fmt.sci(pick(p.serving_flops_per_token))} FLOP/tok"
        )
    return (
        f"<b>Your plan</b>: N = {fmt.count(pick(p.N))} params on D = {fmt.count(pick(p.D))} tokens "
        f"({pick(p.tokens_per_param):.1f} tokens/param)<br>"
        f"loss {pick(p.loss):.3f} nats, {pick(p.excess_pct):+.2f}% vs the fit's minimum<br>"
        f"training {fmt.duration(p.train_seconds)} · states {fmt.nbytes(pick(p.memory_bytes))} · "
        f"serving {fmt.sci(pick(p.serving_flops_per_token))} FLOP/token"
    )


def _point(name: str, x: float, y: float, marker: dict[str, Any], hover: str) -> dict[str, Any]:
    return {
        "type": "scatter",
        "x": [x],
        "y": [y],
        "mode": "markers",
        "name": name,
        "marker": marker,
        "hovertemplate": hover + "<br>N = %{x:.3s}<br>L = %{y:.4f}<extra></extra>",
    }


def isoflop_figure(
    curve: Plan,
    current: Plan,
    slider: Plan,
    slider_active: int,
    fit_label: str,
    other_fit: tuple[str, float] | None = None,
    *,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The U-curve of one budget with the fit's minimum, the 20-tokens point and the user's plan.

    ``curve`` is a :class:`Plan` sweep over many N (drawn as the line); ``current`` the plan of the page's
    controls; ``slider`` a sweep whose entries become the steps of a plotly slider that moves the plan marker
    (trace :data:`PLAN_TRACE`) and its readout (annotation 0) in the browser, with no server round trip;
    ``slider_active`` the step shown first. ``other_fit`` = (label, N_opt) marks where another fit puts the
    optimum on the same budget. ``theme``: "light" or "dark"; ``presenter``: larger type for a room.
    """
    t = get_theme(theme)
    pal = t.palette
    outline = {"color": t.text, "width": 1}
    data = [
        {
            "type": "scatter",
            "x": curve.N,
            "y": curve.loss,
            "mode": "lines",
            "name": f"L(N, C/6N),<br>{fmt.wrap(fit_label, 24)}" if presenter else f"L(N, C/6N), {fit_label}",
            "line": {"color": pal["reference"], "width": 3},
            "customdata": np.stack([curve.D, curve.tokens_per_param], axis=-1),
            "hovertemplate": "N = %{x:.3s}<br>D = %{customdata[0]:.3s} tokens"
            "<br>%{customdata[1]:.1f} tokens/param<br>L = %{y:.4f}<extra></extra>",
        },
        _point(
            f"fit's minimum{'<br>' if presenter else ' '}({current.tokens_per_param_opt:.0f} tokens/param)",
            current.N_opt,
            current.loss_opt,
            {"color": pal["optimised"], "size": 15, "line": outline},
            "fit's minimum",
        ),
        _point(
            "20 tokens/param" if presenter else "20 tokens per parameter",
            current.N_rule,
            current.loss_rule,
            {"color": pal["rule"], "size": 15, "symbol": "square", "line": outline},
            "20 tokens/param",
        ),
        _point(
            "your plan (slider)" if presenter else "your plan (drag the slider below)",
            float(slider.N[slider_active]),
            float(slider.loss[slider_active]),
            {"color": pal["highlight"], "size": 20, "symbol": "diamond", "line": {"color": t.text, "width": 1.5}},
            "your plan",
        ),
    ]
    annotations: list[dict[str, Any]] = [
        {  # annotation 0: the plan's readout, rewritten by the slider
            "text": plan_readout(slider, slider_active, compact=presenter),
            "xref": "paper",
            "yref": "paper",
            "x": 0,
            "y": -0.27,
            "xanchor": "left",
            "yanchor": "top",
            "showarrow": False,
            "align": "left",
        }
    ]
    if presenter:  # beside the plot, under the legend (see _presenter_layout)
        annotations[0] |= {
            "x": 1.0,
            "y": 1.0,
            "xshift": _COLUMN_GAP_PX,
            "yshift": -_legend_px(data) - 14,
            "font": {"size": 14},
            "bgcolor": t.panel,
            "bordercolor": t.axis,
            "borderwidth": 1,
            "borderpad": 4,
            "name": READOUT,
        }
    shapes: list[dict[str, Any]] = []
    if other_fit is not None:
        label, n_opt = other_fit
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": n_opt,
                "x1": n_opt,
                "y0": 0,
                "y1": 1,
                "line": {"color": pal["neutral"], "dash": "dot", "width": 2},
            }
        )
        annotations.append(
            {
                "x": float(np.log10(n_opt)),  # log axes place annotations by log10
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "text": fmt.wrap(f"{label} puts the optimum here", 24)
                if presenter
                else f"{label}<br>puts the optimum here",
                "showarrow": False,
                "xanchor": "right" if presenter and n_opt > float(np.sqrt(curve.N[0] * curve.N[-1])) else "left",
                "yanchor": "top",
                "font": {"color": t.ink["neutral"], "size": 13},
            }
        )
    steps = [
        {
            "method": "update",
            "label": fmt.count(float(n)),
            "args": [
                {"x": [[float(n)]], "y": [[float(loss)]]},
                {"annotations[0].text": plan_readout(slider, i, compact=presenter)},
                [PLAN_TRACE],
            ],
        }
        for i, (n, loss) in enumerate(zip(slider.N, slider.loss, strict=True))
    ]
    # the readout (three lines) and the slider sit under the plot: room for them at the type's size
    below = 175 if not presenter else 230
    layout = {
        "title": {"text": f"One budget, C = {fmt.sci(current.C)} FLOPs", "x": 0, "y": 0.99},
        "xaxis": {"type": "log", "title": {"text": "model size N (parameters); tokens D = C / (6N)"}},
        "yaxis": {"title": {"text": "final loss L (nats per token)"}},
        "annotations": annotations,
        "shapes": shapes,
        "sliders": [
            {
                "active": int(slider_active),
                "steps": steps,
                "currentvalue": {"prefix": "plan: N = "},
                "pad": {"t": below, "b": 10},
                "len": 1.0,
                "x": 0,
            }
        ],
        "margin": {"l": 60, "r": 20, "t": 70, "b": 40},
        "uirevision": "isoflop",
    }
    if presenter:
        layout = _presenter_layout(layout)
    return figure(data, layout, theme=theme, presenter=presenter, height=640)


# Presenter mode draws the figure in a box of about 960 x 475 px (1280 x 720, pages/frame PRESENTER_TOP_PX): a
# legend and a readout above or under the plot leave it a strip. There the legend and the plan's readout stand in a
# column right of the plot, and the slider sits just under the x-axis title.
_COLUMN_PX = 290  # the right margin: the legend and readout column
_COLUMN_GAP_PX = 12
_LEGEND_LINE_PX = 25  # one line of a legend entry at presenter size (19 px type)


def _legend_px(data: Sequence[dict[str, Any]]) -> int:
    """About how tall the vertical legend of ``data`` is at presenter size, in px."""
    entries = [str(t["name"]) for t in data if t.get("showlegend", True) and t.get("name")]
    return sum(_LEGEND_LINE_PX * (name.count("<br>") + 1) + 4 for name in entries)


def _presenter_layout(layout: dict[str, Any]) -> dict[str, Any]:
    return layout | {
        "legend": {
            "orientation": "v",
            "x": 1.0,
            "xanchor": "left",
            "xref": "paper",
            "y": 1.0,
            "yanchor": "top",
            "tracegroupgap": 4,
        },
        "margin": {"l": 60, "r": _COLUMN_PX, "t": 40, "b": 40},
        "xaxis": layout["xaxis"] | {"title": layout["xaxis"]["title"] | {"standoff": 6}},
        "sliders": [layout["sliders"][0] | {"pad": {"t": 68, "b": 6}}],
    }


def isoflop_family_figure(
    budgets: Sequence[float],
    N: NDArray[np.float64],
    loss: NDArray[np.float64],
    N_opt: NDArray[np.float64],
    loss_opt: NDArray[np.float64],
    current_budget: float | None = None,
    *,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Chinchilla's iso-FLOP picture: one U-curve per budget (rows of ``N``, ``loss``) and the frontier.

    The compute-optimal frontier joins the minima (``N_opt``, ``loss_opt``); the budget nearest to
    ``current_budget`` is drawn bold.
    """
    pal = get_theme(theme).palette
    budgets = np.asarray(budgets, dtype=float)
    bold = int(np.argmin(np.abs(np.log(budgets / current_budget)))) if current_budget else -1
    shades = np.linspace(0.35, 1.0, len(budgets))
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": N[i],
            "y": loss[i],
            "mode": "lines",
            "name": f"C = {fmt.sci(C, 2)}",
            "line": {"color": pal["reference"], "width": 4 if i == bold else 1.5},
            # the other budgets are deliberately faint (opacity below 0.5): context for the bold one and the frontier
            "opacity": 1.0 if i == bold or bold < 0 else 0.2 + 0.25 * float(shades[i]),
            "hovertemplate": f"C = {fmt.sci(C, 2)}<br>" + "N = %{x:.3s}<br>L = %{y:.4f}<extra></extra>",
        }
        for i, C in enumerate(budgets)
    ]
    data.append(
        {
            "type": "scatter",
            "x": N_opt,
            "y": loss_opt,
            "mode": "lines+markers+text",
            "text": [fmt.sci(C, 1) for C in budgets],
            "textposition": "bottom center",
            "name": "compute-optimal frontier",
            "line": {"color": pal["optimised"], "width": 3, "dash": "dash"},
            "marker": {"size": 10, "color": pal["optimised"], "line": {"color": get_theme(theme).text, "width": 1}},
            "hovertemplate": "minimum<br>N_opt = %{x:.3s}<br>L = %{y:.4f}<extra></extra>",
        }
    )
    layout = {
        "title": {"text": "A family of budgets: each U has its own bottom", "x": 0},
        "xaxis": {"type": "log", "title": {"text": "model size N (parameters)"}},
        "yaxis": {"title": {"text": "final loss L (nats per token)"}},
        "uirevision": "isoflop-family",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=480, legend=False)
