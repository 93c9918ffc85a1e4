"""core.test_time_compute against independent references: the best-of-n distribution by enumeration, its KL on
fine and coarse distributions, the over-optimisation peak by grid search, majority voting by a plain multinomial
loop and a seeded simulation, and the toy compute split's budget identity."""

import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.test_time_compute import (
    VOTE_N_MAX,
    best_of_n_distribution,
    best_of_n_for_kl,
    best_of_n_kl,
    best_of_n_kl_formula,
    best_of_n_success,
    compute_split,
    gold_score,
    majority_vote_accuracy,
    over_optimisation_curve,
    over_optimisation_peak,
)

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------------------------
# best-of-n


def test_best_of_n_success_is_one_minus_all_wrong() -> None:
    for p in (0.0, 0.05, 0.3, 1.0):
        for n in (1, 2, 10, 100):
            assert math.isclose(best_of_n_success(p, n), 1 - (1 - p) ** n, rel_tol=1e-12, abs_tol=1e-15)
    got = best_of_n_success(np.array([0.1, 0.2]), 3)
    np.testing.assert_allclose(got, [1 - 0.9**3, 1 - 0.8**3])


def best_of_n_by_enumeration(probs, rewards, n):
    """Draw every ordered n-tuple, pick a highest-reward sample uniformly among the tied ones: a plain loop."""
    K = len(probs)
    out = [0.0] * K
    for tup in itertools.product(range(K), repeat=n):
        pr = math.prod(probs[y] for y in tup)
        top = max(rewards[y] for y in tup)
        tied = [y for y in tup if rewards[y] == top]
        for y in tied:
            out[y] += pr / len(tied)
    return np.array(out)


@pytest.mark.parametrize(
    ("probs", "rewards"),
    [
        ([0.2, 0.3, 0.5], [1.0, 1.0, 0.0]),  # two outputs tied at the top
        ([0.1, 0.2, 0.3, 0.4], [0.3, -1.0, 2.0, 0.3]),
        ([0.25, 0.25, 0.25, 0.25], [0.0, 1.0, 2.0, 3.0]),
    ],
)
@pytest.mark.parametrize("n", [1, 2, 4])
def test_best_of_n_distribution_equals_enumeration(probs, rewards, n: int) -> None:
    np.testing.assert_allclose(
        best_of_n_distribution(probs, rewards, n), best_of_n_by_enumeration(probs, rewards, n), atol=1e-14
    )


def test_kl_formula_matches_a_fine_distribution_and_bounds_it() -> None:
    K = 20_000
    i = np.arange(1, K + 1, dtype=np.float64)
    for n in (1, 2, 8, 64, 256):
        # K equally likely outputs with distinct rewards: the best of n is output i with (i/K)^n - ((i-1)/K)^n
        q = (i / K) ** n - ((i - 1) / K) ** n
        keep = q > 0
        direct = float(np.sum(q[keep] * np.log(q[keep] * K)))
        formula = math.log(n) - (n - 1) / n
        assert math.isclose(best_of_n_kl_formula(n), formula, abs_tol=1e-15)
        assert math.isclose(best_of_n_kl(np.full(K, 1 / K), i, n), direct, rel_tol=1e-9, abs_tol=1e-12)
        assert direct <= formula + 1e-12  # an upper bound ...
        assert formula - direct <= 5e-3 * max(1.0, formula)  # ... tight when no output carries much mass


def test_kl_formula_is_a_strict_upper_bound_with_ties() -> None:
    for n in (2, 4, 16, 100):
        # two equally likely outputs: best of n is (2^-n, 1 - 2^-n); the KL stays below log 2
        a = 2.0**-n
        direct = a * math.log(2 * a) + (1 - a) * math.log(2 * (1 - a))
        got = best_of_n_kl([0.5, 0.5], [0.0, 1.0], n)
        assert math.isclose(got, direct, rel_tol=1e-12)
        assert got <= math.log(2)  # bounded by log 2 for every n
        assert got < best_of_n_kl_formula(n)
    # ties in the reward between different outputs pull the KL further below
    probs = np.full(1000, 1e-3)
    tied = np.repeat(np.arange(10.0), 100)  # 10 reward levels of 100 outputs each
    assert best_of_n_kl(probs, tied, 16) < best_of_n_kl(probs, np.arange(1000.0), 16) < best_of_n_kl_formula(16)


# ---------------------------------------------------------------------------------------------------------------
# over-optimisation


def test_gold_score_and_its_peak_by_grid_search() -> None:
    for alpha, beta in ((1.0, 0.25), (0.7, 0.2), (2.0, 1.0)):
        kl = np.linspace(0, 4 * (alpha / beta) ** 2, 400_001)
        d = np.sqrt(kl)
        gold = d * (alpha - beta * d)
        np.testing.assert_allclose(gold_score(kl, alpha, beta), gold, rtol=1e-13, atol=1e-15)
        peak = over_optimisation_peak(alpha, beta)
        assert math.isclose(peak.kl, kl[gold.argmax()], rel_tol=2e-4, abs_tol=1e-4)
        assert math.isclose(peak.d, alpha / (2 * beta)) and math.isclose(peak.gold, gold.max(), rel_tol=1e-8)
        assert math.isclose(math.log(peak.n) - (peak.n - 1) / peak.n, peak.kl, rel_tol=1e-10)
        ns = range(max(1, peak.n_best - 3), peak.n_best + 4)
        golds = [alpha * math.sqrt(math.log(m) - (m - 1) / m) - beta * (math.log(m) - (m - 1) / m) for m in ns]
        assert list(ns)[int(np.argmax(golds))] == peak.n_best


def test_over_optimisation_curve_rises_then_falls() -> None:
    n = np.unique(np.round(np.logspace(0, 5, 200)))
    curve = over_optimisation_curve(n)
    i = int(curve.gold.argmax())
    assert 0 < i < n.size - 1
    assert np.all(np.diff(curve.gold[: i + 1]) >= 0) and np.all(np.diff(curve.gold[i:]) <= 0)
    assert np.all(np.diff(curve.kl) > 0)  # the proxy is pushed harder all along
    np.testing.assert_allclose(best_of_n_for_kl(curve.kl[1:]), n[1:], rtol=1e-9)


# ---------------------------------------------------------------------------------------------------------------
# majority voting


def majority_by_loop(p: float, n: int, m: int) -> float:
    """Every count vector (c, d_1..d_m) summing to n, with its multinomial probability; ties split evenly."""
    total = 0.0
    q = (1 - p) / m
    for counts in itertools.product(range(n + 1), repeat=m + 1):
        if sum(counts) != n:
            continue
        coef = math.factorial(n) / math.prod(math.factorial(x) for x in counts)
        prob = coef * p ** counts[0] * math.prod(q**x for x in counts[1:])
        top = max(counts)
        if counts[0] == top:
            total += prob / sum(1 for x in counts if x == top)
    return total


@pytest.mark.parametrize(("p", "n", "m"), [(0.3, 5, 3), (0.45, 6, 1), (0.5, 4, 1), (0.2, 7, 4), (0.35, 8, 2)])
def test_majority_vote_equals_the_multinomial_loop(p: float, n: int, m: int) -> None:
    assert math.isclose(majority_vote_accuracy(p, n, m), majority_by_loop(p, n, m), rel_tol=1e-12, abs_tol=1e-14)


def test_majority_vote_matches_a_seeded_simulation() -> None:
    rng = np.random.default_rng(11)
    trials = 200_000
    for p, n, m in ((0.35, 9, 10), (0.45, 12, 1), (0.25, 20, 50)):
        correct = rng.random((trials, n)) < p
        answers = np.where(correct, 0, 1 + rng.integers(0, m, size=(trials, n)))  # 0 is the correct answer
        counts = np.zeros((trials, m + 1))
        np.add.at(counts, (np.repeat(np.arange(trials), n), answers.ravel()), 1)
        top = counts.max(axis=1, keepdims=True)
        tied = counts == top
        # break ties uniformly: a random key among the tied answers
        keys = np.where(tied, rng.random(counts.shape), -1.0)
        win = keys.argmax(axis=1) == 0
        est = win.mean()
        se = math.sqrt(est * (1 - est) / trials)
        assert abs(majority_vote_accuracy(p, n, m) - est) <= 5 * se, (p, n, m)


def test_plurality_can_win_below_one_half_with_many_distractors() -> None:
    assert majority_vote_accuracy(0.3, 15, 10) > 0.5  # scattered wrong answers
    assert majority_vote_accuracy(0.3, 15, 1) < 0.3  # one wrong answer: the vote amplifies the error
    assert majority_vote_accuracy(0.7, 15, 1) > 0.9
    # every wrong answer distinct: wins with 2+ correct, or 1 correct in an n-way tie
    n, p = 11, 0.2
    closed = 1 - (1 - p) ** n - n * p * (1 - p) ** (n - 1) + n * p * (1 - p) ** (n - 1) / n
    assert math.isclose(majority_vote_accuracy(p, n, math.inf), closed, rel_tol=1e-12)
    assert abs(majority_vote_accuracy(p, n, 1000) - closed) < 0.01
    got = majority_vote_accuracy(np.linspace(0, 1, 5), 7, 3)
    assert got[0] == 0 and math.isclose(got[-1], 1.0)
    big = majority_vote_accuracy(np.array([0.2, 0.5]), VOTE_N_MAX, 1000)
    assert np.all((big >= 0) & (big <= 1)) and np.all(np.isfinite(big))


# ---------------------------------------------------------------------------------------------------------------
# the toy compute split


def test_compute_split_spends_exactly_the_budget() -> None:
    C, R, T = 1e23, 1e8, 1000.0
    s = compute_split(C, R, T)
    ok = np.isfinite(s.accuracy)
    assert ok.any()
    N, D, k = s.params[ok], s.tokens_per_param[ok] * s.params[ok], s.samples[ok]
    np.testing.assert_allclose(6 * N * D + R * k * 2 * N * T, C, rtol=1e-12)
    np.testing.assert_allclose(6 * N * D, s.share[ok] * C, rtol=1e-12)
    assert np.all(k >= 1) and np.all((s.accuracy[ok] >= 0) & (s.accuracy[ok] <= 1))
    assert s.best_share == s.share[np.nanargmax(s.accuracy)]
    # serving more queries leaves less per query: the best accuracy cannot rise
    assert np.nanmax(compute_split(C, 1e10, T).accuracy) < np.nanmax(s.accuracy)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: best_of_n_kl_formula(0), "whole number >= 1"),
        (lambda: best_of_n_kl_formula(2.5), "whole number"),
        (lambda: best_of_n_distribution([0.5, 0.6], [0, 1], 2), "sum to 1"),
        (lambda: best_of_n_distribution([0.5, 0.5], [0, 1, 2], 2), "same length"),
        (lambda: gold_score(-1.0), ">= 0"),
        (lambda: gold_score(1.0, beta=0.0), "> 0"),
        (lambda: majority_vote_accuracy(1.2, 5, 2), r"\[0, 1\]"),
        (lambda: majority_vote_accuracy(0.5, VOTE_N_MAX + 1, 2), "at most"),
        (lambda: majority_vote_accuracy(0.5, 5, 0), "m must be"),
        (lambda: majority_vote_accuracy(0.5, 5, 2.5), "m must be"),
        (lambda: compute_split(1e23, 1e8, shares=[0.0, 0.5]), "strictly between"),
        (lambda: compute_split(-1.0, 1e8), "> 0"),
    ],
)
def test_bad_input_is_refused(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_import_leaves_torch_out() -> None:
    code = "import sys, core.test_time_compute; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
