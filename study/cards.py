"""Load the interview cards from TOML files, one file per topic; a bad file or card is reported and skipped.

A card file holds an optional ``topic`` and an array of ``[[card]]`` tables:

    topic = "scaling"

    [[card]]
    id = "scaling-01"                      # unique and stable: progress is stored under it
    question = "How big a model for this budget?"
    follow_ups = ["..."]                   # at least one
    traps = ["..."]                        # at least one
    source = "001 §9"                      # seed file and section
    number_source = "Hoffmann et al. 2022" # optional: where a number that core does not compute comes from

    [card.answer]                          # the four parts of a breadth answer
    sentence = "..."
    equation = 'C \\approx 6ND'            # LaTeX
    number = "..."
    trade_off = "..."

    [card.view]                            # optional: the page and link values that show it
    page = "Scaling_laws"
    params = { C = "1.2e21", N = "1e10" }
    figure = "bubble"                      # optional: the view's figure (a figures() part) drawn beside the
                                           # card; default: the tab the link opens, else the main figure

    [[card.checks]]                        # optional: numbers of the answer that core computes
    what = "isoflop_loss"                  # a name in the tests' table of core functions
    args = { C = 1.2e21, N = 1e10 }
    value = 2.388
    shown = "2.388"                        # the number as the card's text prints it: the tests compare it with
                                           # an independent reference at half a unit of its last digit

Problems read like ``cards/lora.toml, card 'lora-03': field 'answer.number' is missing``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

CARD_DIR = Path(__file__).resolve().parents[1] / "cards"
VIEWS_DIR = Path(__file__).resolve().parents[1] / "views"


_SPEC_NAME = re.compile(r'^SPEC\s*=\s*Spec\(\s*"([^"]+)"', re.MULTILINE)  # SPEC = Spec("<page>", ...)
_FIGURES = re.compile(r"^def figures\(", re.MULTILINE)


def page_names(folder: str | Path = VIEWS_DIR) -> tuple[str, ...]:
    """URL names of the pages that draw an idea: every ``views/<module>.py`` holding both ``SPEC =
    Spec("<page>", ...)`` and ``def figures(...)`` at its top level (the drills and deck pages have no figures of
    their own). Read from the source text, so loading the cards imports no view, plotting or torch code. A regular
    expression rather than ``ast.parse``: CPython 3.11's AST constructor can raise a spurious ``SystemError:
    AST constructor recursion depth mismatch`` when another thread converts an AST at the same time (gh-106905; the
    server test of twenty sessions met it on the Drills page)."""
    names = []
    for path in sorted(Path(folder).glob("*.py")):
        text = path.read_text(encoding="utf-8")
        spec = _SPEC_NAME.search(text)
        if spec and _FIGURES.search(text):
            names.append(spec.group(1))
    return tuple(names)


# URL names of the pages a card may link to ("" = no page shows it).
PAGES: tuple[str, ...] = page_names()
ANSWER_PARTS: tuple[str, ...] = ("sentence", "equation", "number", "trade_off")
ID_PATTERN = re.compile(r"[a-z][a-z0-9_]*-[0-9]{2,3}")
_CARD_FIELDS = {"id", "topic", "question", "answer", "follow_ups", "traps", "source", "number_source", "view", "checks"}
_FILE_FIELDS = {"topic", "card"}
_CHECK_FIELDS = {"what", "args", "value", "shown"}


@dataclass(frozen=True)
class Answer:
    """The four parts of a spoken breadth answer: one sentence, one equation, one number, one trade-off."""

    sentence: str
    equation: str  # LaTeX, without the surrounding $
    number: str
    trade_off: str


@dataclass(frozen=True)
class View:
    """The page (its URL name) and link values that show the card's idea; page "" when no page does yet."""

    page: str = ""
    params: tuple[tuple[str, str], ...] = ()
    figure: str = ""  # the figures() part to draw beside the card ("" = the tab the link opens, else main)

    @property
    def query(self) -> dict[str, str]:
        return dict(self.params)

    def url(self) -> str:
        """Relative link, e.g. ``Scaling_laws?C=1.2e21&N=1e10``; "" without a page."""
        if not self.page:
            return ""
        return f"{self.page}?{urlencode(self.params)}" if self.params else self.page


@dataclass(frozen=True)
class Check:
    """A number of the answer that core computes: ``what`` names the quantity, ``args`` its inputs."""

    what: str
    args: tuple[tuple[str, Any], ...]  # values: numbers, strings, booleans or tuples of them
    value: float
    shown: str = ""  # the number as printed; the loader requires it

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.args)


@dataclass(frozen=True)
class Card:
    """One interview card."""

    id: str
    topic: str
    question: str
    answer: Answer
    follow_ups: tuple[str, ...]
    traps: tuple[str, ...]
    source: str
    view: View = View()
    checks: tuple[Check, ...] = ()
    number_source: str = ""
    file: str = ""  # e.g. "cards/lora.toml"

    @property
    def text(self) -> str:
        """Everything a learner reads, in one string (for searching it)."""
        parts = (self.question, *(getattr(self.answer, p) for p in ANSWER_PARTS), *self.follow_ups, *self.traps)
        return "\n".join(parts)


class CardError(ValueError):
    """A card that cannot be loaded; the message names the field."""


def _kind(value: Any) -> str:
    """TOML's name for the type of a parsed value."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, datetime | date | time):
        return "a date or time"
    return type(value).__name__


@dataclass
class _Reader:
    """Reads one card's fields, collecting every problem instead of stopping at the first."""

    raw: Mapping[str, Any]
    problems: list[str] = field(default_factory=list)
    prefix: str = ""  # how paths are named in messages, e.g. "checks[0]."

    def _get(self, path: str) -> tuple[bool, Any]:
        node: Any = self.raw
        for part in path.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return False, None
            node = node[part]
        return True, node

    def text(self, path: str, required: bool = True, allow_empty: bool = False) -> str:
        present, value = self._get(path)
        path = self.prefix + path
        if not present:
            if required:
                self.problems.append(f"field '{path}' is missing")
            return ""
        if not isinstance(value, str):
            self.problems.append(f"field '{path}' must be a string, not {_kind(value)}")
            return ""
        if not allow_empty and not value.strip():
            self.problems.append(f"field '{path}' is empty")
        return value.strip()

    def texts(self, path: str) -> tuple[str, ...]:
        present, value = self._get(path)
        if not present:
            self.problems.append(f"field '{path}' is missing")
            return ()
        if not isinstance(value, list):
            self.problems.append(f"field '{path}' must be an array of strings, not {_kind(value)}")
            return ()
        if not value:
            self.problems.append(f"field '{path}' needs at least one entry")
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                what = "empty" if isinstance(item, str) else f"{_kind(item)}, not a string"
                self.problems.append(f"field '{path}[{i}]' is {what}")
            else:
                out.append(item.strip())
        return tuple(out)

    def table(self, path: str, required: bool = True) -> Mapping[str, Any] | None:
        present, value = self._get(path)
        path = self.prefix + path
        if not present:
            if required:
                self.problems.append(f"field '{path}' is missing")
            return None
        if not isinstance(value, dict):
            self.problems.append(f"field '{path}' must be a table, not {_kind(value)}")
            return None
        return value


def _arg_value(value: Any) -> tuple[bool, Any]:
    """(ok, frozen value) for a check argument: a number, string, boolean, or an array of those."""
    if isinstance(value, bool | int | float | str):
        return True, value
    if isinstance(value, list) and all(isinstance(v, bool | int | float | str) for v in value):
        return True, tuple(value)
    return False, None


def _checks(reader: _Reader) -> tuple[Check, ...]:
    present, raw = reader._get("checks")
    if not present:
        return ()
    if not isinstance(raw, list):
        reader.problems.append(f"field 'checks' must be an array of tables, not {_kind(raw)}")
        return ()
    out = []
    for i, item in enumerate(raw):
        where = f"checks[{i}]"
        if not isinstance(item, dict):
            reader.problems.append(f"field '{where}' must be a table, not {_kind(item)}")
            continue
        sub = _Reader(item, reader.problems, prefix=f"{where}.")
        before = len(reader.problems)
        for name in sorted(set(item) - _CHECK_FIELDS):
            reader.problems.append(f"field '{where}.{name}' is unknown (expected {', '.join(sorted(_CHECK_FIELDS))})")
        what = sub.text("what")
        args: list[tuple[str, Any]] = []
        raw_args = sub.table("args", required=False) or {}
        for name, value in raw_args.items():
            ok, frozen = _arg_value(value)
            if not ok:
                reader.problems.append(f"field '{where}.args.{name}' must be a number, string, boolean or array")
            args.append((name, frozen))
        value = item.get("value")
        if "value" not in item:
            reader.problems.append(f"field '{where}.value' is missing")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            reader.problems.append(f"field '{where}.value' must be a number, not {_kind(value)}")
        shown = sub.text("shown")
        if len(reader.problems) == before:
            out.append(Check(what, tuple(args), float(value), shown))
    return tuple(out)


def _view(reader: _Reader) -> View:
    raw = reader.table("view", required=False)
    if raw is None:
        return View()
    for name in sorted(set(raw) - {"page", "params", "figure"}):
        reader.problems.append(f"field 'view.{name}' is unknown (expected page, params, figure)")
    page = reader.text("view.page", allow_empty=True)
    if page and page not in PAGES:
        reader.problems.append(f"field 'view.page' is {page!r}, not one of {', '.join(PAGES)} (or empty)")
    params = reader.table("view.params", required=False) or {}
    pairs = []
    for key, value in params.items():
        if not isinstance(value, str):
            reader.problems.append(f"field 'view.params.{key}' must be a string (a URL value), not {_kind(value)}")
        else:
            pairs.append((key, value))
    if pairs and not page:
        reader.problems.append("field 'view.params' needs a 'view.page'")
    figure = reader.text("view.figure", required=False)
    if figure and not page:
        reader.problems.append("field 'view.figure' needs a 'view.page'")
    return View(page, tuple(pairs), figure)


def parse_card(raw: Any, file: str = "", default_topic: str = "") -> Card:
    """One card from its parsed TOML table; raises CardError naming every bad field."""
    if not isinstance(raw, dict):
        raise CardError(f"must be a table, not {_kind(raw)}")
    reader = _Reader(raw)
    for name in sorted(set(raw) - _CARD_FIELDS):
        reader.problems.append(f"field '{name}' is unknown")
    card_id = reader.text("id")
    if card_id and not ID_PATTERN.fullmatch(card_id):
        reader.problems.append(f"field 'id' is {card_id!r}; use lowercase words and a number, like 'lora-03'")
    topic = reader.text("topic", required=not default_topic) or default_topic
    question = reader.text("question")
    answer_table = reader.table("answer")
    if answer_table is not None:
        for name in sorted(set(answer_table) - set(ANSWER_PARTS)):
            reader.problems.append(f"field 'answer.{name}' is unknown (expected {', '.join(ANSWER_PARTS)})")
    answer = Answer(*(reader.text(f"answer.{part}") for part in ANSWER_PARTS))
    follow_ups = reader.texts("follow_ups")
    traps = reader.texts("traps")
    source = reader.text("source")
    number_source = reader.text("number_source", required=False)
    view = _view(reader)
    checks = _checks(reader)
    if reader.problems:
        raise CardError("; ".join(reader.problems))
    return Card(card_id, topic, question, answer, follow_ups, traps, source, view, checks, number_source, file)


def _card_label(raw: Any, index: int) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("id"), str) and raw["id"].strip():
        return f"card '{raw['id'].strip()}'"
    return f"card #{index + 1} (no id)"


def load_file(path: str | Path, label: str | None = None) -> tuple[list[Card], list[str]]:
    """The cards of one TOML file and the problems found in it (a bad card is skipped, the others load)."""
    path = Path(path)
    label = label or f"{path.parent.name}/{path.name}"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        return [], [f"{label}: not valid TOML ({err}); the whole file was skipped"]
    except (OSError, UnicodeDecodeError) as err:
        return [], [f"{label}: cannot be read ({err}); skipped"]
    problems = [f"{label}: top-level field '{name}' is unknown" for name in sorted(set(data) - _FILE_FIELDS)]
    topic = data.get("topic", "")
    if not isinstance(topic, str):
        problems.append(f"{label}: top-level field 'topic' must be a string, not {_kind(topic)}")
        topic = ""
    raw_cards = data.get("card", [])
    if not isinstance(raw_cards, list):
        return [], [*problems, f"{label}: 'card' must be an array of tables ([[card]]), not {_kind(raw_cards)}"]
    cards = []
    for i, raw in enumerate(raw_cards):
        try:
            cards.append(parse_card(raw, label, topic.strip()))
        except CardError as err:
            problems.append(f"{label}, {_card_label(raw, i)}: {err}")
    return cards, problems


def load_cards(folder: str | Path = CARD_DIR) -> tuple[list[Card], list[str]]:
    """All cards of ``folder/*.toml`` (files in name order) and the problems found; a card whose id is taken
    already is skipped. A missing folder gives no cards and one problem."""
    folder = Path(folder)
    if not folder.is_dir():
        return [], [f"{folder}: no such folder of card files"]
    cards: list[Card] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path in sorted(folder.glob("*.toml")):
        file_cards, file_problems = load_file(path, f"{folder.name}/{path.name}")
        problems += file_problems
        for card in file_cards:
            if card.id in seen:
                problems.append(f"{card.file}, card '{card.id}': duplicate id (first in {seen[card.id]}); skipped")
                continue
            seen[card.id] = card.file
            cards.append(card)
    return cards, problems


def by_topic(cards: Iterable[Card]) -> dict[str, list[Card]]:
    """Cards grouped by topic, topics in first-seen order."""
    out: dict[str, list[Card]] = {}
    for card in cards:
        out.setdefault(card.topic, []).append(card)
    return out
