"""What a class is: starting one, joining it, following the teacher's slide, answering, revealing, exporting, expiring.

A class has three secrets of different reach:
- the class code, on the projector: 8 characters from 31 (no 0, 1, I, L or O), 31^8 ≈ 8.5 × 10^11 codes. Failed
  joins are rate-limited per page session (a reload starts a new one, so this only slows a person down) and for the
  whole deployment (the store counts them, so every worker shares the limit, the bound that counts): at 60 failures
  a minute, guessing any one of 100 open classes takes about 8.5 × 10^11 / 100 / 60 minutes, some 270 years, on
  average;
- the student token (128 random bits) in a student's own link, which makes a reload or a phone that slept rejoin as
  the same student;
- the teacher key (192 random bits), kept in the teacher's session and a cookie of the teacher's browser, never in
  a link; the store keeps its SHA-256, never the key.

Every step takes the store and, where expiry matters, the time (seconds since the epoch), and returns what happened
or raises ClassError with a message a person can act on; nothing here draws anything.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import math
import re
import secrets
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Literal

import numpy as np

from classroom.store import ClassRecord, ClassStore, Outcome

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # 31 characters: no 0/O, 1/I/L to misread
CODE_LENGTH = 8
NAME_MAX = 40
ANSWER_MAX = 32
DEFAULT_HOURS = 4.0
MAX_HOURS = 24.0
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{22}")  # secrets.token_urlsafe(16)
KEY_PATTERN = re.compile(r"[A-Za-z0-9_-]{32}")  # secrets.token_urlsafe(24)
CLASS_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{22}")
# failed joins allowed per minute: per browser session, and for the whole deployment
JOIN_FAILURES_PER_SESSION = 5
JOIN_FAILURES_PER_DEPLOYMENT = 60
WINDOW_S = 60
BAD_LINK = "This link is not valid (it may be cut short): join again with the class code on the projector."

Status = Literal["open", "closed", "expired"]


class ClassError(ValueError):
    """A step refused, with a message for the person who tried it."""


@dataclass(frozen=True)
class Question:
    """A question the class answers: a number in [lo, hi] (a predict-first guess) or one of ``options`` (a quick
    check). ``answer`` is the true value, or the index of the right option."""

    qid: str
    kind: Literal["number", "choice"]
    answer: float
    lo: float = -math.inf
    hi: float = math.inf
    options: tuple[str, ...] = ()
    step: float | None = None  # a number's input step and printf format (the page's guess field's)
    fmt: str | None = None
    log: bool = False  # a positive range of several decades: guesses binned on a log scale

    def __post_init__(self) -> None:
        if self.kind == "choice":
            if not 2 <= len(self.options) <= 5:
                raise ValueError(f"{self.qid}: a multiple-choice question has 2 to 5 options, not {len(self.options)}")
            if not (float(self.answer).is_integer() and 0 <= self.answer < len(self.options)):
                raise ValueError(f"{self.qid}: the answer must be the index of one of its options")
        elif not (self.lo <= self.answer <= self.hi):
            raise ValueError(f"{self.qid}: the answer {self.answer} lies outside [{self.lo}, {self.hi}]")


@dataclass(frozen=True)
class Started:
    """A class just started: the teacher's link carries ``class_id`` (as ``teach=``), ``teacher_key`` goes to the
    teacher's session and a cookie, the projector shows ``code``."""

    class_id: str
    code: str
    teacher_key: str


@dataclass(frozen=True)
class Joined:
    class_id: str
    token: str
    name: str


@dataclass(frozen=True)
class Tally:
    """A question's answers as the teacher sees them: how many, the numbers (sorted) or the count per option."""

    count: int
    numbers: tuple[float, ...] = ()
    per_option: tuple[int, ...] = ()


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def shown_code(code: str) -> str:
    """The code as the projector shows it: ABCD-EFGH."""
    return f"{code[:4]}-{code[4:]}"


def normal_code(text: object) -> str:
    """A typed code as stored: upper case, spaces and dashes dropped. Raises ClassError saying what is wrong."""
    if not isinstance(text, str):
        raise ClassError("Type the class code shown on the projector.")
    code = re.sub(r"[\s\-]", "", text).upper()
    if not code:
        raise ClassError("Type the class code shown on the projector.")
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        raise ClassError(f"A class code is {CODE_LENGTH} letters and digits (no 0, 1, I, L or O), like K7M2-PQ9X.")
    return code


def clean_name(text: object) -> str:
    """A display name as stored and shown (as text, never Markdown or HTML): control and format characters dropped,
    white space collapsed, at most NAME_MAX characters. Empty means anonymous."""
    if not isinstance(text, str):
        return ""
    kept = "".join(c if unicodedata.category(c)[0] != "C" else " " for c in text)
    return " ".join(kept.split())[:NAME_MAX]


def parse_answer(question: Question, raw: object) -> str:
    """An answer as stored: a finite number in the question's range (as Python writes it) or an option's index.
    Raises ClassError with what is expected."""
    text = str(raw).strip() if isinstance(raw, (str, int, float)) and not isinstance(raw, bool) else ""
    if not text or len(text) > ANSWER_MAX:
        raise ClassError("Enter an answer first." if not text else f"An answer has at most {ANSWER_MAX} characters.")
    if question.kind == "choice":
        if not text.isdigit() or int(text) >= len(question.options):
            raise ClassError(f"Pick one of the {len(question.options)} options.")
        return str(int(text))
    try:
        value = float(text.replace("−", "-"))  # a comma is refused: 0,5 and 1,000 read differently by country
    except ValueError:
        raise ClassError(f"{text!r} is not a number.") from None
    if not math.isfinite(value) or not (question.lo <= value <= question.hi):
        raise ClassError(f"Enter a number from {question.lo:g} to {question.hi:g}.")
    return repr(value)


def status(record: ClassRecord, now: float) -> Status:
    if record.closed:
        return "closed"
    return "expired" if now >= record.expires_at else "open"


_ENDED = {"closed": "This class has been closed by its teacher.", "expired": "This class has ended (it expired)."}


def start_class(store: ClassStore, deck: str, now: float, hours: float = DEFAULT_HOURS, slide: int = 0) -> Started:
    """A new class on ``deck`` at ``slide``, open for ``hours`` (at most MAX_HOURS)."""
    if not (isinstance(hours, (int, float)) and math.isfinite(hours) and 0 < hours <= MAX_HOURS):
        raise ClassError(f"A class is open for more than 0 and at most {MAX_HOURS:g} hours; got {hours!r}.")
    key = secrets.token_urlsafe(24)
    for _ in range(8):  # a code already in use is drawn again (31^8 codes: a second draw is all but never needed)
        record = ClassRecord(secrets.token_urlsafe(16), new_code(), key_hash(key), deck, int(slide), False, now,
                             now + hours * 3600.0)  # fmt: skip
        if store.create(record, now):
            return Started(record.class_id, record.code, key)
    raise ClassError("No free class code was found; try again.")


def _record(store: ClassStore, class_id: object) -> ClassRecord:
    if not isinstance(class_id, str) or not CLASS_ID_PATTERN.fullmatch(class_id):
        raise ClassError(
            "This link is not valid (it may be cut short): join again with the class code on the projector."
        )
    record = store.get(class_id)
    if record is None:
        raise ClassError("This class no longer exists; if your teacher started a new one, join with its class code.")
    return record


def teacher_record(store: ClassStore, class_id: object, key: object) -> ClassRecord:
    """The class if ``key`` is its teacher key. Raises ClassError otherwise (without saying whether the class
    exists)."""
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise ClassError("This teacher link is not valid.")
    try:
        record = _record(store, class_id)
    except ClassError:
        raise ClassError("This teacher link is not valid.") from None
    if not hmac.compare_digest(record.teacher_hash, key_hash(key)):
        raise ClassError("This teacher link is not valid.")
    return record


def open_record(store: ClassStore, class_id: object, now: float) -> ClassRecord:
    record = _record(store, class_id)
    state = status(record, now)
    if state != "open":
        raise ClassError(_ENDED[state])
    return record


def join(store: ClassStore, code_text: object, name: object, client: str, now: float) -> Joined:
    """A student joins the class of ``code_text`` as a new student. ``client`` names the browser session for the
    rate limit. Raises ClassError (a wrong code, an ended class, too many failed tries)."""
    window = int(now // WINDOW_S) * WINDOW_S  # the minute's start, in seconds (the store purges counters by age)
    if store.hits(f"join-fail:{client}", window) >= JOIN_FAILURES_PER_SESSION:
        raise ClassError("Too many wrong codes in a row: wait a minute, then try again.")
    if store.hits("join-fail:*", window) >= JOIN_FAILURES_PER_DEPLOYMENT:
        raise ClassError("Too many wrong codes have been tried on this server: wait a minute, then try again.")
    try:
        code = normal_code(code_text)
        class_id = store.find(code)
        if class_id is None:
            raise ClassError("No class has this code: check it against the projector.")
        open_record(store, class_id, now)
    except ClassError:
        store.hit(f"join-fail:{client}", window)
        store.hit("join-fail:*", window)
        raise
    token = secrets.token_urlsafe(16)
    clean = clean_name(name)
    store.join(class_id, token, clean, now)
    return Joined(class_id, token, clean)


def rejoin(store: ClassStore, class_id: object, token: object, now: float) -> Joined:
    """A student back with the class and token of their link (a reload, a phone that slept)."""
    record = open_record(store, class_id, now)
    if not isinstance(token, str) or not TOKEN_PATTERN.fullmatch(token):
        raise ClassError(
            "This link is not valid (it may be cut short): join again with the class code on the projector."
        )
    student = store.student(record.class_id, token)
    if student is None:
        raise ClassError("This link is not one of this class's: join again with the class code.")
    return Joined(record.class_id, token, student.name)


def set_slide(store: ClassStore, class_id: str, key: str, slide: int, now: float) -> None:
    record = teacher_record(store, class_id, key)
    if status(record, now) != "open":
        raise ClassError(_ENDED[status(record, now)])
    store.set_slide(record.class_id, int(slide))


def submit(store: ClassStore, class_id: str, token: str, question: Question, raw: object, now: float) -> Outcome:
    """A student's answer, once per question, before the reveal. Returns "ok"; raises ClassError otherwise."""
    joined = rejoin(store, class_id, token, now)
    value = parse_answer(question, raw)
    outcome = store.answer(joined.class_id, question.qid, joined.token, value, now)
    messages = {
        "duplicate": "You have already answered this question: an answer cannot be changed.",
        "locked": "The answer has been revealed: answers are closed.",
        "closed": _ENDED["closed"],
        "gone": "This class no longer exists; if your teacher started a new one, join with its class code.",
    }
    if outcome != "ok":
        raise ClassError(messages[outcome])
    return outcome


def reveal(store: ClassStore, class_id: str, key: str, question: Question) -> bool:
    """Lock the question's answers and reveal it to the class; False if it was already revealed."""
    record = teacher_record(store, class_id, key)
    return store.reveal(record.class_id, question.qid)


def tally(store: ClassStore, class_id: str, question: Question) -> Tally:
    values = list(store.answers(class_id, question.qid).values())
    if question.kind == "choice":
        counts = Counter(int(v) for v in values)
        return Tally(len(values), per_option=tuple(counts.get(i, 0) for i in range(len(question.options))))
    return Tally(len(values), numbers=tuple(sorted(float(v) for v in values)))


def guess_histogram(numbers: tuple[float, ...], truth: float, log: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Bin edges and counts of the class's numeric guesses for the projector: from ceil(sqrt(n)) to 20 bins (at least
    5) of equal width over the guesses and the true value together, so that the truth is always on the axis. With
    every guess and the truth equal, one bin of width 1 centred on them. ``log``: positive guesses binned by log10
    (equal widths in decades), the edges returned as values."""
    if log:
        edges, counts = guess_histogram(tuple(math.log10(max(v, 1e-300)) for v in numbers),
                                        math.log10(max(truth, 1e-300)))  # fmt: skip
        return 10.0**edges, counts
    values = np.asarray(numbers, dtype=np.float64)
    lo, hi = float(min(values.min(initial=truth), truth)), float(max(values.max(initial=truth), truth))
    if hi == lo:
        return np.array([lo - 0.5, lo + 0.5]), np.array([values.size])
    bins = int(min(20, max(5, math.ceil(math.sqrt(values.size)))))
    counts, edges = np.histogram(values, bins=bins, range=(lo, hi))
    return edges, counts


def own_answer(store: ClassStore, class_id: str, token: str, question: Question) -> str | None:
    return store.answers(class_id, question.qid).get(token)


def close(store: ClassStore, class_id: str, key: str) -> None:
    record = teacher_record(store, class_id, key)
    store.close(record.class_id)


def export_csv(store: ClassStore, class_id: str, key: str) -> str:
    """Every answer of the class, one row each: the question, the student's number (in order of joining) and
    display name, the answer and its time (UTC, ISO 8601). Tokens are never exported."""
    from datetime import UTC, datetime

    record = teacher_record(store, class_id, key)
    number = {s.token: (i + 1, s.name) for i, s in enumerate(store.students(record.class_id))}
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["question", "student", "name", "answer", "answered_at"])
    for a in store.all_answers(record.class_id):
        n, name = number.get(a.token, (0, ""))
        # a spreadsheet runs a cell that starts with = + - @ as a formula: such names are quoted with a '
        safe = "'" + name if name[:1] in ("=", "+", "-", "@") else name
        when = datetime.fromtimestamp(a.at, UTC).isoformat(timespec="seconds")
        w.writerow([a.question, n, safe, a.value, when])
    return out.getvalue()


def purge(store: ClassStore, now: float) -> list[str]:
    """Delete every class whose time is up (and its students and answers); the ids deleted."""
    return store.purge(now)
