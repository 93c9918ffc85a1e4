"""The questions a deck asks a class: for a slide, the number its class guesses (a predict-first slide's guess field,
with the true value its view reports), the page's quick check as a multiple-choice question, and the state a
student's copy of the slide is drawn with (held back until the teacher reveals it, then the answer shown).

Nothing here imports Streamlit: the student page (pages/26_Class.py) and the deck player draw what these decide.
"""

from __future__ import annotations

import math

from classroom.classes import Question
from decks import Deck, Slide
from views import QuickCheck, catalog
from views.state import Field, State


def question_id(deck: Deck, number: int) -> str:
    """A slide's question in a class: the deck and the slide's number."""
    return f"{deck.name}/{number}"


def predict_fields(slide: Slide) -> tuple[Field, Field] | None:
    """The slide's Predict first switch and guess field when the slide opens with the switch on, else None."""
    fields = slide.spec.fields
    switch = next((f for f in fields if f.name.startswith("predict_") and slide.state[f.name] is True), None)
    guess = next((f for f in fields if f.name.startswith("guess_") and f.optional), None)
    if switch is None or guess is None:
        return None
    return switch, guess


def truth_of(slide: Slide) -> float | None:
    """The true value of the slide's predict-first question, read from the slide's view in revealed mode (the view
    records it in ``facts["truth"]``); None when the slide asks nothing or the view does not say."""
    fields = predict_fields(slide)
    if fields is None:
        return None
    _, guess = fields
    state = slide.state.replace(**{guess.name: guess.lo})
    view = catalog.view_modules()[slide.page].figures(state, slide.options(presenter=False))
    value = view.facts.get("truth")
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def slide_question(deck: Deck, number: int) -> Question | None:
    """The question a class answers on slide ``number``: a number in the guess field's range, or None."""
    slide = deck.slide(number)
    fields = predict_fields(slide)
    truth = truth_of(slide) if fields is not None else None
    if fields is None or truth is None:
        return None
    _, guess = fields
    lo, hi = float(guess.lo), float(guess.hi)  # type: ignore[arg-type]
    step = guess.step if guess.step is not None else (1.0 if guess.kind == "int" else None)
    return Question(question_id(deck, number), "number", answer=min(max(truth, lo), hi), lo=lo, hi=hi, step=step,
                    fmt=guess.fmt, log=lo > 0 and hi / lo >= 1e3)  # fmt: skip


def student_state(slide: Slide, revealed: bool) -> State:
    """The state a student's copy of the slide is drawn with: the answer held back (the slide's own Predict first)
    until the teacher reveals it; then the answer shown (the switch turned off). The same state for every student,
    so the class's copies are built once: each student's own guess is drawn on the class's histogram and in the
    readouts beside the answer, not into the page's figure."""
    fields = predict_fields(slide)
    if fields is None:
        return slide.state
    switch, guess = fields
    if not revealed:
        return slide.state.replace(**{guess.name: None})
    return slide.state.replace(**{switch.name: False, guess.name: None})


def check_question(deck: Deck, number: int) -> Question | None:
    """The slide page's quick check as a class's multiple-choice question (``<deck>/<number>/check``), or None when
    the page has none."""
    check = getattr(catalog.view_modules()[deck.slide(number).page], "QUICK_CHECK", None)
    if check is None:
        return None
    return Question(f"{question_id(deck, number)}/check", "choice", answer=check.right, options=tuple(check.options))


def check_of(deck: Deck, number: int) -> QuickCheck | None:
    """The slide page's quick check itself (question and worked answer), or None."""
    return getattr(catalog.view_modules()[deck.slide(number).page], "QUICK_CHECK", None)
