"""In a real browser: the KL leash page opened by a deep link as a fresh server's first request, and beta dragged
on the drag row under the bars, the orange bars and the readout panel changing while the button is down."""

import pytest

from tests.browser.conftest import DRAG_ROW_CLASS

pytestmark = pytest.mark.browser

DEEP_LINK = (
    "/KL_leash?K=4&pi_ref=0.3%2C0.4%2C0.299%2C0.001&r=1%2C0.5%2C0%2C2&r_true=1%2C0.5%2C0%2C-1"
    "&names=helpful%2Cfine%2Cpoor%2Cexploit&beta=0.5&view=Reward%20hacking"
)


def _panel(page) -> str:
    """The readout panel of the bars figure (its first annotation)."""
    return page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()


def _bar_heights(page) -> list[float]:
    """Pixel heights of the orange bars (the second bar trace of the first figure)."""
    bars = page.locator(".js-plotly-plot").first.locator("g.trace.bars").nth(1).locator("path")
    return [round(b.bounding_box()["height"], 1) for b in bars.all()]


def test_deep_link_first_request_and_drag_beta(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "KL leash" in page.title()
    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=30_000)
    before, heights_before = _panel(page), _bar_heights(page)
    assert "β = 0.5" in before and "E[r] − β·KL = 0.648" in before and "β·log Z = 0.648" in before, before
    assert "true E" in before  # the reward-hack link carries a true reward
    assert page.get_by_text("6.00 nats").count() >= 1  # the takeover caption of the open reward-hacking tab

    # towards small beta: the leash lengthens, the exploit takes over
    seen = watch.drag_slider((0.4, 0.3, 0.2), lambda: (_panel(page), _bar_heights(page)))
    panels = [p for p, _ in seen]
    assert all(p != before for p in panels) and len(set(panels)) == 3, panels  # it moved at every step
    assert seen[-1][1] != heights_before and seen[-1][1][3] > heights_before[3]  # the exploit's bar grew
    watch.shot("kl-leash-after-drag")

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []
