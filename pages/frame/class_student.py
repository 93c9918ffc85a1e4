"""Class mode's student page parts: the join form, the slide's figures as phone copies built once for the class, the
answer boxes (a guess, a quick check: each a fragment, so that committing reruns the box alone), the revealed
results, the readouts in a phone's column. The page script (pages/26_Class.py) lays them out; the shared store and
what a slide asks are pages/frame/class_ui.py's.
"""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from classroom import classes as cl
from classroom.store import ClassStore, StoreUnavailable
from pages.frame.cache import cached_figures
from pages.frame.class_ui import session_id, shipped_decks

STORE_DOWN = "Class mode is not available on this server right now. Tell your teacher, or try again in a minute."


def _commit(store: ClassStore, class_id: str, token: str, question: cl.Question, value: Any) -> bool:
    """A student's answer into the store; a message and False when it is refused or the store is away."""
    try:
        cl.submit(store, class_id, token, question, value, time.time())
    except cl.ClassError as exc:
        st.warning(str(exc))
        return False
    except StoreUnavailable:
        st.error(STORE_DOWN)
        return False
    return True


def own_guess(store: ClassStore, class_id: str, token: str, question: cl.Question) -> float | None:
    value = cl.own_answer(store, class_id, token, question)
    return float(value) if value is not None else None


def join_form(store: ClassStore, prefill: str) -> None:
    """The code on the projector and an optional name; on success the student's own link (class and token)."""
    with st.form("class-join", border=True):
        code = st.text_input("Class code", value=prefill[:12], max_chars=12, placeholder="K7M2-PQ9X")
        name = st.text_input(
            "Your name (optional: only your teacher sees it, in the answers file)", max_chars=cl.NAME_MAX
        )
        go = st.form_submit_button("Join the class", width="stretch")
    if go:
        try:
            joined = cl.join(store, code, name, session_id(), time.time())
        except cl.ClassError as exc:
            st.error(str(exc))
            return
        st.query_params.pop("code", None)
        st.query_params["class_id"] = joined.class_id
        st.query_params["student"] = joined.token
        st.rerun()


def readout_grid(items: Any) -> None:
    """A slide's readouts under its figure, two to a row (a phone's width)."""
    items = list(items)
    for i in range(0, len(items), 2):
        for col, item in zip(st.columns(2), items[i : i + 2], strict=False):
            col.metric(item.label, item.value, help=item.help)


@cached_figures
def phone_figures(deck_name: str, number: int, state: Any, theme: str) -> tuple[Any, tuple[Any, ...]]:
    """A slide's view for the student page and its figures as phone copies, built once per state and theme for every
    student of the class (the same slide, held back, is the same state for all of them)."""
    from viz.style import phone_copy

    slide = shipped_decks()[deck_name].slide(number)
    view = slide.view(theme, presenter=False, state=state)
    figures = () if view.facts.get("predict") == "hidden" else tuple(phone_copy(f) for f in slide.shown_figures(view))
    return view, figures


def answer_box(store: ClassStore, class_id: str, token: str, question: cl.Question) -> None:
    """The guess, once: a fragment, so that committing it reruns this box alone, not the slide's figures."""

    @st.fragment
    def box() -> None:
        try:
            own = own_guess(store, class_id, token, question)
        except StoreUnavailable:
            st.error(STORE_DOWN)
            return
        fmt = question.fmt or "%g"
        if own is not None:
            st.info(f"Your guess: {fmt % own}. The answer appears when the teacher reveals it.")
            return
        whole = question.step == 1 and float(question.lo).is_integer() and float(question.hi).is_integer()
        lo, hi = (int(question.lo), int(question.hi)) if whole else (question.lo, question.hi)
        with st.form("class-answer", border=True):
            guess = st.number_input(f"Your guess ({fmt % question.lo} to {fmt % question.hi})", lo, hi, value=None,
                                    step=1 if whole else question.step, format="%d" if whole else fmt,
                                    key="class-guess")  # fmt: skip
            sent = st.form_submit_button("Commit my guess", width="stretch")
        if sent and _commit(store, class_id, token, question, guess):
            st.rerun(scope="fragment")

    box()


def choice_box(store: ClassStore, class_id: str, token: str, question: cl.Question, text: str) -> None:
    """The quick check, answered once: a fragment, so that committing reruns this box alone."""

    @st.fragment
    def box() -> None:
        st.markdown(f"**Quick check.** {text}")
        try:
            mine = cl.own_answer(store, class_id, token, question)
        except StoreUnavailable:
            st.error(STORE_DOWN)
            return
        letters = [f"{chr(65 + i)}. {o}" for i, o in enumerate(question.options)]
        if mine is not None:
            st.info(f"Your answer: {letters[int(mine)]}. The teacher reveals the right one.")
            return
        with st.form("class-check", border=True):
            pick = st.radio("Your answer", letters, index=None, key="class-check-pick")
            sent = st.form_submit_button("Commit my answer", width="stretch")
        if sent:
            if pick is None:
                st.warning("Pick one of the options first.")
                return
            if _commit(store, class_id, token, question, str(letters.index(pick))):
                st.rerun(scope="fragment")

    box()
