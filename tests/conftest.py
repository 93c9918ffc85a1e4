"""Fixtures shared by the page tests: each test module names its page in ``PAGE``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import Reused, no_exception, opened

CLICKS_FILE = Path(__file__).resolve().parents[1] / "test-artifacts" / "clicks-not-taken.txt"


def pytest_configure(config: pytest.Config) -> None:
    """In the main process: fix the browser walks' seed in the environment before the test workers start, so that
    every worker (pytest-xdist) collects the same page pairs; and start a fresh list of clicks not taken."""
    if hasattr(config, "workerinput"):
        return
    from tests.browser.walks import SEED

    os.environ["LESSON_WALK_SEED"] = str(SEED)
    CLICKS_FILE.unlink(missing_ok=True)


# `make test` runs each kind of test from its folder (Makefile): a browser or server test elsewhere would run in no part
FOLDERS = {"browser": "tests/browser/", "server": "tests/server/"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Fail the run when a test marked ``browser`` or ``server`` lies outside that kind's folder (:data:`FOLDERS`)."""
    misplaced = [
        f"{item.nodeid} is marked {kind} but lies outside {folder}"
        for item in items
        for kind, folder in FOLDERS.items()
        if item.get_closest_marker(kind) and not item.nodeid.startswith(folder)
    ]
    if misplaced:
        raise pytest.UsageError("\n".join(misplaced[:10]))


def machine_speed_ms() -> float:
    """Milliseconds one core takes for a fixed piece of Python (the best of three): the same code's runs on
    different days are comparable only with it (this machine's speed moved by a quarter and more within a day)."""
    import time

    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        sum(i * i for i in range(1_000_000))
        best = min(best, time.perf_counter() - start)
    return 1000 * best


def pytest_report_header() -> list[str]:
    """Printed at the top of a run: the machine's load average (the suite's time goal holds from a quiet start), its
    speed (:func:`machine_speed_ms`) and the browser walks' choice of page pairs with its seed
    (tests/browser/walks.py)."""
    from tests.browser.walks import header

    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    return [
        f"load average (1, 5, 15 min): {load} on {os.cpu_count()} cores; a fixed loop took {machine_speed_ms():.0f} ms",
        header(),
    ]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Sidebar clicks the browser walks had to click twice (issue 29's open question), with what the page showed."""
    clicks = CLICKS_FILE.read_text(encoding="utf-8").splitlines() if CLICKS_FILE.exists() else []
    if clicks:
        terminalreporter.section(f"sidebar clicks not taken at first: {len(clicks)}")
        for line in clicks:
            terminalreporter.write_line(line)


@pytest.fixture(scope="module")
def default(request: pytest.FixtureRequest) -> AppTest:
    """The module's ``PAGE`` with its defaults, opened once per process (:func:`tests.apptest.opened`), with no
    exception and no warning: read it, never change it."""
    at = opened(request.module.PAGE)
    assert no_exception(at), at.exception
    assert at.warning.len == 0, [w.value for w in at.warning]
    return at


@pytest.fixture(scope="module")
def reused(request: pytest.FixtureRequest) -> Reused:
    """One :class:`tests.apptest.Reused` page per module for the module's ``PAGE``: tests that make one change."""
    return Reused(request.module.PAGE)
