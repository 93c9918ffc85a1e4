"""What a shared mock interview is: an interviewer drives, one candidate's screen follows, a rubric and a note are
kept per card, and a summary (and the candidate's grades) comes out at the end.

An interview is a class of the class store (classroom/store.py) with one seat: the record's ``deck`` is
:data:`DECK`, the teacher key is the interviewer's key (kept as its SHA-256, never in a link), and the candidate's
seat is a student token made at the start and carried by the one link the interviewer sends. What the two screens
share lives in the class's named documents (short texts, some of them JSON); a write the candidate's screen must
follow bumps the class's version, so the follow signal (pages/frame/follow.py) reruns it; the interviewer's rubric,
notes and grades do not bump it: the candidate's screen has nothing to redraw for them, and receives them only at
the end, in the summary, if the interviewer shares it.

The one countdown: the store keeps when the current card was asked (the server's time), and both screens count down
from it, so the two browsers agree to within the time a rerun takes to reach them, whatever their own clocks say
(across machines, the servers' clocks must agree).

Every step takes the store and, where time matters, the time (seconds since the epoch: a fake clock in tests). The
interviewer's steps check the key; the candidate's take a session that the caller read with the candidate's seat
(:func:`as_candidate`). A refusal raises ClassError with a message a person can act on; nothing here draws
anything.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from classroom import classes as cl
from classroom.store import ClassRecord, ClassStore

DECK = "interview"  # the record's deck: an interview, which no class page plays
CANDIDATE = "candidate"  # the seat's display name
DEFAULT_HOURS = 3.0
NOTE_MAX = 2000  # characters of a note per card
VIEW_MAX = 4000  # characters of a driven page's link values, as JSON
SECONDS_RANGE = (60, 90)  # the countdown's length (the drills' slider)
CARD_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,100}")
PAGE_PATTERN = re.compile(r"[A-Za-z0-9_ -]{1,60}")
GRADES = ("again", "hard", "good", "easy")

Screen = Literal["card", "view"]


@dataclass(frozen=True)
class Started:
    """An interview just started: the interviewer's link carries ``class_id`` (as ``interview=``) and their browser
    keeps ``key``; the candidate's link carries ``class_id`` and ``seat``."""

    class_id: str
    key: str
    seat: str


@dataclass(frozen=True)
class Kept:
    """What the interviewer kept for one card."""

    order: int  # 1 for the first card asked
    spent: float = 0.0  # seconds the card was the current one (a lesson page shown meanwhile included), finished turns
    ticks: tuple[str, ...] = ()  # rubric parts the candidate covered
    note: str = ""
    grade: str = ""  # "" until graded; one of GRADES


@dataclass(frozen=True)
class Session:
    """The shared state of one interview, as both screens read it."""

    record: ClassRecord
    card: str = ""  # the card on screen ("" before the first)
    asked_at: float = 0.0  # when it was asked (or its countdown restarted)
    turn: int = 0  # grows with every ask and restart: a new countdown each time
    seconds: int = 75  # the countdown's length
    show: str = ""  # the card whose figure is open on both screens
    reveal: str = ""  # the card whose model answer the candidate may see
    screen: Screen = "card"  # "view": both screens show the lesson page view the interviewer drives
    view_page: str = ""
    view_query: Mapping[str, str] = field(default_factory=dict)
    profile: str = ""  # the candidate's drill profile (their grades go there)
    seen: bool = False  # the candidate has opened the link
    ended_at: float | None = None
    shared: bool = False  # the summary is shown to the candidate at the end
    graded: tuple[str, ...] = ()  # cards whose grades went into the profile
    kept: Mapping[str, Kept] = field(default_factory=dict)
    pulse: str = ""  # changes with every step the candidate takes: what the interviewer's screen watches

    @property
    def class_id(self) -> str:
        return self.record.class_id

    @property
    def ended(self) -> bool:
        return self.ended_at is not None or self.record.closed

    def spent(self, card: str, now: float) -> float:
        """Seconds ``card`` has been on screen, the running turn included."""
        k = self.kept.get(card)
        total = k.spent if k is not None else 0.0
        if card == self.card and self.card and not self.ended:
            total += max(0.0, now - self.asked_at)
        return total

    def left(self, now: float) -> float:
        """Seconds left on the countdown (0 when it has run out)."""
        return max(0.0, self.seconds - max(0.0, now - self.asked_at)) if self.card else float(self.seconds)

    def asked(self) -> list[str]:
        """The cards asked, in the order they were first asked."""
        return sorted(self.kept, key=lambda c: self.kept[c].order)


# --------------------------------------------------------------------------------------------- reading the session


def _json(raw: str | None, default: Any) -> Any:
    """A document's JSON, or ``default`` for a missing or damaged one (never an exception on a page)."""
    if not raw:
        return default
    try:
        value = json.loads(raw)
    except ValueError:
        return default
    return value if isinstance(value, type(default)) else default


def _number(value: Any, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else default


def _kept(raw: str | None) -> Kept | None:
    d = _json(raw, {})
    if not d:
        return None
    raw_ticks = d.get("ticks")
    ticks = tuple(t for t in raw_ticks if isinstance(t, str)) if isinstance(raw_ticks, list) else ()
    grade = d.get("grade") if d.get("grade") in GRADES else ""
    note = d.get("note") if isinstance(d.get("note"), str) else ""
    return Kept(int(_number(d.get("order"), 0)), max(0.0, _number(d.get("spent"), 0.0)), ticks, note[:NOTE_MAX], grade)


def read(store: ClassStore, record: ClassRecord) -> Session:
    """The session of an interview's record, from its documents."""
    docs = store.docs(record.class_id)
    cur = _json(docs.get("cur"), {})
    view = _json(docs.get("view"), {})
    end = _json(docs.get("end"), {})
    kept = {name[2:]: k for name, raw in docs.items() if name.startswith("k:") and (k := _kept(raw)) is not None}
    card = cur.get("card") if isinstance(cur.get("card"), str) else ""
    query = view.get("query") if isinstance(view.get("query"), dict) else {}
    lo, hi = SECONDS_RANGE
    seconds = int(min(hi, max(lo, _number(_json(docs.get("seconds"), 0), 75) or 75)))
    return Session(
        record=record,
        card=card,
        asked_at=_number(cur.get("at"), record.created_at),
        turn=int(_number(cur.get("n"), 0)),
        seconds=seconds,
        show=docs.get("show", ""),
        reveal=docs.get("reveal", ""),
        screen="view" if docs.get("screen") == "view" and view.get("page") else "card",
        view_page=view.get("page") if isinstance(view.get("page"), str) else "",
        view_query={str(k): str(v) for k, v in query.items()},
        profile=docs.get("profile", ""),
        seen=docs.get("seen") == "1",
        ended_at=_number(end.get("at"), record.created_at) if end else None,
        shared=bool(end.get("share")) if end else False,
        graded=tuple(c for c in _json(docs.get("graded"), []) if isinstance(c, str)),
        kept=kept,
        pulse=docs.get("pulse", ""),
    )


def _interview(record: ClassRecord) -> ClassRecord:
    if record.deck != DECK:
        raise cl.ClassError("This link is for a class, not an interview.")
    return record


def as_interviewer(store: ClassStore, class_id: object, key: object) -> Session:
    """The session, if ``key`` is its interviewer's key (ClassError otherwise, not saying whether it exists)."""
    try:
        record = cl.teacher_record(store, class_id, key)
    except cl.ClassError:
        raise cl.ClassError("This interview no longer exists, or this browser's key for it is not valid: start a new "
                            "shared interview.") from None  # fmt: skip
    return read(store, _interview(record))


def as_candidate(store: ClassStore, class_id: object, seat: object) -> Session:
    """The session, if ``seat`` is its candidate's (an ended one too: the candidate then sees that it ended)."""
    if not isinstance(class_id, str) or not cl.CLASS_ID_PATTERN.fullmatch(class_id):
        raise cl.ClassError("This interview link is not valid (it may be cut short): ask the interviewer for it again.")
    if not isinstance(seat, str) or not cl.TOKEN_PATTERN.fullmatch(seat):
        raise cl.ClassError("This interview link is not valid (it may be cut short): ask the interviewer for it again.")
    record = store.get(class_id)
    if record is None or record.deck != DECK or store.student(class_id, seat) is None:
        raise cl.ClassError("This interview link does not work (the interview may have ended and been deleted): ask "
                            "the interviewer for a new link.")  # fmt: skip
    return read(store, record)


def _open(session: Session, now: float, candidate: bool = False) -> None:
    if session.ended:
        raise cl.ClassError("This interview has ended.")
    if now >= session.record.expires_at:
        raise cl.ClassError("This interview has expired: " + ("ask the interviewer for a new link." if candidate
                                                               else "start a new one."))  # fmt: skip


# --------------------------------------------------------------------------------------------- the interviewer's steps


def start(store: ClassStore, now: float, hours: float = DEFAULT_HOURS, seconds: int = 75) -> Started:
    """A new interview, open for ``hours``, with one candidate's seat."""
    started = cl.start_class(store, DECK, now, hours=hours)
    seat = secrets.token_urlsafe(16)
    store.join(started.class_id, seat, CANDIDATE, now)
    store.put(started.class_id, "seconds", json.dumps(_seconds(seconds)))
    return Started(started.class_id, started.teacher_key, seat)


def _seconds(seconds: object) -> int:
    lo, hi = SECONDS_RANGE
    if not isinstance(seconds, int) or isinstance(seconds, bool) or not lo <= seconds <= hi:
        raise cl.ClassError(f"A countdown lasts {lo} to {hi} seconds.")
    return seconds


def _card(card: object) -> str:
    if not isinstance(card, str) or not CARD_PATTERN.fullmatch(card):
        raise cl.ClassError("There is no such card.")
    return card


def _put_kept(store: ClassStore, class_id: str, card: str, k: Kept) -> None:
    value = {"order": k.order, "spent": round(k.spent, 3), "ticks": list(k.ticks), "note": k.note, "grade": k.grade}
    store.put(class_id, f"k:{card}", json.dumps(value))


def _close_turn(store: ClassStore, s: Session, now: float) -> None:
    """Add the running turn's time to the current card's."""
    if s.card:
        k = s.kept.get(s.card) or Kept(len(s.kept) + 1)
        _put_kept(store, s.class_id, s.card, Kept(k.order, s.spent(s.card, now), k.ticks, k.note, k.grade))


def ask(store: ClassStore, class_id: str, key: str, card: str, now: float) -> Session:
    """Put ``card`` on both screens with a new countdown; the card before it keeps the time it was on. Asking the
    card already on screen only brings both screens back to it from a driven lesson page."""
    s = as_interviewer(store, class_id, key)
    _open(s, now)
    card = _card(card)
    if card == s.card:
        if s.screen != "card":
            store.put(s.class_id, "screen", "card", bump=True)
        return as_interviewer(store, class_id, key)
    _close_turn(store, s, now)
    if card not in s.kept:
        _put_kept(store, s.class_id, card, Kept(len(s.kept) + 1))  # (the card before it is kept: it was asked)
    store.put(s.class_id, "show", "")
    store.put(s.class_id, "reveal", "")
    store.put(s.class_id, "screen", "card")
    store.put(s.class_id, "cur", json.dumps({"card": card, "at": now, "n": s.turn + 1}), bump=True)
    return as_interviewer(store, class_id, key)


def restart_countdown(store: ClassStore, class_id: str, key: str, now: float) -> None:
    """A new countdown for the card on screen, on both screens."""
    s = as_interviewer(store, class_id, key)
    _open(s, now)
    if not s.card:
        raise cl.ClassError("Ask a card first.")
    _close_turn(store, s, now)
    store.put(s.class_id, "cur", json.dumps({"card": s.card, "at": now, "n": s.turn + 1}), bump=True)


def set_seconds(store: ClassStore, class_id: str, key: str, seconds: int) -> None:
    s = as_interviewer(store, class_id, key)
    if _seconds(seconds) != s.seconds:
        store.put(s.class_id, "seconds", json.dumps(seconds), bump=True)


def reveal_answer(store: ClassStore, class_id: str, key: str, card: str, now: float) -> None:
    """Let the candidate see the card's model answer, follow-ups and traps (the rubric and notes stay the
    interviewer's)."""
    s = as_interviewer(store, class_id, key)
    _open(s, now)
    store.put(s.class_id, "reveal", _card(card), bump=True)


def drive(store: ClassStore, class_id: str, key: str, page: str, query: Mapping[str, str], now: float) -> bool:
    """Both screens show the lesson page view ``page`` with link values ``query`` (the candidate's answers hidden);
    True when that changed what the candidate sees."""
    s = as_interviewer(store, class_id, key)
    _open(s, now)
    if not isinstance(page, str) or not PAGE_PATTERN.fullmatch(page):
        raise cl.ClassError("There is no such page.")
    clean = {str(k): str(v) for k, v in query.items()}
    value = json.dumps({"page": page, "query": clean}, sort_keys=True)
    if len(value) > VIEW_MAX:
        raise cl.ClassError("This view's link is too long to share.")
    if s.screen == "view" and s.view_page == page and dict(s.view_query) == clean:
        return False
    store.put(s.class_id, "view", value)
    store.put(s.class_id, "screen", "view", bump=True)
    return True


def keep(store: ClassStore, class_id: str, key: str, card: str, *, ticks: Sequence[str] | None = None,
         note: str | None = None, grade: str | None = None) -> Kept:  # fmt: skip
    """Keep the rubric's ticks, the note or the grade of ``card`` (each left as it was when None); the candidate's
    screen is not told (no version bump)."""
    s = as_interviewer(store, class_id, key)
    card = _card(card)
    k = s.kept.get(card) or Kept(len(s.kept) + 1)
    if note is not None:
        if not isinstance(note, str):
            raise cl.ClassError("A note is text.")
        if len(note) > NOTE_MAX:
            raise cl.ClassError(f"A note has at most {NOTE_MAX} characters; this one has {len(note)}.")
    if grade is not None and grade not in ("", *GRADES):
        raise cl.ClassError(f"A grade is one of {', '.join(GRADES)}.")
    new = Kept(
        k.order,
        k.spent,
        k.ticks if ticks is None else tuple(sorted({str(t) for t in ticks})),
        k.note if note is None else note,
        k.grade if grade is None else grade,
    )
    _put_kept(store, s.class_id, card, new)
    return new


def end(store: ClassStore, class_id: str, key: str, now: float, share: bool) -> Session:
    """End the interview: the running card's time is kept, the candidate's screen says it ended (with the summary
    when ``share``), nothing more can be asked."""
    s = as_interviewer(store, class_id, key)
    if s.ended:
        return s
    _close_turn(store, s, now)
    store.put(s.class_id, "end", json.dumps({"at": now, "share": bool(share)}))
    store.close(s.class_id)  # bumps the version: the candidate's screen follows
    return as_interviewer(store, class_id, key)


def mark_graded(store: ClassStore, session: Session, cards: Sequence[str]) -> None:
    """Record that ``cards``' grades went into the candidate's profile (so that they go there once)."""
    store.put(session.class_id, "graded", json.dumps(sorted({*session.graded, *cards})))


def to_grade(session: Session) -> list[tuple[str, str]]:
    """(card, grade) pairs still to write into the candidate's profile, in the order asked."""
    return [(c, session.kept[c].grade) for c in session.asked() if session.kept[c].grade and c not in session.graded]


# --------------------------------------------------------------------------------------------- the candidate's steps


def _pulse(store: ClassStore, session: Session) -> None:
    """Tell the interviewer's screen that the candidate took a step (its screen polls for it)."""
    store.put(session.class_id, "pulse", secrets.token_hex(4))


def show_figure(store: ClassStore, session: Session, card: str, now: float, by_candidate: bool = False) -> None:
    """Open ``card``'s figure on both screens (either side may; the caller has checked who asks)."""
    _open(session, now, candidate=by_candidate)
    if session.show != _card(card):
        store.put(session.class_id, "show", card, bump=True)
        if by_candidate:
            _pulse(store, session)


def seen(store: ClassStore, session: Session) -> None:
    """The candidate has opened the link: the interviewer's screen says so."""
    if not session.seen:
        store.put(session.class_id, "seen", "1")
        _pulse(store, session)


def set_profile(store: ClassStore, session: Session, name: str) -> str:
    """The candidate's name on the drills page, where the interviewer's grades go at the end ("" for none). Raises
    ClassError for a name the drills would refuse."""
    from study.progress import validate_profile

    name = name.strip() if isinstance(name, str) else name
    if name != "":
        try:
            name = validate_profile(name)
        except ValueError:
            raise cl.ClassError(f"A drills name is 1 to 40 letters, digits, '-' or '_' (no spaces); {name[:40]!r} is "
                                "not one.") from None  # fmt: skip
    if session.ended:
        raise cl.ClassError("This interview has ended.")
    store.put(session.class_id, "profile", name)
    _pulse(store, session)
    return name


# --------------------------------------------------------------------------------------------- the summary


@dataclass(frozen=True)
class Row:
    """One card of the summary."""

    order: int
    card: str
    question: str
    seconds: float
    ticks: tuple[str, ...]  # the rubric parts covered, as labelled
    score: str  # "3 of 4"
    grade: str
    note: str


def summary(session: Session, questions: Mapping[str, str], parts: Mapping[str, str], now: float) -> list[Row]:
    """The cards asked, in order, with the time each was on screen, the rubric (``parts``: part name -> label), the
    grade and the note."""
    rows = []
    for card in session.asked():
        k = session.kept[card]
        ticked = tuple(label for part, label in parts.items() if part in k.ticks)
        rows.append(Row(k.order, card, questions.get(card, ""), session.spent(card, now), ticked,
                        f"{len(ticked)} of {len(parts)}", k.grade, k.note))  # fmt: skip
    return rows


def clock(seconds: float) -> str:
    """Seconds as m:ss (rounded down to the second)."""
    s = int(max(0.0, seconds))
    return f"{s // 60}:{s % 60:02d}"


def _cell(text: str) -> str:
    """Text in a Markdown table cell: pipes escaped, line breaks as <br>, no HTML of the writer's."""
    safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", r"\|")
    safe = safe.replace("[", r"\[").replace("]", r"\]")  # no link or image of a note's is followed in a preview
    return "<br>".join(safe.splitlines()) if safe else ""


def summary_markdown(session: Session, rows: Sequence[Row], now: float) -> str:
    """The summary as a Markdown document: when, how long, and a table of the cards."""
    started = datetime.fromtimestamp(session.record.created_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    total = sum(r.seconds for r in rows)
    lines = [
        "# Mock interview summary",
        "",
        f"Started {started}; {len(rows)} card{'' if len(rows) == 1 else 's'}, {clock(total)} on them in all."
        + (f" Candidate's drills name: {session.profile}." if session.profile else ""),
        "",
        "| No. | Card | Question | Time | Rubric | Score | Grade | Note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.order} | {r.card} | {_cell(r.question)} | {clock(r.seconds)} | {_cell('; '.join(r.ticks))} "
                     f"| {r.score} | {r.grade.capitalize()} | {_cell(r.note)} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def _safe(text: str) -> str:
    """A spreadsheet may run a cell that starts with = + - @ (or a tab or carriage return before one) as a formula:
    such text is quoted with a '."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def summary_csv(rows: Sequence[Row]) -> str:
    """The summary as CSV, one row per card; the time in seconds (rounded to the second)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["order", "card", "question", "seconds", "rubric", "score", "grade", "note"])
    for r in rows:
        w.writerow([r.order, r.card, _safe(r.question), int(r.seconds), _safe("; ".join(r.ticks)), r.score, r.grade,
                    _safe(r.note)])  # fmt: skip
    return out.getvalue()
