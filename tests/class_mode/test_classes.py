"""Class mode's rules (classroom/classes.py) on both stores: who may do what, bad input, the rate limit, expiry
with a fake clock, the export. Every expectation is written out here, not computed by the code under test."""

from __future__ import annotations

import csv
import io
import math

import pytest

from classroom import classes as cl
from classroom.classes import ClassError, Question

T0 = 1_000_000.0
GUESS = Question("lesson/27", "number", answer=0.75, lo=0.0, hi=2.0)
CHOICE = Question("check/kl-1", "choice", answer=2, options=("A", "B", "C", "D"))


def started(store, hours: float = 4.0) -> cl.Started:
    return cl.start_class(store, "lesson", T0, hours=hours)


def test_a_class_starts_with_a_code_from_its_alphabet_and_keeps_only_the_keys_hash(store) -> None:
    s = started(store)
    assert len(s.code) == 8 and set(s.code) <= set("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
    assert len(cl.CODE_ALPHABET) == 31 and 31**8 > 8.5e11
    rec = store.get(s.class_id)
    assert s.teacher_key not in repr(rec)  # only its SHA-256
    assert cl.teacher_record(store, s.class_id, s.teacher_key).class_id == s.class_id
    other = started(store)
    for cid, key in (
        (s.class_id, other.teacher_key),
        (s.class_id, "x" * 32),
        (s.class_id, ""),
        ("z" * 22, s.teacher_key),
    ):
        with pytest.raises(ClassError, match="teacher link is not valid"):
            cl.teacher_record(store, cid, key)
    with pytest.raises(ClassError, match="24 hours"):
        cl.start_class(store, "lesson", T0, hours=math.nan)


def test_a_student_joins_with_the_code_however_it_is_typed_and_rejoins_with_the_link(store) -> None:
    s = started(store)
    typed = f" {s.code[:4].lower()}-{s.code[4:].lower()} "
    j = cl.join(store, typed, "  Ada\u200b\n Lovelace  ", "session-1", T0 + 5)
    assert j.class_id == s.class_id and j.name == "Ada Lovelace"
    assert cl.rejoin(store, j.class_id, j.token, T0 + 60) == j  # a reload: the same student
    assert len(store.students(s.class_id)) == 1
    for token in ("", "t" * 22, "../../etc"):
        with pytest.raises(ClassError, match="join again with the class code"):
            cl.rejoin(store, j.class_id, token, T0 + 60)


def test_names_are_cut_to_forty_characters_and_markup_stays_text() -> None:
    assert cl.clean_name("x" * 100) == "x" * 40
    assert cl.clean_name("<b>Bob</b> **bold** [link](http://e.x)") == "<b>Bob</b> **bold** [link](http://e.x)"
    assert cl.clean_name("\x00Eve\x1b[31m\u202e") == "Eve [31m"
    assert cl.clean_name(None) == ""


@pytest.mark.parametrize("typed", ["", "ABC", "ABCDEFGHI", "ABCD-EFG0", "ABCDEFGL", 12345678])
def test_a_malformed_code_says_what_a_code_looks_like(typed) -> None:
    with pytest.raises(ClassError, match="class code"):
        cl.normal_code(typed)


def test_wrong_codes_are_limited_per_session_and_per_deployment(store) -> None:
    s = started(store)
    wrong = "22222222" if s.code != "22222222" else "33333333"
    for _ in range(cl.JOIN_FAILURES_PER_SESSION):
        with pytest.raises(ClassError, match="No class has this code"):
            cl.join(store, wrong, "", "guesser", T0 + 1)
    with pytest.raises(ClassError, match="wrong codes in a row"):  # even the right code, until the minute is over
        cl.join(store, s.code, "", "guesser", T0 + 2)
    assert cl.join(store, s.code, "", "guesser", T0 + 60).class_id == s.class_id  # the next minute
    # many sessions: the deployment's limit (shared through the store by every worker)
    t = T0 + 120
    for i in range(cl.JOIN_FAILURES_PER_DEPLOYMENT):
        with pytest.raises(ClassError, match="No class has this code"):
            cl.join(store, wrong, "", f"bot-{i}", t)
    with pytest.raises(ClassError, match="on this server"):
        cl.join(store, s.code, "", "honest", t + 1)


def test_answers_are_checked_stored_once_and_locked_at_the_reveal(store) -> None:
    s = started(store)
    a = cl.join(store, s.code, "A", "s-a", T0)
    b = cl.join(store, s.code, "B", "s-b", T0)
    bad = (("", "Enter an answer"), ("nan", "from 0 to 2"), ("inf", "from 0 to 2"), ("2.5", "from 0 to 2"),
           ("abc", "not a number"), ("0,5", "not a number"), ("1" * 40, "at most 32"),
           (True, "Enter an answer"))  # fmt: skip
    for raw, message in bad:
        with pytest.raises(ClassError, match=message):
            cl.submit(store, s.class_id, a.token, GUESS, raw, T0)
    assert cl.submit(store, s.class_id, a.token, GUESS, " 0.8 ", T0) == "ok"
    with pytest.raises(ClassError, match="already answered"):
        cl.submit(store, s.class_id, a.token, GUESS, "0.1", T0)
    assert cl.submit(store, s.class_id, b.token, GUESS, "−0", T0) == "ok"  # a typographic minus
    assert cl.own_answer(store, s.class_id, a.token, GUESS) == "0.8"  # B's answer did not touch A's
    with pytest.raises(ClassError, match="join again"):  # no token, no answer
        cl.submit(store, s.class_id, "q" * 22, GUESS, "0.3", T0)
    assert cl.tally(store, s.class_id, GUESS) == cl.Tally(2, numbers=(-0.0, 0.8))
    assert cl.reveal(store, s.class_id, s.teacher_key, GUESS)
    c = cl.join(store, s.code, "C", "s-c", T0)
    with pytest.raises(ClassError, match="revealed"):
        cl.submit(store, s.class_id, c.token, GUESS, "0.7", T0)
    with pytest.raises(ClassError, match="teacher link"):  # a student cannot reveal
        cl.reveal(store, s.class_id, a.token, CHOICE)


def test_a_multiple_choice_question_counts_per_option(store) -> None:
    s = started(store)
    picks = [2, 2, 0, 3, 2]
    for i, p in enumerate(picks):
        j = cl.join(store, s.code, f"s{i}", f"c{i}", T0)
        cl.submit(store, s.class_id, j.token, CHOICE, str(p), T0)
    assert cl.tally(store, s.class_id, CHOICE) == cl.Tally(5, per_option=(1, 0, 3, 1))
    j = cl.join(store, s.code, "late", "c9", T0)
    for raw in ("4", "-1", "B", "1.0"):
        with pytest.raises(ClassError, match="one of the 4 options"):
            cl.submit(store, s.class_id, j.token, CHOICE, raw, T0)


def test_questions_are_checked_when_made() -> None:
    with pytest.raises(ValueError, match="2 to 5 options"):
        Question("q", "choice", 0, options=("only",))
    with pytest.raises(ValueError, match="2 to 5 options"):
        Question("q", "choice", 0, options=tuple("ABCDEF"))
    with pytest.raises(ValueError, match="index of one of its options"):
        Question("q", "choice", 4, options=("A", "B"))
    with pytest.raises(ValueError, match="outside"):
        Question("q", "number", 3.0, lo=0, hi=1)


def test_a_class_expires_by_itself_and_is_deleted_with_a_fake_clock(store) -> None:
    s = started(store, hours=4.0)
    a = cl.join(store, s.code, "A", "s-a", T0)
    cl.submit(store, s.class_id, a.token, GUESS, "1", T0)
    end = T0 + 4 * 3600
    assert cl.rejoin(store, s.class_id, a.token, end - 1).token == a.token
    for step in (lambda: cl.rejoin(store, s.class_id, a.token, end),
                 lambda: cl.join(store, s.code, "B", "s-b", end),
                 lambda: cl.submit(store, s.class_id, a.token, CHOICE, "1", end),
                 lambda: cl.set_slide(store, s.class_id, s.teacher_key, 3, end)):  # fmt: skip
        with pytest.raises(ClassError, match="ended"):
            step()
    assert cl.purge(store, end - 1) == [] and cl.purge(store, end) == [s.class_id]
    assert store.get(s.class_id) is None and store.all_answers(s.class_id) == []
    with pytest.raises(ClassError, match="no longer exists"):
        cl.rejoin(store, s.class_id, a.token, end)


def test_a_closed_class_says_so_to_its_students(store) -> None:
    s = started(store)
    a = cl.join(store, s.code, "A", "s-a", T0)
    cl.close(store, s.class_id, s.teacher_key)
    with pytest.raises(ClassError, match="closed by its teacher"):
        cl.rejoin(store, s.class_id, a.token, T0 + 1)
    with pytest.raises(ClassError, match="closed by its teacher"):
        cl.join(store, s.code, "B", "s-b", T0 + 1)


def test_the_export_lists_every_answer_without_tokens(store) -> None:
    s = started(store)
    names = ["Ada", '=HYPERLINK("http://e.x")', ""]
    joined = [cl.join(store, s.code, n, f"s{i}", T0 + i) for i, n in enumerate(names)]
    for i, j in enumerate(joined):
        cl.submit(store, s.class_id, j.token, GUESS, str(0.5 + i / 4), T0 + 10 + i)
    cl.submit(store, s.class_id, joined[0].token, CHOICE, "2", T0 + 20)
    text = cl.export_csv(store, s.class_id, s.teacher_key)
    assert all(j.token not in text for j in joined)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["question"], r["student"], r["name"], r["answer"]) for r in rows] == [
        ("lesson/27", "1", "Ada", "0.5"),
        ("lesson/27", "2", '\'=HYPERLINK("http://e.x")', "0.75"),
        ("lesson/27", "3", "", "1.0"),
        ("check/kl-1", "1", "Ada", "2"),
    ]
    assert rows[0]["answered_at"] == "1970-01-12T13:46:50+00:00"  # T0 + 10 s, UTC
    with pytest.raises(ClassError, match="teacher link"):
        cl.export_csv(store, s.class_id, "k" * 32)
