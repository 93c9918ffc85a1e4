"""Drill progress: FSRS state survives reopening the store, the due list, export/import round trips, bad imports
and bad profile names give clear errors, and profiles do not mix."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Scheduler

from study.progress import ENV_VAR, ProgressStore, data_dir, parse_export, validate_profile

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def _store(folder):
    return ProgressStore(folder, Scheduler(enable_fuzzing=False))


def test_state_survives_a_restart(tmp_path):
    first = _store(tmp_path)
    after = first.grade("ana", "lora-01", "good", T0)
    first.grade("ana", "lora-01", "good", T0 + timedelta(minutes=10))
    del first
    again = _store(tmp_path)  # a new process would do the same: open the file again
    state = again.state("ana", "lora-01")
    assert state is not None and state.reps == 2 and state.state == "review"
    assert state.due > after.due and state.stability > 0
    assert [r.rating for r in again.reviews("ana")] == ["good", "good"]
    assert (tmp_path / "progress.sqlite3").is_file()


def test_a_grade_waits_for_another_grade_of_the_card_between_its_read_and_its_write(tmp_path):
    """Two sessions (an interview's end writing the candidate's grade, the candidate grading the same card) must not
    both read the card's old state: the second would overwrite the first (one review counted of two). The second
    grade is tried while the first sits between its read and its write: it cannot begin (its BEGIN IMMEDIATE waits for
    the first's write lock and gives up after its 0.05 s with "database is locked"; plain reads still succeed), and
    once the first is in, it counts on top of it."""
    first, second = _store(tmp_path), _store(tmp_path)
    second.busy_timeout_s = 0.05  # its wait for the lock, short: the lock is held until the first returns
    tried: list[str] = []
    review = first.scheduler.review_card

    def review_then_try_the_second(card, rating, now):
        try:
            second.grade("ana", "lora-01", "good", T0)
            tried.append("written")
        except sqlite3.OperationalError as exc:
            tried.append(str(exc))
        return review(card, rating, now)

    first.scheduler.review_card = review_then_try_the_second
    first.grade("ana", "lora-01", "good", T0)
    assert tried == ["database is locked"]
    assert first.state("ana", "lora-01").reps == 1
    second.grade("ana", "lora-01", "good", T0 + timedelta(minutes=10))
    assert first.state("ana", "lora-01").reps == 2 and len(first.reviews("ana")) == 2


def test_grades_schedule_cards_and_due_lists_them(tmp_path):
    store = _store(tmp_path)
    store.grade("ana", "a-01", "again", T0)
    store.grade("ana", "b-01", "easy", T0)
    assert store.state("ana", "a-01").due < store.state("ana", "b-01").due
    assert store.due("ana", T0) == []
    assert store.due("ana", T0 + timedelta(minutes=5)) == ["a-01"]
    assert store.due("ana", T0 + timedelta(days=400)) == ["a-01", "b-01"]
    deck = ["c-01", "a-01", "b-01"]
    assert store.due("ana", T0 + timedelta(minutes=5), deck) == ["a-01", "c-01"]  # due first, then new cards


def test_profiles_are_isolated(tmp_path):
    store = _store(tmp_path)
    store.grade("ana", "a-01", "good", T0)
    store.grade("ben", "b-01", "hard", T0)
    assert set(store.states("ana")) == {"a-01"} and set(store.states("ben")) == {"b-01"}
    assert store.profiles() == ["ana", "ben"]
    store.delete_profile("ana")
    assert store.states("ana") == {} and set(store.states("ben")) == {"b-01"}


def test_export_import_round_trip(tmp_path):
    store = _store(tmp_path / "one")
    for i, rating in enumerate(["again", "good", "easy", 2]):
        store.grade("ana", f"c-0{i}", rating, T0 + timedelta(minutes=i))
    store.grade("ana", "c-00", "good", T0 + timedelta(minutes=20))
    text = store.export_json("ana")
    other = _store(tmp_path / "two")
    other.grade("zoe", "old-01", "good", T0)
    assert other.import_json("zoe", text) == 4
    assert other.states("zoe") == store.states("ana")
    assert other.reviews("zoe") == store.reviews("ana")
    assert json.loads(other.export_json("zoe"))["cards"] == json.loads(text)["cards"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: "not json {", "not JSON"),
        (lambda d: json.dumps([1]), "JSON object"),
        (lambda d: json.dumps(d | {"format": "other"}), "'format'"),
        (lambda d: json.dumps(d | {"version": 99}), "version 99"),
        (lambda d: json.dumps(d | {"cards": {}}), "'cards' must be a list"),
        (lambda d: json.dumps(d | {"cards": [d["cards"][0] | {"card_id": ""}]}), "cards[0].card_id"),
        (lambda d: json.dumps(d | {"cards": [d["cards"][0]] * 2}), "appears twice"),
        (
            lambda d: json.dumps(d | {"cards": [d["cards"][0] | {"fsrs": d["cards"][0]["fsrs"] | {"state": 7}}]}),
            "state",
        ),
        (
            lambda d: json.dumps(d | {"cards": [d["cards"][0] | {"fsrs": d["cards"][0]["fsrs"] | {"due": "soon"}}]}),
            "due",
        ),
        (
            lambda d: json.dumps(d | {"reviews": [{"card_id": "a-01", "rating": "great", "reviewed_at": "x"}]}),
            "reviews[0]",
        ),
    ],
)
def test_a_bad_import_raises_a_clear_error_and_keeps_the_old_progress(tmp_path, change, message):
    store = _store(tmp_path)
    store.grade("ana", "a-01", "good", T0)
    good = json.loads(store.export_json("ana"))
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        store.import_json("ana", change(good))
    assert set(store.states("ana")) == {"a-01"}


@pytest.mark.parametrize("name", ["", "a b", "x" * 41, "ü", "a/b", None])
def test_bad_profile_names_are_refused(tmp_path, name):
    with pytest.raises(ValueError, match="profile name"):
        validate_profile(name)
    with pytest.raises(ValueError):
        _store(tmp_path).grade(name, "a-01", "good", T0)


def test_bad_grades_and_naive_times_are_refused(tmp_path):
    store = _store(tmp_path)
    with pytest.raises(ValueError, match="again, hard, good, easy"):
        store.grade("ana", "a-01", "perfect", T0)
    with pytest.raises(ValueError, match="timezone-aware"):
        store.grade("ana", "a-01", "good", datetime(2025, 1, 1))
    assert validate_profile("Class_7-b") == "Class_7-b"


def test_the_data_folder_comes_from_the_argument_then_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    assert data_dir() == tmp_path / "env"
    assert data_dir(tmp_path / "arg") == tmp_path / "arg"
    store = ProgressStore()
    assert store.path == tmp_path / "env" / "progress.sqlite3" and store.path.is_file()
    monkeypatch.delenv(ENV_VAR)
    assert "llm-lesson-explorer" in str(data_dir())


def test_parse_export_reads_what_export_writes(tmp_path):
    store = _store(tmp_path)
    store.grade("ana", "a-01", "hard", T0)
    cards, reviews = parse_export(store.export_json("ana"))
    assert [c for c, *_ in cards] == ["a-01"] and [(c, int(r)) for c, r, _ in reviews] == [("a-01", 2)]
