"""Figures of the FlashAttention page: the toy's score matrix with the current tile of the tiled forward outlined and
the online softmax's running statistics in a readout panel (with a plotly slider over the step), the HBM bytes of
standard attention and of Algorithm 1 against the sequence length with their ratio, and the bytes the backward keeps.

Builders take numbers computed by core.flash_attention (the view calls core, then these) and do no math beyond
laying them out. Every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type for a room).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.style import colorscale, figure, get_theme, grid, readout_panel, unlabelled_slider

_SLIDER_PAD, _SLIDER_PAD_PRESENTER = 56, 72  # room under the plot for the x axis, above the slider
_SLIDER_HEIGHT = 80
_PLOT_WIDTH, _PLOT_WIDTH_PRESENTER = 0.52, 0.46  # the heatmap's share of the width beside the readout panel

Block = tuple[tuple[int, int], tuple[int, int]]  # (query rows [r0, r1), key columns [c0, c1))


def _outline(block: Block) -> tuple[list[float | None], list[float | None]]:
    """A closed rectangle around a tile's cells (cell centres at whole numbers)."""
    (r0, r1), (c0, c1) = block
    x0, x1, y0, y1 = c0 - 0.5, c1 - 0.5, r0 - 0.5, r1 - 0.5
    return [x0, x1, x1, x0, x0], [y0, y0, y1, y1, y0]


def _outlines(blocks: Sequence[Block]) -> tuple[list[float | None], list[float | None]]:
    xs: list[float | None] = []
    ys: list[float | None] = []
    for b in blocks:
        x, y = _outline(b)
        xs += [*x, None]
        ys += [*y, None]
    return xs, ys


def tiles_figure(
    scores: np.ndarray,
    blocks: Sequence[Block],
    skipped: Sequence[Block],
    panels: Sequence[str],
    *,
    active: int = 0,
    height: int = 430,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The score matrix S = QKᵀ/√d (T × T, NaN where the causal mask hides a cell) as a heatmap, the tiles the mask
    skips outlined dashed, and the current tile outlined; a plotly slider over the steps (``blocks`` in loop order,
    the page's step at ``active``) moves the outline and the readout panel (``panels``, one per step).

    Trace 0: the heatmap; 1: the skipped tiles; 2: the current tile.
    """
    t = get_theme(theme)
    pal = t.palette
    z = np.asarray(scores, dtype=np.float64)
    T = z.shape[0]
    edge = [-0.5, T - 0.5]
    peak = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 1.0
    sx, sy = _outlines(skipped)
    x, y = _outline(blocks[active])
    data: list[dict[str, Any]] = [
        {
            "type": "heatmap", "z": z, "x": np.arange(T), "y": np.arange(T), "coloraxis": "coloraxis",
            "name": "scores", "hovertemplate": "query %{y}, key %{x}: S = %{z:.3f}<extra></extra>",
        },
        {
            "type": "scatter", "x": sx or [None], "y": sy or [None], "mode": "lines",
            "name": "tiles skipped (causal)", "line": {"color": pal["neutral"], "width": 2, "dash": "dot"},
            "hoverinfo": "skip",
        },
        {
            "type": "scatter", "x": x, "y": y, "mode": "lines", "name": "current tile",
            "line": {"color": pal["optimised"], "width": 4}, "hoverinfo": "skip",
        },
    ]  # fmt: skip
    domain = [0.0, _PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH]
    layout: dict[str, Any] = {
        "xaxis": {"title": {"text": "key position j"}, "range": edge, "domain": domain, "zeroline": False,
                  "constrain": "domain",
                  "showgrid": False, "dtick": 4 if T > 8 else 1},
        "yaxis": {"title": {"text": "query position i"}, "range": [T - 0.5, -0.5], "zeroline": False,
                  "showgrid": False, "dtick": 4 if T > 8 else 1, "scaleanchor": "x"},
        "coloraxis": {"colorscale": colorscale("diverging", theme), "cmin": -peak, "cmax": peak,
                      "colorbar": {"title": {"text": "S"}, "x": domain[1] + 0.01, "len": 0.8, "thickness": 14}},
        "title": {"text": "The tiled forward: one tile of S at a time, the softmax kept online"},
        "annotations": [readout_panel(panels[active], t)],
        "legend": {"y": 1.02},
        "hovermode": "closest",
        "uirevision": "flash-tiles",
    }  # fmt: skip
    steps = [
        {
            "method": "update",
            "label": f"{k + 1}",
            "args": [{"x": [_outline(b)[0]], "y": [_outline(b)[1]]}, {"annotations[0].text": panels[k]}, [2]],
        }
        for k, b in enumerate(blocks)
    ]
    pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
    layout["sliders"] = [unlabelled_slider(steps, active, "step ", pad)]
    return figure(data, layout, theme=theme, presenter=presenter, height=height + _SLIDER_HEIGHT)


def _log_range(low: float, high: float) -> list[float]:
    return [math.log10(low) - 0.1, math.log10(high) + 0.1]


def hbm_traffic_figure(
    lengths: np.ndarray,
    standard: np.ndarray,
    flash: np.ndarray,
    n: int,
    flat: float,
    d: int,
    sram_kib: int,
    *,
    height: int = 470,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Top: bytes moved between HBM and SRAM by one head's forward attention against N (log-log), standard
    (Algorithm 0) and FlashAttention (Algorithm 1), with the page's N marked. Bottom: their ratio, and the level
    ``flat`` it approaches as N grows."""
    t = get_theme(theme)
    pal = t.palette
    N = np.asarray(lengths, dtype=np.float64)
    s, f = np.asarray(standard, dtype=np.float64), np.asarray(flash, dtype=np.float64)
    at = int(np.searchsorted(N, n))
    ids, layout = grid(2, 1, heights=[2, 1], vgap=0.1)
    (x1, y1), (x2, y2) = ids
    data = [
        {
            "type": "scatter", "x": N, "y": s, "mode": "lines", "name": "standard (Algorithm 0)",
            "line": {"color": pal["reference"], "width": 2.5}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": "N = %{x:,}: %{y:.3s}B<extra>standard</extra>",
        },
        {
            "type": "scatter", "x": N, "y": f, "mode": "lines",
            "name": f"FlashAttention (Algorithm 1), M = {sram_kib} KiB",
            "line": {"color": pal["optimised"], "width": 2.5}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": "N = %{x:,}: %{y:.3s}B<extra>flash</extra>",
        },
        {
            "type": "scatter", "x": [N[at], N[at]], "y": [s[at], f[at]], "mode": "markers", "name": "your N",
            "marker": {"color": pal["highlight"], "size": 10, "symbol": "diamond"}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": "N = %{x:,}: %{y:.3s}B<extra></extra>",
        },
        {
            "type": "scatter", "x": N, "y": s / f, "mode": "lines", "name": "standard ÷ flash",
            "line": {"color": pal["optimum"], "width": 2.5}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": "N = %{x:,}: %{y:.2f}×<extra>ratio</extra>",
        },
        {
            "type": "scatter", "x": [N[0], N[-1]], "y": [flat, flat], "mode": "lines",
            "name": "4M / ((12 + 16/d)·d²)", "line": {"color": pal["neutral"], "width": 1.5, "dash": "dash"},
            "xaxis": x2, "yaxis": y2, "hoverinfo": "skip",
        },
    ]  # fmt: skip
    layout["xaxis"] |= {"type": "log", "showticklabels": False}
    layout["yaxis"] |= {"type": "log", "title": {"text": "bytes (fp16)"}}
    layout["xaxis2"] |= {"type": "log", "title": {"text": "sequence length N (tokens)"}, "matches": "x"}
    ratio = s / f
    low, high = min(float(ratio.min()), flat, 1.0), max(float(ratio.max()), flat)
    layout["yaxis2"] |= {"title": {"text": "ratio"}, "range": [0, high * 1.15 if high > low else high + 1]}
    layout["title"] = {"text": f"HBM traffic of one head's forward, d = {d}: the paper's algorithms, counted"}
    layout["hovermode"] = "closest"
    layout["legend"] = {"y": 1.02}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def backward_memory_figure(
    lengths: np.ndarray,
    standard: np.ndarray,
    flash: np.ndarray,
    n: int,
    heads: int,
    d: int,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Bytes one layer's attention keeps for its backward, beyond Q, K and V, against N (log-log): the N × N
    probabilities of the standard backward against FlashAttention's O and one logsumexp per row."""
    t = get_theme(theme)
    pal = t.palette
    N = np.asarray(lengths, dtype=np.float64)
    s, f = np.asarray(standard, dtype=np.float64), np.asarray(flash, dtype=np.float64)
    at = int(np.searchsorted(N, n))
    data = [
        {
            "type": "scatter", "x": N, "y": s, "mode": "lines", "name": "standard: P, N × N per head",
            "line": {"color": pal["reference"], "width": 2.5},
            "hovertemplate": "N = %{x:,}: %{y:.3s}B<extra>P</extra>",
        },
        {
            "type": "scatter", "x": N, "y": f, "mode": "lines", "name": "FlashAttention: O and a logsumexp per row",
            "line": {"color": pal["optimised"], "width": 2.5},
            "hovertemplate": "N = %{x:,}: %{y:.3s}B<extra>O + logsumexp</extra>",
        },
        {
            "type": "scatter", "x": [N[at], N[at]], "y": [s[at], f[at]], "mode": "markers", "name": "your N",
            "marker": {"color": pal["highlight"], "size": 10, "symbol": "diamond"},
            "hovertemplate": "N = %{x:,}: %{y:.3s}B<extra></extra>",
        },
    ]  # fmt: skip
    layout = {
        "xaxis": {"title": {"text": "sequence length N (tokens)"}, "type": "log"},
        "yaxis": {"title": {"text": "bytes kept, one layer (fp16 values, fp32 logsumexp)"}, "type": "log",
                  "range": _log_range(float(f.min()), float(s.max()))},
        "title": {"text": f"What the backward keeps: {heads} heads, d = {d}, one sequence"},
        "hovermode": "closest",
        "legend": {"y": 1.02},
    }  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
