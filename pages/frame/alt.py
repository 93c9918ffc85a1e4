"""A figure's text alternative: what a screen reader hears for a chart (its title, axes and live numbers)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from views import Readout

_TAG = re.compile(r"<[^>]+>")


ALT_READOUTS = 4  # readouts quoted in a figure's text alternative; the rest are in the readouts themselves


def figure_alt(fig: go.Figure, draggable: bool = False, readouts: Sequence[Readout] = ()) -> str:
    """A short text alternative for a figure (Streamlit gives it to the chart as its accessible name): its title,
    what its axes measure, and its live numbers as text (the first :data:`ALT_READOUTS` of ``readouts``, "label:
    value"), so that a screen reader hears what the figure shows."""
    layout = fig.layout

    def text(obj: Any) -> str:
        raw = getattr(getattr(obj, "title", None), "text", None) or ""
        return " ".join(_TAG.sub(" ", raw.replace("<br>", ". ")).split())

    def plain(raw: str) -> str:
        return " ".join(_TAG.sub(" ", raw).split())

    parts = [text(layout) or "Figure"]
    axes = [f"{name[0]}: {label}" for name in ("xaxis", "yaxis") if (label := text(getattr(layout, name, None)))]
    if axes:
        parts.append("Axes, " + "; ".join(axes))
    if readouts:
        shown = "; ".join(f"{plain(r.label)}: {plain(r.value)}" for r in readouts[:ALT_READOUTS])
        parts.append(f"Readouts, {shown}")
        if len(readouts) > ALT_READOUTS:
            parts.append("More readouts beside the figure, as text")
    else:
        parts.append("Its live numbers are in the readouts, as text")
    if draggable:
        parts.append("Its slider is also a control in the sidebar")
    return ". ".join(p.rstrip(". ") for p in parts) + "."
