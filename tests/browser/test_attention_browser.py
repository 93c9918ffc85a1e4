"""In a real browser: the attention page opened by a deep link as a fresh server's first request, then a tab, a text
edit and a KV-cache preset, with no request leaving localhost."""

import re

import pytest

from tests.browser.conftest import choose_preset, metric_value, wait_metric

pytestmark = pytest.mark.browser

DEEP_LINK = "/Attention?text=the+dog+saw+the+dog&h=2&kv=1&dm=32&scale=none"


def _titles(page) -> list[str]:
    return page.locator(".js-plotly-plot g.annotation-text-g").all_text_contents()


def test_deep_link_first_request_then_tab_and_text(open_first):
    watch = open_first(DEEP_LINK)
    page = watch.page
    assert "Attention" in page.title()
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)  # the readouts may come after the figure
    # the link's shape reached the figure: 2 query heads sharing 1 KV head (MQA), plus the designed heads
    titles = _titles(page)
    assert "head 1 · KV 1" in titles and "head 2 · KV 1" in titles and "previous token" in titles, titles
    assert metric_value(page, "Tokens") == "5" and metric_value(page, "Logits multiplied by") == "1"
    assert page.get_by_text("Logits are multiplied by 1").count() == 1  # the note about the missing scale

    page.get_by_role("tab", name="Mask").click()
    watch.wait_idle()
    page.wait_for_selector(".js-plotly-plot .gtitle", timeout=30_000)
    assert "Causal mask" in page.locator(".js-plotly-plot .gtitle").first.text_content()
    assert re.search(r"[?&]attn_view=Mask", page.url), page.url  # the new name of `view`
    assert metric_value(page, "Earlier outputs, masked") == "0"

    box = page.get_by_label("Text", exact=True)
    box.fill("a b c d e f g")
    box.press("Enter")
    watch.wait_idle()
    wait_metric(page, "7")
    assert metric_value(page, "Tokens") == "7"
    assert "text=a+b+c+d+e+f+g" in page.url or "text=a%20b%20c" in page.url, page.url
    watch.shot("attention-mask-after-edit")

    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
    assert watch.errors == []


def test_kv_cache_preset(open_shared):
    watch = open_shared("/Attention?view=KV%20cache")
    page = watch.page
    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
    page.wait_for_selector("[data-testid='stMetric']", timeout=30_000)  # the readouts may come after the figure
    assert metric_value(page, "KV cache per token") == "320 KiB" and metric_value(page, "At 131,072 tokens") == "40 GiB"
    page.get_by_test_id("stSidebarUserContent").get_by_text("KV-cache calculator").click()
    choose_preset(page, "Llama-3.1-8B at 128k tokens")
    wait_metric(page, "16 GiB")
    assert metric_value(page, "KV cache per token") == "128 KiB"
    assert "Hq=32" in page.url and re.search(r"[?&]attn_view=KV", page.url), page.url
    watch.shot("attention-kv-preset")
    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.external == [], f"requests left localhost: {watch.external}"
