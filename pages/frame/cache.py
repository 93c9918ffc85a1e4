"""The page layer's caches: core results, page views and built figures, bounded and shared by sessions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from views import View

# Entries per cached function (one per page): enough for a class going back and forth between a few views, and small
# enough that the caches are full after a few hundred distinct interactions, so that memory levels off
# (bench/bench_memory.py: with 64 entries a worker still grew 15% between the 500th and the 1,000th).
CACHE_ENTRIES = 16


def cached(func: Callable[..., Any]) -> Callable[..., Any]:
    """The page layer's cache for core calls: bounded, shared by sessions, keyed by plain arguments."""
    return st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)(func)


def cached_view(func: Callable[..., View]) -> Callable[..., View]:
    """A page's ``figures(state, options)``, cached per state and options (theme and presenter mode included),
    shared by sessions. Figures are not copied: nothing downstream mutates them (:meth:`Page.chart` draws them as
    they are)."""
    return st.cache_resource(max_entries=CACHE_ENTRIES, show_spinner=False)(func)


def cached_figures(func: Callable[..., Any]) -> Callable[..., Any]:
    """A cache for built figures (plotly's validation makes building them the slowest step of a rerun).

    Unlike :func:`cached` it returns the same objects without copying them, so callers must not mutate the
    figures it returns (:meth:`Page.figure` draws them as they are).
    """
    return st.cache_resource(max_entries=32, show_spinner=False)(func)
