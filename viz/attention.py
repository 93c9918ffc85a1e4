"""Figures of the attention page: a grid of per-head heatmaps, the correct vs buggy causal mask, logit variance and
row entropy against d_k, the output vectors, and the KV-cache sizes of MHA, GQA and MQA.

Builders take numpy arrays computed by core.attention. Heatmaps larger than ``max_cells`` tokens a side are shown
as means over blocks of tokens (the figure says so), which keeps the figure JSON small at 512 tokens.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.style import DIVERGING, PALETTE, SEQUENCE, SEQUENTIAL, apply_style

MAX_CELLS = 64  # most heatmap cells a side
CELL_BUDGET = 32 * 64 * 64  # most heatmap cells in one figure (about 700 kB of JSON)

SCALE_COLOURS: dict[str, str] = {
    "sqrt_dk": PALETTE["optimum"],
    "none": PALETTE["negative"],
    "sqrt_dmodel": PALETTE["highlight"],
}
SCALE_NAMES: dict[str, str] = {
    "sqrt_dk": "1/√d_k",
    "none": "no scale",
    "sqrt_dmodel": "1/√d_model",
}


def _short(token: str, max_chars: int = 10) -> str:
    visible = {" ": "␣", "\n": "⏎", "\r\n": "⏎", "\t": "⇥", "\r": "⏎"}.get(token, token)
    return visible if len(visible) <= max_chars else visible[: max_chars - 1] + "…"


def _edges(n: int, cells: int) -> np.ndarray:
    """Block boundaries that split n items into `cells` nearly equal blocks."""
    return np.unique(np.linspace(0, n, cells + 1).round().astype(int))


def _block_reduce(a: np.ndarray, edges: np.ndarray, axis: int, mean: bool = True) -> np.ndarray:
    """Sum (or mean) of a over the blocks of indices [edges[i], edges[i+1]) along axis."""
    sums = np.add.reduceat(a, edges[:-1], axis=axis)
    if not mean:
        return sums
    shape = [1] * a.ndim
    shape[axis] = -1
    return sums / np.diff(edges).astype(a.dtype).reshape(shape)


def _labels(tokens: Sequence[str], edges: np.ndarray | None) -> list[str]:
    """Unique category labels: 'i:token', or 'i-j' for a block of tokens."""
    if edges is None:
        return [f"{i}:{_short(t)}" for i, t in enumerate(tokens)]
    return [f"{a}–{b - 1}" if b - a > 1 else f"{a}:{_short(tokens[a])}" for a, b in itertools.pairwise(edges)]


def _downsample(a: np.ndarray, tokens: Sequence[str], cells: int, mean_axes=(), sum_axes=()) -> tuple:
    """Reduce blocks of tokens (means on mean_axes, sums on sum_axes) when there are more tokens than cells.

    For attention weights the query axis is averaged and the key axis summed, so a shown row still sums to 1: a
    cell is the share of attention that a query of the row block gives to the whole key block.
    """
    n = len(tokens)
    if n <= cells:
        return a, _labels(tokens, None), None
    edges = _edges(n, cells)
    for axis in mean_axes:
        a = _block_reduce(a, edges, axis, mean=True)
    for axis in sum_axes:
        a = _block_reduce(a, edges, axis, mean=False)
    return a, _labels(tokens, edges), edges


def _check_square(weights: np.ndarray, tokens: Sequence[str], name: str = "weights") -> np.ndarray:
    w = np.asarray(weights, dtype=np.float32)
    if w.ndim == 2:
        w = w[None]
    if w.ndim != 3 or w.shape[1] != w.shape[2] or w.shape[1] != len(tokens):
        raise ValueError(f"{name} must have shape (heads, T, T) with T = {len(tokens)} tokens, got {w.shape}")
    return w


def attention_figure(
    weights: np.ndarray,
    tokens: Sequence[str],
    head_names: Sequence[str] | None = None,
    *,
    columns: int = 4,
    max_cells: int = MAX_CELLS,
    zmax: float | None = None,
    title: str | None = None,
) -> go.Figure:
    """A grid of attention heatmaps, one per head: query tokens down, key tokens across, weight on hover.

    weights: (heads, T, T) rows summing to 1 (float32 is enough). Above max_cells tokens (or when the figure would
    hold more than CELL_BUDGET cells) each cell is the mean weight of a block of tokens and the title says so.
    A shown block keeps rows summing to 1: the mean over its queries of the weight summed over its keys. The colour
    scale runs from 0 to zmax (default 1; a smaller zmax brings out spread-out rows, and the title says so).
    """
    w = _check_square(weights, tokens)
    H, T = w.shape[0], w.shape[1]
    names = list(head_names) if head_names is not None else [f"head {h + 1}" for h in range(H)]
    if len(names) != H:
        raise ValueError(f"{H} heads but {len(names)} head names")
    cells = max(8, min(max_cells, math.isqrt(CELL_BUDGET // H)))
    z, labels, edges = _downsample(w, tokens, cells, mean_axes=(1,), sum_axes=(2,))
    cols = max(1, min(columns, H))
    rows = math.ceil(H / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=names,
        horizontal_spacing=0.04 if T > 16 else 0.08,
        vertical_spacing=min(0.12, 0.3 / rows),
    )
    what = "block weight" if edges is not None else "weight"
    for h in range(H):
        fig.add_trace(
            go.Heatmap(
                z=z[h].astype(np.float32),
                x=labels,
                y=labels,
                coloraxis="coloraxis",
                name=names[h],
                hovertemplate=f"query %{{y}}<br>key %{{x}}<br>{what} %{{z:.3f}}<extra>{names[h]}</extra>",
            ),
            row=h // cols + 1,
            col=h % cols + 1,
        )
    show_ticks = len(labels) <= 24
    fig.update_xaxes(type="category", showticklabels=False, tickangle=-60)
    fig.update_yaxes(type="category", showticklabels=False, autorange="reversed")
    for h in range(H):  # tick labels and titles on the outer edge of the grid only
        r, c = h // cols + 1, h % cols + 1
        if h + cols >= H:
            fig.update_xaxes(showticklabels=show_ticks, title_text="key", row=r, col=c)
        if c == 1:
            fig.update_yaxes(showticklabels=show_ticks, title_text="query", row=r, col=c)
    text = title or "Attention weights per head (rows: queries, columns: keys; each row sums to 1)"
    zmax = 1.0 if zmax is None else float(zmax)
    if not (math.isfinite(zmax) and zmax > 0):
        raise ValueError(f"zmax must be > 0, got {zmax!r}")
    notes = []
    if edges is not None:
        n = len(edges) - 1
        notes.append(
            f"{T} tokens shown as {n}×{n} blocks of about {T / n:.0f}: a cell is the weight a query block gives "
            "to a key block (rows still sum to 1)"
        )
    if zmax != 1.0:
        notes.append(f"colours run from 0 to {zmax:.3g}")
    if notes:
        text += "<br><sup>" + "; ".join(notes) + "</sup>"
    fig.update_layout(
        title={"text": text},
        coloraxis={"colorscale": SEQUENTIAL, "cmin": 0.0, "cmax": zmax, "colorbar": {"title": {"text": "weight"}}},
        uirevision="attention-heads",
    )
    apply_style(fig, height=max(360, 90 + rows * (300 if cols <= 2 else 240)), legend=False)
    fig.update_layout(margin={"t": 110 if edges is not None else 90})
    return fig


def attention_mask_figure(
    correct: np.ndarray,
    buggy: np.ndarray,
    tokens: Sequence[str],
    correct_row_sums: np.ndarray | None = None,
    buggy_row_sums: np.ndarray | None = None,
    *,
    max_cells: int = MAX_CELLS,
) -> go.Figure:
    """Causal mask done right (-inf before the softmax) beside the classic bug (x 0 after it), with row sums.

    correct, buggy: (T, T) weights of one head; the row sums (T,) default to the rows' sums. The bars show that
    the correct rows sum to 1 and the buggy ones fall short, by a different amount in every row.
    """
    A = _check_square(correct, tokens, "correct")[0]
    B = _check_square(buggy, tokens, "buggy")[0]
    sums_a = np.asarray(A.sum(-1) if correct_row_sums is None else correct_row_sums, dtype=np.float32)
    sums_b = np.asarray(B.sum(-1) if buggy_row_sums is None else buggy_row_sums, dtype=np.float32)
    if sums_a.shape != (len(tokens),) or sums_b.shape != (len(tokens),):
        raise ValueError("row sums must have one value per token")
    both, labels, edges = _downsample(np.stack([A, B]), tokens, max_cells, mean_axes=(1,), sum_axes=(2,))
    if edges is not None:  # mean row sum of each block of rows
        sums_a, sums_b = _block_reduce(np.stack([sums_a, sums_b]), edges, axis=1)
    fig = make_subplots(
        rows=1,
        cols=4,
        column_widths=[0.36, 0.12, 0.36, 0.12],
        horizontal_spacing=0.035,
        subplot_titles=["−∞ before softmax (correct)", "row sums", "× 0 after softmax (bug)", "row sums"],
    )
    for col, z, sums, colour, name in (
        (1, both[0], sums_a, PALETTE["optimum"], "correct"),
        (3, both[1], sums_b, PALETTE["negative"], "buggy"),
    ):
        fig.add_trace(
            go.Heatmap(
                z=z.astype(np.float32),
                x=labels,
                y=labels,
                coloraxis="coloraxis",
                name=name,
                hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}<extra>" + name + "</extra>",
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            go.Bar(
                x=sums.astype(np.float32),
                y=labels,
                orientation="h",
                marker_color=colour,
                name=f"{name} row sums",
                hovertemplate="query %{y}<br>row sum %{x:.3f}<extra>" + name + "</extra>",
            ),
            row=1,
            col=col + 1,
        )
        fig.add_vline(x=1.0, line_dash="dash", line_color=PALETTE["neutral"], row=1, col=col + 1)
    show_ticks = len(labels) <= 24
    fig.update_xaxes(type="category", showticklabels=show_ticks, tickangle=-60, title_text="key", col=1)
    fig.update_xaxes(type="category", showticklabels=show_ticks, tickangle=-60, title_text="key", col=3)
    fig.update_xaxes(range=[0, 1.1], title_text="sum", col=2)
    fig.update_xaxes(range=[0, 1.1], title_text="sum", col=4)
    fig.update_yaxes(type="category", autorange="reversed", showticklabels=show_ticks)
    for col in (2, 3, 4):
        fig.update_yaxes(showticklabels=False, col=col)
    fig.update_yaxes(title_text="query", col=1)
    text = "Causal mask: add −∞ before the softmax, or multiply by 0 after it?"
    if edges is not None:
        text += (
            f"<br><sup>{len(tokens)} tokens shown as {len(edges) - 1} blocks: cells and row sums are block means</sup>"
        )
    fig.update_layout(
        title={"text": text},
        coloraxis={"colorscale": SEQUENTIAL, "cmin": 0.0, "cmax": 1.0, "colorbar": {"title": {"text": "weight"}}},
        uirevision="attention-mask",
        bargap=0.15,
    )
    apply_style(fig, height=460, legend=False)
    fig.update_layout(margin={"t": 100})
    return fig


def attention_scale_figure(
    d_k: Sequence[int] | np.ndarray,
    variance: Mapping[str, np.ndarray],
    entropy: Mapping[str, np.ndarray],
    max_entropy: float,
    *,
    expected_variance: Mapping[str, np.ndarray] | None = None,
    current_d_k: int | None = None,
) -> go.Figure:
    """Logit variance (left, log-log) and mean row entropy (right) against d_k, one curve per scale choice.

    variance, entropy: {scale choice: array aligned with d_k} for choices among 'sqrt_dk', 'none', 'sqrt_dmodel'
    (from core.attention.logit_statistics). max_entropy = log(tokens) marks a uniform row; 0 is a one-hot row.
    expected_variance adds the theory d_k · multiplier² dashed; current_d_k marks the page's d_k.
    """
    d = np.asarray(d_k, dtype=float)
    fig = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=["Variance of the logits", "Entropy of a row"]
    )
    for choice in variance:
        colour = SCALE_COLOURS.get(choice, PALETTE["neutral"])
        name = SCALE_NAMES.get(choice, choice)
        var = np.asarray(variance[choice], dtype=float)
        ent = np.asarray(entropy[choice], dtype=float)
        if var.shape != d.shape or ent.shape != d.shape:
            raise ValueError(f"{choice}: variance and entropy must align with d_k")
        fig.add_trace(
            go.Scatter(
                x=d,
                y=var,
                mode="lines+markers",
                name=name,
                legendgroup=choice,
                line={"color": colour},
                hovertemplate="d_k %{x}<br>Var(logit) %{y:.3g}<extra>" + name + "</extra>",
            ),
            row=1,
            col=1,
        )
        if expected_variance is not None and choice in expected_variance:
            fig.add_trace(
                go.Scatter(
                    x=d,
                    y=np.asarray(expected_variance[choice], dtype=float),
                    mode="lines",
                    name=f"{name}: theory",
                    legendgroup=choice,
                    showlegend=False,
                    line={"color": colour, "dash": "dot", "width": 1.5},
                    hovertemplate="d_k %{x}<br>theory %{y:.3g}<extra>" + name + "</extra>",
                ),
                row=1,
                col=1,
            )
        fig.add_trace(
            go.Scatter(
                x=d,
                y=ent,
                mode="lines+markers",
                name=name,
                legendgroup=choice,
                showlegend=False,
                line={"color": colour},
                hovertemplate="d_k %{x}<br>entropy %{y:.3f} nats<extra>" + name + "</extra>",
            ),
            row=1,
            col=2,
        )
    fig.add_hline(
        y=max_entropy,
        line_dash="dash",
        line_color=PALETTE["neutral"],
        annotation_text=f"uniform row: log T = {max_entropy:.2f}",
        annotation_position="top left",
        row=1,
        col=2,
    )
    fig.add_hline(
        y=0,
        line_dash="dot",
        line_color=PALETTE["neutral"],
        annotation_text="one-hot row",
        annotation_position="top left",
        row=1,
        col=2,
    )
    if current_d_k is not None:
        for col in (1, 2):
            fig.add_vline(x=current_d_k, line_color=PALETTE["optimised"], line_width=2, row=1, col=col)
            # on a log axis an annotation's x is log10 of the value
            fig.add_annotation(
                x=math.log10(current_d_k),
                y=1,
                yref="y domain" if col == 1 else "y2 domain",
                xref="x" if col == 1 else "x2",
                text=f"your d_k = {current_d_k}",
                showarrow=False,
                xanchor="left",
                yanchor="top",
                font={"color": PALETTE["optimised"]},
            )
    span = np.log10([d.min(), d.max(), current_d_k or d.min()])
    fig.update_xaxes(type="log", title_text="d_k (head dimension)", range=[span.min() - 0.1, span.max() + 0.1])
    fig.update_yaxes(type="log", title_text="Var(logit)", row=1, col=1)
    fig.update_yaxes(title_text="mean row entropy (nats)", range=[-0.05, 1.15 * max_entropy], row=1, col=2)
    fig.update_layout(uirevision="attention-scale")
    apply_style(fig, height=460)
    fig.update_layout(margin={"t": 90}, legend={"y": 1.1})
    return fig


def attention_outputs_figure(
    outputs: np.ndarray,
    tokens: Sequence[str],
    head_names: Sequence[str] | None = None,
    *,
    columns: int = 4,
    max_cells: int = MAX_CELLS,
) -> go.Figure:
    """The output vectors y = A V of each head as heatmaps: tokens down, output dimensions across.

    outputs: (heads, T, d_v). Above max_cells tokens the rows are block means (said in the title).
    """
    y = np.asarray(outputs, dtype=np.float32)
    if y.ndim == 2:
        y = y[None]
    if y.ndim != 3 or y.shape[1] != len(tokens):
        raise ValueError(f"outputs must have shape (heads, T, d) with T = {len(tokens)}, got {y.shape}")
    H = y.shape[0]
    names = list(head_names) if head_names is not None else [f"head {h + 1}" for h in range(H)]
    z, labels, edges = _downsample(y, tokens, max_cells, mean_axes=(1,))
    cols = max(1, min(columns, H))
    rows = math.ceil(H / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=names, horizontal_spacing=0.05)
    dims = np.arange(y.shape[2])
    for h in range(H):
        fig.add_trace(
            go.Heatmap(
                z=z[h].astype(np.float32),
                x=dims,
                y=labels,
                coloraxis="coloraxis",
                name=names[h],
                hovertemplate="token %{y}<br>dimension %{x}<br>value %{z:.3f}<extra>" + names[h] + "</extra>",
            ),
            row=h // cols + 1,
            col=h % cols + 1,
        )
    bound = float(np.abs(z).max()) if z.size else 1.0
    fig.update_yaxes(type="category", autorange="reversed", showticklabels=False)
    fig.update_yaxes(showticklabels=len(labels) <= 24, title_text="token", col=1)
    fig.update_xaxes(title_text="output dimension")
    text = "Output vectors y = A·V per head"
    if edges is not None:
        text += f"<br><sup>{len(tokens)} tokens shown as {len(edges) - 1} rows: block means</sup>"
    fig.update_layout(
        title={"text": text},
        coloraxis={"colorscale": DIVERGING, "cmin": -bound, "cmax": bound, "colorbar": {"title": {"text": "value"}}},
        uirevision="attention-outputs",
    )
    apply_style(fig, height=max(320, 90 + rows * 240), legend=False)
    fig.update_layout(margin={"t": 100})
    return fig


def attention_kv_cache_figure(
    labels: Sequence[str],
    total_bytes: Sequence[float] | np.ndarray,
    *,
    per_token_bytes: Sequence[float] | np.ndarray | None = None,
    context_tokens: int | None = None,
    memory_limit_bytes: float | None = None,
    memory_limit_label: str = "GPU memory",
) -> go.Figure:
    """Horizontal bars of the KV-cache size of each variant (e.g. MHA, GQA, MQA), in GiB, with the per-token size
    in the hover and the bar text; an optional dashed line for a card's memory.
    """
    gib = np.asarray(total_bytes, dtype=float) / 2**30
    if gib.shape != (len(labels),):
        raise ValueError("one total per label")
    per_token = None if per_token_bytes is None else np.asarray(per_token_bytes, dtype=float) / 2**10
    text = [
        f"{g:,.3g} GiB" + ("" if per_token is None else f" ({p:,.0f} KiB/token)")
        for g, p in zip(gib, per_token if per_token is not None else gib, strict=True)
    ]
    fig = go.Figure(
        go.Bar(
            x=gib,
            y=list(labels),
            orientation="h",
            marker_color=[SEQUENCE[i % len(SEQUENCE)] for i in range(len(labels))],
            text=text,
            textposition="auto",
            customdata=per_token if per_token is not None else gib,
            hovertemplate="%{y}<br>%{x:,.4g} GiB"
            + ("<br>%{customdata:,.0f} KiB per token" if per_token is not None else "")
            + "<extra></extra>",
        )
    )
    if memory_limit_bytes is not None:
        fig.add_vline(
            x=memory_limit_bytes / 2**30,
            line_dash="dash",
            line_color=PALETTE["negative"],
            annotation_text=memory_limit_label,
            annotation_position="bottom right",
        )
    where = f" at {context_tokens:,} tokens" if context_tokens is not None else ""
    fig.update_layout(
        title={"text": f"KV cache{where}"},
        xaxis_title="KV cache (GiB)",
        yaxis={"autorange": "reversed", "type": "category"},
        uirevision="attention-kv",
    )
    return apply_style(fig, height=300, legend=False)
