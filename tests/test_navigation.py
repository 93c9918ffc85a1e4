"""The catalogue of pages (views/catalog.py) and the navigation drawn from it (pages/frame/nav.py): stage groups
in lesson order, only the current page's group unfolded, a page finder that searches titles and keywords and opens
the page, previous and next links in lesson order, and every page script runnable on its own (AppTest of the file
alone, without the app's other pages)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.frame import FINDER_KEY
from tests.apptest import no_exception, open_page
from views import catalog

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("[0-9]*_*.py"))


def test_every_page_script_is_in_the_catalogue_once_with_its_url_and_view() -> None:
    assert sorted(e.script for e in catalog.PAGES) == SCRIPTS  # no page left out of the navigation, none twice
    for e in catalog.PAGES:
        assert e.url == re.sub(r"^\d+_", "", Path(e.script).stem), e  # Streamlit's URL of a pages/ file
        assert e.group in catalog.GROUPS, e
        module = catalog.view_module(e.url)
        assert (module is None) == (e.url in ("Drills", "Deck", "Class")), e
        if module is not None:
            assert module.SPEC.page == e.url, e


def test_the_pages_are_in_lesson_order_group_by_group() -> None:
    """The table lists the groups in the stages' order, each group's pages together."""
    order = [catalog.GROUPS.index(e.group) for e in catalog.PAGES]
    assert order == sorted(order)
    assert set(order) == set(range(len(catalog.GROUPS)))  # every group has a page


@pytest.mark.parametrize(
    ("query", "urls"),
    [
        ("KV cache", ["Attention", "Serving"]),
        ("zero", ["Training_memory"]),
        ("GQA", ["Attention"]),
        ("RoPE", ["Positions"]),
        ("online softmax", ["FlashAttention"]),
        ("capacity factor", ["MoE"]),
        ("gradient clipping", ["Training_lab"]),
        ("loss scaling", ["Number_formats"]),
        ("bias correction", ["Optimizers"]),
        ("REINFORCE", ["Policy_gradient"]),
        ("mode-seeking", ["Distillation"]),
        ("dpo", ["KL_leash"]),
        ("top-p", ["Sampling"]),
        ("pass@k", ["Evaluation"]),
        ("reliability diagram", ["Calibration"]),
        ("self-consistency", ["Test_time_compute"]),
        ("no such topic", []),
    ],
)
def test_the_finder_matches_titles_and_keywords(query: str, urls: list[str]) -> None:
    assert [e.url for e in catalog.find(query)] == urls


def test_neighbours_follow_the_lesson_order() -> None:
    first, second, last = catalog.PAGES[0], catalog.PAGES[1], catalog.PAGES[-1]
    assert catalog.neighbours(first.url) == (None, second)
    assert catalog.neighbours(second.url) == (first, catalog.PAGES[2])
    assert catalog.neighbours(last.url) == (catalog.PAGES[-2], None)
    assert catalog.neighbours("No_such_page") == (None, None)


def test_only_the_current_pages_group_is_unfolded() -> None:
    at = open_page("pages/4_GRPO.py")
    folds = {e.label: e.proto.expanded for e in at.sidebar.expander if e.label in catalog.GROUPS}
    assert folds == {g: g == "Post-training and RL" for g in catalog.GROUPS}
    home = open_page(None)
    assert not any(e.proto.expanded for e in home.sidebar.expander if e.label in catalog.GROUPS)


def test_previous_and_next_links_in_lesson_order() -> None:
    at = open_page("pages/4_GRPO.py")
    before, after = catalog.neighbours("GRPO")
    labels = [link.proto.label for link in at.main.get("page_link")]
    assert f"Previous: {before.label}" in labels and f"Next: {after.label}" in labels, labels
    first = open_page(catalog.PAGES[0].script)
    labels = [link.proto.label for link in first.main.get("page_link")]
    assert not any(label.startswith("Previous:") for label in labels)
    assert f"Next: {catalog.PAGES[1].label}" in labels


def test_the_finder_opens_the_page_it_finds_and_carries_presenter_mode() -> None:
    at = open_page("pages/4_GRPO.py", {"present": "true"})
    finder = at.selectbox(key=FINDER_KEY)
    assert finder.value is None and len(finder.options) == len(catalog.PAGES)
    (option,) = [o for o in finder.options if o.startswith("Training memory")]
    finder.select(option).run()
    assert no_exception(at)
    assert at.title[0].value.startswith("Training memory")
    assert at.query_params.get("present") == "true"  # the lecture stays in presenter mode


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_page_script_runs_alone(script: str) -> None:
    """A page script run without the app's entry point (no other pages exist for its links) shows no exception."""
    at = AppTest.from_file(str(ROOT / script), default_timeout=60).run()
    assert not at.exception, (script, [e.message for e in at.exception])
