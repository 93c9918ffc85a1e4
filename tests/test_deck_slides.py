"""Every slide of every shipped deck, opened in the player (AppTest, once each): no exception, no warning, and the
same figures as the slide's page opened on the slide's link (a withheld slide's once the lecturer reveals it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from decks import load_decks
from tests.apptest import decode, figures, open_page

PAGES = Path(__file__).resolve().parents[1] / "pages"
SLIDES = [(name, n) for name, deck in sorted(load_decks()[0].items()) for n in range(1, len(deck) + 1)]
DATA_KEYS = ("x", "y", "z", "values", "labels", "text")


def page_file(page: str) -> str:
    (path,) = PAGES.glob(f"[0-9]*_{page}.py")
    return f"pages/{path.name}"


def signature(fig: dict) -> str:
    """A figure's title and, per trace, its name, type and data arrays (not the whole dict: no styling, no ids)."""
    title = (fig.get("layout", {}).get("title") or {}).get("text")
    traces = [
        [tr.get("name"), tr.get("type"), *[decode(tr[k]).tolist() if k in tr else None for k in DATA_KEYS]]
        for tr in fig["data"]
    ]
    return json.dumps([title, traces], default=str)  # NaN reads "NaN" on both sides


@pytest.mark.parametrize(("deck", "number"), SLIDES, ids=[f"{d}-{n}" for d, n in SLIDES])
def test_every_slide_opens_clean_and_draws_its_pages_figures(deck: str, number: int) -> None:
    slide = load_decks()[0][deck].slide(number)
    player = open_page("pages/15_Deck.py", {"deck": deck, "slide": str(number)})
    assert not player.exception, player.exception
    if slide.withhold:  # it asks the room first: the title alone, until the lecturer reveals the view
        assert figures(player) == [] and not player.metric
        player.button(key="deck-reveal").click().run()
        assert not player.exception, player.exception
    assert [w.value for w in player.warning] == [] and [e.value for e in player.error] == []
    shown = [signature(f) for f in figures(player)]
    assert shown, (deck, number)
    real = open_page(page_file(slide.page), {**slide.query, "present": "true"})
    assert not real.exception, real.exception
    on_page = {signature(f) for f in figures(real)}
    missing = [i for i, s in enumerate(shown) if s not in on_page]
    assert missing == [], f"{deck} slide {number} ({slide.page}): player figures {missing} are not on the page"
