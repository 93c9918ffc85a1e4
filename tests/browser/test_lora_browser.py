"""In a real browser: the LoRA page opened by a deep link as a fresh server's first request, the rank r dragged
on the heatmaps' drag row (BA, the residual and the readout change with no server round trip), and the
memory calculator's preset; no request leaves the machine."""

import re

import pytest

from tests.browser.conftest import DRAG_ROW_CLASS, choose_preset

pytestmark = pytest.mark.browser

DEEP_LINK = "/LoRA?d=1024&k=1024&profile=power_law&r=8&seed=1"


def _readout(watch) -> str:
    """The heatmap figure's readout line (the annotation that starts with the rank)."""
    texts = watch.page.locator("g.annotation-text-g").all_text_contents()
    return next(t for t in texts if t.startswith("r = "))


def test_deep_link_and_drag_r(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "LoRA" in page.title()
    page.wait_for_selector(f".{DRAG_ROW_CLASS} input", timeout=60_000)
    before = _readout(watch)
    assert "r = 8 of min(d, k) = 1024" in before and "trainable r(d+k) = 16,384" in before, before
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "1.56%" in body and "block averages" in body

    during = watch.drag_slider((0.7, 0.85, 0.95), lambda: _readout(watch))[-1]  # read with the button down
    assert during != before and not during.startswith("r = 8 "), during
    rank = int(re.match(r"r = (\d+)", during).group(1))
    assert rank > 8 and f"best rank-{rank} approximation BA" in " ".join(
        page.locator("g.annotation-text-g").all_text_contents()
    )
    watch.shot("lora-after-drag")

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []


def test_worked_example_f_preset(open_shared):
    watch = open_shared("/LoRA?view=What+LoRA+costs&mats=down")
    page = watch.page
    choose_preset(page, "Worked example F")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('8,388,608')", timeout=30_000
    )
    body = page.locator("[data-testid='stMain']").inner_text()
    assert all(s in body for s in ("0.12%", "134 MB", "14.0 GB", "112 GB")), body
    assert re.search(r"[?&]lora_view=What(\+|%20)LoRA(\+|%20)costs", page.url), page.url  # was `view`
    watch.shot("lora-worked-example-f")
    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
