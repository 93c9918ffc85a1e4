"""Figures of the sampling page: next-token bars with a browser-side temperature slider, the order switch, and
greedy repetition loops against nucleus sampling.

- :func:`sampling_figure`: the tempered distribution before truncation (faint; blue where kept, grey where cut) and
  the distribution actually sampled from (orange). A plotly slider over temperatures whose steps use
  ``method="update"`` replaces both bar sets, the kept shading and the readout (kept tokens, entropy, exp(H)), so
  dragging T needs no server round trip. T = 0 is a step of its own (greedy).
- :func:`order_figure`: the final distribution with temperature first against truncation first.
- :func:`generation_figure`: token sequences of a seeded Markov chain, one row per decoding setting, loops marked.

Figures are assembled as plain dicts through :func:`viz.style.figure`; every builder takes ``theme`` ("light" or
"dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from core.sampling import Generation, effective_choices, entropy_nats, sample_filter_np
from viz.style import figure, get_theme, readout_panel

DEFAULT_TEMPERATURES: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(0, 41))  # 0, 0.05, ..., 2


def _readout(T: float, final: np.ndarray) -> str:
    n = int((final > 0).sum())
    H = abs(float(entropy_nats(final)))  # abs: no "-0.000" for a one-hot row
    head = "<b>T = 0 (greedy)</b>" if T == 0 else f"<b>T = {T:g}</b>"
    return "<br>".join([head, f"kept tokens: {n}", f"entropy H = {H:.3f} nats", f"exp(H) = {np.exp(H):.2f} choices"])


def _rows(logits: Sequence[float], temperatures: Sequence[float], top_k, top_p, min_p, order) -> tuple:
    """(tempered (S, V), final (S, V)) as numpy, one row per temperature.

    With temperature first, all T > 0 go through core in one batched call: sample_filter_np(z / T, 1) equals
    sample_filter_np(z, T) for that order. T = 0 and the other order go row by row. numpy throughout: drawing the
    bars and the slider's steps never imports torch.
    """
    z = np.asarray(logits, dtype=np.float64)
    temps = np.asarray(temperatures, dtype=np.float64)
    tempered = np.empty((temps.size, z.size))
    final = np.empty((temps.size, z.size))
    hot = temps > 0
    if order == "temperature_first" and hot.any():
        Z = z[None, :] / temps[hot, None]  # (S', V)
        tempered[hot] = sample_filter_np(Z, 1.0)
        final[hot] = sample_filter_np(Z, 1.0, top_k, top_p, min_p)
        rows = np.flatnonzero(~hot)
    else:
        rows = np.arange(temps.size)
    for i in rows:
        tempered[i] = sample_filter_np(z, float(temps[i]))
        final[i] = sample_filter_np(z, float(temps[i]), top_k, top_p, min_p, order)
    return tempered, final


def sampling_figure(
    logits: Sequence[float],
    labels: Sequence[str],
    temperature: float,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    order: str = "temperature_first",
    temperatures: Sequence[float] = DEFAULT_TEMPERATURES,
    *,
    height: int = 520,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Next-token bars (sorted as given) with a temperature slider computed in one go for every step.

    Trace 0: softmax(z / T) before truncation, blue where the token survives the filters and grey where it is cut.
    Trace 1: the distribution sampled from (orange, zeros for cut tokens). The page's temperature is merged into
    ``temperatures`` so the slider starts exactly there.
    """
    if len(labels) != len(logits):
        raise ValueError(f"need one label per logit ({len(logits)}), got {len(labels)}")
    th = get_theme(theme)
    kept_colour, cut_colour, sampled = th.palette["reference"], th.palette["neutral"], th.palette["optimised"]
    temps = sorted({float(t) for t in temperatures} | {float(temperature)})
    active = temps.index(float(temperature))
    tempered_exact, final_exact = _rows(logits, temps, top_k, top_p, min_p, order)
    # the bars carry 5 decimals (smaller slider steps); what is kept, and the readout, use the exact values: a kept
    # token of probability 1e-9 would otherwise count as cut
    tempered, final = np.round(tempered_exact, 5), np.round(final_exact, 5)
    x = list(labels)

    def colours(i: int) -> list[str]:
        return [kept_colour if f > 0 else cut_colour for f in final_exact[i]]

    data = [
        {
            "type": "bar",
            "x": x,
            "y": tempered[active],
            "name": "softmax(z / T) before truncation (grey: cut)",
            "marker": {"color": colours(active), "opacity": 0.35},
            "hovertemplate": "%{x}: %{y:.4f} before truncation<extra></extra>",
        },
        {
            "type": "bar",
            "x": x,
            "y": final[active],
            "name": "distribution sampled from",
            "marker": {"color": sampled},
            "hovertemplate": "%{x}: %{y:.4f} sampled<extra></extra>",
        },
    ]
    steps = [
        {
            "method": "update",
            "label": f"{T:g}",
            "args": [
                {"y": [tempered[i], final[i]], "marker.color": [colours(i), sampled]},
                {"annotations[0].text": _readout(T, final_exact[i])},
                [0, 1],
            ],
        }
        for i, T in enumerate(temps)
    ]
    layout = {
        "barmode": "overlay",
        "bargap": 0.15,
        # the readout panel in the column right of the bars (wider at presenter size)
        # upright token names: at -45 degrees 30 of them at 1280 x 720 touched their neighbours
        # category: a byte "1" or a token "2" is a name, never a number on a linear axis
        "xaxis": {
            "type": "category",
            "tickangle": -45 if presenter else -90,
            "domain": [0.0, 0.74 if presenter else 0.78],
        },
        "yaxis": {"title": {"text": "probability"}, "range": [0, 1.05]},
        "annotations": [readout_panel(_readout(temps[active], final_exact[active]), th)],
        "sliders": [
            {
                "active": active,
                "steps": steps,
                "currentvalue": {"prefix": "temperature T = "},
                "pad": {"t": 70},
                "len": 1.0,
                "x": 0.0,
            }
        ],
        "uirevision": "sampling",
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def order_figure(
    logits: Sequence[float],
    labels: Sequence[str],
    temperature: float,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    *,
    height: int = 420,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The sampled distribution with temperature applied first (blue) and truncation first (orange)."""
    pal = get_theme(theme).palette
    if len(labels) != len(logits):
        raise ValueError(f"need one label per logit ({len(logits)}), got {len(labels)}")
    z = np.asarray(logits, dtype=np.float64)
    first = sample_filter_np(z, temperature, top_k, top_p, min_p, "temperature_first")
    after = sample_filter_np(z, temperature, top_k, top_p, min_p, "filters_first")
    data = [
        {
            "type": "bar",
            "x": list(labels),
            "y": np.round(first, 5),
            "name": f"temperature first ({int((first > 0).sum())} kept)",
            "marker": {"color": pal["reference"]},
        },
        {
            "type": "bar",
            "x": list(labels),
            "y": np.round(after, 5),
            "name": f"truncation first ({int((after > 0).sum())} kept)",
            "marker": {"color": pal["optimised"]},
        },
    ]
    layout = {
        "barmode": "group",
        "xaxis": {"type": "category", "tickangle": -45},
        "yaxis": {"title": {"text": "probability"}},
        "hovermode": "x unified",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def generation_figure(
    generations: Mapping[str, Generation], *, height: int = 320, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """One row per decoding setting: the token ids as coloured cells, the repeating loop outlined."""
    names = list(generations)
    if not names:
        raise ValueError("need at least one generation")
    n = max(len(g.tokens) for g in generations.values())
    z = np.full((len(names), n), np.nan)
    for r, name in enumerate(names):
        toks = generations[name].tokens
        z[r, : len(toks)] = toks
    data: list[dict[str, Any]] = [
        {
            "type": "heatmap",
            "z": z,
            "x": list(range(n)),
            "y": names,
            "text": [[("" if np.isnan(v) else str(int(v))) for v in row] for row in z],
            "texttemplate": "%{text}",
            "colorscale": "Viridis",
            "showscale": False,
            "hovertemplate": "%{y}<br>position %{x}: token %{z}<extra></extra>",
        }
    ]
    shapes = []
    for r, name in enumerate(names):
        g = generations[name]
        if g.loop_start is not None:
            shapes.append(
                {
                    "type": "rect",
                    "x0": g.loop_start - 0.5,
                    "x1": len(g.tokens) - 0.5,
                    "y0": r - 0.5,
                    "y1": r + 0.5,
                    "line": {"color": get_theme(theme).palette["negative"], "width": 3},
                }
            )
    layout = {
        "xaxis": {"title": {"text": "position"}},
        "yaxis": {"autorange": "reversed"},
        "shapes": shapes,
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height, legend=False)


def effective_choices_of(probs: Sequence[float]) -> float:
    """exp(H) of a distribution, for the page's readouts (the same number as the figure's panel)."""
    return float(effective_choices(np.asarray(probs, dtype=np.float64)))
