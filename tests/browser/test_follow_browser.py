"""Class mode's follow signal in real browsers: three open pages follow a change within seconds without asking for
anything, each keeping its own controls' values, and the follower asked for one rerun per page per change."""

from __future__ import annotations

import re

import pytest

from bench.harness import running_server

pytestmark = pytest.mark.browser
READY = "[data-testid='stApp'][data-test-script-state='notRunning'] [data-testid='stMarkdownContainer']"


def _line(page) -> str:
    return page.locator("[data-testid='stMarkdownContainer']").last.inner_text()


def test_three_pages_follow_a_change_and_keep_their_own_controls(browser, tmp_path, monkeypatch) -> None:
    flag = tmp_path / "version"
    flag.write_text("1")
    monkeypatch.setenv("LESSON_FOLLOW_FILE", str(flag))
    with running_server(script="tests/browser/follow_app.py") as url:
        contexts = [browser.new_context() for _ in range(3)]
        try:
            pages = [c.new_page() for c in contexts]
            for p in pages:
                p.goto(url, wait_until="domcontentloaded")
                p.wait_for_selector(READY, timeout=60_000)
                p.wait_for_function("() => document.body.innerText.includes('version 1')", timeout=30_000)
            pages[0].get_by_role("slider").first.focus()
            pages[0].keyboard.press("ArrowRight")
            pages[0].wait_for_function("() => document.body.innerText.includes('own 4')", timeout=30_000)
            assert "available True" in _line(pages[0])
            flag.write_text("2")
            for p in pages:  # nothing is clicked: the server reruns them
                p.wait_for_function("() => document.body.innerText.includes('version 2')", timeout=30_000)
            owns = [int(re.search(r"own (\d+)", _line(p)).group(1)) for p in pages]
            assert owns == [4, 3, 3]  # each page's own control kept its value
            # a rerun of the page's own (a key press) reads the count after the follower's round has ended
            pages[1].get_by_role("slider").first.focus()
            pages[1].keyboard.press("ArrowLeft")
            pages[1].wait_for_function("() => document.body.innerText.includes('own 2')", timeout=30_000)
            assert "reruns asked 3" in _line(pages[1])  # one rerun per page for the one change
        finally:
            for c in contexts:
                c.close()
