"""Figures of the training-memory page: per-GPU memory by component against the card, and the pipeline bubble.

Builders take bytes and fractions that core.training_memory computed and only draw them. Memory is plotted in
GiB (2^30 bytes: binary units, as nvidia-smi's MiB are); the axis title says so, and the GB-vs-GiB trap draws the
card's label misread as decimal GB as a second, lower line.

Figures are assembled as plain dicts through :func:`viz.style.figure`; every builder takes ``theme`` ("light" or
"dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from viz.style import Theme, figure, get_theme

GIB = 2**30
COMPONENT_ROLES: dict[str, str] = {
    "weights": "reference",
    "gradients": "rule",
    "optimizer states": "optimised",
    "activations": "highlight",
}


def _hline(y: float, t: Theme, role: str, dash: str, text: str, position: str) -> tuple[dict[str, Any], dict[str, Any]]:
    shape = {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": y,
        "y1": y,
        "line": {"color": t.palette[role], "width": 2.5, "dash": dash},
    }
    note = {
        "xref": "paper",
        "x": 0.0 if position == "left" else 1.0,
        "xanchor": position,
        "y": y,
        "yanchor": "bottom",
        "text": text,
        "showarrow": False,
        "font": {"color": t.ink[role]},
    }
    return shape, note


def training_memory_figure(
    labels: Sequence[str],
    components: Mapping[str, Sequence[float]],
    gpu_bytes: float,
    gpu_name: str,
    *,
    chosen: int | None = None,
    gb_misread_bytes: float | None = None,
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Stacked per-GPU bars, one per configuration in ``labels``, against the card's memory.

    components: name ("weights", "gradients", "optimizer states", "activations") -> bytes per bar. gpu_bytes: the
    card's memory in bytes (its label read as GiB). chosen: index of the page's configuration (outlined and
    labelled). gb_misread_bytes: draw the trap's line, the label read as decimal GB.
    """
    t = get_theme(theme)
    n = len(labels)
    totals = np.zeros(n)
    data: list[dict[str, Any]] = []
    for name, values in components.items():
        v = np.asarray(values, dtype=float)
        if v.shape != (n,):
            raise ValueError(f"{name}: expected {n} values, got shape {v.shape}")
        totals += v
        data.append(
            {
                "type": "bar",
                "x": list(labels),
                "y": v / GIB,
                "name": name,
                "marker": {"color": t.palette[COMPONENT_ROLES.get(name, "neutral")]},
                "customdata": v / 1e9,
                "hovertemplate": f"{name}: %{{y:.2f}} GiB (%{{customdata:.2f}} GB)<extra>%{{x}}</extra>",
            }
        )
    capacity = gpu_bytes / GIB
    shapes, notes = [], []
    shape, note = _hline(
        capacity,
        t,
        "negative",
        "solid",
        f"{gpu_name}: {capacity:,.0f} GiB = {gpu_bytes / 1e9:,.1f} GB",
        "right",
    )
    shapes.append(shape)
    notes.append(note)
    if gb_misread_bytes is not None:
        shape, note = _hline(
            gb_misread_bytes / GIB,
            t,
            "neutral",
            "dash",
            f"trap: the label read as GB = {gb_misread_bytes / GIB:,.1f} GiB",
            "left",
        )
        note["yanchor"] = "top"
        shapes.append(shape)
        notes.append(note)
    for i, total in enumerate(totals):
        fits = total <= gpu_bytes
        notes.append(
            {
                "x": labels[i],
                "y": total / GIB,
                "yanchor": "bottom",
                "text": f"<b>{total / GIB:,.1f} GiB</b>" + ("" if fits else " ✗"),
                "showarrow": False,
                "font": {"color": t.text if fits else t.ink["negative"]},
            }
        )
    if chosen is not None:
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": chosen - 0.48,
                "x1": chosen + 0.48,
                "y0": 0,
                "y1": 1,
                "line": {"color": t.palette["optimised"], "width": 3},
                "fillcolor": "rgba(0,0,0,0)",
            }
        )
    top = max(capacity, float(totals.max()) / GIB if n else 0.0) * 1.15
    layout = {
        "barmode": "stack",
        "xaxis": {"title": {"text": "configuration (outlined: yours)"}, "type": "category"},
        "yaxis": {"title": {"text": "memory per GPU (GiB, 1 GiB = 2³⁰ B = 1.074 GB)"}, "range": [0, top]},
        "shapes": shapes,
        "annotations": notes,
        "uirevision": "training-memory",
        "hovermode": "x unified",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def pipeline_bubble_figure(
    m: ArrayLike,
    bubbles: Mapping[int, ArrayLike],
    current: tuple[int, int, float] | None = None,
    *,
    target: float | None = None,
    height: int = 400,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Idle fraction (p-1)/(m+p-1) against the number of micro-batches m, one line per pipeline depth p.

    bubbles: p -> bubble fraction at each m. current: (p, m, bubble) of the page's run (an orange dot).
    target: a horizontal guide (the 10% a team might aim for).
    """
    t = get_theme(theme)
    pal = t.palette
    x = np.asarray(m, dtype=float)
    colours = (pal["rule"], pal["reference"], pal["optimum"], pal["highlight"], pal["neutral"])
    data: list[dict[str, Any]] = []
    for i, (p, b) in enumerate(bubbles.items()):
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": np.asarray(b, dtype=float),
                "mode": "lines",
                "name": f"p = {p} stages",
                "line": {"color": colours[i % len(colours)], "width": 2.5},
                "hovertemplate": f"p = {p}, m = %{{x:.0f}}<br>bubble %{{y:.1%}}<extra></extra>",
            }
        )
    if current is not None:
        p, mm, b = current
        data.append(
            {
                "type": "scatter",
                "x": [mm],
                "y": [b],
                "mode": "markers",
                "name": f"your run: p = {p}, m = {mm}",
                "marker": {"color": pal["optimised"], "size": 14, "line": {"color": t.text, "width": 1}},
                "hovertemplate": f"p = {p}, m = {mm}<br>bubble %{{y:.1%}}<extra></extra>",
            }
        )
    shapes = []
    if target is not None:
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": target,
                "y1": target,
                "line": {"color": pal["neutral"], "dash": "dot", "width": 1.5},
            }
        )
    layout = {
        "xaxis": {"title": {"text": "micro-batches per step m"}, "type": "log"},
        "yaxis": {"title": {"text": "idle share (p − 1)/(m + p − 1)"}, "range": [0, 1], "tickformat": ".0%"},
        "shapes": shapes,
        "uirevision": "pipeline-bubble",
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
