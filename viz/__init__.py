"""Plotly figure builders of the LLM lesson explorer: one ``<concept>_figure(...) -> go.Figure`` per figure."""

# plotly's modules bind its get_module to their own names when imported; the guard replaces it in each of them
import plotly.graph_objects
import plotly.io  # noqa: F401

from viz._imports import guard_plotly_imports

guard_plotly_imports()
