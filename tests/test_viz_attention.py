"""viz.attention: the figures carry the right data, downsample large inputs (and say so) and stay small."""

import numpy as np
import plotly.graph_objects as go
import pytest

from core import attention, kv_cache, tokenizer, toy_attention
from tests.apptest import decode, font_sizes
from viz.attention import (
    PRESENTER_TICK_ANGLE,
    SCALE_COLOURS,
    SCALE_NAMES,
    SWEEP_CELL_BUDGET,
    attention_figure,
    attention_kv_cache_figure,
    attention_mask_figure,
    attention_outputs_figure,
    attention_scale_figure,
    heads_readout,
    presenter_tick_room,
    shown_cells,
    sweep_steps,
)
from viz.style import DIVERGING, SEQUENTIAL

SENTENCE = tuple(tokenizer.DEFAULT_TEXT.split())


def _heatmaps(fig):
    return [t for t in fig.data if isinstance(t, go.Heatmap)]


def _bars(fig):
    return [t for t in fig.data if isinstance(t, go.Bar)]


def test_head_grid_small_input_keeps_every_weight():
    res = toy_attention.toy_attention(SENTENCE, toy_attention.ToyModelSettings(heads=4, kv_heads=2))
    fig = attention_figure(res.weights, res.tokens, res.head_names)
    maps = _heatmaps(fig)
    assert len(maps) == 7
    for h, trace in enumerate(maps):
        assert trace.z.dtype == np.float32
        assert np.array_equal(trace.z, res.weights[h])
        assert trace.name == res.head_names[h]
        assert "%{z:.3f}" in trace.hovertemplate and "query %{y}" in trace.hovertemplate
    labels = list(maps[0].x)
    assert labels[0] == "0:the" and labels[4] == "4:the" and len(set(labels)) == len(SENTENCE)
    assert fig.layout.coloraxis.colorscale == tuple(tuple(c) for c in SEQUENTIAL)
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    assert fig.layout.uirevision == "attention-heads"
    assert "shown as" not in fig.layout.title.text
    assert [a.text for a in fig.layout.annotations][:7] == list(res.head_names)


def test_head_grid_at_512_tokens_is_block_summed_small_and_says_so():
    toks = tokenizer.random_tokens(512).tokens
    res = toy_attention.toy_attention(toks, toy_attention.ToyModelSettings(d_model=256, heads=8, d_k=32))
    fig = attention_figure(res.weights, toks, res.head_names)
    maps = _heatmaps(fig)
    assert len(maps) == 11
    z = maps[0].z
    assert z.shape == (64, 64) and z.dtype == np.float32
    assert np.allclose(z.sum(-1), 1.0, atol=1e-4)  # shown rows still sum to 1
    # a cell = mean over the 8 query rows of the weight summed over the 8 keys
    assert z[10, 3] == pytest.approx(res.weights[0, 80:88, 24:32].sum(-1).mean(), abs=1e-6)
    assert maps[0].x[0] == "0–7" and "block weight" in maps[0].hovertemplate
    assert "512 tokens shown as 64×64 blocks" in fig.layout.title.text
    # the previous-token head keeps most of its weight on the diagonal blocks (7 of the 8 previous tokens lie there)
    assert np.array_equal(maps[8].z.argmax(-1), np.arange(64))
    size = len(fig.to_json())
    assert size < 1_000_000
    assert '"dtype":"f4"' in fig.to_json()


def test_head_grid_with_many_heads_stays_under_one_megabyte():
    toks = tokenizer.random_tokens(512).tokens
    res = toy_attention.toy_attention(toks, toy_attention.ToyModelSettings(d_model=512, heads=32, d_k=16))
    fig = attention_figure(res.weights, toks, res.head_names)
    assert len(_heatmaps(fig)) == 35
    assert _heatmaps(fig)[0].z.shape[0] < 64
    assert len(fig.to_json()) < 1_000_000


def test_head_grid_zmax_and_errors():
    w = np.full((2, 3, 3), 1 / 3, dtype=np.float32)
    fig = attention_figure(w, ["a", "b", "c"], zmax=0.5)
    assert fig.layout.coloraxis.cmax == 0.5 and "0 to 0.5" in fig.layout.title.text
    with pytest.raises(ValueError, match="shape"):
        attention_figure(w, ["a", "b"])
    with pytest.raises(ValueError, match="head names"):
        attention_figure(w, ["a", "b", "c"], ["only one"])
    with pytest.raises(ValueError, match="zmax"):
        attention_figure(w, ["a", "b", "c"], zmax=0)


def test_mask_figure_shows_row_sums():
    qkv = toy_attention.toy_qkv(SENTENCE, toy_attention.ToyModelSettings())
    cmp = attention.mask_comparison(qkv.q[0], qkv.k[0])
    fig = attention_mask_figure(cmp.correct, cmp.buggy, SENTENCE, cmp.correct_row_sums, cmp.buggy_row_sums)
    maps, bars = _heatmaps(fig), _bars(fig)
    assert len(maps) == 2 and len(bars) == 2
    assert np.allclose(maps[0].z, cmp.correct, atol=1e-7) and np.allclose(maps[1].z, cmp.buggy, atol=1e-7)
    assert np.allclose(bars[0].x, 1.0, atol=1e-6)
    assert np.allclose(bars[1].x, cmp.buggy_row_sums, atol=1e-6) and np.all(bars[1].x[:-1] < 1)
    assert list(bars[1].y) == list(maps[1].y)
    titles = [a.text for a in fig.layout.annotations]
    assert "−∞ before softmax (correct)" in titles and "× 0 after softmax (bug)" in titles
    # row sums default to the rows' sums
    fig2 = attention_mask_figure(cmp.correct, cmp.buggy, SENTENCE)
    assert np.allclose(_bars(fig2)[1].x, cmp.buggy_row_sums, atol=1e-6)


def test_mask_figure_downsamples_long_inputs():
    toks = tokenizer.random_tokens(200).tokens
    qkv = toy_attention.toy_qkv(toks, toy_attention.ToyModelSettings())
    cmp = attention.mask_comparison(qkv.q[0], qkv.k[0])
    fig = attention_mask_figure(cmp.correct, cmp.buggy, toks)
    assert _heatmaps(fig)[0].z.shape == (64, 64)
    assert np.allclose(_bars(fig)[0].x, 1.0, atol=1e-5)
    assert "200 tokens shown as 64 blocks" in fig.layout.title.text
    assert len(fig.to_json()) < 200_000


def test_scale_figure_plots_the_statistics():
    stats = attention.logit_statistics((1, 4, 16, 64), tokens=32, d_model=256)
    fig = attention_scale_figure(
        stats.d_k,
        stats.variance,
        stats.entropy,
        stats.max_entropy,
        expected_variance=stats.expected_variance,
        current_d_k=16,
    )
    lines = {(t.name, t.xaxis): t for t in fig.data}
    for choice, name in SCALE_NAMES.items():
        assert np.allclose(lines[(name, "x")].y, stats.variance[choice])
        assert np.allclose(lines[(name, "x2")].y, stats.entropy[choice])
        assert np.allclose(lines[(f"{name}: theory", "x")].y, stats.expected_variance[choice])
        assert lines[(name, "x")].line.color == SCALE_COLOURS[choice]
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.title.text == "d_k (head dimension)"
    texts = [a.text for a in fig.layout.annotations]
    assert "your d_k = 16" in texts and any("log T = 3.47" in t for t in texts)
    assert fig.layout.uirevision == "attention-scale"
    with pytest.raises(ValueError, match="align"):
        attention_scale_figure([1, 2], {"none": np.ones(3)}, {"none": np.ones(3)}, 1.0)


def test_outputs_figure():
    res = toy_attention.toy_attention(SENTENCE, toy_attention.ToyModelSettings(d_k=8, d_model=32))
    fig = attention_outputs_figure(res.outputs, SENTENCE, res.head_names)
    maps = _heatmaps(fig)
    assert len(maps) == 7 and np.array_equal(maps[2].z, res.outputs[2])
    assert list(maps[0].x) == list(range(8))
    bound = float(np.abs(res.outputs).max())
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == pytest.approx((-bound, bound))
    assert fig.layout.coloraxis.colorscale == tuple(tuple(c) for c in DIVERGING)
    big = tokenizer.random_tokens(300).tokens
    res = toy_attention.toy_attention(big, toy_attention.ToyModelSettings(d_k=8, d_model=32), designed=False)
    fig = attention_outputs_figure(res.outputs, big, res.head_names)
    assert _heatmaps(fig)[0].z.shape == (64, 8) and "300 tokens shown as 64 rows" in fig.layout.title.text


def test_kv_cache_figure_llama3_70b():
    shape = kv_cache.KV_PRESETS["Llama-3-70B"]
    variants = kv_cache.attention_variants(shape)
    totals = [kv_cache.kv_cache_bytes(80, h, 128, 2, tokens=131072) for h in variants.values()]
    per_token = [shape.bytes_per_token(h) for h in variants.values()]
    fig = attention_kv_cache_figure(
        list(variants), totals, per_token_bytes=per_token, context_tokens=131072, memory_limit_bytes=80e9
    )
    (bar,) = _bars(fig)
    assert list(bar.y) == ["MHA", "GQA", "MQA"]
    assert np.allclose(bar.x, [320, 40, 5])
    assert bar.text == ("320 GiB (2,560 KiB/token)", "40 GiB (320 KiB/token)", "5 GiB (40 KiB/token)")
    assert "131,072 tokens" in fig.layout.title.text
    assert fig.layout.shapes[0].x0 == pytest.approx(80e9 / 2**30)
    with pytest.raises(ValueError):
        attention_kv_cache_figure(["a"], [1, 2])


def _sweep(temps=(0.5, 1.0, 2.0), **settings):
    s = toy_attention.ToyModelSettings(**settings)
    sweep = toy_attention.temperature_sweep(SENTENCE, s, "sqrt_dk", list(temps))
    return s, sweep, sweep.summaries(s.heads)


def test_core_temperature_sweep_is_toy_attention_at_each_temperature():
    s, sweep, summaries = _sweep((0.05, 1.0, 20.0), heads=4, kv_heads=2)
    for i, T in enumerate(sweep.temperatures):
        one = toy_attention.toy_attention(SENTENCE, s, "sqrt_dk", float(T))
        assert np.array_equal(sweep.weights[i], one.weights) and sweep.multipliers[i] == one.multiplier
        assert np.array_equal(sweep.entropy[i], one.entropy) and np.array_equal(sweep.logit_std[i], one.logit_std)
        assert summaries[i] == toy_attention.head_summary(one, 4)
    with pytest.raises(ValueError, match="temperature"):
        toy_attention.temperature_sweep(SENTENCE, s, "sqrt_dk", [1.0, 0.0])


def test_head_grid_with_a_temperature_sweep_restyles_the_panels_and_the_readout():
    _, sweep, summaries = _sweep()
    fig = attention_figure(sweep.weights[1], SENTENCE, None, sweep=sweep, summaries=summaries, active=1)
    go.Figure(fig.to_dict())  # validates every property, the slider's included
    slider = fig.layout.sliders[0]
    assert slider.active == 1 and [st.label for st in slider.steps] == ["0.5", "1", "2"]
    assert slider.currentvalue.prefix == "T = " and slider.currentvalue.font.color and slider.font.color
    for i, step in enumerate(slider.steps):
        restyle, relayout, traces = step.args
        assert step.method == "update" and list(traces) == list(range(7)) and set(relayout) == {"title.text"}
        for h, z in enumerate(restyle["z"]):
            assert z["dtype"] == "f4" and np.array_equal(decode(z), sweep.weights[i, h])
        T = sweep.temperatures[i]
        assert f"<b>T = {T:g}</b>: logits × {0.25 / T:.4g}" in relayout["title.text"]  # 1/√16 ÷ T
    assert fig.layout.title.text == slider.steps[1].args[1]["title.text"]  # as drawn: the active step
    # the panels keep their height: the figure grows by the readout line and what the slider takes under the plot
    plain = attention_figure(sweep.weights[1], SENTENCE)
    assert fig.layout.height == plain.layout.height + 20 + 76
    big = attention_figure(sweep.weights[1], SENTENCE, sweep=sweep, summaries=summaries, active=1, presenter=True)
    assert all(size >= 16 for _, size in font_sizes(big.to_plotly_json()["layout"]))
    assert big.layout.title.pad.t == 6 + 20  # the readout line under the title, which plotly anchors by its first


def test_presenter_heads_grid_gives_the_panels_the_room_of_its_labels():
    """Presenter mode's heads grid with its temperature slider: the panels are at least 0.15 of a 720 px screen tall
    (tests/browser/test_presentation_browser.py) under a title with a readout line and over a drag row. The bottom
    row's token labels lean at -40 degrees and the slider's pad is the room of the labels shown (the frame keeps the
    pad and 8 px under the plot), not a fixed room for 13 characters; the panel titles sit right under the title's
    lines."""
    _, sweep, summaries = _sweep()
    big = attention_figure(sweep.weights[1], SENTENCE, sweep=sweep, summaries=summaries, active=1, presenter=True)
    layout = big.to_plotly_json()["layout"]
    bottom = [layout[k] for k in layout if k.startswith("xaxis") and layout[k].get("showticklabels")]
    assert bottom and all(axis["tickangle"] == PRESENTER_TICK_ANGLE == -40 for axis in bottom)
    shown = list(bottom[0]["tickvals"])
    assert shown == ["0:the", "3:on", "6:because", "9:was"]  # 4 of the 11 tokens at presenter size
    # an independent estimate of the longest label's room: 9 characters at 0.5 em of 19 px, a 1.33 em line, leaning
    # at 40 degrees, 13 px of tick and gap (chromium draws "6:because" in 83 px)
    assert presenter_tick_room(shown) == 88 == round(13 + 0.6428 * 85.5 + 0.7660 * 25.27 + 0.5)
    assert layout["sliders"][0]["pad"]["t"] == 88 - 8 < 104  # 104: the fixed pad for 13 characters at -60 degrees
    assert presenter_tick_room([]) == 0 and presenter_tick_room(["10:abcdefghij"]) > presenter_tick_room(shown)
    assert layout["margin"]["t"] == 36 + 22 + 24  # the title and its readout line, then the panel titles
    # the normal layout keeps its fixed pad and -60 degrees
    normal = attention_figure(sweep.weights[1], SENTENCE, sweep=sweep, summaries=summaries, active=1)
    assert normal.layout.sliders[0].pad.t == 81 and normal.layout.xaxis.tickangle == -60


def test_the_readout_line_says_what_its_share_is_of_and_stays_one_line():
    """The share is of the mean entropy of uniform rows (log t for causal row t, log T without the mask), the bound the
    line prints; at the widest values of the page's grid (T and multiplier at 4 significant digits) the line keeps
    to 120 characters (at the title's small type about 870 px in presenter mode, inside the 960 px figure)."""
    for causal, bound in ((True, np.mean(np.log(np.arange(1, 12)))), (False, np.log(11))):
        s = toy_attention.ToyModelSettings()
        sweep = toy_attention.temperature_sweep(SENTENCE, s, "sqrt_dk", [0.05, 1.0, 20.0], causal=causal)
        for t, m, summary in zip(sweep.temperatures, sweep.multipliers, sweep.summaries(4), strict=True):
            line = heads_readout(float(t), float(m), summary)
            assert summary.max_entropy == pytest.approx(bound) and summary.entropy <= summary.max_entropy + 1e-6
            assert f"({summary.entropy / bound:.0%} of uniform rows' {bound:.2f})" in line
    widest = heads_readout(0.05808, 4.304, toy_attention.HeadSummary(4, 1.0, 1.39, 1.59, 0.88, 0.45))
    assert len(widest.replace("<b>", "").replace("</b>", "")) <= 120, widest


def test_head_grid_sweep_errors():
    _, sweep, summaries = _sweep()
    with pytest.raises(ValueError, match="shape"):
        attention_figure(sweep.weights[1, :3], SENTENCE, sweep=sweep, summaries=summaries, active=1)
    with pytest.raises(ValueError, match="summary"):
        attention_figure(sweep.weights[1], SENTENCE, sweep=sweep, summaries=summaries[:2], active=1)
    with pytest.raises(ValueError, match="active"):
        attention_figure(sweep.weights[1], SENTENCE, sweep=sweep, summaries=summaries, active=3)


def test_sweep_steps_fit_the_cell_budget():
    grid = [0.05 * 400 ** (k / 40) for k in range(41)]
    assert shown_cells(7, 11) == 7 * 121 and shown_cells(7, 512) == 7 * 64 * 64 and shown_cells(35, 512) == 35 * 61**2
    assert sweep_steps(grid, 7, 11, grid[20]) == tuple(grid)
    full = sweep_steps(grid, 7, 11, 0.7)
    assert len(full) == 41 + 1 and 0.7 in full  # the page's value merged in
    half = sweep_steps(grid, 11, 11, grid[20])  # 11 × 121 cells: 41 steps are over the budget, 21 are not
    assert len(half) == 21 and half == tuple(sorted(grid[::2]))
    assert 41 * 11 * 121 > SWEEP_CELL_BUDGET >= 21 * 11 * 121
    assert sweep_steps(grid, 7, 64, 1.0) == ()  # 7 × 64² cells a step: no slider
