"""Figures of the optimizers page: SGD, momentum, Adam, Adam with L2 and AdamW on a 2-D loss surface over its
contours (with a plotly slider over the learning rate), Adam's step size with and without bias correction, the
noise of the early second moment, LayerNorm against RMSNorm on one vector, the gradient norm by depth under pre-LN
and post-LN, and muP's coordinate check and best learning rate against width.

Builders take numbers computed by core (the view calls core, then these) and do no math beyond laying them out.
Every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.style import colorscale, figure, get_theme, grid, readout_panel, unlabelled_slider

_SLIDER_PAD, _SLIDER_PAD_PRESENTER = 56, 72
_SLIDER_HEIGHT = 80
_PLOT_WIDTH, _PLOT_WIDTH_PRESENTER = 0.66, 0.56
ROLES = ("neutral", "reference", "optimised", "highlight", "negative")  # sgd, momentum, adam, adam_l2, adamw
DASHES = ("solid", "solid", "solid", "dot", "dash")


def _path(p: np.ndarray) -> tuple[list[float | None], list[float | None]]:
    """x and y of a path (steps + 1, 2), non-finite points as gaps."""
    x = [float(v) if np.isfinite(v) else None for v in p[:, 0]]
    y = [float(v) if np.isfinite(v) else None for v in p[:, 1]]
    return x, y


def trajectory_figure(
    xs: np.ndarray,
    ys: np.ndarray,
    log_loss: np.ndarray,
    paths: Sequence[Sequence[np.ndarray]],
    names: Sequence[str],
    minimum: Sequence[float],
    lr_labels: Sequence[str],
    panels: Sequence[str],
    *,
    active: int = 0,
    title: str = "",
    height: int = 470,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The loss's contours (log10 of the loss, ``log_loss`` (ny, nx)), one path per optimizer (``paths[i][k]``: the
    k-th optimizer's positions (steps + 1, 2) at the i-th learning rate), the minimum, and a readout panel; a plotly
    slider over the learning rates (``lr_labels``) swaps the paths and the panel.

    Trace 0: the contours; 1..n: the paths; n + 1: the minimum."""
    t = get_theme(theme)
    pal = t.palette
    data: list[dict[str, Any]] = [
        {
            "type": "contour", "x": xs, "y": ys, "z": log_loss, "colorscale": colorscale("sequential", theme),
            "reversescale": True, "showscale": False, "ncontours": 18, "contours": {"coloring": "lines"},
            "line": {"width": 1}, "hoverinfo": "skip", "name": "loss contours",
        },
    ]  # fmt: skip
    for k, name in enumerate(names):
        x, y = _path(paths[active][k])
        role = ROLES[k % len(ROLES)]
        data.append({
            "type": "scatter", "x": x, "y": y, "mode": "lines+markers", "name": name,
            "line": {"color": pal[role], "width": 2, "dash": DASHES[k % len(DASHES)]}, "marker": {"size": 4},
            "hovertemplate": f"{name}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
        })  # fmt: skip
    data.append({
        "type": "scatter", "x": [minimum[0]], "y": [minimum[1]], "mode": "markers", "name": "minimum",
        "marker": {"symbol": "star", "size": 14, "color": pal["optimum"]}, "hoverinfo": "skip",
    })  # fmt: skip
    layout: dict[str, Any] = {
        "xaxis": {"title": {"text": "x"}, "range": [float(xs[0]), float(xs[-1])], "zeroline": False,
                  "domain": [0.0, _PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH]},
        "yaxis": {"title": {"text": "y"}, "range": [float(ys[0]), float(ys[-1])], "zeroline": False},
        "title": {"text": title},
        "annotations": [readout_panel(panels[active], t)],
        "legend": {"y": 0.0, "yanchor": "bottom", "x": 1.0, "xanchor": "right"},  # the right column, under the panel
        "hovermode": "closest",
        "uirevision": "optimizers-paths",
    }  # fmt: skip
    steps = []
    for i, label in enumerate(lr_labels):
        cols = [_path(paths[i][k]) for k in range(len(names))]
        steps.append({
            "method": "update", "label": label,
            "args": [{"x": [c[0] for c in cols], "y": [c[1] for c in cols]}, {"annotations[0].text": panels[i]},
                     list(range(1, len(names) + 1))],
        })  # fmt: skip
    pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
    layout["sliders"] = [unlabelled_slider(steps, active, "learning rate η = ", pad)]
    return figure(data, layout, theme=theme, presenter=presenter, height=height + _SLIDER_HEIGHT)


def bias_figure(
    t: np.ndarray, corrected: np.ndarray, uncorrected: np.ndarray, betas: str, first: float, *,
    theme: str = "light", presenter: bool = False,
) -> go.Figure:  # fmt: skip
    """Adam's step in units of η under a constant gradient, with and without bias correction, per step; ``first``
    is the uncorrected first step (units of η), which the title states."""
    pal = get_theme(theme).palette
    data = [
        {"type": "scatter", "x": t, "y": uncorrected, "mode": "lines+markers", "name": "without bias correction",
         "line": {"color": pal["reference"], "width": 2}, "marker": {"size": 5},
         "hovertemplate": "step %{x}: %{y:.3f} η<extra>uncorrected</extra>"},
        {"type": "scatter", "x": t, "y": corrected, "mode": "lines", "name": "with bias correction",
         "line": {"color": pal["optimised"], "width": 2},
         "hovertemplate": "step %{x}: %{y:.3f} η<extra>corrected</extra>"},
    ]  # fmt: skip
    layout = {
        "xaxis": {"title": {"text": "step t"}},
        "yaxis": {"title": {"text": "step size ÷ η (constant gradient)"}, "rangemode": "tozero"},
        "title": {"text": f"Adam's first steps, {betas}: the uncorrected step starts at {first:.2f} η"},
        "legend": {"y": 1.02},
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=430)


def warmup_figure(
    t: np.ndarray, v_quantiles: np.ndarray, rel_std: np.ndarray, rel_std_sim: np.ndarray, *, theme: str = "light",
    presenter: bool = False,
) -> go.Figure:  # fmt: skip
    """Left: v̂_t ÷ E[g²] across runs (5 %, median, 95 %); right: its relative standard deviation, closed form and
    simulated, log-scaled."""
    pal = get_theme(theme).palette
    ids, axes = grid(1, 2, hgap=0.12, titles=["v̂ ÷ E[g²] across runs", "relative std of v̂"])
    (a1, b1), (a2, b2) = ids
    data = [
        {"type": "scatter", "x": t, "y": v_quantiles[-1], "mode": "lines", "name": "95th percentile",
         "line": {"color": pal["reference"], "width": 1.5, "dash": "dot"}, "xaxis": a1, "yaxis": b1,
         "hovertemplate": "step %{x}: %{y:.3f}<extra>95%</extra>"},
        {"type": "scatter", "x": t, "y": v_quantiles[len(v_quantiles) // 2], "mode": "lines", "name": "median",
         "line": {"color": pal["optimised"], "width": 2}, "xaxis": a1, "yaxis": b1,
         "hovertemplate": "step %{x}: %{y:.3f}<extra>median</extra>"},
        {"type": "scatter", "x": t, "y": v_quantiles[0], "mode": "lines", "name": "5th percentile",
         "line": {"color": pal["reference"], "width": 1.5, "dash": "dash"}, "xaxis": a1, "yaxis": b1,
         "hovertemplate": "step %{x}: %{y:.3f}<extra>5%</extra>"},
        {"type": "scatter", "x": t, "y": rel_std, "mode": "lines", "name": "√(2 / n_eff)",
         "line": {"color": pal["neutral"], "width": 2}, "xaxis": a2, "yaxis": b2,
         "hovertemplate": "step %{x}: %{y:.3f}<extra>closed form</extra>"},
        {"type": "scatter", "x": t, "y": rel_std_sim, "mode": "lines", "name": "simulated",
         "line": {"color": pal["highlight"], "width": 2, "dash": "dot"}, "xaxis": a2, "yaxis": b2,
         "hovertemplate": "step %{x}: %{y:.3f}<extra>simulated</extra>"},
    ]  # fmt: skip
    axes[f"xaxis{a1[1:]}"] |= {"title": {"text": "step t"}}
    axes[f"xaxis{a2[1:]}"] |= {"title": {"text": "step t"}}
    axes[f"yaxis{b2[1:]}"] |= {"type": "log"}
    layout = {**axes, "title": {"text": "Adam's second moment from few gradients: one argument for warm-up"},
              "legend": {"y": -0.18, "yanchor": "top", "orientation": "h"}}  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=450)


def norm_figure(
    x: np.ndarray, ln: np.ndarray, rms: np.ndarray, *, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """One vector's coordinates before and after LayerNorm and RMSNorm (no gain, no bias)."""
    pal = get_theme(theme).palette
    i = np.arange(len(x))
    data = [
        {"type": "bar", "x": i, "y": x, "name": "input x", "marker": {"color": pal["neutral"]},
         "hovertemplate": "coordinate %{x}: %{y:.3f}<extra>x</extra>"},
        {"type": "bar", "x": i, "y": ln, "name": "LayerNorm(x)", "marker": {"color": pal["optimised"]},
         "hovertemplate": "coordinate %{x}: %{y:.3f}<extra>LayerNorm</extra>"},
        {"type": "bar", "x": i, "y": rms, "name": "RMSNorm(x)", "marker": {"color": pal["reference"]},
         "hovertemplate": "coordinate %{x}: %{y:.3f}<extra>RMSNorm</extra>"},
    ]  # fmt: skip
    layout = {
        "barmode": "group",
        "xaxis": {"title": {"text": "coordinate"}, "dtick": 1},
        "yaxis": {"title": {"text": "value"}},
        "title": {"text": "LayerNorm removes the mean and the scale; RMSNorm only the scale"},
        "legend": {"y": 1.02},
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=430)


def depth_figure(
    pre: np.ndarray, post: np.ndarray, init: str, *, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """Each block's gradient norm at initialisation, pre-LN and post-LN, block 1 at the bottom of the stack."""
    pal = get_theme(theme).palette
    blocks = np.arange(1, len(pre) + 1)
    data = [
        {"type": "scatter", "x": blocks, "y": post, "mode": "lines+markers", "name": "post-LN",
         "line": {"color": pal["reference"], "width": 2},
         "hovertemplate": "block %{x}: %{y:.3g}<extra>post-LN</extra>"},
        {"type": "scatter", "x": blocks, "y": pre, "mode": "lines+markers", "name": "pre-LN",
         "line": {"color": pal["optimised"], "width": 2},
         "hovertemplate": "block %{x}: %{y:.3g}<extra>pre-LN</extra>"},
    ]  # fmt: skip
    layout = {
        "xaxis": {"title": {"text": "block (1 = next to the embedding)"}, "dtick": 1},
        "yaxis": {"title": {"text": "gradient norm of the block's parameters"}, "type": "log"},
        "title": {"text": f"Gradient norm by depth at initialisation, {len(pre)} blocks, {init} init"},
        "legend": {"y": 1.02},
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=430)


def mup_figure(
    widths: np.ndarray,
    sp_out: np.ndarray,
    mup_out: np.ndarray,
    mup_hidden: np.ndarray,
    sweep_widths: np.ndarray,
    lrs: np.ndarray,
    sp_loss: np.ndarray,
    mup_loss: np.ndarray,
    *,
    sp_hidden: np.ndarray | None = None,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: the coordinate check (the output's mean |coordinate| against width, SP and muP, and the second hidden
    layer's, muP's and, given ``sp_hidden``, SP's); right: final training loss against the LR per width, SP dashed,
    muP solid."""
    t = get_theme(theme)
    pal = t.palette
    ids, axes = grid(1, 2, hgap=0.12, titles=["coordinate check", "final loss against learning rate"])
    (a1, b1), (a2, b2) = ids
    data: list[dict[str, Any]] = [
        {"type": "scatter", "x": widths, "y": sp_out, "mode": "lines+markers", "name": "output, SP",
         "line": {"color": pal["reference"], "width": 2}, "xaxis": a1, "yaxis": b1,
         "hovertemplate": "width %{x}: %{y:.3f}<extra>output, SP</extra>"},
        {"type": "scatter", "x": widths, "y": mup_out, "mode": "lines+markers", "name": "output, muP",
         "line": {"color": pal["optimised"], "width": 2}, "xaxis": a1, "yaxis": b1,
         "hovertemplate": "width %{x}: %{y:.3f}<extra>output, muP</extra>"},
        {"type": "scatter", "x": widths, "y": mup_hidden, "mode": "lines+markers", "name": "hidden layer 2, muP",
         "line": {"color": pal["optimised"], "width": 2, "dash": "dot"}, "xaxis": a1, "yaxis": b1,
         "hovertemplate": "width %{x}: %{y:.3f}<extra>hidden 2, muP</extra>"},
    ]  # fmt: skip
    if sp_hidden is not None:
        data.append({
            "type": "scatter", "x": widths, "y": sp_hidden, "mode": "lines+markers", "name": "hidden layer 2, SP",
            "line": {"color": pal["reference"], "width": 2, "dash": "dot"}, "xaxis": a1, "yaxis": b1,
            "hovertemplate": "width %{x}: %{y:.3f}<extra>hidden 2, SP</extra>",
        })  # fmt: skip
    seq = t.sequence
    for i, w in enumerate(sweep_widths):
        c = seq[(i + 2) % len(seq)]
        for name, loss, dash in (("SP", sp_loss, "dash"), ("muP", mup_loss, "solid")):
            y = [float(v) if np.isfinite(v) else None for v in loss[i]]
            data.append({
                "type": "scatter", "x": lrs, "y": y, "mode": "lines+markers", "name": f"width {int(w)}, {name}",
                "line": {"color": c, "width": 2, "dash": dash}, "xaxis": a2, "yaxis": b2,
                "hovertemplate": f"η %{{x:.3g}}: %{{y:.4f}}<extra>width {int(w)}, {name}</extra>",
            })  # fmt: skip
    axes[f"xaxis{a1[1:]}"] |= {"title": {"text": "width n"}, "type": "log"}
    axes[f"yaxis{b1[1:]}"] |= {"title": {"text": "mean |coordinate|"}, "rangemode": "tozero"}
    axes[f"xaxis{a2[1:]}"] |= {"title": {"text": "Adam learning rate η"}, "type": "log"}
    axes[f"yaxis{b2[1:]}"] |= {"title": {"text": "final training loss (MSE)"}, "type": "log"}
    title = "muP: hidden activations stay put; SP's loss at large η worsens with width, muP's does not"
    layout = {**axes, "title": {"text": title},
              "legend": {"y": -0.2, "yanchor": "top", "orientation": "h"}}  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=500)
