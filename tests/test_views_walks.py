"""Every lesson page's view along random walks of its controls (bench/links.py, one control changed per step, as
the load benchmark drives them): no exception, no NaN or inf in a readout, every table builds.

bench/bench_load.py found a state the hand-picked tests missed (a WSD decay as long as the run after its warm-up);
these walks visit such corners of each spec on every run of the suite."""

from __future__ import annotations

import importlib
import re
from urllib.parse import parse_qsl

import numpy as np
import pytest

from bench.links import VIEWS, spec_of, walk
from views import Options, View

STEPS = 20
_NAN = re.compile(r"\b(nan|inf)\b", re.IGNORECASE)
# the readouts whose NaN is the lesson itself (softmax without the max: ∞/∞), by page and label; no other may show one
NAN_IS_THE_LESSON = {("Number_formats", "fp16 naive: top probability")}


def _figures(page: str):
    return importlib.import_module(f"views.{VIEWS[page]}").figures


@pytest.mark.parametrize("page", list(VIEWS))
def test_views_along_a_random_walk(page: str) -> None:
    spec, figures = spec_of(page), _figures(page)
    tabs = [f for f in spec.fields if f.widget == "tabs"]
    visited = 0
    for query in walk(page, STEPS, seed=7):
        state, problems = spec.parse(dict(parse_qsl(query)))
        assert problems == [], (query, problems)
        parts = {"main", "family", *(state[f.name] for f in tabs)}  # the open tab, as the page asks for it
        out = figures(state, Options(parts=frozenset(parts)))
        assert isinstance(out, View) and out.figures, query
        for r in out.readouts:
            if (page, r.label) not in NAN_IS_THE_LESSON:
                assert not _NAN.search(f"{r.value} {r.help or ''}"), (query, r)
        for name, table in out.tables.items():
            frame = table() if callable(table) else table
            assert len(frame.columns) > 0, (query, name)
            assert not np.isinf(frame.select_dtypes("number").to_numpy()).any(), (query, name)
        visited += 1
    assert visited >= STEPS // 2  # the walk's refused steps are few
