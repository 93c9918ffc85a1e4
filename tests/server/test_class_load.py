"""Class mode under load, the 20-student version of bench/bench_class_load.py (issue 36): two workers behind nginx
(one server where nginx is not installed), a teacher's deck player and twenty students who join through the page,
each committing a guess within the same 10 s over Streamlit's own websocket protocol. Every guess is counted exactly
once, each student's answer box says so, the teacher's badge reaches 20, and every student's screen follows the
teacher to the next slide. Time limits are generous and every wait is for a state: the benchmark holds the goal's
times (docs/performance.md, "Class mode under load")."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pytest

from bench.class_load import Deployment, deployment, run_class

pytestmark = pytest.mark.server

STUDENTS = 20


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Deployment, str]]:
    with tempfile.TemporaryDirectory(prefix="class-load-") as folder:
        store_url = f"sqlite:///{folder}/classes.sqlite3"
        with deployment(2, {"LESSON_CLASS_STORE": store_url}) as dep:
            yield dep, store_url


def test_twenty_students_guess_within_ten_seconds_and_each_guess_counts_once(served) -> None:
    dep, store_url = served
    # the deck's slides are not waited for (the benchmark waits, so that the warming does not share the window)
    res = run_class(
        dep.url,
        store_url,
        STUDENTS,
        join="page",
        follow_slides=(31,),
        wait_warm=False,
        server_pgid=dep.proc.pid,
        log=print,
    )
    print(f"{dep.note}\n{res.summary()}")
    assert res.errors == [], dep.log_tail()
    assert res.counted_once, res.count_problems
    assert res.outcomes == {"Your guess": STUDENTS}  # every answer box took its guess and says so
    assert len(res.latencies) == STUDENTS
    assert (res.teacher_count, res.teacher_students) == (STUDENTS, STUDENTS)  # the projector's badge: 20 of 20
    assert res.last_finish_to_teacher_s < 30  # generous: the badge's fragment reruns every second
    ((slide, times),) = res.follow
    assert slide == 31 and len(times) == STUDENTS and res.follow_missed == 0
    if dep.workers[1:]:  # behind nginx: the students were spread over both workers
        assert len(res.upstreams) == len(dep.workers), res.upstreams
