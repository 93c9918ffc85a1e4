"""Figures of the evaluation page: pass@k curves, pass^k beside pass@k, the bias simulation, model comparison.

Every builder takes numbers and numpy arrays computed by ``core.evaluation`` and does no heavy math. Colours follow
the lesson: blue for the unbiased estimator, orange for the plug-in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.style import PALETTE, apply_style

MAX_POINTS = 2000  # most points per curve sent to the browser
_TRUTH_COLOUR = PALETTE["optimum"]  # green: visible on the light and the dark theme
_PASS_HAT_COLOUR = PALETTE["highlight"]
_LABEL_BG = "rgba(128,128,128,0.18)"  # readable under the light and the dark theme (the text takes the theme colour)


def spread(se: float, decimals: int = 4) -> str:
    """A standard error with ``decimals`` places, or to two significant digits once it is too small to show."""
    return f"{se:.{decimals}f}" if se == 0 or se >= 10**-decimals else f"{se:.2g}"


def mean_pm(mean: float, se: float, decimals: int = 4) -> str:
    """``mean ± se`` for readouts and titles: the SE to two significant digits once it is too small to show.

    mean_pm(0.8315, 0.00071) -> '0.8315 ± 0.0007';  mean_pm(0.63230, 1.46e-5) -> '0.6323 ± 1.5e-05'
    """
    return f"{mean:.{decimals}f} ± {spread(se, decimals)}"


def _thin(ks: np.ndarray, *curves: np.ndarray, max_points: int, keep: int | None = None) -> tuple[np.ndarray, ...]:
    """At most ``max_points`` log-spaced samples of the curves (first, last and ``keep`` stay)."""
    if ks.size <= max_points:
        return (ks, *curves)
    pos = np.unique(np.round(np.geomspace(1, ks.size, max_points)).astype(np.int64) - 1)
    if keep is not None:
        pos = np.union1d(pos, np.flatnonzero(ks == keep))
    pos = np.union1d(pos, [0, ks.size - 1])
    return (ks[pos], *(np.asarray(y)[pos] for y in curves))


def _use_log_x(n: int, log_x: bool | None) -> bool:
    return n > 100 if log_x is None else bool(log_x)


def _display_note(n: int, shown: int) -> str:
    if shown >= n:
        return f"all {n:,} values of k shown"
    return f"display: {shown:,} of {n:,} values of k (log-spaced); readouts are exact"


def _with_note(title: str, note: str) -> str:
    """An axis title with a small second line: plotly makes room for it, at any font size (presenter mode)."""
    return f"{title}<br><span style='font-size:13px;color:{PALETTE['neutral']}'>{note}</span>"


def _k_axis(fig: go.Figure, n: int, log_x: bool, note: str) -> None:
    if log_x:
        fig.update_xaxes(type="log", range=[-0.05, np.log10(n) + 0.05])
    else:
        fig.update_xaxes(range=[0.5, n + 0.5])
    title = "k (samples per problem we may try)" + (", log scale" if log_x else "")
    fig.update_xaxes(title_text=_with_note(title, note), automargin=True)


def _label_right(n: int, k: int, log_x: bool) -> bool:
    """Put the label of the chosen k on its right when k sits in the left half of the axis."""
    return n == 1 or (np.log(k) <= np.log(n) / 2 if log_x else k <= n / 2)


def _k_line(k: int) -> go.Scatter:
    """A dotted vertical line at the chosen k, from 0 to 1."""
    return go.Scatter(
        x=[k, k],
        y=[0, 1],
        mode="lines",
        line={"color": PALETTE["neutral"], "dash": "dot", "width": 1},
        hoverinfo="skip",
        showlegend=False,
    )


def _check_curves(ks: Any, *curves: Any) -> tuple[np.ndarray, ...]:
    ks = np.asarray(ks)
    out = [np.asarray(y, dtype=np.float64) for y in curves]
    if ks.ndim != 1 or any(y.shape != ks.shape for y in out):
        raise ValueError("ks and every curve must be 1-d arrays of the same length")
    return (ks, *out)


def pass_at_k_figure(
    ks: Any,
    unbiased: Any,
    plugin: Any,
    *,
    n: int,
    c: int,
    k: int,
    unbiased_at_k: float,
    plugin_at_k: float,
    log_x: bool | None = None,
    max_points: int = MAX_POINTS,
) -> go.Figure:
    """The two pass@k estimators over k, for n samples with c correct; the chosen k marked with both values.

    Parameters: ``ks`` the k values drawn (e.g. ``core.evaluation.display_k_grid(n, include=[k])``), ``unbiased``
    and ``plugin`` the estimators there (``pass_at_k``, ``pass_at_k_plugin``), ``n``, ``c``, ``k`` the inputs,
    ``unbiased_at_k``/``plugin_at_k`` the exact values at k for the marker and its label. ``log_x`` defaults to
    a log axis for n > 100. Curves longer than ``max_points`` are thinned (log-spaced) and the figure says so.
    """
    ks, unbiased, plugin = _check_curves(ks, unbiased, plugin)
    ks, unbiased, plugin = _thin(ks, unbiased, plugin, max_points=max_points, keep=k)
    log_x = _use_log_x(n, log_x)
    gap = unbiased_at_k - plugin_at_k

    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=ks,
            y=unbiased,
            mode="lines",
            name="unbiased 1 − C(n−c,k)/C(n,k)",
            line={"color": PALETTE["reference"], "width": 3},
            hovertemplate="k=%{x}<br>unbiased pass@k=%{y:.4f}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=ks,
            y=plugin,
            mode="lines",
            name="plug-in 1 − (1 − c/n)^k",
            line={"color": PALETTE["optimised"], "width": 3, "dash": "dash"},
            hovertemplate="k=%{x}<br>plug-in pass@k=%{y:.4f}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[k, k],
            y=[unbiased_at_k, plugin_at_k],
            mode="markers",
            name=f"k = {k:,}",
            marker={"color": [PALETTE["reference"], PALETTE["optimised"]], "size": 12, "line": {"width": 1}},
            customdata=[["unbiased"], ["plug-in"]],
            hovertemplate="k=%{x}<br>%{customdata[0]}: %{y:.4f}<extra></extra>",
            showlegend=False,
        )
    )
    fig.add_trace(_k_line(k))  # a trace, not a shape: unambiguous on a log axis
    fig.add_annotation(
        x=np.log10(k) if log_x else k,
        y=unbiased_at_k,
        text=(f"<b>k = {k:,}</b><br>unbiased {unbiased_at_k:.3f}<br>plug-in {plugin_at_k:.3f}<br>gap {gap:.3f}"),
        showarrow=True,
        arrowhead=2,
        ax=40 if _label_right(n, k, log_x) else -40,
        ay=30 if unbiased_at_k >= 0.5 else -30,  # the label away from the nearer edge of the plot
        xanchor="left" if _label_right(n, k, log_x) else "right",  # the box starts at the arrow's tail
        yanchor="top" if unbiased_at_k >= 0.5 else "bottom",
        align="left",
        bgcolor=_LABEL_BG,
        bordercolor=PALETTE["neutral"],
    )
    _k_axis(fig, n, log_x, f"n = {n:,} samples, c = {c:,} correct · {_display_note(n, ks.size)}")
    fig.update_yaxes(title_text="pass@k (probability)", range=[-0.02, 1.04])
    fig.update_layout(uirevision="pass_at_k", hovermode="closest", meta={"shown": int(ks.size), "n": int(n)})
    apply_style(fig)
    return fig


def pass_hat_k_figure(
    ks: Any,
    pass_at: Any,
    pass_hat: Any,
    *,
    n: int,
    c: int,
    k: int,
    pass_at_at_k: float,
    pass_hat_at_k: float,
    pass_at_plugin: Any = None,
    pass_hat_plugin: Any = None,
    log_x: bool | None = None,
    max_points: int = MAX_POINTS,
) -> go.Figure:
    """pass@k (any of k succeeds) beside pass^k (all k succeed) from the same n and c; the band between is shaded.

    Parameters: ``ks``; ``pass_at`` and ``pass_hat`` the unbiased estimators there (``pass_at_k``,
    ``pass_hat_k``); optional ``pass_at_plugin``/``pass_hat_plugin`` drawn dotted; the exact values at the
    chosen ``k`` for the markers. Axis and thinning as in :func:`pass_at_k_figure`.
    """
    extra = [y for y in (pass_at_plugin, pass_hat_plugin) if y is not None]
    ks, pass_at, pass_hat, *extra = _check_curves(ks, pass_at, pass_hat, *extra)
    ks, pass_at, pass_hat, *extra = _thin(ks, pass_at, pass_hat, *extra, max_points=max_points, keep=k)
    log_x = _use_log_x(n, log_x)

    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=ks,
            y=pass_at,
            mode="lines",
            name="pass@k: at least one correct",
            line={"color": PALETTE["reference"], "width": 3},
            hovertemplate="k=%{x}<br>pass@k=%{y:.4f}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=ks,
            y=pass_hat,
            mode="lines",
            name="pass^k: all k correct",
            line={"color": _PASS_HAT_COLOUR, "width": 3},
            fill="tonexty",  # shade the band between pass^k and pass@k
            fillcolor="rgba(127,127,127,0.15)",
            hovertemplate="k=%{x}<br>pass^k=%{y:.4f}<extra></extra>",
        )
    )
    plugins = iter(extra)
    for given, colour, label in (
        (pass_at_plugin, PALETTE["reference"], "pass@k plug-in"),
        (pass_hat_plugin, _PASS_HAT_COLOUR, "pass^k plug-in (c/n)^k"),
    ):
        if given is None:
            continue
        fig.add_trace(
            go.Scatter(
                x=ks,
                y=next(plugins),
                mode="lines",
                name=label,
                line={"color": colour, "width": 2, "dash": "dot"},
                hovertemplate=f"k=%{{x}}<br>{label}=%{{y:.4f}}<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[k, k],
            y=[pass_at_at_k, pass_hat_at_k],
            mode="markers",
            marker={"color": [PALETTE["reference"], _PASS_HAT_COLOUR], "size": 12, "line": {"width": 1}},
            customdata=[["pass@k"], ["pass^k"]],
            hovertemplate="k=%{x}<br>%{customdata[0]}: %{y:.4f}<extra></extra>",
            showlegend=False,
        )
    )
    fig.add_trace(_k_line(k))  # a trace, not a shape: unambiguous on a log axis
    fig.add_annotation(
        x=np.log10(k) if log_x else k,
        y=(pass_at_at_k + pass_hat_at_k) / 2,
        text=(
            f"<b>k = {k:,}</b><br>pass@k {pass_at_at_k:.3f}<br>pass^k {pass_hat_at_k:.3f}<br>"
            f"gap {pass_at_at_k - pass_hat_at_k:.3f}"
        ),
        showarrow=False,
        xshift=10 if _label_right(n, k, log_x) else -10,
        xanchor="left" if _label_right(n, k, log_x) else "right",
        yanchor="bottom" if (pass_at_at_k + pass_hat_at_k) / 2 < 0.5 else "top",  # keep it inside the plot
        align="left",
        bgcolor=_LABEL_BG,
        bordercolor=PALETTE["neutral"],
    )
    _k_axis(
        fig,
        n,
        log_x,
        f"n = {n:,}, c = {c:,} · shaded: the gap where flaky behaviour hides · {_display_note(n, ks.size)}",
    )
    fig.update_yaxes(title_text="probability", range=[-0.02, 1.04])
    fig.update_layout(uirevision="pass_hat_k", hovermode="closest", meta={"shown": int(ks.size), "n": int(n)})
    apply_style(fig)
    fig.update_layout(legend_traceorder="normal")  # a filled trace would otherwise reverse the legend
    return fig


def simulation_figure(
    edges: Any,
    counts_unbiased: Any,
    counts_plugin: Any,
    *,
    truth: float,
    mean_unbiased: float,
    mean_plugin: float,
    p: float,
    n: int,
    k: int,
    se_unbiased: float | None = None,
    se_plugin: float | None = None,
) -> go.Figure:
    """Histograms of both estimators over the simulated problems, against the truth 1 - (1-p)^k.

    Parameters are the fields of ``core.evaluation.EstimatorSimulation``: shared bin ``edges``, the two count
    arrays, the truth, the two means (and optionally their standard errors), and p, n, k for the labels. Two rows
    share the x axis: unbiased (blue, top) and plug-in (orange, bottom). Bars show the share of problems per bin;
    the solid green line is the truth, the dashed line in each row that estimator's mean.
    """
    edges = np.asarray(edges, dtype=np.float64)
    cu, cp = np.asarray(counts_unbiased, dtype=np.float64), np.asarray(counts_plugin, dtype=np.float64)
    if edges.ndim != 1 or cu.shape != (edges.size - 1,) or cp.shape != cu.shape:
        raise ValueError("need edges of length bins + 1 and two count arrays of length bins")
    problems = max(cu.sum(), 1.0)
    centres, widths = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
    rows = (
        (cu, PALETTE["reference"], "unbiased", mean_unbiased, se_unbiased),
        (cp, PALETTE["optimised"], "plug-in", mean_plugin, se_plugin),
    )
    titles = [
        f"{label}: mean " + (f"{mean:.4f}" if se is None else mean_pm(mean, se)) + f", bias {mean - truth:+.4f}"
        for _, _, label, mean, se in rows
    ]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12, subplot_titles=titles)
    top = 1.08 * max(cu.max(), cp.max()) / problems or 1.0  # common y range of both rows
    for row, (counts, colour, label, mean, _) in enumerate(rows, start=1):
        share = counts / problems
        fig.add_trace(
            go.Bar(
                x=centres,
                y=share,
                width=widths,
                name=label,
                marker={"color": colour, "line": {"width": 0}},
                customdata=np.stack([edges[:-1], edges[1:]], axis=1),
                hovertemplate=(
                    f"{label}<br>estimate %{{customdata[0]:.3f}} to %{{customdata[1]:.3f}}"
                    "<br>share of problems %{y:.4f}<extra></extra>"
                ),
                showlegend=False,
            ),
            row=row,
            col=1,
        )
        for x, style, name in (
            (truth, {"color": _TRUTH_COLOUR, "width": 3}, "truth"),
            (mean, {"color": colour, "width": 2, "dash": "dash"}, f"{label} mean"),
        ):
            fig.add_trace(
                go.Scatter(
                    x=[x, x],
                    y=[0, top],
                    mode="lines",
                    line=style,
                    name=name,
                    hovertemplate=f"{name} %{{x:.4f}}<extra></extra>",
                ),
                row=row,
                col=1,
            )
    fig.update_yaxes(range=[0, top], title_text="share of problems")
    note = (
        f"p = {p:g}, n = {n:,}, k = {k:,}, {int(problems):,} problems · solid green: truth 1 − (1 − p)^k = "
        f"{truth:.4f} · dashed: the estimator's mean"
    )
    fig.update_xaxes(title_text=_with_note("estimated pass@k of one problem", note), automargin=True, row=2, col=1)
    fig.update_layout(bargap=0, uirevision="pass_at_k_simulation", hovermode="closest")
    apply_style(fig, height=520, legend=False)
    fig.update_layout(margin={"t": 50})
    return fig


def comparison_figure(
    acc_a: float,
    acc_b: float,
    se_a: float,
    se_b: float,
    comparisons: Sequence[Any],
    *,
    z_crit: float = 1.959963984540054,
    names: tuple[str, str] = ("A", "B"),
) -> go.Figure:
    """Both accuracies with their intervals (left) and the difference B − A with its interval (right), in points.

    ``comparisons`` holds one or two results of ``core.evaluation.compare_models`` (anything with ``method``,
    ``difference``, ``low``, ``high``, ``significant``): e.g. the independent and the paired analysis. A
    difference interval is green when it excludes 0 (significant) and grey when it contains 0.
    """
    if not comparisons:
        raise ValueError("give at least one comparison")
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.45, 0.55],
        horizontal_spacing=0.18,
        subplot_titles=("accuracy (95% interval)", f"difference {names[1]} − {names[0]} (green: significant)"),
    )
    for acc, se, colour, name in (
        (acc_a, se_a, PALETTE["reference"], names[0]),
        (acc_b, se_b, PALETTE["optimised"], names[1]),
    ):
        fig.add_trace(
            go.Scatter(
                x=[100 * acc],
                y=[f"model {name}"],
                mode="markers+text",
                text=[f"{100 * acc:.1f} ± {100 * z_crit * se:.1f}"],
                textposition="top center",
                textfont={"color": colour},
                marker={"color": colour, "size": 14},
                error_x={"type": "data", "array": [100 * z_crit * se], "color": colour, "thickness": 3, "width": 8},
                name=f"model {name}",
                hovertemplate=f"model {name}: %{{x:.2f}}% ± {100 * z_crit * se:.2f}<extra></extra>",
                showlegend=False,
            ),
            row=1,
            col=1,
        )
    for comp in comparisons:
        diff, low, high = 100 * comp.difference, 100 * comp.low, 100 * comp.high
        colour = PALETTE["optimum"] if comp.significant else PALETTE["neutral"]
        verdict = "significant" if comp.significant else "not significant"
        fig.add_trace(
            go.Scatter(
                x=[diff],
                y=[comp.method],
                mode="markers+text",
                text=[f"{diff:+.1f} [{low:+.1f}, {high:+.1f}]"],
                textposition="top center",
                marker={"color": colour, "size": 14, "symbol": "diamond"},
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": [high - diff],
                    "arrayminus": [diff - low],
                    "color": colour,
                    "thickness": 3,
                    "width": 8,
                },
                name=f"{comp.method}: {diff:+.1f} [{low:+.1f}, {high:+.1f}] points, {verdict}",
                showlegend=False,  # the label sits on the marker: no legend to collide with the axis titles
                hovertemplate=f"{comp.method}: %{{x:+.2f}} points<br>[{low:+.2f}, {high:+.2f}]<extra></extra>",
            ),
            row=1,
            col=2,
        )
    fig.add_vline(x=0, line={"color": PALETTE["negative"], "width": 2}, row=1, col=2)
    fig.update_xaxes(title_text="accuracy (%)", row=1, col=1)
    fig.update_xaxes(title_text="B − A (percentage points)", row=1, col=2, zeroline=False)
    # categories top to bottom, with room above the first row for its label
    for col, rows in ((1, [f"model {names[0]}", f"model {names[1]}"]), (2, [comp.method for comp in comparisons])):
        fig.update_yaxes(
            type="category", categoryarray=rows, range=[len(rows) - 0.5, -0.9], autorange=False, row=1, col=col
        )
    fig.update_layout(uirevision="model_comparison", hovermode="closest")
    apply_style(fig, height=360)
    fig.update_xaxes(automargin=True)
    return fig


# ----------------------------------------------------------------------------------------------------------------
# the page's shortcuts: the same builders, fed from core.evaluation's result objects
# ----------------------------------------------------------------------------------------------------------------


def curve_figures(r: Any, log_x: bool | None = None) -> tuple[go.Figure, go.Figure]:
    """:func:`pass_at_k_figure` and :func:`pass_hat_k_figure` from a ``core.evaluation.PassAtKCurves``."""
    common = {"n": r.n, "c": r.c, "k": r.k, "log_x": log_x}
    at_k = pass_at_k_figure(
        r.ks, r.unbiased, r.plugin, unbiased_at_k=r.unbiased_at_k, plugin_at_k=r.plugin_at_k, **common
    )
    hat_k = pass_hat_k_figure(
        r.ks,
        r.unbiased,
        r.hat,
        pass_at_at_k=r.unbiased_at_k,
        pass_hat_at_k=r.hat_at_k,
        pass_at_plugin=r.plugin,
        pass_hat_plugin=r.hat_plugin,
        **common,
    )
    return at_k, hat_k


def simulation_figure_of(sim: Any) -> go.Figure:
    """:func:`simulation_figure` from a ``core.evaluation.EstimatorSimulation``."""
    return simulation_figure(
        sim.edges,
        sim.counts_unbiased,
        sim.counts_plugin,
        truth=sim.truth,
        mean_unbiased=sim.mean_unbiased,
        mean_plugin=sim.mean_plugin,
        p=sim.p,
        n=sim.n,
        k=sim.k,
        se_unbiased=sim.se_unbiased,
        se_plugin=sim.se_plugin,
    )


def comparison_figure_of(comparisons: Sequence[Any]) -> go.Figure:
    """:func:`comparison_figure` from one or two ``core.evaluation.ModelComparison`` of the same A, B and N."""
    first = comparisons[0]
    return comparison_figure(first.acc_a, first.acc_b, first.se_a, first.se_b, comparisons, z_crit=first.z_crit)
