"""Figures of class mode: the class's guesses against the true value, as the projector shows them after the reveal
and as each student sees them with their own guess marked.

``guesses_figure`` takes bins and counts (classroom/classes.py bins the guesses), ``choices_figure`` the options and
the count per option; both lay them out. No names are drawn, only how many answered what. Every builder takes
``theme`` ("light" or "dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.style import figure, get_theme


def _markers(truth: float, own: float | None, top: float, pal: Any) -> list[dict[str, Any]]:
    """The truth (a solid line) and the student's own guess (a dashed line), as traces, named in the legend."""
    out = [{"type": "scatter", "x": [truth, truth], "y": [0, top], "mode": "lines", "name": f"true value {truth:.4g}",
            "line": {"color": pal["optimum"], "width": 3}, "hoverinfo": "skip"}]  # fmt: skip
    if own is not None:
        out.append({"type": "scatter", "x": [own, own], "y": [0, top], "mode": "lines", "name": f"your guess {own:.4g}",
                    "line": {"color": pal["highlight"], "width": 3, "dash": "dash"}, "hoverinfo": "skip"})  # fmt: skip
    return out


def guesses_figure(
    edges: np.ndarray,
    counts: np.ndarray,
    truth: float,
    *,
    own: float | None = None,
    x_title: str = "guess",
    height: int = 360,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """A histogram of the class's numeric guesses (``counts`` per bin of ``edges``), the true value as a solid line
    and, for a student, their own guess dashed.

    Traces: 0 the guesses, 1 the truth, 2 the own guess (if any)."""
    pal = get_theme(theme).palette
    centres = (edges[:-1] + edges[1:]) / 2
    top = float(max(int(counts.max(initial=0)), 1)) * 1.08
    data = [{"type": "bar", "x": centres, "y": counts, "width": np.diff(edges) * 0.92, "name": "the class's guesses",
             "marker": {"color": pal["reference"]}, "customdata": np.stack([edges[:-1], edges[1:]], axis=1),
             "hovertemplate": "%{customdata[0]:.4g} to %{customdata[1]:.4g}: %{y}<extra></extra>"},
            *_markers(truth, own, top, pal)]  # fmt: skip
    layout = {
        "title": {"text": f"The class's guesses: {int(counts.sum())}"},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": "students"}, "range": [0, top], "rangemode": "tozero"},
        "bargap": 0.0,
        "legend": {"y": 1.02},
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def choices_figure(
    options: Sequence[str],
    per_option: Sequence[int],
    answer: int,
    *,
    own: int | None = None,
    height: int = 360,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """How many chose each option of a multiple-choice question, the right option named "(right)" and in its own
    colour, the student's own choice outlined.

    Traces: 0 the counts."""
    pal = get_theme(theme).palette
    colors = [pal["optimum"] if i == answer else pal["neutral"] for i in range(len(options))]
    widths = [4 if i == own else 0 for i in range(len(options))]
    labels = [f"{chr(65 + i)}. {text}" + (" (right)" if i == answer else "") for i, text in enumerate(options)]
    data = [{"type": "bar", "x": labels, "y": list(per_option), "name": "answers", "showlegend": False,
             "marker": {"color": colors, "line": {"color": pal["highlight"], "width": widths}},
             "hovertemplate": "%{x}: %{y}<extra></extra>"}]  # fmt: skip
    layout = {
        "title": {"text": f"The class's answers: {sum(per_option)}"},
        "yaxis": {"title": {"text": "students"}, "rangemode": "tozero"},
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height, legend=False)
