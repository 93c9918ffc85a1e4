"""viz.sampling, viz.loss_units, viz.schedules: the traces carry core's numbers; each figure passes plotly's
validation when rebuilt (the builders skip it for speed)."""

import math

import numpy as np
import plotly.graph_objects as go
import pytest

from core.loss_units import compare_tokenizers, example_lengths, padding_waste, sft_loss_weights
from core.sampling import VOCAB_PRESETS, generate_markov, markov_logits, sample_filter
from core.schedules import DEFAULT_LOSS_MODEL, data_mixture, kaplan_gap, lr_schedule, wsd_branch, wsd_sweep
from viz.loss_units import (
    bpe_merges_figure,
    packing_mask_figure,
    padding_figure,
    sft_mask_figure,
    tokenizer_units_figure,
)
from viz.sampling import generation_figure, order_figure, sampling_figure
from viz.schedules import kaplan_figure, mixture_figure, schedule_figure, wsd_branch_figure, wsd_name
from viz.style import PALETTE

P = VOCAB_PRESETS["keeper"]


def _valid(fig):
    return go.Figure(fig.to_dict())  # raises on any invalid property


def test_sampling_figure_bars_and_temperature_slider():
    fig = sampling_figure(P.logits, P.tokens, 0.7, top_p=0.9)
    _valid(fig)
    before, sampled = fig.data
    want = sample_filter(np.array(P.logits), 0.7, top_p=0.9).cpu().numpy()
    np.testing.assert_allclose(np.asarray(sampled.y, float), want, atol=1e-5)
    kept = want > 0
    assert [c == PALETTE["reference"] for c in before.marker.color] == kept.tolist()  # the kept set shaded
    slider = fig.layout.sliders[0]
    assert slider.steps[slider.active].label == "0.7"
    assert all(s.method == "update" for s in slider.steps)
    greedy = slider.steps[0]
    assert greedy.label == "0"
    assert greedy.args[0]["y"][1].tolist() == [1.0] + [0.0] * (len(P.tokens) - 1)
    assert "greedy" in greedy.args[1]["annotations[0].text"]
    hot = slider.steps[-1]
    assert hot.label == "2"
    np.testing.assert_allclose(
        hot.args[0]["y"][1], sample_filter(np.array(P.logits), 2.0, top_p=0.9).cpu().numpy(), atol=1e-5
    )
    n_kept = int((want > 0).sum())
    assert f"kept tokens: {n_kept}" in fig.layout.annotations[0].text


def test_order_figure_shows_the_two_orders():
    fig = order_figure(P.logits, P.tokens, 2.0, top_p=0.9)
    _valid(fig)
    a, b = (np.asarray(t.y, float) for t in fig.data)
    assert (a > 0).sum() > (b > 0).sum()
    assert f"({int((a > 0).sum())} kept)" in fig.data[0].name
    with pytest.raises(ValueError, match="label"):
        order_figure(P.logits, P.tokens[:3], 1.0)


def test_generation_figure_marks_the_greedy_loop():
    W = markov_logits(12, 0)
    g = generate_markov(W, 3, 30)
    s = generate_markov(W, 3, 30, 1.0, top_p=0.9, seed=1)
    fig = generation_figure({"greedy": g, "T = 1, top-p 0.9": s})
    _valid(fig)
    assert fig.data[0].z[0][:5].tolist() == list(g.tokens[:5])
    assert len(fig.layout.shapes) == (s.loop_start is not None) + 1
    assert fig.layout.shapes[0].x0 == g.loop_start - 0.5


def test_tokenizer_units_figure_values():
    same, per = compare_tokenizers()
    fig = tokenizer_units_figure(same, per)
    _valid(fig)
    ppl_same, bpb_same, ppl_per, bpb_per = fig.data
    assert list(ppl_same.x) == ["bytes", "chars", "bpe-300", "bpe-500", "bpe-800"]
    np.testing.assert_allclose(bpb_same.y, [s.bits_per_byte for s in same])
    assert max(bpb_same.y) - min(bpb_same.y) < 1e-9
    np.testing.assert_allclose(ppl_per.y, [s.perplexity for s in per])
    assert max(bpb_per.y) / min(bpb_per.y) < 1.5 < 2 < max(ppl_per.y) / min(ppl_per.y)
    assert fig.layout.yaxis.type == "log"


def test_sft_mask_figure_strip():
    w = sft_loss_weights(2000, 50, mask_prompt=False)
    fig = sft_mask_figure(w)
    _valid(fig)
    assert "97.6% of the loss on prompt tokens" in fig.layout.title.text
    z = np.asarray(fig.data[0].z)
    assert z.shape == (1, 2050) and z[0, 0] == pytest.approx(1 / 2050)
    assert fig.data[0].customdata[0][0] == "prompt" and fig.data[0].customdata[0][-1] == "response"


def test_packing_and_padding_figures():
    fig = packing_mask_figure([3, 2])
    _valid(fig)
    naive = np.asarray(fig.data[0].z)
    assert naive[3, 0] == 2 and naive[3, 3] == 1 and naive[0, 1] == 0  # cross-document, same document, future
    assert np.asarray(fig.data[1].z)[3, 0] == 0
    L = example_lengths(256)
    reps = [padding_waste(L, 16, s, seq_len=2048) for s in ("pad_to_longest", "bucket", "pack")]
    fig = padding_figure(reps)
    _valid(fig)
    np.testing.assert_allclose(fig.data[0].y, [r.waste for r in reps])


def test_schedule_figures_carry_the_model():
    lrs = {"cosine": lr_schedule("cosine", 10_000), "WSD": lr_schedule("wsd", 10_000)}
    fig = schedule_figure(lrs)
    _valid(fig)
    assert len(fig.data) == 4
    assert fig.data[1].y[-1] == pytest.approx(DEFAULT_LOSS_MODEL.loss(lrs["cosine"])[-1])
    assert fig.data[0].x[-1] == 10_000 and fig.data[0].y[-1] == pytest.approx(0.1)
    assert "Tissue et al. 2024" in fig.layout.annotations[0].text

    fig = wsd_branch_figure(10_000, [3000, 6000], 1000)
    _valid(fig)
    ends = fig.data[-1]
    assert list(ends.x) == [4000, 7000]
    assert ends.y[0] == pytest.approx(DEFAULT_LOSS_MODEL.loss(wsd_branch(10_000, 3000, 1000))[-1])

    g = kaplan_gap(10_000, [2500, 5000])
    fig = kaplan_figure(g, 10_000)
    _valid(fig)
    assert all(a > b for a, b in zip(fig.data[1].y, fig.data[2].y, strict=True))

    mx = data_mixture(10_000, 8000)
    fig = mixture_figure(mx, lr_schedule("wsd", 10_000))
    _valid(fig)
    assert [t.stackgroup for t in fig.data[:4]] == ["mix"] * 4
    assert fig.data[3].y[-1] == pytest.approx(0.30) and fig.data[0].y[0] == pytest.approx(0.80)
    assert math.isclose(fig.data[4].y[-1], 0.1)


def test_bpe_merges_figure_marks_the_count_and_escapes_the_tokens():
    tokens = [12, 10, 9, 9]  # after 0..3 merges
    merges = [("<", "b>"), ("a", "b"), ("ab", "&")]
    total = 12 * math.log(3.0)  # perplexity 3 per byte
    fig = bpe_merges_figure(tokens, merges, 1, total, 12)
    _valid(fig)
    assert list(fig.data[0].y) == tokens and fig.data[1].y[0] == pytest.approx(3.0)
    assert (fig.data[2].x, fig.data[2].y, fig.data[3].y) == ((1,), (10,), (pytest.approx(3.0**1.2, abs=5e-5),))
    panel = fig.layout.annotations[0].text
    assert panel.startswith("<b>1 merge</b> (vocabulary 257)") and "merge 1: &lt; + b&gt; → &lt;b&gt;" in panel
    assert "10 tokens, 1.20 bytes each" in panel and "bits per byte 1.5850" in panel  # log2(3)
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["1", "2", "3"] and fig.layout.sliders[0].active == 0
    (T,), (ppl,) = steps[2].args[0]["y"]
    assert (T, list(steps[2].args[2])) == (9, [2, 3]) and ppl == pytest.approx(3.0 ** (12 / 9), abs=5e-5)
    with pytest.raises(ValueError):
        bpe_merges_figure(tokens, merges, 4, total, 12)
    with pytest.raises(ValueError):
        bpe_merges_figure(tokens, merges[:2], 1, total, 12)


def test_schedule_figure_draws_the_swept_wsd_from_its_sweep():
    sweep = wsd_sweep(2000, [200, 1000], warmup=20)
    lrs = {
        "cosine": lr_schedule("cosine", 2000, warmup=20),
        wsd_name(1000, "linear"): lr_schedule("wsd", 2000, warmup=20, decay_steps=1000),
    }
    fig = schedule_figure(lrs, sweep=sweep, active=1, labels=["0.1", "0.5"])
    _valid(fig)
    assert list(fig.data[2].x) == list(sweep.at[1]) and fig.data[3].y[-1] == pytest.approx(sweep.loss[1][-1], abs=5e-5)
    assert [s.label for s in fig.layout.sliders[0].steps] == ["0.1", "0.5"]
    assert fig.layout.sliders[0].steps[0].args[0]["name"] == [wsd_name(200, "linear")] * 2
    assert fig.layout.height == 560 + 60 + 29  # the plot keeps its height above the slider
    with pytest.raises(ValueError, match="not one of the schedules"):
        schedule_figure(lrs, sweep=sweep, active=0)


def test_sampling_readout_counts_tiny_kept_tokens_and_never_shows_minus_zero() -> None:
    from core.sampling import VOCAB_PRESETS
    from viz.sampling import sampling_figure

    preset = next(iter(VOCAB_PRESETS.values()))
    tokens, logits = preset.tokens, preset.logits
    fig = sampling_figure(list(logits), list(tokens), 0.5).to_dict()
    text = fig["layout"]["annotations"][0]["text"]
    assert f"kept tokens: {len(tokens)}" in text  # no filter: every token is kept, however unlikely at T = 0.5
    greedy = sampling_figure(list(logits), list(tokens), 0.0).to_dict()["layout"]["annotations"][0]["text"]
    assert "kept tokens: 1" in greedy and "-0.000" not in greedy and "entropy H = 0.000 nats" in greedy
