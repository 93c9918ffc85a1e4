"""tests/shares.py: a page's share of the browser part, from a run's durations (the sums here are written out)."""

from __future__ import annotations

import pytest

from tests.shares import page_share

RUN = [
    ("tests/browser/test_first_screen_browser.py::test_the_first_screen_at_1280_by_720[PPO]", 9.0),
    ("tests/browser/test_first_screen_browser.py::test_the_first_screen_at_1280_by_720[PPO]", 1.0),  # its set-up
    ("tests/browser/test_first_screen_browser.py::test_the_first_screen_at_1280_by_720[GRPO]", 6.0),
    ("tests/browser/test_first_screen_browser.py::test_links_write_whole_numbers_and_warn_on_a_loopback_address", 8.0),
    ("tests/browser/test_presentation_browser.py::test_presenter_mode_first_screen[PPO]", 7.0),
    ("tests/browser/test_presentation_browser.py::test_the_figures_follow_a_theme_switch_at_once", 15.0),
    ("tests/browser/test_navigation_browser.py::test_pairs_of_pages_with_back_and_forward[Home]", 12.0),
    ("tests/browser/test_navigation_browser.py::test_pairs_of_pages_with_back_and_forward[PPO]", 6.0),
    ("tests/browser/test_navigation_browser.py::test_a_drag_in_the_browser_ends_in_the_link[/PPO-rho-None]", 11.0),
    ("tests/browser/test_drag_browser.py::test_the_main_control_drags_in_the_browser[PPO]", 5.0),
    ("tests/browser/test_drag_browser.py::test_the_main_control_drags_in_the_browser[GRPO]", 3.0),
    ("tests/browser/test_drag_browser.py::test_every_lesson_page_declares_a_drag", 0.5),
    ("tests/browser/test_rl_browser.py::test_ppo_deep_link_then_preset", 10.0),
    ("tests/browser/test_grpo_browser.py::test_deep_link_then_click_flips_a_reward", 8.0),
    ("tests/test_page_ppo.py::test_presets", 3.0),  # part 1: not the browser's
]


def test_each_kind_is_shared_over_its_pages() -> None:
    share = page_share(RUN, lesson_pages=2, pairs=4, pages=3)
    assert share is not None
    assert share.first_screen == pytest.approx((9 + 1 + 6) / 2)  # two pages checked
    assert share.presenter == pytest.approx(7.0)
    assert share.walks == pytest.approx((12 + 6) / 3) and share.per_pair == pytest.approx((12 + 6) / 4)
    assert share.own == pytest.approx((10 + 8 + 0.5) / 2)  # the drag file's other test is its pages' own
    assert share.drag == pytest.approx((5 + 3) / 2)
    assert share.shared == pytest.approx(8 + 15 + 11) and share.checked == 2
    assert share.per_page == pytest.approx(8 + 7 + 6 + 9.25 + 4)
    assert "its drag 4.0" in share.line(2)
    assert "34.2 in all, about 17.1 s of wall time with 2 workers" in share.line(2)


def test_a_run_without_browser_tests_has_no_share() -> None:
    assert page_share([("tests/test_page_ppo.py::test_presets", 3.0)], 13, 31, 17) is None
