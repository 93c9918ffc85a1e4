"""In a real browser: the evaluation page opened by a deep link as a fresh server's first request; a control
changed by typing; the tabs switched (each tab is part of the link); no request leaves the machine."""

import re

import pytest

pytestmark = pytest.mark.browser

DEEP_LINK = "/Evaluation?n=100000&c=3&k=5000&axis=log"


def _figure_texts(watch) -> list[str]:
    """The in-figure labels and the axis titles (which carry each figure's note)."""
    return watch.page.locator("g.annotation-text-g, g.g-xtitle").all_text_contents()


def _type_into(page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")


def test_deep_link_large_n_then_change_k(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "pass@k and error bars" in page.title()
    page.wait_for_selector("g.annotation-text-g", timeout=30_000)
    before = " ".join(_figure_texts(watch))
    assert "k = 5,000" in before and "display: 996 of 100,000 values of k" in before, before
    page.get_by_text("every k = 1…100,000").wait_for(timeout=30_000)  # it may come after the figure
    assert page.get_by_text("every k = 1…100,000").count() == 1  # the exact table, built on click

    _type_into(page, "k: attempts allowed", "20")
    watch.wait_idle()
    page.wait_for_function(
        "() => [...document.querySelectorAll('g.annotation-text-g')].some(e => e.textContent.includes('k = 20'))",
        timeout=30_000,
    )
    assert re.search(r"[?&]k=20(\.0)?(&|$)", page.url), page.url  # the link follows the control
    watch.shot("passk-large-n-k20")

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []


def test_deep_link_comparison_then_bias_tab(open_shared):
    watch = open_shared("/Evaluation?view=Model+comparison&accA=71.0&accB=72.5&N=1000&onlyA=40&onlyB=55")
    page = watch.page
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("text=not significant", timeout=30_000)  # the text may come after the figure
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "+1.5 ± 3.9" in body and "+1.5 ± 1.9" in body and "not significant" in body
    watch.shot("passk-comparison-paired")

    page.get_by_role("tab", name="Bias simulation").click()
    watch.wait_idle(60_000)
    page.wait_for_selector("g.barlayer", timeout=60_000)  # the histograms (torch was imported on demand)
    # the comparison's bars are a barlayer too: wait for the simulation's own readout, not for any bars
    page.wait_for_selector("[data-testid='stMetricLabel']:has-text('Unbiased mean')", timeout=60_000)
    assert re.search(r"[?&]eval_view=Bias(\+|%20)simulation", page.url), page.url  # was `view`
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "Unbiased mean ± 0.0007" in body and "0.8319" in body
    watch.shot("passk-bias")

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
