"""``hide=true`` on every lesson page: the Quick check's and the interview's answers are not sent to the browser at
all (no "Reveal" expander, none of their text anywhere on the page), while the questions stay; the takeaway, the
explanation and the common mistakes, which state the answers, are not sent either: the page's question stands where
the takeaway was, and none of the answer's key phrases (each view's ``ANSWER_PHRASES``) is sent outside the figures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from apptest import _elements, no_exception, opened
from google.protobuf.json_format import MessageToDict

from pages.frame import HIDDEN_CAPTION, PAGES
from views import catalog

PLAYERS = ("Drills.py", "Deck.py", "Class.py")  # they hold back answers on their own (the class until its reveal)
LESSON_PAGES = [s for s, _, _ in PAGES if s.startswith("pages/") and not s.endswith(PLAYERS)]
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
    assert sum(c.value == HIDDEN_CAPTION for c in hidden.caption) == 2  # the quick check and the interview
    # and with a reason after it: the explanation and the common mistakes (a tab's note where it quotes the answer)
    assert sum(c.value.startswith(f"{HIDDEN_CAPTION}: ") for c in hidden.caption) >= 2, page
    questions = [s for s in ("Quick check", "Say it in an interview") if s in [h.value for h in hidden.subheader]]
    assert len(questions) == 2, page


# ---------------------------------------------------------------- the takeaway, the explanation, the answer's phrases
# Elements whose text is not "outside the figure": the figures themselves (plotly's own element, and the frame's live
# chart, a custom component that also carries the figure's text alternative) and the frame's CSS.
FIGURE_PROTOS = {"BidiComponent", "PlotlyChart", "Html"}


def _strings(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


# The quick check's options (a radio keyed "quick-check-<page title>") are its question: they are sent with answers
# hidden too, the right one among them unmarked (only the reveal names it, and hide=true does not send the reveal), so
# an answer phrase that is also one of the options ("38.5 GB") is not a leak. The radio's other strings are read.
QUICK_CHECK_KEY = "quick-check-"


def sent_outside_the_figure(at) -> str:
    """Every string of every element the page sent, the figures aside: texts, readouts (label, value, help), widget
    labels, helps and options (not the quick check's options: QUICK_CHECK_KEY), links, captions, code."""
    out = []
    for node in _elements(at._tree):
        proto = getattr(node, "proto", None)
        if proto is not None and proto.DESCRIPTOR.name not in FIGURE_PROTOS:
            sent = MessageToDict(proto)
            if str(getattr(node, "key", None) or "").startswith(QUICK_CHECK_KEY):
                sent.pop("options", None)
            out += _strings(sent)
    return "\n".join(out)


def _view(page: str):
    return catalog.view_module(next(e.url for e in catalog.PAGES if e.script == page))


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_hide_true_replaces_the_takeaway_by_the_question_and_sends_no_answer_phrase(page):
    """Each view lists its answer's key phrases and numbers (``ANSWER_PHRASES``): all of them are on the page when
    answers are shown (so the list is the page's own answer, not words it never says), none of them is anywhere in
    what a hide=true page sends outside its figures; the question stands where the takeaway was."""
    view = _view(page)
    assert view.QUESTION and len(view.ANSWER_PHRASES) >= 3
    shown = sent_outside_the_figure(opened(page)).lower()
    hidden_at = opened(page, {"hide": "true"})
    hidden = sent_outside_the_figure(hidden_at).lower()
    missing = [p for p in view.ANSWER_PHRASES if p.lower() not in shown]
    assert missing == [], f"{page}: not on the page even with answers shown: {missing}"
    leaked = [p for p in view.ANSWER_PHRASES if p.lower() in hidden]
    assert leaked == [], f"{page}: sent with hide=true: {leaked}"
    markdown = [str(m.value) for m in hidden_at.markdown]
    assert f"**Question: {view.QUESTION}**" in markdown, page
    assert any(HIDDEN_CAPTION in c.value and "explanation" in c.value for c in hidden_at.caption), page
