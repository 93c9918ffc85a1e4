"""Figures of the KL leash page: pi_ref against pi*, the sweep over beta, reward hacking and the theorem check.

Every builder takes what core computed (a :class:`core.kl_leash.LeashSweep`, a :class:`core.kl_leash.PolicyCloud`)
and the page's current beta; none does more than pick, round and format numbers. Figures are assembled from plain
dicts through :func:`viz.style.figure` (no per-property validation: the bars' 121 slider steps made it the slowest
part of a rerun); tests/test_viz_style.py rebuilds each with validation. Every builder takes ``theme`` ("light" or
"dark") and ``presenter`` (larger type for a room).

- :func:`kl_leash_figure`: faint blue bars pi_ref, solid orange bars pi*, and a plotly slider over the sweep's
  betas whose steps restyle the orange bars and rewrite the readouts in the browser (no server round trip).
- :func:`kl_sweep_figure`: each answer's probability, the KL and the expected reward against beta (log axis).
- :func:`kl_hacking_figure`: proxy and true expected reward against the KL as beta sweeps (Gao et al. 2022).
- :func:`kl_theorem_figure`: random policies in the (KL, E[r]) plane, or as a histogram of their objective,
  with pi* marked; none lies above the line E[r] - beta·KL = beta·log Z.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from core.kl_leash import LeashSweep, PolicyCloud
from viz import format as fmt
from viz.style import Theme, figure, get_theme, grid, readout_panel

_REF_OPACITY = 0.35  # the "faint" of the faint blue reference bars (deliberately below 0.5: pi* is the subject)
_DASHES = ("solid", "dash", "dot", "dashdot")
_OCHRE = "#A6761D"  # 4.1:1 on white, 4.5:1 on the dark background (black would vanish on the dark theme)
# answers' curves avoid the colours with a role here (blue pi_ref, orange pi* and the proxy, green the true reward)
_ANSWER_ROLES = ("highlight", "rule", "negative", None, "neutral", "yellow")  # None: ochre
_num = fmt.number
_beta_label = fmt.general


def _labels(labels: Sequence[str] | None, K: int) -> list[str]:
    if labels is None:
        return [f"answer {k + 1}" for k in range(K)]
    if len(labels) != K:
        raise ValueError(f"need {K} answer labels, got {len(labels)}")
    return [str(s) for s in labels]


def _has_proxy_gap(sweep: LeashSweep) -> bool:
    return not np.array_equal(sweep.r, sweep.r_true)


def _readout(sweep: LeashSweep, i: int) -> str:
    """The readout panel's text for step i of the sweep."""
    lines = [
        f"<b>β = {_beta_label(sweep.beta[i])}</b>",
        f"KL(π* ‖ π_ref) = {_num(sweep.kl[i])} nats",
        f"E<sub>π*</sub>[r] = {_num(sweep.reward[i])}",
        f"E[r] − β·KL = {_num(sweep.objective[i])}",
        f"β·log Z = {_num(sweep.beta_log_Z[i])}",
        f"H(π*) = {_num(sweep.entropy[i])} nats",
    ]
    if _has_proxy_gap(sweep):
        lines.insert(3, f"true E<sub>π*</sub>[r] = {_num(sweep.true_reward[i])}")
    return "<br>".join(lines)


_COMPACT_K = 6  # from this many answers on, the tick labels stack (three short lines) instead of rotating


def _tick_labels(sweep: LeashSweep, labels: list[str]) -> list[str]:
    gap = _has_proxy_gap(sweep)
    compact = sweep.K >= _COMPACT_K
    out = []
    for k, name in enumerate(labels):
        text = f"{name}<br>r={sweep.r[k]:g}" if compact else f"{name}<br>r = {sweep.r[k]:g}"
        if gap:
            text += f"<br>true {sweep.r_true[k]:g}" if compact else f" (true {sweep.r_true[k]:g})"
        out.append(text.replace("-", "−"))
    return out


# --------------------------------------------------------------------------------------------------------------
# (1) the bars, with a browser-side beta slider


def kl_leash_figure(
    sweep: LeashSweep,
    beta: float,
    labels: Sequence[str] | None = None,
    *,
    height: int = 540,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Faint blue bars pi_ref and solid orange bars pi* for each answer; dragging the slider moves beta.

    sweep: core's :func:`~core.kl_leash.leash_sweep` over the slider's betas (one step per beta, typically
    :func:`~core.kl_leash.beta_grid` with the page's beta included). beta: the page's current value; the slider
    starts at the sweep's nearest beta. labels: K answer names (default "answer 1", ...). Each slider step is a
    ``method="update"`` that replaces the orange bars' heights and the readout panel (KL, E[r], the objective,
    beta·log Z, entropy) -- the drag is handled by plotly.js alone. Trace 0: pi_ref; trace 1: pi*.
    """
    t = get_theme(theme)
    K = sweep.K
    names = _labels(labels, K)
    x = _tick_labels(sweep, names)
    active = sweep.index(beta)
    pi = np.round(sweep.pi, 5)  # (S, K): 5 decimals are plenty for bars and keep the slider steps small

    data = [
        {
            "type": "bar",
            "x": x,
            "y": sweep.pi_ref,
            "name": "π_ref (reference, the SFT model)",
            "marker": {"color": t.palette["reference"], "opacity": _REF_OPACITY},
            "hovertemplate": "π_ref = %{y:.4f}<extra></extra>",
        },
        {
            "type": "bar",
            "x": x,
            "y": pi[active],
            "name": "π* ∝ π_ref·exp(r/β) (optimal)",
            "marker": {"color": t.palette["optimised"]},
            "texttemplate": "%{y:.3f}",
            "textposition": "outside",
            "cliponaxis": False,
            "hovertemplate": "π* = %{y:.4f}<extra></extra>",
        },
    ]
    steps = [
        {
            "method": "update",
            "label": _beta_label(b),
            "args": [{"y": [pi[i]]}, {"annotations[0].text": _readout(sweep, i)}, [1]],
        }
        for i, b in enumerate(sweep.beta)
    ]
    layout = dict(
        barmode="group",
        bargap=0.25,
        # the tick labels name the answers and their rewards; never rotated (they would run into the slider)
        xaxis={"domain": [0.0, 0.68], "tickangle": 0, "tickfont": {"size": 12 if K >= _COMPACT_K else 14}},
        yaxis={"title": {"text": "probability"}, "range": [0, 1.12], "tickvals": [0, 0.2, 0.4, 0.6, 0.8, 1.0]},
        annotations=[readout_panel(_readout(sweep, active), t)],
        sliders=[
            {
                "active": active,
                "steps": steps,
                # its own colour: the slider's font below is transparent (it hides the step labels)
                "currentvalue": {"prefix": "β = ", "font": {"size": 16, "color": t.ink["neutral"]}},
                # the steps are too many to label; the current value above the rail says where beta is
                "font": {"color": "rgba(0,0,0,0)"},
                "ticklen": 0,
                "minorticklen": 0,
                "pad": {"t": 72 if presenter else 56, "b": 10},  # room for two- or three-line answer labels
                "len": 1.0,
                "x": 0.0,
            }
        ],
        uirevision="kl-leash",
        hovermode="closest",
    )
    layout["margin"] = {"l": 60, "r": 20, "t": 60, "b": 40}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


# --------------------------------------------------------------------------------------------------------------
# (2) the whole range of beta


def _answer_style(k: int, t: Theme) -> dict[str, Any]:
    n = len(_ANSWER_ROLES)
    role = _ANSWER_ROLES[k % n]
    colour = t.palette[role] if role else _OCHRE
    return {"color": colour, "dash": _DASHES[(k // n) % len(_DASHES)], "width": 2.5}


def _line(x: Any, y: Any, name: str, line: dict[str, Any], hover: str, **extra: Any) -> dict[str, Any]:
    """A scatter trace of mode lines, as a dict (the whole figure is validated once, in go.Figure)."""
    trace = {"type": "scatter", "x": x, "y": y, "mode": "lines", "name": name, "line": line, "hovertemplate": hover}
    return trace | extra


def kl_sweep_figure(
    sweep: LeashSweep,
    beta: float,
    labels: Sequence[str] | None = None,
    *,
    height: int = 620,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """pi*(answer), KL(pi* || pi_ref) and E_pi*[r] as functions of beta (log axis), the current beta marked.

    Row 1: each answer's probability under pi*; row 2: the KL in nats; row 3: the expected proxy reward and,
    when the true reward differs, the true one. A dashed vertical line and markers sit at the page's beta.
    Small beta (left) puts all mass on the top reward; large beta (right) gives back pi_ref. Three stacked
    x axes (x, x2, x3, all matching x) over y (probabilities), y2 (KL) and y3 (reward), from
    :func:`viz.style.grid`.
    """
    t = get_theme(theme)
    pal = t.palette
    K = sweep.K
    names = _labels(labels, K)
    i0 = sweep.index(beta)
    b = sweep.beta
    gap = _has_proxy_gap(sweep)
    data: list[dict[str, Any]] = [
        _line(
            b,
            sweep.pi[:, k],
            f"π*({names[k]})",
            _answer_style(k, t),
            f"{names[k]}: π* = %{{y:.4f}}<extra></extra>",
            legendgroup="answers",
            legendgrouptitle={"text": "π* of each answer"},
        )
        for k in range(K)
    ]
    readouts = {"legendgroup": "readouts", "legendgrouptitle": {"text": "readouts"}}
    data.append(
        _line(
            b,
            sweep.kl,
            "KL(π* ‖ π_ref)",
            {"color": pal["reference"], "width": 2.5},
            "KL = %{y:.4g} nats<extra></extra>",
            xaxis="x2",
            yaxis="y2",
            **readouts,
        )
    )
    data.append(
        _line(
            b,
            sweep.reward,
            "E[r] (proxy, optimised)" if gap else "E[r]",
            {"color": pal["optimised"], "width": 2.5},
            "E[r] = %{y:.4g}<extra></extra>",
            xaxis="x3",
            yaxis="y3",
            **readouts,
        )
    )
    if gap:
        data.append(
            _line(
                b,
                sweep.true_reward,
                "E[r_true]",
                {"color": pal["optimum"], "width": 2.5, "dash": "dash"},
                "E[r_true] = %{y:.4g}<extra></extra>",
                xaxis="x3",
                yaxis="y3",
                **readouts,
            )
        )
    # the current beta: markers on every curve, and a dashed line through all rows
    rows = [sweep.pi[i0], [sweep.kl[i0]], [sweep.reward[i0]] + ([sweep.true_reward[i0]] if gap else [])]
    for row, ys in enumerate(rows, start=1):
        suffix = "" if row == 1 else str(row)
        data.append(
            {
                "type": "scatter",
                "x": [b[i0]] * len(ys),
                "y": list(ys),
                "mode": "markers",
                "marker": {"color": pal["neutral"], "size": 8, "symbol": "circle-open", "line": {"width": 2}},
                "showlegend": False,
                "hoverinfo": "skip",
                "xaxis": f"x{suffix}",
                "yaxis": f"y{suffix}",
            }
        )
    shapes = [
        {
            "type": "line",
            "x0": b[i0],
            "x1": b[i0],
            "y0": 0,
            "y1": 1,
            "xref": f"x{s}",
            "yref": f"y{s} domain",
            "line": {"color": pal["neutral"], "dash": "dash", "width": 1.5},
        }
        for s in ("", "2", "3")
    ]
    # the two limits, under the ends of the beta axis (on the line of its title), clear of the curves
    note = {
        "showarrow": False,
        "font": {"color": t.ink["neutral"], "size": 13},
        "xref": "paper",
        "yref": "paper",
        "y": 0.0,
        "yanchor": "top",
        "yshift": -30,
    }
    annotations = [
        # on a log axis an annotation's x is log10 of the value (shapes take the value itself)
        {
            "x": math.log10(b[i0]),
            "y": 1.0,
            "xref": "x",
            "yref": "y domain",
            "yanchor": "bottom",
            "showarrow": False,
            "text": f"β = {_beta_label(b[i0])}",
        },
        {"x": 0.0, "xanchor": "left", "text": "← β → 0: all mass on the top reward"} | note,
        {"x": 1.0, "xanchor": "right", "text": "β → ∞: back to π_ref →"} | note,
    ]
    _, layout = grid(3, 1, heights=[0.5, 0.2, 0.22], vgap=0.04)  # y: [0.5, 1], y2: [0.26, 0.46], y3: [0, 0.22]
    log_x = {"type": "log", "exponentformat": "power"}
    layout["xaxis"] |= log_x | {"showticklabels": False}
    layout["xaxis2"] |= log_x | {"matches": "x", "showticklabels": False}
    layout["xaxis3"] |= log_x | {"matches": "x", "title": {"text": "β (KL price per nat, log scale)"}}
    layout["yaxis"] |= {"range": [-0.02, 1.02], "title": {"text": "π*(answer)"}}
    layout["yaxis2"] |= {"rangemode": "tozero", "title": {"text": "KL (nats)"}}
    layout["yaxis3"] |= {"title": {"text": "E[r]"}}
    layout |= {
        "shapes": shapes,
        "annotations": annotations,
        "uirevision": "kl-sweep",
        "hovermode": "x unified",
    }
    # up to 10 answers plus the readouts: a legend column on the right reads better than rows on top
    layout["legend"] = {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1.0, "yanchor": "top"}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


# --------------------------------------------------------------------------------------------------------------
# (3) reward hacking


def kl_hacking_figure(
    sweep: LeashSweep,
    beta: float,
    *,
    sqrt_kl: bool = False,
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Expected proxy reward (optimised) and true reward under pi* against KL(pi* || pi_ref) as beta sweeps.

    With a proxy gap, the true reward first rises and then falls as the KL grows: over-optimisation (Gao et al.
    2022). Marks the page's beta on both curves and the peak of the true reward. sqrt_kl: plot against
    sqrt(KL), the distance Gao et al. use, instead of the KL in nats. Traces: proxy, true, the current beta,
    and (with a proxy gap) the peak.
    """
    t = get_theme(theme)
    pal = t.palette
    i0 = sweep.index(beta)
    x = np.sqrt(sweep.kl) if sqrt_kl else sweep.kl
    gap = _has_proxy_gap(sweep)
    hover = "β = %{customdata:.3g}<br>KL = %{x:.3g}<br>"
    data: list[dict[str, Any]] = [
        _line(
            x,
            sweep.reward,
            "proxy reward E[r] (what π* optimises)",
            {"color": pal["optimised"], "width": 3},
            hover + "proxy E[r] = %{y:.3f}<extra></extra>",
            customdata=sweep.beta,
        ),
        _line(
            x,
            sweep.true_reward,
            "true reward E[r_true] (what people want)",
            {"color": pal["optimum"], "width": 3, "dash": "solid" if gap else "dash"},
            hover + "true E[r] = %{y:.3f}<extra></extra>",
            customdata=sweep.beta,
        ),
        {
            "type": "scatter",
            "x": [x[i0], x[i0]],
            "y": [sweep.reward[i0], sweep.true_reward[i0]],
            "mode": "markers",
            "name": f"β = {_beta_label(sweep.beta[i0])}",
            "hoverinfo": "skip",
            "marker": {"color": pal["neutral"], "size": 10, "symbol": "circle-open", "line": {"width": 2.5}},
        },
    ]
    if gap:
        ip = sweep.true_peak
        data.append(
            {
                "type": "scatter",
                "x": [x[ip]],
                "y": [sweep.true_reward[ip]],
                "mode": "markers",
                "name": "true reward peaks",
                "marker": {"color": pal["optimum"], "size": 14, "symbol": "star"},
                "hovertemplate": f"peak: β = {_beta_label(sweep.beta[ip])}, KL = {_num(sweep.kl[ip])} nats"
                f"<br>true E[r] = {_num(sweep.true_reward[ip])}<extra></extra>",
            }
        )
        annotation = {
            "x": x[ip],
            "y": sweep.true_reward[ip],
            "showarrow": True,
            "arrowhead": 2,
            "ax": 40,
            "ay": -50,
            "xanchor": "left",
            "align": "left",
            "font": {"size": 13},
            "bgcolor": t.panel,  # readable where it crosses the proxy curve
            "text": f"true reward peaks at β = {_beta_label(sweep.beta[ip])}, KL = {_num(sweep.kl[ip], 2)} nats;<br>"
            "beyond it (smaller β, a longer leash), more proxy reward means a worse policy",
        }
    else:
        annotation = {
            "x": 0.99,
            "y": 0.02,
            "xref": "paper",
            "yref": "paper",
            "xanchor": "right",
            "yanchor": "bottom",
            "showarrow": False,
            "font": {"color": t.ink["neutral"], "size": 13},
            "text": "true reward = proxy reward here: set a different true reward to see reward hacking",
        }
    layout = {
        "xaxis": {
            "title": {"text": "√KL(π* ‖ π_ref) (√nats)" if sqrt_kl else "KL(π* ‖ π_ref) (nats)"},
            "rangemode": "tozero",
        },
        "yaxis": {"title": {"text": "expected reward under π*"}},
        "annotations": [annotation],
        "uirevision": "kl-hacking",
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


# --------------------------------------------------------------------------------------------------------------
# (4) the theorem check


def _subsample(cloud: PolicyCloud, max_points: int, keep_best: int) -> np.ndarray:
    """Indices of at most max_points policies: the keep_best highest objectives plus a fixed random rest."""
    n = cloud.objective.shape[0]
    if n <= max_points:
        return np.arange(n)
    order = np.argsort(cloud.objective)[::-1]
    best = order[:keep_best]
    rest = np.random.default_rng(0).choice(order[keep_best:], size=max_points - keep_best, replace=False)
    return np.sort(np.concatenate([best, rest]))


def kl_theorem_figure(
    cloud: PolicyCloud,
    sweep: LeashSweep,
    beta: float,
    *,
    mode: str = "plane",
    max_points: int = 4000,
    height: int = 480,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Random policies against pi*: none has a higher objective E[r] - beta·KL.

    cloud: core's :func:`~core.kl_leash.random_policies` at ``beta``; sweep: the page's sweep (its pi* curve over
    all betas is the upper frontier of what any policy can reach in the (KL, E[r]) plane). mode "plane": each
    random policy as a grey dot at (KL, E[r]), pi* as an orange star, the line of slope beta through it,
    E[r] = beta·log Z + beta·KL, above which no policy lies. mode "objective": a histogram of the random
    objectives with beta·log Z marked. At most ``max_points`` dots are drawn (the 10% best kept, the rest a fixed
    random subset), and the figure says so. Traces (plane): dots, frontier, line, pi*; (objective): the bars.
    """
    if mode not in ("plane", "objective"):
        raise ValueError(f"mode must be 'plane' or 'objective', got {mode!r}")
    t = get_theme(theme)
    pal = t.palette
    n = cloud.objective.shape[0]
    verdict = (
        f"{n:,} random policies: none beats π*"
        if cloud.n_better == 0
        else f"{cloud.n_better:,} of {n:,} random policies beat π*: check the inputs"
    )
    gap = cloud.optimum - cloud.best_objective
    if mode == "objective":
        counts, edges = np.histogram(cloud.objective, bins=80)
        span = float(edges[-1] - edges[0]) or 1.0
        data: list[dict[str, Any]] = [
            {
                "type": "bar",
                "x": 0.5 * (edges[1:] + edges[:-1]),
                "y": counts,
                "width": np.diff(edges),
                "name": "random policies",
                "marker": {"color": pal["neutral"]},
                "hovertemplate": "J ≈ %{x:.3f}: %{y} policies<extra></extra>",
            }
        ]
        layout: dict[str, Any] = {
            "shapes": [
                {
                    "type": "line",
                    "x0": cloud.optimum,
                    "x1": cloud.optimum,
                    "y0": 0,
                    "y1": 1,
                    "yref": "y domain",
                    "line": {"color": pal["optimised"], "width": 3},
                }
            ],
            "annotations": [
                {
                    "x": cloud.optimum,
                    "y": 0.97,
                    "yref": "y domain",
                    "xanchor": "right",
                    "yanchor": "top",
                    "showarrow": False,
                    "align": "right",
                    "bgcolor": t.panel,
                    "font": {"color": t.ink["optimised"]},
                    "text": f"β·log Z = {_num(cloud.optimum, 4)} (π*)<br>best random: {_num(cloud.best_objective, 4)}",
                }
            ],
            "xaxis": {
                "title": {"text": "objective J(π) = E[r] − β·KL"},
                "range": [edges[0] - 0.01 * span, max(edges[-1], cloud.optimum) + 0.04 * span],
            },
            "yaxis": {"title": {"text": "number of policies"}},
            "bargap": 0,
        }
    else:
        idx = _subsample(cloud, max_points, max(1, max_points // 10))
        kl_max = float(max(np.max(cloud.kl[idx]), cloud.optimum_kl)) * 1.05 + 1e-9
        r_lo = float(min(np.min(cloud.reward[idx]), np.min(sweep.reward)))
        r_hi = float(max(np.max(cloud.reward[idx]), np.max(sweep.reward)))
        pad = 0.05 * (r_hi - r_lo) + 1e-9
        data = [
            {
                "type": "scattergl",
                "x": cloud.kl[idx].astype(np.float32),
                "y": cloud.reward[idx].astype(np.float32),
                "customdata": cloud.objective[idx].astype(np.float32),
                "mode": "markers",
                "name": "random policies" + (f" ({len(idx):,} of {n:,} shown)" if len(idx) < n else ""),
                # deliberately faint (opacity below 0.5): thousands of dots, the frontier and pi* are the subject
                "marker": {"color": pal["neutral"], "size": 4, "opacity": 0.45},
                "hovertemplate": "KL = %{x:.3f}<br>E[r] = %{y:.3f}<br>J = %{customdata:.4f}<extra></extra>",
            },
            _line(
                sweep.kl,
                sweep.reward,
                "π* for every β (the frontier)",
                {"color": pal["optimised"], "width": 2},
                "β = %{customdata:.3g}<br>KL = %{x:.3f}<br>E[r] = %{y:.3f}<extra></extra>",
                customdata=sweep.beta,
            ),
            {
                "type": "scatter",
                "x": [0.0, kl_max],
                "y": [cloud.optimum, cloud.optimum + beta * kl_max],
                "mode": "lines",
                "name": f"E[r] − β·KL = β·log Z (slope β = {_beta_label(beta)})",
                "line": {"color": pal["negative"], "dash": "dash", "width": 2},
                "hoverinfo": "skip",
            },
            {
                "type": "scatter",
                "x": [cloud.optimum_kl],
                "y": [cloud.optimum_reward],
                "mode": "markers",
                "name": "π*",
                "marker": {
                    "color": pal["optimised"],
                    "size": 18,
                    "symbol": "star",
                    "line": {"color": t.text, "width": 1},
                },
                "hovertemplate": f"π*: KL = %{{x:.4f}}<br>E[r] = %{{y:.4f}}<br>J = β·log Z = {_num(cloud.optimum, 4)}"
                "<extra></extra>",
            },
        ]
        layout = {
            "xaxis": {"title": {"text": "KL(π ‖ π_ref) (nats)"}, "range": [-0.02 * kl_max, kl_max]},
            "yaxis": {"title": {"text": "expected reward E_π[r]"}, "range": [r_lo - pad, r_hi + pad]},
        }
    layout |= {
        "title": {
            "text": f"{verdict}<br><sup>best random J = {_num(cloud.best_objective, 4)}, "
            f"{_num(gap, 2)} below β·log Z = {_num(cloud.optimum, 4)}</sup>"
        },
        "uirevision": "kl-theorem",
        "hovermode": "closest",
    }
    # the verdict is the title; the legend goes under the plot so that the two do not overlap
    layout["margin"] = {"l": 60, "r": 20, "t": 80 if presenter else 60, "b": 150 if presenter else 120}
    layout["legend"] = {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.2, "yanchor": "top"}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
