"""Core math of the LLM lesson explorer: pure functions on numpy arrays and torch tensors.

Nothing here imports Streamlit or plotly. Tensor work goes through :mod:`core.device`, which picks the torch
device in one place; functions follow the device of the tensors they are given.
"""
