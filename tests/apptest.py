"""Helpers for AppTest page tests: open a page as a deep link would, and read plotly figures' data."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

TIMEOUT = 60
# Link values every page must survive: text, NaN, infinities, overflow, negative, zero, empty.
BAD_LINK_VALUES = ("abc", "nan", "NaN", "inf", "-inf", "1e400", "-5", "0", "")
APP = str(Path(__file__).resolve().parents[1] / "app.py")


def open_page(page: str | None, query: dict[str, str] | None = None, context: dict[str, Any] | None = None) -> AppTest:
    """Run ``app.py`` and switch to ``page`` (e.g. "pages/1_Scaling_laws.py"), with URL parameters ``query``.

    ``page=None`` runs the home page. The query parameters are in place before the first run, as when a
    shared link is opened. ``context``: what the browser reports through ``st.context`` (``{"theme": "dark"}``).
    """
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in (context or {}).items():
        at.context[key] = value
    if page is not None:
        at.switch_page(page)  # before the first run: the page is the very first thing this session runs
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def figures(at: AppTest) -> list[dict[str, Any]]:
    """The plotly figures on the page, as JSON dicts, in page order."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def decode(value: Any) -> np.ndarray:
    """A plotly data array: a plain list, or plotly's base64 typed array {dtype, bdata, shape}."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        if "shape" in value:
            shape = value["shape"]
            shape = [int(s) for s in shape.split(",")] if isinstance(shape, str) else shape
            arr = arr.reshape(shape)
        return arr
    return np.asarray(value)


def trace(fig: dict[str, Any], name_part: str) -> dict[str, Any]:
    """The first trace whose name contains ``name_part``."""
    for tr in fig["data"]:
        if name_part in (tr.get("name") or ""):
            return tr
    raise KeyError(f"no trace named like {name_part!r}: {[t.get('name') for t in fig['data']]}")


def font_sizes(obj: Any, where: str = "") -> Iterator[tuple[str, float]]:
    """(where, size) of every font size written in a figure's JSON."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key.endswith("font") and isinstance(value, dict) and "size" in value:
                yield f"{where}.{key}", value["size"]
            yield from font_sizes(value, f"{where}.{key}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from font_sizes(value, f"{where}[{i}]")


def metrics(at: AppTest) -> dict[str, str]:
    """label -> value of every st.metric on the page."""
    return {m.label: m.value for m in at.metric}


def no_exception(at: AppTest) -> bool:
    return len(at.exception) == 0
