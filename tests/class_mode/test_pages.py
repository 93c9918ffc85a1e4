"""Class mode's pages in AppTest: a store that is down says so on the teacher's and the student's screen while the
deck and the page work on; a bad or stale link says what to do; a class joined through the page is one student."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import pytest

from bench.harness import open_page
from classroom import classes as cl
from classroom.store import ClassRecord, SqliteStore
from pages.frame import class_ui
from tests.apptest import no_exception
from tests.redis_server import free_port

DECK = "pages/15_Deck.py"
CLASS = "pages/26_Class.py"


@pytest.fixture
def store_at(monkeypatch) -> Iterator:
    """Point class mode at a store (a URL), with this process's cached service dropped before and after."""

    def point(url: str) -> None:
        monkeypatch.setenv("LESSON_CLASS_STORE", url)
        class_ui.service.clear()

    yield point
    class_ui.service.clear()


def _texts(at) -> str:
    return " ".join(str(e.value) for kind in ("error", "warning", "info", "markdown", "text") for e in at.get(kind))


def test_a_store_that_is_down_turns_class_mode_off_and_the_deck_plays_on(store_at) -> None:
    store_at(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    at = open_page(DECK, {"slide": "30", "present": "false"})
    at.button(key="class-start").click().run()
    assert no_exception(at), [e.value for e in at.exception]
    assert "Class mode is off" in _texts(at) and "cannot be reached" in _texts(at)
    assert len(at.get("plotly_chart")) + len(at.get("bidi_component")) > 0  # the slide is still drawn


def test_a_store_that_is_down_tells_the_student_and_the_page_stays(store_at) -> None:
    store_at(f"redis://127.0.0.1:{free_port()}/0")
    at = open_page(CLASS, {"code": "K7M2-PQ9X"})
    assert no_exception(at), [e.value for e in at.exception]
    assert "Class mode is not available on this server right now" in _texts(at)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"class_id": "not-a-class", "student": "x"}, "This link is not valid"),
        ({"class_id": "c" * 22, "student": "s" * 22}, "This class no longer exists"),
    ],
)
def test_a_bad_or_stale_student_link_says_what_to_do_and_offers_the_join_form(store_at, tmp_path, query, message):
    store_at(f"sqlite:///{tmp_path}/classes.sqlite3")
    at = open_page(CLASS, query)
    assert no_exception(at), [e.value for e in at.exception]
    assert message in _texts(at)
    assert at.text_input[0].label == "Class code"  # the join form


def test_joining_through_the_page_makes_one_student_with_the_name_as_text(store_at, tmp_path) -> None:
    store_at(f"sqlite:///{tmp_path}/classes.sqlite3")
    store = SqliteStore(tmp_path / "classes.sqlite3")
    started = cl.start_class(store, "lesson", 1e9 * 2, slide=30)  # a clock far ahead: open for any real time now
    at = open_page(CLASS, {"code": cl.shown_code(started.code)})
    at.text_input[1].input("**Ada**")
    at.button[0].click().run()
    assert no_exception(at), [e.value for e in at.exception]
    (student,) = store.students(started.class_id)
    assert student.name == "**Ada**"
    assert at.query_params["class_id"] == started.class_id and len(at.query_params["student"]) == 22  # its own link
    assert "you: **Ada**" in " ".join(str(t.value) for t in at.text)  # shown as text, not Markdown


@pytest.mark.parametrize("class_id", ["_" + "a" * 21, "a" * 10 + "-_" + "b" * 10, "a" * 10 + "__" + "b" * 10])
def test_the_teachers_deck_draws_whatever_its_class_id(store_at, tmp_path, class_id) -> None:
    """A class id (token_urlsafe) may start with "_" or "-" or hold two of them side by side: the cookie component's
    key once carried them as "__", Streamlit's event delimiter, and the deck player raised for 1 class in 20."""
    store_at(f"sqlite:///{tmp_path}/classes.sqlite3")
    store = SqliteStore(tmp_path / "classes.sqlite3")
    key, now = secrets.token_urlsafe(24), time.time()
    assert store.create(ClassRecord(class_id, "K7M2PQ9X", cl.key_hash(key), "lesson", 30, False, now, now + 3600), now)
    at = open_page(DECK, {"slide": "30", "present": "false"})
    at.session_state[class_ui.KEYS] = {class_id: key}
    at.query_params["teach"] = class_id
    at.run()
    assert no_exception(at), [e.value for e in at.exception]
    assert "code **K7M2-PQ9X**" in _texts(at)
