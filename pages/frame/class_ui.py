"""Class mode on screen: this server process's store and follower, the teacher's panel in the deck player, the class
code's card on the projector, the count badge, and what a slide asks (shared with the student page's parts,
pages/frame/class_student.py).

The rules are classroom/classes.py's and the questions decks/class_questions.py's; this module draws them. A store
that cannot be reached turns class mode off with a message on the teacher's screen; the rest of the app works on.
A student's name is shown as text (never Markdown or HTML), on their own page only; answers are stored as numbers or
option indexes, so nothing a student typed reaches Markdown. The teacher key lives in a cookie of the teacher's
browser and in its session, never in a link the projector shows or a page a student gets.
"""

from __future__ import annotations

import html
import threading
import time
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from classroom import classes as cl
from classroom.store import ClassRecord, ClassStore, StoreUnavailable, open_store
from pages.frame.follow import Follower, available, streamlit_rerun

TEACHER_COOKIE = "lesson_teach_"  # + class id: the teacher key, in the teacher's browser only
KEYS = "_class_keys"  # session: class id -> teacher key
RETRY_S = 5.0  # a store that could not be opened is tried again after this long

_COOKIE_JS = """
export default function (component) {
  const { data } = component;
  if (data && /^[A-Za-z0-9_]+$/.test(data.name) && /^[A-Za-z0-9_-]*$/.test(data.value)) {
    document.cookie = `${data.name}=${data.value}; path=/; max-age=${Number(data.age) || 0}; SameSite=Strict`;
  }
}
"""


class _Service:
    """The store, opened on first use and again after a failure (every RETRY_S), and the follower thread."""

    def __init__(self) -> None:
        self._store: ClassStore | None = None
        self._error = ""
        self._tried = -RETRY_S
        self._lock = threading.Lock()
        self.follower: Follower | None = None

    def store(self) -> ClassStore:
        with self._lock:
            if self._store is not None:
                return self._store
            if time.monotonic() - self._tried < RETRY_S:
                raise StoreUnavailable(self._error)
            self._tried = time.monotonic()
            try:
                self._store = open_store()
            except StoreUnavailable as exc:
                self._error = str(exc)
                raise
            if available():
                self.follower = Follower(self._version, streamlit_rerun)
                self.follower.start()
            return self._store

    def _version(self, class_id: str) -> int | None:
        record = self._store.get(class_id) if self._store is not None else None
        return None if record is None else record.version


@st.cache_resource(show_spinner=False)
def service() -> _Service:
    """One per server process, shared by its sessions."""
    return _Service()


def session_id() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


def follow(class_id: str, version: int) -> bool:
    """This session has drawn ``class_id`` at ``version``: rerun it when the class moves. False when the server
    cannot push (the caller polls instead)."""
    f = service().follower
    if f is None:
        return False
    f.follow(session_id(), class_id, version)
    return True


def leave() -> None:
    f = service().follower
    if f is not None:
        f.leave(session_id())


def set_cookie(name: str, value: str, seconds: int) -> None:
    component = st.components.v2.component("lesson_class_cookie", js=_COOKIE_JS)
    # the key without "_": a component's id must not contain "__" (Streamlit's event delimiter), which a class id
    # starting with "-" or "_" or holding two of them side by side put there (1 class in 20 broke the deck player)
    key = f"cookie-{name.replace('_', '-')}"
    component(key=key, data={"name": name, "value": value, "age": int(seconds)}, height=0)


# ---------------------------------------------------------------------- the teacher


@dataclass(frozen=True)
class Teaching:
    """A class the teacher's browser runs: its record now and its key."""

    record: ClassRecord
    key: str

    @property
    def class_id(self) -> str:
        return self.record.class_id


def teacher_key(class_id: str) -> str | None:
    keys = st.session_state.get(KEYS, {})
    return keys.get(class_id) or st.context.cookies.get(TEACHER_COOKIE + class_id.replace("-", "_"))


def start(deck_name: str, slide: int, hours: float) -> Teaching:
    """Start a class (and purge expired ones): the key into this session and a cookie of this browser."""
    store = service().store()
    now = time.time()
    cl.purge(store, now)
    started = cl.start_class(store, deck_name, now, hours=hours, slide=slide)
    st.session_state.setdefault(KEYS, {})[started.class_id] = started.teacher_key
    return Teaching(cl.teacher_record(store, started.class_id, started.teacher_key), started.teacher_key)


def teaching(class_id: str) -> Teaching | None:
    """The class of the deck's ``teach`` link parameter, if this browser holds its key (else None)."""
    key = teacher_key(class_id)
    if not key:
        return None
    try:
        return Teaching(cl.teacher_record(service().store(), class_id, key), key)
    except cl.ClassError:
        return None


def join_url(code: str) -> str:
    """The student page's address on the host the teacher reached the app by, with the code filled in."""
    base = str(getattr(st.context, "url", "") or "").split("?")[0]
    root = base.rsplit("/", 1)[0] if "/" in base.split("//", 1)[-1] else base
    return f"{root}/Class?code={code}"


def join_card(t: Teaching) -> None:
    """The projector's join card: the code large, a QR code of the join link drawn here (segno, no network)."""
    import segno

    url = join_url(t.record.code)
    # an image from a data URI (st.html's sanitiser keeps an <img> with a data: source; an inline <svg> did not draw)
    qr = segno.make(url, error="m").svg_data_uri(scale=6, dark="#000000", light="#ffffff", border=2)
    st.html(
        '<div data-testid="class-join-card" style="position:fixed;top:70px;right:24px;z-index:1000002;'
        'background:#fff;color:#000;border:2px solid #E69F00;border-radius:12px;padding:12px 16px;text-align:center">'
        f'<div style="font:700 40px/1.2 system-ui;letter-spacing:2px">{html.escape(cl.shown_code(t.record.code))}</div>'
        f'<img src="{qr}" alt="QR code of {html.escape(url)}" style="display:block;margin:8px auto">'
        f'<div style="font:14px system-ui;max-width:320px;word-break:break-all">{html.escape(url)}</div></div>'
    )


def teacher_sidebar(
    t: Teaching | None, deck_name: str, number: int, draft: bool, lost: bool = False
) -> Teaching | None:
    """The deck player's class controls: start a class, or the running class's code, students, export and close.
    ``lost``: the link names a class whose key this browser does not hold."""
    st.subheader("Class")
    if t is not None and cl.status(t.record, time.time()) != "open":
        st.caption(f"Class {cl.shown_code(t.record.code)} has {cl.status(t.record, time.time())}.")
        st.download_button("Answers as CSV", lambda: cl.export_csv(service().store(), t.class_id, t.key),
                           file_name="class-answers.csv", mime="text/csv", key="class-csv")  # fmt: skip
        if st.button("Start a new class", key="class-new", width="stretch"):
            st.query_params.pop("teach", None)
            st.rerun()
        return None
    if t is None:
        if lost:
            st.caption("This browser does not hold the teacher key of the class in the link (started in another "
                       "browser, or ended): start a new class.")  # fmt: skip
        if draft:
            st.caption(
                "A class plays the decks that come with the app (decks/*.toml): students cannot load your draft."
            )
            return None
        hours = st.number_input("Open for (hours)", 0.25, cl.MAX_HOURS, cl.DEFAULT_HOURS, 0.25, key="class-hours")
        if st.button("Start a class", key="class-start", width="stretch", help="Students join with a class code"):
            try:
                t = start(deck_name, number, float(hours))
            except StoreUnavailable as exc:
                st.error(f"Class mode is off: {str(exc).rstrip('.')}. The deck works as before.")
                return None
            except cl.ClassError as exc:
                st.error(str(exc))
                return None
            st.query_params["teach"] = t.class_id
            st.rerun()  # the class's controls in place of the start button
        return None
    store = service().store()
    until = time.strftime("%H:%M", time.localtime(t.record.expires_at))
    # the key in this browser (a reload keeps the class); drawn on every run, so it lands whichever run is shown
    set_cookie(TEACHER_COOKIE + t.class_id.replace("-", "_"), t.key, max(1, int(t.record.expires_at - time.time())))

    @st.fragment(run_every=2.0)
    def joined() -> None:  # the count moves as students join (the teacher's session only)
        try:
            n = len(service().store().students(t.class_id))
            students = f"{n} student" + ("" if n == 1 else "s")
        except StoreUnavailable:
            students = "the class store cannot be reached"
        st.markdown(f"Class code **{cl.shown_code(t.record.code)}** · {students} · open until {until}")

    joined()
    st.toggle("Show the class code (j)", key="class-card")
    st.button(
        "class code",
        key="class-card-key",
        shortcut="j",
        on_click=lambda: st.session_state.update({"class-card": not st.session_state.get("class-card")}),
    )
    st.html("<style>.st-key-class-card-key { display: none; }</style>")  # the key's button: j, not a click
    with st.popover("Close the class", width="stretch"):
        st.caption("Students can no longer answer; the answers stay until the class expires.")
        st.button("Close it now", key="class-close", type="primary", on_click=cl.close, args=(store, t.class_id, t.key))
    # built when clicked (a callable), so that it holds every answer up to then, not the page's last full run
    st.download_button("Answers as CSV", lambda: cl.export_csv(store, t.class_id, t.key), file_name="class-answers.csv",
                       mime="text/csv", key="class-csv", help="one row per answer; a quick check's answer is its "
                       "option's index, 0 for A")  # fmt: skip
    return t


def sync_slide(t: Teaching, number: int) -> ClassRecord:
    """Move the class to the teacher's slide (once per move); the record after it."""
    store = service().store()
    if t.record.slide != number and cl.status(t.record, time.time()) == "open":
        cl.set_slide(store, t.class_id, t.key, number, time.time())
        return store.get(t.class_id) or t.record
    return t.record


_BADGE = (
    '<div data-testid="class-count" style="position:fixed;bottom:6px;left:50%;transform:translateX(-50%);'
    "z-index:1000000;font:600 16px system-ui;background:#E69F00;color:#000;padding:2px 12px;border-radius:8px;"
    'white-space:nowrap">{text}</div>'
)


def count_badge(t: Teaching, asked: list[tuple[str, cl.Question, str]]) -> None:
    """How many have answered each open question (``(name, question, its reveal key)``), on the projector's first
    screen (a badge at its bottom), kept current every second by a fragment of the teacher's one session, not of each
    student's."""

    @st.fragment(run_every=1.0)
    def badge() -> None:
        try:
            store = service().store()
            total = len(store.students(t.class_id))
            parts = [
                f"{name} {store.answer_count(t.class_id, q.qid)} of {total} ({key} reveals)" for name, q, key in asked
            ]
        except StoreUnavailable:
            parts = ["the class store cannot be reached"]
        st.html(_BADGE.format(text=html.escape(f"Class {cl.shown_code(t.record.code)}: " + " · ".join(parts))))

    badge()


@st.cache_resource(max_entries=4, show_spinner=False)
def _decks(stamp: tuple[tuple[str, float], ...]) -> dict[str, Any]:
    from decks import load_decks

    return load_decks()[0]


def shipped_decks() -> dict[str, Any]:
    """The decks under decks/ (a class never follows a teacher's draft), read again when a file changes."""
    from decks import DECKS_DIR

    return _decks(tuple((p.name, p.stat().st_mtime) for p in sorted(DECKS_DIR.glob("*.toml"))))


@st.cache_data(max_entries=256, show_spinner=False)
def slide_question(deck_name: str, number: int) -> cl.Question | None:
    """The question of a shipped deck's slide (its truth costs one view of the slide's page: computed once)."""
    from decks.class_questions import slide_question as question

    deck = shipped_decks().get(deck_name)
    return None if deck is None else question(deck, number)


@st.cache_data(max_entries=256, show_spinner=False)
def slide_check(deck_name: str, number: int) -> cl.Question | None:
    """The slide page's quick check as the class's multiple-choice question, or None."""
    from decks.class_questions import check_question

    deck = shipped_decks().get(deck_name)
    return None if deck is None else check_question(deck, number)


def check_text(deck_name: str, number: int) -> tuple[str, str]:
    """The quick check's question and worked answer (Markdown of the page's own)."""
    from decks.class_questions import check_of

    check = check_of(shipped_decks()[deck_name], number)
    return (check.question, check.answer) if check is not None else ("", "")


def check_result(store: ClassStore, class_id: str, question: cl.Question, answer: str, *, own: int | None,
                 theme: str, presenter: bool = False) -> Any:  # fmt: skip
    """The class's answers to a revealed quick check: the counts per option (the right one named), and its worked
    answer; the figure to draw."""
    from viz.class_guesses import choices_figure

    tally = cl.tally(store, class_id, question)
    right = int(question.answer)
    st.markdown(f"**Quick check, revealed:** {chr(65 + right)}. {question.options[right]}")
    if answer:
        st.markdown(answer)
    return choices_figure(question.options, tally.per_option, int(question.answer), own=own, theme=theme,
                          presenter=presenter)  # fmt: skip
