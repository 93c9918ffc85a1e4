"""A shared mock interview on screen: who this browser is in the link's interview (the interviewer, whose key it
holds, or the candidate, whose seat its link carries), starting one, the candidate's link, driving a lesson page's
view onto the candidate's screen, and the lesson page that the candidate's screen draws for it.

The rules are classroom/interviews.py's; the store, the follow signal and the key's cookie are class mode's
(pages/frame/class_ui.py): the interviewer key is an interview's teacher key. The drills page draws the two screens
(pages/14_Drills.py).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import streamlit as st

from classroom import classes as cl
from classroom import interviews as iv
from classroom.store import ClassStore, StoreUnavailable
from pages.frame.class_ui import KEYS, TEACHER_COOKIE, service, set_cookie, teacher_key
from pages.frame.class_ui import follow as follow_class
from views import Options, Readout, View, catalog
from views.state import State

LINK_KEY = "interview"  # the link parameter naming the interview (both sides)
SEAT_KEY = "seat"  # the candidate's seat in their link
DRIVE = "_interview_drive"  # session: the interview whose candidate follows the lesson pages this browser opens
STORE_DOWN = "The interview store cannot be reached: the shared interview is paused; the drills work on their own."
CANDIDATE_DOWN = "The interview cannot be reached right now: reload this page in a moment."


@dataclass(frozen=True)
class Seat:
    """This browser's place in the link's interview: ``role`` "interviewer" or "candidate", the session now, and the
    interviewer's key (``""`` for the candidate)."""

    role: str
    session: iv.Session
    key: str = ""


def store() -> ClassStore:
    return service().store()


def link_values() -> tuple[str, str]:
    """The interview and seat of the page's link (empty when absent)."""
    return (st.query_params.get(LINK_KEY) or "").strip(), (st.query_params.get(SEAT_KEY) or "").strip()


def seat_of_link() -> Seat | None:
    """This browser's seat in the link's interview; None when the link names none. Raises ClassError (a link that
    does not work here) or StoreUnavailable."""
    class_id, seat = link_values()
    if not class_id:
        return None
    if seat:
        return Seat("candidate", iv.as_candidate(store(), class_id, seat))
    key = teacher_key(class_id)
    if not key:
        raise cl.ClassError(
            "This browser does not hold the key of the interview in the link (started in another browser, or its "
            "cookie was cleared). Start a new shared interview, or open the candidate's link if you are the candidate."
        )
    return Seat("interviewer", iv.as_interviewer(store(), class_id, key), key=key)


def start(seconds: int) -> iv.Started:
    """Start an interview (purging expired classes first); its key into this session and, by the caller, a cookie."""
    s = store()
    now = time.time()
    cl.purge(s, now)
    started = iv.start(s, now, seconds=seconds)
    st.session_state.setdefault(KEYS, {})[started.class_id] = started.key
    return started


def keep_key(seat: Seat) -> None:
    """The interviewer's key in a cookie of this browser, for as long as the interview lasts (a reload keeps it)."""
    left = max(1, int(seat.session.record.expires_at - time.time()))
    set_cookie(TEACHER_COOKIE + seat.session.class_id.replace("-", "_"), seat.key, left)


def candidate_url(seat: Seat) -> str:
    """The one link the interviewer sends: the drills page, this interview, the candidate's seat, answers hidden.
    Raises StoreUnavailable."""
    base = str(getattr(st.context, "url", "") or "").split("?")[0]
    token = next((s.token for s in store().students(seat.session.class_id)), "")
    return f"{base}?{LINK_KEY}={seat.session.class_id}&{SEAT_KEY}={token}&hide=true"


def follow(seat: Seat) -> bool:
    """Rerun this screen when the other side changes the session (the version read now, after this run's writes).
    False when it cannot be pushed (the caller polls)."""
    try:
        record = store().get(seat.session.class_id)
    except StoreUnavailable:
        return False
    return follow_class(seat.session.class_id, record.version if record is not None else -1)


# ------------------------------------------------------------------------------ driving a lesson page's view


def drive(seat: Seat, on: bool) -> None:
    """The lesson pages this browser opens from now on show on the candidate's screen (``on``), or no longer (both
    screens back to the card)."""
    if on:
        st.session_state[DRIVE] = seat.session.class_id
    else:
        _stop_driving()


def driving() -> str | None:
    return st.session_state.get(DRIVE)


def _stop_driving() -> None:
    class_id = st.session_state.pop(DRIVE, None)
    key = teacher_key(class_id) if class_id else None
    if class_id and key:
        try:
            s = iv.as_interviewer(store(), class_id, key)
            if s.card:
                iv.ask(store(), class_id, key, s.card, time.time())  # both screens back to the card
        except (cl.ClassError, StoreUnavailable):
            pass


def publish(page: str, query: Mapping[str, str]) -> None:
    """A lesson page's view, on the candidate's screen while this browser drives an interview (a note in the sidebar
    says so, with a button to stop); nothing otherwise."""
    class_id = driving()
    if not class_id:
        return
    key = teacher_key(class_id)
    try:
        if not key:
            raise cl.ClassError("This browser no longer holds the interview's key.")
        iv.drive(store(), class_id, key, page, query, time.time())
    except (cl.ClassError, StoreUnavailable) as exc:
        st.session_state.pop(DRIVE, None)
        with st.sidebar:
            st.warning(f"The candidate's screen no longer follows this page: {exc}")
        return
    with st.sidebar:
        st.info("Mock interview: the candidate's screen shows this page's figures and readouts for the values you "
                "set, its answers hidden.", icon=":material/cast:")  # fmt: skip
        st.button(
            "Stop showing my pages",
            key="interview-stop-drive",
            on_click=_stop_driving,
            width="stretch",
            help="The candidate's screen goes back to the card; “Back to the interview” takes you there",
        )
        try:
            st.page_link("pages/14_Drills.py", label="Back to the interview", icon=":material/arrow_back:",
                         query_params={LINK_KEY: class_id, "role": "interviewer"})  # fmt: skip
        except Exception:  # a page script run on its own (AppTest) has no other pages
            pass


@dataclass(frozen=True)
class LessonView:
    """A lesson page's view as the candidate's screen draws it: the page's label and question, its figures (the
    main one and the open tab's) and its readouts, with answers hidden as with hide=true."""

    label: str
    question: str
    figures: tuple[tuple[str, object], ...]
    readouts: tuple[Readout, ...]
    notices: tuple[str, ...]


def lesson_view(
    page: str, query: Mapping[str, str], theme: str, figures_of: Callable[[str, State, Options], View]
) -> LessonView | None:
    """The view ``page`` draws for ``query`` (``figures_of(page, state, options)``: the drills page's cached
    views); None for a page that is not a lesson page."""
    entry = catalog.by_url(page)
    module = catalog.view_module(page) if entry is not None else None
    if entry is None or module is None or page in ("Deck", "Drills", "Class"):
        return None
    state, problems = module.SPEC.parse(dict(query))
    options = Options(theme=theme, parts=catalog.parts_for(page, state))
    view: View = figures_of(page, state, options)
    phrases = tuple(p.lower() for p in getattr(module, "ANSWER_PHRASES", ()))
    seen: set[int] = set()
    shown = []
    for name, fig in view.figures.items():
        if name in options.parts and id(fig) not in seen:
            seen.add(id(fig))
            shown.append((name, fig))

    def hidden(text: str | None) -> bool:
        return any(p in (text or "").lower() for p in phrases)

    readouts = tuple(dataclasses.replace(r, help=None) if hidden(r.help) else r for r in view.readouts)
    notices = tuple(text for _, text in view.notices if not hidden(text))
    question = getattr(module, "QUESTION", "")
    return LessonView(entry.label, question, tuple(shown), readouts, (*problems, *notices))


def drive_off() -> None:
    st.session_state.pop(DRIVE, None)
