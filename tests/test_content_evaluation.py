"""Where the plug-in pass@k's bias is worst, against a brute-force reference with exact fractions and scipy."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy.stats import binom

from core import evaluation
from tests.apptest import no_exception, open_page


def _bias_fraction(n, p, k):
    """E[1 - (1 - c/n)^k] - (1 - (1 - p)^k) with exact rational arithmetic."""
    p = Fraction(p)
    expected = sum(comb(n, c) * p**c * (1 - p) ** (n - c) * (1 - (1 - Fraction(c, n)) ** k) for c in range(n + 1))
    return expected - (1 - (1 - p) ** k)


@pytest.mark.parametrize(("n", "p"), [(5, 0.3), (10, 0.05), (10, 0.5), (12, 0.9)])
def test_plugin_bias_exact_matches_fractions(n, p):
    bias = evaluation.plugin_bias_exact(n, p)
    ref = [float(_bias_fraction(n, p, k)) for k in range(1, n + 1)]
    np.testing.assert_allclose(bias, ref, atol=1e-14)
    assert abs(bias[0]) < 1e-14 and np.all(bias[1:] < 0)  # k = 1 is unbiased; the plug-in is low for k >= 2


def _worst_k_scipy(n, p):
    c = np.arange(n + 1)
    k = np.arange(1, n + 1)
    plug = binom.pmf(c, n, p) @ (1 - (1 - c[:, None] / n) ** k[None, :])
    return int(k[np.argmin(plug - (1 - (1 - p) ** k))])


@pytest.mark.parametrize(("n", "p", "worst"), [
    (10, 0.1, 10), (10, 0.3, 7), (10, 0.5, 4), (10, 0.9, 2), (100, 0.01, 100), (100, 0.05, 45), (100, 0.5, 4),
])  # fmt: skip
def test_worst_k(n, p, worst):
    assert evaluation.plugin_bias_worst_k(n, p) == _worst_k_scipy(n, p) == worst


@pytest.mark.parametrize(("n", "expect"), [(3, 5 / 7), (10, 0.2531), (20, 0.1311), (100, 0.02699)])
def test_interior_threshold_against_a_scan(n, expect):
    t = evaluation.plugin_bias_interior_threshold(n)
    assert t == pytest.approx(expect, rel=1e-3)
    assert _worst_k_scipy(n, t * 0.999) == n and _worst_k_scipy(n, t * 1.001) < n
    assert all(_worst_k_scipy(n, q) == n for q in np.linspace(t / 20, t * 0.99, 7))
    assert all(_worst_k_scipy(n, q) < n for q in np.linspace(t * 1.01, 0.99, 7))


def test_threshold_is_about_2_7_over_n_for_large_n():
    for n in (100, 1000):
        assert n * evaluation.plugin_bias_interior_threshold(n) == pytest.approx(2.7, abs=0.03)


def test_bad_arguments():
    for n, p in [(0, 0.5), (2.5, 0.5), (10, 1.5), (10, float("nan")), (evaluation.PLUGIN_BIAS_N_MAX + 1, 0.5)]:
        with pytest.raises(ValueError):
            evaluation.plugin_bias_exact(n, p)
    with pytest.raises(ValueError):
        evaluation.plugin_bias_interior_threshold(2)
    assert np.all(evaluation.plugin_bias_exact(6, 0.0) == 0) and np.all(evaluation.plugin_bias_exact(6, 1.0) == 0)


def test_page_texts():
    at = open_page("pages/5_Evaluation.py")  # n = 10, p = 0.3 by default
    assert no_exception(at)
    text = " ".join(" ".join(m.value for m in at.markdown).split())
    assert "most at middle k and small n" not in text
    assert "only when p is above 0.253" in text and "At p = 0.3 it is k = 7" in text
    assert "for n = 10, above p ≈ 0.25; for n = 100, above 0.027" in text
    for check in ("several seeds", "contamination", "13-grams", "Brown et al. 2020", "Zheng et al. 2023",
                  "swap the answer order", "control for length"):  # fmt: skip
        assert check in text
