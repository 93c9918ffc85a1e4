"""core.calibration against independent references: a plain loop for ECE and MCE, numerical integration and a
large seeded simulation for the expected ECE, a seeded simulation for exact match, and known temperatures."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, special, stats

from core import calibration as C

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------------------------
# ECE and MCE against a plain loop


def _loop_ece(conf, correct, n_bins, binning):
    """ECE and MCE by a loop over samples: each sample's bin found one by one, sums kept in lists."""
    n = len(conf)
    if binning == "width":
        bins = []
        for c in conf:
            b = 0
            while not (c <= (b + 1) / n_bins) and b < n_bins - 1:
                b += 1
            bins.append(b)
    else:
        order = sorted(range(n), key=lambda i: conf[i])
        m = min(n_bins, n)
        bins = [0] * n
        start = 0
        for b in range(m):
            size = n // m + (1 if b < n % m else 0)
            for j in order[start : start + size]:
                bins[j] = b
            start += size
    total = {}
    for c, a, b in zip(conf, correct, bins, strict=True):
        s = total.setdefault(b, [0, 0.0, 0.0])
        s[0] += 1
        s[1] += c
        s[2] += a
    ece, mce = 0.0, 0.0
    for count, cs, as_ in total.values():
        gap = abs(as_ / count - cs / count)
        ece += count / n * gap
        mce = max(mce, gap)
    return ece, mce


@pytest.mark.parametrize("binning", ["width", "mass"])
@pytest.mark.parametrize("n_bins", [1, 7, 15])
def test_ece_and_mce_match_a_plain_loop(binning, n_bins):
    rng = np.random.default_rng(3)
    conf = rng.beta(6, 1.5, size=500)  # piled up near 1: several equal-width bins stay empty
    conf[:5] = [0.0, 1.0, 0.5, 2 / 7, 0.2]  # edges: 0 in the first bin, (m-1)/M < c <= m/M
    correct = (rng.random(500) < conf**2).astype(float)
    r = C.reliability_diagram(conf, correct, n_bins, binning)
    ece, mce = _loop_ece(conf.tolist(), correct.tolist(), n_bins, binning)
    assert r.ece == pytest.approx(ece, rel=1e-12, abs=1e-15)
    assert r.mce == pytest.approx(mce, rel=1e-12, abs=1e-15)
    assert C.expected_calibration_error(conf, correct, n_bins, binning) == r.ece
    assert C.max_calibration_error(conf, correct, n_bins, binning) == r.mce
    assert r.count.sum() == 500 and r.weight.sum() == pytest.approx(1.0)


def test_empty_bins_weigh_nothing_and_read_nan():
    r = C.reliability_diagram([0.91, 0.95, 0.99], [1, 1, 0], n_bins=10)
    assert r.count.tolist() == [0] * 9 + [3]
    assert np.isnan(r.accuracy[:9]).all() and np.isnan(r.confidence[:9]).all()
    assert r.ece == pytest.approx(abs(2 / 3 - (0.91 + 0.95 + 0.99) / 3))
    assert r.mce == r.ece


def test_equal_mass_bins_differ_by_at_most_one():
    r = C.reliability_diagram(np.linspace(0, 1, 103), np.ones(103), n_bins=10, binning="mass")
    assert r.count.max() - r.count.min() <= 1 and r.count.sum() == 103


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        C.expected_calibration_error([1.2], [1])
    with pytest.raises(ValueError, match="0 \\(wrong\\)"):
        C.expected_calibration_error([0.5], [0.5])
    with pytest.raises(ValueError, match="binning"):
        C.expected_calibration_error([0.5], [1], binning="quantile")


# ---------------------------------------------------------------------------------------------------------------
# the closed form for accuracy = c^γ


@pytest.mark.parametrize("gamma", [0.5, 2.0, 3.0])
def test_bin_moments_against_numerical_integration(gamma):
    edges = np.linspace(0, 1, 6)
    mass, first, power = C.power_bin_moments(edges, gamma, 5.0, 2.0)
    dens = stats.beta(5.0, 2.0).pdf
    for m in range(5):
        lo, hi = edges[m], edges[m + 1]
        assert mass[m] == pytest.approx(integrate.quad(dens, lo, hi)[0], abs=1e-12)
        assert first[m] == pytest.approx(integrate.quad(lambda c: c * dens(c), lo, hi)[0], abs=1e-12)
        assert power[m] == pytest.approx(integrate.quad(lambda c, g=gamma: c**g * dens(c), lo, hi)[0], abs=1e-12)


@pytest.mark.parametrize("gamma", [0.5, 2.0, 3.0])
def test_expected_ece_is_the_mean_gap_for_every_number_of_bins(gamma):
    # E[c] = a / (a + b); E[c^γ] by integration
    e_pow = integrate.quad(lambda c: c**gamma * stats.beta(5.0, 2.0).pdf(c), 0, 1)[0]
    gap = abs(5 / 7 - e_pow)
    for m in (1, 5, 15, 40):
        assert C.expected_ece_power(gamma, 5.0, 2.0, m) == pytest.approx(gap, rel=1e-9)
    assert abs(C.mean_gap_power(gamma)) == pytest.approx(gap, rel=1e-9)


@pytest.mark.parametrize("binning", ["width", "mass"])
def test_expected_ece_against_a_large_seeded_simulation(binning):
    c, a = C.simulate_power_miscalibration(2_000_000, 2.0, 5.0, 2.0, seed=11)
    sim = C.expected_calibration_error(c, a, 15, binning)
    # the sampling error of the overall gap is about sqrt(0.25 / n) = 3.5e-4; the bins' noise adds a small bias
    assert sim == pytest.approx(C.expected_ece_power(2.0, 5.0, 2.0, 15), abs=2e-3)
    # by hand for Beta(5, 2), γ = 2: E[c] - E[c²] = 5/7 - (5 · 6) / (7 · 8) = 10/56
    assert C.expected_ece_power(2.0) == pytest.approx(10 / 56, rel=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# before and after preference tuning, temperature scaling


def test_tuning_toy_keeps_what_is_right_and_worsens_ece():
    toy = C.preference_tuning_toy(n=50_000, kappa=2.5, seed=4)
    assert toy.before_diagram.ece < 0.01 < 0.08 < toy.after_diagram.ece
    assert toy.before_diagram.overall_accuracy == toy.after_diagram.overall_accuracy
    np.testing.assert_allclose(C.sharpen(toy.before, 2.5), toy.after)
    # overconfident at both ends: above the diagonal in the low bins, below it in the high ones
    gap = toy.after_diagram.gap
    assert gap[0] < 0 and gap[-1] > 0
    # the curve is sigmoid(logit(c') / κ): a two-class logit scaled by κ, so temperature scaling finds T ≈ κ
    logits = np.stack([np.zeros_like(toy.after), np.log(toy.after) - np.log1p(-toy.after)], axis=1)
    assert C.fit_temperature(logits, toy.correct.astype(np.int64)) == pytest.approx(2.5, rel=0.05)


@pytest.mark.parametrize("t0", [0.6, 2.0, 3.0])
def test_temperature_scaling_recovers_a_known_t_keeps_accuracy_and_lowers_nll(t0):
    zv, yv = C.simulate_logit_model(20_000, 10, 2.0, t0, seed=1)
    zt, yt = C.simulate_logit_model(20_000, 10, 2.0, t0, seed=2)
    ts = C.temperature_scaling(zv, yv, zt, yt)
    assert ts.T == pytest.approx(t0, rel=0.04)
    assert ts.accuracy_after == ts.accuracy_before
    assert ts.nll_after < ts.nll_before
    assert ts.ece_after < ts.ece_before

    # the fitted T minimises the validation NLL (scipy's log-softmax): 1% either side is worse
    def val_nll(t):
        return -np.mean(special.log_softmax(zv / t, axis=1)[np.arange(yv.size), yv])

    assert val_nll(ts.T) < min(val_nll(ts.T * 0.99), val_nll(ts.T * 1.01))


def test_nll_against_scipy_log_softmax():
    z, y = C.simulate_logit_model(50, 4, 1.0, 1.5, seed=5)
    ref = -np.mean([(z[i] / 1.7)[y[i]] - np.log(np.exp(z[i] / 1.7).sum()) for i in range(50)])
    assert C.nll(z, y, 1.7) == pytest.approx(ref, rel=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# emergence


@pytest.mark.parametrize("k", [1, 5, 10])
def test_exact_match_against_a_seeded_simulation(k):
    rng = np.random.default_rng(k)
    for p in (0.3, 0.8, 0.95):
        tokens = rng.random((200_000, k)) < p
        rate = tokens.all(axis=1).mean()
        sd = math.sqrt(p**k * (1 - p**k) / 200_000)
        assert abs(rate - C.exact_match(p, k)) < 5 * sd + 1e-12
        assert tokens.sum(axis=1).mean() == pytest.approx(float(C.expected_tokens_right(p, k)), abs=0.02)
        assert (~tokens).sum(axis=1).mean() == pytest.approx(float(C.token_edit_distance(p, k)), abs=0.02)


def test_per_token_curve_and_the_crossing():
    x = np.linspace(16, 28, 241)
    e = C.emergence_curves(x, k=5, alpha=0.5, x0=22.0, threshold=0.5)
    assert np.all(np.diff(e.per_token) >= 0) and np.all(np.diff(e.exact_match) >= 0)  # p underflows to 0 early
    assert np.all(np.diff(e.per_token)[e.per_token[1:] > 1e-300] > 0)
    # p = exp(-10^(-α (x - x0))) by hand at x0: exp(-1)
    assert float(C.per_token_accuracy(22.0)) == pytest.approx(math.exp(-1))
    assert float(C.exact_match(C.per_token_accuracy(e.crossing), 5)) == pytest.approx(0.5, rel=1e-12)
    # longer answers cross later
    assert C.exact_match_crossing(0.5, 10) > C.exact_match_crossing(0.5, 5) > C.exact_match_crossing(0.5, 1)
    np.testing.assert_allclose(e.tokens_right_share, e.per_token)


# ---------------------------------------------------------------------------------------------------------------
# no torch at import


def test_importing_the_module_leaves_torch_out():
    code = "import json, sys; import core.calibration; print(json.dumps('torch' in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip()) is False


def test_tuned_logits_give_the_stated_probability_and_temperature_kappa_undoes_them():
    """softmax([κ logit c, 0])[0] = sigmoid(κ logit c) = sharpen(c, κ) (scipy's expit and softmax), and fitting T on
    a large sample of the calibrated toy recovers T ≈ κ: the tuning is exactly a logit scale of κ."""
    c = np.array([0.01, 0.3, 0.5, 0.9, 0.999999])
    z = C.tuned_logits(c, 2.5)
    assert special.softmax(z, axis=1)[:, 0] == pytest.approx(special.expit(2.5 * special.logit(c)), rel=1e-12)
    assert C.sharpen(c, 2.5) == pytest.approx(special.expit(2.5 * special.logit(c)), rel=1e-12)
    toy = C.preference_tuning_toy(n=50_000, kappa=3.0, seed=5)
    t = C.fit_temperature(C.tuned_logits(toy.before, 3.0), (1 - toy.correct).astype(np.int64))
    assert t == pytest.approx(3.0, rel=0.05)
    with pytest.raises(ValueError):
        C.tuned_logits([0.0, 0.5], 2.0)
