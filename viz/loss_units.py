"""Figures of the loss page: perplexity against bits per byte across tokenizers, the SFT loss-weight strip, packed
attention masks and padding waste.

- :func:`tokenizer_units_figure`: per tokenizer, perplexity per token (left, log axis) and bits per byte (right),
  for one byte model scored through every tokenization (blue) and a bigram trained per tokenizer (orange).
- :func:`bpe_merges_figure`: the text's tokens and the one byte model's perplexity per token against the number of
  BPE merges learned, with a slider over the merges that moves the markers and the readout in the browser.
- :func:`sft_mask_figure`: each example as a strip of tokens coloured by its loss weight (prompt, response, pad).
- :func:`packing_mask_figure`: the causal mask of a packed sequence, naive and block-diagonal, side by side.
- :func:`padding_figure`: the fraction of a batch's token slots that is padding, per batching scheme.

Figures are assembled as plain dicts through :func:`viz.style.figure`; every builder takes ``theme`` ("light" or
"dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from core.loss_units import PaddingReport, SftWeights, TokenizedScore, packing_attention_mask
from viz.style import colorscale, figure, get_theme, grid, readout_panel


def tokenizer_units_figure(
    same_model: Sequence[TokenizedScore],
    per_tokenizer: Sequence[TokenizedScore],
    *,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Perplexity (log axis, left) and bits per byte (right) per tokenizer, for the two constructions."""
    pal = get_theme(theme).palette
    if not same_model or [s.tokenizer for s in same_model] != [s.tokenizer for s in per_tokenizer]:
        raise ValueError("need the same tokenizers, in the same order, for both constructions")
    names = [s.tokenizer for s in same_model]
    data = []
    for scores, label, colour in (
        (same_model, "one byte model, every tokenization", pal["reference"]),
        (per_tokenizer, "a bigram trained per tokenizer", pal["optimised"]),
    ):
        data.append(
            {
                "type": "bar",
                "x": names,
                "y": [s.perplexity for s in scores],
                "name": label,
                "legendgroup": label,
                "marker": {"color": colour},
                "customdata": [[s.n_tokens, s.bytes_per_token] for s in scores],
                "hovertemplate": "%{x}: perplexity %{y:.2f}<br>%{customdata[0]} tokens, "
                "%{customdata[1]:.2f} bytes/token<extra></extra>",
                "xaxis": "x",
                "yaxis": "y",
            }
        )
        data.append(
            {
                "type": "bar",
                "x": names,
                "y": [s.bits_per_byte for s in scores],
                "name": label,
                "legendgroup": label,
                "showlegend": False,
                "marker": {"color": colour},
                "hovertemplate": "%{x}: %{y:.4f} bits per byte<extra></extra>",
                "xaxis": "x2",
                "yaxis": "y2",
            }
        )
    # presenter mode: a wider gap, for the right panel's tick labels and axis title at 19-20 px (they ran into the
    # left panel's bars in a 960 px wide box)
    split = (0.43, 0.57) if presenter else (0.46, 0.54)
    layout = {
        "barmode": "group",
        "xaxis": {"domain": [0.0, split[0]]},
        "xaxis2": {"domain": [split[1], 1.0], "anchor": "y2"},
        "yaxis": {"type": "log", "title": {"text": "perplexity per token, e^L"}},
        "yaxis2": {"anchor": "x2", "title": {"text": "bits per byte, T·L / (n_bytes ln 2)"}, "rangemode": "tozero"},
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def _padded(values: Any, share: float = 0.08) -> list[float]:
    """[min, max] of ``values`` widened by ``share`` of their span on each side."""
    lo, hi = float(np.min(values)), float(np.max(values))
    pad = share * (hi - lo) if hi > lo else 0.5
    return [lo - pad, hi + pad]


def _merges_readout(
    k: int, tokens: int, n_bytes: int, perplexity: float, bits_per_byte: float, merge: tuple[str, str]
) -> str:
    """The readout panel's text after k merges."""
    a, b = (html.escape(x) for x in merge)
    return "<br>".join(
        [
            f"<b>{k} merge{'s' if k != 1 else ''}</b> (vocabulary {256 + k})",
            f"{tokens:,} tokens, {n_bytes / tokens:.2f} bytes each",
            f"perplexity per token {perplexity:.2f}",
            f"bits per byte {bits_per_byte:.4f} (one byte-level",
            "model: the cut does not change it)",
            f"merge {k}: {a} + {b} → {a}{b}",
        ]
    )


def bpe_merges_figure(
    tokens: Sequence[int],
    merges: Sequence[tuple[str, str]],
    n: int,
    total_nll_nats: float,
    n_bytes: int,
    *,
    height: int = 560,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The text's tokens (top) and the one byte model's perplexity per token (bottom) after k = 0..K BPE merges,
    with the page's count n marked; a slider over k = 1..K moves the markers and rewrites the readout panel.

    tokens: the text's token count after k merges, k = 0..K (k = 0: its bytes; core's
    :func:`~core.loss_units.merge_prefix_counts`). merges: the K merges as readable (left, right) strings, in learned
    order. total_nll_nats and n_bytes: the one byte model's total loss on the text and the text's bytes; the
    perplexity per token after k merges is e^(total / T_k), the bits per byte total / (n_bytes ln 2) at every k.
    Traces: 0 tokens, 1 perplexity (the curves over every k), 2 and 3 the markers at the slider's k; each step
    restyles traces 2 and 3 and rewrites annotation 0, the readout.
    """
    T = np.asarray(tokens, dtype=np.int64)
    K = T.size - 1
    if K < 1 or len(merges) != K:
        raise ValueError(f"need the token counts after 0..K merges and the K merges, got {T.size} and {len(merges)}")
    if not 1 <= n <= K:
        raise ValueError(f"n must be 1..{K}, got {n}")
    t = get_theme(theme)
    pal = t.palette
    k = np.arange(K + 1)
    ppl = np.exp(total_nll_nats / T)  # (K + 1,): e^(T L / T_k), the same total over fewer tokens
    ppl_shown = np.round(ppl, 4)
    bpb = total_nll_nats / (n_bytes * math.log(2.0))

    def marker(y: float, axis: tuple[str, str]) -> dict[str, Any]:
        return {
            "type": "scatter",
            "mode": "markers",
            "x": [n],
            "y": [y],
            "marker": {"color": pal["neutral"], "size": 11, "symbol": "circle-open", "line": {"width": 2.5}},
            "showlegend": False,
            "hoverinfo": "skip",
            "xaxis": axis[0],
            "yaxis": axis[1],
        }

    (top, bottom), layout = grid(2, 1, vgap=0.1)
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "x": k,
            "y": T,
            "name": "tokens in the text",
            "line": {"color": pal["reference"], "width": 2.5},
            "marker": {"size": 4},
            "customdata": np.round(n_bytes / T, 3),
            "hovertemplate": "%{x} merges: %{y:,} tokens, %{customdata:.2f} bytes per token<extra></extra>",
            "xaxis": top[0],
            "yaxis": top[1],
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "x": k,
            "y": ppl_shown,
            "name": "perplexity per token, one byte model",
            "line": {"color": pal["optimised"], "width": 2.5},
            "marker": {"size": 4},
            "hovertemplate": "%{x} merges: perplexity %{y:.2f}<extra></extra>",
            "xaxis": bottom[0],
            "yaxis": bottom[1],
        },
        marker(float(T[n]), top),
        marker(float(ppl_shown[n]), bottom),
    ]
    texts = [_merges_readout(j, int(T[j]), n_bytes, float(ppl[j]), bpb, merges[j - 1]) for j in range(1, K + 1)]
    steps = [
        {
            "method": "update",
            "label": str(j),
            "args": [
                {"x": [[j], [j]], "y": [[int(T[j])], [float(ppl_shown[j])]]},
                {"annotations[0].text": texts[j - 1]},
                [2, 3],
            ],
        }
        for j in range(1, K + 1)
    ]
    right = 0.58 if presenter else 0.62  # the plots' width; the readout panel stands in the column right of them
    # fixed ranges: the marker moves along the curves without the axes following it
    x = {"domain": [0.0, right], "range": [-0.04 * K, 1.04 * K], "zeroline": False}
    layout["xaxis"] |= x | {"matches": "x2", "showticklabels": False}
    layout["xaxis2"] |= x | {"title": {"text": "BPE merges learned (vocabulary 256 + merges)"}}
    layout["yaxis"] |= {"title": {"text": "tokens"}, "range": _padded(T)}
    layout["yaxis2"] |= {"title": {"text": "perplexity per token"}, "range": _padded(ppl)}
    layout |= {
        "annotations": [readout_panel(texts[n - 1], t)],
        "sliders": [
            {
                "active": n - 1,
                "steps": steps,
                "currentvalue": {"prefix": "BPE merges learned: "},
                "pad": {"t": 80 if presenter else 64},
                "len": 1.0,
                "x": 0.0,
            }
        ],
        "title": {"text": "One byte model's total loss, spread over fewer, longer tokens"},
        "uirevision": "bpe-merges",
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height, legend=False)


def sft_mask_figure(
    weights: SftWeights, *, height: int = 260, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """Each example (row) as a strip of tokens: colour = the token's weight in the loss (its share
    of the loss if every token's loss is the same); hover says its role."""
    w = weights.weights
    role = np.where(weights.is_pad, "padding", np.where(weights.is_prompt, "prompt", "response"))
    data = [
        {
            "type": "heatmap",
            "z": w,
            "customdata": role,
            "coloraxis": "coloraxis",
            "hovertemplate": "example %{y}, token %{x}: %{customdata}<br>weight %{z:.2e}<extra></extra>",
            "xgap": 0,
            "ygap": 2,
        }
    ]
    share = weights.prompt_share
    layout = {
        "xaxis": {"title": {"text": "token position"}},
        "yaxis": {"title": {"text": "example"}, "autorange": "reversed", "dtick": 1},
        "title": {"text": f"{100 * share:.1f}% of the loss on prompt tokens (equal per-token losses)"},
        # on the layout, where the shared style sets the colour bar's type
        "coloraxis": {
            "colorscale": colorscale("sequential", theme),
            "cmin": 0.0,
            "colorbar": {"title": {"text": "loss weight"}},
        },
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height, legend=False)


def packing_mask_figure(
    doc_lens: Sequence[int], *, height: int = 400, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """Naive packing (left: later documents see earlier ones) against the block-diagonal mask (right)."""
    naive = packing_attention_mask(doc_lens, block_diagonal=False).astype(float)
    block = packing_attention_mask(doc_lens, block_diagonal=True).astype(float)
    leak = naive - block  # 1 where naive packing lets a token see another document
    z_naive = naive + leak  # 0 masked, 1 same document, 2 cross-document
    t = get_theme(theme)
    masked = t.diverging[len(t.diverging) // 2][1]  # the diverging scale's zero: near the background
    scale = [[0.0, masked], [0.5, t.palette["reference"]], [1.0, t.palette["negative"]]]
    data = [
        {
            "type": "heatmap",
            "z": z,
            "zmin": 0,
            "zmax": 2,
            "colorscale": scale,
            "showscale": False,
            "xaxis": xa,
            "yaxis": ya,
            "hovertemplate": "query %{y}, key %{x}: %{z}<extra></extra>",
        }
        for z, xa, ya in ((z_naive, "x", "y"), (block, "x2", "y2"))
    ]
    layout = {
        "xaxis": {"domain": [0.0, 0.47], "title": {"text": "key (naive packing)"}},
        "xaxis2": {"domain": [0.53, 1.0], "anchor": "y2", "title": {"text": "key (block-diagonal)"}},
        "yaxis": {"autorange": "reversed", "title": {"text": "query"}, "scaleanchor": "x"},
        "yaxis2": {"autorange": "reversed", "anchor": "x2", "scaleanchor": "x2"},
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height, legend=False)


def padding_figure(
    reports: Sequence[PaddingReport], *, height: int = 340, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """Padding as a share of all token slots, one bar per batching scheme."""
    if not reports:
        raise ValueError("need at least one padding report")
    pal = get_theme(theme).palette
    data = [
        {
            "type": "bar",
            "x": [r.scheme.replace("_", " ") for r in reports],
            "y": [r.waste for r in reports],
            "marker": {"color": [pal["negative"], pal["optimised"], pal["optimum"]][: len(reports)]},
            "customdata": [[r.slots, r.real_tokens, r.n_rows] for r in reports],
            "texttemplate": "%{y:.1%}",
            "textposition": "outside",
            "hovertemplate": "%{x}: %{y:.1%} padding<br>%{customdata[0]} slots, %{customdata[1]} real tokens, "
            "%{customdata[2]} rows<extra></extra>",
        }
    ]
    layout = {"yaxis": {"title": {"text": "padding share of token slots"}, "tickformat": ".0%", "range": [0, 1]}}
    return figure(data, layout, theme=theme, presenter=presenter, height=height, legend=False)
