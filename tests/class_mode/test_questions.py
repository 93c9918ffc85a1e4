"""What a deck's slide asks a class (decks/class_questions.py), against the lesson deck itself: the calibration
slide's guess and its true value computed here from the toy's formula, the state a student's copy is drawn with, and
slides that ask nothing."""

from __future__ import annotations

import math

import pytest

from decks import load_decks
from decks.class_questions import predict_fields, question_id, slide_question, student_state

DECKS, _ = load_decks()
LESSON = DECKS["lesson"]
CALIBRATION = 30  # "Predict: how often is a tuned model right when it says 0.9?" at κ = 2.5


def test_the_calibration_slide_asks_for_a_number_from_0_to_1_whose_truth_is_the_toys_accuracy() -> None:
    q = slide_question(LESSON, CALIBRATION)
    assert LESSON.slide(CALIBRATION).page == "Calibration"
    assert (q.qid, q.kind, q.lo, q.hi) == ("lesson/30", "number", 0.0, 1.0)
    logit = math.log(0.9 / 0.1)
    assert q.answer == pytest.approx(1 / (1 + math.exp(-logit / 2.5)), abs=1e-12)  # σ(logit(0.9) / κ), κ = 2.5


def test_every_predict_first_slide_of_the_shipped_decks_asks_the_class_and_no_other_slide_does() -> None:
    for deck in DECKS.values():
        for n in range(1, len(deck) + 1):
            fields = predict_fields(deck.slide(n))
            q = slide_question(deck, n)
            assert (q is None) == (fields is None), (deck.name, n)
            if q is not None:
                assert q.qid == question_id(deck, n) and q.lo <= q.answer <= q.hi, (deck.name, n, q)


def test_a_students_copy_holds_the_answer_back_then_shows_it_the_same_for_everyone() -> None:
    slide = LESSON.slide(CALIBRATION)
    switch, guess = predict_fields(slide)
    hidden = student_state(slide, revealed=False)
    assert hidden[switch.name] is True and hidden[guess.name] is None
    shown = student_state(slide, revealed=True)  # one state for the whole class: its copies are built once
    assert shown[switch.name] is False and shown[guess.name] is None
    assert slide.view(presenter=False, state=hidden).facts["predict"] == "hidden"
    assert slide.view(presenter=False, state=shown).facts["predict"] == "off"


def test_a_guess_field_of_many_decades_is_binned_on_a_log_scale() -> None:
    q = slide_question(LESSON, 1)  # Scaling_laws: a parameter count from 10^6 to 10^13
    assert LESSON.slide(1).page == "Scaling_laws" and q.log and (q.lo, q.hi) == (1e6, 1e13)
    assert not slide_question(LESSON, CALIBRATION).log
