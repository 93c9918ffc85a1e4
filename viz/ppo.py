"""Figures of the PPO page: the clip and its gradient, a token batch, GAE and its bias/variance, the KL estimators,
and the memory of the models held during RL.

Every builder takes what core computed (core.ppo's dataclasses and arrays) and only picks, rounds and formats
numbers. Figures are assembled from plain dicts through :func:`viz.style.figure` (tests/test_viz_style.py rebuilds
each one with plotly's validation); every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger
type).

- :func:`ppo_clip_figure`: objective and gradient against the ratio, A > 0 and A < 0 side by side, with a plotly
  slider over the ratio whose steps (method="update") move four markers and rewrite the readout in the browser.
- :func:`clip_batch_figure`: many tokens' (ratio, advantage), the clipped ones marked, the share of |d/dρ| kept.
- :func:`gae_figure`: a toy trajectory (rewards, values, TD errors) and its advantages for several lambdas.
- :func:`gae_bias_variance_figure`: bias², variance and their sum against lambda (closed form and samples).
- :func:`kl_estimators_figure`: k1, k2, k3 against r = pi_ref / pi_theta, and their mean ± std against the KL.
- :func:`rlhf_memory_figure`: bytes of each model for PPO, GRPO and DPO.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from core.ppo import KL_NAMES, ClipBatch, ClipCurve, GAEStudy, KLEstimates, KLEstimatorStudy, ModelMemory
from viz.format import fixed, nbytes
from viz.style import READOUT, figure, get_theme

_BAND = "rgba(128,128,128,0.15)"  # the clip range [1 - eps_low, 1 + eps_high]
_ZERO_GRAD = "rgba(213,94,0,0.12)"  # where the clip zeroes the gradient (vermillion, faint)
_KL_ROLES = ("negative", "rule", "optimised")  # k1, k2, k3


# --------------------------------------------------------------------------------------------------------------
# (1) the clip, with a browser-side ratio slider


def _sign_label(A: float) -> str:
    return f"A = {fixed(A, 2)} {'> 0' if A > 0 else '< 0' if A < 0 else '= 0'}"


def _clip_readout(curve: ClipCurve, i: int, compact: bool = False) -> str:
    """The readout at step ``i``; ``compact``: two short lines per advantage, for presenter mode's side column."""
    rho = curve.ratio[i]
    parts = [f"<b>ρ = {rho:.2f}</b>"]
    for s, A in enumerate(curve.advantage):
        g = curve.gradient[s, i]
        clipped = g == 0 and A != 0
        if compact:
            parts.append(f"A = {fixed(A, 2)}: objective {fixed(curve.objective[s, i])}")
            parts.append(f"    d/dρ = {fixed(g, 2)} ({'clipped' if clipped else 'full'})")
            continue
        state = "clipped: no gradient" if clipped else "full gradient"
        parts.append(f"{_sign_label(A)}: objective {fixed(curve.objective[s, i])}, d/dρ = {fixed(g, 2)} ({state})")
    return "<br>".join(parts)


def ppo_clip_figure(
    curve: ClipCurve, ratio: float, *, height: int = 620, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """min(rho A, clip(rho) A) and its derivative against rho, for the first two advantages of ``curve``.

    Columns: curve.advantage[0] (left) and [1] (right), typically +1 and -1. Top row: the clipped objective
    (orange) over the unclipped rho A (grey dashes); bottom row: d objective / d rho (a step: A inside the range
    and in the pessimistic direction, 0 where the clip took over). The grey band is [1 - eps_low, 1 + eps_high],
    the faint vermillion region where the gradient is zero. A slider over curve.ratio (one step per grid point,
    method="update") moves the four markers (traces 6-9) and rewrites the readout (annotations[0]); ``ratio``
    picks the starting step (the nearest grid point).
    """
    if curve.advantage.size < 2:
        raise ValueError("the clip figure shows two advantages side by side (e.g. +1 and -1)")
    t = get_theme(theme)
    pal = t.palette
    rho = curve.ratio
    active = int(np.argmin(np.abs(rho - float(ratio))))
    lo, hi = 1.0 - curve.eps_low, 1.0 + curve.eps_high
    axes = (("x", "y"), ("x2", "y2"), ("x3", "y3"), ("x4", "y4"))  # obj+, obj-, grad+, grad-
    data: list[dict[str, Any]] = []
    for s in range(2):
        xa, ya = axes[s]
        data.append({
            "type": "scatter", "x": rho, "y": curve.objective[s], "mode": "lines", "xaxis": xa, "yaxis": ya,
            "name": "clipped objective min(ρA, clip(ρ)A)", "legendgroup": "obj", "showlegend": s == 0,
            "line": {"color": pal["optimised"], "width": 3},
            "hovertemplate": "ρ = %{x:.2f}<br>objective %{y:.3f}<extra></extra>",
        })  # fmt: skip
        data.append({
            "type": "scatter", "x": rho, "y": curve.unclipped[s], "mode": "lines", "xaxis": xa, "yaxis": ya,
            "name": "unclipped ρA", "legendgroup": "unclipped", "showlegend": s == 0,
            "line": {"color": pal["neutral"], "width": 2, "dash": "dash"},
            "hovertemplate": "ρA = %{y:.3f}<extra></extra>",
        })  # fmt: skip
    for s in range(2):
        xa, ya = axes[2 + s]
        data.append({
            "type": "scatter", "x": rho, "y": curve.gradient[s], "mode": "lines", "xaxis": xa, "yaxis": ya,
            "line": {"color": pal["reference"], "width": 3, "shape": "hv"}, "name": "gradient d/dρ",
            "legendgroup": "grad", "showlegend": s == 0,
            "hovertemplate": "ρ = %{x:.2f}<br>d/dρ = %{y:.2f}<extra></extra>",
        })  # fmt: skip
    # traces 6-9: the markers at the slider's ratio
    marker_ys = (curve.objective[0], curve.objective[1], curve.gradient[0], curve.gradient[1])
    for (xa, ya), y in zip(axes, marker_ys, strict=True):
        data.append({
            "type": "scatter", "x": [rho[active]], "y": [y[active]], "mode": "markers", "xaxis": xa, "yaxis": ya,
            "showlegend": False, "hoverinfo": "skip",
            "marker": {"color": pal["optimised"], "size": 13, "line": {"color": t.text, "width": 1}},
        })  # fmt: skip

    steps = [
        {
            "method": "update",
            "label": f"{r:.2f}",
            "args": [
                {"x": [[r]] * 4, "y": [[float(y[i])] for y in marker_ys]},
                {"annotations[0].text": _clip_readout(curve, i, compact=presenter)},
                [6, 7, 8, 9],
            ],
        }
        for i, r in enumerate(rho)
    ]
    cols = ([0.0, 0.46], [0.54, 1.0])
    # objective on top, gradient below; the readout (three lines) sits above both, clear of the column titles
    rows = ([0.56, 0.78], [0.0, 0.40])
    if presenter:  # the readout and the legend stand right of the grid (see _PRESENTER_COLUMN_PX)
        cols, rows = ([0.0, 0.44], [0.56, 1.0]), ([0.55, 1.0], [0.0, 0.45])
    shapes: list[dict[str, Any]] = []
    for k, (xa, ya) in enumerate(axes):
        A = curve.advantage[k % 2]
        ref = {"xref": xa, "yref": f"{ya} domain", "y0": 0, "y1": 1, "layer": "below", "line": {"width": 0}}
        shapes.append({"type": "rect", "x0": lo, "x1": hi, "fillcolor": _BAND, **ref})
        if A > 0:
            shapes.append({"type": "rect", "x0": hi, "x1": float(rho[-1]), "fillcolor": _ZERO_GRAD, **ref})
        elif A < 0:
            shapes.append({"type": "rect", "x0": float(rho[0]), "x1": lo, "fillcolor": _ZERO_GRAD, **ref})
    annotations: list[dict[str, Any]] = [
        {
            "text": _clip_readout(curve, active, compact=presenter), "xref": "paper", "yref": "paper", "x": 0.0,
            "y": 1.0, "xanchor": "left", "yanchor": "top", "align": "left", "showarrow": False, "bgcolor": t.panel,
            "bordercolor": t.axis, "borderwidth": 1, "borderpad": 5, "name": READOUT,
        }
    ]  # fmt: skip
    asym = curve.eps_low != curve.eps_high  # clip-higher: name the bound each side uses
    bounds = ("> 1 + ε_high", "< 1 − ε_low") if asym else ("> 1 + ε", "< 1 − ε")
    for s in range(2):
        A = curve.advantage[s]
        gap = "<br>" if presenter else " "  # presenter: two lines over a narrower column
        annotations.append({
            "text": f"{_sign_label(A)}:{gap}no gradient once ρ {bounds[0] if A > 0 else bounds[1]}",
            "xref": "paper", "yref": "paper", "x": sum(cols[s]) / 2, "y": rows[0][1], "xanchor": "center",
            "yanchor": "bottom", "showarrow": False,
        })  # fmt: skip
    layout: dict[str, Any] = {
        "shapes": shapes,
        "annotations": annotations,
        "sliders": [
            {
                "active": active, "steps": steps, "currentvalue": {"prefix": "ratio ρ = "},
                "pad": {"t": 60}, "len": 1.0, "x": 0.0, "ticklen": 3, "minorticklen": 0,
                "font": {"size": 11},
            }
        ],
        "uirevision": "ppo-clip",
        "hovermode": "closest",
        "legend": {"orientation": "h", "yanchor": "top", "y": 0.49, "xanchor": "left", "x": 0},
        "margin": {"l": 60, "r": 20, "t": 20, "b": 40},
    }  # fmt: skip
    for k, (xa, ya) in enumerate(axes):
        n = "" if k == 0 else str(k + 1)
        layout[f"xaxis{n}"] = {
            "domain": cols[k % 2], "anchor": ya, "range": [float(rho[0]), float(rho[-1])],
            **({"title": {"text": "ratio ρ = π_θ / π_old"}} if k >= 2 else {}),
        }  # fmt: skip
        layout[f"yaxis{n}"] = {
            "domain": rows[k // 2], "anchor": xa, "zeroline": True,
            **({"title": {"text": "objective" if k == 0 else "d objective / dρ"}} if k % 2 == 0 else {}),
        }  # fmt: skip
    A_max = float(np.max(np.abs(curve.advantage[:2])))
    layout["yaxis3"]["range"] = layout["yaxis4"]["range"] = [-1.25 * A_max, 1.25 * A_max]
    if presenter:
        _clip_presenter_layout(data, layout)
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


# Presenter mode draws the figure in a box of about 960 x 475 px (1280 x 720, pages/frame PRESENTER_TOP_PX). The
# readout above the grid and the legend between its rows left each row a strip, so there the legend and the readout
# stand in a column right of the grid, the top row shares the bottom row's ratio ticks, and the slider, just under
# the ticks, names the ratio axis.
_PRESENTER_COLUMN_PX = 290
_LEGEND_LINE_PX = 25  # one line of a legend entry at presenter size (19 px type)


def _clip_presenter_layout(data: list[dict[str, Any]], layout: dict[str, Any]) -> None:
    for trace in data:
        if trace.get("showlegend") and trace["name"].startswith("clipped objective"):
            trace["name"] = "clipped objective<br>min(ρA, clip(ρ)A)"
    entries = [str(t["name"]) for t in data if t.get("showlegend")]
    legend_px = sum(_LEGEND_LINE_PX * (name.count("<br>") + 1) + 4 for name in entries)
    layout["annotations"][0] |= {"x": 1.0, "xshift": 12, "yshift": -legend_px - 14, "font": {"size": 14}}
    for k in (0, 1):  # the column titles: two lines in the top margin
        layout["annotations"][1 + k]["y"] = 1.0
    layout["xaxis"]["showticklabels"] = layout["xaxis2"]["showticklabels"] = False
    layout["legend"] = {"orientation": "v", "x": 1.0, "xanchor": "left", "y": 1.0, "yanchor": "top", "tracegroupgap": 4}
    layout["margin"] = {"l": 60, "r": _PRESENTER_COLUMN_PX, "t": 56, "b": 40}
    # the slider under the grid names the ratio axis (its title would need a row of its own)
    for key in ("xaxis3", "xaxis4"):
        layout[key].pop("title")
    layout["sliders"][0] |= {"pad": {"t": 44, "b": 6}, "currentvalue": {"prefix": "ratio ρ = π_θ / π_old = "}}


# --------------------------------------------------------------------------------------------------------------
# (2) a token batch


def clip_batch_figure(
    batch: ClipBatch, *, height: int = 480, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """Each token as a point (ratio, advantage): orange where its gradient survives, grey crosses where the clip
    zeroed it. Ratios outside the band in the pessimistic direction stay orange (full gradient). Traces: 0 = kept
    inside the range, 1 = kept outside it, 2 = clipped. The readout gives the shares.
    """
    t = get_theme(theme)
    pal = t.palette
    rho, A = batch.ratio, batch.advantage
    lo, hi = 1.0 - batch.eps_low, 1.0 + batch.eps_high
    kept_in = ~batch.clipped & ~batch.outside
    kept_out = ~batch.clipped & batch.outside
    groups = (
        (kept_in, "gradient kept (inside the range)", {"color": pal["optimised"], "size": 7}),
        (kept_out, "outside the range, gradient kept (pessimistic side)", {"color": pal["highlight"], "size": 8}),
        (batch.clipped, "clipped: gradient 0", {"color": pal["neutral"], "size": 8, "symbol": "x"}),
    )
    data = [
        {
            "type": "scatter", "x": rho[m], "y": A[m], "mode": "markers", "name": name, "marker": marker,
            "hovertemplate": "ρ = %{x:.3f}<br>A = %{y:.3f}<extra></extra>",
        }
        for m, name, marker in groups
    ]  # fmt: skip
    x_lo, x_hi = float(min(rho.min(), lo) * 0.95), float(max(rho.max(), hi) * 1.05)
    y_abs = float(np.max(np.abs(A))) * 1.1 if A.size else 1.0
    shapes = [
        {"type": "rect", "xref": "x", "yref": "y", "x0": lo, "x1": hi, "y0": -y_abs, "y1": y_abs,
         "fillcolor": _BAND, "line": {"width": 0}, "layer": "below"},
        {"type": "rect", "xref": "x", "yref": "y", "x0": hi, "x1": x_hi, "y0": 0, "y1": y_abs,
         "fillcolor": _ZERO_GRAD, "line": {"width": 0}, "layer": "below"},
        {"type": "rect", "xref": "x", "yref": "y", "x0": x_lo, "x1": lo, "y0": -y_abs, "y1": 0,
         "fillcolor": _ZERO_GRAD, "line": {"width": 0}, "layer": "below"},
    ]  # fmt: skip
    eps = (f"ε_low = {batch.eps_low:g}, ε_high = {batch.eps_high:g}" if batch.eps_low != batch.eps_high
           else f"ε = {batch.eps_low:g}")  # fmt: skip
    readout = (
        f"{rho.size} tokens, {eps}<br>"
        f"outside the range: {100 * batch.fraction_outside:.1f}%<br>"
        f"clipped (gradient 0): {100 * batch.fraction_clipped:.1f}%<br>"
        f"share of |d/dρ| kept: {100 * batch.surviving_share:.1f}% of Σ|A|"
    )
    layout = {
        "xaxis": {"title": {"text": "ratio ρ = π_θ / π_old"}, "range": [x_lo, x_hi]},
        "yaxis": {"title": {"text": "advantage A"}, "range": [-y_abs, y_abs], "zeroline": True},
        "shapes": shapes,
        "annotations": [
            {"text": readout, "xref": "paper", "yref": "paper", "x": 0.01, "y": 0.99, "xanchor": "left",
             "yanchor": "top", "align": "left", "showarrow": False, "bgcolor": t.panel}
        ],
        "uirevision": "ppo-batch",
        "hovermode": "closest",
    }  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


# --------------------------------------------------------------------------------------------------------------
# (3) GAE


def gae_figure(
    rewards: ArrayLike,
    values: ArrayLike,
    delta: ArrayLike,
    lams: Sequence[float],
    advantages: ArrayLike,
    lam: float | None = None,
    *,
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: a trajectory's rewards r_t (bars), the critic's V(s_t) (line, T+1 points, the last the bootstrap) and the
    TD errors delta_t. Right: the advantages A_t for each lambda in ``lams`` (advantages: (L, T), from core.ppo.gae),
    lambda = 0 (one-step TD) and 1 (Monte Carlo) named; the page's ``lam`` drawn thick.
    """
    pal = get_theme(theme).palette
    r = np.asarray(rewards, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    d = np.asarray(delta, dtype=np.float64)
    A = np.atleast_2d(np.asarray(advantages, dtype=np.float64))
    if A.shape != (len(lams), r.size) or v.size != r.size + 1 or d.size != r.size:
        raise ValueError("need advantages of shape (len(lams), T), values of length T+1 and delta of length T")
    t = np.arange(r.size)
    data: list[dict[str, Any]] = [
        {"type": "bar", "x": t, "y": r, "name": "reward r_t", "marker": {"color": pal["reference"]},
         "opacity": 0.75, "hovertemplate": "t = %{x}<br>r = %{y:.3f}<extra></extra>"},
        {"type": "scatter", "x": np.arange(r.size + 1), "y": v, "mode": "lines+markers", "name": "critic V(s_t)",
         "line": {"color": pal["optimum"], "width": 2.5}, "hovertemplate": "V(s_%{x}) = %{y:.3f}<extra></extra>"},
        {"type": "scatter", "x": t, "y": d, "mode": "markers", "name": "TD error δ_t",
         "marker": {"color": pal["negative"], "size": 10, "symbol": "diamond"},
         "hovertemplate": "δ_%{x} = %{y:.3f}<extra></extra>"},
    ]  # fmt: skip
    for k, (lm, row) in enumerate(zip(lams, A, strict=True)):
        name = f"λ = {lm:g}" + (" (one-step TD)" if lm == 0 else " (Monte Carlo)" if lm == 1 else "")
        current = lam is not None and abs(lm - lam) < 1e-12
        shade = 0.75 + 0.25 * (k / max(len(lams) - 1, 1))  # fainter for small lambda, still >= 3:1 contrast
        data.append({
            "type": "scatter", "x": t, "y": row, "mode": "lines+markers", "name": name, "xaxis": "x2",
            "yaxis": "y2", "line": {"color": pal["optimised"] if current else pal["reference"],
                                    "width": 4 if current else 1.5},
            "opacity": 1.0 if current else shade,
            "hovertemplate": f"λ = {lm:g}<br>A_%{{x}} = %{{y:.3f}}<extra></extra>",
        })  # fmt: skip
    layout = {
        "xaxis": {"domain": [0.0, 0.44], "title": {"text": "step t"}, "dtick": 1},
        "yaxis": {"zeroline": True, "title": {"text": "reward, value, δ"}},
        "xaxis2": {"domain": [0.56, 1.0], "anchor": "y2", "title": {"text": "step t"}, "dtick": 1},
        "yaxis2": {"anchor": "x2", "zeroline": True, "title": {"text": "advantage A_t"}},
        "uirevision": "ppo-gae",
        "hovermode": "closest",
    }  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def gae_bias_variance_figure(
    study: GAEStudy, lam: float | None = None, *, height: int = 420, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """Squared bias, variance and their sum (the mean squared error) of GAE's advantage against lambda: lines from
    the closed form, markers from the sampled trajectories. Bias falls and variance rises as lambda goes 0 -> 1;
    the best lambda (smallest exact error) and the page's lambda are marked by vertical lines.
    """
    t = get_theme(theme)
    pal = t.palette
    L = study.lam
    mse_x = study.bias_sq_exact + study.variance_exact
    series = (
        ("bias²", study.bias_sq_exact, study.bias_sq, pal["negative"]),
        ("variance", study.variance_exact, study.variance, pal["reference"]),
        ("bias² + variance", mse_x, study.mse, pal["optimum"]),
    )
    data: list[dict[str, Any]] = []
    for name, exact, sampled, colour in series:
        data.append({
            "type": "scatter", "x": L, "y": exact, "mode": "lines", "name": name, "legendgroup": name,
            "line": {"color": colour, "width": 3},
            "hovertemplate": f"λ = %{{x:.2f}}<br>{name} = %{{y:.4f}}<extra>exact</extra>",
        })  # fmt: skip
        data.append({
            "type": "scatter", "x": L, "y": sampled, "mode": "markers", "name": f"{name} ({study.n} samples)",
            "legendgroup": name, "showlegend": False, "marker": {"color": colour, "size": 8, "symbol": "circle-open"},
            "hovertemplate": f"λ = %{{x:.2f}}<br>{name} = %{{y:.4f}}<extra>sampled</extra>",
        })  # fmt: skip
    shapes = [
        {"type": "line", "xref": "x", "yref": "y domain", "x0": study.best_lam, "x1": study.best_lam, "y0": 0,
         "y1": 1, "line": {"color": pal["optimum"], "dash": "dot", "width": 2}}
    ]  # fmt: skip
    annotations = [
        {"x": study.best_lam, "y": 1, "xref": "x", "yref": "y domain",
         "text": f"best of the λ drawn: {study.best_lam:.3g} (γ = {study.gamma:g})",
         "showarrow": False, "yanchor": "bottom", "font": {"color": t.ink["optimum"]}}
    ]  # fmt: skip
    if lam is not None:
        shapes.append({"type": "line", "xref": "x", "yref": "y domain", "x0": lam, "x1": lam, "y0": 0, "y1": 1,
                       "line": {"color": pal["optimised"], "width": 2}})  # fmt: skip
    layout = {
        "xaxis": {"title": {"text": "λ  (0: one-step TD … 1: Monte Carlo)"}, "range": [-0.02, 1.02]},
        "yaxis": {
            "title": {"text": "squared error against Q(s,a) − the critic's V(s), mean over steps"},
            "rangemode": "tozero",
        },
        "shapes": shapes,
        "annotations": annotations,
        "uirevision": "ppo-gae-bv",
        "hovermode": "x unified",
    }  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


# --------------------------------------------------------------------------------------------------------------
# (4) KL estimators


def kl_estimators_figure(
    study: KLEstimatorStudy,
    ratio: ArrayLike,
    curves: KLEstimates,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: k1, k2, k3 as functions of r = pi_ref / pi_theta (log axis; ``curves`` = core.ppo.kl_estimators at the
    ratios ``ratio``): k1 goes negative for r > 1, k3 never does. Right: each estimator's exact mean ± one standard
    deviation per sample (bars with error bars), its sampled mean (diamonds) and the exact KL (a dashed line).
    """
    t = get_theme(theme)
    pal = t.palette
    kl_colours = [pal[role] for role in _KL_ROLES]
    r = np.asarray(ratio, dtype=np.float64)
    data: list[dict[str, Any]] = []
    formulas = ("k1 = −log r", "k2 = (log r)²/2", "k3 = (r − 1) − log r")
    for k, (f, colour) in enumerate(zip(formulas, kl_colours, strict=True)):
        data.append({
            "type": "scatter", "x": r, "y": np.asarray(getattr(curves, KL_NAMES[k]), dtype=np.float64),
            "mode": "lines", "name": f, "line": {"color": colour, "width": 3},
            "hovertemplate": f"r = %{{x:.3f}}<br>{KL_NAMES[k]} = %{{y:.4f}}<extra></extra>",
        })  # fmt: skip
    data.append({
        "type": "bar", "x": list(KL_NAMES), "y": study.mean, "xaxis": "x2", "yaxis": "y2",
        "marker": {"color": kl_colours}, "name": "exact mean ± std per sample", "showlegend": False,
        "error_y": {"type": "data", "array": study.std, "visible": True, "color": t.text},
        "customdata": np.column_stack([study.bias, study.std]),
        "hovertemplate": "%{x}: mean %{y:.4f}<br>bias %{customdata[0]:.4f}<br>std %{customdata[1]:.4f}<extra></extra>",
    })  # fmt: skip
    data.append({
        "type": "scatter", "x": list(KL_NAMES), "y": study.sample_mean, "xaxis": "x2", "yaxis": "y2",
        "mode": "markers", "name": f"mean of {study.n} samples",
        "marker": {"color": pal["neutral"], "size": 11, "symbol": "diamond",
                   "line": {"color": t.text, "width": 1}},
        "hovertemplate": "%{x}: sampled mean %{y:.4f}<extra></extra>",
    })  # fmt: skip
    shapes = [
        {"type": "line", "xref": "x2 domain", "yref": "y2", "x0": 0, "x1": 1, "y0": study.exact_kl,
         "y1": study.exact_kl, "line": {"color": pal["reference"], "dash": "dash", "width": 2}},
        {"type": "line", "xref": "x", "yref": "y", "x0": float(r.min()), "x1": float(r.max()), "y0": 0, "y1": 0,
         "line": {"color": pal["neutral"], "width": 1}},
    ]  # fmt: skip
    annotations = [
        {"x": 1, "y": study.exact_kl, "xref": "x2 domain", "yref": "y2", "xanchor": "right", "yanchor": "bottom",
         "text": f"exact KL = {study.exact_kl:.4f} nats", "showarrow": False, "font": {"color": t.ink["reference"]}}
    ]  # fmt: skip
    layout = {
        "xaxis": {"domain": [0.0, 0.55], "type": "log", "title": {"text": "r = π_ref / π_θ at a sampled token"}},
        "yaxis": {"title": {"text": "per-token estimate"}},
        "xaxis2": {"domain": [0.65, 1.0], "anchor": "y2"},
        "yaxis2": {"anchor": "x2", "title": {"text": "nats"}, "zeroline": True},
        "shapes": shapes,
        "annotations": annotations,
        "uirevision": "ppo-kl",
        "hovermode": "closest",
    }  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


# --------------------------------------------------------------------------------------------------------------
# (5) memory


def rlhf_memory_figure(
    methods: dict[str, Sequence[ModelMemory]], *, height: int = 380, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """Stacked horizontal bars: for each method (label -> core.ppo.rlhf_memory rows) the bytes of each model,
    orange for models that train (weights, gradients, Adam states), blue for frozen ones (weights only), every
    other model hatched. One trace per (model, role) so that the legend names the models; totals are written at
    the bars' ends.
    """
    t = get_theme(theme)
    pal = t.palette
    labels = list(methods)
    names: list[tuple[str, bool]] = []
    for rows in methods.values():
        for m in rows:
            if (m.name, m.trains) not in names:
                names.append((m.name, m.trains))
    data: list[dict[str, Any]] = []
    for k, (name, trains) in enumerate(names):
        x = [next((m.bytes / 1e9 for m in methods[lab] if m.name == name), 0.0) for lab in labels]
        data.append({
            "type": "bar", "orientation": "h", "y": labels, "x": x,
            "name": f"{name} ({'trains' if trains else 'frozen'})",
            "marker": {"color": pal["optimised"] if trains else pal["reference"],
                       "line": {"color": t.background, "width": 1},
                       # every other model hatched, so that neighbours of one colour stay apart (solid colours
                       # keep their contrast; a lighter shade would not)
                       **({"pattern": {"shape": "/", "fillmode": "overlay", "fgcolor": t.background,
                                       "solidity": 0.25}} if k % 2 else {})},
            "hovertemplate": f"{name}: %{{x:.1f}} GB<extra></extra>",
        })  # fmt: skip
    totals = [sum(m.bytes for m in methods[lab]) for lab in labels]
    annotations = [
        {"x": t / 1e9, "y": lab, "text": f" {nbytes(t)}", "xanchor": "left", "showarrow": False}
        for t, lab in zip(totals, labels, strict=True)
    ]
    layout = {
        "barmode": "stack",
        "xaxis": {"title": {"text": "GB (10⁹ bytes), without activations"}, "range": [0, 1.2 * max(totals) / 1e9]},
        "yaxis": {"autorange": "reversed"},
        "annotations": annotations,
        "uirevision": "ppo-memory",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
