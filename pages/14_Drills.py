"""Interview drills: one card at a time, a countdown to answer aloud, the model answer part by part, a self-grade
that schedules the card again (FSRS), and an interviewer's view with follow-ups, traps and a rubric."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import streamlit as st

from decks import views as page_views
from pages.frame import HIDDEN_CAPTION, PAGES, Page, cached_view, carried_params, loopback_warning, page_link
from study.cards import Card
from study.progress import ProgressStore, validate_profile
from views import Options, View
from views import drills as view_of
from views.state import Field, State

MAX_IMPORT_BYTES = 5 * 2**20
FLASH = "_drill_flash"  # a message from a button's callback, shown on the rerun it causes
VISIT = "_drill_visit"  # (card id, visit number): a new countdown each time a card comes up
COUNTDOWN_PX = 40  # the countdown's height, reserved before its script has run (no jump when it mounts)
RUBRIC = "_drill_rubric"  # card id -> the rubric parts ticked for it: kept when the card leaves the screen
FIND = "drill-find"  # the card finder's widget key

# A countdown drawn by the browser: it starts when a card comes up (a new token) and keeps its start across
# reruns of the same card, so revealing a part does not restart it. Offline: no request, no library.
_COUNTDOWN_JS = """
export default function (component) {
  const { data, parentElement } = component;
  const total = Math.max(1, Number(data.seconds) || 75);
  const starts = (window.__lessonCountdown = window.__lessonCountdown || {});
  if (starts[data.token] === undefined) starts[data.token] = Date.now();
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
  box.querySelector(".again").onclick = () => { starts[data.token] = Date.now(); tick(); };
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


with page.controls():
    page.control("role")
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
    if page.state().role != "candidate":
        page.control("reveal")

state = page.state()
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
d = view_of.drill(state, due_today, hide=page.hide)
for kind, text in d.notices:
    page.notice(text, kind)
for problem in view_of.CARD_PROBLEMS:
    page.notice(f"A card could not be loaded: {problem}")

if FLASH in st.session_state:
    kind, text = st.session_state.pop(FLASH)
    {"success": st.success, "error": st.error}.get(kind, st.info)(text)


def countdown(seconds: int, token: str) -> None:
    """The visible countdown (runs in the browser, no reruns). Registered on every run: the same definition
    again is a no-op for Streamlit, and each test session has its own registry."""
    component = st.components.v2.component("lesson_drill_countdown", js=_COUNTDOWN_JS, css=_COUNTDOWN_CSS)
    component(key="drill-countdown", data={"seconds": seconds, "token": token}, height=COUNTDOWN_PX)


@cached_view
def card_view(page_name: str, state: State, options: Options) -> View:
    """The figures of a card's page for the card's link values (cached like the pages' own views)."""
    return page_views()[page_name].figures(state, options)


def show_me(card: Card) -> None:
    """A link to the page that shows the card's idea, with the card's values."""
    path = SCRIPT_OF.get(card.view.page)
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


def candidate_link(card: Card) -> None:
    query = {k: st.query_params.get(k) for k in st.query_params}
    base = str(getattr(st.context, "url", "") or "").split("?")[0]
    st.markdown("**The candidate's link** (copy it with the button at its right)")
    st.code(view_of.candidate_link(base, query, card.id), language=None, wrap_lines=True)
    loopback_warning(base)
    st.caption(
        "It opens this card with the question, the countdown, the figure (its answer held back) and “Show me” only, "
        "answers hidden on every page."
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


def figure_beside(card: Card, answer_shown: bool) -> None:
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
    show_me(card)


# The card in the page's figure section: the lesson-order links (the data section) follow it, at the bottom as on
# every page (above it, their late-styled row moved the whole card on load).
with page.figure_area():
    card = d.card
    if card is None:
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
                    candidate_link(card)
                grade_buttons(card, d.deck)
        if d.role != "candidate":
            if valid_learner:
                progress_section(valid_learner)
            elif not learner:
                st.caption("Enter your name in the sidebar to keep your grades and see which cards are due.")

page.finish()
