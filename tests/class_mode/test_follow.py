"""The follow signal's bookkeeping (pages/frame/follow.py) with a fake store and fake sessions: one read per class per
poll whatever the class's size, a rerun only for the sessions behind the class's version, once per version, none for
a session that is gone, and a store that cannot be read costs a poll, not the thread."""

from __future__ import annotations

from pages.frame.follow import Follower


class Fake:
    def __init__(self) -> None:
        self.versions: dict[str, int | None] = {"A": 0, "B": 0}
        self.reads: list[str] = []
        self.alive = {f"s{i}" for i in range(200)}
        self.reruns: list[str] = []
        self.down = False

    def version_of(self, class_id: str) -> int | None:
        if self.down:
            raise ConnectionError("store down")
        self.reads.append(class_id)
        return self.versions[class_id]

    def rerun(self, session_id: str) -> bool:
        if session_id not in self.alive:
            return False
        self.reruns.append(session_id)
        return True


def follower(fake: Fake) -> Follower:
    f = Follower(fake.version_of, fake.rerun)
    for i in range(200):  # 150 students in class A, 50 in class B
        f.follow(f"s{i}", "A" if i < 150 else "B", 0)
    return f


def test_nothing_is_rerun_while_nothing_changes_and_a_class_costs_one_read_per_poll() -> None:
    fake = Fake()
    f = follower(fake)
    assert [f.poll() for _ in range(5)] == [0] * 5
    assert sorted(fake.reads) == ["A"] * 5 + ["B"] * 5 and fake.reruns == []


def test_a_change_reruns_its_class_once_and_no_other() -> None:
    fake = Fake()
    f = follower(fake)
    fake.versions["A"] = 1
    assert f.poll() == 150
    assert sorted(fake.reruns) == sorted(f"s{i}" for i in range(150))
    assert f.poll() == 0  # asked once per version, until the page draws it
    f.follow("s0", "A", 1)  # s0 drew version 1
    fake.versions["A"] = 2
    assert f.poll() == 150 and f.reruns == 300


def test_sessions_that_are_gone_are_dropped() -> None:
    fake = Fake()
    f = follower(fake)
    fake.alive -= {f"s{i}" for i in range(100)}
    fake.versions["A"] = 1
    assert f.poll() == 50
    assert len(f.watches) == 100  # 50 left in A, 50 in B


def test_a_deleted_class_reruns_its_students_once_to_say_so() -> None:
    fake = Fake()
    f = follower(fake)
    fake.versions["B"] = None
    assert f.poll() == 50 and f.poll() == 0


def test_a_store_that_is_down_skips_a_poll() -> None:
    fake = Fake()
    f = follower(fake)
    fake.down = True
    fake.versions["A"] = 1
    assert f.poll() == 0 and f.polls == 1
    fake.down = False
    assert f.poll() == 150
