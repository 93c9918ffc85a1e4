"""Predict first: a lesson figure's answer is held back until the learner commits a guess (lesson 001, section 1).

Each lesson page adds two fields to its spec: a switch (:func:`switch`) and an optional guess. While the switch is
on and the guess is empty the page's ``figures()`` leaves the answer out of everything it returns: the figure (its
traces, annotations and slider steps), the readouts that give it away (shown as "?"), the tables behind it and the
texts. Once a guess is in the field (typing it and pressing Enter commits it; the link carries it), the full figure
comes back with the guess drawn on it, and readouts give the truth, the guess and the error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Literal

from views import Readout, View
from views.state import Field, State

Mode = Literal["off", "hidden", "revealed"]
HIDDEN = "?"
HIDDEN_HELP = "Hidden until you commit a guess (Predict first)."


def switch(name: str) -> Field:
    """The page's "Predict first" switch (``name`` is unique app-wide, like every field)."""
    return Field(
        name,
        ":material/psychology: Predict first",
        "bool",
        False,
        help="Hide the answer until you have committed a guess; the guess stays in the link you share.",
    )


def guess(name: str, label: str, kind: str, lo: float, hi: float, **more: object) -> Field:
    """An optional number field for the guess: empty until the learner commits one."""
    extra = (("placeholder", "your guess, then Enter"),)
    return Field(name, label, kind, None, lo=lo, hi=hi, optional=True, extra=extra, **more)  # type: ignore[arg-type]


def mode(state: State, switch_name: str, guess_name: str) -> Mode:
    """``off`` (switch off), ``hidden`` (on, no guess yet) or ``revealed`` (on, a guess committed)."""
    if not state[switch_name]:
        return "off"
    return "hidden" if state[guess_name] is None else "revealed"


def mask(readouts: Sequence[Readout], labels: Iterable[str]) -> list[Readout]:
    """The readouts with the value and help of those whose label starts with one of ``labels`` replaced by "?"."""
    prefixes = tuple(labels)
    return [replace(r, value=HIDDEN, help=HIDDEN_HELP) if r.label.startswith(prefixes) else r for r in readouts]


def hide(view: View, question: str, readouts: Iterable[str] = (), tables: Iterable[str] = ()) -> None:
    """Mark ``view`` as holding back its answer: the notice, masked readouts, tables left out, ``facts["predict"]``."""
    view.notices.append(("info", f"**Predict first.** {question} Enter your guess in the sidebar to see the answer."))
    view.readouts = mask(view.readouts, readouts)
    for name in list(tables):
        view.tables.pop(name, None)
    view.facts["predict"] = "hidden"


def reveal(
    view: View, truth: Readout, guess_text: str, error: str, error_help: str | None = None, *, value: float
) -> None:
    """The truth, the guess and the error, first among the readouts; ``facts["predict"]`` = ``revealed``.

    ``value`` is the answer as a number, in the unit of the page's guess field (a guess equal to it has no error), so
    that a class's guesses can be compared with it: ``facts["truth"]``."""
    view.readouts = [
        truth,
        Readout("Your guess", guess_text, "as committed (it is in the link)"),
        Readout("Error", error, error_help),
        *view.readouts,
    ]
    view.facts["predict"] = "revealed"
    view.facts["truth"] = float(value)


def ratio_text(guess_value: float, truth: float) -> str:
    """How far a guess of a positive quantity is off, as a factor: "× 1.52 too large", "÷ 2.0 too small", "spot on"."""
    if guess_value <= 0 or truth <= 0:
        return "—"
    r = guess_value / truth
    if abs(r - 1) < 0.005:
        return "spot on"
    return f"× {r:.3g} too large" if r > 1 else f"÷ {1 / r:.3g} too small"
