"""The serving page in AppTest: the default view, every preset shows its answers, a link reproduces a view, each
tab builds its figure only when open, bad link values and bad inputs give a message and never an exception, the
traps show the wrong number."""

import numpy as np
import pytest

from tests.apptest import (
    BAD_LINK_VALUES,
    assert_bad_link_falls_back,
    assert_presets_show_their_answers,
    choose_preset,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    trace,
)
from views import Options
from views import serving as view_of

PAGE = "pages/8_Serving.py"

# One answer per preset, written out from its source (seed 002's A10 and A2.8), as the page shows it.
ANSWERS = {
    "A10-07": ("gqa KiB per token", "320 KiB"),
    "A10-08": ("sequences 8k", "68"),
    "A10-11": ("decode ms per token", "42.1 ms"),
    "A2.8-MoE": ("total", "671.0B"),
}


def test_default_view(default):
    assert default.warning.len == 0
    m = metrics(default)
    # Llama-3-8B: 2 x 32 layers x 8 KV heads x 128 dims x 2 bytes = 128 KiB per token
    assert m["KV cache per token"] == "128.0 KiB"
    assert m["Ridge point"] == "295 FLOP/B"  # 989e12 / 3.35e12
    # (80 GiB - 8.03e9 x 2 bytes) / (8,192 x 128 KiB) sequences, rounded down
    assert m["Sequences of 8,192 tokens that fit"] == str((80 * 2**30 - 8_030_261_248 * 2) // (8192 * 131072))
    assert m["Speculative: tokens per target forward"] == f"{sum(0.8**i for i in range(5)):.2f}"
    roof = figures(default)[0]
    line = decode(trace(roof, "roofline")["y"])
    assert line.max() == pytest.approx(989.0)
    dec = decode(trace(roof, "decode as the batch grows")["x"])
    assert np.all(np.diff(dec[:6]) > 0)  # decode's intensity grows with the batch
    assert len(figures(default)) == 2  # the roofline and the open tab (KV capacity) only


def test_every_preset_shows_its_answer():
    assert_presets_show_their_answers(PAGE, view_of.SPEC, ANSWERS)


def test_a10_08_link_reproduces_the_node():
    name = "A10-08: How many sequences fit on one node?"
    query = view_of.SPEC.query(view_of.SPEC.state(view_of.SPEC.presets[name]))
    at = open_page(PAGE, query)
    assert no_exception(at) and at.warning.len == 0
    m = metrics(at)
    assert m["Sequences of 8,192 tokens that fit"] == "68"  # 170 GiB / 2.5 GiB (002 A10-08)
    assert m["Weights"] == "131.4 GiB"
    clicked = open_page(PAGE)
    choose_preset(clicked, "Serving", name).run()
    assert metrics(clicked) == m


@pytest.mark.parametrize(("tab", "trace_name"), [("Speculative decoding", "k = 4"), ("MoE router", "dropped")])
def test_tabs_build_their_figure(tab, trace_name):
    at = open_page(PAGE, {"srv_view": tab})
    assert no_exception(at) and at.warning.len == 0
    figs = figures(at)
    assert len(figs) == 2
    tr = trace(figs[1], trace_name)
    if tab == "Speculative decoding":
        y = decode(tr["y"])
        assert y[0] == 1.0 and y[-1] == 5.0  # alpha = 0 and alpha = 1 with k = 4
    else:
        assert decode(tr["y"]).sum() + decode(figs[1]["data"][0]["y"]).sum() == 256 * 2  # T k assignments


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values(default, bad):
    assert_bad_link_falls_back(
        open_page(PAGE, {"srv_gpus": bad, "srv_ctx": bad, "batch": bad, "kv_budget": bad}), default, bad, warning=""
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"srv_gpus": "3"}, "cannot split the 32 attention heads"),
        ({"srv_model": "Llama-3.1-405B"}, "do not fit"),
        ({"srv_gpus": "0"}, "srv_gpus=0"),
        ({"kv_budget": "500"}, "KV budget must be"),
    ],
)
def test_bad_inputs_give_their_message(query, message):
    at = open_page(PAGE, query)
    assert no_exception(at)
    assert any(message in w.value for w in at.warning), [w.value for w in at.warning]


def test_traps_show_the_wrong_number_beside_the_right_one():
    at = open_page(PAGE, {"srv_traps": ["query heads for KV heads", "sparse peak", "GB instead of GiB"]})
    assert no_exception(at) and at.warning.len == 0
    m = metrics(at)
    assert m["✗ KV per token with query heads"] == "512.0 KiB"  # 32 query heads instead of 8: x4
    assert m["✗ Ridge with the sparse peak"] == "591 FLOP/B"  # 1979e12 / 3.35e12
    right = int(m["Sequences of 8,192 tokens that fit"])
    assert int(m["✗ Sequences if the label were GB"]) < right
    assert any("sparse peak" in (t.get("name") or "") for t in figures(at)[0]["data"])


def test_a10_11_batch1_decode_intensity_says_why_it_is_under_1():
    state = view_of.SPEC.state(view_of.SPEC.presets["A10-11: Arithmetic intensity of prefill vs decode"])
    r = {x.label: (x.value, x.help) for x in view_of.figures(state, Options(parts=frozenset())).readouts}
    # Llama-3-70B at batch 1, context 0: 2 (N - V D - norms) + L Nq 2H / 2 FLOPs over 2 N + 2 L K H 2 bytes
    N, V, D, L = 70_553_706_496, 128256, 8192, 80
    exact = (2 * (N - V * D - (2 * L + 1) * D) + L * 64 * 256) / (2 * N + 2 * L * 8 * 128 * 2)
    assert r["Decode at batch 1: FLOPs per byte"][0] == f"{exact:.4f}" == "0.9851"
    help_text = r["Decode at batch 1: FLOPs per byte"][1]
    assert "a lookup reads one row of it" in help_text
    # without the V x D input table in the bytes, the same step is 1.0 to the printed digit
    without = (2 * (N - V * D - (2 * L + 1) * D) + L * 64 * 256) / (2 * (N - V * D) + 2 * L * 8 * 128 * 2)
    assert f"{without:.1f}" == "1.0" and "without the table it is 1.0" in help_text
    assert "the source states 1 " in r["Decode at batch 1: FLOPs per byte"][1]
    live = r["Decode intensity, batch 1"][1]
    # the input table's share of the bytes of a batch-1 step at the preset's context of 8,192 (320 KiB per token,
    # the cache read plus the new token's entry)
    share = 2 * V * D / (2 * N + (8192 + 1) * 2 * L * 8 * 128 * 2)
    assert f"whole input-embedding table to every step ({100 * share:.1f}% of the bytes here)" in live
    assert "near 2B/2 = 1 at short context" in live
