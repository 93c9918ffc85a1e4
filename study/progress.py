"""A learner's drill progress: FSRS spaced-repetition state per named profile, kept locally in SQLite.

The database lives in ``platformdirs.user_data_dir("llm-lesson-explorer")``, or in the folder named by the
environment variable ``LESSON_DATA_DIR``, or in the folder given to :class:`ProgressStore`. Each profile (a name
the learner picks) has its own cards and review log, so learners on one shared classroom server do not mix. No
account and no network: export and import move a profile as JSON.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs
from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler, State

APP_NAME = "llm-lesson-explorer"
ENV_VAR = "LESSON_DATA_DIR"
DB_NAME = "progress.sqlite3"
EXPORT_FORMAT = "llm-lesson-explorer/progress"
EXPORT_VERSION = 1
PROFILE_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,40}")
CARD_ID_MAX = 100
RATINGS: dict[str, Rating] = {"again": Rating.Again, "hard": Rating.Hard, "good": Rating.Good, "easy": Rating.Easy}
_STATES = {State.Learning: "learning", State.Review: "review", State.Relearning: "relearning"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cards (
    profile TEXT NOT NULL,
    card_id TEXT NOT NULL,
    due TEXT NOT NULL,          -- ISO 8601, UTC: sorts as text
    fsrs TEXT NOT NULL,         -- fsrs.Card.to_dict() as JSON
    reps INTEGER NOT NULL DEFAULT 0,
    lapses INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (profile, card_id)
);
CREATE TABLE IF NOT EXISTS reviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    profile TEXT NOT NULL,
    card_id TEXT NOT NULL,
    rating INTEGER NOT NULL,    -- 1 again, 2 hard, 3 good, 4 easy
    reviewed_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS reviews_profile ON reviews (profile, reviewed_at);
"""


def data_dir(override: str | Path | None = None) -> Path:
    """The folder of the database: ``override``, else $LESSON_DATA_DIR, else the platform's user data folder."""
    if override is not None:
        return Path(override)
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env)
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def validate_profile(name: Any) -> str:
    """A profile name: 1 to 40 letters, digits, '-' or '_' (no spaces). Raises ValueError saying what is wrong."""
    if not isinstance(name, str):
        raise ValueError(f"a profile name must be text, not {type(name).__name__}")
    if not PROFILE_PATTERN.fullmatch(name):
        if not name:
            raise ValueError("a profile name cannot be empty")
        if len(name) > 40:
            raise ValueError(f"a profile name has at most 40 characters; {name[:40]!r}... has {len(name)}")
        raise ValueError(f"profile name {name!r}: use only letters, digits, '-' and '_' (1 to 40 of them)")
    return name


def _card_id(card_id: Any) -> str:
    if not isinstance(card_id, str) or not card_id.strip() or len(card_id) > CARD_ID_MAX:
        raise ValueError(f"a card id must be non-empty text of at most {CARD_ID_MAX} characters; got {card_id!r}")
    return card_id


def _utc(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    if not isinstance(now, datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"the time must be a timezone-aware datetime; got {now!r}")
    return now.astimezone(UTC)


def _rating(rating: Any) -> Rating:
    if isinstance(rating, str) and rating.strip().lower() in RATINGS:
        return RATINGS[rating.strip().lower()]
    if isinstance(rating, int) and not isinstance(rating, bool) and 1 <= rating <= 4:
        return Rating(rating)
    raise ValueError(f"a grade must be one of {', '.join(RATINGS)} (or 1 to 4); got {rating!r}")


@dataclass(frozen=True)
class CardState:
    """Where one card stands for one profile."""

    card_id: str
    due: datetime  # UTC
    state: str  # "learning", "review" or "relearning"
    stability: float | None  # days until recall probability falls to 90% (FSRS)
    difficulty: float | None  # 1 (easy) to 10 (hard)
    last_review: datetime | None
    reps: int  # reviews so far
    lapses: int  # "again" after the card had reached review


@dataclass(frozen=True)
class Review:
    """One grade given."""

    card_id: str
    rating: str  # again, hard, good or easy
    reviewed_at: datetime


def _state_from_row(card_id: str, fsrs_json: str, reps: int, lapses: int) -> CardState:
    card = FsrsCard.from_dict(json.loads(fsrs_json))
    return CardState(
        card_id, card.due, _STATES[card.state], card.stability, card.difficulty, card.last_review, reps, lapses
    )


class ProgressStore:
    """FSRS progress of every profile in one SQLite file; each call opens its own short connection, so one store
    may be shared by the threads of a server."""

    busy_timeout_s: float = 10.0  # how long a call waits for another connection's write to finish

    def __init__(self, folder: str | Path | None = None, scheduler: Scheduler | None = None) -> None:
        self.folder = data_dir(folder)
        self.path = self.folder / DB_NAME
        self.scheduler = scheduler or Scheduler()
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._transaction() as con:
            con.executescript(_SCHEMA)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=self.busy_timeout_s)) as con, con:
            yield con

    # ------------------------------------------------------------------------------------------------ reading

    def profiles(self) -> list[str]:
        """Profiles that have graded at least one card, sorted."""
        with self._transaction() as con:
            rows = con.execute("SELECT DISTINCT profile FROM cards ORDER BY profile").fetchall()
        return [r[0] for r in rows]

    def state(self, profile: str, card_id: str) -> CardState | None:
        """The card's state for the profile; None before its first grade."""
        profile, card_id = validate_profile(profile), _card_id(card_id)
        with self._transaction() as con:
            row = con.execute(
                "SELECT fsrs, reps, lapses FROM cards WHERE profile = ? AND card_id = ?", (profile, card_id)
            ).fetchone()
        return None if row is None else _state_from_row(card_id, *row)

    def states(self, profile: str) -> dict[str, CardState]:
        """Every graded card of the profile."""
        profile = validate_profile(profile)
        with self._transaction() as con:
            rows = con.execute("SELECT card_id, fsrs, reps, lapses FROM cards WHERE profile = ?", (profile,)).fetchall()
        return {r[0]: _state_from_row(*r) for r in rows}

    def due(self, profile: str, now: datetime | None = None, card_ids: Iterable[str] | None = None) -> list[str]:
        """Card ids to drill now: graded cards whose due time has come, most overdue first; then, when
        ``card_ids`` (the deck) is given, its cards never graded, in deck order. Graded cards not in the deck
        are left out when a deck is given."""
        profile, now = validate_profile(profile), _utc(now)
        with self._transaction() as con:
            rows = con.execute(
                "SELECT card_id, due FROM cards WHERE profile = ? ORDER BY due, card_id", (profile,)
            ).fetchall()
        graded = {card_id for card_id, _ in rows}
        due = [card_id for card_id, when in rows if datetime.fromisoformat(when) <= now]
        if card_ids is None:
            return due
        deck = list(dict.fromkeys(card_ids))
        in_deck = set(deck)
        return [c for c in due if c in in_deck] + [c for c in deck if c not in graded]

    def reviews(self, profile: str) -> list[Review]:
        """The profile's grades, oldest first."""
        profile = validate_profile(profile)
        with self._transaction() as con:
            rows = con.execute(
                "SELECT card_id, rating, reviewed_at FROM reviews WHERE profile = ? ORDER BY reviewed_at, id",
                (profile,),
            ).fetchall()
        names = {int(v): k for k, v in RATINGS.items()}
        return [Review(c, names[r], datetime.fromisoformat(t)) for c, r, t in rows]

    # ------------------------------------------------------------------------------------------------ writing

    def grade(self, profile: str, card_id: str, rating: str | int | Rating, now: datetime | None = None) -> CardState:
        """Record a self-grade (again, hard, good, easy) and reschedule the card with FSRS; returns its new state."""
        profile, card_id, rating, now = validate_profile(profile), _card_id(card_id), _rating(rating), _utc(now)
        with self._transaction() as con:
            # the write lock before the read: two grades of one card at once (an interview's end writing the
            # candidate's grade while the candidate grades the card on the drills page) both count, one after the other
            con.execute("BEGIN IMMEDIATE")
            row = con.execute(
                "SELECT fsrs, reps, lapses FROM cards WHERE profile = ? AND card_id = ?", (profile, card_id)
            ).fetchone()
            if row is None:
                # fsrs wants an int id (its default sleeps 1 ms to make one unique); ours is the text id
                card, reps, lapses = FsrsCard(card_id=zlib.crc32(card_id.encode()), due=now), 0, 0
            else:
                card, reps, lapses = FsrsCard.from_dict(json.loads(row[0])), row[1], row[2]
            lapses += int(rating == Rating.Again and card.state == State.Review)
            card, _ = self.scheduler.review_card(card, rating, now)
            reps += 1
            con.execute(
                "INSERT OR REPLACE INTO cards (profile, card_id, due, fsrs, reps, lapses) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    profile,
                    card_id,
                    card.due.astimezone(UTC).isoformat(timespec="microseconds"),
                    json.dumps(card.to_dict()),
                    reps,
                    lapses,
                ),
            )
            con.execute(
                "INSERT INTO reviews (profile, card_id, rating, reviewed_at) VALUES (?, ?, ?, ?)",
                (profile, card_id, int(rating), now.isoformat()),
            )
        return _state_from_row(card_id, json.dumps(card.to_dict()), reps, lapses)

    def delete_profile(self, profile: str) -> None:
        """Forget everything of one profile."""
        profile = validate_profile(profile)
        with self._transaction() as con:
            con.execute("DELETE FROM cards WHERE profile = ?", (profile,))
            con.execute("DELETE FROM reviews WHERE profile = ?", (profile,))

    # ------------------------------------------------------------------------------------- export and import

    def export_json(self, profile: str) -> str:
        """The profile's cards and review log as JSON text (the input of :meth:`import_json`)."""
        profile = validate_profile(profile)
        with self._transaction() as con:
            cards = con.execute(
                "SELECT card_id, fsrs, reps, lapses FROM cards WHERE profile = ? ORDER BY card_id", (profile,)
            ).fetchall()
            reviews = con.execute(
                "SELECT card_id, rating, reviewed_at FROM reviews WHERE profile = ? ORDER BY reviewed_at, id",
                (profile,),
            ).fetchall()
        names = {int(v): k for k, v in RATINGS.items()}
        doc = {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "profile": profile,
            "exported_at": datetime.now(UTC).isoformat(),
            "cards": [
                {"card_id": c, "reps": reps, "lapses": lapses, "fsrs": _public_fsrs(json.loads(f))}
                for c, f, reps, lapses in cards
            ],
            "reviews": [{"card_id": c, "rating": names[r], "reviewed_at": t} for c, r, t in reviews],
        }
        return json.dumps(doc, indent=1, ensure_ascii=False)

    def import_json(self, profile: str, text: str | bytes) -> int:
        """Replace the profile's progress with an export (from any profile); returns the number of cards.

        Everything is checked before anything is written: a bad file raises ValueError naming what is wrong,
        and the profile keeps its old progress.
        """
        profile = validate_profile(profile)
        cards, reviews = parse_export(text)
        with self._transaction() as con:
            con.execute("DELETE FROM cards WHERE profile = ?", (profile,))
            con.execute("DELETE FROM reviews WHERE profile = ?", (profile,))
            con.executemany(
                "INSERT INTO cards (profile, card_id, due, fsrs, reps, lapses) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (profile, c, card.due.isoformat(timespec="microseconds"), json.dumps(card.to_dict()), reps, lapses)
                    for c, card, reps, lapses in cards
                ],
            )
            con.executemany(
                "INSERT INTO reviews (profile, card_id, rating, reviewed_at) VALUES (?, ?, ?, ?)",
                [(profile, c, int(r), t.isoformat()) for c, r, t in reviews],
            )
        return len(cards)


def _public_fsrs(d: dict[str, Any]) -> dict[str, Any]:
    """The FSRS fields worth exporting (fsrs's own int card id is internal)."""
    return {k: d[k] for k in ("state", "step", "stability", "difficulty", "due", "last_review")}


def _iso(value: Any, where: str, optional: bool = False) -> datetime | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{where} must be an ISO 8601 date-time text, not {value!r}")
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{where} is not an ISO 8601 date-time: {value!r}") from None
    if t.tzinfo is None:
        raise ValueError(f"{where} has no time zone: {value!r}")
    return t.astimezone(UTC)


def _number(value: Any, where: str, lo: float, hi: float, optional: bool = True) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
        raise ValueError(f"{where} must be a number from {lo:g} to {hi:g}, not {value!r}")
    return float(value)


def _count(item: dict[str, Any], key: str, where: str) -> int:
    value = item.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}.{key} must be a whole number >= 0, not {value!r}")
    return value


def parse_export(text: str | bytes) -> tuple[list[tuple[str, FsrsCard, int, int]], list[tuple[str, Rating, datetime]]]:
    """Check an export and read it: ([(card_id, fsrs card, reps, lapses)], [(card_id, rating, time)]).

    Raises ValueError with a message that names the bad entry and field."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"the progress file is not JSON: {err}") from None
    if not isinstance(doc, dict):
        raise ValueError("the progress file must hold a JSON object")
    if doc.get("format") != EXPORT_FORMAT:
        raise ValueError(f"not a progress export of this app: 'format' is {doc.get('format')!r}, not {EXPORT_FORMAT!r}")
    if doc.get("version") != EXPORT_VERSION:
        raise ValueError(f"export version {doc.get('version')!r} is not supported (this app reads {EXPORT_VERSION})")
    raw_cards, raw_reviews = doc.get("cards"), doc.get("reviews", [])
    if not isinstance(raw_cards, list):
        raise ValueError("'cards' must be a list")
    if not isinstance(raw_reviews, list):
        raise ValueError("'reviews' must be a list")
    cards: list[tuple[str, FsrsCard, int, int]] = []
    seen: set[str] = set()
    for i, item in enumerate(raw_cards):
        where = f"cards[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{where} must be an object")
        card_id = item.get("card_id")
        try:
            _card_id(card_id)
        except ValueError as err:
            raise ValueError(f"{where}.card_id: {err}") from None
        if card_id in seen:
            raise ValueError(f"{where}.card_id {card_id!r} appears twice")
        seen.add(card_id)
        f = item.get("fsrs")
        if not isinstance(f, dict):
            raise ValueError(f"{where}.fsrs must be an object")
        try:
            state = State(f.get("state"))
        except ValueError:
            raise ValueError(f"{where}.fsrs.state must be 1 (learning), 2 (review) or 3 (relearning)") from None
        step = f.get("step")
        if step is not None and (isinstance(step, bool) or not isinstance(step, int) or step < 0):
            raise ValueError(f"{where}.fsrs.step must be a whole number >= 0 or null")
        card = FsrsCard(
            card_id=zlib.crc32(card_id.encode()),
            state=state,
            step=step,
            stability=_number(f.get("stability"), f"{where}.fsrs.stability", 0.0, 1e6),
            difficulty=_number(f.get("difficulty"), f"{where}.fsrs.difficulty", 0.0, 10.0),
            due=_iso(f.get("due"), f"{where}.fsrs.due"),
            last_review=_iso(f.get("last_review"), f"{where}.fsrs.last_review", optional=True),
        )
        cards.append((card_id, card, _count(item, "reps", where), _count(item, "lapses", where)))
    reviews: list[tuple[str, Rating, datetime]] = []
    for i, item in enumerate(raw_reviews):
        where = f"reviews[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{where} must be an object")
        try:
            card_id = _card_id(item.get("card_id"))
            rating = _rating(item.get("rating"))
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        reviews.append((card_id, rating, _iso(item.get("reviewed_at"), f"{where}.reviewed_at")))
    return cards, reviews
