"""core.evaluation: pass@k and pass^k estimators, standard errors, the model comparison and the bias simulation."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from core import evaluation
from core.device import get_device


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def exact_pass_hat_k(n: int, c: int, k: int) -> Fraction:
    return Fraction(math.comb(c, k), math.comb(n, k))


# --------------------------------------------------------------------------------------------------------------
# worked example E and the lesson's statements about the curves
# --------------------------------------------------------------------------------------------------------------


def test_worked_example_e():
    assert evaluation.pass_at_k(10, 3, 1) == pytest.approx(0.30, abs=1e-15)
    assert evaluation.pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252, rel=1e-14)
    assert round(evaluation.pass_at_k(10, 3, 5), 3) == 0.917
    assert evaluation.pass_at_k_plugin(10, 3, 5) == pytest.approx(1 - 0.7**5, rel=1e-14)
    assert round(evaluation.pass_at_k_plugin(10, 3, 5), 3) == 0.832


def test_scalar_in_float_out_and_arrays_keep_shape():
    assert isinstance(evaluation.pass_at_k(10, 3, 5), float)
    out = evaluation.pass_at_k(10, 3, np.arange(1, 11).reshape(2, 5))
    assert isinstance(out, np.ndarray) and out.shape == (2, 5)


@pytest.mark.parametrize("n", [1, 2, 10, 200, 100_000])
def test_k_equal_one_agrees_and_is_c_over_n(n):
    c = np.unique(np.linspace(0, n, 7).astype(int))
    np.testing.assert_allclose(evaluation.pass_at_k(n, c, 1), c / n, rtol=1e-13, atol=0)
    np.testing.assert_allclose(evaluation.pass_at_k_plugin(n, c, 1), c / n, rtol=1e-13, atol=0)
    np.testing.assert_allclose(evaluation.pass_hat_k(n, c, 1), c / n, rtol=1e-13, atol=0)


@pytest.mark.parametrize("n", [1, 2, 10, 200, 100_000])
def test_k_equal_n_is_one_whenever_c_positive(n):
    c = np.arange(1, min(n, 50) + 1)
    assert np.all(evaluation.pass_at_k(n, c, n) == 1.0)
    assert evaluation.pass_at_k(n, 0, n) == 0.0


def test_edge_cases():
    ks = np.arange(0, 11)
    assert np.all(evaluation.pass_at_k(10, 0, ks) == 0.0)  # c = 0: never
    assert np.all(np.signbit(evaluation.pass_at_k(10, 0, ks)) == 0)  # +0.0, not -0.0
    assert np.all(evaluation.pass_at_k_plugin(10, 0, ks) == 0.0)
    assert np.all(evaluation.pass_at_k(10, 10, ks[1:]) == 1.0)  # c = n: always
    assert np.all(evaluation.pass_at_k_plugin(10, 10, ks[1:]) == 1.0)
    assert evaluation.pass_at_k(10, 10, 0) == 0.0 and evaluation.pass_at_k_plugin(10, 10, 0) == 0.0  # pass@0 = 0
    assert evaluation.pass_at_k(1, 1, 1) == 1.0 and evaluation.pass_at_k(1, 0, 1) == 0.0  # n = 1
    assert evaluation.pass_hat_k(1, 1, 1) == 1.0 and evaluation.pass_hat_k(1, 0, 1) == 0.0
    assert evaluation.pass_hat_k(10, 3, 0) == 1.0 and evaluation.pass_hat_k_plugin(10, 3, 0) == 1.0
    assert np.all(evaluation.pass_hat_k(10, 3, np.arange(4, 11)) == 0.0)  # more than c: impossible
    assert evaluation.pass_hat_k_plugin(10, 0, 3) == 0.0
    assert evaluation.pass_at_k(10, 3, 8) == 1.0  # k > n - c: every 8-subset holds a correct one
    assert evaluation.pass_at_k_plugin(10, 3, 50) == pytest.approx(1 - 0.7**50)  # the plug-in accepts k > n


# --------------------------------------------------------------------------------------------------------------
# exact agreement with rational arithmetic, on all three computation paths
# --------------------------------------------------------------------------------------------------------------

SMALL = [(n, c, k) for n in range(1, 26) for c in range(n + 1) for k in range(n + 1)]


def test_fractions_curve_path():
    """One (n, c) with every k: the cumulative sum along k."""
    for n in range(1, 26):
        for c in range(n + 1):
            ks = np.arange(n + 1)
            want = np.array([float(exact_pass_at_k(n, c, k)) for k in ks])
            np.testing.assert_allclose(evaluation.pass_at_k(n, c, ks), want, rtol=1e-13, atol=1e-15)
            want_hat = np.array([float(exact_pass_hat_k(n, c, k)) for k in ks])
            np.testing.assert_allclose(evaluation.pass_hat_k(n, c, ks), want_hat, rtol=1e-13, atol=1e-300)


def test_fractions_table_path():
    """One (n, k) with every c: the cumulative sum along c."""
    for n in range(1, 26):
        for k in range(n + 1):
            cs = np.arange(n + 1)
            want = np.array([float(exact_pass_at_k(n, c, k)) for c in cs])
            np.testing.assert_allclose(evaluation.pass_at_k(n, cs, k), want, rtol=1e-13, atol=1e-15)


def test_fractions_general_path():
    """Arrays of different n: log-gamma differences, refined term by term."""
    n, c, k = (np.array(x) for x in zip(*SMALL, strict=True))
    want = np.array([float(exact_pass_at_k(*t)) for t in SMALL])
    np.testing.assert_allclose(evaluation.pass_at_k(n, c, k), want, rtol=1e-12, atol=1e-15)
    want_hat = np.array([float(exact_pass_hat_k(*t)) for t in SMALL])
    np.testing.assert_allclose(evaluation.pass_hat_k(n, c, k), want_hat, rtol=1e-12, atol=1e-300)


def test_plugins_match_fractions():
    for n, c, k in SMALL[::7]:
        assert evaluation.pass_at_k_plugin(n, c, k) == pytest.approx(
            float(1 - (1 - Fraction(c, n)) ** k), rel=1e-13, abs=1e-15
        )
        assert evaluation.pass_hat_k_plugin(n, c, k) == pytest.approx(float(Fraction(c, n) ** k), rel=1e-13, abs=1e-300)


# --------------------------------------------------------------------------------------------------------------
# large n: exact, finite and fast
# --------------------------------------------------------------------------------------------------------------

N_BIG = 100_000
BIG_POINTS = [(1, 1), (3, 1), (1, 2), (5, 17), (16, 16), (17, 17), (20, 30), (300, 300), (1000, 10), (50_000, 2)]


def test_big_n_curve_is_finite_and_fast():
    ks = np.arange(1, N_BIG + 1)
    evaluation.pass_at_k(N_BIG, 3, ks)  # warm-up
    start = time.perf_counter()
    curve = evaluation.pass_at_k(N_BIG, 3, ks)
    elapsed = time.perf_counter() - start
    assert np.all(np.isfinite(curve)) and curve.shape == (N_BIG,)
    assert np.all(np.diff(curve) >= 0) and curve[-1] == 1.0
    assert elapsed < 0.5  # the benchmark's target is 50 ms; this leaves room for a loaded test machine
    plug = evaluation.pass_at_k_plugin(N_BIG, 3, ks)
    assert np.all(np.isfinite(plug)) and np.all(curve >= plug - 1e-15)


@pytest.mark.parametrize(("c", "k"), BIG_POINTS)
def test_big_n_matches_exact_binomials(c, k):
    want = float(exact_pass_at_k(N_BIG, c, k))
    assert evaluation.pass_at_k(N_BIG, c, k) == pytest.approx(want, rel=1e-12)  # curve path
    assert evaluation.pass_at_k(N_BIG, np.array([c, c]), k)[0] == pytest.approx(want, rel=1e-12)  # table path
    general = evaluation.pass_at_k(np.array([N_BIG, N_BIG + 1]), np.array([c, c]), np.array([k, k]))[0]
    assert general == pytest.approx(want, rel=1e-7)  # log-gamma path: documented bound at n = 100,000
    want_hat = float(exact_pass_hat_k(N_BIG, N_BIG - c, k))
    assert evaluation.pass_hat_k(N_BIG, N_BIG - c, k) == pytest.approx(want_hat, rel=1e-12)


# --------------------------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------------------------


@st.composite
def nck(draw, n_max=2000):
    n = draw(st.integers(1, n_max))
    return n, draw(st.integers(0, n)), draw(st.integers(0, n))


@settings(max_examples=200, deadline=None)
@given(nck())
def test_properties_along_k(args):
    n, c, _ = args
    ks = np.arange(n + 1)
    unbiased, plugin = evaluation.pass_at_k(n, c, ks), evaluation.pass_at_k_plugin(n, c, ks)
    hat, hat_plugin = evaluation.pass_hat_k(n, c, ks), evaluation.pass_hat_k_plugin(n, c, ks)
    for y in (unbiased, plugin, hat, hat_plugin):
        assert np.all(np.isfinite(y)) and np.all((y >= 0) & (y <= 1))
    assert np.all(np.diff(unbiased) >= -1e-15) and np.all(np.diff(plugin) >= -1e-15)  # more tries never hurt
    assert np.all(np.diff(hat) <= 1e-15)  # all k right gets harder with k
    assert np.all(unbiased >= plugin - 1e-12)  # the plug-in is below the unbiased curve
    assert np.all(hat <= hat_plugin + 1e-12)  # and pass^k's plug-in above its unbiased one
    assert np.all(hat[1:] <= unbiased[1:] + 1e-12)  # all correct implies one correct


@settings(max_examples=100, deadline=None)
@given(nck(n_max=500), st.integers(0, 3))
def test_general_path_agrees_with_curve_path(args, shift):
    n, c, k = args
    ns = np.array([n, n + shift])  # different n: forces the general path when shift > 0
    got = evaluation.pass_at_k(ns, np.array([c, c]), np.array([k, k]))[0]
    assert got == pytest.approx(evaluation.pass_at_k(n, c, k), rel=1e-10, abs=1e-15)


@settings(max_examples=50, deadline=None)
@given(nck(n_max=60))
def test_fractions_random(args):
    n, c, k = args
    assert evaluation.pass_at_k(n, c, k) == pytest.approx(float(exact_pass_at_k(n, c, k)), rel=1e-13, abs=1e-15)


# --------------------------------------------------------------------------------------------------------------
# bad arguments
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((10, 11, 1), "0 <= c <= n"),
        ((10, -1, 1), "0 <= c <= n"),
        ((10, 3, 11), "k <= n"),
        ((10, 3, -1), "at least 0"),
        ((0, 0, 0), "at least 1"),
        ((10.5, 3, 1), "whole number"),
        ((10, 3, 2.5), "whole number"),
        ((10, float("nan"), 1), "finite"),
        ((10, 3, True), "whole number"),
        ((10, "3", 1), "whole number"),
        (([10, 10], [1, 2, 3], 1), "broadcast"),
    ],
)
def test_invalid_arguments_raise(args, match):
    with pytest.raises(ValueError, match=match):
        evaluation.pass_at_k(*args)


def test_whole_floats_are_accepted():
    assert evaluation.pass_at_k(10.0, 3.0, 5.0) == evaluation.pass_at_k(10, 3, 5)


# --------------------------------------------------------------------------------------------------------------
# standard errors and worked example D
# --------------------------------------------------------------------------------------------------------------


def test_quick_check_standard_error():
    assert round(100 * evaluation.standard_error(0.70, 1000), 1) == 1.4
    assert evaluation.standard_error(0.70, 1000) == pytest.approx(math.sqrt(0.21 / 1000))
    np.testing.assert_allclose(evaluation.standard_error([0, 0.5, 1], 100), [0, 0.05, 0])


def test_worked_example_d_independent():
    r = evaluation.compare_models(0.710, 0.725, 1000)
    assert r.method == "independent"
    assert round(100 * r.se_a, 2) == 1.43 and round(100 * r.se_b, 2) == 1.41
    assert round(100 * r.se, 1) == 2.0
    assert round(100 * r.difference, 1) == 1.5
    assert round(100 * r.half_width, 1) == 3.9
    assert r.low < 0 < r.high and not r.significant
    assert r.p_value == pytest.approx(2 * scipy.stats.norm.sf(abs(r.z)), rel=1e-10)


def test_z_critical():
    assert evaluation.z_critical(0.95) == pytest.approx(scipy.stats.norm.ppf(0.975), rel=1e-12)
    assert evaluation.z_critical(0.99) == pytest.approx(2.5758, abs=1e-4)
    with pytest.raises(ValueError):
        evaluation.z_critical(1.0)


def _paired_se_brute_force(N: int, only_a: int, only_b: int, both: int) -> float:
    a = np.zeros(N)
    b = np.zeros(N)
    a[:only_a] = 1
    b[only_a : only_a + only_b] = 1
    a[only_a + only_b : only_a + only_b + both] = 1
    b[only_a + only_b : only_a + only_b + both] = 1
    d = b - a
    return float(np.sqrt(d.var() / N))  # population variance of the per-question differences, over N


@pytest.mark.parametrize(("only_a", "only_b"), [(40, 55), (15, 30), (0, 15), (200, 215)])
def test_paired_matches_per_question_differences(only_a, only_b):
    N, right_a = 1000, 710
    r = evaluation.compare_models(0.710, 0.725, N, only_a=only_a, only_b=only_b)
    assert r.method == "paired"
    assert r.difference == pytest.approx(0.015)
    assert r.se == pytest.approx(_paired_se_brute_force(N, only_a, only_b, right_a - only_a), rel=1e-12)


def test_paired_is_tighter_for_correlated_models():
    independent = evaluation.compare_models(0.710, 0.725, 1000)
    paired = evaluation.compare_models(0.710, 0.725, 1000, only_a=40, only_b=55)
    assert paired.se < independent.se and not paired.significant
    tight = evaluation.compare_models(0.710, 0.725, 1000, only_a=15, only_b=30)
    assert tight.significant and tight.low > 0 and tight.difference > 0


def test_comparison_edges():
    same = evaluation.compare_models(1.0, 1.0, 50)
    assert same.se == 0 and same.difference == 0 and not same.significant and same.p_value == 1.0
    worse = evaluation.compare_models(0.9, 0.5, 1000)
    assert worse.significant and worse.high < 0 and worse.difference < 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"acc_a": 71.0, "acc_b": 0.725, "N": 1000}, r"\[0, 1\]"),
        ({"acc_a": 0.71, "acc_b": 0.725, "N": 0}, "at least 1"),
        ({"acc_a": 0.71, "acc_b": 0.725, "N": 1000, "only_a": 40}, "both"),
        ({"acc_a": 0.71, "acc_b": 0.725, "N": 1000, "only_a": 40, "only_b": 40}, "must equal"),
        ({"acc_a": 0.71, "acc_b": 0.725, "N": 1000, "only_a": -1, "only_b": 14}, ">= 0"),
        ({"acc_a": 0.01, "acc_b": 0.025, "N": 1000, "only_a": 50, "only_b": 65}, "cannot exceed"),
    ],
)
def test_comparison_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        evaluation.compare_models(**kwargs)


# --------------------------------------------------------------------------------------------------------------
# the bias simulation
# --------------------------------------------------------------------------------------------------------------


def _exact_plugin_mean(p: float, n: int, k: int) -> float:
    c = np.arange(n + 1)
    return float(scipy.stats.binom.pmf(c, n, p) @ evaluation.pass_at_k_plugin(n, c, k))


@pytest.mark.parametrize(("p", "n", "k"), [(0.3, 10, 5), (0.05, 200, 10), (0.002, 2000, 100)])
def test_simulation_unbiased_within_three_se_and_plugin_low(p, n, k):
    calls: list[float] = []
    sim = evaluation.simulate_estimators(p, n, k, 200_000, seed=1, progress=calls.append, chunk=50_000)
    assert sim.truth == pytest.approx(1 - (1 - p) ** k)
    assert abs(sim.mean_unbiased - sim.truth) < 3 * sim.se_unbiased  # unbiased
    assert sim.expected_plugin == pytest.approx(_exact_plugin_mean(p, n, k), rel=1e-10)
    assert sim.expected_plugin < sim.truth  # Jensen
    assert abs(sim.mean_plugin - sim.expected_plugin) < 3 * sim.se_plugin
    assert sim.mean_plugin < sim.truth - 3 * sim.se_plugin  # visibly low
    assert calls == sorted(calls) and calls[-1] == 1.0 and len(calls) == 4
    assert sim.counts_unbiased.sum() == sim.counts_plugin.sum() == 200_000
    assert sim.edges.shape == (41,) and sim.counts_unbiased.shape == (40,)
    assert sim.device.split(":")[0] == get_device().type


def test_simulation_standard_error_matches_theory():
    """SE of the mean = sd of one estimate / sqrt(problems), the sd taken over the exact binomial distribution."""
    p, n, k, m = 0.3, 10, 5, 400_000
    sim = evaluation.simulate_estimators(p, n, k, m, seed=3)
    c = np.arange(n + 1)
    pmf = scipy.stats.binom.pmf(c, n, p)
    est = np.asarray(evaluation.pass_at_k(n, c, k))
    sd = math.sqrt(pmf @ (est - pmf @ est) ** 2)
    assert sim.se_unbiased == pytest.approx(sd / math.sqrt(m), rel=0.02)


def test_simulation_is_reproducible_and_handles_certain_outcomes():
    a = evaluation.simulate_estimators(0.3, 10, 5, 10_000, seed=7)
    b = evaluation.simulate_estimators(0.3, 10, 5, 10_000, seed=7)
    assert a.mean_unbiased == b.mean_unbiased and np.array_equal(a.counts_plugin, b.counts_plugin)
    never = evaluation.simulate_estimators(0.0, 10, 5, 1000)
    assert never.truth == never.mean_unbiased == never.mean_plugin == 0.0 and never.se_unbiased == 0.0
    always = evaluation.simulate_estimators(1.0, 10, 5, 1000)
    assert always.truth == always.mean_unbiased == always.mean_plugin == 1.0
    big = evaluation.simulate_estimators(0.001, N_BIG, 1000, 1000)
    assert np.isfinite(big.mean_unbiased) and big.counts_unbiased.sum() == 1000


@pytest.mark.parametrize(
    "args", [(1.5, 10, 5, 100), (0.3, 10, 11, 100), (0.3, 10, 0, 100), (0.3, 10, 5, 0), (0.3, 10, 5, 10**8)]
)
def test_simulation_refuses_bad_input(args):
    with pytest.raises(ValueError):
        evaluation.simulate_estimators(*args)


# --------------------------------------------------------------------------------------------------------------
# display grid
# --------------------------------------------------------------------------------------------------------------


def test_display_k_grid():
    np.testing.assert_array_equal(evaluation.display_k_grid(10), np.arange(1, 11))
    grid = evaluation.display_k_grid(N_BIG, max_points=1500, include=[12_345, 0, 10**9])
    assert grid[0] == 1 and grid[-1] == N_BIG and 12_345 in grid
    assert np.all(np.diff(grid) > 0) and len(grid) <= 1502
    assert set(range(1, 20)) <= set(grid.tolist())  # the start of the curve is dense


def test_pass_at_k_curves_worked_example_e():
    r = evaluation.pass_at_k_curves(10, 3, 5)
    assert r.every_k and r.ks.tolist() == list(range(1, 11))
    assert round(r.unbiased_at_k, 3) == 0.917 and round(r.plugin_at_k, 3) == 0.832
    assert round(r.gap, 3) == 0.085
    assert r.hat_at_k == 0.0 and r.hat_plugin_at_k == pytest.approx(0.3**5)  # 5 > c = 3: never all correct
    assert r.unbiased[4] == r.unbiased_at_k and r.plugin[0] == r.unbiased[0] == pytest.approx(0.3)
    assert r.unbiased[-1] == 1.0  # k = n, c >= 1


def test_pass_at_k_curves_large_n_grid_and_every_k():
    r = evaluation.pass_at_k_curves(100_000, 20_000, 12_345)
    assert not r.every_k and 12_345 in r.ks and r.ks.size <= 1_502
    assert r.unbiased_at_k == r.unbiased[np.flatnonzero(r.ks == 12_345)[0]]
    full = evaluation.pass_at_k_curves(100_000, 20_000, 12_345, every_k=True)
    assert full.every_k and full.ks.size == 100_000
    assert np.all(np.isfinite(full.unbiased)) and np.all(np.diff(full.unbiased) >= 0)
    assert np.all(full.unbiased >= full.plugin - 1e-12) and np.all(full.hat <= full.hat_plugin + 1e-12)
    assert full.unbiased_at_k == r.unbiased_at_k


def test_pass_at_k_curves_rejects_bad_input():
    for args in ((10, 11, 5), (10, 3, 0), (10, 3, 11), (0, 0, 1)):
        with pytest.raises(ValueError):
            evaluation.pass_at_k_curves(*args)


def test_columns_for_csv_tables():
    r = evaluation.pass_at_k_curves(10, 3, 5)
    cols = r.columns()
    assert cols["k"].tolist() == list(range(1, 11)) and cols["n"] == 10 and cols["c"] == 3
    assert round(float(cols["pass_at_k_unbiased"][4]), 3) == 0.917
    sim = evaluation.simulate_estimators(0.3, 10, 5, 1000, bins=7)
    h = sim.columns()
    assert h["bin_low"].shape == h["problems_unbiased"].shape == (7,)
    assert h["problems_unbiased"].sum() == h["problems_plugin"].sum() == 1000
    assert np.array_equal(h["bin_low"][1:], h["bin_high"][:-1])
    assert sim.bias_plugin_exact == sim.expected_plugin - sim.truth < 0
