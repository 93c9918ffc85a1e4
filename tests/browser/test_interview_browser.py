"""A shared mock interview end to end in chromium, on SQLite and on Redis: an interviewer and a candidate in separate
browser contexts. The interviewer starts a session and the candidate opens its one link; the candidate's screen
follows Next and Back, both screens show one countdown, the candidate's "Show me" opens the figure on both; the
rubric ticks and the note survive Next, Back and a reload; a lesson page the interviewer opens shows on the
candidate's screen and "Stop showing" brings the card back; the end shows the summary to the candidate, the summary
downloads as Markdown and CSV, and the grade goes into the candidate's profile. Everything the candidate's browser
receives is read off its websocket: no rubric, note, model answer or follow-up reaches it before the interviewer
reveals them. Every wait is for a state on the page, never a fixed time."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from bench.harness import running_server
from study.cards import load_cards
from study.progress import ProgressStore
from tests.browser.conftest import wait_for_text
from tests.redis_server import redis_server

pytestmark = pytest.mark.browser
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
NOTE = "Q7-note: derived 6ND unprompted"  # the interviewer's note, never the candidate's before the end
CARDS = {c.id: c for c in load_cards()[0]}


@pytest.fixture(params=["sqlite", "redis"])
def interview_server(request, tmp_path, monkeypatch) -> Iterator[tuple[str, Path]]:
    monkeypatch.setenv("LESSON_DATA_DIR", str(tmp_path / "data"))  # the candidate's profile, read back at the end
    if request.param == "sqlite":
        monkeypatch.setenv("LESSON_CLASS_STORE", f"sqlite:///{tmp_path}/classes.sqlite3")
        with running_server() as url:
            yield url, tmp_path / "data"
    else:
        with redis_server() as redis_url:
            monkeypatch.setenv("LESSON_CLASS_STORE", redis_url)
            with running_server() as url:
                yield url, tmp_path / "data"


def _left(page) -> int:
    """Seconds left on the page's countdown (its text is m:ss)."""
    m, s = re.match(r"(\d+):(\d\d)", page.locator(".countdown .time").inner_text()).groups()
    return 60 * int(m) + int(s)


def _fragment(text: str) -> str:
    """A stretch of a card's text that Markdown sends as it is (no $, *, _ or backslash)."""
    words = re.sub(r"[$*_\\`]", " ", text).split()
    return " ".join(words[:6])


def test_a_shared_interview_end_to_end(browser, interview_server) -> None:
    url, data_dir = interview_server
    first, second = CARDS["scaling-01"], CARDS["scaling-02"]
    secrets = {  # what the candidate must not receive before the reveal
        "model answer": _fragment(first.answer.sentence),
        "follow-up": _fragment(first.follow_ups[0]),
        "rubric": "tick what the candidate said",
        "note": NOTE,
    }
    contexts = []
    try:
        ctx = browser.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True)
        contexts.append(ctx)
        boss = ctx.new_page()
        boss.goto(f"{url}/Drills?role=interviewer&card=scaling-01", wait_until="domcontentloaded")
        boss.wait_for_selector(f"{IDLE} .st-key-interview-start", timeout=90_000)
        boss.get_by_role("button", name="Start a shared interview").click()
        wait_for_text(boss, "The candidate's link", timeout=60)
        link = boss.locator(".st-key-interview-panel [data-testid='stCode']").inner_text().strip()
        assert "seat=" in link and "interview=" in link and "hide=true" in link
        # the address bar holds the interview's id and no secret: no seat, no key (asked of its parameters' names, not
        # of its text: a random id may spell "key")
        assert sorted(parse_qs(urlsplit(boss.url).query)) == ["card", "interview", "role"], boss.url

        cctx = browser.new_context(viewport={"width": 1280, "height": 720})
        contexts.append(cctx)
        cand = cctx.new_page()
        received: list[bytes] = []
        cand.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(
            f if isinstance(f, bytes) else f.encode())))  # fmt: skip
        cand.goto(link, wait_until="domcontentloaded")
        wait_for_text(cand, "Your screen follows the interviewer's", timeout=60)
        wait_for_text(cand, first.question)
        boss.bring_to_front()
        wait_for_text(boss, "the candidate has opened the link")

        # the rubric, the note and the grade of the first card
        boss.locator(".st-key-rubric-scaling-01-sentence label").click()
        boss.locator(".st-key-rubric-scaling-01-number label").click()
        note = boss.get_by_label(re.compile("^Your note on this card"))
        note.fill(NOTE)
        note.press("Tab")  # a text area keeps its text at blur
        wait_for_text(boss, f"note kept ({len(NOTE)} characters)")
        boss.locator("[data-testid='stButtonGroup'] button", has_text="Good").click()
        boss.wait_for_selector(f"{IDLE}")
        wait_for_text(boss, "Score: 2 of 4")
        boss.wait_for_selector(f"{IDLE}")

        boss.get_by_role("button", name="Next →").click()  # the candidate's screen follows
        wait_for_text(cand, second.question)
        wait_for_text(boss, second.question)
        cand.locator(".countdown .time").wait_for()
        boss.locator(".countdown .time").wait_for()
        left_c, left_b = _left(cand), _left(boss)
        assert abs(left_c - left_b) <= 2, (left_c, left_b)  # one countdown (read a moment apart)
        assert 60 <= left_c <= 75

        cand.bring_to_front()
        cand.get_by_role("button", name="Show me").click()  # the candidate's Show me opens the figure on both
        boss.bring_to_front()
        boss.wait_for_selector(".js-plotly-plot", timeout=40_000)
        cand.wait_for_selector(".js-plotly-plot", timeout=40_000)

        boss.get_by_role("button", name="← Previous").click()  # Back: the first card, its rubric and note kept
        wait_for_text(cand, first.question)
        wait_for_text(boss, "Score: 2 of 4")
        boss.wait_for_selector(f"{IDLE}")
        expect(boss.get_by_label(re.compile("^Your note on this card"))).to_have_value(NOTE, timeout=20_000)
        boss.reload(wait_until="domcontentloaded")  # a reload: the same, from the store
        wait_for_text(boss, "Score: 2 of 4", timeout=60)
        boss.wait_for_selector(f"{IDLE} .st-key-interview-panel")
        expect(boss.get_by_label(re.compile("^Your note on this card"))).to_have_value(NOTE, timeout=20_000)
        assert boss.locator(".st-key-rubric-scaling-01-sentence input").is_checked()

        # nothing of the answer, the rubric or the note has reached the candidate's browser
        sent = b"".join(received).decode("utf-8", "replace")
        assert first.question in sent  # the check reads what is sent
        for what, text in secrets.items():
            assert text not in sent, f"the candidate's browser received the {what}: {text!r}"
        assert "Model answer" not in cand.inner_text("body")

        boss.get_by_role("button", name="Reveal the answer to the candidate").click()
        wait_for_text(cand, "Model answer")
        wait_for_text(cand, secrets["follow-up"])
        sent = b"".join(received).decode("utf-8", "replace")
        assert secrets["model answer"] in sent and NOTE not in sent and secrets["rubric"] not in sent

        # a lesson page the interviewer opens shows on the candidate's screen
        boss.locator(".st-key-interview-drive label").click()  # Show the candidate the lesson pages you open
        boss.wait_for_selector(f"{IDLE} .st-key-interview-panel")
        boss.get_by_role("link", name=re.compile("Previous: Calibration")).click()
        wait_for_text(boss, "the candidate's screen shows this page's figures", timeout=60)
        wait_for_text(cand, "Calibration")
        wait_for_text(cand, "Question:")
        cand.wait_for_selector(".js-plotly-plot", timeout=40_000)
        assert boss.get_by_role("link", name="Back to the interview").count() == 1  # the way back besides Back
        boss.get_by_role("button", name="Stop showing my pages").click()
        wait_for_text(cand, first.question)

        boss.go_back(wait_until="domcontentloaded")  # Back to the drills: the session's panel again
        wait_for_text(boss, "Shared interview", timeout=60)
        cand.bring_to_front()  # the candidate names their profile: the grade goes there at the end
        cand.get_by_text("Save the interviewer's grades to your drills progress (optional)").click()
        box = cand.get_by_label("Your name on the drills page")
        box.fill("cand_e2e")
        box.press("Enter")
        wait_for_text(cand, "grades go into cand_e2e's drills progress when the interview ends")
        boss.bring_to_front()
        wait_for_text(boss, "cand_e2e")
        boss.get_by_role("button", name="End the interview").click()
        boss.get_by_text("Show the candidate the summary (rubric, grades, times and your notes)").click()
        boss.get_by_role("button", name="End it now").click()
        wait_for_text(boss, "1 grade went into cand_e2e's drills progress")
        wait_for_text(cand, "This interview has ended")
        wait_for_text(cand, NOTE)  # the summary was shared at the end
        assert "scaling-01" in ProgressStore(data_dir).states("cand_e2e")
        wait_for_text(boss, "This interview has ended: nothing more can be asked")
        boss.wait_for_selector(f"{IDLE} .st-key-interview-new")  # the ended panel, drawn whole

        with boss.expect_download() as got:
            boss.get_by_role("button", name="Summary (Markdown)").click()
        md = Path(got.value.path()).read_text()
        assert "| 1 | scaling-01 |" in md and "| 2 | scaling-02 |" in md
        assert "In one sentence; One number | 2 of 4 | Good |" in md and NOTE in md
        boss.wait_for_selector(f"{IDLE} .st-key-interview-new")
        with boss.expect_download() as got:
            boss.get_by_role("button", name="Summary (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(Path(got.value.path()).read_text())))
        assert [r["card"] for r in rows] == ["scaling-01", "scaling-02"]
        assert rows[0]["grade"] == "good" and rows[0]["note"] == NOTE and int(rows[1]["seconds"]) >= 1
    finally:
        for c in contexts:
            c.close()
