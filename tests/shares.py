"""A page's share of the browser part's time, from the run's own test durations (issue 29: the budget is about 20 s
of ``make test`` per page; docs/performance.md, "A page's share").

The browser tests that cover every page by themselves are parametrised by page (the first screen, presenter mode) or
by a walk's start page (its pairs); every other browser file is shared (the deck, the keyboard, the walks' other
tests) or a lesson page's own. A page's share is the per-page mean of each kind, in seconds of a worker's time, and
the wall time that makes with the run's workers sharing the cores.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# Browser test files that every page's checks share (not a page's own).
SHARED_FILES = frozenset(
    {
        "test_navigation_browser.py",
        "test_first_screen_browser.py",
        "test_presentation_browser.py",
        "test_deck_browser.py",
        "test_keyboard_browser.py",
        "test_fragment_browser.py",
        "test_predict_browser.py",
        "test_live_chart_browser.py",
    }
)
FIRST_SCREEN = "::test_the_first_screen_at_1280_by_720["
PRESENTER = "::test_presenter_mode_first_screen["
WALK_PAIRS = "::test_pairs_of_pages_with_back_and_forward["
DRAG = "::test_the_main_control_drags_in_the_browser["


@dataclass(frozen=True)
class Share:
    """Seconds of a worker's time per page (``walks``: the walks' pairs over all pages; ``per_pair``: one pair)."""

    first_screen: float
    presenter: float
    walks: float
    per_pair: float
    own: float
    shared: float  # what no page adds: the shared files' other tests, in all
    checked: int = 0  # the pages whose first screen the run checked
    drag: float = 0.0  # its main control's drag (a lesson page)

    @property
    def per_page(self) -> float:
        return self.first_screen + self.presenter + self.walks + self.own + self.drag

    def line(self, workers: int) -> str:
        return (
            f"a page's share of this browser run, in seconds of a worker's time: first screen {self.first_screen:.1f}, "
            f"presenter mode {self.presenter:.1f}, walks {self.walks:.1f} ({self.per_pair:.1f} a pair), its drag "
            f"{self.drag:.1f}, its own "
            f"browser tests {self.own:.1f} (a lesson page); {self.per_page:.1f} in all, about "
            f"{self.per_page / max(workers, 1):.1f} s of wall time with {workers} workers, AppTest (part 1, about 5 s) "
            f"not included. Shared by every page: {self.shared:.0f} s. Budget: about 20 s of make test per page "
            "(docs/performance.md)"
        )


def _param(nodeid: str, marker: str) -> str | None:
    at = nodeid.find(marker)
    return nodeid[at + len(marker) : nodeid.rindex("]")] if at >= 0 else None


def page_share(durations: Iterable[tuple[str, float]], lesson_pages: int, pairs: int, pages: int) -> Share | None:
    """The share from ``(nodeid, seconds)`` of every phase (set-up, call, tear-down) of a run's browser tests;
    ``lesson_pages``: the pages with a browser file of their own; ``pairs``: the walks' pairs; ``pages``: every
    page, Home included. None when the run had no browser test."""
    sums = {"first": 0.0, "presenter": 0.0, "walks": 0.0, "own": 0.0, "shared": 0.0, "drag": 0.0}
    first, presenter, dragged = set(), set(), set()
    seen = False
    for nodeid, seconds in durations:
        if not nodeid.startswith("tests/browser/"):
            continue
        seen = True
        name = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
        if (p := _param(nodeid, FIRST_SCREEN)) is not None:
            sums["first"] += seconds
            first.add(p)
        elif (p := _param(nodeid, PRESENTER)) is not None:
            sums["presenter"] += seconds
            presenter.add(p)
        elif (p := _param(nodeid, DRAG)) is not None:
            sums["drag"] += seconds
            dragged.add(p)
        elif _param(nodeid, WALK_PAIRS) is not None:
            sums["walks"] += seconds
        elif name in SHARED_FILES:
            sums["shared"] += seconds
        else:
            sums["own"] += seconds
    if not seen:
        return None
    return Share(
        first_screen=sums["first"] / max(len(first), 1),
        presenter=sums["presenter"] / max(len(presenter), 1),
        walks=sums["walks"] / max(pages, 1),
        per_pair=sums["walks"] / max(pairs, 1),
        own=sums["own"] / max(lesson_pages, 1),
        shared=sums["shared"],
        checked=len(first),
        drag=sums["drag"] / max(len(dragged), 1),
    )
