"""Figures of the training lab: a tiny GPT's loss curve (train loss per step, held-out loss at its evaluations) over
its gradient norm before clipping (the whole model's and each layer's), with a plotly slider over the shipped
learning-rate sweep, and the same figure for one curve (a preset's, with the run it is compared with, or a live run,
with the session's earlier runs).

Builders take curves already converted by the view (steps, bits per byte, norms) and do no math beyond laying them
out. Every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.style import figure, get_theme, grid, readout_panel, unlabelled_slider

UNIFORM_BITS = 8.0  # a uniform guess over 256 bytes: log2 256 bits per byte
_SLIDER_PAD, _SLIDER_PAD_PRESENTER = 56, 72
_SLIDER_HEIGHT = 80
# the plots' share of the width: the readout panel stands in the column right of them (wider in presenter type)
_PLOT_WIDTH, _PLOT_WIDTH_PRESENTER = 0.7, 0.6
_LAYER_DASH = ("dot", "dashdot", "longdash", "longdashdot", "dash", "dot", "dashdot", "longdash")


def series(
    steps: np.ndarray,
    loss_bits: np.ndarray,
    val_steps: np.ndarray,
    val_bits: np.ndarray,
    grad: np.ndarray,
    layer_grad: np.ndarray,
) -> dict[str, Any]:
    """One curve as the builders take it (train and held-out loss in bits per byte; norms before clipping)."""
    return {"steps": steps, "loss": loss_bits, "val_steps": val_steps, "val": val_bits, "grad": grad,
            "layers": layer_grad}  # fmt: skip


def _curve_traces(s: dict[str, Any], n_layers: int, pal: dict[str, str], ids: list[tuple[str, str]]) -> list[dict]:
    (x1, y1), (x2, y2) = ids
    traces: list[dict[str, Any]] = [
        {
            "type": "scatter", "x": s["steps"], "y": s["loss"], "mode": "lines", "name": "train loss",
            "line": {"color": pal["optimised"], "width": 2}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": "step %{x}: %{y:.3f} bits/byte<extra>train</extra>",
        },
        {
            "type": "scatter", "x": s["val_steps"], "y": s["val"], "mode": "lines+markers", "name": "held-out loss",
            "line": {"color": pal["reference"], "width": 2}, "marker": {"size": 7}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": "step %{x}: %{y:.3f} bits/byte<extra>held out</extra>",
        },
        {
            "type": "scatter", "x": s["steps"], "y": s["grad"], "mode": "lines", "name": "gradient norm, whole model",
            "line": {"color": pal["neutral"], "width": 2}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": "step %{x}: ‖g‖ = %{y:.3g}<extra>whole model</extra>",
        },
    ]  # fmt: skip
    layers = np.asarray(s["layers"])
    for i in range(n_layers):
        y = layers[:, i] if layers.ndim == 2 and layers.shape[1] > i else []
        traces.append({
            "type": "scatter", "x": s["steps"], "y": y, "mode": "lines",
            "name": "each layer" if i == 0 else f"layer {i + 1}", "showlegend": i == 0,
            "line": {"color": pal["highlight"], "width": 1.5, "dash": _LAYER_DASH[i % len(_LAYER_DASH)]},
            "xaxis": x2, "yaxis": y2, "legendgroup": "layers",
            "hovertemplate": f"step %{{x}}: ‖g‖ = %{{y:.3g}}<extra>layer {i + 1}</extra>",
        })  # fmt: skip
    return traces


def lab_figure(
    curves: Sequence[dict[str, Any]],
    panels: Sequence[str],
    *,
    active: int = 0,
    labels: Sequence[str] | None = None,
    title: str = "",
    others: Sequence[tuple[str, dict[str, Any]]] = (),
    height: int = 520,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Top: train loss per step and held-out loss at its evaluations (bits per byte), with the uniform guess's 8 bits
    dashed; bottom: the gradient norm before clipping, the whole model's and each layer's (log axis). ``curves``
    holds one curve, or one per step of a plotly slider (``labels``, the page's at ``active``) that swaps the curve
    and the readout panel (``panels``, one per curve). ``others``: (name, curve) drawn thin and grey for comparison
    (a preset's twin run, the session's earlier runs).

    Trace 0: train loss; 1: held-out; 2: the whole model's norm; 3..: each layer's; then the uniform line, the
    others.
    """
    t = get_theme(theme)
    pal = t.palette
    ids, layout = grid(2, 1, heights=[1.4, 1], vgap=0.18)
    n_layers = max(np.asarray(c["layers"]).shape[1] if np.asarray(c["layers"]).ndim == 2 else 0 for c in curves)
    data = _curve_traces(curves[active], n_layers, pal, ids)
    moving = list(range(len(data)))
    last = max(max((int(c["steps"][-1]) if len(c["steps"]) else 1) for c in curves), 1)
    (x1, y1) = ids[0]
    data.append({
        "type": "scatter", "x": [0, last], "y": [UNIFORM_BITS] * 2, "mode": "lines",
        "name": "uniform guess, 8 bits/byte", "line": {"color": pal["neutral"], "width": 1, "dash": "dash"},
        "xaxis": x1, "yaxis": y1, "hoverinfo": "skip",
    })  # fmt: skip
    greys = (t.muted, t.axis, t.muted)  # each at least 3:1 against the background
    for j, (name, c) in enumerate(others):
        data.append({
            "type": "scatter", "x": c["val_steps"], "y": c["val"], "mode": "lines+markers", "name": name,
            "line": {"color": greys[j % 3], "width": 1.5, "dash": "dot"}, "marker": {"size": 5},
            "xaxis": x1, "yaxis": y1,
            "hovertemplate": f"step %{{x}}: %{{y:.3f}} bits/byte<extra>{name}</extra>",
        })  # fmt: skip
    finite = [v for c in curves for v in np.asarray(c["loss"], dtype=float) if np.isfinite(v)]
    top = min(max([UNIFORM_BITS + 1, *finite[:1]] + ([max(finite)] if finite else [])) * 1.05, 24.0)
    plots = [0.0, _PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH]
    layout["xaxis"] |= {"showticklabels": False, "range": [0, last], "domain": plots}
    layout["yaxis"] |= {"title": {"text": "loss, bits/byte"}, "range": [0, top]}
    layout["xaxis2"] |= {"title": {"text": "step"}, "matches": "x", "domain": plots}
    layout["yaxis2"] |= {"title": {"text": "‖g‖, pre-clip"}, "type": "log"}
    layout["title"] = {"text": title}
    layout["annotations"] = [readout_panel(panels[active], t)]
    layout["hovermode"] = "closest"
    layout["legend"] = {"y": 1.02}
    layout["uirevision"] = "training-lab"
    extra = 0
    if labels is not None and len(curves) > 1:
        steps = []
        for i, label in enumerate(labels):
            tr = _curve_traces(curves[i], n_layers, pal, ids)
            steps.append({
                "method": "update", "label": label,
                "args": [{"x": [d["x"] for d in tr], "y": [d["y"] for d in tr]},
                         {"annotations[0].text": panels[i]}, moving],
            })  # fmt: skip
        pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
        layout["sliders"] = [unlabelled_slider(steps, active, "peak learning rate ", pad)]
        extra = _SLIDER_HEIGHT
    return figure(data, layout, theme=theme, presenter=presenter, height=height + extra)
