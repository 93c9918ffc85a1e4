"""The DPO figure: the loss -log sigma(margin) of one preference pair, with the pair's point on the curve.

The builder takes numbers from :func:`core.dpo.dpo_loss` and the curve from :func:`core.dpo.dpo_curve`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from viz import format as fmt
from viz.style import figure, get_theme

_LOG2 = math.log(2.0)


def dpo_figure(
    curve_margin: ArrayLike,
    curve_loss: ArrayLike,
    curve_weight: ArrayLike,
    margin: float,
    loss: float,
    weight: float,
    *,
    both_fell: bool = False,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The DPO loss against the margin m = r_hat_w - r_hat_l, the gradient weight sigma(-m), and the pair.

    curve_*: core's :func:`~core.dpo.dpo_curve` (margins, -log sigma(m), sigma(-m)). margin, loss, weight: the
    pair's values from :func:`~core.dpo.dpo_loss`. The pair is an orange dot on the loss curve and a hollow one on
    the weight curve; the start of training (pi_theta = pi_ref: m = 0, loss log 2, weight 1/2) is a blue dot.
    both_fell: add a warning that both log-probabilities fell below the reference while the margin grew.
    theme: "light" or "dark"; presenter: larger type for a room.
    """
    t = get_theme(theme)
    pal = t.palette
    m = np.asarray(curve_margin, dtype=np.float64)
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": m,
            "y": np.asarray(curve_loss, dtype=np.float64),
            "mode": "lines",
            "name": "loss −log σ(m)",
            "line": {"color": pal["reference"], "width": 3},
            "hovertemplate": "m = %{x:.3f}<br>loss = %{y:.4f}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": m,
            "y": np.asarray(curve_weight, dtype=np.float64),
            "mode": "lines",
            "name": "gradient weight σ(−m) = −dL/dm",
            "line": {"color": pal["rule"], "width": 2, "dash": "dash"},
            "hovertemplate": "m = %{x:.3f}<br>weight = %{y:.4f}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": [0.0],
            "y": [_LOG2],
            "mode": "markers",
            "name": "π_θ = π_ref: loss log 2",
            "marker": {"color": pal["reference"], "size": 11},
            "hovertemplate": "start of training<br>m = 0, loss = log 2 = 0.693<extra></extra>",
        },
        {
            "type": "scatter",
            "x": [margin],
            "y": [loss],
            "mode": "markers",
            "name": "this pair",
            "marker": {"color": pal["optimised"], "size": 15, "line": {"color": t.text, "width": 1}},
            "hovertemplate": "this pair<br>margin = %{x:.4f}<br>loss = %{y:.4f}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": [margin],
            "y": [weight],
            "mode": "markers",
            "name": "its gradient weight",
            "marker": {"color": pal["optimised"], "size": 12, "symbol": "circle-open", "line": {"width": 3}},
            "hovertemplate": "weight σ(−m) = %{y:.4f}<extra></extra>",
        },
    ]
    annotations = [
        {
            "x": margin,
            "y": loss,
            "text": f"margin {fmt.number(margin)}<br>loss {fmt.number(loss)}, weight {fmt.number(weight)}",
            "showarrow": True,
            "arrowhead": 2,
            "ax": 45,
            "ay": -45,
            "xanchor": "left",
            "align": "left",
        }
    ]
    if both_fell:
        annotations.append(
            {
                "x": 0.99,
                "y": 0.98,
                "xref": "paper",
                "yref": "paper",
                "xanchor": "right",
                "yanchor": "top",
                "showarrow": False,
                "align": "right",
                "font": {"color": t.ink["negative"]},
                "text": "both log-probabilities fell below the reference,<br>"
                "yet the margin grew: DPO only needs the gap",
            }
        )
    # tall enough for the pair (and 3 nats of the curve), short enough that the weight curve stays readable
    top = max(3.0, 1.3 * float(loss))
    layout = {
        "xaxis": {"title": {"text": "margin m = r̂_w − r̂_l (implicit reward difference)"}, "zeroline": True},
        "yaxis": {"title": {"text": "loss (nats) / weight"}, "range": [0, top]},
        "annotations": annotations,
        "uirevision": "dpo",
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
