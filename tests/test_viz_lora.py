"""viz.lora: the data the LoRA figures carry (frames, slider steps, marks, curves, bars), and the JSON budget."""

import base64

import numpy as np
import pytest
import torch

from core import lora, lora_layer, lora_memory
from viz.lora import (
    INIT_COLOURS,
    INIT_NAMES,
    lora_curves_figure,
    lora_heatmaps_figure,
    lora_memory_figure,
    lora_training_figure,
)
from viz.style import DIVERGING, PALETTE


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _decode(spec):
    """A plotly typed-array spec back to a numpy array."""
    shape = tuple(int(s) for s in spec["shape"].split(","))
    return np.frombuffer(base64.b64decode(spec["bdata"]), dtype=np.dtype(spec["dtype"])).reshape(shape)


def _z(trace):
    z = trace.z
    return _decode(z) if isinstance(z, dict) else np.asarray(z, dtype=np.float64)


@pytest.fixture(scope="module")
def problem():
    dw = lora.make_target(200, 150, "exponential", 1, decay=6.0)
    s = lora.svd(dw)
    curves = lora.rank_curves(s)
    ranks = lora.slider_ranks(s.m, 12, include=[8])
    return dw, s, curves, lora.display_frames(s, ranks)


def test_heatmaps_initial_traces_and_shared_scale(problem):
    _, _, curves, frames = problem
    fig = lora_heatmaps_figure(frames, curves, 8)
    assert len(fig.data) == 3 and all(t.type == "heatmap" for t in fig.data)
    j = list(frames.ranks).index(8)
    np.testing.assert_allclose(_z(fig.data[0]), frames.target, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_z(fig.data[1]), frames.approx[j], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_z(fig.data[2]), frames.residual[j], rtol=1e-6, atol=1e-6)
    assert {t.coloraxis for t in fig.data} == {"coloraxis"}
    ca = fig.layout.coloraxis
    assert ca.cmin == -ca.cmax
    every = (frames.target, frames.approx, frames.residual)
    assert ca.cmax == pytest.approx(max(np.abs(z).max() for z in every))  # one scale for all frames of the slider
    assert [list(c) for c in ca.colorscale] == [list(c) for c in DIVERGING]
    np.testing.assert_allclose(fig.data[0].x, frames.col_centres)
    np.testing.assert_allclose(fig.data[0].y, frames.row_centres)
    assert fig.layout.yaxis.autorange == "reversed"
    assert "64×64 block averages" in fig.layout.title.text and "200×150" in fig.layout.title.text


def test_heatmap_slider_steps_swap_the_frames(problem):
    _, _, curves, frames = problem
    fig = lora_heatmaps_figure(frames, curves, 8)
    slider = fig.layout.sliders[0]
    assert len(slider.steps) == len(frames.ranks)
    assert [int(s.label) for s in slider.steps] == [int(r) for r in frames.ranks]
    assert slider.steps[slider.active].label == "8"
    for i, step in enumerate(slider.steps):
        assert step.method == "update"
        data, layout, traces = step.args
        assert list(traces) == [1, 2]  # the target heatmap is never resent
        np.testing.assert_allclose(_decode(data["z"][0]), frames.approx[i], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(_decode(data["z"][1]), frames.residual[i], rtol=1e-6, atol=1e-6)
        r = int(frames.ranks[i])
        ro = curves.readout(r)
        texts = " ".join(layout.values())
        assert f"best rank-{r} approximation" in texts
        assert f"r(d+k) = {ro.params:,}" in texts
    # the slider's annotation keys point at the middle title and at the readout
    idx = [int(k.split("[")[1].split("]")[0]) for k in slider.steps[0].args[1]]
    assert fig.layout.annotations[idx[0]].text.startswith("best rank-")
    assert fig.layout.annotations[idx[1]].text.startswith("<b>r = 8</b>")


def test_readout_numbers(problem):
    _, _, curves, frames = problem
    text = lora_heatmaps_figure(frames, curves, 8).layout.annotations[-1].text
    ro = curves.readout(8)
    assert f"{100 * ro.rel_frobenius:.1f}%" in text and f"{100 * ro.energy:.1f}%" in text
    assert f"{8 * 350:,}" in text and f"{200 * 150:,}" in text


def test_unaveraged_small_matrix_and_r_not_in_frames():
    s = lora.svd(lora.make_target(20, 16, "flat", 0))
    frames = lora.display_frames(s, [0, 4, 16])
    fig = lora_heatmaps_figure(frames, lora.rank_curves(s), 5)  # nearest frame: r = 4
    assert fig.layout.sliders[0].active == 1
    assert "block averages" not in fig.layout.title.text
    np.testing.assert_allclose(_z(fig.data[0]), lora.make_target(20, 16, "flat", 0), rtol=1e-6, atol=1e-6)


def _synthetic_svd(d, k, seed=0):
    """An SVD-shaped triple with random factors: enough for sizes and subsampling, without an SVD's cost."""
    rng = np.random.default_rng(seed)
    m = min(d, k)
    S = np.sort(rng.random(m))[::-1] + 1e-3
    return lora.SVD(U=rng.standard_normal((d, m)) / np.sqrt(d), S=S, Vh=rng.standard_normal((m, k)) / np.sqrt(k))


def test_heatmap_json_under_1mb_at_d1024():
    s = _synthetic_svd(1024, 1024)
    frames = lora.display_frames(s, lora.slider_ranks(s.m, 16, include=[8]))
    assert len(frames.ranks) == 17
    size = len(lora_heatmaps_figure(frames, lora.rank_curves(s), 8).to_json())
    assert size <= 1_000_000


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def test_curves_figure_marks_the_current_r(problem):
    _, _, curves, _ = problem
    fig = lora_curves_figure(curves, 8)
    marks = [t for t in fig.data if t.name == "current r"]
    assert len(marks) == 4
    sigma_mark, err_mark, energy_mark, params_mark = marks
    assert sigma_mark.x == (8,) and sigma_mark.y[0] == pytest.approx(curves.sigma[7])
    assert err_mark.x == (8,) and err_mark.y[0] == pytest.approx(curves.rel_frobenius[8])
    assert energy_mark.y[0] == pytest.approx(curves.energy[8])
    assert params_mark.y[0] == 8 * (200 + 150)
    kept = _trace(fig, "kept (i ≤ r)")
    np.testing.assert_array_equal(kept.x, np.arange(1, 9))
    full = _trace(fig, "full matrix dk")
    assert list(full.y) == [200 * 150, 200 * 150]
    err = _trace(fig, "‖ΔW − BA‖<sub>F</sub> / ‖ΔW‖<sub>F</sub>")
    np.testing.assert_allclose(err.y, curves.rel_frobenius)  # m + 1 = 151 points: not subsampled
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis4.type == "log"
    assert any("r = 86" in (a.text or "") for a in fig.layout.annotations)  # break-even dk/(d+k) = 85.7


def test_curves_slider_moves_the_marks(problem):
    _, _, curves, _ = problem
    ranks = [0, 2, 8, 40]
    fig = lora_curves_figure(curves, 8, slider_ranks=ranks)
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["0", "2", "8", "40"] and fig.layout.sliders[0].active == 2
    marks = [i for i, t in enumerate(fig.data) if t.name == "current r"]
    for step, r in zip(steps, ranks, strict=True):
        data, traces = step.args
        assert list(traces) == marks
        assert data["y"][1] == [pytest.approx(curves.rel_frobenius[r])]
        assert data["y"][3] == ([r * 350] if r else [])
        assert data["x"][0] == ([r] if r else [])


def test_curves_subsampled_when_long_and_say_so():
    c = lora.rank_curves(_synthetic_svd(1500, 1400))
    fig = lora_curves_figure(c, 30, max_points=500)
    err = _trace(fig, "‖ΔW − BA‖<sub>F</sub> / ‖ΔW‖<sub>F</sub>")
    assert len(err.x) <= 500 and err.x[0] == 0 and err.x[-1] == 1400
    np.testing.assert_array_equal(np.asarray(err.x)[:100], np.arange(100))  # every small r kept
    np.testing.assert_allclose(err.y, c.rel_frobenius[np.asarray(err.x)])
    assert "curves drawn at" in fig.layout.title.text
    assert len(fig.to_json()) < 200_000


@pytest.fixture(scope="module")
def runs():
    cfg = lora_layer.TrainConfig(d=16, k=12, r=2, alpha=4.0, target_rank=4, n_samples=40, steps=60, lr=0.05)
    return lora_layer.train_all_inits(cfg, inits=("B0", "zeros", "both_random"))


def test_training_figure_curves_and_gradients(runs):
    fig = lora_training_figure(runs)
    for init, res in runs.items():
        name = INIT_NAMES[init]
        loss = _trace(fig, name)
        np.testing.assert_allclose(loss.y, res.loss)
        assert loss.line.color == INIT_COLOURS[init]
        np.testing.assert_allclose(_trace(fig, f"‖A‖ {name}").y, res.norm_A)
        np.testing.assert_allclose(_trace(fig, f"‖B‖ {name}").y, res.norm_B)
    assert INIT_COLOURS["B0"] == PALETTE["optimum"]
    bars_A = _trace(fig, "‖∂L/∂A‖ at step 0")
    bars_B = _trace(fig, "‖∂L/∂B‖ at step 0")
    assert list(bars_A.y) == [INIT_NAMES[i] for i in runs]
    assert bars_A.text[0] == "∂L/∂A: 0 exactly" and bars_B.text[0] != "∂L/∂B: 0 exactly"  # B = 0
    assert bars_A.text[1] == "∂L/∂A: 0 exactly" and bars_B.text[1] == "∂L/∂B: 0 exactly"  # A = B = 0
    assert bars_A.x[2] == pytest.approx(np.linalg.norm(runs["both_random"].grad_A0))
    floor = _trace(fig, "best rank-r loss (Eckart-Young)")  # r = 2 < target rank 4: a floor exists
    assert floor.y[0] == pytest.approx(runs["B0"].loss_floor)
    assert fig.layout.yaxis.type == "log"


def test_training_figure_thins_long_runs():
    cfg = lora_layer.TrainConfig(d=8, k=8, r=2, target_rank=2, steps=1200, lr=0.01)
    fig = lora_training_figure({"B0": lora_layer.train_lora(cfg, "B0")}, max_points=500)
    loss = _trace(fig, INIT_NAMES["B0"])
    assert len(loss.x) <= 500 and loss.x[0] == 0 and loss.x[-1] == 1200
    assert not any(t.name == "best rank-r loss (Eckart-Young)" for t in fig.data)  # r = target rank: floor ~ 0


def test_memory_figure_bars():
    f = lora_memory.lora_memory(**lora_memory.PRESET_F)
    q = lora_memory.lora_memory(lora_memory.LLAMA2_7B, ["q", "k", "v", "o"], 8, base_format="nf4")
    fig = lora_memory_figure({"LoRA": f, "QLoRA": q}, gpu_gb=24)
    full, base, adapter = fig.data
    assert list(full.y) == ["full fine-tuning", "LoRA", "QLoRA"]
    assert full.x[0] == pytest.approx(112.0)
    assert list(base.x) == pytest.approx([0.0, 14.0, 7 * 4.127 / 8], rel=1e-4)  # NF4 + double quantisation
    assert adapter.x[1] == pytest.approx(0.134217728)
    assert "14.1 GB total" in fig.layout.annotations[0].text
    assert any("“24 GB” GPU: 24 GiB = 25.8 GB" in (a.text or "") for a in fig.layout.annotations)
    assert fig.layout.shapes[0].x0 == pytest.approx(24 * 2**30 / 1e9)  # a GPU's "GB" are GiB
    with pytest.raises(ValueError):
        lora_memory_figure({})


def test_percent_for_readouts():
    from viz.format import percent

    assert percent(8_388_608 / 7e9) == "0.12%"  # worked example F
    assert percent(65_536 / 4096**2) == "0.39%" and percent(0.25) == "25.0%" and percent(0.0) == "0%"
    assert percent(4.6e-16) == "≈ 0%"  # rounding noise of an exact rank-r fit
