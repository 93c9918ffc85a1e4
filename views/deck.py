"""The deck player's state: which deck, which slide, a blanked screen, the talk shared with a speaker view, the class
it runs."""

from __future__ import annotations

from views.state import Field, Spec

MAX_SLIDES = 200

SPEC = Spec(
    "Deck",
    (
        Field("deck", "Deck", "text", "lesson", max_chars=80, help="a file decks/<name>.toml, or `draft`"),
        Field("slide", "Slide", "int", 1, lo=1, hi=MAX_SLIDES, step=1, help="type a number then Enter to jump"),
        Field("blank", "Blank screen (b)", "bool", False),
        Field("talk", "Talk id", "text", "", max_chars=40, help="shared by this tab and its speaker view"),
        Field("speaker", "Speaker view", "bool", False),
        Field(
            "teach", "Class", "text", "", max_chars=22, help="the class this deck runs (its key stays in your browser)"
        ),
    ),
)
