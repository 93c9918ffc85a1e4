"""In a real browser: the GRPO page opened by a deep link as a fresh server's first request, and a click on a bar
that flips that answer's reward (figure, reward list and address bar follow)."""

import urllib.parse

import pytest

pytestmark = pytest.mark.browser

DEEP_LINK = "/GRPO?r=1%2C0%2C0%2C1&std=sample"


def bars(page):
    """The advantages figure (the page's first chart)."""
    return page.locator(".js-plotly-plot").first


def tick_labels(page) -> list[str]:
    """The x tick labels of the advantages figure: "answer<br>r=reward" per answer."""
    return bars(page).locator("g.xtick text").all_text_contents()


def click_answer(page, i: int) -> None:
    """Click the middle of answer ``i``'s column (its full-height slot: clickable even when A = 0)."""
    slot = bars(page).locator("g.barlayer g.trace").nth(0).locator("g.point").nth(i)
    box = slot.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.25)


def test_deep_link_then_click_flips_a_reward(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "GRPO" in page.title()
    bars(page).locator("g.barlayer").wait_for(timeout=30_000)
    assert tick_labels(page) == ["1r=1", "2r=0", "3r=0", "4r=1"]
    assert "sample std" in bars(page).locator("g.g-gtitle").text_content()
    labels = bars(page).locator("g.barlayer g.trace").nth(1).locator("text").all_text_contents()
    assert labels == ["+0.87", "-0.87", "-0.87", "+0.87"]  # ±1 times sqrt(3/4): the sample std of 2 of 4

    click_answer(page, 1)  # answer 2: wrong -> correct
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot g.xtick text')]"
        ".slice(0, 4).map(t => t.textContent).join('|') === '1r=1|2r=1|3r=0|4r=1'",
        timeout=15_000,
    )
    watch.wait_idle()
    labels = bars(page).locator("g.barlayer g.trace").nth(1).locator("text").all_text_contents()
    assert labels == ["+0.50", "+0.50", "-1.50", "+0.50"]  # 3 of 4 correct, sample std
    assert page.get_by_test_id("stTextInputField").first.input_value() == "1,1,0,1"
    assert urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["rewards"] == ["1,1,0,1"]  # was `r`
    assert page.get_by_text("not a valid value").count() == 0  # the old link is not reported as refused
    watch.shot("grpo-after-click")

    click_answer(page, 2)  # the last wrong answer: now all correct, no signal
    page.wait_for_selector("text=No learning signal", timeout=15_000)
    watch.wait_idle()
    assert urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["rewards"] == ["1,1,1,1"]
    watch.shot("grpo-no-signal")

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
