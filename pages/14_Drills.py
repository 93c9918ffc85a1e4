"""Interview drills: one card at a time, a countdown to answer aloud, the model answer part by part, a self-grade
that schedules the card again (FSRS), and an interviewer's view with follow-ups, traps and a rubric; a shared session
(``interview=``) puts the interviewer's card, countdown and lesson views on the candidate's screen and keeps the
rubric and notes per card (classroom/interviews.py)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import streamlit as st

from classroom import classes as cl
from classroom import interviews as iv
from classroom.store import StoreUnavailable
from decks import views as page_views
from pages.frame import (
    HIDDEN_CAPTION,
    PAGES,
    Page,
    cached_view,
    carried_params,
    interview_ui,
    loopback_warning,
    page_link,
)
from pages.frame.follow import FALLBACK_POLL_S
from study.cards import Card
from study.progress import ProgressStore, validate_profile
from views import Options, View, catalog
from views import drills as view_of
from views.state import Field, State

MAX_IMPORT_BYTES = 5 * 2**20
FLASH = "_drill_flash"  # a message from a button's callback, shown on the rerun it causes
VISIT = "_drill_visit"  # (card id, visit number): a new countdown each time a card comes up
COUNTDOWN_PX = 40  # the countdown's height, reserved before its script has run (no jump when it mounts)
RUBRIC = "_drill_rubric"  # card id -> the rubric parts ticked for it: kept when the card leaves the screen
FIND = "drill-find"  # the card finder's widget key
PULSE_S = 1.0  # how often the interviewer's screen of a shared session looks for the candidate's steps

# A countdown drawn by the browser: it starts when a card comes up (a new token) and keeps its start across
# reruns of the same card, so revealing a part does not restart it. Offline: no request, no library.
_COUNTDOWN_JS = """
export default function (component) {
  const { data, parentElement } = component;
  const total = Math.max(1, Number(data.seconds) || 75);
  const starts = (window.__lessonCountdown = window.__lessonCountdown || {});
  // a shared session's countdown started on the server data.elapsed seconds ago: both screens count from it
  if (starts[data.token] === undefined) starts[data.token] = Date.now() - 1000 * (Number(data.elapsed) || 0);
  let box = parentElement.querySelector(".countdown");
  if (!box) {
    box = document.createElement("div");
    box.className = "countdown";
    box.innerHTML = '<span class="time" role="timer" aria-live="off"></span>' +
      '<span class="bar"><span class="fill"></span></span>' +
      '<button type="button" class="again">Start again</button>';
    parentElement.appendChild(box);
  }
  const time = box.querySelector(".time"), fill = box.querySelector(".fill");
  const tick = () => {
    const left = Math.max(0, total - Math.floor((Date.now() - starts[data.token]) / 1000));
    const m = Math.floor(left / 60), s = String(left % 60).padStart(2, "0");
    time.textContent = left > 0 ? `${m}:${s} to answer aloud` : "Time's up: wrap up in one sentence";
    fill.style.width = `${(100 * left) / total}%`;
    box.classList.toggle("done", left === 0);
  };
  const again = box.querySelector(".again");
  again.hidden = Boolean(data.shared);  // a shared countdown restarts for both screens, from the interviewer's side
  again.onclick = () => { starts[data.token] = Date.now(); tick(); };
  tick();
  clearInterval(box.__timer);  // one ticking timer per element, whether or not the last cleanup ran
  const timer = (box.__timer = setInterval(tick, 250));
  return () => clearInterval(timer);
}
"""
_COUNTDOWN_CSS = """
.countdown { display: flex; align-items: center; gap: 0.8rem; font-family: var(--st-font, sans-serif); }
.time { font-size: 1.4rem; font-variant-numeric: tabular-nums; min-width: 14ch; color: var(--st-text-color); }
.bar { flex: 1; height: 0.5rem; border-radius: 0.25rem; background: var(--st-secondary-background-color); }
.fill { display: block; height: 100%; border-radius: 0.25rem; background: #0072B2; transition: width 0.25s linear; }
.done .time { color: #D55E00; }
.done .fill { background: #D55E00; }
.again { font: inherit; padding: 0.2rem 0.7rem; border-radius: 0.4rem; cursor: pointer;
  border: 1px solid var(--st-border-color, #ccc); background: transparent; color: var(--st-text-color); }
"""

page = Page.setup(
    "Interview drills",
    ":material/mic:",
    "Answer aloud before you look: one sentence, one equation, one number, one trade-off, in 60 to 90 seconds. "
    "Then grade yourself, and the schedule brings the card back when you are about to forget it.",
    spec=view_of.SPEC,
    figure_first=False,
    # a candidate's screen of a shared interview has a heading of its own (the takeaway is about grading oneself)
    heading=not st.query_params.get("seat"),
)
page.sections()
SCRIPT_OF = {Path(path).stem.split("_", 1)[1]: path for path, _, _ in PAGES if path.startswith("pages/")}


def _md(text: str) -> str:
    """Card text as markdown: a dollar sign is money, not LaTeX."""
    return text.replace("$", r"\$")


def _flash(kind: str, text: str) -> None:
    st.session_state[FLASH] = (kind, text)


def _go(card_id: str) -> None:
    st.session_state["card"] = card_id
    st.session_state["reveal"] = 0


def _found() -> None:
    """The finder's choice becomes the card shown; the finder empties for the next search."""
    card_id = st.session_state.get(FIND)
    if card_id:
        _go(card_id)
    st.session_state[FIND] = None


def _tick(card_id: str, part: str, key: str) -> None:
    """Keep a rubric tick under its card, outside the checkbox (Streamlit forgets a widget's state once it is not
    drawn: the ticks were lost after Next and Back)."""
    ticks = st.session_state.setdefault(RUBRIC, {})
    chosen = set(ticks.get(card_id, ()))
    if st.session_state.get(key):
        chosen.add(part)
    else:
        chosen.discard(part)
    ticks[card_id] = tuple(sorted(chosen))


def _reveal(to: int) -> None:
    st.session_state["reveal"] = to


def _grade(learner: str, card_id: str, rating: str, deck: tuple[str, ...]) -> None:
    try:
        store = ProgressStore()
        state = store.grade(validate_profile(learner), card_id, rating)
        due = store.due(learner, card_ids=deck)
    except (ValueError, OSError) as err:
        _flash("error", f"Not graded: {err}")
        return
    when = state.due.astimezone().strftime("%d %b %Y, %H:%M")
    _flash("success", f"Graded `{card_id}` **{rating}**: it comes back on {when}.")
    _go(view_of.next_card(deck, card_id, due))


def _import(learner: str, name: str, data: bytes) -> None:
    try:
        if len(data) > MAX_IMPORT_BYTES:
            raise ValueError(f"the file is {len(data) / 2**20:.1f} MiB; a progress export is far smaller")
        count = ProgressStore().import_json(validate_profile(learner), data)
    except (ValueError, OSError) as err:
        _flash("error", f"Could not import {name}: {err}. {learner}'s progress is unchanged.")
        return
    _flash("success", f"Imported {count} card{'' if count == 1 else 's'} from {name} into {learner}'s progress.")


# A shared session's link: this browser is its interviewer (it holds the key) or its candidate (the link's seat)
seat: interview_ui.Seat | None = None
seat_problem = ""
try:
    seat = interview_ui.seat_of_link()
except cl.ClassError as err:
    seat_problem = str(err)
except StoreUnavailable:
    seat_problem = interview_ui.CANDIDATE_DOWN if interview_ui.link_values()[1] else interview_ui.STORE_DOWN
if seat_problem and interview_ui.link_values()[1]:  # the candidate's link does not work: say so, nothing else
    page.notice(seat_problem)
    page.finish()
    st.stop()
elif seat_problem:
    page.notice(seat_problem)
leading = seat if seat is not None and seat.role == "interviewer" else None
SEEDED = "_interview_seeded"  # the interview whose card and countdown this session took over (once)
if leading is not None and st.session_state.get(SEEDED) != leading.session.class_id:
    # a reload or a new tab of the interviewer: the session's card and countdown, not the deck's first
    st.session_state[SEEDED] = leading.session.class_id
    if leading.session.card and "card" not in st.query_params:
        st.session_state["card"] = leading.session.card
    if "seconds" not in st.query_params:
        st.session_state["seconds"] = min(90, max(60, leading.session.seconds))


def _session_step(step, *args, **kwargs) -> None:
    """A step of the shared session from a button: its refusal as a message, never a traceback."""
    try:
        step(interview_ui.store(), *args, **kwargs)
    except cl.ClassError as err:
        _flash("error", str(err))
    except StoreUnavailable:
        _flash("error", interview_ui.STORE_DOWN)


def _start_session(seconds: int) -> None:
    try:
        started = interview_ui.start(seconds)
    except (cl.ClassError, StoreUnavailable) as err:
        _flash("error", f"No shared interview: {str(err).rstrip('.')}.")
        return
    st.session_state[SEEDED] = started.class_id  # this screen's card and countdown are the session's first
    st.query_params[interview_ui.LINK_KEY] = started.class_id


def _candidate_step(step, *args) -> None:
    """A step the candidate's screen takes (Show me, the profile), checked against the link's seat again."""
    class_id, token = interview_ui.link_values()
    try:
        session = iv.as_candidate(interview_ui.store(), class_id, token)
        step(interview_ui.store(), session, *args)
    except cl.ClassError as err:
        _flash("error", str(err))
    except StoreUnavailable:
        _flash("error", interview_ui.STORE_DOWN)


def _end_session(class_id: str, key: str) -> None:
    """End the interview; the grades kept go into the candidate's drills progress, once."""
    try:
        store = interview_ui.store()
        session = iv.end(store, class_id, key, time.time(), share=bool(st.session_state.get("interview-share")))
    except cl.ClassError as err:
        _flash("error", f"Not ended: {err}")
        return
    except StoreUnavailable:
        _flash("error", f"Not ended: {interview_ui.STORE_DOWN}")
        return
    pending = iv.to_grade(session)
    n = f"{len(pending)} grade{'' if len(pending) == 1 else 's'}"
    if not pending:
        _flash("success", "The interview has ended.")
    elif not session.profile:
        stay = "the grade stays" if len(pending) == 1 else f"the {len(pending)} grades stay"
        _flash("success", f"The interview has ended. The candidate typed no drills name: {stay} in the summary only.")
    else:
        try:
            progress = ProgressStore()
            for card_id, rating in pending:
                progress.grade(session.profile, card_id, rating)
            iv.mark_graded(store, session, [c for c, _ in pending])
        except (ValueError, OSError, StoreUnavailable) as err:
            _flash("error", f"The interview has ended, but the grades could not be saved to {session.profile}'s "
                            f"progress: {err}. They are in the summary.")  # fmt: skip
            return
        _flash("success", f"The interview has ended; {n} went into {session.profile}'s drills progress.")


def _new_session() -> None:
    interview_ui.drive_off()
    st.query_params.pop(interview_ui.LINK_KEY, None)


with page.controls():
    if seat is None or seat.role != "candidate":
        page.control("role", **({"disabled": True, "help": "Fixed to interviewer while a shared interview runs."}
                                if leading is not None else {}))  # fmt: skip
    if seat is not None and seat.role == "candidate":
        pass  # the candidate's screen follows the interviewer: no controls of its own but the profile below
    else:
        page.control("learner", placeholder="e.g. ada")
        page.control("topics")
        page.control("due")
        page.control("card", placeholder="first card of the deck")
        st.selectbox(
            "Find a card by its question",
            [c.id for c in view_of.CARDS],
            index=None,
            format_func=lambda card_id: f"{view_of.BY_ID[card_id].question} ({card_id})",
            placeholder="Type a few words of the question",
            key=FIND,
            on_change=_found,
            help="Any card, whatever topics are chosen above: type a few words of its question.",
        )
        page.control("seconds")
        if page.state().role not in ("candidate", "interviewer") and leading is None:
            page.control("reveal")

state = page.state()
if leading is not None:
    state = state.replace(role="interviewer")
    if state.due and leading.session.profile:  # "due" means the candidate's schedule
        state = state.replace(learner=leading.session.profile)
        page.notice(f"Due cards: the candidate's ({leading.session.profile}) schedule.", "info")
    elif state.due:
        page.notice("“Due today only” uses the candidate's schedule once they type their drills name on their "
                    "screen; until then, your own name's.", "info")  # fmt: skip
learner = state.learner.strip()
valid_learner = ""
if learner:
    try:
        valid_learner = validate_profile(learner)
    except ValueError as err:
        page.notice(f"{err}. Nothing is saved until the name is valid.")
elif state.due:
    page.notice("Enter your name in the sidebar to see which cards are due today.", "info")

due_today = None
if valid_learner and state.due:
    end_of_day = datetime.now().astimezone().replace(hour=23, minute=59, second=59, microsecond=0)
    due_today = ProgressStore().due(valid_learner, now=end_of_day, card_ids=view_of.deck_of(state.topics))
d = view_of.drill(state, due_today, hide=page.hide and leading is None)
if leading is not None and d.card is not None and not leading.session.ended:  # the interviewer moved: both screens
    try:
        if d.card.id != leading.session.card:
            leading = dataclasses.replace(leading, session=iv.ask(interview_ui.store(), leading.session.class_id,
                                                                   leading.key, d.card.id, time.time()))  # fmt: skip
        if state.seconds != leading.session.seconds:
            iv.set_seconds(interview_ui.store(), leading.session.class_id, leading.key, state.seconds)
            leading = dataclasses.replace(leading, session=dataclasses.replace(leading.session, seconds=state.seconds))
    except cl.ClassError as err:
        page.notice(str(err))
    except StoreUnavailable:
        page.notice(interview_ui.STORE_DOWN)
for kind, text in d.notices:
    page.notice(text, kind)
for problem in view_of.CARD_PROBLEMS:
    page.notice(f"A card could not be loaded: {problem}")

if FLASH in st.session_state:
    kind, text = st.session_state.pop(FLASH)
    {"success": st.success, "error": st.error}.get(kind, st.info)(text)


def countdown(seconds: int, token: str, elapsed: float = 0.0, shared: bool = False) -> None:
    """The visible countdown (runs in the browser, no reruns). Registered on every run: the same definition
    again is a no-op for Streamlit, and each test session has its own registry. ``elapsed``: seconds already gone
    (a shared session's countdown started on the server); ``shared``: no "Start again" of this screen's own."""
    component = st.components.v2.component("lesson_drill_countdown", js=_COUNTDOWN_JS, css=_COUNTDOWN_CSS)
    data = {"seconds": seconds, "token": token, "elapsed": round(max(0.0, elapsed), 2), "shared": shared}
    component(key="drill-countdown", data=data, height=COUNTDOWN_PX)


@cached_view
def card_view(page_name: str, state: State, options: Options) -> View:
    """The figures of a card's page for the card's link values (cached like the pages' own views)."""
    return page_views()[page_name].figures(state, options)


def show_me(card: Card, link: bool = True) -> None:
    """A link to the page that shows the card's idea, with the card's values (none on a shared session's screen)."""
    path = SCRIPT_OF.get(card.view.page) if link else None
    if not link:
        return
    if path is None:
        st.caption("No page shows this card's idea yet.")
        return
    page_link(  # nothing where the script runs without the app's pages (AppTest of this file alone)
        path,
        label="Show me on its page",
        icon=":material/visibility:",
        query_params={**card.view.query, **carried_params()},
    )


def answer_part(card: Card, part: str) -> None:
    text = getattr(card.answer, part)
    if part == "equation":
        st.markdown(f"**{view_of.PART_LABELS[part]}.**")
        st.latex(text)
    else:
        st.markdown(f"**{view_of.PART_LABELS[part]}.** {_md(text)}")


def sources(card: Card) -> None:
    cited = f"Source: {card.source}" + (f" · the number: {card.number_source}" if card.number_source else "")
    st.caption(_md(cited))


def grade_buttons(card: Card, deck: tuple[str, ...]) -> None:
    st.markdown("**How did it go?**")
    help_text = None if valid_learner else "Enter a valid name in the sidebar to keep your progress."
    for col, rating in zip(st.columns(len(view_of.GRADES)), view_of.GRADES, strict=True):
        col.button(
            rating.capitalize(),
            key=f"grade-{rating}",
            on_click=_grade,
            args=(valid_learner, card.id, rating, deck or (card.id,)),
            disabled=not valid_learner,
            help=help_text,
            width="stretch",
        )


def previous_and_next(deck: Sequence[str], card_id: str) -> None:
    """The previous and next card of the chosen topics, side by side at their labels' width (in columns of a fifth of
    the card's column, "← Previous" was cut to "← Pre…" at 1280 x 720)."""
    with st.container(horizontal=True, gap="small"):
        st.button("← Previous", key="drill-prev", on_click=_go, args=(view_of.step(deck, card_id, -1),))
        st.button("Next →", key="drill-next", on_click=_go, args=(view_of.step(deck, card_id, 1),))


def interview_someone(card: Card) -> None:
    """A shared session to start (the candidate's screen follows this one), or a link to this card alone."""
    st.markdown("**Interview someone**")
    st.button("Start a shared interview", key="interview-start", type="primary", icon=":material/cast:",
              on_click=_start_session, args=(state.seconds,),
              help="One link for the candidate: their screen follows your cards, one countdown for both, and your "
              f"rubric and notes are kept per card, with a summary at the end. It lasts {iv.DEFAULT_HOURS:g} hours, "
              "then it is deleted.")  # fmt: skip
    query = {k: st.query_params.get(k) for k in st.query_params}
    base = str(getattr(st.context, "url", "") or "").split("?")[0]
    with st.expander("Or a link to this card alone (it does not follow you)"):
        st.code(view_of.candidate_link(base, query, card.id), language=None, wrap_lines=True)
        loopback_warning(base)
        st.caption(
            "It opens this card with the question, the countdown, the figure (its answer held back) and “Show me"
            "” only, answers hidden on every page; it does not follow your Next."
        )


def progress_section(learner: str) -> None:
    store = ProgressStore()
    states = store.states(learner)
    due_now = [c for c in store.due(learner) if c in view_of.BY_ID]
    st.subheader(f"{learner}'s progress")
    st.caption(
        f"{len(states)} of {len(view_of.CARDS)} cards graded, {len(due_now)} due now. Kept where this app runs, "
        "under your name; export it to move it elsewhere."
    )
    left, right = st.columns(2)
    left.download_button(
        "Export progress (JSON)",
        store.export_json(learner),
        file_name=f"{learner}-drill-progress.json",
        mime="application/json",
        icon=":material/download:",
        key="drill-export",
    )
    with right:
        upload = st.file_uploader(
            "Import progress (JSON)",
            type=["json"],
            key="drill-import",
            help=f"An export of this app. It replaces {learner}'s progress.",
        )
        if upload is not None:
            st.button(
                f"Replace {learner}'s progress with {upload.name}",
                key="drill-import-go",
                on_click=_import,
                args=(learner, upload.name, upload.getvalue()),
            )


def guess_beside(card: Card, field: Field) -> float | int | None:
    """The guess a held-back figure asks for, committed here (the page's own guess field is in its sidebar): its
    label and range are the page's; None until a value is entered."""
    integer = field.kind == "int"
    value = st.number_input(
        field.label,
        min_value=int(field.lo) if integer else float(field.lo),
        max_value=int(field.hi) if integer else float(field.hi),
        value=None,
        step=1 if integer else field.step,
        format=None if integer else field.fmt,
        key=f"drill-guess-{card.id}",
        placeholder="commit a guess, then see the figure's answer",
    )
    return value


def figure_beside(card: Card, answer_shown: bool, link: bool = True) -> None:
    """The card's figure, drawn by its page's view for the card's link values, and the link to open it live.
    Before the answer is shown only a figure the page can hold back is drawn (Predict first), with the page's guess
    field above it: a committed guess draws the figure revealed, the guess on it."""
    request = view_of.card_figure(card, answer_shown)
    if request is not None and request.guess is not None:
        guess = guess_beside(card, request.guess)
        if guess is not None:
            request = view_of.card_figure(card, answer_shown, guess)
    name = None
    if request is not None:
        view = card_view(request.page, request.state, request.options(page.theme, page.presenter))
        name = view_of.pick_figure(request, view)
    if request is not None and name is not None:
        page.chart(view.figures[name], f"drill-figure-{card.id}", f"{card.id}-{name}")
        if request.predict and view.facts.get("predict") == "revealed":
            st.caption("Your guess is on the figure, beside the answer.")
        elif request.predict:
            st.caption(
                "Predict first: the part of the figure that answers the question is held back until you commit "
                "a guess above."
            )
    elif card.view.page:
        st.caption("The figure shows the answer: it appears here with the model answer.")
    show_me(card, link)


# ------------------------------------------------------------------------------------ a shared session's screens


def shared_countdown(session: iv.Session) -> None:
    """The one countdown: both screens count from when the card was asked, as the store keeps it."""
    token = f"{session.class_id[:8]}:{session.card}:{session.turn}"
    countdown(session.seconds, token, elapsed=time.time() - session.asked_at, shared=True)


def model_answer(card: Card) -> None:
    for part in view_of.ANSWER_PARTS:
        answer_part(card, part)
    sources(card)
    st.markdown("**Follow-ups**\n" + "\n".join(f"- {_md(f)}" for f in card.follow_ups))
    st.markdown("**Traps**\n" + "\n".join(f"- {_md(t)}" for t in card.traps))


def session_rows(session: iv.Session) -> list[iv.Row]:
    questions = {c: view_of.BY_ID[c].question for c in session.kept if c in view_of.BY_ID}
    return iv.summary(session, questions, view_of.PART_LABELS, time.time())


def summary_table(session: iv.Session) -> None:
    rows = session_rows(session)
    if not rows:
        st.caption("No card was asked.")
        return
    st.table(
        [
            {"No.": r.order, "Card": r.card, "Question": r.question, "Time": iv.clock(r.seconds),
             "Rubric": "; ".join(r.ticks), "Score": r.score, "Grade": r.grade.capitalize(), "Note": r.note}
            for r in rows
        ]
    )  # fmt: skip


def follow_session(seat: interview_ui.Seat) -> None:
    """Rerun this screen when the other side changes the session. The candidate's is pushed by the server (else
    polled). The interviewer's polls the candidate's steps (two store reads per PULSE_S): a push would also answer
    the interviewer's own writes, and a rerun pushed while the interviewer's Next still ran replaced it."""
    if seat.role == "candidate" and interview_ui.follow(seat):
        return
    version, pulse = seat.session.record.version, seat.session.pulse

    @st.fragment(run_every=FALLBACK_POLL_S if seat.role == "candidate" else PULSE_S)
    def watch() -> None:
        try:
            now = interview_ui.store().get(seat.session.class_id)
            docs = interview_ui.store().docs(seat.session.class_id) if seat.role == "interviewer" else {}
        except StoreUnavailable:
            return
        if now is None or (seat.role == "candidate" and now.version != version) or docs.get("pulse", "") != pulse:
            st.rerun(scope="app")

    watch()


def session_panel(seat: interview_ui.Seat) -> None:
    """The interviewer's shared-session controls: the candidate's link, what their screen shows, the countdown's
    restart, the lesson pages shown, the summary's downloads and the end."""
    s = seat.session
    with st.container(border=True, key="interview-panel"):
        who = "the candidate has opened the link" if s.seen else "waiting for the candidate to open the link"
        profile = f" · grades go to **{s.profile}**'s drills progress" if s.profile else ""
        st.markdown(f"**Shared interview** · {who}{profile}")
        if s.ended:
            st.caption(
                "This interview has ended: nothing more can be asked. The summary stays here until the "
                f"interview expires, {iv.DEFAULT_HOURS:g} hours after it started: download it to keep it."
            )
        else:
            interview_ui.keep_key(seat)
            st.markdown("**The candidate's link** (send it once: their screen follows yours)")
            try:
                st.code(interview_ui.candidate_url(seat), language=None, wrap_lines=True)
            except StoreUnavailable:
                st.warning(interview_ui.STORE_DOWN)
            loopback_warning(str(getattr(st.context, "url", "") or "").split("?")[0])
            if s.screen == "view":
                entry = catalog.by_url(s.view_page)
                shown = entry.label if entry is not None else s.view_page.replace("_", " ")
                st.markdown(f"The candidate sees your view of **{shown}**.")
            with st.container(horizontal=True, gap="small"):
                st.button(
                    "Restart the countdown",
                    key="interview-restart",
                    help="A new countdown on both screens",
                    on_click=lambda: _session_step(iv.restart_countdown, s.class_id, seat.key, time.time()),
                )
                if s.screen == "view":
                    st.button(
                        "Back to the card",
                        key="interview-back",
                        type="primary",
                        on_click=lambda: _session_step(iv.ask, s.class_id, seat.key, s.card, time.time()),
                    )
            st.toggle(
                "Show the candidate the lesson pages you open",
                value=interview_ui.driving() == s.class_id,
                key="interview-drive",
                on_change=lambda: interview_ui.drive(seat, bool(st.session_state.get("interview-drive"))),
                help="Open any lesson page from the sidebar: its figures and readouts, for the values you set there, "
                "show on the candidate's screen with its answers hidden. Turning this off brings the candidate's "
                "screen back to the card, as does “Stop showing my pages” in that page's sidebar (“Back to the "
                "interview” there brings you back here).",
            )
        rows = session_rows(s)
        with st.container(horizontal=True, gap="small"):
            st.download_button("Summary (Markdown)", lambda: iv.summary_markdown(s, session_rows(s), time.time()),
                               file_name="interview-summary.md", mime="text/markdown", key="interview-md",
                               on_click="ignore", disabled=not rows, icon=":material/download:")  # fmt: skip
            st.download_button("Summary (CSV)", lambda: iv.summary_csv(session_rows(s)),
                               file_name="interview-summary.csv", mime="text/csv", key="interview-csv",
                               on_click="ignore", disabled=not rows, icon=":material/download:")  # fmt: skip
            if s.ended:
                st.button("Leave this interview", key="interview-new", on_click=_new_session)
            else:
                with st.popover("End the interview"):
                    st.checkbox("Show the candidate the summary (rubric, grades, times and your notes)", value=False,
                                key="interview-share")  # fmt: skip
                    graded = (f"; the grades go into {s.profile}'s drills progress" if s.profile else
                              ". The candidate typed no drills name: the grades stay in the summary only")  # fmt: skip
                    st.caption(f"The candidate's screen says it ended{graded}.")
                    st.button("End it now", key="interview-end", type="primary", on_click=_end_session,
                              args=(s.class_id, seat.key))  # fmt: skip
        if s.ended:
            summary_table(s)


def _tick_session(class_id: str, key: str, card_id: str) -> None:
    ticks = [part for part in view_of.PART_LABELS if st.session_state.get(f"rubric-{card_id}-{part}")]
    _session_step(iv.keep, class_id, key, card_id, ticks=ticks)


def _note_session(class_id: str, key: str, card_id: str) -> None:
    _session_step(iv.keep, class_id, key, card_id, note=st.session_state.get(f"interview-note-{card_id}") or "")


def interviewer_card(card: Card, seat: interview_ui.Seat) -> None:
    """The card on the interviewer's screen of a shared session: the shared countdown, the figure once either side
    opened it, the model answer, the rubric, a note and a grade kept with the interview."""
    s = seat.session
    if not s.ended:
        shared_countdown(s)
    if d.deck and not s.ended:
        previous_and_next(d.deck, card.id)
    held = view_of.card_figure(card, False)  # what the candidate's screen can draw before the reveal
    if s.show == card.id:
        figure_beside(card, True)
        if held is None and s.reveal != card.id:
            st.caption("The candidate sees this figure once you reveal the answer: it shows the answer.")
        elif held is not None and s.reveal != card.id:
            st.caption("The candidate sees this figure with its answer held back (Predict first) and a box for a "
                       "guess: a committed guess shows them the answer.")  # fmt: skip
    elif card.view.page and not s.ended:
        st.button("Show me: the figure on both screens", key="interview-show", icon=":material/visibility:",
                  on_click=lambda: _session_step(iv.show_figure, s, card.id, time.time()))  # fmt: skip
    st.subheader("Model answer")
    model_answer(card)
    if not s.ended:
        if s.reveal == card.id:
            st.caption("The candidate sees the model answer, the follow-ups and the traps.")
        else:
            st.button(
                "Reveal the answer to the candidate",
                key="interview-reveal",
                on_click=lambda: _session_step(iv.reveal_answer, s.class_id, seat.key, card.id, time.time()),
            )
    kept = s.kept.get(card.id) or iv.Kept(0)
    st.markdown("**Rubric**: tick what the candidate said (kept with the interview)")
    ticks = [
        st.checkbox(
            label,
            key=f"rubric-{card.id}-{part}",
            value=part in kept.ticks,
            disabled=s.ended,
            on_change=_tick_session,
            args=(s.class_id, seat.key, card.id),
        )
        for part, label in view_of.PART_LABELS.items()
    ]
    kept_note = f" · note kept ({len(kept.note)} characters)" if kept.note else ""
    st.caption(f"Score: {sum(ticks)} of {len(ticks)} · on this card for {iv.clock(s.spent(card.id, time.time()))}"
               f"{kept_note}")  # fmt: skip
    st.text_area("Your note on this card (the candidate sees it only if you show them the summary at the end)",
                 value=kept.note, max_chars=iv.NOTE_MAX, key=f"interview-note-{card.id}", disabled=s.ended,
                 on_change=_note_session, args=(s.class_id, seat.key, card.id))  # fmt: skip
    st.segmented_control("Grade (goes into the candidate's drills progress at the end, if they type their name)",
                         view_of.GRADES, default=kept.grade or None, key=f"interview-grade-{card.id}",
                         format_func=str.capitalize, disabled=s.ended,
                         on_change=lambda: _session_step(iv.keep, s.class_id, seat.key, card.id,
                                                         grade=st.session_state.get(f"interview-grade-{card.id}")
                                                         or ""))  # fmt: skip


def _profile(name_key: str) -> None:
    _candidate_step(iv.set_profile, st.session_state.get(name_key) or "")


def candidate_screen(seat: interview_ui.Seat) -> None:
    """The candidate's screen: what the interviewer shows (a card with the shared countdown, or a lesson page's
    view), answers held back until the interviewer reveals them."""
    s = seat.session
    follow_session(seat)
    if not s.seen:
        _candidate_step(iv.seen)
    st.title("Mock interview", anchor=False)
    if s.ended or time.time() >= s.record.expires_at:
        st.info("This interview has ended. Thank you!" if s.ended else
                "This interview has expired: ask the interviewer for a new link.")  # fmt: skip
        if s.shared:
            st.markdown("**The interviewer's summary**")
            summary_table(s)
        return
    st.caption("Your screen follows the interviewer's.")
    if s.screen == "view":
        shown = interview_ui.lesson_view(s.view_page, s.view_query, page.theme, card_view)
        if shown is None:
            st.info("The interviewer is showing a page this screen cannot draw.")
        else:
            st.markdown(f"### {shown.label}")
            if shown.question:
                st.markdown(f"**Question:** {_md(shown.question)}")
            for text in shown.notices:
                st.info(text)
            for name, fig in shown.figures:
                page.chart(fig, f"interview-view-{name}", f"interview-{s.view_page}-{name}")
            for r in shown.readouts:
                st.metric(r.label, r.value, help=r.help)
            st.caption(HIDDEN_CAPTION)
    elif not s.card:
        st.info("Waiting for the interviewer's first question.")
    elif s.card not in view_of.BY_ID:
        st.warning(f"The interviewer's card {s.card} is not among this app's cards: tell the interviewer.")
    else:
        card = view_of.BY_ID[s.card]
        st.caption(f"{card.topic} · {card.id}")
        st.markdown(f"### {_md(card.question)}")
        st.caption("Answer aloud before the countdown ends.")
        shared_countdown(s)
        revealed = s.reveal == card.id
        drawable = revealed or view_of.card_figure(card, False) is not None
        if s.show == card.id:
            figure_beside(card, revealed, link=False)
        elif card.view.page and drawable:
            st.button("Show me", key="interview-show", icon=":material/visibility:",
                      on_click=lambda: _candidate_step(iv.show_figure, card.id, time.time(), True),
                      help="Opens the card's figure on both screens"
                      + ("" if revealed else " (yours holds its answer back until you commit a guess)"))  # fmt: skip
        elif card.view.page:
            st.caption(
                "This card's figure shows the answer: open it with Show me once the interviewer reveals the answer."
            )
        if revealed:
            st.subheader("Model answer")
            model_answer(card)
        else:
            st.caption("The interviewer reveals the model answer when you are done.")
    with st.expander("Save the interviewer's grades to your drills progress (optional)"):
        st.caption("Type the name you use on the drills page: the interviewer's grades go into its schedule when "
                   "the interview ends. Empty: nothing is saved.")  # fmt: skip
        st.text_input("Your name on the drills page", value=s.profile, max_chars=40, key="interview-profile",
                      placeholder="e.g. ada", on_change=_profile, args=("interview-profile",))  # fmt: skip
        if s.profile:
            st.caption(f"The interviewer's grades go into {s.profile}'s drills progress when the interview ends.")


if seat is not None and seat.role == "candidate":
    with page.figure_area():
        candidate_screen(seat)
    page.finish()
    st.stop()


# The card in the page's figure section: the lesson-order links (the data section) follow it, at the bottom as on
# every page (above it, their late-styled row moved the whole card on load).
with page.figure_area():
    if leading is not None:
        session_panel(leading)
    card = d.card
    if leading is not None and card is not None:
        st.caption(f"{card.topic} · {card.id}")
        st.markdown(f"### {_md(card.question)}")
        interviewer_card(card, leading)
        follow_session(leading)
        card = None  # drawn
    elif card is None:
        st.info("No card to show.")
    else:
        visit = st.session_state.get(VISIT, ("", 0))
        if visit[0] != card.id:
            visit = (card.id, visit[1] + 1)
            st.session_state[VISIT] = visit
        answer_shown = d.role == "interviewer" or (d.role == "solo" and len(d.parts) == len(view_of.PART_LABELS))
        # one column: the figure gets the main area's width (beside the card, in two fifths of it, it was about 300 px
        # wide at 1280 x 720 and its axis titles collided; issue 30)
        where = f"card {d.position + 1} of {len(d.deck)}" if d.position is not None else "not in the chosen topics"
        st.caption(f"{card.topic} · {card.id} · {where}")
        st.markdown(f"### {_md(card.question)}")
        countdown(state.seconds, f"{card.id}:{visit[1]}:{state.seconds}")
        if d.deck and (d.role != "candidate" or state.role != "candidate"):  # a hidden solo or interviewer screen too
            previous_and_next(d.deck, card.id)
        figure_beside(card, answer_shown)
        with st.container():
            if d.role == "candidate":
                if page.hide:
                    st.caption(HIDDEN_CAPTION)
            else:
                if d.role == "interviewer":
                    st.subheader("Model answer")
                for part in d.parts:
                    answer_part(card, part)
                if d.role == "solo":
                    cols = st.columns(2)
                    if len(d.parts) < len(view_of.PART_LABELS):
                        cols[0].button(
                            view_of.REVEAL_LABELS[view_of.ANSWER_PARTS[len(d.parts)]],
                            key="drill-reveal",
                            on_click=_reveal,
                            args=(len(d.parts) + 1,),
                            type="primary",
                            width="stretch",
                        )
                    if d.parts:
                        cols[1].button("Hide the answer again", key="drill-unreveal", on_click=_reveal, args=(0,))
                if d.role == "interviewer" or len(d.parts) == len(view_of.PART_LABELS):
                    sources(card)
                    st.markdown("**Follow-ups**\n" + "\n".join(f"- {_md(f)}" for f in card.follow_ups))
                    st.markdown("**Traps**\n" + "\n".join(f"- {_md(t)}" for t in card.traps))
                if d.role == "interviewer":
                    st.markdown("**Rubric**: tick what the candidate said")
                    kept = st.session_state.get(RUBRIC, {}).get(card.id, ())
                    ticks = [
                        st.checkbox(
                            view_of.PART_LABELS[part],
                            key=f"rubric-{card.id}-{part}",
                            value=part in kept,
                            on_change=_tick,
                            args=(card.id, part, f"rubric-{card.id}-{part}"),
                        )
                        for part in view_of.PART_LABELS
                    ]
                    st.caption(f"Score: {sum(ticks)} of {len(ticks)}")
                    interview_someone(card)
                grade_buttons(card, d.deck)
        if d.role != "candidate" and leading is None:
            if valid_learner:
                progress_section(valid_learner)
            elif not learner:
                st.caption("Enter your name in the sidebar to keep your grades and see which cards are due.")

page.finish()
