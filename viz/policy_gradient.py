"""Figures of the policy-gradient page: the spread of each gradient estimator on a bandit of a few answers (its exact
mean against the true gradient and the exact standard deviation of its projection on it, seeded draws as points, a
plotly slider over the group size), the baseline's expected contribution summed answer by answer beside the variance
against the baseline, the group baselines' bias against G and with 0/1 rewards, and learning curves.

Builders take numbers computed by core.policy_gradient (the view calls core, then these) and do no math beyond laying
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
_PLOT_WIDTH, _PLOT_WIDTH_PRESENTER = 0.66, 0.56
_COLOURS = ("reference", "neutral", "optimised", "optimum", "highlight", "negative", "rule")


def spread_figure(
    labels: Sequence[str],
    points: Sequence[np.ndarray],
    means: Sequence[np.ndarray],
    sds: Sequence[np.ndarray],
    jitter: np.ndarray,
    steps_labels: Sequence[str],
    panels: Sequence[str],
    *,
    active: int = 0,
    x_range: tuple[float, float] = (-3.0, 5.0),
    height: int = 470,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """One row per estimator (``labels``, top to bottom): its seeded draws as points, its exact mean as a diamond and
    the exact mean ± one standard deviation as a bar, all projected on the true gradient and in its units (the true
    gradient at 1, a dashed line). ``sds`` is the projection's own standard deviation, √(∇Jᵀ Cov ∇J) / |∇J|², the
    spread the points show (not √tr Cov, which counts the directions orthogonal to ∇J too). A plotly slider over the
    group sizes (``steps_labels``, the page's at ``active``) moves the points, the means, the bars and the readout
    panel (``panels``).

    ``points[i]``: (estimators, draws) projections at step i; ``means[i]``, ``sds[i]``: (estimators,).
    ``jitter``: (draws,) vertical offsets of the points within a row, the same at every step.
    Trace 0: the draws; 1 to n: each estimator's bar (two points each: no NaN gaps, which plotly's restyle and its
    JSON encoding would count differently); n + 1: the means; then the true gradient and zero.
    """
    t = get_theme(theme)
    pal = t.palette
    n = len(labels)
    rows = np.arange(n)[::-1].astype(float)  # the first estimator on top
    draws = points[active].shape[1]
    py = (rows[:, None] + jitter[None, :]).ravel()
    colours = [pal[_COLOURS[i % len(_COLOURS)]] for i in range(n)]
    point_colours = [c for c in colours for _ in range(draws)]

    def bars(i: int) -> list[np.ndarray]:
        return [np.array([means[i][j] - sds[i][j], means[i][j] + sds[i][j]]) for j in range(n)]

    top = n - 0.5
    data: list[dict[str, Any]] = [
        {
            "type": "scatter", "x": points[active].ravel(), "y": py, "mode": "markers",
            "name": "seeded draws", "marker": {"color": point_colours, "size": 4, "opacity": 0.35},
            "hovertemplate": "%{x:.2f}<extra>one draw</extra>",
        },
    ]  # fmt: skip
    data += [
        {
            "type": "scatter", "x": x, "y": [rows[j], rows[j]], "mode": "lines", "name": "exact mean ± 1 sd along ∇J",
            "legendgroup": "sd", "showlegend": j == 0, "line": {"color": t.text, "width": 2.5}, "hoverinfo": "skip",
        }
        for j, x in enumerate(bars(active))
    ]  # fmt: skip
    data += [
        {
            "type": "scatter", "x": means[active], "y": rows, "mode": "markers", "name": "exact mean",
            "marker": {"color": colours, "size": 12, "symbol": "diamond", "line": {"color": t.text, "width": 1}},
            "hovertemplate": "mean %{x:.3f}<extra></extra>",
        },
        {
            "type": "scatter", "x": [1.0, 1.0], "y": [-0.5, top], "mode": "lines", "name": "true gradient ∇J",
            "line": {"color": pal["optimum"], "width": 2, "dash": "dash"}, "hoverinfo": "skip",
        },
        {
            "type": "scatter", "x": [0.0, 0.0], "y": [-0.5, top], "mode": "lines", "name": "zero", "showlegend": False,
            "line": {"color": pal["neutral"], "width": 1}, "hoverinfo": "skip",
        },
    ]  # fmt: skip
    layout: dict[str, Any] = {
        "xaxis": {
            "title": {"text": "estimate projected on ∇J, in units of |∇J|"},
            "range": list(x_range),
            "zeroline": False,
            "domain": [0.0, _PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH],
        },
        "yaxis": {"tickvals": rows, "ticktext": list(labels), "range": [-0.6, top + 0.1], "zeroline": False},
        "title": {"text": "One update's gradient estimate: where it lands, for each baseline"},
        "annotations": [readout_panel(panels[active], t)],
        "legend": {"y": 1.02},
        "hovermode": "closest",
        "uirevision": "pg-spread",
    }
    steps = []
    for i, label in enumerate(steps_labels):
        xs = [points[i].ravel(), *bars(i), means[i]]
        steps.append(
            {
                "method": "update",
                "label": label,
                "args": [{"x": xs}, {"annotations[0].text": panels[i]}, list(range(len(xs)))],
            }
        )
    pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
    layout["sliders"] = [unlabelled_slider(steps, active, "group size G = ", pad)]
    return figure(data, layout, theme=theme, presenter=presenter, height=height + _SLIDER_HEIGHT)


def zero_figure(
    terms: np.ndarray,
    sums: np.ndarray,
    answer_labels: Sequence[str],
    bs: np.ndarray,
    variance: np.ndarray,
    b: float,
    b_star: float,
    mean_reward: float,
    *,
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: the baseline's expected contribution Σ_a π_a b (e_a − π), term by term: for each component θ_k a stack
    of the K terms (``terms[a, k]``, one colour per answer a) and their sum (``sums``, zero to rounding) as a marker.
    Right: the trace of the covariance against the constant baseline (``bs``, ``variance``), the page's b, the mean
    reward and the best constant b* marked."""
    t = get_theme(theme)
    pal = t.palette
    ids, layout = grid(1, 2, widths=[1.0, 1.0], hgap=0.14, titles=["Σ over answers, term by term", "variance"])
    (x1, y1), (x2, y2) = ids
    comps = [f"θ_{a}" for a in answer_labels]
    data: list[dict[str, Any]] = [
        {
            "type": "bar", "x": comps, "y": terms[a], "name": f"answer {label}: π_{label} b (e_{label} − π)",
            "marker": {"color": pal[_COLOURS[a % len(_COLOURS)]]}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": f"answer {label}: %{{y:.4f}}<extra>%{{x}}</extra>",
        }
        for a, label in enumerate(answer_labels)
    ]  # fmt: skip
    data += [
        {
            "type": "scatter", "x": comps, "y": sums, "mode": "markers", "name": "the sum: 0",
            "marker": {"color": t.text, "size": 12, "symbol": "x"}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": "sum %{y:.1e}<extra>%{x}</extra>",
        },
        {
            "type": "scatter", "x": bs, "y": variance, "mode": "lines", "name": "tr Cov against b",
            "line": {"color": pal["reference"], "width": 2.5}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": "b = %{x:.2f}: %{y:.3f}<extra></extra>",
        },
    ]  # fmt: skip
    at = [float(np.interp(v, bs, variance)) for v in (b, mean_reward, b_star)]
    marks = (("your b", b, at[0], "circle", pal["highlight"]), ("mean reward E[r]", mean_reward, at[1], "square",
             pal["optimised"]), ("best constant b*", b_star, at[2], "diamond", pal["optimum"]))  # fmt: skip
    data += [
        {
            "type": "scatter", "x": [x], "y": [y], "mode": "markers", "name": name,
            "marker": {"color": colour, "size": 12, "symbol": symbol}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": f"{name}: b = %{{x:.3f}}, %{{y:.4f}}<extra></extra>",
        }
        for name, x, y, symbol, colour in marks
    ]  # fmt: skip
    layout["barmode"] = "relative"
    layout["yaxis"] |= {"title": {"text": "term of the expected gradient"}}
    layout["xaxis2"] |= {"title": {"text": "constant baseline b"}}
    layout["yaxis2"] |= {"title": {"text": "tr Cov[g]"}, "rangemode": "tozero"}
    layout["title"] = {"text": "A baseline adds zero in expectation and changes only the variance"}
    layout["legend"] = {"y": 1.02}
    layout["hovermode"] = "closest"
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def group_figure(
    Gs: np.ndarray,
    scales: dict[str, np.ndarray],
    G: int,
    p: np.ndarray,
    binary_scale: np.ndarray,
    *,
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: each group estimator's expected gradient projected on the true one, in its units, against the group
    size (``scales``: label -> values over ``Gs``), the page's G marked. Right: with 0/1 rewards, the std-normalised
    estimate's E[g] ÷ ∇J against the success rate p at the page's G (``binary_scale``): a weight per prompt."""
    t = get_theme(theme)
    pal = t.palette
    ids, layout = grid(1, 2, widths=[1.0, 1.0], hgap=0.14,
                       titles=["your rewards: E[g] on ∇J against G", f"0/1 rewards, G = {G}: E[g] ÷ ∇J"])  # fmt: skip
    (x1, y1), (x2, y2) = ids
    colours = (pal["highlight"], pal["negative"], pal["rule"])
    dashes = ("solid", "dash", "solid")
    data: list[dict[str, Any]] = [
        {
            "type": "scatter", "x": Gs, "y": y, "mode": "lines+markers", "name": name,
            "line": {"color": colours[i % 3], "width": 2.5, "dash": dashes[i % 3]}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": f"G = %{{x}}: %{{y:.3f}}<extra>{name}</extra>",
        }
        for i, (name, y) in enumerate(scales.items())
    ]  # fmt: skip
    data += [
        {
            "type": "scatter", "x": [G, G], "y": [0.0, max(float(np.max(v)) for v in scales.values()) * 1.05],
            "mode": "lines", "name": "your G", "line": {"color": pal["neutral"], "width": 1, "dash": "dot"},
            "xaxis": x1, "yaxis": y1, "hoverinfo": "skip",
        },
        {
            "type": "scatter", "x": p, "y": binary_scale, "mode": "lines", "name": "mean and std, 0/1 rewards",
            "line": {"color": pal["rule"], "width": 2.5, "dash": "dot"}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": "p = %{x:.2f}: %{y:.2f}<extra></extra>",
        },
    ]  # fmt: skip
    layout["xaxis"] |= {"title": {"text": "group size G"}}
    layout["yaxis"] |= {"title": {"text": "E[g]·∇J / |∇J|²"}, "rangemode": "tozero"}
    layout["xaxis2"] |= {"title": {"text": "success rate p of the prompt"}, "range": [0, 1]}
    layout["yaxis2"] |= {"title": {"text": "E[g] ÷ ∇J"}, "rangemode": "tozero"}
    layout["title"] = {"text": "Group baselines: a shrink, no bias, or a weight that depends on the rewards"}
    layout["legend"] = {"y": 1.02}
    layout["hovermode"] = "closest"
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def learning_figure(
    steps: np.ndarray,
    curves: dict[str, np.ndarray],
    spreads: dict[str, np.ndarray],
    mode: str,
    best: float,
    *,
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The expected reward J along gradient ascent with each estimator (``curves``: label -> J per step), with a band
    of one standard deviation across the runs where ``mode`` is "sampled"; the best reward as a dotted line."""
    t = get_theme(theme)
    pal = t.palette
    data: list[dict[str, Any]] = []
    for i, (name, y) in enumerate(curves.items()):
        colour = pal[_COLOURS[i % len(_COLOURS)]]
        if mode == "sampled":
            s = spreads[name]
            data.append(
                {
                    "type": "scatter", "x": np.concatenate([steps, steps[::-1]]),
                    "y": np.concatenate([y + s, (y - s)[::-1]]), "fill": "toself", "mode": "lines",
                    "line": {"width": 0, "color": colour}, "opacity": 0.15, "showlegend": False,
                    "legendgroup": name, "hoverinfo": "skip", "name": name,
                }
            )  # fmt: skip
        data.append(
            {
                "type": "scatter", "x": steps, "y": y, "mode": "lines", "name": name, "legendgroup": name,
                "line": {"color": colour, "width": 2.5, "dash": "dash" if i % 2 else "solid"},
                "hovertemplate": f"step %{{x}}: J = %{{y:.3f}}<extra>{name}</extra>",
            }
        )  # fmt: skip
    data.append(
        {
            "type": "scatter", "x": [steps[0], steps[-1]], "y": [best, best], "mode": "lines",
            "name": "best answer's reward", "line": {"color": pal["neutral"], "width": 1, "dash": "dot"},
            "hoverinfo": "skip",
        }
    )  # fmt: skip
    title = "Expected reward along training: " + ("the mean of seeded runs" if mode == "sampled" else "exact steps")
    layout = {
        "xaxis": {"title": {"text": "update"}},
        "yaxis": {"title": {"text": "expected reward J"}},
        "title": {"text": title},
        "legend": {"y": 1.02},
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
