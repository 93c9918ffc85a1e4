"""core.grpo: worked example C, the three std modes, exact zeros, difficulty curves, parsing and bad input."""

import math
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.device import as_tensor, get_device
from core.grpo import (
    G_MAX,
    PRESETS,
    STD_MODES,
    AdvantageSettings,
    advantage_scale,
    batch_normalised_advantages,
    contrast_batch,
    difficulty_curves,
    expected_abs_advantage,
    flip_reward,
    group_signal_probability,
    group_stats,
    group_view,
    grpo_advantages,
    mode_factor,
    textbook_advantages,
)

EXAMPLE_C = [1, 0, 0, 1, 1, 0, 0, 0]
EPSES = (0.0, 1e-4)

rewards_st = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
groups_st = st.lists(rewards_st, min_size=2, max_size=64)


# ---------------------------------------------------------------------------------------------------------------
# the lesson's numbers


def test_worked_example_c():
    s = group_stats(EXAMPLE_C)
    assert s.G == 8 and s.n_correct == 3 and s.is_binary and s.has_signal
    assert round(s.mean, 3) == 0.375
    assert round(s.std_population, 3) == 0.484
    assert s.std_population == pytest.approx(math.sqrt(0.375 * 0.625), rel=1e-15)  # rbar (1 - rbar)
    A = grpo_advantages(EXAMPLE_C)
    assert A.round(2).tolist() == [1.29, -0.77, -0.77, 1.29, 1.29, -0.77, -0.77, -0.77]
    assert A[0] == pytest.approx(0.625 / math.sqrt(0.375 * 0.625), rel=1e-14)
    assert A[1] == pytest.approx(-0.375 / math.sqrt(0.375 * 0.625), rel=1e-14)


def test_presets():
    a = grpo_advantages(PRESETS["Worked example C (3 of 8 correct)"].rewards)
    assert a.round(2).tolist() == [1.29, -0.77, -0.77, 1.29, 1.29, -0.77, -0.77, -0.77]
    assert np.all(grpo_advantages(PRESETS["All correct (no signal)"].rewards) == 0)
    one16 = grpo_advantages(PRESETS["One correct of 16"].rewards)
    assert one16[0] == pytest.approx(math.sqrt(15)) and one16[1] == pytest.approx(-1 / math.sqrt(15))
    tiny = PRESETS["Nearly equal scores (tiny std)"]
    # one score 1e-3 higher among 8: std = 1e-3 sqrt(7)/8, so advantages are about 3,000 times the differences
    assert advantage_scale(tiny.rewards) == pytest.approx(8 / (1e-3 * math.sqrt(7)), rel=1e-9)
    assert 3000 < advantage_scale(tiny.rewards) < 3100
    for p in PRESETS.values():
        assert 2 <= len(p.rewards) <= G_MAX


# ---------------------------------------------------------------------------------------------------------------
# the three modes


@settings(deadline=None)  # timing varies on a shared machine
@given(groups_st)
def test_sample_is_population_times_factor(r):
    G = len(r)
    pop, sam = grpo_advantages(r, "population"), grpo_advantages(r, "sample")
    np.testing.assert_allclose(sam, pop * math.sqrt((G - 1) / G), rtol=1e-12, atol=1e-12)


@settings(deadline=None)  # timing varies on a shared machine
@given(groups_st, st.sampled_from(EPSES))
def test_none_is_centred_rewards(r, eps):
    a = np.asarray(r)
    np.testing.assert_allclose(grpo_advantages(r, "none", eps), a - a.mean(), atol=1e-12)


@settings(deadline=None)  # timing varies on a shared machine
@given(groups_st, st.sampled_from(STD_MODES), st.sampled_from(EPSES))
def test_advantages_sum_to_zero(r, mode, eps):
    A = grpo_advantages(r, mode, eps)
    assert np.all(np.isfinite(A))
    assert abs(A.sum()) < 1e-9 * max(1.0, np.abs(A).max()) * len(r)


@settings(deadline=None)  # timing varies on a shared machine
@given(groups_st)
def test_population_advantages_are_z_scores(r):
    A = grpo_advantages(r)
    if np.ptp(r) > 0:
        assert np.mean(A**2) == pytest.approx(1.0, rel=1e-9)  # unit variance, zero mean
        # against the direct formula where the std is not tiny
        a = np.asarray(r)
        if a.std() > 1e-6:
            np.testing.assert_allclose(A, (a - a.mean()) / a.std(), rtol=1e-9, atol=1e-9)


@settings(deadline=None)  # timing varies on a shared machine
@given(st.lists(st.integers(-40, 40).map(lambda k: k / 4), min_size=2, max_size=64), st.floats(-100, 100),
       st.floats(0.01, 100))  # fmt: skip
def test_shift_and_scale_invariance(r, shift, scale):
    a = np.asarray(r)
    np.testing.assert_allclose(grpo_advantages(a * scale + shift), grpo_advantages(a), atol=1e-6)


def test_eps_shrinks_advantages():
    A0, A1 = grpo_advantages(EXAMPLE_C), grpo_advantages(EXAMPLE_C, eps=1e-4)
    sd = math.sqrt(0.375 * 0.625)
    np.testing.assert_allclose(A1, A0 * sd / (sd + 1e-4), rtol=1e-13)
    As = grpo_advantages(EXAMPLE_C, "sample", eps=1e-4)
    np.testing.assert_allclose(As, (np.array(EXAMPLE_C) - 0.375) / (sd * math.sqrt(8 / 7) + 1e-4), rtol=1e-13)


def test_mode_factor():
    assert mode_factor(EXAMPLE_C, "sample") == pytest.approx(math.sqrt(7 / 8), rel=1e-14)
    assert mode_factor(EXAMPLE_C, "none") == pytest.approx(math.sqrt(0.375 * 0.625), rel=1e-14)
    assert mode_factor(EXAMPLE_C, "none", eps=1e-4) == pytest.approx(math.sqrt(0.375 * 0.625) + 1e-4, rel=1e-14)
    assert mode_factor([1, 1, 1], "sample") == 1.0  # no signal: reported as 1
    r = np.array([[1, 0, 1, 1], [0.2, 0.2, 0.2, 0.2]])
    for to in STD_MODES:
        f = mode_factor(r, to)
        np.testing.assert_allclose(grpo_advantages(r, to), f[:, None] * grpo_advantages(r), atol=1e-15)


def test_advantage_scale_tiny_std_and_eps_cap():
    r = [0.5] * 7 + [0.5 + 1e-6]
    s0, s1 = advantage_scale(r), advantage_scale(r, eps=1e-4)
    assert s0 == pytest.approx(8 / (1e-6 * math.sqrt(7)), rel=1e-6)  # millions
    assert s1 < 1e4  # eps caps the blow-up at 1/eps
    np.testing.assert_allclose(grpo_advantages(r, eps=1e-4), s1 * (np.array(r) - np.mean(r)), rtol=1e-6)
    assert advantage_scale(r, "none") == 1.0
    assert advantage_scale([3, 3]) == 0.0


def test_settings_dataclass():
    cfg = AdvantageSettings("sample", 1e-4)
    np.testing.assert_array_equal(cfg.advantages(EXAMPLE_C), grpo_advantages(EXAMPLE_C, "sample", 1e-4))
    with pytest.raises(ValueError, match="std must be one of"):
        AdvantageSettings("zscore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="eps"):
        AdvantageSettings(eps=-1.0)


# ---------------------------------------------------------------------------------------------------------------
# no signal: exact zeros, never NaN


@pytest.mark.parametrize("mode", STD_MODES)
@pytest.mark.parametrize("eps", EPSES)
@pytest.mark.parametrize("value", [0.0, 1.0, 0.35, 0.1, 0.3, 0.7, -2.5, 1e6 + 0.1, 1e-300])
@pytest.mark.parametrize("G", [2, 3, 7, 8, 16, 64])
def test_all_equal_groups_give_exact_zeros(mode, eps, value, G):
    A = grpo_advantages(np.full(G, value), mode, eps)
    assert np.all(A == 0.0)
    A32 = grpo_advantages(np.full(G, value, dtype=np.float32), mode, eps)
    assert A32.dtype == np.float32 and np.all(A32 == 0.0)


@settings(deadline=None)  # timing varies on a shared machine
@given(st.floats(-1e6, 1e6), st.integers(2, 64), st.sampled_from(STD_MODES), st.sampled_from(EPSES))
def test_all_equal_property(value, G, mode, eps):
    assert np.all(grpo_advantages(np.full(G, value), mode, eps) == 0.0)


def test_tiny_spreads_do_not_underflow():
    # the spread is real, so population advantages are +-1, even when (r - mean)^2 underflows
    np.testing.assert_array_equal(grpo_advantages([0.0, 1e-200]), [-1.0, 1.0])
    np.testing.assert_allclose(grpo_advantages(np.array([0.0, 1e-30], dtype=np.float32)), [-1.0, 1.0])
    assert np.all(np.isfinite(grpo_advantages([0.0, 5e-324], "sample")))


def test_textbook_formula_fails_where_ours_gives_zeros():
    # eight rewards of 0.35 in float32: the running mean is off by one rounding step -> fake +1.0 for every answer
    naive = textbook_advantages([0.35] * 8)
    assert np.all(naive == np.float32(1.0))
    assert np.all(np.abs(textbook_advantages([0.35] * 8, eps=1e-4)) < 1e-3)  # eps keeps the residue small
    assert np.all(np.isnan(textbook_advantages([0.35] * 3)))  # residue exactly 0: 0/0
    assert np.all(grpo_advantages(np.full(8, 0.35, dtype=np.float32)) == 0)
    # on a group with signal it agrees with us
    np.testing.assert_allclose(textbook_advantages(EXAMPLE_C), grpo_advantages(EXAMPLE_C), rtol=1e-6)


# ---------------------------------------------------------------------------------------------------------------
# batches, dtypes and devices


@settings(max_examples=30, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(2, 12)), elements=st.sampled_from([0.0, 1.0, 0.5])),
    st.sampled_from(STD_MODES),
    st.sampled_from(EPSES),
)
def test_batched_equals_per_group(R, mode, eps):
    batched = grpo_advantages(R, mode, eps)
    for b in range(R.shape[0]):
        np.testing.assert_array_equal(batched[b], grpo_advantages(R[b], mode, eps))


def test_leading_axes_and_empty_batch():
    rng = np.random.default_rng(0)
    R = rng.integers(0, 2, size=(3, 4, 8)).astype(float)
    A = grpo_advantages(R, "sample", 1e-4)
    assert A.shape == R.shape
    np.testing.assert_array_equal(A[2, 1], grpo_advantages(R[2, 1], "sample", 1e-4))
    assert grpo_advantages(np.zeros((0, 8))).shape == (0, 8)


def test_integer_and_bool_input_become_float64():
    assert grpo_advantages(np.array(EXAMPLE_C, dtype=np.int8)).dtype == np.float64
    assert grpo_advantages(np.array(EXAMPLE_C, dtype=bool)).dtype == np.float64


@pytest.mark.parametrize("mode", STD_MODES)
@pytest.mark.parametrize("eps", EPSES)
def test_torch_matches_numpy_and_keeps_device(mode, eps):
    rng = np.random.default_rng(1)
    R = rng.integers(0, 2, size=(50, 16)).astype(float)
    R[:5] = 1.0  # some all-correct groups
    R[5:8] = 0.35
    t = as_tensor(R)  # float64 (float32 on MPS) on core's device
    out = grpo_advantages(t, mode, eps)
    assert isinstance(out, torch.Tensor) and out.device == t.device and out.dtype == t.dtype
    tol = 1e-12 if t.dtype == torch.float64 else 1e-5
    np.testing.assert_allclose(out.cpu().numpy(), grpo_advantages(R, mode, eps), atol=tol)
    assert torch.all(out[:8] == 0)
    s = advantage_scale(t, mode, eps)
    assert isinstance(s, torch.Tensor) and s.shape == (50,) and s.device == t.device
    assert isinstance(mode_factor(t, mode, eps=eps), torch.Tensor)


def test_torch_integer_and_float32_tensors():
    dev = get_device()
    ti = torch.tensor(EXAMPLE_C, device=dev)
    out = grpo_advantages(ti)
    assert out.is_floating_point() and out.device == ti.device
    np.testing.assert_allclose(out.cpu().numpy(), grpo_advantages(EXAMPLE_C), rtol=1e-6)
    t32 = torch.full((4, 8), 0.35, dtype=torch.float32, device=dev)
    out32 = grpo_advantages(t32, "sample")
    assert out32.dtype == torch.float32 and torch.all(out32 == 0)


def test_batch_normalisation_is_the_mistake():
    R = np.array([[1.0] * 8, EXAMPLE_C, [0.0] * 8])  # easy, medium, hard prompt
    within = grpo_advantages(R)
    across = batch_normalised_advantages(R)
    assert np.all(within[0] == 0) and np.all(within[2] == 0)
    assert np.all(across[0] > 0) and np.all(across[2] < 0)  # easy prompt pushed up, hard pushed down
    assert abs(across[1].sum()) > 0.1  # a group's advantages no longer sum to zero
    np.testing.assert_allclose(across.ravel(), grpo_advantages(R.ravel()), atol=1e-15)
    m, s = R.mean(), R.std()
    np.testing.assert_allclose(across, (R - m) / s, rtol=1e-12)
    assert batch_normalised_advantages(np.stack([R, R])).shape == (2, 3, 8)
    with pytest.raises(ValueError, match="at least 2 axis"):
        batch_normalised_advantages(EXAMPLE_C)


def test_flip_reward():
    r = flip_reward(EXAMPLE_C, 1)
    assert r.tolist() == [1, 1, 0, 1, 1, 0, 0, 0]
    np.testing.assert_array_equal(flip_reward(r, 1), EXAMPLE_C)
    assert flip_reward([0.3, 0.9], 0)[0] == pytest.approx(0.7)
    for bad in (8, -1, 1.0, True):
        with pytest.raises(ValueError, match="answer index"):
            flip_reward(EXAMPLE_C, bad)


def test_group_stats_readouts():
    s = group_stats([0.2, 0.6, 0.6, 1.0])
    assert not s.is_binary and s.n_correct is None and s.success_rate == pytest.approx(0.6)
    assert s.std_sample == pytest.approx(np.std([0.2, 0.6, 0.6, 1.0], ddof=1))
    assert group_stats([2.0, 3.0]).success_rate is None
    s = group_stats([1, 1, 1, 1])
    assert not s.has_signal and s.std_population == 0.0 and s.n_correct == 4
    with pytest.raises(ValueError, match="one group"):
        group_stats(np.zeros((2, 4)))


# ---------------------------------------------------------------------------------------------------------------
# difficulty


def test_signal_probability_exact_small_cases():
    for G in range(1, 12):
        for p in (Fraction(0), Fraction(1, 10), Fraction(3, 8), Fraction(1, 2), Fraction(9, 10), Fraction(1)):
            exact = 1 - p**G - (1 - p) ** G
            assert group_signal_probability(float(p), G) == pytest.approx(float(exact), rel=1e-13, abs=1e-16)
    assert group_signal_probability(0.5, 2) == 0.5
    assert group_signal_probability(0.5, 8) == pytest.approx(1 - 2 / 256)


def test_signal_probability_stable_for_large_groups():
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(60):  # 60 significant digits as the reference
        for p, G in ((1e-9, 10**6), (1e-4, 64), (0.01, 10**4), (1e-12, 2)):
            P = mpmath.mpf(p)
            exact = float(1 - P**G - (1 - P) ** G)
            assert group_signal_probability(p, G) == pytest.approx(exact, rel=1e-12)
            q = 1 - p  # rounded to a double; the reference uses the same double
            exact_q = float(1 - mpmath.mpf(q) ** G - (1 - mpmath.mpf(q)) ** G)
            assert group_signal_probability(q, G) == pytest.approx(exact_q, rel=1e-9)
    assert group_signal_probability(0.5, 10**6) == 1.0
    assert group_signal_probability(1e-300, 64) == pytest.approx(64e-300)


def test_signal_probability_vectorised_and_symmetric():
    p = np.linspace(0, 1, 101)
    P = group_signal_probability(p, 8)
    assert P.shape == (101,) and P[0] == 0 and P[-1] == 0
    np.testing.assert_allclose(P, P[::-1], atol=1e-15)
    assert np.argmax(P) == 50
    grid = group_signal_probability(p[:, None], np.array([2, 8, 64]))
    assert grid.shape == (101, 3) and np.all(np.diff(grid, axis=1) >= -1e-15)  # more answers, more signal
    assert np.all(group_signal_probability(p, 1) == 0)


def _expected_abs_bruteforce(p, G, std, eps):
    total = 0.0
    for k in range(1, G):
        q = k / G
        mean_abs_c = 2 * q * (1 - q)
        sd = math.sqrt(q * (1 - q)) * (math.sqrt(G / (G - 1)) if std == "sample" else 1.0)
        size = mean_abs_c if std == "none" else mean_abs_c / (sd + eps)
        total += math.comb(G, k) * p**k * (1 - p) ** (G - k) * size
    return total


@pytest.mark.parametrize("std", STD_MODES)
@pytest.mark.parametrize("eps", EPSES)
@pytest.mark.parametrize("G", [2, 3, 8, 16, 64])
def test_expected_abs_advantage_against_brute_force(std, eps, G):
    p = np.array([0.0, 0.01, 0.1, 0.375, 0.5, 0.8, 0.999, 1.0])
    got = expected_abs_advantage(p, G, std, eps)
    want = [_expected_abs_bruteforce(float(x), G, std, eps) for x in p]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


@settings(deadline=None)  # timing varies on a shared machine
@given(st.floats(0, 1), st.integers(2, 64))
def test_expected_abs_advantage_none_closed_form(p, G):
    assert expected_abs_advantage(p, G, "none") == pytest.approx(2 * p * (1 - p) * (G - 1) / G, rel=1e-10, abs=1e-15)


def test_expected_abs_advantage_against_simulation():
    # many simulated groups through grpo_advantages itself
    rng = np.random.default_rng(42)
    G, p, n = 8, 0.3, 200_000
    R = (rng.random((n, G)) < p).astype(np.float64)
    sizes = np.abs(grpo_advantages(R)).mean(axis=1)
    se = sizes.std() / math.sqrt(n)
    assert abs(sizes.mean() - expected_abs_advantage(p, G)) < 4 * se
    has = (R.min(axis=1) != R.max(axis=1)).mean()
    assert abs(has - group_signal_probability(p, G)) < 4 * math.sqrt(has * (1 - has) / n)


def test_expected_abs_advantage_limits():
    assert expected_abs_advantage(0.5, 4096) == pytest.approx(1.0, abs=2e-3)  # 2 sqrt(q(1-q)) -> 1
    assert expected_abs_advantage(0.0, 8) == 0 and expected_abs_advantage(1.0, 8) == 0
    assert isinstance(expected_abs_advantage(0.5, 8), float)
    assert expected_abs_advantage(np.zeros((2, 3)), 8).shape == (2, 3)


# ---------------------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: grpo_advantages([1.0]), "at least 2 answers"),
        (lambda: grpo_advantages(5.0), "at least 1 axis"),
        (lambda: grpo_advantages([1.0, float("nan")]), "finite"),
        (lambda: grpo_advantages([1.0, float("inf")]), "finite"),
        (lambda: grpo_advantages(["a", "b"]), "numbers"),
        (lambda: grpo_advantages([1e308, -1e308]), "too large"),
        (lambda: advantage_scale([0.0, float("nan")]), "finite"),
        (lambda: grpo_advantages([[1, 0], [1]]), "array of numbers"),
        (lambda: grpo_advantages(EXAMPLE_C, std="pop"), "std must be one of"),
        (lambda: grpo_advantages(EXAMPLE_C, eps=-1e-4), "eps must be finite and >= 0"),
        (lambda: grpo_advantages(EXAMPLE_C, eps=float("nan")), "eps"),
        (lambda: grpo_advantages(EXAMPLE_C, eps="0.1"), "eps must be a number"),
        (lambda: group_signal_probability(1.5, 8), "p must be a probability"),
        (lambda: group_signal_probability(float("nan"), 8), "p must be a probability"),
        (lambda: group_signal_probability(0.5, 2.5), "G must be an integer"),
        (lambda: group_signal_probability(0.5, 0), "G must be an integer >= 1"),
        (lambda: expected_abs_advantage(0.5, 1), "G must be an integer >= 2"),
        (lambda: expected_abs_advantage(0.5, [4, 8]), "one group size"),
        (lambda: expected_abs_advantage(-0.1, 8), "p must be"),
    ],
)
def test_bad_input_raises_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_nan_tensor_is_refused():
    with pytest.raises(ValueError, match="finite"):
        grpo_advantages(as_tensor([1.0, float("nan")]))


# ---------------------------------------------------------------------------------------------------------------
# what the page shows


def test_group_view_worked_example_c():
    v = group_view(EXAMPLE_C)
    assert v.advantages.round(2).tolist() == [1.29, -0.77, -0.77, 1.29, 1.29, -0.77, -0.77, -0.77]
    assert round(v.stats.mean, 3) == 0.375 and round(v.stats.std_population, 3) == 0.484 and v.stats.n_correct == 3
    assert v.denominator == pytest.approx(math.sqrt(0.375 * 0.625), rel=1e-14)
    assert v.scale == pytest.approx(1 / math.sqrt(0.375 * 0.625), rel=1e-14)
    assert v.factors["population"] == 1.0
    assert v.factors["sample"] == pytest.approx(math.sqrt(7 / 8), rel=1e-14)
    assert v.factors["none"] == pytest.approx(math.sqrt(0.375 * 0.625), rel=1e-14)  # std + eps
    assert v.y_max == pytest.approx(0.625 / math.sqrt(0.375 * 0.625))  # the population mode is the largest here
    for m in STD_MODES:
        np.testing.assert_allclose(v.by_mode[m], v.factors[m] * v.by_mode["population"], rtol=1e-13)


@pytest.mark.parametrize("mode", STD_MODES)
@pytest.mark.parametrize("eps", EPSES)
def test_group_view_modes_and_no_signal(mode, eps):
    v = group_view([0.2, 0.9, 0.4], mode, eps)
    np.testing.assert_array_equal(v.advantages, grpo_advantages([0.2, 0.9, 0.4], mode, eps))
    np.testing.assert_allclose(v.advantages, v.scale * (v.rewards - v.stats.mean), atol=1e-14)
    assert (v.denominator is None) == (mode == "none")
    assert v.y_max == pytest.approx(max(np.abs(v.by_mode[m]).max() for m in STD_MODES))
    flat = group_view([1, 1, 1, 1], mode, eps)
    assert np.all(flat.advantages == 0) and flat.scale == 0 and flat.denominator is None and flat.y_max == 0
    assert flat.factors == {"population": 1.0, "sample": 1.0, "none": 1.0}


def test_group_view_tiny_std_and_eps():
    r = (0.5,) * 7 + (0.501,)
    v = group_view(r)
    assert 2500 < v.scale < 3500  # about 3,000 times the centred rewards
    capped = group_view(r, eps=1e-2)
    assert capped.scale < 100 and capped.scale == pytest.approx(1 / (v.stats.std_population + 1e-2))
    with pytest.raises(ValueError, match="one group"):
        group_view(np.zeros((2, 4)))


def test_difficulty_curves():
    c = difficulty_curves(8, n=5)
    np.testing.assert_allclose(c.p, [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_allclose(c.signal_probability, 1 - c.p**8 - (1 - c.p) ** 8, atol=1e-15)
    assert set(c.expected_abs_advantage) == set(STD_MODES) and c.G == 8
    np.testing.assert_allclose(c.expected_abs_advantage["none"], 2 * c.p * (1 - c.p) * 7 / 8, atol=1e-15)
    assert difficulty_curves(64).p.shape == (201,)
    for bad in (1, 2.5):
        with pytest.raises(ValueError, match="G must be"):
            difficulty_curves(bad)
    with pytest.raises(ValueError, match="n must be"):
        difficulty_curves(8, n=1)


def test_contrast_batch():
    b = contrast_batch(EXAMPLE_C)
    assert b.shape == (3, 8)
    assert b[0].tolist() == EXAMPLE_C and np.all(b[1] == 1) and np.all(b[2] == 0)
    within, across = grpo_advantages(b), batch_normalised_advantages(b)
    assert np.all(within[1:] == 0) and np.all(across[1] > 0) and np.all(across[2] < 0)


@pytest.mark.parametrize(("mode", "expected"), [("population", 1.0), ("sample", 1 / math.sqrt(2))])
def test_a_spread_at_the_smallest_float_still_centres(mode, expected):
    """Two rewards the smallest float apart (hypothesis found it: their mean rounds to 0, so centring before scaling
    left [0, 1.41]). Any two distinct rewards have z-scores of exactly -1 and +1 (the population std of two values
    is half their distance; the sample std is that distance over sqrt(2))."""
    np.testing.assert_allclose(grpo_advantages([0.0, 5e-324], mode), [-expected, expected], rtol=1e-15)
    np.testing.assert_allclose(grpo_advantages([7.0, 7.0 + 2**-49], mode), [-expected, expected], rtol=1e-12)
