"""In a real browser: the training-memory and serving pages (issue 16). Each page opens by a deep link in a new
session (the file's first test is the very first request of a fresh server; the next is its page's first run in
that server): the link reaches the figure and the readouts, with no exception and no request off the machine. Then
one preset, whose answer shows in the readouts and the address bar."""

import pytest

from tests.browser.test_navigation_browser import _open_deep, _preset, _readouts

pytestmark = pytest.mark.browser


def test_training_memory_deep_link_then_preset(open_first):
    # Llama-3-70B on 8 x 4 x 16 = 512 GPUs with ZeRO-3; 32 micro-batches over 4 stages idle 3/35 = 8.6% of a step
    watch, page = _open_deep(
        open_first, "/Training_memory?mem_model=Llama-3-70B&zero=3&tp=8&pp=4&dp=16&micro=32", "Training_memory"
    )
    shown = dict(_readouts(page))
    assert shown["Per GPU (ZeRO-3)"] == "12.7 GiB" and shown["Pipeline bubble"] == "8.6%", shown
    assert shown["GPUs = TP × PP × DP"] == "512"
    watch.shot("training-memory-deep-link")

    shown = _preset(page, "001-3.2", "Training_memory")
    # 2 + 2 + 12/8 = 5.5 bytes per parameter x 7e9 = 38.5 GB = 35.9 GiB (the page's quick check); 16 x 7e9 = 112 GB
    assert shown["Per GPU (ZeRO-1)"] == "35.9 GiB" and shown["Bytes/param on this GPU"] == "5.50", shown
    assert shown["All training states"] == "112 GB"
    assert "mem_problem=001-3.2" in page.url and "zero=3" not in page.url, page.url
    assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)


def test_serving_deep_link_then_preset(open_shared):
    # Llama-3-70B on 4 H100s, 170 GiB of KV budget, fp8 KV: 170 GiB / (8,192 x 160 KiB) = 136 sequences (002 A10-08)
    watch, page = _open_deep(
        open_shared, "/Serving?srv_model=Llama-3-70B&srv_gpus=4&kv_budget=170&kvfmt=fp8", "Serving"
    )
    shown = dict(_readouts(page))
    assert shown["KV cache per token"] == "160.0 KiB" and shown["Sequences of 8,192 tokens that fit"] == "136", shown
    watch.shot("serving-deep-link")

    shown = _preset(page, "A10-08", "Serving")
    # bf16 KV: 2 x 80 layers x 8 KV heads x 128 x 2 bytes = 320 KiB per token; 170 GiB / 2.5 GiB = 68 sequences
    assert shown["KV cache per token"] == "320.0 KiB" and shown["Sequences of 8,192 tokens that fit"] == "68", shown
    assert "kvfmt" not in page.url and "srv_problem=A10-08" in page.url, page.url
    assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)
