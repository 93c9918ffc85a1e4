"""A student in a class: join with the code on the projector, follow the teacher's slide, answer its question once,
and after the reveal see the true value beside your own guess and the class's spread."""

from __future__ import annotations

import html
import time

import numpy as np
import streamlit as st

from classroom import classes as cl
from classroom.classes import guess_histogram
from classroom.store import StoreUnavailable
from decks.class_questions import student_state
from pages.frame import Page, class_student, class_ui
from pages.frame.follow import FALLBACK_POLL_S
from views import Readout
from views import class_mode as view_of
from viz.class_guesses import guesses_figure

page = Page.setup(
    "Class",
    ":material/groups:",
    "Follow a lecture on your own device and answer its questions before the answer is shown.",
    spec=view_of.SPEC,
    heading=False,
    figure_first=False,
)
# No sections: a phone's one column, in the order a student needs it (the slide, its figure, the answer, the numbers)


def _number(question: cl.Question, value: float) -> str:
    """A value as the page's guess field writes it."""
    return (question.fmt or "%g") % value


def student() -> None:
    """The page once the store is open: the join form, or the class's current slide for this student."""
    store = class_ui.service().store()
    class_id = (st.query_params.get("class_id") or "").strip()
    token = (st.query_params.get("student") or "").strip()
    joined = None
    if class_id and token:
        try:
            joined = cl.rejoin(store, class_id, token, time.time())
        except cl.ClassError as exc:
            st.warning(str(exc))
            class_ui.leave()
    if joined is None:
        st.title("Join a class", anchor=False)
        st.markdown("Follow a lecture on your own device and answer its questions before the answer is shown.")
        class_student.join_form(store, st.query_params.get("code") or "")
        return
    record = store.get(joined.class_id)
    deck = class_ui.shipped_decks().get(record.deck) if record is not None else None
    if record is None or deck is None:
        st.error("This class's slides are not on this server: tell your teacher.")
        return
    pushed = class_ui.follow(record.class_id, record.version)
    st.text(f"Class {cl.shown_code(record.code)} · you: {joined.name or 'anonymous'}")
    if st.toggle("Follow the teacher", value=True, key="class-follow"):
        number = record.slide
    else:
        number = int(st.number_input("Slide", 1, len(deck), value=record.slide, key="class-slide"))
        st.button(f"Back to the teacher's slide ({record.slide})", key="class-back",
                  on_click=lambda: st.session_state.update({"class-follow": True}))  # fmt: skip
    slide = deck.slide(number)
    question = class_ui.slide_question(deck.name, number)
    revealed = question is not None and question.qid in record.revealed
    own = class_student.own_guess(store, record.class_id, joined.token, question) if question is not None else None
    st.markdown(f"### {number}. {html.escape(slide.title)}")
    view, figures = class_student.phone_figures(deck.name, number, student_state(slide, revealed), page.theme)
    for kind, text in view.notices:
        if text.startswith("**Predict first.**"):  # the question, as text (the held-back figure's one long line ran
            # off a phone's screen); the guess goes in the form below, not in a sidebar
            text = text.replace(" Enter your guess in the sidebar to see the answer.", "")
        {"warning": st.warning, "info": st.info, "error": st.error}.get(kind, st.info)(text)
    for j, fig in enumerate(figures):
        page.chart(fig, f"class-fig-{j}", f"class-{deck.name}-{number}-{j}")
    readouts = list(slide.shown_readouts(view))
    if question is not None and not revealed:
        class_student.answer_box(store, record.class_id, joined.token, question)
    if revealed:
        tally = cl.tally(store, record.class_id, question)
        edges, counts = guess_histogram(tally.numbers, question.answer, log=question.log)
        axis = np.log10 if question.log else np.asarray  # the histogram's axis: log10 of a guess of many decades
        fig = guesses_figure(axis(edges), counts, float(axis(question.answer)),
                             own=None if own is None else float(axis(own)),
                             x_title="log10 of the guess" if question.log else "guess", theme=page.theme)  # fmt: skip
        page.chart(fig, "class-guesses", f"class-{deck.name}-{number}-guesses")
        answer = [Readout("The answer", _number(question, question.answer))]
        if own is not None:
            error = _number(question, own - question.answer).replace("-", "−")
            answer += [Readout("Your guess", _number(question, own)),
                       Readout("Error", error, "your guess minus the answer")]  # fmt: skip
        readouts = [*answer, *readouts]
    check = class_ui.slide_check(deck.name, number)
    if check is not None:
        check_question, check_answer = class_ui.check_text(deck.name, number)
        if check.qid in record.revealed:
            mine = cl.own_answer(store, record.class_id, joined.token, check)
            fig = class_ui.check_result(store, record.class_id, check, check_answer,
                                        own=None if mine is None else int(mine), theme=page.theme)  # fmt: skip
            page.chart(fig, "class-check", f"class-{deck.name}-{number}-check")
        else:
            class_student.choice_box(store, record.class_id, joined.token, check, check_question)
    class_student.readout_grid(readouts)
    if not pushed:  # this server cannot push a rerun: poll the class's version instead

        @st.fragment(run_every=FALLBACK_POLL_S)
        def watch(seen: int = record.version) -> None:
            now = store.get(record.class_id)
            if now is None or now.version != seen:
                st.rerun(scope="app")

        watch()


with st.container(key="class-page"):  # the page's own marker (a test's arrival: this page has no preset row)
    try:
        student()
    except StoreUnavailable:  # the store could not be opened, or went away during the class
        st.error(class_student.STORE_DOWN)
page.finish()
