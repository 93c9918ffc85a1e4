"""The serving page in AppTest: the default view, every preset shows its answers, a link reproduces a view, each
tab builds its figure only when open, bad link values and bad inputs give a message and never an exception (an old
link to the router toy, now the MoE page's, too), the traps show the wrong number."""

import math

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
    slider_of,
    trace,
)
from views import Options
from views import serving as view_of
from viz.style import READOUT

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


def test_the_speculative_tab_builds_its_figure():
    at = open_page(PAGE, {"srv_view": "Speculative decoding"})
    assert no_exception(at) and at.warning.len == 0
    figs = figures(at)
    assert len(figs) == 2
    y = decode(trace(figs[1], "k = 4")["y"])
    assert y[0] == 1.0 and y[-1] == 5.0  # alpha = 0 and alpha = 1 with k = 4


def test_an_old_router_link_opens_the_defaults_and_points_to_the_moe_page(default):
    """The router toy moved to the MoE page (issue 32): a link made before, with its tab and its controls, opens the
    default view with a message for each value it could not use, and the page links to the MoE page."""
    old = {"srv_view": "MoE router", "experts": "64", "topk": "4", "capf": "1.5", "skew": "2", "rtokens": "512"}
    at = open_page(PAGE, old)
    assert_bad_link_falls_back(at, default, "MoE router", warning="`srv_view=MoE router`")
    warnings = [w.value for w in at.warning]
    assert any("using `KV capacity` instead" in w for w in warnings), warnings
    for name in ("experts", "topk", "capf", "skew", "rtokens"):
        assert any(f"unknown link parameter `{name}={old[name]}`" in w for w in warnings), (name, warnings)
    assert len(figures(at)) == 2  # the roofline and the KV capacity tab
    assert not set(old) & set(at.query_params)  # the link no longer carries them
    assert "Router: tokens that lost an expert" not in metrics(at)
    assert {"experts", "topk", "capf", "skew", "rtokens"}.isdisjoint(view_of.SPEC.by_name)
    assert view_of.VIEWS == ("KV capacity", "Speculative decoding")
    moe = [link.proto for link in at.get("page_link") if link.proto.page == "MoE"]
    assert moe and moe[0].label == "Mixture of experts"
    assert any("now lives on the MoE page" in c.value for c in at.caption)


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


# Llama-3-8B (the default model), written out: parameters, vocabulary, width, layers, query heads, KV heads, head dim
N8, V8, D8, L8, NQ8, K8, H8 = 8_030_261_248, 128256, 4096, 32, 32, 8, 128
H100_PEAK, H100_BW = 989e12, 3.35e12


def _decode_step(batch: int, ctx: int) -> dict[str, float]:
    """One bf16 decode step of Llama-3-8B on one H100 by hand: FLOPs = 2 x (weights but the input table and the norm
    gains) + per layer 2 N_q (d_qk + d_v) per key over ctx + 1/2 keys (causal mean), per sequence; bytes = every
    weight once + each sequence's ctx + 1 cached tokens of 2 L K H 2 bytes; time = max(bytes / BW, FLOPs / peak)."""
    flops = batch * (2 * (N8 - V8 * D8 - (2 * L8 + 1) * D8) + 2 * L8 * NQ8 * 2 * H8 * (ctx + 0.5))
    moved = 2 * N8 + batch * (ctx + 1) * 2 * L8 * K8 * H8 * 2
    seconds = max(moved / H100_BW, flops / H100_PEAK)
    return {
        "memory_s": moved / H100_BW,
        "compute_s": flops / H100_PEAK,
        "intensity": flops / moved,
        "tflops": flops / seconds / 1e12,
        "ms": 1e3 * seconds,
        "tokens": batch / seconds,
    }


def _moving(step: dict) -> int:
    (index,) = step["args"][2]
    return index


def test_batch_slider_steps_are_the_drag_values(default):
    """The roofline's drag: one step per batch of the grid and the page's own (active); step i draws the decode point
    and the readout panel exactly as the view does at batch = values[i]."""
    fig = figures(default)[0]
    slider = slider_of(fig)
    view = view_of.figures(view_of.SPEC.defaults())
    drag = view.drags["main"]
    assert drag.field == "batch" and drag.values == view_of.batch_steps(16) == view_of.BATCH_STEPS
    assert all(isinstance(b, int) and view_of.SPEC["batch"].check(b) is None for b in drag.values)
    assert len(drag.values) == 34 and (drag.values[0], drag.values[-1]) == (1, 4096)
    assert {2**k for k in range(13)} <= set(drag.values)  # every power of two from 1 to 4,096
    assert [s["label"] for s in slider["steps"]] == [f"{b:,}" for b in drag.values]
    assert drag.values[slider["active"]] == 16 and slider["currentvalue"]["prefix"] == "decode batch = "
    for i in (0, len(drag.values) // 2, len(drag.values) - 1):
        step = slider["steps"][i]
        at = view_of.figures(view_of.SPEC.defaults().replace(batch=drag.values[i])).figures["main"].to_dict()
        k = _moving(step)
        assert at["data"][k]["name"] == "decode at the dragged batch"
        assert at["layout"]["annotations"][0]["name"] == READOUT
        assert list(decode(step["args"][0]["x"][0])) == list(decode(at["data"][k]["x"]))
        assert list(decode(step["args"][0]["y"][0])) == list(decode(at["data"][k]["y"]))
        assert step["args"][0]["hovertemplate"] == [at["data"][k]["hovertemplate"]]
        assert step["args"][1] == {"annotations[0].text": at["layout"]["annotations"][0]["text"]}
    # only the decode point moves: the roof, the ridge, the decode curve and the prefill point are not in the steps
    assert {_moving(s) for s in slider["steps"]} == {len(fig["data"]) - 1}
    # a batch off the grid is a step of its own, where the drag starts
    odd = view_of.figures(view_of.SPEC.defaults().replace(batch=100))
    assert odd.drags["main"].values == tuple(sorted({*view_of.BATCH_STEPS, 100}))
    assert odd.figures["main"].layout.sliders[0].active == odd.drags["main"].values.index(100)


@pytest.mark.parametrize(("batch", "ctx"), [(16, 8192), (4096, 1)])
def test_batch_step_readout_against_the_roofline_by_hand(batch, ctx):
    """A step's point and readout at the printed precision, from the roofline written out for Llama-3-8B on one H100:
    batch 16 at 8k context is memory-bound, batch 4,096 at a context of 1 compute-bound at the 989 TFLOP/s peak. Both
    fit beside the weights (65 sequences of 8k, over half a million of 1 token): no over-capacity line."""
    view = view_of.figures(view_of.SPEC.defaults().replace(srv_ctx=ctx))
    slider = view.figures["main"].layout.sliders[0]
    step = slider.steps[view.drags["main"].values.index(batch)]
    hand = _decode_step(batch, ctx)
    bound = "memory-bound" if hand["memory_s"] >= hand["compute_s"] else "compute-bound"  # the larger time
    assert bound == ("memory-bound" if batch == 16 else "compute-bound")
    ms = f"{hand['ms']:,.0f}" if hand["ms"] >= 100 else f"{hand['ms']:#.3g}".rstrip(".")
    tflops = f"{hand['tflops']:,.0f}" if hand["tflops"] >= 100 else f"{hand['tflops']:#.3g}".rstrip(".")
    assert step.args[1]["annotations[0].text"] == "<br>".join(
        [
            f"<b>decode, batch {batch:,},<br>context {ctx:,}</b>",
            f"{hand['intensity']:,.1f} FLOP/B",
            bound,
            f"at most {tflops} TFLOP/s per GPU",
            f"step: a floor of {ms} ms",
            f"at most {hand['tokens']:,.0f} tokens/s",
        ]
    )
    if batch == 16:
        assert f"{hand['intensity']:,.1f}" == "9.3" and f"{hand['tokens']:,.0f}" == "1,612"
    else:  # compute-bound: the peak, and as many tokens per second as the peak has FLOPs for
        assert tflops == "989"
    x, y = step.args[0]["x"][0][0], step.args[0]["y"][0][0]
    assert x == pytest.approx(hand["intensity"], rel=5e-4) and y == pytest.approx(hand["tflops"], rel=5e-4)
    # the page's own readout of the same step says the same
    intensity = {r.label: r.value for r in view.readouts}.get(f"Decode intensity, batch {batch:,}")
    if batch == 16:
        assert intensity == f"{hand['intensity']:,.1f} FLOP/B"
        help_text = {r.label: r.help for r in view.readouts}[f"Decode intensity, batch {batch:,}"]
        assert help_text.startswith(f"at context {ctx:,}: {bound}. ")


def test_no_roofline_no_drag():
    """A tensor-parallel size that does not divide the heads draws no roofline, and declares no drag."""
    view = view_of.figures(view_of.SPEC.defaults().replace(srv_gpus=3))
    assert "main" not in view.figures and view.drags == {}


def _panel(state, batch: int) -> str:
    """The roofline's readout panel at the drag's step for ``batch``."""
    view = view_of.figures(state)
    step = view.figures["main"].layout.sliders[0].steps[view.drags["main"].values.index(batch)]
    return step.args[1]["annotations[0].text"]


def test_a_batch_whose_kv_cache_does_not_fit_says_so_with_the_pages_capacity():
    """At the defaults one 8,192-token sequence of Llama-3-8B holds 8,192 x 128 KiB = 1 GiB of K and V, and
    (80 GiB - 2 x 8,030,261,248 bytes of weights) / 1 GiB = 65 of them fit: batch 64 and 65 fit, 66 and up do not
    (their cache is B GiB), and the panel says so with the count the page's capacity readout shows."""
    per_seq = 8192 * 2 * L8 * K8 * H8 * 2
    assert per_seq == 2**30
    fit = (80 * 2**30 - 2 * N8) // per_seq
    assert fit == 65
    state = view_of.SPEC.defaults()
    shown = {r.label: r.value for r in view_of.figures(state).readouts}["Sequences of 8,192 tokens that fit"]
    assert shown == f"{fit:,}"
    for batch in (1, 16, 64):
        assert "KV cache" not in _panel(state, batch) and "does not fit" not in _panel(state, batch)
    assert "does not fit" not in _panel(state.replace(batch=fit), fit)  # the last batch that fits
    for batch, size in ((fit + 1, "66 GiB"), (80, "80 GiB"), (4096, "4 TiB")):  # B x 1 GiB; 4,096 GiB = 4 TiB
        at = state.replace(batch=batch) if batch == fit + 1 else state
        assert batch * per_seq / 2**30 == float(size.split()[0]) * (1024 if "TiB" in size else 1)
        assert _panel(at, batch).endswith(f"<br>✗ KV cache {size}<br>does not fit<br>({fit} sequences do)")
    # weights that do not fit at all (Llama-3.1-405B's 756 GiB on one 80 GiB card): every step says so
    big = state.replace(srv_model="Llama-3.1-405B")
    assert all(_panel(big, b).endswith("<br>✗ the weights alone<br>do not fit") for b in (1, 16, 4096))


# Llama-3-70B, written out: parameters, vocabulary, width, layers, query heads, KV heads, head dim
N70, V70, D70, L70, NQ70, K70, H70 = 70_553_706_496, 128256, 8192, 80, 64, 8, 128


def test_the_bound_comes_from_the_step_times_when_tensor_parallelism_copies_the_kv_cache():
    """Llama-3-70B on 16 H100s (TP 16 over 8 KV heads: each KV head on two GPUs, the cache held twice) at context 512
    and batch 512: the group's intensity, which counts the cache once, is past the 295 FLOP/B ridge, but each GPU's
    memory time (its weights and its copied cache share) is longer than its compute time: memory-bound, with the
    note, in the panel and in the page's readout alike."""
    B, ctx, tp = 512, 512, 16
    flops = B * (2 * (N70 - V70 * D70 - (2 * L70 + 1) * D70) + 2 * L70 * NQ70 * 2 * H70 * (ctx + 0.5))
    kv = B * (ctx + 1) * 2 * L70 * K70 * H70 * 2
    copies = tp * math.ceil(K70 / tp) / K70
    memory_s = (2 * N70 + kv * copies) / (tp * H100_BW)
    compute_s = flops / (tp * H100_PEAK)
    intensity = flops / (2 * N70 + kv)
    assert copies == 2 and intensity > H100_PEAK / H100_BW and memory_s > compute_s
    state = view_of.SPEC.defaults().replace(srv_model="Llama-3-70B", srv_gpus=tp, srv_ctx=ctx, batch=B)
    lines = _panel(state, B).split("<br>")
    assert lines[2:6] == [
        f"{intensity:,.1f} FLOP/B",
        "memory-bound",
        "(group intensity; each GPU",
        "reads a copied KV share)",
    ]
    assert "compute-bound" not in lines and "from the 16 GPUs together" in lines
    help_text = {r.label: r.help for r in view_of.figures(state).readouts}[f"Decode intensity, batch {B}"]
    assert help_text.startswith(
        "at context 512: memory-bound by the step's times, though this intensity is past the ridge: it counts the "
        "cache once for the group, and each GPU reads a copied KV share (below)."
    )
    assert "with 16 GPUs over 8 KV heads the group reads 2 copies of the cache" in help_text
