"""Figures of the test-time compute page: best-of-n with a perfect verifier beside the gold score of best-of-n against
a learned reward model (a plotly slider over n moves a marker on each), majority voting against n and against p,
pass@k against samples and against compute, and the toy split of a fixed budget between training and inference.

Builders take numbers computed by core.test_time_compute (the view calls core, then these) and do no math beyond
laying them out. Every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.style import figure, get_theme, grid, readout_panel, unlabelled_slider

_SLIDER_PAD, _SLIDER_PAD_PRESENTER = 56, 72
_SLIDER_HEIGHT = 80


# the plots' share of the width: the readout panel stands in the column right of them (wider in presenter type)
_PLOT_WIDTH, _PLOT_WIDTH_PRESENTER = 0.74, 0.64


def best_of_n_figure(
    n_curve: np.ndarray,
    success: np.ndarray,
    p: float,
    gold: np.ndarray,
    peak_n: float,
    peak_gold: float,
    steps_n: Sequence[int],
    steps_success: Sequence[float],
    steps_gold: Sequence[float],
    panels: Sequence[str],
    *,
    active: int = 0,
    height: int = 430,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: P(success) of best-of-n with a perfect verifier against n (log), one sample's p dotted. Right: the gold
    score of best-of-n against a learned reward model against n, its peak marked. A plotly slider over ``steps_n``
    (the page's n at ``active``) moves a marker on each curve and swaps the readout panel (``panels``).

    Traces: 0 success curve, 1 one sample, 2 this n (verifier), 3 gold curve, 4 the peak, 5 this n (gold).
    """
    pal = get_theme(theme).palette
    ids, layout = grid(1, 2, hgap=0.2 if presenter else 0.14)
    (x1, y1), (x2, y2) = ids
    share = _PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH
    for axis in ("xaxis", "xaxis2"):
        layout[axis]["domain"] = [round(v * share, 6) for v in layout[axis]["domain"]]
    span = [float(n_curve[0]), float(n_curve[-1])]
    data: list[dict[str, Any]] = [
        {"type": "scatter", "x": n_curve, "y": success, "mode": "lines", "name": "verifier",
         "line": {"color": pal["optimised"], "width": 3}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "n = %{x}: P(success) %{y:.3f}<extra></extra>"},
        {"type": "scatter", "x": span, "y": [p, p], "mode": "lines", "name": "one sample (p)",
         "line": {"color": pal["neutral"], "width": 2, "dash": "dot"}, "xaxis": x1, "yaxis": y1, "hoverinfo": "skip"},
        {"type": "scatter", "x": [steps_n[active]], "y": [steps_success[active]], "mode": "markers",
         "name": "this n", "marker": {"color": pal["highlight"], "size": 13}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "n = %{x}: %{y:.3f}<extra>this n</extra>"},
        {"type": "scatter", "x": n_curve, "y": gold, "mode": "lines",
         "name": "reward model (gold)", "line": {"color": pal["reference"], "width": 3},
         "xaxis": x2, "yaxis": y2,
         "hovertemplate": "n = %{x}: gold %{y:.3f}<extra></extra>"},
        {"type": "scatter", "x": [peak_n], "y": [peak_gold], "mode": "markers", "name": "peak",
         "marker": {"color": pal["reference"], "size": 12, "symbol": "star"}, "xaxis": x2, "yaxis": y2,
         "hovertemplate": "peak: n = %{x:.0f}, gold %{y:.3f}<extra></extra>"},
        {"type": "scatter", "x": [steps_n[active]], "y": [steps_gold[active]], "mode": "markers",
         "name": "this n", "showlegend": False, "marker": {"color": pal["highlight"], "size": 13}, "xaxis": x2,
         "yaxis": y2, "hovertemplate": "n = %{x}: gold %{y:.3f}<extra>this n</extra>"},
    ]  # fmt: skip
    for axis in ("xaxis", "xaxis2"):
        layout[axis] |= {"type": "log", "title": {"text": "n: samples drawn"}}
    layout["yaxis"] |= {"title": {"text": "P(success)"}, "range": [0, 1.05]}
    top = max(float(np.max(gold)), peak_gold)
    bottom = min(float(np.min(gold)), 0.0)
    # the readout panel names the coefficients illustrative: a longer axis title ran into the legend in presenter mode,
    # and a longer legend entry wrapped the legend (legend_rows reserved five rows, a blank band above the plot)
    layout["yaxis2"] |= {"title": {"text": "gold score"},
                         "range": [bottom - 0.05 * (top - bottom), top + 0.12 * (top - bottom)]}  # fmt: skip
    layout["annotations"] = [readout_panel(panels[active], get_theme(theme))]
    layout["title"] = {"text": "Best-of-n: a verifier keeps paying, a reward model's gold score turns down"}
    layout["legend"] = {"y": 1.02}
    layout["hovermode"] = "closest"
    layout["uirevision"] = "ttc-best-of-n"
    steps = [
        {
            "method": "update",
            "label": f"{n}",
            "args": [
                {"x": [[n], [n]], "y": [[steps_success[i]], [steps_gold[i]]]},
                {"annotations[0].text": panels[i]},
                [2, 5],
            ],
        }
        for i, n in enumerate(steps_n)
    ]
    pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
    layout["sliders"] = [unlabelled_slider(steps, active, "n = ", pad)]
    return figure(data, layout, theme=theme, presenter=presenter, height=height + _SLIDER_HEIGHT)


def vote_figure(
    ns: np.ndarray,
    curves: Sequence[tuple[str, np.ndarray]],
    ps: np.ndarray,
    by_p: Sequence[tuple[str, np.ndarray]],
    n: int,
    p: float,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: accuracy against n at the page's p for each named curve (the verifier's ceiling, majority voting with m
    distractors, with one, with every wrong answer distinct), one sample's p dotted. Right: the same against p at
    the page's n, the line p = 0.5 dashed. ``curves`` and ``by_p``: (name, values), the chosen m's first."""
    pal = get_theme(theme).palette
    colors = (pal["optimised"], pal["highlight"], pal["reference"], pal["neutral"])
    dashes = ("solid", "solid", "dash", "dot")
    ids, layout = grid(1, 2, hgap=0.1)
    (x1, y1), (x2, y2) = ids
    data: list[dict[str, Any]] = []
    for i, (name, y) in enumerate(curves):
        data.append({"type": "scatter", "x": ns, "y": y, "mode": "lines", "name": name, "legendgroup": name,
                     "line": {"color": colors[i % 4], "width": 3 if i < 2 else 2, "dash": dashes[i % 4]},
                     "xaxis": x1, "yaxis": y1,
                     "hovertemplate": f"n = %{{x}}: %{{y:.3f}}<extra>{name}</extra>"})  # fmt: skip
    for i, (name, y) in enumerate(by_p):
        data.append({"type": "scatter", "x": ps, "y": y, "mode": "lines", "name": name, "legendgroup": name,
                     "showlegend": False, "line": {"color": colors[i % 4], "width": 3 if i < 2 else 2,
                                                   "dash": dashes[i % 4]},
                     "xaxis": x2, "yaxis": y2,
                     "hovertemplate": f"p = %{{x:.2f}}: %{{y:.3f}}<extra>{name}</extra>"})  # fmt: skip
    data.append({"type": "scatter", "x": [float(ns[0]), float(ns[-1])], "y": [p, p], "mode": "lines",
                 "name": "one sample (p)", "line": {"color": pal["neutral"], "width": 1.5, "dash": "dot"},
                 "xaxis": x1, "yaxis": y1, "hoverinfo": "skip"})  # fmt: skip
    layout["xaxis"] |= {"type": "log", "title": {"text": f"n: samples voted on (p = {p:g})"}}
    layout["xaxis2"] |= {"title": {"text": f"p: one sample's accuracy (n = {n})"}, "range": [0, 1]}
    layout["yaxis"] |= {"title": {"text": "P(the vote is right)"}, "range": [0, 1.05]}
    layout["yaxis2"] |= {"range": [0, 1.05]}
    layout["shapes"] = [
        {"type": "line", "xref": x2, "x0": 0.5, "x1": 0.5, "yref": "y2 domain", "y0": 0, "y1": 1,
         "line": {"color": pal["neutral"], "width": 1, "dash": "dash"}},
        {"type": "line", "xref": x1, "x0": n, "x1": n, "yref": "y domain", "y0": 0, "y1": 1,
         "line": {"color": pal["neutral"], "width": 1, "dash": "dash"}},
    ]  # fmt: skip
    layout["title"] = {
        "text": "Majority voting: with m equally likely wrong answers, a plurality wins once p > 1/(m + 1)"
    }
    layout["legend"] = {"y": 1.02}
    layout["hovermode"] = "closest"
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def pass_per_compute_figure(
    ks: np.ndarray,
    small: np.ndarray,
    large: np.ndarray,
    ratio: float,
    k: int,
    small_at: float,
    large_at: float,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: pass@k of a small and a large model against k. Right: the same against compute, in units of one large
    sample (a small sample costs 1/``ratio`` of one); the markers at k large samples and the same compute."""
    pal = get_theme(theme).palette
    ids, layout = grid(1, 2, hgap=0.1)
    (x1, y1), (x2, y2) = ids
    data: list[dict[str, Any]] = []
    for name, y, color in (("small model", small, pal["optimised"]), ("large model", large, pal["reference"])):
        data.append({"type": "scatter", "x": ks, "y": y, "mode": "lines", "name": name, "legendgroup": name,
                     "line": {"color": color, "width": 3}, "xaxis": x1, "yaxis": y1,
                     "hovertemplate": f"k = %{{x}}: %{{y:.3f}}<extra>{name}</extra>"})  # fmt: skip
    for name, y, color, scale in (("small model", small, pal["optimised"], 1 / ratio),
                                  ("large model", large, pal["reference"], 1.0)):  # fmt: skip
        data.append({"type": "scatter", "x": ks * scale, "y": y, "mode": "lines", "name": name, "legendgroup": name,
                     "showlegend": False, "line": {"color": color, "width": 3}, "xaxis": x2, "yaxis": y2,
                     "hovertemplate": f"compute %{{x:.3g}}: %{{y:.3f}}<extra>{name}</extra>"})  # fmt: skip
    data.append({"type": "scatter", "x": [k, k], "y": [small_at, large_at], "mode": "markers",
                 "name": "the same compute", "marker": {"color": pal["highlight"], "size": 12}, "xaxis": x2,
                 "yaxis": y2, "hovertemplate": "compute %{x:.3g}: %{y:.3f}<extra></extra>"})  # fmt: skip
    layout["xaxis"] |= {"type": "log", "title": {"text": "k: samples"}}
    layout["xaxis2"] |= {"type": "log", "title": {"text": "compute, in large-model samples"}}
    layout["yaxis"] |= {"title": {"text": "pass@k"}, "range": [0, 1.05]}
    layout["yaxis2"] |= {"range": [0, 1.05]}
    layout["title"] = {"text": "pass@k: per sample the large model wins, per FLOP it may not"}
    layout["legend"] = {"y": 1.02}
    layout["hovermode"] = "closest"
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def split_figure(
    share: np.ndarray,
    accuracy: np.ndarray,
    tokens_per_param: np.ndarray,
    best: float,
    best_accuracy: float,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: the toy's accuracy against the share of the budget spent on training, the best share marked. Right: the
    tokens per parameter of the best model at each share (log), Chinchilla's 20 dashed."""
    pal = get_theme(theme).palette
    ids, layout = grid(1, 2, hgap=0.12)
    (x1, y1), (x2, y2) = ids
    pct = 100 * share
    data: list[dict[str, Any]] = [
        {"type": "scatter", "x": pct, "y": accuracy, "mode": "lines", "name": "accuracy, a verifier picks",
         "line": {"color": pal["optimised"], "width": 3}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "%{x:.1f}% on training: %{y:.3f}<extra></extra>"},
        {"type": "scatter", "x": [100 * best], "y": [best_accuracy], "mode": "markers", "name": "the best share",
         "marker": {"color": pal["highlight"], "size": 13}, "xaxis": x1, "yaxis": y1,
         "hovertemplate": "%{x:.1f}% on training: %{y:.3f}<extra>best</extra>"},
        {"type": "scatter", "x": pct, "y": tokens_per_param, "mode": "lines", "name": "D/N of the best model",
         "line": {"color": pal["reference"], "width": 3}, "xaxis": x2, "yaxis": y2,
         "hovertemplate": "%{x:.1f}% on training: D/N %{y:.0f}<extra></extra>"},
        {"type": "scatter", "x": [0, 100], "y": [20, 20], "mode": "lines", "name": "D/N = 20 (Chinchilla)",
         "line": {"color": pal["neutral"], "width": 2, "dash": "dash"}, "xaxis": x2, "yaxis": y2,
         "hoverinfo": "skip"},
    ]  # fmt: skip
    layout["xaxis"] |= {"title": {"text": "% of the budget on training"}, "range": [0, 100]}
    layout["xaxis2"] |= {"title": {"text": "% of the budget on training"}, "range": [0, 100]}
    layout["yaxis"] |= {"title": {"text": "problems solved"}, "range": [0, 1.05]}
    layout["yaxis2"] |= {"type": "log", "title": {"text": "D / N of that model"}}
    layout["title"] = {"text": "A toy: one budget split between training once and serving every query"}
    layout["legend"] = {"y": 1.02}
    layout["hovermode"] = "closest"
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
