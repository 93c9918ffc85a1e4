"""Figures of the serving page: the roofline of prefill and decode, speculative decoding and KV-cache capacity (the
mixture-of-experts router is the MoE page's, viz.moe).

Builders take arrays that core.serving computed and only draw them (unit changes aside: FLOP/s are shown as
TFLOP/s, memory as GiB = 2^30 bytes). Figures are assembled as plain dicts through :func:`viz.style.figure`; every
builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from viz.format import binary_bytes
from viz.style import figure, get_theme, readout_panel

TERA = 1e12


def _arr(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=float)


def _sig4(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to 4 significant digits: what a marker needs, and a small slider payload."""
    return np.array([float(f"{v:.4g}") for v in x])


def _point_hover(name: str) -> str:
    return f"{name}<br>%{{x:.4g}} FLOP/B<br>%{{y:.4g}} TFLOP/s<extra></extra>"


# the legend's name of the decode point the slider moves (one name at every step)
DRAGGED = "decode at the dragged batch"

# the roofline's right edge when a readout column stands beside it (presenter type makes the column wider)
_PLOT_RIGHT = {False: 0.74, True: 0.64}


def decode_bound(memory_seconds: float, compute_seconds: float, intensity: float, ridge: float) -> tuple[str, bool]:
    """Which term sets a step's floor time: "memory-bound" when its memory time is at least its compute time, else
    "compute-bound"; and whether the group's intensity against the ridge says otherwise. Tensor parallelism that
    copies the KV cache (more GPUs than KV heads, MLA's latent) makes each GPU read more bytes per FLOP than the
    group's intensity counts, so a step can be past the ridge and still memory-bound."""
    memory = memory_seconds >= compute_seconds
    return ("memory-bound" if memory else "compute-bound"), memory != (intensity < ridge)


def _kv_lines(batch: int, kv_fit: tuple[float, int, float]) -> list[str]:
    """The over-capacity lines of a step whose ``batch`` sequences' KV cache does not fit beside the weights (none
    when it does). kv_fit: (bytes one sequence holds, all tensor-parallel copies together; sequences that fit;
    copies)."""
    held, fit, copies = kv_fit
    if batch <= fit:
        return []
    do = "not one sequence fits" if fit == 0 else "1 sequence does" if fit == 1 else f"{fit:,} sequences do"
    size = binary_bytes(batch * held)
    return [f"✗ KV cache {size}", *(["with its TP copies"] if copies > 1 else []), "does not fit", f"({do})"]


def _decode_readout(
    batch: int,
    context: int,
    intensity: float,
    flops: float,
    seconds: float,
    bound: tuple[str, bool],
    n_gpus: int,
    kv_fit: tuple[float, int, float] | None,
    unfit: str | None,
) -> str:
    """The readout panel's text for one decode step of ``batch`` sequences at ``context``: the roofline's numbers,
    which term sets the step time (``bound``, from :func:`decode_bound`), the step time as the floor it is, and the
    FLOP/s and tokens per second that floor allows (the tokens of all ``n_gpus`` GPUs together); then, when the batch's
    KV cache does not fit (``kv_fit``) or nothing does (``unfit``), that."""
    label, group_disagrees = bound
    lines = [
        f"<b>decode, batch {batch:,},<br>context {context:,}</b>",
        f"{intensity:,.1f} FLOP/B",
        label,
        *(["(group intensity; each GPU", "reads a copied KV share)"] if group_disagrees else []),
        f"at most {_sig3(flops / TERA)} TFLOP/s per GPU",
        f"step: a floor of {_sig3(1e3 * seconds)} ms",
        f"at most {batch / seconds:,.0f} tokens/s",
    ]
    if n_gpus > 1:
        lines.append(f"from the {n_gpus} GPUs together")
    if unfit:
        lines.append(unfit)
    elif kv_fit is not None:
        lines += _kv_lines(batch, kv_fit)
    return "<br>".join(lines)


def _sig3(x: float) -> str:
    """Three significant digits, trailing zeros kept (60.0, 9.90), whole numbers with commas from 100 on."""
    return f"{x:,.0f}" if x >= 100 else f"{x:#.3g}".rstrip(".")


def roofline_figure(
    intensity: ArrayLike,
    attainable: ArrayLike,
    peak_flops: float,
    bandwidth: float,
    gpu_name: str,
    *,
    points: Sequence[tuple[str, float, float]] = (),
    decode_curve: tuple[ArrayLike, ArrayLike, ArrayLike] | None = None,
    batch_sweep: tuple[ArrayLike, ArrayLike, ArrayLike, ArrayLike, ArrayLike, ArrayLike] | None = None,
    batch: int | None = None,
    context: int | None = None,
    kv_fit: tuple[float, int, float] | None = None,
    unfit: str | None = None,
    n_gpus: int = 1,
    sparse_attainable: ArrayLike | None = None,
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Attainable FLOP/s against arithmetic intensity (FLOP per byte), log-log, with the ridge point.

    intensity, attainable: the roof min(peak, I x bandwidth). points: (name, intensity, attained FLOP/s) for the
    prefill and decode steps; the first point whose name starts with "prefill" is orange, the others blue.
    decode_curve: (batch sizes, intensity, attained FLOP/s) of decode as the batch grows. sparse_attainable: the
    trap's roof at the 2:4-sparse peak, dashed.

    batch_sweep: (batch sizes, intensity, attained FLOP/s per GPU, step seconds, memory seconds, compute seconds)
    of one decode step of ``context`` cached tokens at each batch of a plotly slider, ``batch`` (one of those sizes)
    the page's. The decode point at ``batch`` (the last trace) and a readout panel right of the plot (annotation 0:
    intensity; memory- or compute-bound by the larger time, with a note where the group's intensity says otherwise;
    the FLOP/s per GPU and the tokens per second of the ``n_gpus`` GPUs at the step's floor time) follow the slider's
    steps in the browser. kv_fit: (bytes one sequence's KV cache holds, all tensor-parallel copies together;
    sequences that fit beside the weights; copies): a step whose batch exceeds them says its cache does not fit.
    unfit: a line every step shows instead (the weights alone do not fit).
    """
    t = get_theme(theme)
    pal = t.palette
    x = _arr(intensity)
    ridge = peak_flops / bandwidth
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": x,
            "y": _arr(attainable) / TERA,
            "mode": "lines",
            "name": f"roofline of one {gpu_name}",
            "line": {"color": t.text, "width": 3},
            "hovertemplate": "intensity %{x:.3g} FLOP/B<br>at most %{y:.4g} TFLOP/s<extra></extra>",
        }
    ]
    if sparse_attainable is not None:
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": _arr(sparse_attainable) / TERA,
                "mode": "lines",
                "name": "trap: the sparse peak as the roof",
                "line": {"color": pal["negative"], "width": 2, "dash": "dash"},
                "hovertemplate": "sparse roof %{y:.4g} TFLOP/s<extra></extra>",
            }
        )
    data.append(
        {
            "type": "scatter",
            "x": [ridge],
            "y": [peak_flops / TERA],
            "mode": "markers+text",
            "name": f"ridge point: {ridge:,.0f} FLOP/B",
            "text": [f"ridge {ridge:,.0f} FLOP/B"],
            "textposition": "bottom right",
            "marker": {"color": t.text, "size": 10, "symbol": "diamond"},
            "hovertemplate": "ridge: peak / bandwidth = %{x:.4g} FLOP/B<extra></extra>",
        }
    )
    if decode_curve is not None:
        b, i, f = (_arr(v) for v in decode_curve)
        data.append(
            {
                "type": "scatter",
                "x": i,
                "y": f / TERA,
                "mode": "lines+markers",
                "name": "decode as the batch grows",
                "customdata": b,
                "line": {"color": pal["rule"], "width": 2},
                "marker": {"size": 6},
                "hovertemplate": "batch %{customdata:.0f}<br>%{x:.3g} FLOP/B<br>%{y:.4g} TFLOP/s<extra></extra>",
            }
        )

    def point(name: str, i: float, f: float, colour: str) -> dict[str, Any]:
        return {
            "type": "scatter",
            "x": [i],
            "y": [f / TERA],
            "mode": "markers",
            "name": name,
            "marker": {"color": colour, "size": 15, "line": {"color": t.text, "width": 1}},
            "hovertemplate": _point_hover(name),
        }

    for name, i, f in points:
        data.append(point(name, i, f, pal["optimised"] if name.startswith("prefill") else pal["reference"]))
    annotations: list[dict[str, Any]] = [
        {
            "xref": "paper",
            "yref": "paper",
            "x": 0.02,
            "y": 0.98,
            "xanchor": "left",
            "yanchor": "top",
            "showarrow": False,
            "align": "left",
            "text": "left of the ridge: memory-bound (bytes / bandwidth)<br>right of it: compute-bound (FLOPs / peak)",
        }
    ]
    sliders: list[dict[str, Any]] = []
    if batch_sweep is not None:
        if batch is None or context is None:
            raise ValueError("batch_sweep needs the page's batch and context")
        # the readout column narrows the plot: the note in shorter lines, in its bottom-right corner (under the flat
        # roof, where no step of prefill or decode falls), on the background so that the ridge's line stops at it
        annotations[0] |= {
            "x": _PLOT_RIGHT[presenter],
            "y": 0.02,
            "xanchor": "right",
            "yanchor": "bottom",
            "bgcolor": t.background,
            "text": "left of the ridge: memory-bound<br>(bytes / bandwidth)<br>right of it: compute-bound<br>"
            "(FLOPs / peak)",
        }
        sizes = [int(b) for b in np.asarray(batch_sweep[0])]
        active = sizes.index(int(batch))
        # the numbers as the readout prints them, to 4 significant digits on the figure (a small slider payload)
        sweep_i, sweep_f, seconds, memory_s, compute_s = (_arr(v) for v in batch_sweep[1:])
        xs, ys = _sig4(sweep_i), _sig4(sweep_f / TERA)
        hovers = [_point_hover(f"decode, batch {b:,}") for b in sizes]
        texts = [
            _decode_readout(
                b,
                int(context),
                sweep_i[k],
                sweep_f[k],
                seconds[k],
                decode_bound(memory_s[k], compute_s[k], sweep_i[k], ridge),
                n_gpus,
                kv_fit,
                unfit,
            )
            for k, b in enumerate(sizes)
        ]
        # one legend name at every batch (a longer one could wrap the legend onto a second row mid-drag)
        data.append(point(DRAGGED, xs[active], 0.0, pal["reference"]))
        data[-1] |= {"y": [ys[active]], "hovertemplate": hovers[active]}  # as the active step draws it
        moving = len(data) - 1
        steps = [
            {
                "method": "update",
                "label": f"{b:,}",
                "args": [
                    {"x": [[xs[k]]], "y": [[ys[k]]], "hovertemplate": [hovers[k]]},
                    {"annotations[0].text": texts[k]},
                    [moving],
                ],
            }
            for k, b in enumerate(sizes)
        ]
        # the readout panel: a column right of the plot, clear of the roof and the points
        annotations.insert(
            0,
            readout_panel(texts[active], t),
        )
        sliders = [
            {
                "active": active,
                "steps": steps,
                "currentvalue": {"prefix": "decode batch = "},
                # the room the x-axis tick labels and title need under the plot
                "pad": {"t": 80 if presenter else 64},
                "len": 1.0,
                "x": 0.0,
            }
        ]
    layout = {
        "xaxis": {
            "title": {"text": "arithmetic intensity (FLOP per byte moved)"},
            "type": "log",
            **({"domain": [0.0, _PLOT_RIGHT[presenter]]} if sliders else {}),
        },
        "yaxis": {"title": {"text": "attainable TFLOP/s per GPU (dense bf16)"}, "type": "log"},
        "shapes": [
            {
                "type": "line",
                "x0": ridge,
                "x1": ridge,
                "yref": "paper",
                "y0": 0,
                "y1": 1,
                "line": {"color": pal["neutral"], "dash": "dot", "width": 1},
            }
        ],
        "annotations": annotations,
        "uirevision": "roofline",
        "hovermode": "closest",
    }
    if sliders:
        layout["sliders"] = sliders
    if presenter:
        # the legend from the figure's top edge, the plot under it: one page load serves 1280 x 720 (two rows of
        # legend) and 1920 x 1080 (one row), and after such a resize plotly.js drew a legend above the plot (its
        # default) lower than it pushed the plot, over the plot's top and the readout panel
        layout["legend"] = {"yref": "container", "y": 1.0, "yanchor": "top"}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def speculative_figure(
    alpha: ArrayLike,
    expected: Mapping[int, ArrayLike],
    batch: ArrayLike,
    speedup: Mapping[int, ArrayLike],
    current: tuple[float, int, float] | None = None,
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: expected tokens per target forward (1 - α^(k+1))/(1 - α) against the acceptance rate α, one line per
    draft length k. Right: the speed-up over plain decoding against the batch size, one line per k, with the
    break-even line at 1. current: (α, k, E) of the page's settings, an orange dot on the left panel.
    """
    t = get_theme(theme)
    pal = t.palette
    a, b = _arr(alpha), _arr(batch)
    data: list[dict[str, Any]] = []
    for i, (k, e) in enumerate(expected.items()):
        colour = t.sequence[i % len(t.sequence)]
        data.append(
            {
                "type": "scatter",
                "x": a,
                "y": _arr(e),
                "mode": "lines",
                "name": f"k = {k}",
                "legendgroup": f"k{k}",
                "line": {"color": colour, "width": 2.5},
                "hovertemplate": f"k = {k}, α = %{{x:.2f}}<br>%{{y:.3f}} tokens per forward<extra></extra>",
            }
        )
        if k in speedup:
            data.append(
                {
                    "type": "scatter",
                    "x": b,
                    "y": _arr(speedup[k]),
                    "xaxis": "x2",
                    "yaxis": "y2",
                    "mode": "lines",
                    "name": f"k = {k} speed-up",
                    "legendgroup": f"k{k}",
                    "showlegend": False,
                    "line": {"color": colour, "width": 2.5},
                    "hovertemplate": f"k = {k}, batch %{{x:.0f}}<br>speed-up ×%{{y:.2f}}<extra></extra>",
                }
            )
    if current is not None:
        ca, ck, ce = current
        data.append(
            {
                "type": "scatter",
                "x": [ca],
                "y": [ce],
                "mode": "markers",
                "name": f"yours: α = {ca:.2f}, k = {ck}",
                "marker": {"color": pal["optimised"], "size": 14, "line": {"color": t.text, "width": 1}},
                "hovertemplate": "%{y:.3f} tokens per target forward<extra></extra>",
            }
        )
    layout = {
        "xaxis": {"domain": [0, 0.45], "title": {"text": "acceptance rate α"}, "range": [0, 1]},
        "yaxis": {"title": {"text": "tokens per target forward E"}, "rangemode": "tozero"},
        "xaxis2": {"domain": [0.55, 1], "title": {"text": "batch size (sequences)"}, "type": "log", "anchor": "y2"},
        "yaxis2": {"title": {"text": "speed-up over plain decoding"}, "anchor": "x2", "rangemode": "tozero"},
        "shapes": [
            {
                "type": "line",
                "xref": "x2 domain",
                "yref": "y2",
                "x0": 0,
                "x1": 1,
                "y0": 1,
                "y1": 1,
                "line": {"color": pal["negative"], "dash": "dash", "width": 2},
            }
        ],
        "annotations": [
            {
                # at the small batches' end, under the line: the curves are above it there (at the large batches'
                # end they cross the line and ran through this text)
                "xref": "x2 domain",
                "yref": "y2",
                "x": 0.02,
                "y": 1,
                "xanchor": "left",
                "yanchor": "top",
                "showarrow": False,
                "text": "below 1: slower<br>than plain decoding",
                "align": "left",
                "font": {"color": t.ink["negative"]},
            }
        ],
        "uirevision": "speculative",
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def kv_capacity_figure(
    context: ArrayLike,
    contiguous: ArrayLike,
    paged: ArrayLike,
    current: tuple[int, float, float] | None = None,
    *,
    waste: tuple[float, float] | None = None,
    trap: tuple[str, ArrayLike] | None = None,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Sequences whose KV cache fits in the budget against the context length (log-log).

    contiguous: each sequence reserves the whole context (blue); paged: each reserves the blocks its actual length
    needs (orange, Kwon et al. 2023). current: (context, contiguous, paged) at the page's context. waste: the
    reserved-but-unused share under (contiguous, paged) allocation, written in a note. trap: (name, capacity).
    """
    t = get_theme(theme)
    pal = t.palette
    x = _arr(context)
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": x,
            "y": _arr(contiguous),
            "mode": "lines",
            "name": "contiguous: reserve the whole context",
            "line": {"color": pal["reference"], "width": 3},
            "hovertemplate": "context %{x:,.0f}<br>%{y:,.1f} sequences<extra></extra>",
        },
        {
            "type": "scatter",
            "x": x,
            "y": _arr(paged),
            "mode": "lines",
            "name": "paged: blocks for the tokens used",
            "line": {"color": pal["optimised"], "width": 3},
            "hovertemplate": "context %{x:,.0f}<br>%{y:,.1f} sequences<extra></extra>",
        },
    ]
    if trap is not None:
        name, values = trap
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": _arr(values),
                "mode": "lines",
                "name": f"trap: {name}",
                "line": {"color": pal["negative"], "width": 2, "dash": "dash"},
                "hovertemplate": "context %{x:,.0f}<br>%{y:,.1f} sequences (wrong)<extra></extra>",
            }
        )
    annotations = []
    if current is not None:
        c, n_contiguous, n_paged = current
        data.append(
            {
                "type": "scatter",
                "x": [c, c],
                "y": [n_contiguous, n_paged],
                "mode": "markers",
                "name": f"context {c:,}",
                "marker": {"color": t.text, "size": 11, "symbol": "circle-open", "line": {"width": 3}},
                "hovertemplate": "%{y:,.1f} sequences<extra></extra>",
            }
        )
    if waste is not None:
        annotations.append(
            {
                "xref": "paper",
                "yref": "paper",
                "x": 0.98,
                "y": 0.98,
                "xanchor": "right",
                "yanchor": "top",
                "showarrow": False,
                "align": "right",
                "text": f"reserved but unused: contiguous {waste[0]:.0%}, paged {waste[1]:.1%}",
            }
        )
    layout = {
        "xaxis": {"title": {"text": "context length (tokens)"}, "type": "log"},
        "yaxis": {"title": {"text": "concurrent sequences that fit"}, "type": "log"},
        "annotations": annotations,
        "uirevision": "kv-capacity",
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
