"""The deck player's background warming (decks/warm.py): every slide's view computed once, in slide order, then the
handout; a visit after the warming is a cache hit; the cache is bounded; a slide that fails does not stop the rest."""

from __future__ import annotations

import pytest

from decks import load_decks
from decks.handout import build_handout
from decks.warm import SlideCache
from views import Options, View
from views.state import State


@pytest.fixture(scope="module")
def interview():
    return load_decks()[0]["interview"]


def test_warming_computes_every_slide_once_in_order_then_the_handout(interview) -> None:
    calls: list[tuple[str, State]] = []

    def compute(page: str, state: State, options: Options) -> View:
        calls.append((page, state))
        from decks import views

        return views()[page].figures(state, options)

    cache = SlideCache(compute=compute)
    warming = cache.warm(interview, "light", True, hide=True)
    assert cache.warm(interview, "light", True, hide=True) is warming  # started once per deck, theme, mode, hide
    warming.future.result(timeout=300)
    assert warming.done and warming.error is None and warming.ready == warming.total == len(interview)
    assert calls == [(s.page, s.state) for s in interview.slides]
    assert warming.handout == build_handout(interview, hide=True)  # the same document the handout command writes
    for slide in interview.slides:  # the player's visit: a hit, no computation
        assert cache.cached(slide.page, slide.state, slide.options("light", True))
        cache.view(slide.page, slide.state, slide.options("light", True))
    assert len(calls) == len(interview)


def test_the_cache_drops_the_least_recently_used_view() -> None:
    seen: list[str] = []
    cache = SlideCache(max_entries=2, compute=lambda page, state, options: seen.append(page) or View())
    state, options = State({}), Options()
    for page in ("a", "b", "a", "c", "a", "b"):
        cache.view(page, state, options)
    assert seen == ["a", "b", "c", "b"]  # "a" was used last before "c" came, so "b" went


def test_a_slide_that_fails_is_skipped_and_the_rest_still_warm(interview) -> None:
    def compute(page: str, state: State, options: Options) -> View:
        if page == interview.slides[0].page and state == interview.slides[0].state:
            raise RuntimeError("boom")
        return View()

    cache = SlideCache(compute=compute)
    warming = cache.warm(interview, "dark", False)
    warming.future.result(timeout=300)
    assert warming.ready == len(interview) and warming.handout is not None
    assert not cache.cached(
        interview.slides[0].page, interview.slides[0].state, interview.slides[0].options("dark", False)
    )
    assert cache.cached(
        interview.slides[-1].page, interview.slides[-1].state, interview.slides[-1].options("dark", False)
    )
