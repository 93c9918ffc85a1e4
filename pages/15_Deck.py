"""Lecture decks: play a deck of the explorer's views with the keyboard, follow it in a speaker view, build your own.

The player draws each slide from the slide page's own ``figures(state, options)`` (no page switching), in presenter
mode. The slide page's controls are in the sidebar under keys of the player's own, so the audience can touch every
one of them without touching the real page's state; Next and Previous bring back the slide's prepared values. A slide
that asks the room first (``withhold = true``) opens with its title alone until the lecturer reveals it (v).
"""

from __future__ import annotations

import html
import json
import secrets
import time
from dataclasses import replace

import streamlit as st

from classroom import classes
from classroom.store import StoreUnavailable
from decks import (
    TALKS,
    Deck,
    DeckError,
    deck_to_toml,
    load_decks,
    page_label,
    parse_deck,
    parts_for,
    slide_from_link,
)
from decks.class_questions import predict_fields
from decks.warm import SlideCache, Warming
from pages.frame import DECK_DRAFT, HIDDEN_CAPTION, PRESENT_KEY, Page, class_ui, draw_field
from views import Options, View
from views import deck as view_of
from views.state import State
from viz.class_guesses import guesses_figure

_NONCE = "_deck_nonce"  # bumped by every move: the slide's controls are drawn afresh with its prepared values
_PLAY = "_deck_play"
_SHOWN = "_deck_shown"  # (deck, slide) of a withheld slide whose view the lecturer has revealed
_PRESENT_ONCE = "_deck_presenter_once"

# A deck link opens in presenter mode (once per session: the lecturer may still turn it off).
if not st.session_state.get(_PRESENT_ONCE):
    st.session_state[_PRESENT_ONCE] = True
    if PRESENT_KEY not in st.query_params:
        st.query_params[PRESENT_KEY] = "true"

page = Page.setup(
    "Lecture decks",
    ":material/slideshow:",
    "Decks of the explorer's views, played with the keyboard.",
    spec=view_of.SPEC,
    heading=False,
)
page.sections()


@st.cache_resource(max_entries=4, show_spinner=False)
def _shipped(stamp: tuple[tuple[str, float], ...]) -> tuple[dict[str, Deck], dict[str, list[str]]]:
    return load_decks()


def shipped_decks() -> tuple[dict[str, Deck], dict[str, list[str]]]:
    """The decks under decks/, read again when a file changes."""
    from decks import DECKS_DIR

    return _shipped(tuple((p.name, p.stat().st_mtime) for p in sorted(DECKS_DIR.glob("*.toml"))))


@st.cache_resource(show_spinner=False)
def _slide_cache() -> SlideCache:
    """One cache of slide views per server process, shared by sessions, with its background warmer."""
    return SlideCache()


SLIDES = _slide_cache()


def slide_view(page_name: str, state: State, options: Options) -> View:
    """A slide's view, from the slides warmed in the background when the deck opened (or computed now)."""
    return SLIDES.view(page_name, state, options)


def warming_panel(warming: Warming, deck: Deck, hide: bool) -> None:
    """The warming's progress and, once built, the handout: refreshed every second until the warming is done (a
    fragment: the slide is not redrawn). The handout is the warmed bytes, the same on every run, so its address does
    not change under a click; the click does not rerun the page."""
    label = f":material/download: Handout of “{deck.title}” (one HTML file, works offline)" + (
        ", without the speaker notes" if hide else ""
    )

    ticking = not warming.done

    @st.fragment(run_every=1.0 if ticking else None)
    def panel() -> None:
        if ticking and warming.done:  # one last run of the whole page, which draws this panel without a timer
            st.rerun()
        if warming.error is not None:
            st.caption(f"The handout could not be built: {warming.error}")
        elif warming.done:
            st.caption(f":material/check_circle: All {warming.total} slides and the handout are ready.")
        else:
            st.caption(f"Preparing the slides in the background: {warming.ready} of {warming.total} ready.")
        if warming.handout is not None:
            st.download_button(
                label,
                warming.handout,
                file_name=f"{deck.name}-handout.html",
                mime="text/html",
                key="deck-handout",
                on_click="ignore",
                width="stretch",
            )
        else:
            st.button(label, key="deck-handout-wait", disabled=True, help="Ready once every slide is.", width="stretch")

    panel()


def draft_deck() -> tuple[Deck | None, list[str]]:
    """The session's draft deck (views added from any page, or an uploaded file)."""
    slides, problems = [], []
    for number, item in enumerate(st.session_state.get(DECK_DRAFT, []), start=1):
        try:
            slides.append(
                slide_from_link(
                    item["page"],
                    item["query"],
                    item.get("title", ""),
                    item.get("notes", ""),
                    sweep=item.get("sweep"),
                    parts=item.get("parts", ()),
                    readouts=item.get("readouts", ()),
                    withhold=item.get("withhold", False),
                    figures=item.get("figures", ()),
                )
            )
        except DeckError as exc:
            problems += [f"draft view {number}: {p}" for p in exc.problems]
    return (Deck("draft", "Your draft deck", tuple(slides)) if slides else None), problems


decks, deck_errors = shipped_decks()
decks = dict(decks)
draft, draft_problems = draft_deck()
if draft is not None:
    decks["draft"] = draft

speaker = (st.query_params.get("speaker") or "").strip().lower() == "true"
talk_id = (st.query_params.get("talk") or "").strip()[:40]
if not talk_id:
    talk_id = secrets.token_urlsafe(6)
    st.query_params["talk"] = talk_id


# ---------------------------------------------------------------------- moving through the deck
def _move(step: int, size: int) -> None:
    current = int(st.session_state.get("slide", 1))
    st.session_state["slide"] = min(max(current + step, 1), size)
    st.session_state["blank"] = False
    st.session_state.pop(_SHOWN, None)
    st.session_state[_NONCE] = st.session_state.get(_NONCE, 0) + 1


def _jump(size: int) -> None:
    result = st.session_state.get("deck-jump")
    try:
        number = int(json.loads(getattr(result, "value", None) or "{}").get("n"))
    except (TypeError, ValueError, AttributeError):
        return
    st.session_state["slide"] = min(max(number, 1), size)
    st.session_state.pop(_SHOWN, None)
    st.session_state[_NONCE] = st.session_state.get(_NONCE, 0) + 1


def _toggle_blank() -> None:
    st.session_state["blank"] = not st.session_state.get("blank", False)


def _play() -> None:
    st.session_state[_PLAY] = True


def _reveal(deck_name: str, number: int) -> None:
    st.session_state[_SHOWN] = (deck_name, number)


# Digits typed anywhere outside a text box, then Enter: jump to that slide (Streamlit's shortcuts take no digits).
_KEYS_JS = """
export default function (component) {
  const { setTriggerValue } = component;
  let buffer = "";
  let at = 0;
  const badge = document.createElement("div");
  badge.style.cssText = "position:fixed;bottom:34px;right:14px;z-index:1000001;font:600 22px system-ui;" +
    "background:#E69F00;color:#000;padding:2px 12px;border-radius:8px;display:none";
  badge.setAttribute("data-testid", "deck-jump-badge");
  document.body.appendChild(badge);
  const show = () => { badge.textContent = "→ " + buffer; badge.style.display = buffer ? "block" : "none"; };
  const onKey = (event) => {
    const t = event.target;
    const tag = t && t.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || (t && t.isContentEditable)) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const now = Date.now();
    if (now - at > 4000) buffer = "";
    if (/^[0-9]$/.test(event.key)) { buffer = (buffer + event.key).slice(-3); at = now; show(); return; }
    if (event.key === "Enter" && buffer) {
      setTriggerValue("value", JSON.stringify({ n: parseInt(buffer, 10), at: now }));
      buffer = ""; show(); event.preventDefault();
    } else if (event.key === "Escape") { buffer = ""; show(); }
  };
  window.addEventListener("keydown", onKey, true);
  return () => { window.removeEventListener("keydown", onKey, true); badge.remove(); };
}
"""
_keys_component = st.components.v2.component("deck_keys", js=_KEYS_JS)

_HIDE_EXTRA_KEYS = """
<style>
  .st-key-deck-next-space, .st-key-deck-next-pagedown, .st-key-deck-prev-pageup { display: none; }
  /* Streamlit's "Running... Stop" flashed in the projector's corner on every move */
  [data-testid="stStatusWidget"] { visibility: hidden; }
</style>
"""


# ---------------------------------------------------------------------- the speaker view
def _clock(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return (
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        if seconds >= 3600
        else (f"{seconds // 60}:{seconds % 60:02d}")
    )


@st.fragment(run_every=1)
def speaker_panel(talk: str, hide: bool = False) -> None:
    """The current slide's notes, the next slide's title and the clocks. With answers hidden (``hide=true``, for a
    shared screen) the notes, which hold the answers, are not sent at all."""
    state = TALKS.get(talk)
    if state is None:
        st.info(f"Waiting for the deck with talk id `{talk}`: open the speaker link from the player's sidebar.")
        return
    deck = state.deck
    slide = deck.slide(state.slide)
    now = time.time()
    c1, c2, c3 = st.columns(3)
    c1.metric("Clock", time.strftime("%H:%M:%S", time.localtime(now)))
    c2.metric("Talk", _clock(now - state.started))
    c3.metric("This slide", _clock(now - state.slide_since))
    st.markdown(f"### {state.slide} / {len(deck)} · {slide.title}")
    st.caption(f"{deck.title} · {page_label(slide.page)}" + (" · **screen blanked**" if state.blank else ""))
    if slide.sweep is not None:
        values = slide.sweep.values
        st.caption(f"Sweep on **p**: `{slide.sweep.field}` from {values[0]} to {values[-1]} in {len(values)} steps")
    with st.container(border=True):
        if hide and slide.notes:
            st.caption(f"{HIDDEN_CAPTION}: the speaker notes hold the answers, so they are hidden too.")
        else:
            st.markdown(slide.notes or "_No notes for this slide._")
    if state.slide < len(deck):
        st.markdown(f"**Next:** {state.slide + 1}. {deck.slide(state.slide + 1).title}")
    else:
        st.markdown("**Next:** the end of the deck.")


if speaker:
    st.header(":material/speaker_notes: Speaker view")
    speaker_panel(talk_id, page.hide)
    page.finish()
    st.stop()


# ---------------------------------------------------------------------- the player
raw_deck = st.query_params.get("deck")
if raw_deck is not None and raw_deck not in decks and st.session_state.get("deck") != raw_deck:
    why = deck_errors.get(raw_deck)
    page.notice(
        f"There is no deck `{raw_deck}`"
        + (": its file has problems (see below)." if why else f" (decks: {', '.join(decks)}).")
    )
names = list(decks)
with st.sidebar:
    st.header("Deck")
    if not names:
        st.error("No deck loads: see the problems below.")
    default = view_of.SPEC["deck"].default
    deck_name = st.selectbox(
        "Deck",
        names,
        index=names.index(default) if default in names else 0,
        key="deck",
        bind="query-params",
        format_func=lambda n: n,
        on_change=lambda: st.session_state.update({"slide": 1, _NONCE: st.session_state.get(_NONCE, 0) + 1}),
    )
deck = decks.get(deck_name) if deck_name else None
if deck is None:
    for name, problems in deck_errors.items():
        page.notice(f"`decks/{name}.toml` could not load:\n\n" + "\n".join(f"- {p}" for p in problems), "error")
    page.finish()
    st.stop()

size = len(deck)
warming = SLIDES.warm(deck, page.theme, page.presenter, page.hide)
teach_link = bool(st.query_params.get("teach"))  # a class runs (its keys join the list)
with st.sidebar:
    st.html(_HIDE_EXTRA_KEYS)
    number = page.control("slide")
    if number > size:
        page.notice(f"Slide {number} is past the end of this deck ({size} slides): showing the last one.", "info")
        number = size
    left, right = st.columns(2)
    left.button("◀ Previous", key="deck-prev", shortcut="left", on_click=_move, args=(-1, size), width="stretch")
    right.button("Next ▶", key="deck-next", shortcut="right", on_click=_move, args=(1, size), width="stretch")
    st.button("next", key="deck-next-space", shortcut="space", on_click=_move, args=(1, size))
    st.button("next", key="deck-next-pagedown", shortcut="pagedown", on_click=_move, args=(1, size))
    st.button("previous", key="deck-prev-pageup", shortcut="pageup", on_click=_move, args=(-1, size))
    blank = page.control("blank")
    st.button("Blank the screen", key="deck-blank", shortcut="b", on_click=_toggle_blank, width="stretch")
    st.caption(
        "Keys: → space PgDn next · ← PgUp previous · a number then Enter jumps · b blanks · p plays the sweep · "
        "v reveals a withheld view"
        + (" · in a class: j the class code, v reveals the guesses, k the quick check" if teach_link else "")
    )
    _keys_component(key="deck-jump", on_value_change=lambda: _jump(size), height=0)

slide = deck.slide(number)
TALKS.update(talk_id, deck, number, blank)

# ---------------------------------------------------------------------- a class following the deck (class mode)
teaching, question, class_problem = None, None, None
try:
    teach_id = (st.query_params.get("teach") or "").strip()
    teaching = class_ui.teaching(teach_id) if teach_id else None
    with st.sidebar:
        lost = bool(teach_id) and teaching is None
        teaching = class_ui.teacher_sidebar(teaching, deck.name, number, draft=deck.name == "draft", lost=lost)
    if teaching is not None:
        teaching = class_ui.Teaching(class_ui.sync_slide(teaching, number), teaching.key)
        question = class_ui.slide_question(deck.name, number)
except StoreUnavailable as exc:
    class_problem = f"Class mode is off: {exc}. The deck works as before."
class_revealed = teaching is not None and question is not None and question.qid in teaching.record.revealed
# A slide that asks the room first (withhold = true) opens with its title alone; v reveals its view until the next move.
withheld = slide.withhold and st.session_state.get(_SHOWN) != (deck.name, number)

# The slide page's own controls, under keys of the player's own: the audience may touch them all.
nonce = st.session_state.get(_NONCE, 0)
touched = {}
with st.sidebar:
    st.header("This view's controls")
    st.caption("Touch any of them; Next and Previous bring back the slide's values.")
    # A slide that opens in Predict first needs its guess field in reach: the expander opens while the guess is due.
    asks = any(f.name.startswith("predict_") and slide.state[f.name] is True for f in slide.spec.fields)
    with st.expander(f"{page_label(slide.page)} controls", expanded=asks):
        for f in slide.spec.fields:
            key = f"dk-{deck.name}-{number}-{nonce}-{f.name}"
            widget = "segmented" if f.widget == "tabs" else f.widget
            g = replace(f, name=key, default=slide.state[f.name], widget=widget)
            touched[f.name] = draw_field(g, bind=None)
    state = State(touched)
    if class_revealed and (asked := predict_fields(slide)) is not None:  # revealed to the class: the answer on screen
        state = state.replace(**{asked[0].name: False})
    if state != slide.state:
        st.button(
            "↺ Back to the slide's values",
            key="deck-restore",
            on_click=lambda: st.session_state.update({_NONCE: st.session_state.get(_NONCE, 0) + 1}),
            width="stretch",
        )
    st.link_button(
        "Open this view on its page ↗",
        f"{slide.link}&present=true" if "?" in slide.link else f"{slide.link}?present=true",
        width="stretch",
    )

    base = str(getattr(st.context, "url", "") or "").split("?")[0]
    st.link_button(
        ":material/speaker_notes: Speaker view (new tab)",
        f"{base}?deck={deck.name}&talk={talk_id}&speaker=true",
        help="The current slide's notes, the next slide's title and a clock; follows this tab within a second.",
        width="stretch",
    )
    warming_panel(warming, deck, page.hide)
    if withheld:
        st.button(
            "Reveal the view (v)",
            key="deck-reveal",
            shortcut="v",
            on_click=_reveal,
            args=(deck.name, number),
            type="primary",
            width="stretch",
        )
    elif slide.sweep is not None:
        st.button(
            f"▶ Play the sweep of {slide.sweep.field} (p)",
            key="deck-play",
            shortcut="p",
            on_click=_play,
            width="stretch",
        )

progress = number / size * 100
strip = (
    f'<div data-testid="deck-progress" style="position:fixed;top:18px;left:50%;transform:translateX(-50%);'
    f"z-index:1000000;font-size:14px;white-space:nowrap;"
    f'opacity:0.8;background:rgba(128,128,128,0.18);padding:2px 10px;border-radius:10px;">'
    f"{number} / {size} · {html.escape(slide.title)}</div>"
    f'<div style="position:fixed;bottom:0;left:0;height:3px;width:{progress:.1f}%;background:#E69F00;z-index:999">'
    "</div>"
)
# The slide's number and title before its view is computed: never the old slide's number over it. At the top, in the
# header's empty middle: at the bottom right it covered the readouts' "N more" fold or a text on 12 of 23 slides, at
# the bottom left a figure's legend on slide 14 (walkthrough, issue 30; tests/browser/test_deck_browser.py).
st.html(strip)

if blank:
    st.html('<div data-testid="deck-blank" style="position:fixed;inset:0;background:#000;z-index:999990"></div>')
else:
    with page.title_area():  # the new title at once, over the old figure until the new one is drawn
        st.markdown(f"## {html.escape(slide.title)}")
# The parts of the state on screen: a view (tab) the audience picks in the sidebar draws that tab's figure.
options = Options(theme=page.theme, presenter=page.presenter, parts=parts_for(slide.page, state, slide.parts))
view = slide_view(slide.page, state, options)
if not blank:
    if withheld:
        page.notice(
            "**Answer withheld.** Ask the room first; press **v** (or *Reveal the view* in the sidebar) to show it.",
            "info",
        )
        view = View()
    if view.facts.get("predict") == "hidden":
        # The held-back figure carries the question itself; the page's notice above it would push the figure off a
        # projector's first screen, so the player leaves that one notice out (the guess field's expander is open).
        # (a copy: the view is shared by every session through the slide cache)
        view = replace(
            view, notices=[(k, t) for k, t in view.notices if not (k == "info" and t.startswith("**Predict first.**"))]
        )
    page.show_notices(view)
    figs = slide.shown_figures(view)
    playing = st.session_state.pop(_PLAY, False) and slide.sweep is not None
    if figs:
        with page.figure_area():
            if playing:  # the sweep's frames replace each other in one slot
                main_slot = page.chart_slot("deck-main")
                page.chart(figs[0], "deck-fig-0", f"{deck.name}-{number}", slot=main_slot)
            else:
                # one live chart, one key for every slide: it stays mounted and redraws in place, the old figure on
                # screen until the new one is drawn (a chart per slide left the area empty for a few frames)
                page.chart(figs[0], "deck-fig-0", f"{deck.name}-{number}")
        with page.views():
            for j, fig in enumerate(figs[1:], start=1):
                page.chart(fig, f"deck-fig-{j}", f"{deck.name}-{number}-{j}")
    if class_problem:
        st.error(class_problem)
    check = class_ui.slide_check(deck.name, number) if teaching is not None else None
    if teaching is not None:
        store = class_ui.service().store()
        if question is not None and class_revealed:
            tally = classes.tally(store, teaching.class_id, question)
            edges, counts = classes.guess_histogram(tally.numbers, question.answer)
            page.chart(guesses_figure(edges, counts, question.answer, theme=page.theme, presenter=page.presenter),
                       "class-guesses", f"class-{deck.name}-{number}")  # fmt: skip
        if check is not None and check.qid in teaching.record.revealed:  # the page's quick check, answered
            fig = class_ui.check_result(store, teaching.class_id, check, class_ui.check_text(deck.name, number)[1],
                                        own=None, theme=page.theme, presenter=page.presenter)  # fmt: skip
            page.chart(fig, "class-check", f"class-{deck.name}-{number}-check")
        asked = [("guesses", question, "v")] if question is not None and not class_revealed else []
        if check is not None and check.qid not in teaching.record.revealed:
            asked.append(("quick check", check, "k"))
        if asked:
            class_ui.count_badge(teaching, asked)
        if question is not None and not class_revealed:
            # v, as a withheld view's reveal (R is Streamlit's rerun): a slide is withheld or asks the class, not both
            st.button("Reveal the guesses to the class (v)", key="class-reveal", shortcut=None if withheld else "v",
                      type="primary", on_click=classes.reveal,
                      args=(store, teaching.class_id, teaching.key, question))  # fmt: skip
        if check is not None and check.qid not in teaching.record.revealed:
            st.button("Reveal the quick check (k)", key="class-reveal-check", shortcut="k", on_click=classes.reveal,
                      args=(store, teaching.class_id, teaching.key, check))  # fmt: skip
    if teaching is not None and st.session_state.get("class-card"):
        class_ui.join_card(teaching)
    page.readouts(slide.shown_readouts(view))
    if playing and figs:
        sweep = slide.sweep
        for i, value in enumerate(sweep.values):
            frame_view = slide_view(slide.page, state.replace(**{sweep.field: value}), options)
            frame = slide.shown_figures(frame_view)
            if frame:
                page.chart(frame[0], f"deck-sweep-{number}-{i}", f"{deck.name}-{number}", slot=main_slot)
            time.sleep(0.35)

# ---------------------------------------------------------------------- build, upload, download, handout
with st.expander(":material/build: Decks: build your own, upload, download", expanded=False):
    for name, problems in deck_errors.items():
        st.error(f"`decks/{name}.toml` could not load:\n\n" + "\n".join(f"- {p}" for p in problems))
    for problem in draft_problems:
        st.warning(problem)
    # With answers hidden (hide=true) nothing that holds the speaker notes, which hold the answers, is sent: the
    # handout leaves them out (warming_panel) and the TOML downloads (notes included) are not offered.
    if page.hide:
        st.caption(
            f"{HIDDEN_CAPTION}: the handout leaves out the speaker notes, and the deck's TOML (which holds them) "
            "is not offered."
        )
    else:
        st.download_button(
            f":material/download: “{deck.title}” as TOML",
            deck_to_toml(deck),
            file_name=f"{deck.name}.toml",
            mime="application/toml",
            key="deck-toml",
        )
    st.subheader("Your draft deck")
    items = st.session_state.setdefault(DECK_DRAFT, [])
    st.caption(
        "Collect views with **Add this view to a deck** in any page's sidebar, reorder them here, play the draft "
        "(deck `draft`) and download it as TOML; upload a TOML deck to edit it."
    )

    def _swap(i: int, j: int) -> None:
        items[i], items[j] = items[j], items[i]

    def _remove(i: int) -> None:
        items.pop(i)

    def _play_draft(i: int) -> None:
        st.session_state["deck"] = "draft"
        st.session_state["slide"] = i + 1
        st.session_state[_NONCE] = st.session_state.get(_NONCE, 0) + 1

    for i, item in enumerate(items):
        c = st.columns([6, 1, 1, 1, 1])
        c[0].markdown(f"{i + 1}. **{html.escape(item.get('title') or page_label(item['page']))}** · {item['page']}")
        up, down = ":material/arrow_upward:", ":material/arrow_downward:"
        c[1].button(up, key=f"draft-up-{i}", on_click=_swap, args=(i, i - 1), disabled=i == 0)
        c[2].button(down, key=f"draft-down-{i}", on_click=_swap, args=(i, i + 1), disabled=i == len(items) - 1)
        c[3].button(
            ":material/play_arrow:",
            key=f"draft-play-{i}",
            on_click=_play_draft,
            args=(i,),
            help="preview: play from here",
        )
        c[4].button(":material/close:", key=f"draft-remove-{i}", on_click=_remove, args=(i,))
    if draft is not None and not page.hide:
        st.download_button(
            ":material/download: The draft as TOML",
            deck_to_toml(draft),
            file_name="my-deck.toml",
            mime="application/toml",
            key="draft-toml",
        )

    def _from_deck(source: Deck) -> None:
        items[:] = [
            {
                "page": s.page,
                "query": s.query,
                "title": s.title,
                "notes": s.notes,
                "sweep": s.sweep,
                "parts": s.parts,
                "readouts": s.readouts,
                "withhold": s.withhold,
                "figures": s.figures,
            }
            for s in source.slides
        ]

    st.button(
        f"Copy “{deck.title}” into the draft (to reorder it)", key="draft-copy", on_click=_from_deck, args=(deck,)
    )
    upload = st.file_uploader("Upload a TOML deck into the draft", type=["toml"], key="draft-upload")
    if upload is not None:
        try:
            loaded = parse_deck(upload.getvalue().decode("utf-8", errors="replace"), upload.name.rsplit(".", 1)[0])
        except DeckError as exc:
            st.error("This deck cannot be used:\n\n" + "\n".join(f"- {p}" for p in exc.problems))
        else:
            st.success(f"“{loaded.title}”: {len(loaded)} slides, all valid.")
            st.button("Replace the draft with it", key="draft-load", on_click=_from_deck, args=(loaded,))

page.finish()
