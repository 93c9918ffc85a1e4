"""A shared mock interview's rules (classroom/interviews.py) on both stores: who may do what, the one countdown, the
rubric and notes kept per card across Next and Back, the time per card on a fake clock, the summary, the grades
written once. Every expectation is written out here, not computed by the code under test."""

from __future__ import annotations

import csv
import io
import json

import pytest

from classroom import interviews as iv
from classroom.classes import ClassError

T0 = 1_000_000.0
PARTS = {"sentence": "In one sentence", "equation": "One equation", "number": "One number",
         "trade_off": "One trade-off"}  # fmt: skip


def begin(store, seconds: int = 75) -> iv.Started:
    return iv.start(store, T0, hours=2.0, seconds=seconds)


def test_an_interview_has_one_seat_and_only_its_keys_open_each_side(store) -> None:
    s = begin(store)
    assert store.get(s.class_id).deck == "interview"
    assert [st.name for st in store.students(s.class_id)] == ["candidate"]
    assert iv.as_interviewer(store, s.class_id, s.key).class_id == s.class_id
    assert iv.as_candidate(store, s.class_id, s.seat).class_id == s.class_id
    with pytest.raises(ClassError, match="key for it is not valid"):
        iv.as_interviewer(store, s.class_id, s.seat + "x" * 10)  # the seat is not the key
    with pytest.raises(ClassError, match="link does not work"):
        iv.as_candidate(store, s.class_id, "A" * 22)  # a well-formed seat of nobody
    with pytest.raises(ClassError, match="not valid"):
        iv.as_candidate(store, s.class_id, s.seat[:10])  # cut short
    with pytest.raises(ClassError, match="not valid"):
        iv.as_candidate(store, "../../etc", s.seat)
    assert s.key not in json.dumps(store.docs(s.class_id)) + repr(store.get(s.class_id))


def test_a_class_is_not_an_interview(store) -> None:
    from classroom import classes as cl

    c = cl.start_class(store, "lesson", T0)
    with pytest.raises(ClassError, match="for a class, not an interview"):
        iv.as_interviewer(store, c.class_id, c.teacher_key)


def test_asking_a_card_starts_one_countdown_and_keeps_the_time_per_card(store) -> None:
    s = begin(store, seconds=60)
    iv.ask(store, s.class_id, s.key, "scaling-01", T0 + 10)
    cand = iv.as_candidate(store, s.class_id, s.seat)
    assert (cand.card, cand.asked_at, cand.seconds, cand.turn) == ("scaling-01", T0 + 10, 60, 1)
    assert cand.left(T0 + 25) == 45.0 and cand.left(T0 + 100) == 0.0
    iv.ask(store, s.class_id, s.key, "lora-02", T0 + 100)  # scaling-01 was on for 90 s
    iv.ask(store, s.class_id, s.key, "scaling-01", T0 + 130)  # Back: lora-02 for 30 s; scaling-01 again
    now = iv.as_interviewer(store, s.class_id, s.key)
    assert now.asked() == ["scaling-01", "lora-02"]
    assert now.spent("scaling-01", T0 + 140) == 100.0  # 90 s, then 10 s of the running turn
    assert now.spent("lora-02", T0 + 140) == 30.0
    assert now.turn == 3 and now.asked_at == T0 + 130  # a new countdown at each ask
    iv.restart_countdown(store, s.class_id, s.key, T0 + 150)
    again = iv.as_candidate(store, s.class_id, s.seat)
    assert (again.asked_at, again.turn, again.spent("scaling-01", T0 + 150)) == (T0 + 150, 4, 110.0)


def test_what_the_candidate_must_follow_bumps_the_version_and_the_rubric_does_not(store) -> None:
    s = begin(store)
    version = lambda: store.get(s.class_id).version  # noqa: E731
    v0 = version()
    iv.ask(store, s.class_id, s.key, "scaling-01", T0 + 1)
    assert version() == v0 + 1
    iv.keep(store, s.class_id, s.key, "scaling-01", ticks=["number", "sentence"], note="named the 20 tokens")
    iv.keep(store, s.class_id, s.key, "scaling-01", grade="good")
    assert version() == v0 + 1  # the candidate's screen has nothing to redraw
    cand = iv.as_candidate(store, s.class_id, s.seat)
    iv.show_figure(store, cand, "scaling-01", T0 + 2, by_candidate=True)  # the candidate's "Show me"
    boss = iv.as_interviewer(store, s.class_id, s.key)
    assert version() == v0 + 2 and boss.show == "scaling-01" and boss.pulse != cand.pulse
    iv.show_figure(store, iv.as_candidate(store, s.class_id, s.seat), "scaling-01", T0 + 3)
    assert version() == v0 + 2  # open already: no change
    iv.reveal_answer(store, s.class_id, s.key, "scaling-01", T0 + 4)
    assert version() == v0 + 3 and iv.as_candidate(store, s.class_id, s.seat).reveal == "scaling-01"
    iv.ask(store, s.class_id, s.key, "lora-02", T0 + 5)  # a new card: figure closed, answer hidden again
    cand = iv.as_candidate(store, s.class_id, s.seat)
    assert (cand.show, cand.reveal, cand.card) == ("", "", "lora-02")


def test_the_candidates_steps_change_the_pulse_the_interviewer_watches(store) -> None:
    s = begin(store)
    pulses = [iv.as_interviewer(store, s.class_id, s.key).pulse]
    iv.seen(store, iv.as_candidate(store, s.class_id, s.seat))
    pulses.append(iv.as_interviewer(store, s.class_id, s.key).pulse)
    iv.set_profile(store, iv.as_candidate(store, s.class_id, s.seat), " ada_1 ")
    boss = iv.as_interviewer(store, s.class_id, s.key)
    pulses.append(boss.pulse)
    assert len(set(pulses)) == 3 and boss.seen and boss.profile == "ada_1"
    iv.set_profile(store, iv.as_candidate(store, s.class_id, s.seat), "")  # taken back: nothing is saved
    assert iv.as_interviewer(store, s.class_id, s.key).profile == ""
    assert store.get(s.class_id).version == 0  # nothing the candidate's own screen must follow


def test_the_rubric_note_and_grade_survive_next_and_back(store) -> None:
    s = begin(store)
    iv.ask(store, s.class_id, s.key, "scaling-01", T0)
    iv.keep(store, s.class_id, s.key, "scaling-01", ticks=["sentence", "number"])
    iv.keep(store, s.class_id, s.key, "scaling-01", note="good on units\nmissed the trade-off")
    iv.ask(store, s.class_id, s.key, "lora-02", T0 + 60)
    iv.keep(store, s.class_id, s.key, "lora-02", ticks=["equation"], grade="hard")
    iv.ask(store, s.class_id, s.key, "scaling-01", T0 + 90)
    k = iv.as_interviewer(store, s.class_id, s.key).kept  # as a reload reads it: from the store
    assert k["scaling-01"] == iv.Kept(1, 60.0, ("number", "sentence"), "good on units\nmissed the trade-off", "")
    assert k["lora-02"] == iv.Kept(2, 30.0, ("equation",), "", "hard")


def test_bad_rubric_input_is_refused_with_a_message(store) -> None:
    s = begin(store)
    with pytest.raises(ClassError, match="at most 2000"):
        iv.keep(store, s.class_id, s.key, "scaling-01", note="x" * 2001)
    with pytest.raises(ClassError, match="grade is one of"):
        iv.keep(store, s.class_id, s.key, "scaling-01", grade="superb")
    with pytest.raises(ClassError, match="no such card"):
        iv.ask(store, s.class_id, s.key, "<script>", T0)
    with pytest.raises(ClassError, match="60 to 90"):
        iv.set_seconds(store, s.class_id, s.key, 5)
    with pytest.raises(ClassError, match="no such page"):
        iv.drive(store, s.class_id, s.key, "../etc", {}, T0)
    with pytest.raises(ClassError, match="too long"):
        iv.drive(store, s.class_id, s.key, "Scaling", {"x": "y" * 5000}, T0)
    with pytest.raises(ClassError, match=r"A drills name is 1 to 40 letters.*'ada lovelace' is not one"):
        iv.set_profile(store, iv.as_candidate(store, s.class_id, s.seat), "ada lovelace")


def test_damaged_documents_read_as_defaults(store) -> None:
    s = begin(store)
    store.put(s.class_id, "cur", "{not json")
    store.put(s.class_id, "k:scaling-01", '{"order": "x", "spent": NaN, "grade": "superb", "ticks": [1, "number"]}')
    store.put(s.class_id, "seconds", '"many"')
    store.put(s.class_id, "k:lora-02", '{"order": 2, "ticks": null}')
    store.put(s.class_id, "k:kl-01", '{"order": 3, "ticks": 5, "note": 7}')
    got = iv.as_interviewer(store, s.class_id, s.key)
    assert (got.card, got.seconds) == ("", 75)
    assert got.kept["scaling-01"] == iv.Kept(0, 0.0, ("number",), "", "")
    assert got.kept["lora-02"] == iv.Kept(2) and got.kept["kl-01"] == iv.Kept(3)


def test_driving_a_lesson_view_moves_both_screens_and_asking_brings_them_back(store) -> None:
    s = begin(store)
    iv.ask(store, s.class_id, s.key, "scaling-01", T0)
    assert iv.drive(store, s.class_id, s.key, "Scaling", {"preset": "Chinchilla", "c": "1e22"}, T0 + 1)
    assert not iv.drive(store, s.class_id, s.key, "Scaling", {"c": "1e22", "preset": "Chinchilla"}, T0 + 2)
    cand = iv.as_candidate(store, s.class_id, s.seat)
    assert (cand.screen, cand.view_page, dict(cand.view_query)) == (
        "view",
        "Scaling",
        {"preset": "Chinchilla", "c": "1e22"},
    )
    turn = cand.turn
    iv.ask(store, s.class_id, s.key, "scaling-01", T0 + 3)  # the same card: back to it, the countdown runs on
    cand = iv.as_candidate(store, s.class_id, s.seat)
    assert (cand.screen, cand.turn) == ("card", turn)


def test_the_end_keeps_the_last_turn_and_refuses_more_steps(store) -> None:
    s = begin(store)
    iv.ask(store, s.class_id, s.key, "scaling-01", T0)
    iv.keep(store, s.class_id, s.key, "scaling-01", grade="easy")
    ended = iv.end(store, s.class_id, s.key, T0 + 42, share=True)
    assert ended.ended and ended.shared and ended.spent("scaling-01", T0 + 1000) == 42.0
    with pytest.raises(ClassError, match="has ended"):
        iv.ask(store, s.class_id, s.key, "lora-02", T0 + 50)
    cand = iv.as_candidate(store, s.class_id, s.seat)  # the candidate still reads it, to see that it ended
    assert cand.ended and cand.shared
    with pytest.raises(ClassError, match="has ended"):
        iv.show_figure(store, cand, "scaling-01", T0 + 60)


def test_grades_go_to_the_profile_once(store) -> None:
    s = begin(store)
    iv.ask(store, s.class_id, s.key, "scaling-01", T0)
    iv.keep(store, s.class_id, s.key, "scaling-01", grade="good")
    iv.ask(store, s.class_id, s.key, "lora-02", T0 + 10)  # asked, never graded
    iv.ask(store, s.class_id, s.key, "kl-01", T0 + 20)
    iv.keep(store, s.class_id, s.key, "kl-01", grade="again")
    got = iv.as_interviewer(store, s.class_id, s.key)
    assert iv.to_grade(got) == [("scaling-01", "good"), ("kl-01", "again")]
    iv.mark_graded(store, got, ["scaling-01", "kl-01"])
    assert iv.to_grade(iv.as_interviewer(store, s.class_id, s.key)) == []


def test_the_summary_as_markdown_and_csv(store) -> None:
    s = begin(store)
    iv.ask(store, s.class_id, s.key, "scaling-01", T0)
    iv.keep(store, s.class_id, s.key, "scaling-01", ticks=["sentence", "number"], note="a | b\n=SUM(A1)", grade="good")
    iv.ask(store, s.class_id, s.key, "lora-02", T0 + 95)
    iv.keep(store, s.class_id, s.key, "lora-02", note="<b>bold</b> ![x](http://e.test/p.png)")
    ended = iv.end(store, s.class_id, s.key, T0 + 95 + 61, share=False)
    questions = {"scaling-01": "What does Chinchilla say?", "lora-02": "=2+2 parameters?"}
    rows = iv.summary(ended, questions, PARTS, T0 + 500)
    assert [(r.order, r.card, r.seconds, r.score, r.grade) for r in rows] == [
        (1, "scaling-01", 95.0, "2 of 4", "good"),
        (2, "lora-02", 61.0, "0 of 4", ""),
    ]
    assert rows[0].ticks == ("In one sentence", "One number")  # in the rubric's order
    md = iv.summary_markdown(ended, rows, T0 + 500)
    assert "2 cards, 2:36 on them in all." in md  # 95 s + 61 s
    assert "| 1 | scaling-01 | What does Chinchilla say? | 1:35 | In one sentence; One number | 2 of 4 | Good | " in md
    assert r"a \| b<br>=SUM(A1)" in md and "&lt;b&gt;bold&lt;/b&gt;" in md and "<b>" not in md
    assert r"!\[x\](http://e.test/p.png)" in md  # no image is fetched when the file is previewed
    table = list(csv.reader(io.StringIO(iv.summary_csv(rows))))
    assert table[0] == ["order", "card", "question", "seconds", "rubric", "score", "grade", "note"]
    assert table[1] == ["1", "scaling-01", "What does Chinchilla say?", "95", "In one sentence; One number", "2 of 4",
                        "good", "a | b\n=SUM(A1)"]  # fmt: skip
    assert table[2][2] == "'=2+2 parameters?"  # a formula cell is quoted
    tab = iv.summary_csv([iv.Row(1, "c", "\t=1+1", 0.0, (), "0 of 4", "", "")])
    assert list(csv.reader(io.StringIO(tab)))[1][2] == "'\t=1+1"


def test_an_interview_expires_and_is_purged_like_a_class(store) -> None:
    s = begin(store)
    iv.ask(store, s.class_id, s.key, "scaling-01", T0)
    with pytest.raises(ClassError, match="expired"):
        iv.ask(store, s.class_id, s.key, "lora-02", T0 + 2 * 3600)
    assert store.purge(T0 + 2 * 3600) == [s.class_id]
    with pytest.raises(ClassError, match="link does not work"):
        iv.as_candidate(store, s.class_id, s.seat)
    assert store.docs(s.class_id) == {}


@pytest.mark.parametrize(("seconds", "text"), [(0, "0:00"), (59.9, "0:59"), (60, "1:00"), (754, "12:34")])
def test_clock(seconds, text) -> None:
    assert iv.clock(seconds) == text
