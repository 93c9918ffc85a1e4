"""Figures of "Predict first": the figure without its answer, and the full figure with the learner's guess on it.

- :func:`predict_figure`: empty axes (or only the inputs, as given traces) and the question in the middle. It holds
  no trace, annotation or slider step of the answer, so nothing of it reaches the browser.
- :func:`with_guess`: a copy of a built figure with a dashed line at the guess, labelled; the figure passed in is
  not changed (it may be shared through a cache).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from viz.style import figure, figure_from_dict, get_theme

GUESS_NAME = "your guess"


def predict_figure(
    question: str,
    *,
    x_title: str = "",
    y_title: str = "",
    x_range: Sequence[float] | None = None,
    y_range: Sequence[float] | None = None,
    log_x: bool = False,
    traces: Sequence[dict[str, Any]] = (),
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Axes titled like the lesson figure's, the ``traces`` given (inputs only: never the answer), and the question.

    ``x_range`` is in data units; on a log axis (``log_x``) it is converted to plotly's log10 range here.
    """
    t = get_theme(theme)
    xaxis: dict[str, Any] = {"title": {"text": x_title}, "type": "log" if log_x else "linear"}
    if x_range is not None:
        xaxis["range"] = [math.log10(v) for v in x_range] if log_x else list(x_range)
    yaxis: dict[str, Any] = {"title": {"text": y_title}}
    if y_range is not None:
        yaxis["range"] = list(y_range)
    layout = {
        "xaxis": xaxis,
        "yaxis": yaxis,
        "annotations": [
            {
                "text": f"<b>Predict first.</b><br>{question}<br>Enter your guess in the sidebar to see the answer.",
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
                "showarrow": False,
                "align": "center",
                "bordercolor": t.axis,
                "borderwidth": 1,
                "borderpad": 10,
                "bgcolor": t.panel,
                "font": {"size": 16},
            }
        ],
    }
    return figure(list(traces), layout, theme=theme, presenter=presenter, height=height, legend=bool(traces))


def with_guess(
    fig: go.Figure,
    value: float,
    label: str,
    *,
    axis: str = "x",
    ref: str = "",
    theme: str = "light",
) -> go.Figure:
    """A copy of ``fig`` with a dashed line at ``value`` on the ``axis`` ("x": a vertical line, "y": a horizontal
    one) labelled ``label``. ``ref``: the axis id ("x2", "y3") on figures with several panels; the line spans the
    panel's other axis (its ``domain``). Shapes take data values on log axes too."""
    t = get_theme(theme)
    data = fig.to_dict()
    layout = data["layout"]
    ref = ref or axis
    line = {"color": t.palette["highlight"], "width": 3, "dash": "dash"}
    label_spec = {"text": label, "font": {"color": t.ink["highlight"], "size": 14}}
    if axis == "x":
        other = _paired(layout, ref, "yaxis")
        shape = {"type": "line", "xref": ref, "x0": value, "x1": value, "yref": f"{other} domain", "y0": 0, "y1": 1}
        label_spec |= {"textposition": "end", "textangle": 0, "yanchor": "top"}
    else:
        other = _paired(layout, ref, "xaxis")
        shape = {"type": "line", "yref": ref, "y0": value, "y1": value, "xref": f"{other} domain", "x0": 0, "x1": 1}
        label_spec |= {"textposition": "end"}
    shape |= {"line": line, "label": label_spec, "name": GUESS_NAME}
    layout["shapes"] = [*layout.get("shapes", []), shape]
    return figure_from_dict(data["data"], layout)


def _paired(layout: dict[str, Any], ref: str, other_kind: str) -> str:
    """The id of the axis that ``ref`` (an x or y axis id) is anchored to ("y" for "x" on a single panel)."""
    kind = "xaxis" if ref.startswith("x") else "yaxis"
    name = kind + ref[1:]
    anchor = (layout.get(name) or {}).get("anchor")
    if anchor and anchor != "free":
        return anchor
    return other_kind[0] + ref[1:]
