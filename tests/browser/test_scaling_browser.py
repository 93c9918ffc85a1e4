"""In a real browser: the scaling page opened by a deep link as a fresh server's first request, and the plan
marker dragged along the curve with the drag row under it (no server round trip)."""

import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DRAG_ROW_CLASS, open_switches, rerun
from tests.browser.test_navigation_browser import _click, _fresh, _readouts

pytestmark = pytest.mark.browser

DEEP_LINK = "/Scaling_laws?fit=hoffmann2022&C=2.73e%2B20&N=1.5e%2B09&gpus=8&hours=24.0&mfu=40"


def _readout(watch) -> str:
    return watch.page.locator("g.annotation-text-g").first.text_content()


def test_deep_link_first_request_and_drag(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    # The deep link went through the shared frame: page title, sidebar toggle, the figure.
    assert "Scaling laws" in page.title()
    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    # the figure may be drawn before the sidebar's last controls arrive
    open_switches(page)
    page.wait_for_selector("label:has-text('Presenter mode') input", state="attached", timeout=30_000)
    assert page.locator("label:has-text('Presenter mode') input").count() == 1
    before = _readout(watch)
    assert "N = 1.50B params" in before and "20.2 tokens/param" in before, before

    during = watch.drag_slider((0.5, 0.35, 0.2), lambda: _readout(watch))[-1]  # read with the button down
    assert during != before and "Your plan" in during
    watch.shot("scaling-after-drag")

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []


def test_home_page_links_and_no_external_requests(open_shared):
    watch = open_shared("/")
    page = watch.page
    expect(page.get_by_text("The stages of training")).to_have_count(1, timeout=30_000)  # drawn once its code loads
    page.get_by_role("link", name="Scaling laws").first.click()
    watch.wait_idle()
    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    assert "Scaling_laws" in page.url
    watch.shot("home-then-scaling")
    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"


def test_presenter_mode_survives_page_links(open_shared):
    watch = open_shared("/Scaling_laws?present=true")
    page = watch.page
    page.locator("[data-testid='stExpandSidebarButton']").click()  # presenter mode starts with the sidebar closed
    open_switches(page)
    toggle = page.locator("label:has-text('Presenter mode') input")
    assert toggle.is_checked()
    watch.shot("scaling-presenter")
    # the switches' panel closed first: with it open, under load (make test-busy, 2026-12-03), the click on Home was
    # not taken (likely, not proven: a click outside an open panel goes to closing it); then the sidebar's link as the
    # walks click one (the address bar and Home's own run waited for, a click not taken written down and clicked once
    # more)
    page.keyboard.press("Escape")
    page.locator("label:has-text('Presenter mode')").first.wait_for(state="hidden", timeout=30_000)
    _click(page, "Home")
    page.wait_for_selector("text=The stages of training", timeout=30_000)
    open_switches(page)
    assert page.locator("label:has-text('Presenter mode') input").is_checked()
    assert "present=true" in page.url


def test_model_choice_writes_n_and_the_link_carries_both(open_shared):
    """Issue 16: a catalogue model sets N to its parameter count; the link carries the model and N."""

    watch = open_shared("/Scaling_laws")
    page = watch.page
    box = page.locator(".st-key-scale_model input")  # a combobox in Streamlit 1.67: type to filter, Enter to choose
    box.scroll_into_view_if_needed()
    box.click()
    box.fill("Llama-3-70B")
    page.locator("[role='option']", has_text="Llama-3-70B").first.wait_for(timeout=10_000)  # the list is filtered
    with rerun(page):
        page.keyboard.press("Enter")
    page.wait_for_function("() => window.location.search.includes('N=')", timeout=15_000)
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    assert query["scale_model"] == ["Llama-3-70B"] and float(query["N"][0]) == 70_553_706_496, page.url
    shown = dict(_readouts(page))
    assert shown["Tokens per parameter"] == f"{1.2e21 / 6 / 70_553_706_496**2:,.1f}"  # D/N = C/(6N²), default C
    assert _readouts(page) == _fresh(page.context.new_page, page.url)  # the link reproduces the page
    assert page.locator("[data-testid='stAlertContentInfo']").count() == 0
    assert watch.errors == [] and watch.external == []
