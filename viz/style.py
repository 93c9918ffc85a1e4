"""The one shared look of every figure: a colour-blind-safe palette and common layout settings.

The palette is Okabe and Ito's (2008), safe for the common colour-vision deficiencies. Roles follow the lesson:
blue for the reference or baseline, orange for the optimised policy or the chosen plan, sky blue for rules of
thumb, green for optima found by the fit, vermillion for warnings and negative values.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

PALETTE: dict[str, str] = {
    "reference": "#0072B2",  # blue: reference policy, baseline, the fitted curve
    "optimised": "#E69F00",  # orange: optimised policy, the user's plan
    "rule": "#56B4E9",  # sky blue: rules of thumb (20 tokens per parameter)
    "optimum": "#009E73",  # bluish green: optima and frontiers
    "negative": "#D55E00",  # vermillion: negative values, warnings
    "highlight": "#CC79A7",  # reddish purple: a second highlight
    "yellow": "#F0E442",
    "neutral": "#7F7F7F",
}

# A sequence for families of curves (budgets, heads, ...), in an order that keeps neighbours distinct.
SEQUENCE: tuple[str, ...] = (
    PALETTE["reference"],
    PALETTE["optimised"],
    PALETTE["optimum"],
    PALETTE["highlight"],
    PALETTE["rule"],
    PALETTE["negative"],
    PALETTE["neutral"],
)

# Diverging scale for signed heatmaps (negative vermillion, zero white, positive blue).
DIVERGING: list[list[Any]] = [[0.0, "#D55E00"], [0.5, "#F7F7F7"], [1.0, "#0072B2"]]
# Sequential scale for probabilities and weights (white to blue).
SEQUENTIAL: list[list[Any]] = [[0.0, "#F7FBFF"], [0.5, "#6BAED6"], [1.0, "#08306B"]]

FONT_SIZE = 15


def apply_style(fig: go.Figure, *, height: int = 460, legend: bool = True) -> go.Figure:
    """Apply the shared layout (font, margins, legend above the plot, unified hover) and return ``fig``."""
    fig.update_layout(
        height=height,
        font={"size": FONT_SIZE},
        margin={"l": 60, "r": 20, "t": 60, "b": 55},
        hoverlabel={"font_size": FONT_SIZE},
        showlegend=legend,
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0},
    )
    return fig


def style_layout(layout: dict[str, Any], *, height: int = 460, legend: bool = True) -> dict[str, Any]:
    """The shared layout settings merged under ``layout`` (whose own keys win); the dict form of apply_style."""
    base: dict[str, Any] = {
        "height": height,
        "font": {"size": FONT_SIZE},
        "margin": {"l": 60, "r": 20, "t": 60, "b": 55},
        "hoverlabel": {"font": {"size": FONT_SIZE}},
        "showlegend": legend,
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0},
    }
    return {**base, **layout}


def figure_from_dict(data: list[dict[str, Any]], layout: dict[str, Any]) -> go.Figure:
    """A figure assembled from plain dicts without plotly's per-property validation.

    Validation costs 40-60 ms for a figure with a slider of a hundred steps, more than everything else in a
    page rerun; skipping it brings the build to about 2 ms. The price is that a typo in a property name is not
    caught here, so every builder that uses this has a test that rebuilds its output with validation
    (``go.Figure(fig.to_dict())``). ``_validate`` is a long-standing but private argument of plotly's figure.
    """
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def plotly_config(filename: str, image_format: str = "png") -> dict[str, Any]:
    """``config`` for ``st.plotly_chart``: the camera button saves ``filename`` as PNG (2x) or SVG."""
    fmt = image_format if image_format in ("png", "svg") else "png"
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": fmt, "filename": filename, "scale": 2 if fmt == "png" else 1},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }
