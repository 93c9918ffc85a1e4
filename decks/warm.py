"""Slides warmed in the background: each slide's view, and the deck's handout, computed once off the player's thread.

A lecturer who opens a deck should not wait on the first visit of each slide (the LoRA slides took 2.4-5 s cold,
issue 30). :class:`SlideCache` keeps the views the player draws, keyed by page, state and options, and
:meth:`SlideCache.warm` computes every slide of a deck (then its handout) on one background thread, in slide order,
so that by the time the lecturer gets there a visit is a cache hit. The player shows the warming's progress
(:class:`Warming`), and serves the handout as the bytes warmed here: the same bytes on every rerun, so the
download's address does not change under a click (a handout built on click was lost once in 15 clicks when a rerun
came between the button's drawing and the click).

No Streamlit here: the player page holds one :class:`SlideCache` per server process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from decks import Deck, deck_to_toml, views
from decks.handout import build_handout
from views import Options, View
from views.state import State

MAX_VIEWS = 96  # four decks of 23 slides in one theme and mode, or one deck in both themes and modes, and sweeps


@dataclass
class Warming:
    """One deck's warming: how many of its slides are ready, and its handout once built."""

    total: int
    ready: int = 0
    handout: str | None = None
    error: str | None = None
    future: Future | None = field(default=None, repr=False)

    @property
    def done(self) -> bool:
        return self.handout is not None or self.error is not None


class SlideCache:
    """Views by (page, state, options), least recently used dropped past ``max_entries``; and each deck's warming."""

    def __init__(self, max_entries: int = MAX_VIEWS, compute: Callable[[str, State, Options], View] | None = None):
        self._views: OrderedDict[Hashable, View] = OrderedDict()
        self._warmings: dict[Hashable, Warming] = {}
        self._lock = threading.Lock()
        self._max = max_entries
        self._compute = compute or (lambda page, state, options: views()[page].figures(state, options))
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="deck-warm")

    def view(self, page: str, state: State, options: Options) -> View:
        """The page's ``figures(state, options)``, computed once (views are not copied: nothing mutates them)."""
        key = (page, state, options)
        with self._lock:
            if key in self._views:
                self._views.move_to_end(key)
                return self._views[key]
        view = self._compute(page, state, options)
        with self._lock:
            self._views[key] = view
            self._views.move_to_end(key)
            while len(self._views) > self._max:
                self._views.popitem(last=False)
        return view

    def cached(self, page: str, state: State, options: Options) -> bool:
        with self._lock:
            return (page, state, options) in self._views

    def warm(self, deck: Deck, theme: str = "light", presenter: bool = True, hide: bool = False) -> Warming:
        """Start (once per deck, theme, mode and ``hide``) computing every slide's view in slide order, then the
        handout; return the warming to read its progress. A slide whose view fails is skipped (the player reports
        it when the lecturer gets there); a handout that fails is reported in ``error``."""
        key = (deck.name, deck_to_toml(deck), theme, presenter, hide)
        with self._lock:
            warming = self._warmings.get(key)
            if warming is not None:
                return warming
            warming = self._warmings[key] = Warming(total=len(deck))

        def run() -> None:
            for slide in deck.slides:
                try:
                    self.view(slide.page, slide.state, slide.options(theme, presenter))
                except Exception:  # a slide that fails is shown failing by the player, not here
                    pass
                warming.ready += 1
            try:
                warming.handout = build_handout(deck, hide=hide)
            except Exception as exc:  # reported to the lecturer beside the handout button
                warming.error = f"{type(exc).__name__}: {exc}"

        warming.future = self._pool.submit(run)
        return warming
