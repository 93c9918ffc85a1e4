"""core.rope against references written out here: the published frequency formulas as plain Python loops (Hugging
Face's ``_compute_*_parameters`` and Meta's Llama 3.1 ``apply_scaling``, re-typed), rotation as complex
multiplication and 2x2 matrices, RoFormer's partial sums with complex exponentials, and Monte Carlo for the
expected score."""

import cmath
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from core import rope

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = [(128, 10000.0), (64, 500000.0)]  # RoFormer/Llama 2's base; Llama 3's base


def _plain(d: int, base: float) -> list[float]:
    return [base ** (-(2 * i) / d) for i in range(d // 2)]


# ---------------------------------------------------------------------------------------------------------------
# frequencies and each scaling method against its formula


@pytest.mark.parametrize(("d", "base"), SETTINGS)
def test_plain_frequencies_and_wavelengths(d, base):
    f, scale = rope.rope_inv_freq(d, base)
    np.testing.assert_allclose(f, _plain(d, base), rtol=1e-14)
    assert scale == 1.0 and f.shape == (d // 2,)
    np.testing.assert_allclose(rope.rope_wavelengths(f), [2 * math.pi * base ** (2 * i / d) for i in range(d // 2)])


def test_longest_wavelength_base_10k_vs_500k():
    # 2π · base^((d−2)/d) for d = 128
    for base, expected in [(1e4, 2 * math.pi * 1e4 ** (126 / 128)), (5e5, 2 * math.pi * 5e5 ** (126 / 128))]:
        f, _ = rope.rope_inv_freq(128, base)
        assert rope.rope_wavelengths(f).max() == pytest.approx(expected, rel=1e-13)
    assert 54_000 < 2 * math.pi * 1e4 ** (126 / 128) < 55_000  # about 54k tokens at base 10,000
    assert 2.5e6 < 2 * math.pi * 5e5 ** (126 / 128) < 2.6e6  # about 2.6M at 500,000


@pytest.mark.parametrize(("d", "base"), SETTINGS)
@pytest.mark.parametrize("s", [4.0, 16.0])
def test_linear_interpolation(d, base, s):
    f, scale = rope.rope_inv_freq(d, base, {"type": "linear", "factor": s})
    np.testing.assert_allclose(f, [t / s for t in _plain(d, base)], rtol=1e-14)
    assert scale == 1.0


@pytest.mark.parametrize(("d", "base"), SETTINGS)
@pytest.mark.parametrize("s", [2.0, 8.0])
def test_ntk_aware_base_change(d, base, s):
    f, scale = rope.rope_inv_freq(d, base, rope.RopeScaling("ntk", factor=s))
    new_base = base * s ** (d / (d - 2))  # bloc97's base change
    np.testing.assert_allclose(f, _plain(d, new_base), rtol=1e-13)
    # what it was designed for: the fastest pair untouched, the slowest slowed by exactly s
    assert f[0] == 1.0 and f[-1] == pytest.approx(_plain(d, base)[-1] / s, rel=1e-12)
    assert scale == 1.0


@pytest.mark.parametrize(("d", "base", "L"), [(128, 10000.0, 4096), (64, 500000.0, 8192)])
def test_dynamic_ntk(d, base, L):
    sc = {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": L}
    plain = _plain(d, base)
    for seq_len in (None, 1, L // 2, L):  # up to the trained length: the plain frequencies
        np.testing.assert_array_equal(rope.rope_inv_freq(d, base, sc, seq_len=seq_len)[0], plain)
    for T in (L + 1, 3 * L):
        s_now = 4.0 * T / L - 3.0  # s · T / L − (s − 1)
        f, scale = rope.rope_inv_freq(d, base, sc, seq_len=T)
        np.testing.assert_allclose(f, _plain(d, base * s_now ** (d / (d - 2))), rtol=1e-13)
        assert scale == 1.0 and f[-1] < plain[-1]


def _yarn_reference(d, base, s, L, beta_fast=32, beta_slow=1, truncate=True):
    """Hugging Face's _compute_yarn_parameters, re-typed as a loop."""

    def corr_dim(rot):
        return (d * math.log(L / (rot * 2 * math.pi))) / (2 * math.log(base))

    low, high = corr_dim(beta_fast), corr_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    out = []
    for i in range(d // 2):
        pos_freq = base ** (2 * i / d)
        ramp = min(max((i - low) / (high - low), 0.0), 1.0)
        extrap = 1 - ramp
        out.append((1 / (s * pos_freq)) * (1 - extrap) + (1 / pos_freq) * extrap)
    return out


@pytest.mark.parametrize(("d", "base", "s", "L"), [(128, 10000.0, 16.0, 4096), (64, 500000.0, 4.0, 8192)])
@pytest.mark.parametrize("truncate", [True, False])
def test_yarn_frequencies(d, base, s, L, truncate):
    sc = rope.RopeScaling("yarn", factor=s, original_max_position_embeddings=L, truncate=truncate)
    f, scale = rope.rope_inv_freq(d, base, sc)
    np.testing.assert_allclose(f, _yarn_reference(d, base, s, L, truncate=truncate), rtol=1e-13)
    assert scale == pytest.approx(0.1 * math.log(s) + 1)
    # the ends: fast pairs (>= 32 turns in L) kept, slow ones (< 1 turn) divided by s
    turns = [L * t / (2 * math.pi) for t in _plain(d, base)]
    for i, r in enumerate(turns):
        if r > 64:
            assert f[i] == pytest.approx(_plain(d, base)[i], rel=1e-12)
        if r < 0.5:
            assert f[i] == pytest.approx(_plain(d, base)[i] / s, rel=1e-12)


def test_yarn_paper_ramp_in_rotations():
    d, base, s, L = 128, 10000.0, 8.0, 4096
    f, _ = rope.rope_inv_freq(d, base, {"type": "yarn", "factor": s, "original_max_position_embeddings": L,
                                        "ramp": "paper"})  # fmt: skip
    for i, t in enumerate(_plain(d, base)):
        r = L * t / (2 * math.pi)  # r = L / λ
        gamma = 0.0 if r < 1 else 1.0 if r > 32 else (r - 1) / 31
        assert f[i] == pytest.approx((1 - gamma) * t / s + gamma * t, rel=1e-12)


@pytest.mark.parametrize("s", [4.0, 32.0])
def test_yarn_attention_factor(s):
    _, scale = rope.rope_inv_freq(64, 1e4, {"type": "yarn", "factor": s, "original_max_position_embeddings": 2048})
    assert scale == pytest.approx(0.1 * math.log(s) + 1, rel=1e-15)
    assert scale == pytest.approx({4.0: 1.1386294361, 32.0: 1.3465735903}[s], abs=1e-10)
    sc = {"type": "yarn", "factor": s, "original_max_position_embeddings": 2048, "attention_factor": 0.5}
    assert rope.rope_inv_freq(64, 1e4, sc)[1] == 0.5
    assert rope.rope_inv_freq(64, 1e4, {**sc, "factor": 1.0, "attention_factor": None})[1] == 1.0


def _llama3_reference(d, base, factor=8, low=1, high=4, old=8192):
    """Meta's Llama 3.1 apply_scaling, re-typed."""
    out = []
    for freq in _plain(d, base):
        wavelen = 2 * math.pi / freq
        if wavelen < old / high:
            out.append(freq)
        elif wavelen > old / low:
            out.append(freq / factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append((1 - smooth) * freq / factor + smooth * freq)
    return out


def test_llama3_defaults_are_llama_3_1():
    f, scale = rope.rope_inv_freq(128, 500000.0, {"type": "llama3"})
    np.testing.assert_allclose(f, _llama3_reference(128, 500000.0), rtol=1e-13)
    assert scale == 1.0
    assert rope.RopeScaling("llama3").low_freq_factor == 1.0 and rope.RopeScaling("llama3").high_freq_factor == 4.0
    # the three regimes all occur at these settings
    ratio = f / np.array(_plain(128, 500000.0))
    assert np.any(ratio == 1.0) and np.any(np.isclose(ratio, 1 / 8)) and np.any((ratio > 1 / 8) & (ratio < 1))


def test_llama3_second_setting():
    sc = rope.RopeScaling("llama3", factor=32.0, original_max_position_embeddings=8192)
    f, _ = rope.rope_inv_freq(64, 500000.0, sc)
    np.testing.assert_allclose(f, _llama3_reference(64, 500000.0, factor=32), rtol=1e-13)
    sc = rope.RopeScaling("llama3", factor=4.0, original_max_position_embeddings=4096, high_freq_factor=8.0)
    np.testing.assert_allclose(
        rope.rope_inv_freq(128, 1e4, sc)[0], _llama3_reference(128, 1e4, 4, 1, 8, 4096), rtol=1e-13
    )


def test_context_helpers():
    f, _ = rope.rope_inv_freq(128, 1e4)
    turns = rope.rotations_in_context(f, 4096)
    np.testing.assert_allclose(turns, [4096 * t / (2 * math.pi) for t in _plain(128, 1e4)])
    beyond = rope.wavelengths_beyond_context(f, 4096)
    assert beyond.tolist() == [2 * math.pi / t > 4096 for t in _plain(128, 1e4)]
    assert 0 < beyond.sum() < 64


# ---------------------------------------------------------------------------------------------------------------
# the rotation


def _complex_rotation(x, positions, freqs, pairing):
    """Pairs as complex numbers, each multiplied by e^{i m θ}, in a loop."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        m = positions[idx[-1]]
        for i, t in enumerate(freqs):
            a, b = (2 * i, 2 * i + 1) if pairing == "interleaved" else (i, i + d // 2)
            z = complex(x[(*idx, a)], x[(*idx, b)]) * cmath.exp(1j * m * t)
            out[(*idx, a)], out[(*idx, b)] = z.real, z.imag
    return out


@pytest.mark.parametrize("pairing", ["interleaved", "halves"])
def test_apply_rope_is_complex_rotation(pairing):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 8))
    pos = np.array([0, 1, 7, 100, 2.5])
    f, _ = rope.rope_inv_freq(8, 10000.0)
    ref = _complex_rotation(x, pos, f, pairing)
    out = rope.apply_rope(x, pos, f, pairing)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, ref, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-13)
    # torch follows its input, on its device, and is differentiable
    xt = torch.tensor(x, requires_grad=True)
    ot = rope.apply_rope(xt, torch.tensor(pos), torch.tensor(f), pairing)
    assert isinstance(ot, torch.Tensor) and ot.dtype == torch.float64
    np.testing.assert_allclose(ot.detach().numpy(), ref, atol=1e-12)
    ot.pow(2).sum().backward()  # |R x|² = |x|², so the gradient is 2x
    np.testing.assert_allclose(xt.grad.numpy(), 2 * x, atol=1e-12)
    # the attention scale multiplies the result
    np.testing.assert_allclose(rope.apply_rope(x, pos, f, pairing, attention_scale=1.3), 1.3 * ref, atol=1e-12)


def test_apply_rope_float32_and_int_inputs():
    f, _ = rope.rope_inv_freq(4, 100.0)
    x32 = np.ones((3, 4), dtype=np.float32)
    assert rope.apply_rope(x32, [0, 1, 2], f).dtype == np.float32
    xi = np.ones((3, 4), dtype=int)
    np.testing.assert_allclose(rope.apply_rope(xi, [0, 1, 2], f), _complex_rotation(xi, [0, 1, 2], f, "interleaved"))
    assert rope.apply_rope(torch.ones(3, 4, dtype=torch.float32), [0, 1, 2], f).dtype == torch.float32


def test_score_depends_only_on_distance():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(2, 6, 16)), rng.normal(size=(2, 6, 16))
    f, _ = rope.rope_inv_freq(16, 10000.0)
    pos = np.arange(6)
    base_scores = rope.rope_scores(q, k, f, pos, pos)
    for shift in (1, 37, 5000):
        np.testing.assert_allclose(rope.rope_scores(q, k, f, pos + shift, pos + shift), base_scores, atol=1e-10)
    # entry (m, n) against the loop: Re Σ q_i conj(k_i) e^{i (m−n) θ_i}
    for m, n in [(0, 0), (3, 1), (1, 5)]:
        s = sum(
            (complex(q[0, m, 2 * i], q[0, m, 2 * i + 1]) * complex(k[0, n, 2 * i], -k[0, n, 2 * i + 1])).real
            * math.cos((m - n) * t)
            - (complex(q[0, m, 2 * i], q[0, m, 2 * i + 1]) * complex(k[0, n, 2 * i], -k[0, n, 2 * i + 1])).imag
            * math.sin((m - n) * t)
            for i, t in enumerate(f)
        )
        assert base_scores[0, m, n] == pytest.approx(s, abs=1e-12)
    # shifting only one side changes it; torch gives the same matrix
    assert not np.allclose(rope.rope_scores(q, k, f, pos + 1, pos), base_scores)
    st = rope.rope_scores(torch.tensor(q), k, f, pos + 37, pos + 37)
    assert isinstance(st, torch.Tensor)
    np.testing.assert_allclose(st.numpy(), base_scores, atol=1e-10)


def test_interleaved_and_halves_agree_after_the_permutation():
    d = 12
    perm = [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]  # interleaved pair i = (2i, 2i+1) -> halves (i, i + d/2)
    assert rope.halves_permutation(d).tolist() == perm
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(3, 7, d)), rng.normal(size=(3, 7, d))
    f, _ = rope.rope_inv_freq(d, 500000.0)
    inter = rope.rope_scores(q, k, f, pairing="interleaved")
    halves = rope.rope_scores(q[..., perm], k[..., perm], f, pairing="halves")
    np.testing.assert_allclose(halves, inter, atol=1e-12)
    assert not np.allclose(rope.rope_scores(q, k, f, pairing="halves"), inter)  # without the permutation they differ
    np.testing.assert_allclose(
        rope.apply_rope(q[..., perm], np.arange(7), f, "halves"), rope.apply_rope(q, np.arange(7), f)[..., perm]
    )


# ---------------------------------------------------------------------------------------------------------------
# scores against distance, and the decay bound


def _relative_bound_loop(delta, d, base):
    freqs = _plain(d, base)
    total, partial = 0.0, 0j
    for t in freqs:
        partial += cmath.exp(1j * delta * t)  # S_j = Σ_{k<j} e^{i Δ θ_k}
        total += abs(partial)
    return total / (d // 2)


@pytest.mark.parametrize(("d", "base"), SETTINGS)
def test_relative_upper_bound_against_partial_sums(d, base):
    deltas = [0, 1, 10, 100, 250, 5000]
    got = rope.relative_upper_bound(deltas, d, base)
    np.testing.assert_allclose(got, [_relative_bound_loop(t, d, base) for t in deltas], rtol=1e-12)
    assert got[0] == pytest.approx((d // 2 + 1) / 2)  # S_j = j at distance 0
    assert got[0] > got[1] > got[2] > got[3]
    np.testing.assert_allclose(rope.relative_upper_bound([-7, 7], d, base), 2 * [_relative_bound_loop(7, d, base)])
    f, _ = rope.rope_inv_freq(d, base, {"type": "linear", "factor": 2.0})
    assert rope.relative_upper_bound([20], inv_freq=f)[0] == pytest.approx(_relative_bound_loop(10, d, base))


def test_abel_bound_holds_and_score_at_distance_is_the_rotated_dot_product():
    rng = np.random.default_rng(3)
    d = 32
    f, _ = rope.rope_inv_freq(d, 10000.0)
    deltas = np.arange(-50, 400, 7)
    pairs = [rng.normal(size=(2, d)) for _ in range(5)] + [np.ones((2, d))]  # q = k = 1: only h_{d/2} = 0 differs
    for q, k in pairs:
        score = rope.score_at_distance(q, k, deltas, f)
        for delta, s in zip(deltas[:6], score[:6], strict=True):  # 2x2 rotation matrices, positions (delta, 0)
            rq = np.concatenate(
                [[[math.cos(delta * t), -math.sin(delta * t)], [math.sin(delta * t), math.cos(delta * t)]]
                 @ q[2 * i : 2 * i + 2] for i, t in enumerate(f)]
            )  # fmt: skip
            assert s == pytest.approx(rq @ k, abs=1e-10)
        h = [complex(q[2 * i], q[2 * i + 1]) * complex(k[2 * i], -k[2 * i + 1]) for i in range(d // 2)] + [0]
        step = max(abs(h[i + 1] - h[i]) for i in range(d // 2))
        bound = rope.abel_decay_bound(q, k, deltas, f)
        np.testing.assert_allclose(bound, step * (d // 2) * rope.relative_upper_bound(deltas, d, 10000.0))
        assert np.all(np.abs(score) <= bound + 1e-9)


def test_expected_score_monte_carlo():
    rng = np.random.default_rng(4)
    d, n = 16, 40000
    f, _ = rope.rope_inv_freq(d, 10000.0)
    deltas = np.array([0, 3, 30, 300])
    for rho in (1.0, 0.5, 0.0):
        z1, z2 = rng.normal(size=(2, n, d))
        q, k = z1, rho * z1 + math.sqrt(1 - rho**2) * z2  # unit variance, corr(q_j, k_j) = ρ
        qc, kc = q[:, 0::2] + 1j * q[:, 1::2], k[:, 0::2] + 1j * k[:, 1::2]
        samples = np.real((qc * np.conj(kc)) @ np.exp(1j * np.outer(f, deltas)))  # (n, distances)
        expected = rope.expected_rotated_score(deltas, d, 10000.0, correlation=rho)
        se = samples.std(axis=0) / math.sqrt(n)
        assert np.all(np.abs(samples.mean(axis=0) - expected) < 5 * se), rho
    assert rope.expected_rotated_score([0], 128)[0] == pytest.approx(128)  # E|q|² = d
    np.testing.assert_array_equal(rope.expected_rotated_score([0, 10, 1000], 64, correlation=0.0), 0.0)


# ---------------------------------------------------------------------------------------------------------------
# arguments, and no torch for numpy inputs


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: rope.rope_inv_freq(7), "even"),
        (lambda: rope.rope_inv_freq(0), ">= 2"),
        (lambda: rope.rope_inv_freq(8, base=1.0), "base"),
        (lambda: rope.rope_inv_freq(8, scaling={"type": "cubic", "factor": 2.0}), "expected one of"),
        (lambda: rope.rope_inv_freq(8, scaling={"type": "linear"}), "needs a factor"),
        (lambda: rope.rope_inv_freq(8, scaling={"type": "linear", "factor": 0.5}), "factor"),
        (lambda: rope.rope_inv_freq(8, scaling={"type": "yarn", "factor": 2.0}), "original_max"),
        (lambda: rope.rope_inv_freq(8, scaling={"type": "linear", "factor": 2.0, "alpha": 1}), "unknown"),
        (lambda: rope.rope_inv_freq(2, scaling={"type": "ntk", "factor": 2.0}), "head_dim >= 4"),
        (lambda: rope.rope_inv_freq(8, scaling=rope.RopeScaling("llama3", high_freq_factor=1.0)), "high_freq"),
        (lambda: rope.rope_inv_freq(8, scaling={"type": "dynamic", "factor": 2.0}, seq_len=0), "seq_len"),
        (lambda: rope.apply_rope(np.ones((3, 4)), [0, 1], [1.0, 0.1]), "positions"),
        (lambda: rope.apply_rope(np.ones((3, 4)), [0, 1, 2], [1.0]), "inv_freq"),
        (lambda: rope.apply_rope(np.ones((3, 5)), [0, 1, 2], [1.0, 0.1]), "even"),
        (lambda: rope.apply_rope(np.ones((3, 4)), [0, 1, 2], [1.0, 0.1], pairing="pairs"), "pairing"),
        (lambda: rope.apply_rope(np.ones((3, 4)), [0, 1, np.nan], [1.0, 0.1]), "positions"),
        (lambda: rope.relative_upper_bound([1], 8, inv_freq=[1.0, 0.1]), "head_dim"),
        (lambda: rope.expected_rotated_score([1], 8, correlation=1.5), "correlation"),
        (lambda: rope.wavelengths_beyond_context([1.0, -0.1], 10), "inv_freq"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_dict_and_dataclass_agree():
    a = rope.rope_inv_freq(64, 1e4, {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048})
    b = rope.rope_inv_freq(64, 1e4, rope.RopeScaling("yarn", factor=8.0, original_max_position_embeddings=2048))
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1]


def test_numpy_use_never_imports_torch():
    code = (
        "import sys, numpy as np; from core import rope; "
        "f, s = rope.rope_inv_freq(64, 5e5, {'type': 'llama3'}); x = np.ones((4, 64)); "
        "rope.apply_rope(x, np.arange(4), f); rope.rope_scores(x, x, f); rope.relative_upper_bound([0, 5], 64); "
        "rope.expected_rotated_score([0, 5], 64); rope.abel_decay_bound(x[0], x[1], [3], f); "
        "rope.wavelengths_beyond_context(f, 8192); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
