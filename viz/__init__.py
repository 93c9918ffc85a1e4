"""Plotly figure builders of the LLM lesson explorer: one ``<concept>_figure(...) -> go.Figure`` per figure."""
