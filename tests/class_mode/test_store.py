"""The class store's atomic steps, the same tests on SQLite and on Redis (tests/class_stores.py).

Each result is checked against what the steps imply, counted independently: threads that race for one answer slot,
a class of 200 answers written from several threads, a fake clock for expiry.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from classroom.store import ClassRecord, RedisStore, SqliteStore, StoreUnavailable, open_store
from tests.redis_server import free_port

T0 = 1_000_000.0  # a fake clock's start: far from today, so nothing may read the real clock


def record(class_id: str = "c" * 22, code: str = "ABCDEFGH", hours: float = 4.0) -> ClassRecord:
    return ClassRecord(class_id, code, "h" * 64, "lesson", 0, False, T0, T0 + hours * 3600)


def test_a_class_is_created_once_under_a_free_code_and_read_back(store) -> None:
    rec = record()
    assert store.create(rec, T0)
    assert store.get(rec.class_id) == rec
    assert store.find("ABCDEFGH") == rec.class_id
    assert not store.create(record(class_id="d" * 22), T0)  # the code is taken
    assert not store.create(record(code="HGFEDCBA"), T0)  # the id is taken
    assert store.find("HGFEDCBA") is None  # the refused class left nothing behind
    assert store.get("x" * 22) is None


def test_slide_reveal_and_close_each_bump_the_version_once(store) -> None:
    rec = record()
    store.create(rec, T0)
    assert store.set_slide(rec.class_id, 7)
    assert store.reveal(rec.class_id, "q1")
    assert not store.reveal(rec.class_id, "q1")  # revealed already: no change
    assert store.close(rec.class_id)
    got = store.get(rec.class_id)
    assert (got.slide, got.version, got.revealed, got.closed) == (7, 3, frozenset({"q1"}), True)
    assert not store.set_slide("y" * 22, 1)
    assert not store.reveal("y" * 22, "q1")
    assert store.get("y" * 22) is None  # no step creates a class that does not exist


def test_a_student_joins_once_and_keeps_the_first_name(store) -> None:
    rec = record()
    store.create(rec, T0)
    assert store.join(rec.class_id, "t" * 22, "Ada", T0 + 1)
    assert not store.join(rec.class_id, "t" * 22, "Mallory", T0 + 2)
    assert store.student(rec.class_id, "t" * 22).name == "Ada"
    assert store.student(rec.class_id, "u" * 22) is None
    assert not store.join("y" * 22, "t" * 22, "Ada", T0)
    store.join(rec.class_id, "s" * 22, "", T0 + 3)
    assert [s.name for s in store.students(rec.class_id)] == ["Ada", ""]


def test_an_answer_is_stored_once_and_refused_after_the_reveal_or_the_close(store) -> None:
    rec = record()
    store.create(rec, T0)
    a, b = "a" * 22, "b" * 22
    assert store.answer(rec.class_id, "q1", a, "0.5", T0) == "ok"
    assert store.answer(rec.class_id, "q1", a, "0.9", T0) == "duplicate"
    assert store.answers(rec.class_id, "q1") == {a: "0.5"}  # the first answer stands
    assert store.answer(rec.class_id, "q2", a, "3", T0) == "ok"  # another question is another slot
    store.reveal(rec.class_id, "q1")
    assert store.answer(rec.class_id, "q1", b, "0.7", T0) == "locked"
    assert store.answer_count(rec.class_id, "q1") == 1
    store.close(rec.class_id)
    assert store.answer(rec.class_id, "q3", b, "1", T0) == "closed"
    assert store.answer("y" * 22, "q1", a, "1", T0) == "gone"
    assert [(x.question, x.token, x.value) for x in store.all_answers(rec.class_id)] == [("q1", a, "0.5"),
                                                                                          ("q2", a, "3")]  # fmt: skip


def test_racing_answers_for_one_slot_store_exactly_one(store) -> None:
    rec = record()
    store.create(rec, T0)
    start = threading.Barrier(12)

    def race(i: int) -> str:
        start.wait()
        return store.answer(rec.class_id, "q1", "a" * 22, str(i), T0)

    with ThreadPoolExecutor(12) as pool:
        outcomes = list(pool.map(race, range(12)))
    assert sorted(outcomes).count("ok") == 1 and outcomes.count("duplicate") == 11
    (value,) = store.answers(rec.class_id, "q1").values()
    assert outcomes[int(value)] == "ok"  # the stored answer is the one that was told "ok"


def test_two_hundred_answers_from_eight_threads_are_each_counted_once(store) -> None:
    rec = record()
    store.create(rec, T0)
    tokens = [f"{i:022d}" for i in range(200)]

    def send(token: str) -> str:
        return store.answer(rec.class_id, "q1", token, str(int(token)), T0)

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(send, tokens + tokens[:50]))  # 50 of them twice
    assert outcomes.count("ok") == 200 and outcomes.count("duplicate") == 50
    assert store.answer_count(rec.class_id, "q1") == 200
    assert sorted(int(v) for v in store.answers(rec.class_id, "q1").values()) == list(range(200))


def test_purge_deletes_expired_classes_with_their_students_and_answers(store) -> None:
    old, new = record(hours=1.0), record(class_id="n" * 22, code="NNNNNNNN", hours=4.0)
    for rec in (old, new):
        store.create(rec, T0)
        store.join(rec.class_id, "a" * 22, "Ada", T0)
        store.answer(rec.class_id, "q1", "a" * 22, "1", T0)
        store.reveal(rec.class_id, "q1")
    assert store.purge(T0 + 3599) == []
    assert store.purge(T0 + 3600) == [old.class_id]
    assert store.get(old.class_id) is None and store.find(old.code) is None
    assert store.students(old.class_id) == [] and store.all_answers(old.class_id) == []
    assert store.get(new.class_id) is not None and store.answer_count(new.class_id, "q1") == 1
    assert store.purge(T0 + 4 * 3600) == [new.class_id]


def test_documents_are_kept_per_class_and_bump_the_version_only_when_asked(store) -> None:
    rec, other = record(), record(class_id="n" * 22, code="NNNNNNNN")
    store.create(rec, T0)
    store.create(other, T0)
    assert store.put(rec.class_id, "card", '{"id": "scaling-01"}', bump=True)
    assert store.put(rec.class_id, "note", "first")
    assert store.put(rec.class_id, "note", "second")  # replaced, not added
    assert store.docs(rec.class_id) == {"card": '{"id": "scaling-01"}', "note": "second"}
    assert store.get(rec.class_id).version == 1  # the note did not bump it
    assert store.docs(other.class_id) == {}
    assert not store.put("y" * 22, "card", "x") and store.docs("y" * 22) == {}  # no class: nothing stored
    store.delete(rec.class_id)
    assert store.docs(rec.class_id) == {}
    store.put(other.class_id, "card", "x")
    store.purge(T0 + 4 * 3600)
    assert store.docs(other.class_id) == {}


def test_hits_count_per_key_and_window(store) -> None:
    assert [store.hit("join-fail:s1", 5) for _ in range(3)] == [1, 2, 3]
    assert store.hits("join-fail:s1", 5) == 3
    assert store.hits("join-fail:s1", 6) == 0 and store.hits("join-fail:s2", 5) == 0
    assert store.hit("join-fail:s1", 6) == 1


def test_redis_that_is_down_says_so() -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(StoreUnavailable, match=f"127.0.0.1:{port}"):
        open_store(f"redis://127.0.0.1:{port}/0")
    down = RedisStore(f"redis://:secret@127.0.0.1:{port}/0")
    with pytest.raises(StoreUnavailable) as caught:
        down.get("c" * 22)
    assert "secret" not in str(caught.value)  # the password is never shown


def test_sqlite_that_cannot_be_written_says_so(tmp_path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with pytest.raises(StoreUnavailable, match="cannot be used"):
        SqliteStore(blocked / "classes.sqlite3")
    with pytest.raises(StoreUnavailable, match="LESSON_CLASS_STORE"):
        open_store("mysql://x")


def test_open_store_picks_the_backend_by_its_url(tmp_path, redis_url) -> None:
    assert isinstance(open_store(f"sqlite:///{tmp_path}/c.sqlite3"), SqliteStore)
    assert isinstance(open_store("", data_dir=tmp_path), SqliteStore)
    assert (tmp_path / "classes.sqlite3").exists()
    assert isinstance(open_store(redis_url), RedisStore)


def test_a_purge_keeps_the_current_minutes_failed_joins(store) -> None:
    """Counters are kept a day by the time of their window's start (in seconds): a purge, which starting a class
    runs, must not reset the deployment's limit."""
    now = T0 + 30
    window = int(now // 60) * 60
    for _ in range(5):
        store.hit("join-fail:*", window)
    store.purge(now)
    assert store.hits("join-fail:*", window) == 5
    old = window - 2 * 86_400
    store.hit("join-fail:*", old)
    store.purge(now)
    assert store.hits("join-fail:*", window) == 5
    if isinstance(store, SqliteStore):  # (Redis lets its counters expire by themselves, after a day)
        assert store.hits("join-fail:*", old) == 0
