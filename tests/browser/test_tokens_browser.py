"""In a real browser: the sampling, loss-and-units and schedules pages (issue 18). Each page opens by a deep link in
a new session (the file's first test is the very first request of a fresh server; the others are their page's first
run in that server): the link reaches the figure, its tab and the readouts, with no exception and no request off
the machine. Then one preset, whose answer shows. Sampling's temperature drag is in test_navigation_browser.py."""

import math

import pytest

from tests.browser.test_navigation_browser import _open_deep, _preset, _query, _readouts

pytestmark = pytest.mark.browser


def _main_text(page) -> str:
    return page.locator("[data-testid='stMain']").inner_text()


def _open(open_shared, link: str, url_page: str):
    return _open_deep(open_shared, link, url_page, figure=".js-plotly-plot")


def test_sampling_deep_link_then_preset(open_first):
    watch, page = _open(open_first, "/Sampling?T=0.5", "Sampling")
    shown = dict(_readouts(page))
    assert shown["Effective choices exp(H)"] == "2.95" and shown["Entropy H"] == "1.082 nats", shown  # the lesson
    assert f"{math.exp(1.082):.2f}" == "2.95"
    panel = page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()
    assert "T = 0.5" in panel and "exp(H) = 2.95" in panel, panel
    watch.shot("sampling-deep-link")

    shown = _preset(page, "Greedy: T = 0", "Sampling")
    assert shown["Kept tokens"] == "1 of 30" and shown["Effective choices exp(H)"] == "1.00", shown  # the argmax
    assert shown["Top token"].endswith("1.000")
    assert float(_query(page)["T"][0]) == 0, page.url
    assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)


def test_loss_units_deep_link_then_preset(open_shared):
    watch, page = _open(open_shared, "/Loss_and_units?vocab_size=1000&loss_view=Packing", "Loss_and_units")
    shown = dict(_readouts(page))
    assert shown["Uniform loss ln V"] == f"{math.log(1000):.2f} nats" == "6.91 nats", shown
    # the Packing tab the link names: documents of 6, 4 and 5 tokens; causal pairs across a boundary:
    # 15·16/2 − (6·7 + 4·5 + 5·6)/2 = 120 − 46 = 74
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('naive packing lets')",
        timeout=30_000,
    )
    assert "naive packing lets 74 query-key pairs" in _main_text(page)
    watch.shot("loss-units-deep-link-packing")

    shown = _preset(page, "Llama 3's vocabulary", "Loss_and_units")
    assert shown["Uniform loss ln V"] == f"{math.log(128_256):.2f} nats" == "11.76 nats", shown
    assert _query(page)["vocab_size"][0] in ("128256", "128256.0"), page.url
    assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)


def test_schedules_deep_link_then_preset(open_shared):
    link = "/Schedules?run_steps=20000&kaplan_n=5000&sched_view=Kaplan%27s+read-off"
    watch, page = _open(open_shared, link, "Schedules")
    shown = dict(_readouts(page))
    assert "Read off at 5,000 steps" in shown, shown  # the link's run lengths reached the view
    assert "20,000-step cosine" in _main_text(page)
    watch.shot("schedules-deep-link-kaplan")

    _preset(page, "Kaplan: a 2,500-step run", "Schedules")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('10,000-step cosine: 2.292')",
        timeout=30_000,
    )
    # the page's own numbers (its explanation): read off a 10,000-step cosine 2.292, with its own cosine 2.263
    assert "A 2,500-step run read off the 10,000-step cosine: 2.292" in _main_text(page)
    assert "own cosine: 2.263" in _main_text(page)
    assert dict(_readouts(page))["Read off at 2,500 steps"] == "2.292"
    assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)
