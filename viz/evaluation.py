"""Figures of the evaluation page: pass@k curves, pass^k beside pass@k, the bias simulation, model comparison.

The pass@k figure takes an optional :class:`KSweep`: a plotly slider over k whose steps move the markers at k, the
dotted line and the label with both estimates in the browser.

Every builder takes numbers and numpy arrays computed by ``core.evaluation`` and does no heavy math. Colours follow
the lesson: blue for the unbiased estimator, orange for the plug-in. Figures are plain dicts through
:func:`viz.style.figure`; every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from core.evaluation import EstimatorSimulation, ModelComparison, PassAtKCurves
from viz import format as fmt
from viz.style import Theme, figure, get_theme, grid, unlabelled_slider

MAX_POINTS = 2000  # most points per curve sent to the browser
_PASS_HAT = "highlight"  # role of the pass^k curves (reddish purple)
_BAND = "rgba(127,127,127,0.15)"  # the shaded band between pass^k and pass@k: deliberately faint (opacity 0.15)


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


def _with_note(title: str, note: str, t: Theme) -> str:
    """An axis title with a small second line: plotly makes room for it, at any font size (presenter mode)."""
    return f"{title}<br><span style='font-size:13px;color:{t.muted}'>{note}</span>"


def _k_axis(n: int, log_x: bool, note: str, t: Theme) -> dict[str, Any]:
    """The x axis of the k curves: log or linear, its title with the display note under it."""
    title = "k (samples per problem we may try)" + (", log scale" if log_x else "")
    axis: dict[str, Any] = {"title": {"text": _with_note(title, note, t)}, "automargin": True}
    if log_x:
        return axis | {"type": "log", "range": [-0.05, float(np.log10(n)) + 0.05]}
    return axis | {"range": [0.5, n + 0.5]}


def _label_right(n: int, k: int, log_x: bool) -> bool:
    """Put the label of the chosen k on its right when k sits in the left half of the axis."""
    return n == 1 or (np.log(k) <= np.log(n) / 2 if log_x else k <= n / 2)


def _k_line(k: int, t: Theme) -> dict[str, Any]:
    """A dotted vertical line at the chosen k, from 0 to 1 (a trace, not a shape: unambiguous on a log axis)."""
    return {
        "type": "scatter",
        "x": [k, k],
        "y": [0, 1],
        "mode": "lines",
        "name": f"k = {k:,}",
        "line": {"color": t.palette["neutral"], "dash": "dot", "width": 1},
        "hoverinfo": "skip",
        "showlegend": False,
    }


def _line(x: ArrayLike, y: ArrayLike, name: str, line: dict[str, Any], hover: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "name": name,
        "line": line,
        "hovertemplate": hover,
    } | extra


def _check_curves(ks: ArrayLike, *curves: ArrayLike) -> tuple[np.ndarray, ...]:
    ks = np.asarray(ks)
    out = [np.asarray(y, dtype=np.float64) for y in curves]
    if ks.ndim != 1 or any(y.shape != ks.shape for y in out):
        raise ValueError("ks and every curve must be 1-d arrays of the same length")
    return (ks, *out)


@dataclass(frozen=True)
class KSweep:
    """The k slider's steps for one (n, c): step i shows k = ``ks[i]`` with the estimates there.

    ``ks`` (S,) are whole numbers 1..n, ``unbiased`` and ``plugin`` (S,) the two pass@k estimates at them, and
    ``active`` the step of the page's k.
    """

    ks: np.ndarray
    unbiased: np.ndarray
    plugin: np.ndarray
    active: int


_K_LABEL_KEYS = ("x", "y", "text", "ax", "ay", "xanchor", "yanchor")  # what a step rewrites of the label at k


def _k_label(n: int, k: int, unbiased_at_k: float, plugin_at_k: float, log_x: bool, t: Theme) -> dict[str, Any]:
    """The label at the chosen k: both estimates and their gap, on an arrow from the unbiased curve."""
    right = _label_right(n, k, log_x)
    return {
        "x": float(np.log10(k)) if log_x else k,
        "y": unbiased_at_k,
        "text": f"<b>k = {k:,}</b><br>unbiased {unbiased_at_k:.3f}<br>plug-in {plugin_at_k:.3f}<br>"
        f"gap {unbiased_at_k - plugin_at_k:.3f}",
        "showarrow": True,
        "arrowhead": 2,
        "arrowcolor": t.axis,
        "ax": 40 if right else -40,
        "ay": 30 if unbiased_at_k >= 0.5 else -30,  # the label away from the nearer edge of the plot
        "xanchor": "left" if right else "right",  # the box starts at the arrow's tail
        "yanchor": "top" if unbiased_at_k >= 0.5 else "bottom",
        "align": "left",
        "bgcolor": t.panel,
        "bordercolor": t.axis,
    }


# room under the plot for the k ticks and the two-line axis title (title and display note) above the slider
# (measured in chromium: 73 px on a log axis at 14/15/13 px type, 94 px at presenter size)
_K_SLIDER_PAD, _K_SLIDER_PAD_PRESENTER = 82, 106
_K_SLIDER_HEIGHT = 100  # the figure grows by what the slider takes beyond the axis title's own margin: the same plot


def _k_slider(sweep: KSweep, n: int, log_x: bool, t: Theme, presenter: bool) -> dict[str, Any]:
    """The plotly slider over k: step i moves the markers (trace 2) and the dotted line (trace 3) to ``ks[i]`` and
    rewrites the label at k (annotation 0: its place, its side and both estimates)."""
    steps = []
    for k, u, p in zip(sweep.ks.tolist(), sweep.unbiased.tolist(), sweep.plugin.tolist(), strict=True):
        label = _k_label(n, k, u, p, log_x, t)
        traces = {"x": [[k, k], [k, k]], "y": [[u, p], [0, 1]], "name": [f"k = {k:,}"] * 2}
        layout = {f"annotations[0].{key}": label[key] for key in _K_LABEL_KEYS}
        steps.append({"method": "update", "label": f"{k:,}", "args": [traces, layout, [2, 3]]})
    # up to about a hundred steps: too many to label under the rail
    return unlabelled_slider(steps, sweep.active, "k = ", _K_SLIDER_PAD_PRESENTER if presenter else _K_SLIDER_PAD)


def pass_at_k_figure(
    ks: ArrayLike,
    unbiased: ArrayLike,
    plugin: ArrayLike,
    *,
    n: int,
    c: int,
    k: int,
    unbiased_at_k: float,
    plugin_at_k: float,
    log_x: bool | None = None,
    max_points: int = MAX_POINTS,
    k_sweep: KSweep | None = None,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The two pass@k estimators over k, for n samples with c correct; the chosen k marked with both values.

    Parameters: ``ks`` the k values drawn (e.g. ``core.evaluation.display_k_grid(n, include=[k])``), ``unbiased``
    and ``plugin`` the estimators there (``pass_at_k``, ``pass_at_k_plugin``), ``n``, ``c``, ``k`` the inputs,
    ``unbiased_at_k``/``plugin_at_k`` the exact values at k for the marker and its label. ``log_x`` defaults to
    a log axis for n > 100. Curves longer than ``max_points`` are thinned (log-spaced) and the figure says so.
    ``k_sweep``: a plotly slider over k (:class:`KSweep`); the marker and label then show its active step (``k``
    and the values at k are read from it), and each step moves them in the browser (:func:`_k_slider`).
    ``theme``: "light" or "dark"; ``presenter``: larger type for a room.
    """
    if k_sweep is not None:
        i = k_sweep.active
        k, unbiased_at_k, plugin_at_k = int(k_sweep.ks[i]), float(k_sweep.unbiased[i]), float(k_sweep.plugin[i])
    ks, unbiased, plugin = _check_curves(ks, unbiased, plugin)
    ks, unbiased, plugin = _thin(ks, unbiased, plugin, max_points=max_points, keep=k)
    log_x = _use_log_x(n, log_x)
    t = get_theme(theme)
    pal = t.palette
    data = [
        _line(
            ks,
            unbiased,
            "unbiased 1 − C(n−c,k)/C(n,k)",
            {"color": pal["reference"], "width": 3},
            "k=%{x}<br>unbiased pass@k=%{y:.4f}<extra></extra>",
        ),
        _line(
            ks,
            plugin,
            "plug-in 1 − (1 − c/n)^k",
            {"color": pal["optimised"], "width": 3, "dash": "dash"},
            "k=%{x}<br>plug-in pass@k=%{y:.4f}<extra></extra>",
        ),
        {
            "type": "scatter",
            "x": [k, k],
            "y": [unbiased_at_k, plugin_at_k],
            "mode": "markers",
            "name": f"k = {k:,}",
            "marker": {"color": [pal["reference"], pal["optimised"]], "size": 12, "line": {"width": 1}},
            "customdata": [["unbiased"], ["plug-in"]],
            "hovertemplate": "k=%{x}<br>%{customdata[0]}: %{y:.4f}<extra></extra>",
            "showlegend": False,
        },
        _k_line(k, t),
    ]
    layout = {
        "xaxis": _k_axis(n, log_x, f"n = {n:,} samples, c = {c:,} correct · {_display_note(n, ks.size)}", t),
        "yaxis": {"title": {"text": "pass@k (probability)"}, "range": [-0.02, 1.04]},
        "annotations": [_k_label(n, k, unbiased_at_k, plugin_at_k, log_x, t)],
        "uirevision": "pass_at_k",
        "hovermode": "closest",
        "meta": {"shown": int(ks.size), "n": int(n)},
    }
    height = 460  # viz.style.figure's default
    if k_sweep is not None:
        layout["sliders"] = [_k_slider(k_sweep, n, log_x, t, presenter)]
        height += _K_SLIDER_HEIGHT
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def pass_hat_k_figure(
    ks: ArrayLike,
    pass_at: ArrayLike,
    pass_hat: ArrayLike,
    *,
    n: int,
    c: int,
    k: int,
    pass_at_at_k: float,
    pass_hat_at_k: float,
    pass_at_plugin: ArrayLike | None = None,
    pass_hat_plugin: ArrayLike | None = None,
    log_x: bool | None = None,
    max_points: int = MAX_POINTS,
    theme: str = "light",
    presenter: bool = False,
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
    t = get_theme(theme)
    pal = t.palette
    hat = pal[_PASS_HAT]
    data = [
        _line(
            ks,
            pass_at,
            "pass@k: at least one correct",
            {"color": pal["reference"], "width": 3},
            "k=%{x}<br>pass@k=%{y:.4f}<extra></extra>",
        ),
        _line(
            ks,
            pass_hat,
            "pass^k: all k correct",
            {"color": hat, "width": 3},
            "k=%{x}<br>pass^k=%{y:.4f}<extra></extra>",
            fill="tonexty",  # shade the band between pass^k and pass@k
            fillcolor=_BAND,
        ),
    ]
    plugins = iter(extra)
    for given, colour, label in (
        (pass_at_plugin, pal["reference"], "pass@k plug-in"),
        (pass_hat_plugin, hat, "pass^k plug-in (c/n)^k"),
    ):
        if given is None:
            continue
        data.append(
            _line(
                ks,
                next(plugins),
                label,
                {"color": colour, "width": 2, "dash": "dot"},
                f"k=%{{x}}<br>{label}=%{{y:.4f}}<extra></extra>",
            )
        )
    data += [
        {
            "type": "scatter",
            "x": [k, k],
            "y": [pass_at_at_k, pass_hat_at_k],
            "mode": "markers",
            "marker": {"color": [pal["reference"], hat], "size": 12, "line": {"width": 1}},
            "customdata": [["pass@k"], ["pass^k"]],
            "hovertemplate": "k=%{x}<br>%{customdata[0]}: %{y:.4f}<extra></extra>",
            "showlegend": False,
        },
        _k_line(k, t),
    ]
    right = _label_right(n, k, log_x)
    middle = (pass_at_at_k + pass_hat_at_k) / 2
    annotation = {
        "x": float(np.log10(k)) if log_x else k,
        "y": middle,
        "text": (
            f"<b>k = {k:,}</b><br>pass@k {pass_at_at_k:.3f}<br>pass^k {pass_hat_at_k:.3f}<br>"
            f"gap {pass_at_at_k - pass_hat_at_k:.3f}"
        ),
        "showarrow": False,
        "xshift": 10 if right else -10,
        "xanchor": "left" if right else "right",
        "yanchor": "bottom" if middle < 0.5 else "top",  # keep it inside the plot
        "align": "left",
        "bgcolor": t.panel,
        "bordercolor": t.axis,
    }
    note = f"n = {n:,}, c = {c:,} · shaded: the gap where flaky behaviour hides · {_display_note(n, ks.size)}"
    layout = {
        "xaxis": _k_axis(n, log_x, note, t),
        "yaxis": {"title": {"text": "probability"}, "range": [-0.02, 1.04]},
        "annotations": [annotation],
        "uirevision": "pass_hat_k",
        "hovermode": "closest",
        "meta": {"shown": int(ks.size), "n": int(n)},
        "legend": {"traceorder": "normal"},  # a filled trace would otherwise reverse the legend
    }
    return figure(data, layout, theme=theme, presenter=presenter)


def simulation_figure(
    edges: ArrayLike,
    counts_unbiased: ArrayLike,
    counts_plugin: ArrayLike,
    *,
    truth: float,
    mean_unbiased: float,
    mean_plugin: float,
    p: float,
    n: int,
    k: int,
    se_unbiased: float | None = None,
    se_plugin: float | None = None,
    theme: str = "light",
    presenter: bool = False,
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
    t = get_theme(theme)
    pal = t.palette
    problems = max(cu.sum(), 1.0)
    centres, widths = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
    rows = (
        (cu, pal["reference"], "unbiased", mean_unbiased, se_unbiased),
        (cp, pal["optimised"], "plug-in", mean_plugin, se_plugin),
    )
    titles = [
        f"{label}: mean " + (f"{mean:.4f}" if se is None else fmt.mean_pm(mean, se)) + f", bias {mean - truth:+.4f}"
        for _, _, label, mean, se in rows
    ]
    ids, layout = grid(2, 1, vgap=0.12, titles=titles)
    top = 1.08 * max(cu.max(), cp.max()) / problems or 1.0  # common y range of both rows
    data: list[dict[str, Any]] = []
    for (xa, ya), (counts, colour, label, mean, _) in zip(ids, rows, strict=True):
        axes = {"xaxis": xa, "yaxis": ya}
        data.append(
            {
                "type": "bar",
                "x": centres,
                "y": counts / problems,
                "width": widths,
                "name": label,
                "marker": {"color": colour, "line": {"width": 0}},
                "customdata": np.stack([edges[:-1], edges[1:]], axis=1),
                "hovertemplate": (
                    f"{label}<br>estimate %{{customdata[0]:.3f}} to %{{customdata[1]:.3f}}"
                    "<br>share of problems %{y:.4f}<extra></extra>"
                ),
                "showlegend": False,
            }
            | axes
        )
        for x, style, name in (
            (truth, {"color": pal["optimum"], "width": 3}, "truth"),
            (mean, {"color": colour, "width": 2, "dash": "dash"}, f"{label} mean"),
        ):
            data.append(_line([x, x], [0, top], name, style, f"{name} %{{x:.4f}}<extra></extra>") | axes)
    note = (
        f"p = {p:g}, n = {n:,}, k = {k:,}, {int(problems):,} problems · solid green: truth 1 − (1 − p)^k = "
        f"{truth:.4f} · dashed: the estimator's mean"
    )
    for _, ya in ids:
        layout[f"yaxis{ya[1:]}"] |= {"range": [0, top], "title": {"text": "share of problems"}}
    layout["xaxis"] |= {"matches": "x2", "showticklabels": False}  # one shared x axis, labelled under the bottom row
    layout["xaxis2"] |= {
        "title": {"text": _with_note("estimated pass@k of one problem", note, t)},
        "automargin": True,
    }
    layout |= {"bargap": 0, "uirevision": "pass_at_k_simulation", "hovermode": "closest", "margin": {"t": 50}}
    return figure(data, layout, theme=theme, presenter=presenter, height=520, legend=False)


def comparison_figure(
    acc_a: float,
    acc_b: float,
    se_a: float,
    se_b: float,
    comparisons: Sequence[ModelComparison],
    *,
    z_crit: float = 1.959963984540054,
    names: tuple[str, str] = ("A", "B"),
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Both accuracies with their intervals (left) and the difference B − A with its interval (right), in points.

    ``comparisons`` holds one or two results of ``core.evaluation.compare_models``: e.g. the independent and the
    paired analysis. A difference interval is green when it excludes 0 (significant) and grey when it contains 0.
    """
    if not comparisons:
        raise ValueError("give at least one comparison")
    t = get_theme(theme)
    pal = t.palette
    titles = ("accuracy (95% interval)", f"difference {names[1]} − {names[0]} (green: significant)")
    (left, right), layout = grid(1, 2, widths=[0.45, 0.55], hgap=0.18, titles=titles)
    data: list[dict[str, Any]] = []
    for acc, se, role, name in ((acc_a, se_a, "reference", names[0]), (acc_b, se_b, "optimised", names[1])):
        colour = pal[role]
        data.append(
            {
                "type": "scatter",
                "x": [100 * acc],
                "y": [f"model {name}"],
                "mode": "markers+text",
                "text": [f"{100 * acc:.1f} ± {100 * z_crit * se:.1f}"],
                "textposition": "top center",
                "textfont": {"color": t.ink[role]},
                "marker": {"color": colour, "size": 14},
                "error_x": {"type": "data", "array": [100 * z_crit * se], "color": colour, "thickness": 3, "width": 8},
                "name": f"model {name}",
                "hovertemplate": f"model {name}: %{{x:.2f}}% ± {100 * z_crit * se:.2f}<extra></extra>",
                "showlegend": False,
                "xaxis": left[0],
                "yaxis": left[1],
            }
        )
    for comp in comparisons:
        diff, low, high = 100 * comp.difference, 100 * comp.low, 100 * comp.high
        colour = pal["optimum"] if comp.significant else pal["neutral"]
        verdict = "significant" if comp.significant else "not significant"
        data.append(
            {
                "type": "scatter",
                "x": [diff],
                "y": [comp.method],
                "mode": "markers+text",
                "text": [f"{diff:+.1f} [{low:+.1f}, {high:+.1f}]"],
                "textposition": "top center",
                "marker": {"color": colour, "size": 14, "symbol": "diamond"},
                "error_x": {
                    "type": "data",
                    "symmetric": False,
                    "array": [high - diff],
                    "arrayminus": [diff - low],
                    "color": colour,
                    "thickness": 3,
                    "width": 8,
                },
                "name": f"{comp.method}: {diff:+.1f} [{low:+.1f}, {high:+.1f}] points, {verdict}",
                "showlegend": False,  # the label sits on the marker: no legend to collide with the axis titles
                "hovertemplate": f"{comp.method}: %{{x:+.2f}} points<br>[{low:+.2f}, {high:+.2f}]<extra></extra>",
                "xaxis": right[0],
                "yaxis": right[1],
            }
        )
    zero = {"type": "line", "x0": 0, "x1": 0, "xref": right[0], "y0": 0, "y1": 1, "yref": f"{right[1]} domain"}
    layout["shapes"] = [zero | {"line": {"color": pal["negative"], "width": 2}}]
    layout["xaxis"] |= {"title": {"text": "accuracy (%)"}, "automargin": True}
    layout["xaxis2"] |= {"title": {"text": "B − A (percentage points)"}, "zeroline": False, "automargin": True}
    # categories top to bottom, with room above the first row for its label
    for key, cats in (
        ("yaxis", [f"model {names[0]}", f"model {names[1]}"]),
        ("yaxis2", [c.method for c in comparisons]),
    ):
        layout[key] |= {"type": "category", "categoryarray": cats, "range": [len(cats) - 0.5, -0.9], "autorange": False}
    layout |= {"uirevision": "model_comparison", "hovermode": "closest"}
    return figure(data, layout, theme=theme, presenter=presenter, height=360)


# ----------------------------------------------------------------------------------------------------------------
# the page's shortcuts: the same builders, fed from core.evaluation's result objects
# ----------------------------------------------------------------------------------------------------------------


def k_sweep_of(r: PassAtKCurves, ks: Sequence[int]) -> KSweep:
    """The k slider's steps at ``ks`` (each on the curves' grid ``r.ks``, the page's k among them), read off the
    curves: no estimate is computed again."""
    k_arr = np.asarray(ks, dtype=np.int64)
    at = np.searchsorted(r.ks, k_arr)
    if np.any(at >= r.ks.size) or np.any(r.ks[np.minimum(at, r.ks.size - 1)] != k_arr):
        raise ValueError("every k of the slider must be on the curves' grid")
    return KSweep(k_arr, r.unbiased[at], r.plugin[at], int(np.flatnonzero(k_arr == r.k)[0]))


def curve_figures(
    r: PassAtKCurves,
    log_x: bool | None = None,
    *,
    slider_ks: Sequence[int] | None = None,
    theme: str = "light",
    presenter: bool = False,
) -> tuple[go.Figure, go.Figure]:
    """:func:`pass_at_k_figure` and :func:`pass_hat_k_figure` from a ``core.evaluation.PassAtKCurves``; with
    ``slider_ks`` (on the curves' grid, ``r.k`` among them) the pass@k figure gets a slider over those k."""
    common = {"n": r.n, "c": r.c, "k": r.k, "log_x": log_x, "theme": theme, "presenter": presenter}
    sweep = None if slider_ks is None else k_sweep_of(r, slider_ks)
    at_k = pass_at_k_figure(
        r.ks, r.unbiased, r.plugin, unbiased_at_k=r.unbiased_at_k, plugin_at_k=r.plugin_at_k, k_sweep=sweep, **common
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


def simulation_figure_of(sim: EstimatorSimulation, *, theme: str = "light", presenter: bool = False) -> go.Figure:
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
        theme=theme,
        presenter=presenter,
    )


def comparison_figure_of(
    comparisons: Sequence[ModelComparison], *, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """:func:`comparison_figure` from one or two ``core.evaluation.ModelComparison`` of the same A, B and N."""
    first = comparisons[0]
    return comparison_figure(
        first.acc_a,
        first.acc_b,
        first.se_a,
        first.se_b,
        comparisons,
        z_crit=first.z_crit,
        theme=theme,
        presenter=presenter,
    )
