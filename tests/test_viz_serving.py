"""viz.serving: the roofline bends at the ridge point, decode climbs it with the batch, speculative decoding's
curves and break-even line and KV capacity under two allocators; plotly accepts all."""

import numpy as np
import plotly.graph_objects as go
import pytest

from core import serving
from core.hardware import GPUS
from core.model_spec import CUSTOM, LLAMA3_8B, LLAMA3_70B
from tests.test_viz_style import _tick_and_title_px, contrast, marks, over, texts
from viz.serving import decode_bound, kv_capacity_figure, roofline_figure, speculative_figure
from viz.style import READOUT


def test_roofline_figure():
    h = GPUS["H100"]
    x = np.logspace(-1, 4, 200)
    batches = np.array([1, 4, 16, 64, 256])
    step = serving.forward_step(LLAMA3_70B, "H100", batches, 1, 1024, tp=4)
    prefill = serving.forward_step(LLAMA3_70B, "H100", 1, 2048, 0, tp=4)
    attained = lambda s: float(s.flops / (4 * s.seconds))  # noqa: E731
    fig = roofline_figure(
        x,
        serving.attainable_flops(x, "H100"),
        h.peak_flops,
        h.bandwidth,
        "H100",
        points=[("prefill 2,048", float(prefill.intensity), attained(prefill))],
        decode_curve=(batches, step.intensity, step.flops / (4 * step.seconds)),
        sparse_attainable=serving.attainable_flops(x, "H100", sparse=True),
    )
    go.Figure(fig.to_dict())
    roof = fig.data[0]
    assert max(roof.y) == pytest.approx(989.0)  # dense bf16 peak, TFLOP/s
    assert roof.y[0] == pytest.approx(0.1 * 3.35)  # 0.1 FLOP/B x 3.35 TB/s
    ridge = next(t for t in fig.data if t.name.startswith("ridge"))
    assert ridge.x[0] == pytest.approx(295.2, abs=0.1)  # 989e12 / 3.35e12 (002 A10-11)
    sparse = next(t for t in fig.data if t.name.startswith("trap"))
    assert max(sparse.y) == pytest.approx(1979.0)
    decode = next(t for t in fig.data if t.name.startswith("decode"))
    assert np.all(np.diff(decode.x) > 0)  # intensity grows with the batch
    assert decode.x[0] == pytest.approx(1.0, rel=0.05)  # about 1 FLOP/B at batch 1
    pf = next(t for t in fig.data if t.name.startswith("prefill"))
    assert pf.x[0] > ridge.x[0] and pf.y[0] == pytest.approx(989.0, rel=1e-6)  # compute-bound at the peak


def test_speculative_figure():
    a = np.linspace(0, 1, 21)
    ks = (1, 4)
    b = np.array([1, 8, 64, 4096])
    exp = {k: serving.expected_tokens_per_forward(a, k) for k in ks}
    sp = {k: serving.speculative_speedup_vs_batch(0.8, k, b, LLAMA3_8B, CUSTOM, context=256) for k in ks}
    fig = speculative_figure(a, exp, b, sp, (0.8, 4, float(serving.expected_tokens_per_forward(0.8, 4))))
    go.Figure(fig.to_dict())
    k4 = next(t for t in fig.data if t.name == "k = 4")
    assert k4.y[0] == 1.0 and k4.y[-1] == 5.0  # alpha = 0: one token; alpha = 1: k + 1
    assert k4.y[16] == pytest.approx(sum(0.8**i for i in range(5)))  # 3.3616, a plain loop
    s4 = next(t for t in fig.data if t.name == "k = 4 speed-up")
    assert s4.xaxis == "x2" and s4.y[0] > 1 > s4.y[-1]
    assert fig.layout.shapes[0].y0 == 1
    assert fig.data[-1].y[0] == pytest.approx(3.3616)


def test_kv_capacity_figure():
    ctx = np.array([1024, 4096, 16384])
    kvpt = 320 * 1024  # Llama-3-70B, bf16 (002 A10-07)
    lengths = np.full(100, 200)
    pairs = [serving.sequences_by_allocator(170 * 2**30, kvpt, np.minimum(lengths, c), int(c)) for c in ctx]
    waste = serving.allocation_waste(lengths, 4096)
    fig = kv_capacity_figure(
        ctx,
        [p[0] for p in pairs],
        [p[1] for p in pairs],
        (4096, *pairs[1]),
        waste=(waste.contiguous, waste.paged),
        trap=("MHA", [p[0] / 8 for p in pairs]),
    )
    go.Figure(fig.to_dict())
    contiguous, paged = fig.data[0], fig.data[1]
    assert contiguous.y[1] == pytest.approx(136.0)  # 170 GiB / (4,096 x 320 KiB) = 136 sequences of 4k
    assert paged.y[1] == pytest.approx(170 * 2**30 / (208 * kvpt))  # 200 tokens take 13 blocks of 16
    assert "95%" in fig.layout.annotations[0].text  # a 200-token answer in a 4,096 reservation (002 A8.4)
    assert fig.data[2].name == "trap: MHA" and fig.data[2].y[1] == pytest.approx(17.0)


def _swept_roofline(batch=16, context=1024, **kw):
    h, x = GPUS["H100"], np.logspace(-1, 4.7, 120)
    sizes = (1, 2, 4, 16, 64, 256, 1024, 4096)
    dec = serving.forward_step(LLAMA3_70B, "H100", np.array(sizes), 1, 1024, tp=4)
    pre = serving.forward_step(LLAMA3_70B, "H100", 1, 2048, 0, tp=4)
    kw.setdefault("kv_fit", (1024 * 320 * 2**10, 603, 1.0))  # 320 KiB per token; (320 GiB - 131.4 GiB) / 0.3125 GiB
    return roofline_figure(
        x,
        serving.attainable_flops(x, "H100"),
        h.peak_flops,
        h.bandwidth,
        "H100",
        points=[("prefill 2,048", float(pre.intensity), float(pre.flops / (4 * pre.seconds)))],
        decode_curve=(np.array(sizes), dec.intensity, dec.flops / (4 * dec.seconds)),
        batch_sweep=(
            sizes,
            dec.intensity,
            dec.flops / (4 * dec.seconds),
            dec.seconds,
            dec.memory_seconds,
            dec.compute_seconds,
        ),
        batch=batch,
        context=context,
        n_gpus=4,
        **kw,
    ), dec


def test_roofline_batch_slider_moves_the_decode_point_and_its_readout():
    built, dec = _swept_roofline()
    fig = built.to_dict()
    slider = fig["layout"]["sliders"][0]
    assert [s["label"] for s in slider["steps"]] == ["1", "2", "4", "16", "64", "256", "1,024", "4,096"]
    assert slider["active"] == 3 and slider["currentvalue"]["prefix"] == "decode batch = "
    moving = len(fig["data"]) - 1
    assert fig["data"][moving]["name"] == "decode at the dragged batch"  # one legend name at every step
    for k, step in enumerate(slider["steps"]):
        updates, relayout, indices = step["args"]
        assert list(indices) == [moving] and set(updates) == {"x", "y", "hovertemplate"}
        assert set(relayout) == {"annotations[0].text"}
        assert updates["x"][0][0] == pytest.approx(float(dec.intensity[k]), rel=5e-4)  # 4 significant digits
        assert updates["y"][0][0] == pytest.approx(float(dec.flops[k] / (4 * dec.seconds[k])) / 1e12, rel=5e-4)
    # the figure as drawn is its active step
    active = slider["steps"][3]["args"]
    assert list(fig["data"][moving]["x"]) == list(active[0]["x"][0])
    assert list(fig["data"][moving]["y"]) == list(active[0]["y"][0])
    assert fig["layout"]["annotations"][0]["text"] == active[1]["annotations[0].text"]
    panel = fig["layout"]["annotations"][0]
    assert panel["name"] == READOUT and panel["x"] == 1.0 and panel["xanchor"] == "right"
    assert fig["layout"]["xaxis"]["domain"][1] < 0.8  # the readout's column, right of the plot
    # Llama-3-70B on 4 H100s at batch 16 and a 1,024-token context: memory-bound; the tokens of the four together
    text = panel["text"]
    assert "<b>decode, batch 16,<br>context 1,024</b>" in text and "memory-bound" in text
    assert "from the 4 GPUs together" in text and "group intensity" not in text  # 4 GPUs split 8 KV heads
    assert f"at most {16 / float(dec.seconds[3]):,.0f} tokens/s" in text
    assert f"at most {float(dec.flops[3] / (4 * dec.seconds[3])) / 1e12:.3g} TFLOP/s per GPU" in text
    # 603 sequences fit: batch 1,024 does not, and its step says so (1,024 x 0.3125 GiB = 320 GiB); 256 does
    over = slider["steps"][6]["args"][1]["annotations[0].text"]
    assert over.endswith("<br>✗ KV cache 320 GiB<br>does not fit<br>(603 sequences do)")
    assert "KV cache" not in slider["steps"][5]["args"][1]["annotations[0].text"]
    with pytest.raises(ValueError, match="batch"):
        _swept_roofline(batch=None)
    with pytest.raises(ValueError, match="context"):
        _swept_roofline(context=None)
    with pytest.raises(ValueError):
        _swept_roofline(batch=3)  # not a step


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("presenter", [False, True])
def test_roofline_with_its_slider_is_valid_readable_and_leaves_room_for_the_axis(theme, presenter):
    fig = _swept_roofline(theme=theme, presenter=presenter)[0].to_dict()
    go.Figure(fig)  # plotly's validation, slider steps included
    layout = fig["layout"]
    low = [(w, c) for w, c, behind in texts(fig) if c is None or contrast(over(c, behind), behind) < 4.5]
    assert not low and not [r for _, r in marks(fig) if r is not None and r < 3.0]
    # under the plot: the x-axis tick labels and title, then the drag row
    assert layout["sliders"][0]["pad"]["t"] >= _tick_and_title_px(layout)
    assert layout["sliders"][0]["font"]["color"] and layout["sliders"][0]["currentvalue"]["font"]["size"] >= (
        16 if presenter else 15
    )


def test_presenter_roofline_hangs_its_legend_from_the_figure_top():
    """Presenter mode's legend is placed from the figure's top edge (plotly pushes the plot under it): one page load
    serves 1280 x 720, where the legend takes two rows, and 1920 x 1080, one row; after that resize plotly.js drew
    the default legend (its bottom over the plot) lower than the plot it had pushed, over the readout panel at the
    plot's top right (tests/browser/test_presentation_browser.py)."""
    legend = _swept_roofline(presenter=True)[0].to_dict()["layout"]["legend"]
    assert (legend["yref"], legend["y"], legend["yanchor"], legend["orientation"]) == ("container", 1.0, "top", "h")
    assert _swept_roofline()[0].to_dict()["layout"]["legend"].get("yref") is None  # normal mode: the default


def test_the_bound_is_the_larger_time_and_the_panel_says_when_the_group_intensity_disagrees():
    """Tensor parallelism past the KV heads copies the cache: each GPU reads more bytes per FLOP than the group's
    intensity counts. The label follows the times; the group's intensity past the ridge gets a note."""
    assert decode_bound(2.0, 1.0, 400.0, 295.0) == ("memory-bound", True)  # past the ridge, memory time larger
    assert decode_bound(2.0, 1.0, 100.0, 295.0) == ("memory-bound", False)
    assert decode_bound(1.0, 2.0, 400.0, 295.0) == ("compute-bound", False)
    assert decode_bound(1.0, 1.0, 295.0, 295.0) == ("memory-bound", True)  # a tie: memory time >= compute time
    h, x, sizes = GPUS["H100"], np.logspace(-1, 4.7, 40), (256, 512, 1024)
    dec = serving.forward_step(LLAMA3_70B, "H100", np.array(sizes), 1, 512, tp=16)
    fig = roofline_figure(
        x,
        serving.attainable_flops(x, "H100"),
        h.peak_flops,
        h.bandwidth,
        "H100",
        batch_sweep=(
            sizes,
            dec.intensity,
            dec.flops / (16 * dec.seconds),
            dec.seconds,
            dec.memory_seconds,
            dec.compute_seconds,
        ),
        batch=512,
        context=512,
        n_gpus=16,
    ).to_dict()
    texts = [s["args"][1]["annotations[0].text"].split("<br>") for s in fig["layout"]["sliders"][0]["steps"]]
    # batch 512: the group's 316 FLOP/B is past the 295 ridge, yet the memory time is the larger (the cache twice)
    assert texts[1][2:6] == ["316.3 FLOP/B", "memory-bound", "(group intensity; each GPU", "reads a copied KV share)"]
    assert texts[0][3] == "memory-bound" and "group intensity" not in texts[0][4]  # 195 FLOP/B: below the ridge
    assert texts[2][3] == "compute-bound"  # 459 FLOP/B and the compute time the larger
