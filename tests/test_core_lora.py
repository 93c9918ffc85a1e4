"""core.lora: the lesson's LoRA numbers, Eckart-Young, the initialisation traps, merge, uploads and memory."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core import arrays, lora, lora_layer, lora_memory
from core.device import as_tensor


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny tensors: one torch thread avoids thread-pool overhead on a busy machine (restored afterwards)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ----------------------------------------------------------------------------------------------------------------
# Lesson numbers


def test_param_count_4096_square_r8_and_r16():
    # section 3.5: d = k = 4096, r = 8 -> 65,536 instead of 16,777,216 (0.39%); check-yourself 5: r = 16 -> 0.78%
    assert lora.lora_param_count(4096, 4096, 8) == 65_536
    assert 4096 * 4096 == 16_777_216
    assert f"{100 * 65_536 / 16_777_216:.2f}" == "0.39"
    assert lora.lora_param_count(4096, 4096, 16) == 131_072
    assert f"{100 * 131_072 / 16_777_216:.2f}" == "0.78"


def test_param_count_rectangular_and_bad_input():
    assert lora.lora_param_count(512, 256, 4) == 4 * (512 + 256)
    assert lora.lora_param_count(10, 20, 0) == 0
    for bad in ((-1, 4, 2), (4, 4, -1), (4.0, 4, 1), (True, 4, 1)):
        with pytest.raises(ValueError):
            lora.lora_param_count(*bad)


def test_worked_example_F():
    mem = lora_memory.lora_memory(**lora_memory.PRESET_F)
    assert mem.per_matrix == {"q": 65_536, "k": 65_536, "v": 65_536, "o": 65_536}
    assert mem.per_layer == 262_144
    assert mem.trainable == 8_388_608
    assert f"{100 * mem.share:.2f}" == "0.12"
    assert round(mem.adapter_state_bytes / 1e6) == 134
    assert mem.base_bytes == pytest.approx(14e9)
    assert mem.full_ft_bytes == pytest.approx(112e9)
    assert mem.scale == 2.0  # alpha / r = 16 / 8
    assert mem.checkpoint_bytes == 2 * 8_388_608  # a 16.8 MB bf16 adapter against a 14 GB full copy
    assert mem.full_checkpoint_bytes == pytest.approx(14e9)
    assert mem.notes == ()


def test_seed003_layer_512_r8_alpha16():
    # seed 003: delta at init 0.0, trainable 8192, frozen 262144, ratio 0.0312
    torch.manual_seed(0)
    layer = lora_layer.LoRALinear(512, 512, r=8, alpha=16)
    x = as_tensor(torch.randn(4, 512), device=layer.W0.device)  # the layer lives on core's device
    delta = (layer(x) - x @ layer.W0.T).abs().max().item()
    assert delta == 0.0
    assert layer.trainable_count() == 8192
    assert layer.frozen_count() == 262_144
    assert round(layer.trainable_count() / layer.frozen_count(), 4) == 0.0312
    assert layer.trainable_count() == lora.lora_param_count(512, 512, 8)
    assert layer.scale == 2.0


# ----------------------------------------------------------------------------------------------------------------
# Eckart-Young


def _random_matrix(d, k, seed):
    return np.random.default_rng(seed).standard_normal((d, k))


@pytest.mark.parametrize(("d", "k"), [(30, 20), (20, 30), (25, 25)])
def test_eckart_young_frobenius_and_spectral(d, k):
    dw = _random_matrix(d, k, 1)
    s = lora.svd(dw)
    curves = lora.rank_curves(s)
    sigma_ref = np.linalg.svd(dw, compute_uv=False)  # independent reference: LAPACK through numpy
    np.testing.assert_allclose(s.S, sigma_ref, rtol=1e-5, atol=1e-8)
    norm = np.linalg.norm(dw)
    for r in range(min(d, k) + 1):
        resid = dw - lora.reconstruct(s, r)
        # ||Delta W - Delta W_r||_F = sqrt(sum_{i>r} sigma_i^2)
        assert np.linalg.norm(resid) == pytest.approx(np.sqrt(np.sum(sigma_ref[r:] ** 2)), rel=1e-5, abs=1e-6)
        assert curves.rel_frobenius[r] == pytest.approx(np.linalg.norm(resid) / norm, rel=1e-5, abs=1e-6)
        # ||Delta W - Delta W_r||_2 = sigma_{r+1}
        spectral = np.linalg.norm(resid, 2)
        expected = sigma_ref[r] if r < min(d, k) else 0.0
        assert spectral == pytest.approx(expected, rel=1e-5, abs=1e-6)
        assert curves.rel_spectral[r] == pytest.approx(expected / sigma_ref[0], rel=1e-5, abs=1e-6)
        assert curves.energy[r] == pytest.approx(np.sum(sigma_ref[:r] ** 2) / norm**2, rel=1e-5, abs=1e-8)
    assert curves.rel_frobenius[0] == 1.0
    assert curves.rel_frobenius[-1] == 0.0
    assert curves.energy[-1] == pytest.approx(1.0)
    assert np.all(np.diff(curves.rel_frobenius) <= 1e-12)  # the error never grows with r
    np.testing.assert_array_equal(curves.params, np.arange(min(d, k) + 1) * (d + k))


def test_best_rank_beats_other_rank_r_matrices():
    dw = _random_matrix(24, 18, 2)
    rng = np.random.default_rng(3)
    for r in (1, 3, 7):
        best = np.linalg.norm(dw - lora.best_rank_approximation(dw, r))
        for _ in range(20):  # random rank-r matrices, and the truncation to the wrong components
            cand = rng.standard_normal((24, r)) @ rng.standard_normal((r, 18))
            cand *= np.sum(dw * cand) / np.sum(cand * cand)  # best scale of that direction
            assert best <= np.linalg.norm(dw - cand) + 1e-9
        U, S, Vh = np.linalg.svd(dw, full_matrices=False)
        wrong = (U[:, -r:] * S[-r:]) @ Vh[-r:]
        assert best < np.linalg.norm(dw - wrong)


def test_lora_factors_rebuild_the_approximation():
    dw = _random_matrix(16, 12, 4)
    s = lora.svd(dw)
    B, A = lora.lora_factors(s, 5)
    assert B.shape == (16, 5) and A.shape == (5, 12)
    np.testing.assert_allclose(B @ A, lora.reconstruct(s, 5), atol=1e-10)
    assert np.linalg.matrix_rank(B @ A) == 5
    np.testing.assert_allclose(lora.reconstruct(s, 12), dw, atol=1e-10)


def test_rank_out_of_range_is_refused():
    s = lora.svd(_random_matrix(6, 4, 0))
    for r in (-1, 5, 2.5, True):
        with pytest.raises(ValueError, match="rank r"):
            lora.reconstruct(s, r)
    with pytest.raises(ValueError, match="between 0 and min"):
        lora.rank_curves(s).readout(5)


def test_readout_values():
    s = lora.svd(lora.make_target(40, 30, "flat", 0))
    ro = lora.rank_curves(s).readout(6)
    # flat spectrum: rel. error sqrt(1 - r/m), energy r/m
    assert ro.rel_frobenius == pytest.approx(math.sqrt(1 - 6 / 30), rel=1e-6)
    assert ro.energy == pytest.approx(6 / 30, rel=1e-6)
    assert ro.rel_spectral == pytest.approx(1.0, rel=1e-6)
    assert ro.params == 6 * 70 and ro.params_full == 1200 and ro.share == pytest.approx(420 / 1200)


@settings(max_examples=25, deadline=None)
@given(d=st.integers(2, 24), k=st.integers(2, 24), seed=st.integers(0, 10_000), scale=st.floats(1e-6, 1e6))
def test_property_curves_consistent(d, k, seed, scale):
    dw = _random_matrix(d, k, seed) * scale
    c = lora.rank_curves(lora.svd(dw))
    assert np.all(np.isfinite(c.rel_frobenius)) and np.all(np.isfinite(c.energy))
    assert np.all(np.diff(c.rel_frobenius) <= 1e-12) and np.all(np.diff(c.energy) >= -1e-12)
    np.testing.assert_allclose(c.rel_frobenius**2 + c.energy, 1.0, atol=1e-9)  # discarded + kept = all
    assert c.rel_frobenius[0] == 1.0 and c.rel_frobenius[-1] == 0.0
    assert np.all(c.rel_spectral <= c.rel_frobenius * math.sqrt(min(d, k)) + 1e-9)
    assert np.all(c.rel_spectral[:-1] > 0)
    assert c.frobenius_norm == pytest.approx(np.linalg.norm(dw), rel=1e-6)


# ----------------------------------------------------------------------------------------------------------------
# Targets


@pytest.mark.parametrize("profile", ["exponential", "power_law", "flat"])
@pytest.mark.parametrize("basis", ["random", "smooth"])
def test_target_has_the_profile(profile, basis):
    dw = lora.make_target(40, 24, profile, seed=7, decay=3.0, power=0.7, basis=basis)
    assert dw.shape == (40, 24)
    assert np.linalg.norm(dw) == pytest.approx(math.sqrt(40 * 24))  # root-mean-square entry 1
    sigma = np.linalg.svd(dw, compute_uv=False)
    expected = lora.singular_value_profile(24, profile, decay=3.0, power=0.7)
    np.testing.assert_allclose(sigma / sigma[0], expected, rtol=1e-8, atol=1e-12)


def test_profiles_values():
    np.testing.assert_allclose(lora.singular_value_profile(4, "exponential", decay=2.0), np.exp(-np.arange(4) / 2.0))
    np.testing.assert_allclose(lora.singular_value_profile(4, "power_law", power=1.0), [1, 1 / 2, 1 / 3, 1 / 4])
    np.testing.assert_array_equal(lora.singular_value_profile(5, "low_rank_noise", rank=2), [1, 1, 0, 0, 0])
    assert np.all(lora.singular_value_profile(3000, "exponential", decay=1.0) >= 0)  # underflow to 0, never NaN
    with pytest.raises(ValueError, match="unknown profile"):
        lora.singular_value_profile(4, "cubic")


def test_low_rank_plus_noise():
    exact = lora.make_target(50, 40, "low_rank_noise", 1, rank=6, noise=0.0)
    c = lora.rank_curves(lora.svd(exact))
    assert c.rel_frobenius[6] < 1e-10 and c.rel_frobenius[5] > 0.1
    noisy = lora.make_target(50, 40, "low_rank_noise", 1, rank=6, noise=0.3)
    c = lora.rank_curves(lora.svd(noisy))
    # ||N||_F = 0.3 ||signal||_F: the rank-6 truncation leaves most of the noise, a bit less than all of it
    assert 0.15 < c.rel_frobenius[6] < 0.3 / math.sqrt(1 + 0.3**2) + 1e-9


def test_target_reproducible_and_seeded():
    a = lora.make_target(33, 21, "power_law", 5)
    np.testing.assert_array_equal(a, lora.make_target(33, 21, "power_law", 5))
    assert not np.allclose(a, lora.make_target(33, 21, "power_law", 6))


def test_target_bad_arguments():
    with pytest.raises(ValueError, match="between"):
        lora.make_target(1, 10)
    with pytest.raises(ValueError, match="between"):
        lora.make_target(10, 4097)
    with pytest.raises(ValueError, match="basis"):
        lora.make_target(10, 10, basis="wavelet")
    with pytest.raises(ValueError, match="noise"):
        lora.make_target(10, 10, "low_rank_noise", noise=-1)
    with pytest.raises(ValueError, match="rank r"):
        lora.make_target(10, 8, "low_rank_noise", rank=9)


# ----------------------------------------------------------------------------------------------------------------
# Display helpers


def test_block_average_divisible_is_the_block_mean():
    x = _random_matrix(128, 192, 0)
    b = arrays.block_average(x, 64)
    assert b.shape == (64, 64)
    np.testing.assert_allclose(b, x.reshape(64, 2, 64, 3).mean(axis=(1, 3)))


@settings(max_examples=25, deadline=None)
@given(d=st.integers(1, 150), k=st.integers(1, 150), side=st.integers(1, 70))
def test_property_block_average_keeps_the_total(d, k, side):
    x = _random_matrix(d, k, d * 1000 + k)
    er, ec = arrays.block_edges(d, side), arrays.block_edges(k, side)
    b = arrays.block_average(x, side)
    assert b.shape == (min(d, side), min(k, side))
    assert np.diff(er).max() - np.diff(er).min() <= 1  # blocks of near-equal size
    weights = np.diff(er)[:, None] * np.diff(ec)[None, :]
    assert np.sum(b * weights) == pytest.approx(x.sum(), abs=1e-9)
    if d <= side and k <= side:
        np.testing.assert_array_equal(b, x)


def test_block_average_leading_axes_and_centres():
    x = _random_matrix(6, 10, 0).reshape(3, 2, 10)
    b = arrays.block_average(x, 4)
    assert b.shape == (3, 2, 4)
    np.testing.assert_allclose(b[1], arrays.block_average(x[1], 4))
    np.testing.assert_allclose(arrays.block_centres(10, 4), [0.5, 3.0, 5.5, 8.0])  # edges 0, 2, 5, 7, 10


def test_slider_ranks():
    r = lora.slider_ranks(1024, 16, include=[9])
    assert r[0] == 0 and r[-1] == 1024 and 9 in r
    assert np.all(np.diff(r) > 0)
    assert 16 <= r.shape[0] <= 17
    np.testing.assert_array_equal(lora.slider_ranks(5, 16), np.arange(6))
    with pytest.raises(ValueError):
        lora.slider_ranks(10, 16, include=[11])


def test_display_frames_match_block_averaged_reconstructions():
    dw = lora.make_target(300, 200, "power_law", 3)
    s = lora.svd(dw)
    ranks = lora.slider_ranks(s.m, 12, include=[8])
    f = lora.display_frames(s, ranks)
    assert f.target.shape == (64, 64) and f.approx.shape == (len(ranks), 64, 64) and f.averaged
    assert f.block_size == (5, 4)
    np.testing.assert_allclose(f.target, arrays.block_average(dw, lora.DISPLAY_SIDE), atol=1e-9)
    for j, r in enumerate(ranks):
        np.testing.assert_allclose(
            f.approx[j], arrays.block_average(lora.reconstruct(s, int(r)), lora.DISPLAY_SIDE), atol=1e-9
        )
        np.testing.assert_allclose(
            f.residual[j], arrays.block_average(dw - lora.reconstruct(s, int(r)), lora.DISPLAY_SIDE), atol=1e-9
        )
    small = lora.display_frames(lora.svd(dw[:20, :30]), [0, 20])
    assert not small.averaged and small.target.shape == (20, 30)
    np.testing.assert_allclose(small.approx[1], dw[:20, :30], atol=1e-9)


def test_svd_reports_device_and_time():
    s = lora.svd(_random_matrix(10, 8, 0))  # small: numpy on the CPU
    assert (s.library, s.device) == ("numpy", "cpu")
    assert s.seconds >= 0 and (s.d, s.k, s.m) == (10, 8, 8)
    assert s.U.dtype == np.float64
    t = lora.svd(_random_matrix(10, 8, 0), dtype=torch.float64)  # a torch dtype asks for torch on core's device
    assert (t.library, t.device) == ("torch", str(as_tensor(0.0).device))
    assert t.seconds >= 0 and t.U.dtype == np.float64


# ----------------------------------------------------------------------------------------------------------------
# numpy at the page's sizes, torch above: the same numbers


def test_numpy_up_to_256_squared_torch_above(monkeypatch):
    # the page's default 64 x 64 and its 256 x 256 presets decompose in numpy; a larger matrix goes to torch
    seen = []
    real = np.linalg.svd
    monkeypatch.setattr(np.linalg, "svd", lambda *a, **kw: seen.append(np.shape(a[0])) or real(*a, **kw))
    assert lora.svd(np.ones((256, 256)) + np.eye(256)).library == "numpy"
    assert lora.svd(np.ones((2, 4096)) + 1e-3 * _random_matrix(2, 4096, 0)).library == "numpy"  # work d k min(d, k)
    assert seen == [(256, 256), (2, 4096)]
    assert lora.svd(_random_matrix(257, 256, 0)).library == "torch"
    assert seen == [(256, 256), (2, 4096)]  # torch's SVD did not go through numpy


def _torch_only(monkeypatch):
    """Every decomposition in torch on core's device, as above the threshold."""
    monkeypatch.setattr(lora, "NUMPY_MAX_WORK", 0)


@pytest.mark.parametrize("shape", [(64, 64), (96, 40), (300, 7)])
def test_haar_columns_numpy_equals_torch(monkeypatch, shape):
    G = np.random.default_rng(shape[1]).standard_normal(shape)  # (n, m)
    Q = lora.haar_columns(G)  # numpy
    np.testing.assert_allclose(Q.T @ Q, np.eye(shape[1]), atol=1e-12)
    R = Q.T @ G  # G = Q R with R upper triangular and a positive diagonal
    np.testing.assert_allclose(np.tril(R, -1), 0.0, atol=1e-12)
    assert np.all(np.diagonal(R) > 0)
    _torch_only(monkeypatch)
    np.testing.assert_allclose(lora.haar_columns(G), Q, rtol=0, atol=1e-12)  # the sign fix leaves no freedom


@pytest.mark.parametrize("args", [(64, 64, "exponential", 0), (96, 80, "power_law", 7), (40, 120, "low_rank_noise", 3)])
def test_make_target_numpy_equals_torch(monkeypatch, args):
    numpy_made = lora.make_target(*args)
    _torch_only(monkeypatch)
    torch_made = lora.make_target(*args)
    np.testing.assert_allclose(numpy_made, torch_made, rtol=0, atol=1e-12 * np.abs(torch_made).max())


def _same_shown(a: lora.SVD, b: lora.SVD, ranks: list[int]) -> None:
    """What the page shows from an SVD, all of it independent of the signs of the singular vectors."""
    scale = np.abs(lora.reconstruct(b, b.m)).max()
    np.testing.assert_allclose(a.S, b.S, rtol=1e-12, atol=1e-13 * b.S[0])
    ca, cb = lora.rank_curves(a), lora.rank_curves(b)
    for name in ("rel_frobenius", "rel_spectral", "energy"):
        np.testing.assert_allclose(getattr(ca, name), getattr(cb, name), rtol=1e-9, atol=1e-12)
    for r in ranks:
        np.testing.assert_allclose(lora.reconstruct(a, r), lora.reconstruct(b, r), rtol=0, atol=1e-11 * scale)
    fa, fb = lora.display_frames(a, ranks), lora.display_frames(b, ranks)
    np.testing.assert_allclose(fa.approx, fb.approx, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(fa.residual, fb.residual, rtol=0, atol=1e-11 * scale)


@pytest.mark.parametrize(
    ("dw", "ranks"),
    [
        (lambda: lora.make_target(64, 64), [0, 1, 8, 20, 64]),  # the page's default
        (lambda: lora.make_target(256, 256, "exponential", 0), [0, 8, 100, 256]),  # its "Fast decay" preset
        (lambda: lora.make_target(96, 80, "power_law", 7, basis="smooth"), [0, 5, 80]),
        (lambda: _random_matrix(30, 50, 1), [0, 3, 29, 30]),
    ],
)
def test_svd_numpy_equals_torch(dw, ranks):
    a = dw()
    by_numpy, by_torch = lora.svd(a), lora.svd(a, dtype=torch.float64)
    assert (by_numpy.library, by_torch.library) == ("numpy", "torch")
    _same_shown(by_numpy, by_torch, ranks)
    # distinct singular values above round-off: each singular vector is the same up to its sign (drivers may flip it)
    clear = by_torch.S > 1e-6 * by_torch.S[0]  # (m,) below that, the vectors are lost in round-off
    overlap = np.abs(np.sum(by_numpy.U * by_torch.U, axis=0))  # (m,) |u_i . u_i'|
    np.testing.assert_allclose(overlap[clear], 1.0, atol=1e-6)


def test_what_is_shown_does_not_depend_on_the_signs():
    s = lora.svd(lora.make_target(48, 40, "power_law", 2))
    flip = np.where(np.arange(s.m) % 3 == 0, -1.0, 1.0)  # (m,) u_i -> -u_i with v_i -> -v_i
    flipped = lora.SVD(U=s.U * flip, S=s.S, Vh=flip[:, None] * s.Vh, device=s.device, library=s.library)
    _same_shown(s, flipped, [0, 1, 7, 40])


def test_flat_spectrum_curves_agree_between_libraries():
    # sigma_i all equal: the singular vectors are any basis of the span, and numpy's and torch's drivers pick
    # different ones (so the rank-r picture of a flat spectrum is one of many best approximations); the curves agree
    a = lora.make_target(64, 64, "flat", 0)
    ca, cb = lora.rank_curves(lora.svd(a)), lora.rank_curves(lora.svd(a, dtype=torch.float64))
    for name in ("rel_frobenius", "rel_spectral", "energy"):
        np.testing.assert_allclose(getattr(ca, name), getattr(cb, name), rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------------------------------------------
# Memory at model scale


def test_estimated_parameter_counts_of_known_models():
    # published totals: Llama-2-7B 6,738,415,616 and Llama-3-8B 8,030,261,248
    assert (
        lora_memory.estimate_n_params(lora_memory.ModelShape(hidden=4096, layers=32, intermediate=11008, kv_width=4096))
        == 6_738_415_616
    )
    assert lora_memory.estimate_n_params(lora_memory.LLAMA3_8B) == 8_030_261_248


def test_gqa_makes_k_and_v_adapters_smaller():
    mem = lora_memory.lora_memory(lora_memory.LLAMA3_8B, ["q", "k", "v", "o"], 8)
    assert mem.per_matrix["q"] == 8 * (4096 + 4096)
    assert mem.per_matrix["k"] == mem.per_matrix["v"] == 8 * (1024 + 4096)
    assert mem.n_params == 8_030_261_248
    all_linear = lora_memory.lora_memory(lora_memory.LLAMA3_8B, lora_memory.ADAPTABLE, 8)
    assert all_linear.per_matrix["down"] == 8 * (4096 + 14336)
    assert all_linear.trainable == 32 * sum(all_linear.per_matrix.values())


def test_qlora_65b_fits_one_48gb_gpu():
    mem = lora_memory.lora_memory(**lora_memory.PRESET_QLORA_65B)
    assert mem.base_bytes == pytest.approx(65e9 * 4.127 / 8, rel=1e-4)  # NF4 + double quantisation: 4.127 bits
    assert mem.trainable == 80 * 64 * (4 * (8192 + 8192) + 3 * (8192 + 22016))
    assert mem.lora_total_bytes < 48e9 < mem.full_ft_bytes
    bf16 = lora_memory.lora_memory(lora_memory.LLAMA_65B, lora_memory.ADAPTABLE, 64)
    assert bf16.lora_total_bytes > 48e9  # without the 4-bit base it does not fit


def test_memory_scale_and_bad_arguments():
    assert lora_memory.lora_memory(lora_memory.LLAMA2_7B, ["q"], 16, alpha=32, rslora=True).scale == pytest.approx(
        32 / 4
    )
    assert lora_layer.lora_scale(16, 4) == 4 and lora_layer.lora_scale(16, 4, rslora=True) == 8
    with pytest.raises(ValueError, match="unknown matrices"):
        lora_memory.lora_memory(lora_memory.LLAMA2_7B, ["q", "lm_head"], 8)
    with pytest.raises(ValueError, match="rank r"):
        lora_memory.lora_memory(lora_memory.LLAMA2_7B, ["q"], 0)
    with pytest.raises(ValueError, match="base format"):
        lora_memory.lora_memory(lora_memory.LLAMA2_7B, ["q"], 8, base_format="fp8")
    with pytest.raises(ValueError, match="hidden"):
        lora_memory.ModelShape(hidden=0)
    huge = lora_memory.lora_memory(
        lora_memory.ModelShape(hidden=64, layers=2, intermediate=128, kv_width=64, vocab=10), ["q"], 100
    )
    assert any("exceeds" in n for n in huge.notes)
    # repeated targets count once
    assert lora_memory.lora_memory(lora_memory.LLAMA2_7B, ["q", "q"], 8).trainable == 32 * 65_536


# ----------------------------------------------------------------------------------------------------------------
# The layer: forward, gradients theorem, merge


def _layer(init, d=12, k=9, r=3, **kw):
    return lora_layer.LoRALinear(d, k, r, alpha=6.0, init=init, seed=1, **kw)


def test_forward_is_the_lora_formula():
    layer = _layer("both_random")
    x = as_tensor(np.random.default_rng(0).standard_normal((5, 9)))
    h = layer(x)
    W = layer.W0 + layer.scale * layer.B.detach() @ layer.A.detach()
    torch.testing.assert_close(h.detach().cpu(), (x @ W.T).cpu(), rtol=1e-6, atol=1e-6)
    assert layer(x[0]).shape == (12,)  # a single row works too
    torch.testing.assert_close(layer.delta_weight().cpu(), (W - layer.W0).cpu())


@pytest.mark.parametrize("init", lora_layer.INIT_MODES)
def test_gradients_theorem_matches_autograd(init):
    layer = _layer(init)
    rng = np.random.default_rng(5)
    x = as_tensor(rng.standard_normal((7, 9)))
    y = as_tensor(rng.standard_normal((7, 12)))
    h = layer(x)
    loss = ((h - y) ** 2).sum() / 2
    loss.backward()
    g = (h - y).detach()  # dL/dh for this loss
    dA, dB = lora_layer.lora_gradients(x, g, layer.A.detach(), layer.B.detach(), layer.scale)
    torch.testing.assert_close(layer.A.grad.cpu(), dA.cpu(), rtol=1e-6, atol=1e-9)
    torch.testing.assert_close(layer.B.grad.cpu(), dB.cpu(), rtol=1e-6, atol=1e-9)
    assert layer.W0.grad is None  # frozen
    if init in ("B0", "zeros"):
        assert torch.count_nonzero(layer.A.grad).item() == 0  # exactly zero, not just small
    if init in ("A0", "zeros"):
        assert torch.count_nonzero(layer.B.grad).item() == 0
    if init in ("B0", "both_random"):
        assert torch.count_nonzero(layer.B.grad).item() > 0
    if init in ("A0", "both_random"):
        assert torch.count_nonzero(layer.A.grad).item() > 0


def test_merge_equals_adapter_path_and_unmerge_restores():
    layer = _layer("both_random")
    x = as_tensor(np.random.default_rng(2).standard_normal((6, 9)))
    W0 = layer.W0.detach().clone()
    with torch.no_grad():
        adapter = layer(x)
        layer.merge()
        merged = layer(x)
        with pytest.raises(RuntimeError, match="already merged"):
            layer.merge()
        layer.unmerge()
        again = layer(x)
    torch.testing.assert_close(merged.cpu(), adapter.cpu(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(layer.W0.cpu(), W0.cpu(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(again.cpu(), adapter.cpu(), rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="not merged"):
        layer.unmerge()


def test_layer_bad_arguments():
    with pytest.raises(ValueError, match="unknown init"):
        lora_layer.LoRALinear(4, 4, 2, init="orthogonal")
    with pytest.raises(ValueError, match="rank r"):
        lora_layer.LoRALinear(4, 3, 4)
    with pytest.raises(ValueError, match="W0 must have shape"):
        lora_layer.LoRALinear(4, 3, 2, W0=np.zeros((3, 4)))


def test_rslora_scale():
    assert lora_layer.LoRALinear(16, 16, 4, alpha=8.0).scale == 2.0
    assert lora_layer.LoRALinear(16, 16, 4, alpha=8.0, rslora=True).scale == 4.0


# ----------------------------------------------------------------------------------------------------------------
# Training under each initialisation


@pytest.fixture(scope="module")
def runs():
    cfg = lora_layer.TrainConfig(d=32, k=24, r=3, alpha=6.0, target_rank=3, n_samples=96, steps=150, lr=0.02)
    return lora_layer.train_all_inits(cfg, inits=lora_layer.INIT_MODES)


def test_b0_starts_at_the_base_model_and_learns(runs):
    res = runs["B0"]
    assert res.delta_at_init == 0.0
    assert np.count_nonzero(res.grad_A0) == 0 and np.linalg.norm(res.grad_B0) > 0
    assert res.norm_B[0] == 0.0 and res.norm_B[1] > 0  # B moves first
    assert res.norm_A[2] != res.norm_A[0]  # ... then A moves too
    assert res.loss[-1] < 1e-3 * res.loss[0]
    assert res.loss.shape == (151,) and res.norm_A.shape == (151,)


def test_zeros_never_trains(runs):
    res = runs["zeros"]
    assert np.count_nonzero(res.grad_A0) == 0 and np.count_nonzero(res.grad_B0) == 0
    assert np.all(res.norm_A == 0) and np.all(res.norm_B == 0)
    assert np.all(res.loss == res.loss[0])  # not a single bit changes
    assert res.loss[0] == runs["B0"].loss[0]  # it starts where B = 0 starts: at the base model


def test_both_random_starts_from_a_changed_model(runs):
    res = runs["both_random"]
    assert res.delta_at_init > 0
    assert res.loss[0] > 2 * runs["B0"].loss[0]
    assert np.linalg.norm(res.grad_A0) > 0 and np.linalg.norm(res.grad_B0) > 0


def test_mirror_case_also_trains(runs):
    res = runs["A0"]
    assert res.delta_at_init == 0.0
    assert np.count_nonzero(res.grad_B0) == 0 and np.linalg.norm(res.grad_A0) > 0
    assert res.loss[-1] < 0.1 * res.loss[0]


def test_merge_after_training_and_records(runs):
    for res in runs.values():
        assert res.merge_gap < 1e-5
        assert np.all(np.isfinite(res.loss)) and res.seconds >= 0
        assert res.device == str(as_tensor(0.0).device)


def test_training_reaches_the_eckart_young_floor_and_not_below():
    cfg = lora_layer.TrainConfig(d=20, k=16, r=2, alpha=4.0, target_rank=5, n_samples=64, steps=600, lr=0.03, seed=3)
    res = lora_layer.train_lora(cfg, "B0")
    assert res.loss_floor > 0.01 * res.loss[0]
    assert res.loss[-1] >= res.loss_floor * (1 - 1e-6)
    assert res.loss[-1] == pytest.approx(res.loss_floor, rel=0.03)


def test_loss_floor_against_brute_force():
    rng = np.random.default_rng(0)
    dstar = rng.standard_normal((5, 4))
    X = rng.standard_normal((30, 4))
    floor = lora_layer.loss_floor(dstar, X, 1)
    # independent: the best rank-1 M = b a^T by alternating least squares from many starts
    best = np.inf
    for start in range(20):
        a = np.random.default_rng(start).standard_normal(4)
        for _ in range(300):
            xa = X @ a  # (n,)
            b = (X @ dstar.T).T @ xa / (xa @ xa)  # least squares for b given a
            Y = X @ dstar.T  # (n, 5)
            a = np.linalg.solve(X.T @ X * (b @ b), X.T @ Y @ b)  # least squares for a given b
        M = np.outer(b, a)
        best = min(best, np.mean((X @ (dstar - M).T) ** 2))
    assert floor == pytest.approx(best, rel=1e-6)


def test_progress_callback_and_sgd():
    seen = []
    cfg = lora_layer.TrainConfig(d=8, k=8, r=2, target_rank=2, steps=20, optimizer="sgd", lr=0.1)
    out = lora_layer.train_all_inits(cfg, ("B0", "zeros"), progress=seen.append)
    assert set(out) == {"B0", "zeros"}
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0) and 0 < seen[0] < 1
    assert out["B0"].loss[-1] < out["B0"].loss[0]


def test_train_config_validation():
    with pytest.raises(ValueError, match="steps"):
        lora_layer.TrainConfig(steps=0)
    with pytest.raises(ValueError, match="at most min"):
        lora_layer.TrainConfig(d=4, k=4, r=5)
    with pytest.raises(ValueError, match="optimizer"):
        lora_layer.TrainConfig(optimizer="lion")
    with pytest.raises(ValueError, match="1024"):
        lora_layer.TrainConfig(d=2048)


def test_gradient_norms_of_the_result(runs):
    assert runs["B0"].grad_A0_norm == 0.0 and runs["B0"].grad_B0_norm > 0
    assert runs["zeros"].grad_A0_norm == 0.0 and runs["zeros"].grad_B0_norm == 0.0
    assert runs["both_random"].grad_A0_norm == pytest.approx(float(np.linalg.norm(runs["both_random"].grad_A0)))


def test_train_all_inits_restores_the_thread_count():
    before = torch.get_num_threads()
    lora_layer.train_all_inits(
        lora_layer.TrainConfig(d=8, k=8, r=2, target_rank=2, n_samples=16, steps=3), inits=("B0",)
    )
    assert torch.get_num_threads() == before


def test_nf4_double_quantisation_costs_4127_bits_per_parameter():
    # Dettmers et al. 2023 (QLoRA): 4-bit codes, an 8-bit absmax per block of 64 (8/64 = 0.125 bits), and one
    # 32-bit constant per 256 such blocks (32/(64 x 256) = 0.00195 bits); exact in binary fractions
    from fractions import Fraction

    bits = Fraction(4) + Fraction(8, 64) + Fraction(32, 64 * 256)
    assert lora_memory.NF4_BITS_PER_PARAM == float(bits) and round(float(bits), 3) == 4.127
    assert lora_memory.BASE_BYTES["nf4"] == float(bits / 8)
    mem = lora_memory.lora_memory(**lora_memory.PRESET_QLORA_65B)
    assert 48e9 - mem.lora_total_bytes == pytest.approx(1.68e9, rel=0.01)  # little room for activations
