"""The drill page's state and what it shows: one interview card at a time, for a learner alone, a candidate or an
interviewer.

Roles: ``solo`` (the default: reveal the model answer part by part, then self-grade), ``candidate`` (what a
candidate sees on a shared screen or link: the question, the countdown, the card's figure with its answer held back
where the page can hold it back (Predict first), and "Show me"; no answer part is rendered at all) and
``interviewer`` (the whole answer, follow-ups, traps and a scoring rubric). Hidden answers (``hide=true``) turn any
role into the candidate's view.

Nothing here imports Streamlit: the page script draws what :func:`drill` decides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from urllib.parse import urlencode

from study.cards import ANSWER_PARTS, Card, by_topic, load_cards
from views import Options, View, catalog
from views.catalog import parts_for
from views.state import Field, Spec, State

CARDS, CARD_PROBLEMS = load_cards()
BY_ID: dict[str, Card] = {c.id: c for c in CARDS}
TOPICS: tuple[str, ...] = tuple(by_topic(CARDS)) or ("none",)
ROLES: tuple[str, ...] = ("solo", "candidate", "interviewer")
PART_LABELS: dict[str, str] = {
    "sentence": "In one sentence",
    "equation": "One equation",
    "number": "One number",
    "trade_off": "One trade-off",
}
REVEAL_LABELS: dict[str, str] = {
    "sentence": "Reveal the sentence",
    "equation": "Reveal the equation",
    "number": "Reveal the number",
    "trade_off": "Reveal the trade-off",
}
GRADES: tuple[str, ...] = ("again", "hard", "good", "easy")

SPEC = Spec(
    "Drills",
    (
        Field("topics", "Topics", "multi", TOPICS, choices=TOPICS, help="The deck: cards of these topics."),
        Field(
            "due",
            "Due today only",
            "bool",
            False,
            help="Only the cards your schedule asks for today (and cards you have not graded yet); needs your name.",
        ),
        Field(
            "card",
            "Card",
            "text",
            "",
            max_chars=100,
            help="The id of the card shown, e.g. scaling-01 (empty: the first card of the deck).",
        ),
        Field(
            "learner",
            "Your name (keeps your progress)",
            "text",
            "",
            max_chars=100,
            aliases=("profile",),
            help="1 to 40 letters, digits, '-' or '_'. Your grades are kept on this machine under this name.",
        ),
        Field(
            "role",
            "Role",
            "choice",
            "solo",
            choices=ROLES,
            help="solo: reveal and grade yourself · candidate: the question only · interviewer: everything, "
            "with a rubric",
        ),
        Field("reveal", "Answer parts revealed", "int", 0, lo=0, hi=len(ANSWER_PARTS), widget="slider"),
        Field("seconds", "Seconds to answer", "int", 75, lo=60, hi=90, step=5, widget="slider"),
        Field("interview", "Shared session", "text", "", max_chars=22,
              help="The shared mock interview this link belongs to (set when the interviewer starts one)."),
        Field("seat", "Candidate's seat", "text", "", max_chars=22,
              help="The candidate's place in the shared interview (in the link the interviewer sends)."),
    ),
)  # fmt: skip


@dataclass(frozen=True)
class Drill:
    """What the page shows for one state."""

    deck: tuple[str, ...]  # ids of the cards drilled, in order: the chosen topics (only due ones when asked)
    card: Card | None  # the card shown (None: an empty deck and no card asked for)
    role: str  # the role the page renders: "candidate" whenever answers are hidden
    parts: tuple[str, ...]  # answer parts to render, in order ("" of them for a candidate)
    notices: tuple[tuple[str, str], ...] = ()  # (kind, text)

    @property
    def position(self) -> int | None:
        """Index of the card in the deck; None when it is not in it."""
        if self.card is None or self.card.id not in self.deck:
            return None
        return self.deck.index(self.card.id)


def deck_of(topics: Sequence[str], due_ids: Sequence[str] | None = None) -> tuple[str, ...]:
    """Ids of the cards of ``topics`` in file order; with ``due_ids`` only those, in the schedule's order."""
    chosen = [c.id for c in CARDS if c.topic in set(topics)]
    if due_ids is None:
        return tuple(chosen)
    keep = set(chosen)
    return tuple(i for i in dict.fromkeys(due_ids) if i in keep)


def drill(state: State, due_ids: Sequence[str] | None = None, hide: bool = False) -> Drill:
    """The deck, the card and the answer parts to render for a state (``due_ids``: the learner's due cards,
    when the deck is filtered by them; ``hide``: answers hidden app-wide)."""
    notices: list[tuple[str, str]] = []
    deck = deck_of(state.topics, due_ids if state.due else None)
    card = None
    if state.card:
        card = BY_ID.get(state.card.strip())
        if card is None:
            notices.append(("warning", f"There is no card `{state.card}`; showing the first card of the deck."))
    if card is None and deck:
        card = BY_ID[deck[0]]
    if not deck:
        if not state.topics:
            notices.append(("info", "Choose at least one topic to drill."))
        elif state.due and due_ids is not None:
            notices.append(("info", "Nothing is due today in these topics. Turn off “Due today only” to keep going."))
    role = "candidate" if hide else state.role
    if role == "candidate":
        parts: tuple[str, ...] = ()
    elif role == "interviewer":
        parts = ANSWER_PARTS
    else:
        parts = ANSWER_PARTS[: state.reveal]
    return Drill(deck, card, role, parts, tuple(notices))


def step(deck: Sequence[str], current: str, by: int) -> str:
    """The card ``by`` places from ``current`` in the deck, wrapping around (the first card if it is not in it)."""
    if not deck:
        return current
    if current not in deck:
        return deck[0]
    return deck[(list(deck).index(current) + by) % len(deck)]


def next_card(deck: Sequence[str], current: str, due_ids: Sequence[str]) -> str:
    """The card to drill after ``current`` was graded: the first due card of the deck other than it, else the
    next card of the deck."""
    in_deck = set(deck)
    for card_id in due_ids:
        if card_id != current and card_id in in_deck:
            return card_id
    return step(deck, current, 1)


_NOT_FOR_CANDIDATE = frozenset({"role", "reveal", "card", "learner", "profile", "due", "hide", "interview", "seat"})


def candidate_query(query: Mapping[str, str], card_id: str) -> dict[str, str]:
    """The link values for the candidate: the same card and settings, role candidate, nothing revealed, answers
    hidden on every page the candidate opens from it, and no learner name or due filter."""
    out = {k: v for k, v in query.items() if k not in _NOT_FOR_CANDIDATE}
    return {**out, "card": card_id, "role": "candidate", "reveal": "0", "hide": "true"}


def candidate_link(base_url: str, query: Mapping[str, str], card_id: str) -> str:
    """The candidate's link, from the page's address (without its query) and link values."""
    return f"{base_url}?{urlencode(candidate_query(query, card_id))}"


# ------------------------------------------------------------------------------------------ the card's figure


@dataclass(frozen=True)
class CardFigure:
    """What to draw beside a card: ``figures(state, options)`` of the card's page, and which of its figures to show.

    ``predict`` is True when the state has the page's "Predict first" switch on and no guess: the figure is then the
    page's held-back one, with its answer absent from what the browser receives."""

    page: str
    state: State
    parts: frozenset[str]
    figure: str  # the card's named figure ("" = the tab its link opens, else the view's first figure)
    predict: bool = False
    tab: bool = False  # the card's link names a tab
    guess: Field | None = None  # held back (``predict``): the page's guess field, for a guess beside the figure

    def options(self, theme: str = "light", presenter: bool = False) -> Options:
        return Options(theme=theme, presenter=presenter, parts=self.parts)


def _view_modules() -> dict[str, ModuleType]:
    return catalog.view_modules()  # the same table of view modules the lecture decks draw from


def _predict_fields(spec: Spec) -> tuple[str, str] | None:
    """(switch, guess) names of a page's "Predict first" fields, or None for a page without them."""
    switches = [f.name for f in spec.fields if f.kind == "bool" and f.name.startswith("predict_")]
    guesses = [f.name for f in spec.fields if f.name.startswith("guess_")]
    return (switches[0], guesses[0]) if switches and guesses else None


def card_figure(card: Card, answer_shown: bool, guess: float | int | None = None) -> CardFigure | None:
    """The figure request for a card's view; None when no page shows its idea, or when the answer is not shown yet
    and the figure would give it away.

    Predict-first rule (lesson 001 section 1; issue 15): before the answer is shown (a candidate, or a learner who
    has not revealed the whole answer) only a figure that a page can hold back is drawn: the page's main lesson
    figure with its "Predict first" switch on and no guess, and the page's guess field beside it; ``guess`` (a
    committed guess) draws the same figure revealed, the guess on it. A card whose figure is a tab, or whose page has
    no "Predict first" switch, draws nothing until the answer is shown (its page link stays)."""
    if not card.view.page:
        return None
    modules = _view_modules()
    if card.view.page not in modules:
        return None
    spec: Spec = modules[card.view.page].SPEC
    state, problems = spec.parse(card.view.query)
    if problems:
        return None
    parts = parts_for(card.view.page, state, (card.view.figure,) if card.view.figure else ())
    tabs = [f for f in spec.fields if f.widget == "tabs"]
    tab = any(name in card.view.query for f in tabs for name in (f.name, *f.aliases))
    if answer_shown:
        return CardFigure(card.view.page, state, parts, card.view.figure, tab=tab)
    fields = _predict_fields(spec)
    if fields is None or card.view.figure not in ("", "main"):
        return None
    switch, guess_name = fields
    field = spec[guess_name]
    if guess is not None and field.check(guess) is not None:  # out of the field's range: no guess yet
        guess = None
    held_back = state.replace(**{switch: True, guess_name: guess})
    request = CardFigure(card.view.page, held_back, frozenset({"main"}), "main", predict=True, guess=field)
    # only the page's lead figure can be held back: a card whose link opens another tab gets none
    return request if all(state[f.name] == f.default for f in tabs) else None


def pick_figure(request: CardFigure, view: View) -> str | None:
    """Name of the figure of ``view`` to draw for ``request``: the card's named figure, else the figure of the tab
    its link names, else the view's first figure (a page's lead figure); held back (``predict``): the first figure,
    only while the view reports it hidden (or revealed by a guess). None when there is no such figure."""
    names = list(view.figures)
    if not names:
        return None
    if request.predict:  # held back, or revealed by the guess committed beside it
        return names[0] if view.facts.get("predict") in ("hidden", "revealed") else None
    if request.figure:
        return request.figure if request.figure in view.figures else None
    tab = [n for n in names if n in request.parts and n != "main"] if request.tab else []
    return tab[0] if tab else names[0]
