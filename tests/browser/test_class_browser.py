"""Class mode end to end in chromium, on SQLite and on Redis: a teacher and three students in separate contexts (one
at phone size). The students join with the code, follow the teacher to a predict-first slide, answer its guess and its
quick check once; the teacher's counts reach three; after each reveal every student sees the class's answers (their
own guess marked) and the answer; a late joiner lands on the current slide; answers are locked; a reload is the same
student; the teacher key is in no student's page; the close says so. Every wait is for a state on the page, never a
fixed time."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from bench.harness import running_server
from tests.browser.conftest import wait_for_text
from tests.redis_server import redis_server

pytestmark = pytest.mark.browser
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(params=["sqlite", "redis"])
def class_server(request, tmp_path, monkeypatch) -> Iterator[str]:
    if request.param == "sqlite":
        monkeypatch.setenv("LESSON_CLASS_STORE", f"sqlite:///{tmp_path}/classes.sqlite3")
        with running_server() as url:
            yield url
    else:
        with redis_server() as redis_url:
            monkeypatch.setenv("LESSON_CLASS_STORE", redis_url)
            with running_server() as url:
                yield url


def _join(browser, url: str, code: str, name: str, viewport: dict | None = None):
    context = browser.new_context(viewport=viewport or {"width": 1280, "height": 720})
    page = context.new_page()
    page.goto(f"{url}/Class?code={code}", wait_until="domcontentloaded")
    page.wait_for_selector(f"{IDLE} [data-testid='stForm']", timeout=90_000)
    page.get_by_label("Your name (optional: only your teacher sees it, in the answers file)").fill(name)
    page.get_by_role("button", name="Join the class").click()
    wait_for_text(page, "Follow the teacher")
    return context, page


def _guess(page, value: str) -> None:
    box = page.get_by_label(re.compile(r"^Your guess \("))
    box.fill(value)
    page.get_by_role("button", name="Commit my guess").click()
    wait_for_text(page, f"Your guess: {value}")


def test_a_class_end_to_end(browser, class_server) -> None:
    url = class_server
    contexts = []
    try:
        teacher_context = browser.new_context(viewport={"width": 1280, "height": 720})
        contexts.append(teacher_context)
        teacher = teacher_context.new_page()
        teacher.goto(f"{url}/Deck?deck=lesson&slide=29&present=false", wait_until="domcontentloaded")
        teacher.wait_for_selector(f"{IDLE} .js-plotly-plot", timeout=90_000)
        teacher.get_by_role("button", name="Start a class").click()
        wait_for_text(teacher, "Class code ", timeout=60)  # the class's controls, in place of the start button
        code = re.search(r"code ([A-Z0-9]{4}-[A-Z0-9]{4})", teacher.inner_text("body")).group(1)
        # the key is not in the address bar: the class's parameters are the talk and the teacher's token (asked of the
        # parameters' names, not of the text: a random token may spell "key")
        names = set(parse_qs(urlsplit(teacher.url).query))
        assert "teach" in names and names <= {"deck", "slide", "present", "talk", "teach"}, teacher.url

        students = []
        for name, viewport in (("Ada", None), ("<b>Bob</b>", None), ("Cy", PHONE)):
            context, page = _join(browser, url, code, name, viewport)
            contexts.append(context)
            students.append(page)
            wait_for_text(page, "29. Predict: where does a reverse-KL student")
        assert "<b>Bob</b>" in students[1].inner_text("body")  # a name is text, never markup

        teacher.bring_to_front()  # a tab behind the students' runs no timers (the deck's keys, its count)
        teacher.locator("body").press("ArrowRight")  # to the calibration slide; nobody else clicks anything
        for page in students:
            wait_for_text(page, "30. Predict: how often is a tuned model right when it says 0.9?")
        for page, value in zip(students, ("0.7", "0.9", "0.5"), strict=True):
            _guess(page, value)
        wait_for_text(teacher, "guesses 3 of 3")
        for page, pick in zip(students, (1, 0, 1), strict=True):  # the page's quick check: B is right
            letter = "AB"[pick]
            page.locator(".st-key-class-check-pick label").filter(has_text=re.compile(f"^{letter}\\. ")).click()
            page.get_by_role("button", name="Commit my answer").click()
            wait_for_text(page, f"Your answer: {letter}.")
        wait_for_text(teacher, "quick check 3 of 3")

        phone = students[2]
        wide = phone.evaluate(
            """() => [...document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"]')]
                       .map(e => e.scrollWidth - e.clientWidth)"""
        )
        assert wide and max(wide) <= 0, wide  # no sideways scrolling at 390 x 844

        teacher.bring_to_front()
        teacher.keyboard.press("v")  # the reveal's key
        wait_for_text(teacher, "The class's guesses: 3")
        for page, value in zip(students, ("0.7", "0.9", "0.5"), strict=True):
            wait_for_text(page, "The class's guesses: 3")
            wait_for_text(page, f"your guess {value}")
            wait_for_text(page, "The answer")  # the readout beside the guess: σ(logit(0.9) / 2.5) = 0.7066
            wait_for_text(page, "0.707")
        fonts = phone.evaluate(
            "() => [...document.querySelectorAll('.js-plotly-plot text')].map(t => parseFloat(getComputedStyle(t)"
            ".fontSize)).filter(x => x > 0)"
        )
        assert fonts and min(fonts) >= 12, fonts  # figure text at least 12 px on the phone
        assert max(phone.evaluate(
            """() => [...document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"]')]
                       .map(e => e.scrollWidth - e.clientWidth)"""
        )) <= 0  # fmt: skip

        key = next(c["value"] for c in teacher_context.cookies() if c["name"].startswith("lesson_teach_"))
        assert len(key) == 32 and key not in teacher.url
        for page in students:  # the teacher key is in no student's page or link
            assert key not in page.content() and key not in page.url

        teacher.bring_to_front()
        teacher.keyboard.press("k")  # the quick check's reveal
        wait_for_text(teacher, "Quick check, revealed: B.")
        for page in students:
            wait_for_text(page, "Quick check, revealed: B.")
            wait_for_text(page, "The class's answers: 3")

        late_context, late = _join(browser, url, code, "Dee")
        contexts.append(late_context)
        wait_for_text(late, "30. Predict: how often")  # a late joiner lands on the current slide
        assert late.get_by_role("button", name="Commit my guess").count() == 0  # revealed: answers are closed

        students[0].reload(wait_until="domcontentloaded")
        wait_for_text(students[0], "you: Ada")  # the same student after a reload
        wait_for_text(students[0], "your guess 0.7")

        teacher.bring_to_front()
        teacher.get_by_role("button", name="Close the class").click()  # a popover that asks once more
        teacher.get_by_role("button", name="Close it now").click()
        students[1].reload(wait_until="domcontentloaded")
        wait_for_text(students[1], "This class has been closed by its teacher.")
    finally:
        for context in contexts:
            context.close()
