"""Figures of the training-memory page: per-GPU memory by component against the card, and the pipeline bubble.

Builders take bytes and fractions that core.training_memory computed and only draw them. Memory is plotted in
GiB (2^30 bytes: binary units, as nvidia-smi's MiB are); the axis title says so, and the GB-vs-GiB trap draws the
card's label misread as decimal GB as a second, lower line.

The memory figure can carry a plotly slider over the sequence length: each step replaces the bars that depend on it
(activations), the totals over the bars (their value, height and ✗ where a bar does not fit), the y range and the
readout of the title (two lines), in the browser.

Figures are assembled as plain dicts through :func:`viz.style.figure`; every builder takes ``theme`` ("light" or
"dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from viz.style import Theme, figure, font_size, get_theme

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


# binary units above GiB: a unit takes over once three significant figures of the one below would reach 1,000
_LARGER = (("TiB", 2**40), ("PiB", 2**50), ("EiB", 2**60))


def memory_text(n: float, *, signed: bool = False) -> str:
    """Bytes as the memory figure and the page's readouts print them: three significant figures in GiB, in TiB, PiB
    or EiB from 1,000 of the unit below on, "<0.1 GiB" for an amount under 0.1 GiB and "0 GiB" for none.

    memory_text(62.4e9) -> '58.1 GiB'; memory_text(5.634e15) -> '5.00 PiB'; memory_text(4.5e6) -> '<0.1 GiB'.
    signed: a headroom, with its sign ('+21.9 GiB', '−4.21 TiB'), three significant figures under 0.1 GiB too.
    """
    if not math.isfinite(n):
        raise ValueError(f"a byte count must be finite, got {n!r}")
    sign = ("+" if n >= 0 else "−") if signed else ("−" if n < 0 else "")
    a = abs(n)
    if a == 0:
        return f"{sign}0 GiB"
    if a < 0.1 * GIB and not signed:
        return "<0.1 GiB"
    unit, scale = "GiB", GIB
    for name, size in _LARGER:
        if float(f"{a / scale:.3g}") < 1000:
            break
        unit, scale = name, size
    value = float(f"{a / scale:.3g}")  # three significant figures, then their trailing zeros kept
    decimals = max(2 - math.floor(math.log10(value)), 0)
    return f"{sign}{value:,.{decimals}f} {unit}"


def _total_label(total: float, gpu_bytes: float, t: Theme) -> tuple[str, str]:
    """The text over a bar (its total, ✗ where it does not fit) and the text's colour."""
    fits = total <= gpu_bytes
    return f"<b>{memory_text(total)}</b>" + ("" if fits else " ✗"), t.text if fits else t.ink["negative"]


def _y_top(totals: np.ndarray, capacity_gib: float) -> float:
    return max(capacity_gib, float(totals.max()) / GIB if totals.size else 0.0) * 1.15


def seq_readout(seq: int, label: str, activations: float, total: float, gpu_bytes: float) -> str:
    """The memory figure's readout at one sequence length, in two lines: the outlined bar's activations, then its
    total and its headroom on the card (as the page's readouts print them, :func:`memory_text`). ``label``: the
    outlined bar's; its name before a parenthesis is used."""
    name = label.split(" (")[0]
    return (
        f"seq {seq:,}: activations {memory_text(activations)} per GPU<br>{name} total {memory_text(total)} per GPU, "
        f"headroom {memory_text(gpu_bytes - total, signed=True)} of {gpu_bytes / GIB:,.0f} GiB"
    )


# A slider under the bars. Its pad keeps the room that plotly's automargin gives the x axis's labels and title
# (measured in chromium, without a slider: 56 px, 67 px in presenter mode) less the 8 px the frame adds; plotly draws
# the slider about 84 px under its pad (SLIDER_BODY_PX of pages/frame/drag.py, which takes the slider out again and
# keeps the pad and 8 px of the figure's height).
_SLIDER_PAD_T = {False: 48, True: 59}
_SLIDER_PX = 84
_TITLE_GAP_PX = 12  # between the readout title's second line and the legend (the first-screen test's overlap check)


def training_memory_figure(
    labels: Sequence[str],
    components: Mapping[str, Sequence[float]],
    gpu_bytes: float,
    gpu_name: str,
    *,
    chosen: int | None = None,
    gb_misread_bytes: float | None = None,
    seqs: Sequence[int] | None = None,
    seq_components: Mapping[str, ArrayLike] | None = None,
    active: int = 0,
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Stacked per-GPU bars, one per configuration in ``labels``, against the card's memory.

    components: name ("weights", "gradients", "optimizer states", "activations") -> bytes per bar. gpu_bytes: the
    card's memory in bytes (its label read as GiB). chosen: index of the page's configuration (outlined and
    labelled). gb_misread_bytes: draw the trap's line, the label read as decimal GB.

    seqs: the sequence lengths of a slider, with ``seq_components`` (name -> bytes of shape (steps, bars): the
    components that depend on the sequence length, which replace those of ``components``) and ``active`` (the
    step the figure shows, the page's own). Step i restyles those bars and rewrites the totals over the bars, the y
    range and the title's readout (the outlined bar's activations, total and headroom), in the browser.
    """
    t = get_theme(theme)
    n = len(labels)
    swept: dict[str, np.ndarray] = {}
    if seqs is not None:
        if not seq_components or chosen is None:
            raise ValueError("a slider over the sequence length needs seq_components and the chosen bar")
        if not 0 <= active < len(seqs):
            raise ValueError(f"active step {active} is outside 0..{len(seqs) - 1}")
        for name, values in seq_components.items():
            swept[name] = np.asarray(values, dtype=float)
            if name not in components or swept[name].shape != (len(seqs), n):
                raise ValueError(f"{name}: expected one of the components, shape {(len(seqs), n)}")
        components = {name: swept[name][active] if name in swept else v for name, v in components.items()}
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
    first_total = len(notes)  # annotation index of the first bar's total
    for i, total in enumerate(totals):
        text, colour = _total_label(total, gpu_bytes, t)
        notes.append(
            {
                "x": labels[i],
                "y": total / GIB,
                "yanchor": "bottom",
                "text": text,
                "showarrow": False,
                "font": {"color": colour},
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
    top = _y_top(totals, capacity)
    layout: dict[str, Any] = {
        "barmode": "stack",
        "xaxis": {"title": {"text": "configuration (outlined: yours)"}, "type": "category"},
        "yaxis": {"title": {"text": "memory per GPU (GiB, 1 GiB = 2³⁰ B = 1.074 GB)"}, "range": [0, top]},
        "shapes": shapes,
        "annotations": notes,
        "uirevision": "training-memory",
        "hovermode": "x unified",
    }
    if seqs is not None:
        names = list(components)
        acts = swept.get("activations", np.zeros((len(seqs), n)))
        step_totals = np.zeros((len(seqs), n))
        for name, values in components.items():  # summed in the order of ``totals``: the same numbers at ``active``
            step_totals += swept[name] if name in swept else np.asarray(values, dtype=float)[None, :]
        steps = []
        for i, seq in enumerate(seqs):
            relayout: dict[str, Any] = {
                "title.text": seq_readout(int(seq), labels[chosen], acts[i, chosen], step_totals[i, chosen], gpu_bytes),
                "yaxis.range": [0, _y_top(step_totals[i], capacity)],
            }
            for j, total in enumerate(step_totals[i]):
                text, colour = _total_label(total, gpu_bytes, t)
                k = first_total + j
                relayout |= {
                    f"annotations[{k}].text": text,
                    f"annotations[{k}].y": total / GIB,
                    f"annotations[{k}].font.color": colour,
                }
            restyle = {
                "y": [swept[name][i] / GIB for name in swept],
                "customdata": [swept[name][i] / 1e9 for name in swept],
            }
            steps.append(
                {
                    "method": "update",
                    "label": f"{int(seq):,}",
                    "args": [restyle, relayout, [names.index(k) for k in swept]],
                }
            )
        title = seq_readout(int(seqs[active]), labels[chosen], acts[active, chosen], totals[chosen], gpu_bytes)
        # plotly anchors a title of several lines by its first line: each further line pushes it up, off the
        # figure's top, unless the pad makes room for it (as viz/attention.py does)
        lines = title.count("<br>") + 1
        pad = 6 + round(1.35 * font_size(14, presenter)) * (lines - 1)
        layout["title"] = {"text": title, "font": {"size": 14}, "y": 1, "yanchor": "top", "pad": {"t": pad}}
        if presenter:  # the readout's line leaves the y axis's title too little height in one line
            layout["yaxis"]["title"]["text"] = "memory per GPU (GiB,<br>1 GiB = 2³⁰ B = 1.074 GB)"
        layout["sliders"] = [
            {
                "active": active,
                "steps": steps,
                "currentvalue": {"prefix": "sequence length = "},
                "pad": {"t": _SLIDER_PAD_T[presenter]},
                "len": 1.0,
                "x": 0.0,
            }
        ]
        height += _SLIDER_PX - 8  # the plot keeps its height
    fig = figure(data, layout, theme=theme, presenter=presenter, height=height)
    if seqs is not None:  # the two-line readout title and the legend under it: a gap (the plot keeps its height)
        fig.layout.margin.t += _TITLE_GAP_PX
        fig.layout.height += _TITLE_GAP_PX
    return fig


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
