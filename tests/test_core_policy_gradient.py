"""core.policy_gradient against independent references: exact sums over answers in fractions and plain loops,
enumeration of ordered groups, torch autograd, and seeded simulations with tolerances from their standard errors."""

import itertools
import math
import statistics
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from core.policy_gradient import (
    ESTIMATORS,
    GROUP_ESTIMATORS,
    SINGLE_ESTIMATORS,
    alignment,
    baseline_contribution,
    baseline_moments,
    estimator_moments,
    expected_gradient,
    expected_reward,
    group_count_vectors,
    group_mean_factor,
    group_moments,
    group_norm_scale_binary,
    learning_curves,
    optimal_baseline,
    policy_gradient,
    score_function,
    simulate_estimators,
    softmax_policy,
)

ROOT = Path(__file__).resolve().parents[1]

# A policy with rational probabilities (theta = log pi), so the references can be exact fractions
PI_Q = (Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 8))
R_Q = (Fraction(1), Fraction(1, 5), Fraction(0), Fraction(3, 5))
THETA = np.log([float(p) for p in PI_Q])
REWARDS = np.array([float(r) for r in R_Q])
B_CONST = Fraction(1, 3)


# ---------------------------------------------------------------------------------------------------------------
# independent references


def score_q(a: int, pi=PI_Q) -> list[Fraction]:
    """e_a - pi, in fractions."""
    return [(1 if k == a else 0) - pi[k] for k in range(len(pi))]


def exact_moments_q(b: Fraction, pi=PI_Q, r=R_Q) -> tuple[list[Fraction], list[list[Fraction]]]:
    """Mean and covariance of (r_a - b)(e_a - pi), a ~ pi, as sums over the answers in fractions."""
    K = len(pi)
    mean = [sum(pi[a] * (r[a] - b) * score_q(a, pi)[k] for a in range(K)) for k in range(K)]
    second = [
        [sum(pi[a] * (r[a] - b) ** 2 * score_q(a, pi)[k] * score_q(a, pi)[j] for a in range(K)) for j in range(K)]
        for k in range(K)
    ]
    cov = [[second[k][j] - mean[k] * mean[j] for j in range(K)] for k in range(K)]
    return mean, cov


def baselines_q() -> dict[str, Fraction]:
    """Each single-sample baseline in fractions: 0, b, E[r], and b* = E[r |s|^2] / E[|s|^2]."""
    mean_r = sum(p * r for p, r in zip(PI_Q, R_Q, strict=True))
    s2 = [sum(x * x for x in score_q(a)) for a in range(4)]
    b_star = sum(PI_Q[a] * s2[a] * R_Q[a] for a in range(4)) / sum(PI_Q[a] * s2[a] for a in range(4))
    return {"none": Fraction(0), "constant": B_CONST, "mean": mean_r, "optimal": b_star}


def group_reference(pi, r, estimator, G, b=0.0, std="population"):
    """Mean and covariance of the group estimate by enumerating all K^G ordered groups, in plain loops."""
    K = len(pi)
    outcomes = []
    for answers in itertools.product(range(K), repeat=G):
        prob = math.prod(pi[a] for a in answers)
        rs = [r[a] for a in answers]
        mean = sum(rs) / G
        if estimator in ("none", "constant", "mean", "optimal"):
            adv = [x - b for x in rs]
        elif estimator == "group_mean":
            adv = [x - mean for x in rs]
        elif estimator == "leave_one_out":
            adv = [rs[i] - sum(rs[j] for j in range(G) if j != i) / (G - 1) for i in range(G)]
        else:  # group_norm: zero advantages when all rewards are equal
            if all(x == rs[0] for x in rs):
                adv = [0.0] * G
            else:
                sd = statistics.pstdev(rs) if std == "population" else statistics.stdev(rs)
                adv = [(x - mean) / sd for x in rs]
        g = [0.0] * K
        for i, a in enumerate(answers):
            for k in range(K):
                g[k] += adv[i] * ((1.0 if k == a else 0.0) - pi[k]) / G
        outcomes.append((prob, g))
    mu = [sum(p * g[k] for p, g in outcomes) for k in range(K)]
    cov = [[sum(p * (g[k] - mu[k]) * (g[j] - mu[j]) for p, g in outcomes) for j in range(K)] for k in range(K)]
    return np.array(mu), np.array(cov)


def as_float(x) -> np.ndarray:
    return np.array(x, dtype=float)


# ---------------------------------------------------------------------------------------------------------------
# the policy, its score and the exact gradient


def test_softmax_is_stable_and_matches_the_rational_policy() -> None:
    np.testing.assert_allclose(softmax_policy(THETA), as_float(PI_Q), rtol=0, atol=1e-15)
    big = softmax_policy([1000.0, 999.0, -1000.0])
    assert np.all(np.isfinite(big)) and math.isclose(big.sum(), 1.0)
    assert math.isclose(expected_reward(THETA, REWARDS), float(sum(p * r for p, r in zip(PI_Q, R_Q, strict=True))))


def test_score_function_and_policy_gradient_equal_torch_autograd() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for _ in range(5):
        K = int(rng.integers(2, 7))
        theta = rng.normal(size=K) * 2
        r = rng.normal(size=K)
        t = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
        J = (torch.softmax(t, 0) * torch.tensor(r, dtype=torch.float64)).sum()
        (grad,) = torch.autograd.grad(J, t)
        np.testing.assert_allclose(policy_gradient(theta, r), grad.numpy(), rtol=1e-12, atol=1e-14)
        scores = score_function(theta)
        for a in range(K):
            t2 = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
            (sa,) = torch.autograd.grad(torch.log_softmax(t2, 0)[a], t2)
            np.testing.assert_allclose(scores[a], sa.numpy(), rtol=1e-12, atol=1e-14)


def test_policy_gradient_is_the_sum_over_answers() -> None:
    exact = [sum(PI_Q[a] * R_Q[a] * score_q(a)[k] for a in range(4)) for k in range(4)]
    np.testing.assert_allclose(policy_gradient(THETA, REWARDS), as_float(exact), rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------------------------------------------
# single-sample baselines


@pytest.mark.parametrize("estimator", SINGLE_ESTIMATORS)
def test_single_sample_moments_equal_exact_fraction_sums(estimator: str) -> None:
    b = baselines_q()[estimator]
    mean, cov = exact_moments_q(b)
    for samples in (1, 3):
        m = baseline_moments(THETA, REWARDS, estimator, b=float(B_CONST), samples=samples)
        np.testing.assert_allclose(m.mean, as_float(mean), rtol=0, atol=1e-14)
        np.testing.assert_allclose(m.covariance, as_float(cov) / samples, rtol=0, atol=1e-14)
        np.testing.assert_allclose(m.variance, np.diag(as_float(cov)) / samples, rtol=0, atol=1e-14)
        assert math.isclose(m.total_variance, float(sum(cov[k][k] for k in range(4))) / samples, abs_tol=1e-14)
    # every baseline leaves the mean at the true gradient, exactly
    true = [sum(PI_Q[a] * R_Q[a] * score_q(a)[k] for a in range(4)) for k in range(4)]
    assert mean == true


def test_optimal_baseline_is_the_fraction_and_minimises_the_trace() -> None:
    bq = baselines_q()
    assert math.isclose(optimal_baseline(THETA, REWARDS), float(bq["optimal"]), rel_tol=1e-13)
    assert bq["optimal"] != bq["mean"]  # not the mean reward in general
    grid = np.linspace(-1, 2, 3001)  # brute force over b: the trace of the fraction covariance

    def trace(b: float) -> float:
        _, cov = exact_moments_q(Fraction(b).limit_denominator(10**6))
        return float(sum(cov[k][k] for k in range(4)))

    traces = np.array([trace(b) for b in grid[::10]])
    b_grid = grid[::10][traces.argmin()]
    assert abs(b_grid - float(bq["optimal"])) <= 0.01
    traces_by = {e: baseline_moments(THETA, REWARDS, e, b=float(B_CONST)).total_variance for e in SINGLE_ESTIMATORS}
    assert traces_by["optimal"] <= min(traces_by.values()) + 1e-15
    assert traces_by["none"] > traces_by["mean"] > traces_by["optimal"]


def test_baseline_contribution_is_exactly_zero() -> None:
    for b in (Fraction(1), Fraction(-7, 3), Fraction(1000)):
        total = [sum(PI_Q[a] * b * score_q(a)[k] for a in range(4)) for k in range(4)]
        assert total == [0, 0, 0, 0]  # exactly, in fractions
        got = baseline_contribution(THETA, float(b))
        assert np.all(np.abs(got) <= 1e-15 * max(1.0, abs(float(b))) * 4)


# ---------------------------------------------------------------------------------------------------------------
# group baselines


def test_count_vectors_cover_every_multiset_once() -> None:
    counts = group_count_vectors(3, 4)
    assert counts.shape == (math.comb(6, 2), 3)
    assert np.all(counts.sum(axis=1) == 4)
    assert len({tuple(c) for c in counts}) == counts.shape[0]


@pytest.mark.parametrize(("K", "G"), [(3, 4), (4, 3)])
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_group_moments_equal_enumeration_of_ordered_groups(K: int, G: int, estimator: str) -> None:
    rng = np.random.default_rng(K * 10 + G)
    theta = rng.normal(size=K)
    r = np.array([1.0, 0.0, 0.5, 0.25][:K])
    pi = softmax_policy(theta)
    b = {"none": 0.0, "constant": 0.4, "mean": float(pi @ r), "optimal": optimal_baseline(theta, r)}.get(estimator, 0)
    mu, cov = group_reference(list(pi), list(r), estimator, G, b=b)
    got = group_moments(theta, r, estimator, G, b=0.4)
    np.testing.assert_allclose(got.mean, mu, rtol=0, atol=1e-13)
    np.testing.assert_allclose(got.covariance, cov, rtol=0, atol=1e-13)
    via = estimator_moments(theta, r, estimator, G, b=0.4)  # closed form for the single-sample ones
    np.testing.assert_allclose(via.covariance, cov, rtol=0, atol=1e-13)


def test_group_norm_sample_std_by_enumeration() -> None:
    theta, r = np.array([0.2, -0.1, 0.4]), np.array([1.0, 0.3, 0.0])
    mu, cov = group_reference(list(softmax_policy(theta)), list(r), "group_norm", 3, std="sample")
    got = group_moments(theta, r, "group_norm", 3, std="sample")
    np.testing.assert_allclose(got.mean, mu, atol=1e-13)
    np.testing.assert_allclose(got.covariance, cov, atol=1e-13)


@pytest.mark.parametrize("G", [2, 3, 4])
def test_group_mean_is_g_minus_one_over_g_and_rloo_is_unbiased_exactly(G: int) -> None:
    pi, r, K = PI_Q, R_Q, 4
    true = [sum(pi[a] * r[a] * score_q(a)[k] for a in range(K)) for k in range(K)]
    mean_gm = [Fraction(0)] * K
    mean_loo = [Fraction(0)] * K
    for answers in itertools.product(range(K), repeat=G):
        prob = math.prod(pi[a] for a in answers)
        rs = [r[a] for a in answers]
        mbar = sum(rs) / G
        for i, a in enumerate(answers):
            loo = sum(rs[j] for j in range(G) if j != i) / (G - 1)
            for k in range(K):
                mean_gm[k] += prob * (rs[i] - mbar) * score_q(a)[k] / G
                mean_loo[k] += prob * (rs[i] - loo) * score_q(a)[k] / G
    assert mean_gm == [Fraction(G - 1, G) * t for t in true]  # exactly (G-1)/G of the true gradient
    assert mean_loo == true  # exactly unbiased
    assert group_mean_factor(G) == (G - 1) / G
    np.testing.assert_allclose(expected_gradient(THETA, REWARDS, "group_mean", G), as_float(mean_gm), atol=1e-15)
    np.testing.assert_allclose(expected_gradient(THETA, REWARDS, "leave_one_out", G), as_float(true), atol=1e-15)
    np.testing.assert_allclose(group_moments(THETA, REWARDS, "group_mean", G).mean, as_float(mean_gm), atol=1e-15)


def test_group_norm_is_biased_and_turns_with_three_reward_values() -> None:
    theta, r, G = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.2, 0.0]), 4
    mu, _ = group_reference(list(softmax_policy(theta)), list(r), "group_norm", G)
    true = policy_gradient(theta, r)
    np.testing.assert_allclose(expected_gradient(theta, r, "group_norm", G), mu, atol=1e-13)
    cosine, scale = alignment(mu, true)
    assert cosine < 1 - 1e-4  # not parallel to the true gradient
    assert abs(scale - (G - 1) / G) > 0.1 and abs(scale - 1) > 0.1


@pytest.mark.parametrize("std", ["population", "sample"])
def test_group_norm_with_two_reward_values_is_parallel_with_a_difficulty_factor(std: str) -> None:
    theta, r, G = np.array([0.3, -0.2, 0.5, 0.1]), np.array([1.0, 0.0, 0.0, 1.0]), 5
    pi = softmax_policy(theta)
    mu, _ = group_reference(list(pi), list(r), "group_norm", G, std=std)
    cosine, scale = alignment(mu, policy_gradient(theta, r))
    assert math.isclose(cosine, 1.0, abs_tol=1e-12)
    assert math.isclose(scale, group_norm_scale_binary(float(pi @ r), G, std), rel_tol=1e-12)
    # the factor depends on the success rate: in a large group, rare successes are weighted up (about
    # 1/sqrt(p (1-p)) while G p >> 1; sqrt(G-1) at most, reached as p -> 0 or 1)
    assert group_norm_scale_binary(0.05, 16) > group_norm_scale_binary(0.5, 16) * 1.5
    assert math.isclose(group_norm_scale_binary(1e-9, 16), math.sqrt(15), rel_tol=1e-6)


# ---------------------------------------------------------------------------------------------------------------
# seeded simulation


def test_simulation_matches_exact_moments_within_standard_errors() -> None:
    G, draws = 4, 40_000
    sims = simulate_estimators(THETA, REWARDS, ESTIMATORS, G=G, draws=draws, seed=7, b=0.4)
    for e, sim in sims.items():
        exact = estimator_moments(THETA, REWARDS, e, G, b=0.4)
        x = sim.samples
        se_mean = x.std(axis=0, ddof=1) / math.sqrt(draws)
        assert np.all(np.abs(x.mean(axis=0) - exact.mean) <= 5 * se_mean + 1e-12), e
        dev2 = (x - x.mean(axis=0)) ** 2  # the variance's own standard error from the draws
        se_var = dev2.std(axis=0, ddof=1) / math.sqrt(draws)
        assert np.all(np.abs(sim.variance - exact.variance) <= 5 * se_var + 1e-12), e
        np.testing.assert_allclose(sim.standard_error, se_mean, rtol=1e-12)
    again = simulate_estimators(THETA, REWARDS, ("none",), G=G, draws=100, seed=7)
    np.testing.assert_array_equal(
        again["none"].samples, simulate_estimators(THETA, REWARDS, ("none",), G, 100, 7)["none"].samples
    )


# ---------------------------------------------------------------------------------------------------------------
# learning runs


def test_expected_learning_curves() -> None:
    lc = learning_curves(THETA, REWARDS, ESTIMATORS, steps=40, lr=0.5, G=4, mode="expected")
    J = lc.expected_reward
    assert lc.steps.tolist() == list(range(41))
    assert all(np.all(np.diff(J[e]) > 0) for e in ESTIMATORS)  # small steps up the true gradient
    for e in SINGLE_ESTIMATORS:  # every fixed baseline has the same expected gradient
        np.testing.assert_allclose(J[e], J["none"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(J["leave_one_out"], J["none"], rtol=0, atol=1e-15)
    assert J["group_mean"][-1] < J["none"][-1]  # the (G-1)/G shrink is a smaller step
    # one step by hand
    theta1 = THETA + 0.5 * 0.75 * policy_gradient(THETA, REWARDS)
    assert math.isclose(J["group_mean"][1], expected_reward(theta1, REWARDS), rel_tol=1e-14)
    np.testing.assert_allclose(lc.policy["none"].sum(axis=1), 1.0)


def test_sampled_learning_curves_follow_the_expected_ones_on_average() -> None:
    kw = {"steps": 30, "lr": 0.5, "G": 4}
    sampled = learning_curves(THETA, REWARDS, ("none", "leave_one_out"), mode="sampled", runs=400, seed=1, **kw)
    exact = learning_curves(THETA, REWARDS, ("none", "leave_one_out"), mode="expected", **kw)
    for e in ("none", "leave_one_out"):
        se = sampled.reward_spread[e] / math.sqrt(400)
        # the mean of J over noisy runs is not J of the mean step (J is not linear), so allow the curvature too
        assert np.all(np.abs(sampled.expected_reward[e] - exact.expected_reward[e]) <= 5 * se + 0.02)
    assert sampled.reward_spread["leave_one_out"][10] < sampled.reward_spread["none"][10]
    again = learning_curves(THETA, REWARDS, ("none", "leave_one_out"), mode="sampled", runs=400, seed=1, **kw)
    np.testing.assert_array_equal(again.expected_reward["none"], sampled.expected_reward["none"])


# ---------------------------------------------------------------------------------------------------------------
# bad input and the cold import


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: policy_gradient([1.0], [1.0]), "K >= 2"),
        (lambda: policy_gradient([0.0, 1.0], [1.0, 2.0, 3.0]), "one reward per answer"),
        (lambda: policy_gradient([0.0, np.nan], [1.0, 2.0]), "finite"),
        (lambda: estimator_moments(THETA, REWARDS, "nope"), "estimator must be one of"),
        (lambda: estimator_moments(THETA, REWARDS, "group_mean", G=1), "G >= 2"),
        (lambda: group_moments(THETA, REWARDS, "group_norm", 4, std="bessel"), "std must be one of"),
        (lambda: group_moments(THETA, REWARDS, "group_norm", 4, eps=-1.0), "eps must be >= 0"),
        (lambda: group_count_vectors(20, 30), "terms"),
        (lambda: group_norm_scale_binary(0.0, 4), "strictly between"),
        (lambda: simulate_estimators(THETA, REWARDS, G=4, draws=10**6), "at most"),
        (lambda: learning_curves(THETA, REWARDS, mode="other"), "mode must be"),
        (lambda: alignment([1.0, 0.0], [0.0, 0.0]), "zero"),
    ],
)
def test_bad_input_is_refused(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_group_estimators_listed() -> None:
    assert set(GROUP_ESTIMATORS) | set(SINGLE_ESTIMATORS) == set(ESTIMATORS)


def test_import_leaves_torch_out() -> None:
    code = "import sys, core.policy_gradient, core.test_time_compute; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
