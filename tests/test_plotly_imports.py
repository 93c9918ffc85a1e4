"""plotly never sees a half-imported pandas (viz._imports): on a server, one session's page may be importing pandas
while another session builds and serialises a figure (the race that tests/server/test_concurrent_sessions.py hit)."""

import importlib.machinery
import json
import sys
import types

import numpy as np
import plotly.graph_objects as go
import pytest

import viz  # noqa: F401  (installs the guard)
from views import Options, scaling
from viz import _imports


def _half_pandas() -> types.ModuleType:
    """What sys.modules holds while another thread is importing pandas: the module, without its names yet."""
    half = types.ModuleType("pandas")
    half.__spec__ = importlib.machinery.ModuleSpec("pandas", None)
    half.__spec__._initializing = True
    return half


def test_a_figure_is_built_and_serialised_while_pandas_is_half_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", _half_pandas())
    view = scaling.figures(scaling.SPEC.defaults(), Options())
    spec = view.figures["main"].to_json()  # validators and the JSON encoder both look pandas up
    assert any(trace.get("name", "").startswith("L(N, C/6N)") for trace in json.loads(spec)["data"])
    fig = go.Figure(go.Scatter(x=np.arange(3), y=np.arange(3) ** 2))
    assert list(fig.data[0].y) == [0, 1, 4] and "bdata" in fig.to_json()


def test_without_the_guard_plotly_fails_on_the_half_module(monkeypatch):
    # the failure the guard prevents, reproduced: plotly's own look-up hands over the half module
    import _plotly_utils.basevalidators as validators

    monkeypatch.setattr(validators, "get_module", _imports._plotly_get_module)
    monkeypatch.setitem(sys.modules, "pandas", _half_pandas())
    with pytest.raises(AttributeError):
        go.Figure(go.Scatter(x=np.arange(3), y=np.arange(3)))


def test_a_finished_module_is_still_found():
    assert _imports.get_module("numpy", should_load=False) is np
    assert _imports.get_module("json") is sys.modules["json"]
    assert _imports.get_module("no_such_module_here", should_load=False) is None
