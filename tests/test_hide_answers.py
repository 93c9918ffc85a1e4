"""``hide=true`` on every lesson page: the Quick check's and the interview's answers are not sent to the browser at
all (no "Reveal" expander, none of their text anywhere on the page), while the questions stay."""

from __future__ import annotations

import pytest
from apptest import no_exception, opened

from pages.frame import HIDDEN_CAPTION, PAGES
from views import catalog

LESSON_PAGES = [s for s, _, _ in PAGES if s.startswith("pages/") and not s.endswith(("Drills.py", "Deck.py"))]
REVEALS = ("Reveal the answer", "Reveal a 60-90 second answer")


def _all_text(at) -> str:
    parts = [e.value for kind in ("markdown", "caption", "latex", "text", "info", "warning") for e in at.get(kind)]
    return "\n".join(str(p) for p in parts)


def _answers(at) -> list[str]:
    """The texts inside the page's "Reveal" expanders (the hidden answers): of each, its first 40 characters after
    a bold lead-in such as "**One number.**", long enough to be unique on the page."""
    out = []
    for exp in at.expander:
        if exp.label in REVEALS:
            for e in exp.get("markdown"):  # the equation is the page's own headline equation, not a secret
                body = str(e.value).rsplit("** ", 1)[-1].strip()
                if len(body) > 30:
                    out.append(body[:40])
    return out


def test_every_lesson_page_is_covered():
    """Every page of the catalogue that draws a view (the players, drills and decks, hide answers on their own)."""
    assert len(LESSON_PAGES) == sum(e.view is not None for e in catalog.PAGES) >= 13


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_hide_true_sends_no_answer_and_keeps_the_questions(page):
    shown = opened(page)
    answers = _answers(shown)
    assert {e.label for e in shown.expander} >= set(REVEALS) and len(answers) >= 3, page  # both answers, normally
    hidden = opened(page, {"hide": "true"})
    assert no_exception(hidden)
    assert not [e.label for e in hidden.expander if e.label in REVEALS]
    text = _all_text(hidden)
    leaked = [a for a in answers if a in text]
    assert leaked == [], leaked
    assert sum(HIDDEN_CAPTION in c.value for c in hidden.caption) == 2  # one for the quick check, one for the interview
    questions = [s for s in ("Quick check", "Say it in an interview") if s in [h.value for h in hidden.subheader]]
    assert len(questions) == 2, page
