"""core.kl_leash and core.dpo: the lesson's numbers, independent references, extreme inputs, properties."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special, stats

from core import kl_leash
from core.device import get_device
from core.dpo import DPO_PRESETS, LOG2, dpo_curve, dpo_loss
from core.kl_leash import (
    LEASH_PRESETS,
    beta_grid,
    entropy,
    kl_divergence,
    kl_regularized_policy,
    leash_sweep,
    normalize_reference,
    objective,
    random_policies,
)

# --------------------------------------------------------------------------------------------------------------
# the lesson's numbers (shared/notes/lesson-numbers.md)


def test_toy_beta_1_gives_0731_0269():
    pi = kl_regularized_policy([0.5, 0.5], [1.0, 0.0], 1.0)
    assert np.round(pi, 3).tolist() == [0.731, 0.269]


def test_quick_check_halving_beta_gives_0881():
    pi = kl_regularized_policy([0.5, 0.5], [1.0, 0.0], 0.5)
    assert round(float(pi[0]), 3) == 0.881


def test_small_beta_puts_all_mass_on_the_best_answer_and_large_beta_returns_pi_ref():
    pi_ref, r = [0.2, 0.5, 0.3], [0.3, -1.0, 0.9]
    pi = kl_regularized_policy(pi_ref, r, 1e-3)
    assert pi[2] == 1.0 and pi[0] < 1e-250 and pi[1] == 0.0  # exp(-600) and exp(-1900): underflow to 0
    np.testing.assert_allclose(kl_regularized_policy(pi_ref, r, 1e3), pi_ref, atol=2e-3)
    np.testing.assert_allclose(kl_regularized_policy(pi_ref, r, 1e9), pi_ref, atol=1e-8)


def test_maximum_of_the_objective_is_beta_log_Z_in_the_toy():
    s = leash_sweep([0.5, 0.5], [1.0, 0.0], [1.0])
    log_Z = math.log(0.5 * math.e + 0.5)
    assert s.beta_log_Z[0] == pytest.approx(log_Z, rel=1e-12)
    assert s.objective[0] == pytest.approx(log_Z, rel=1e-12)
    assert round(float(s.beta_log_Z[0]), 3) == 0.620
    # the readouts: KL = 0.731 log(1.462) + 0.269 log(0.538), H = -sum pi log pi
    assert s.kl[0] == pytest.approx(stats.entropy([0.7310585786, 0.2689414214], [0.5, 0.5]), rel=1e-9)
    assert s.entropy[0] == pytest.approx(stats.entropy([0.7310585786, 0.2689414214]), rel=1e-9)


def test_dpo_worked_example_b():
    out = dpo_loss(logp_w=-10, logp_l=-15, ref_logp_w=-12, ref_logp_l=-14, beta=0.1)
    assert out.reward_w == pytest.approx(0.2)
    assert out.reward_l == pytest.approx(-0.1)
    assert out.margin == pytest.approx(0.3)
    assert round(out.loss, 3) == 0.554
    assert round(out.weight, 3) == 0.426
    assert out.both_fell is False
    p = DPO_PRESETS["worked_b"]
    assert dpo_loss(p.logp_w, p.logp_l, p.ref_logp_w, p.ref_logp_l, p.beta) == out


def test_dpo_at_the_reference_the_loss_is_log_2():
    out = dpo_loss(-7.5, -3.25, -7.5, -3.25, 0.3)
    assert out.margin == 0.0
    assert out.loss == pytest.approx(math.log(2), rel=1e-15) and LOG2 == pytest.approx(math.log(2))
    assert out.weight == 0.5


# --------------------------------------------------------------------------------------------------------------
# independent references


@pytest.mark.parametrize("beta", [1e-3, 0.07, 1.0, 13.0, 1e3])
def test_policy_matches_scipy_softmax(beta):
    rng = np.random.default_rng(1)
    pi_ref = rng.dirichlet(np.ones(7))
    r = rng.normal(size=7) * 3
    expected = special.softmax(np.log(pi_ref) + r / beta)
    np.testing.assert_allclose(kl_regularized_policy(pi_ref, r, beta), expected, rtol=1e-10, atol=1e-300)


def test_kl_and_entropy_match_scipy():
    rng = np.random.default_rng(2)
    p, q = rng.dirichlet(np.ones(6), size=4), rng.dirichlet(np.ones(6), size=4)
    np.testing.assert_allclose(kl_divergence(p, q), stats.entropy(p, q, axis=-1), rtol=1e-12)
    np.testing.assert_allclose(entropy(p), stats.entropy(p, axis=-1), rtol=1e-12)
    assert kl_divergence([0.0, 1.0], [0.5, 0.5]) == pytest.approx(math.log(2))
    assert kl_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf
    assert kl_divergence([0.3, 0.7], [0.3, 0.7]) == 0.0


def test_brute_force_grid_on_two_answers_finds_pi_star():
    pi_ref, r, beta = np.array([0.3, 0.7]), np.array([0.8, -0.4]), 0.6
    a = np.linspace(0.0, 1.0, 200_001)
    grid = np.stack([a, 1 - a], axis=-1)
    J = objective(grid, pi_ref, r, beta)
    best = int(np.argmax(J))
    s = leash_sweep(pi_ref, r, [beta])
    assert J[best] == pytest.approx(s.beta_log_Z[0], abs=1e-9)
    assert J[best] <= s.beta_log_Z[0] + 1e-12
    assert a[best] == pytest.approx(s.pi[0, 0], abs=1e-5)


@pytest.mark.parametrize("key", sorted(LEASH_PRESETS))
def test_numeric_optimiser_on_the_simplex_agrees_with_the_theorem(key):
    p = LEASH_PRESETS[key]
    pi_ref, r, beta = np.array(p.pi_ref), np.array(p.r), p.beta

    def neg_J(z):  # softmax parametrisation of the simplex
        pi = special.softmax(z)
        return -(pi @ r - beta * np.sum(pi * (np.log(pi) - np.log(pi_ref))))

    res = optimize.minimize(neg_J, np.zeros(len(r)), method="BFGS", options={"gtol": 1e-10})
    s = leash_sweep(pi_ref, r, [beta])
    assert -res.fun == pytest.approx(s.beta_log_Z[0], abs=1e-8)
    np.testing.assert_allclose(special.softmax(res.x), s.pi[0], atol=1e-4)


def test_dpo_matches_torch_logsigmoid_and_autograd():
    rng = np.random.default_rng(3)
    lw, ll, rw, rl = (-rng.uniform(1, 60, size=50) for _ in range(4))
    beta = 0.05
    out = dpo_loss(lw, ll, rw, rl, beta)
    tw = torch.tensor(lw, requires_grad=True)
    tl = torch.tensor(ll, requires_grad=True)
    margin = beta * (tw - torch.tensor(rw)) - beta * (tl - torch.tensor(rl))
    loss = -torch.nn.functional.logsigmoid(margin)
    loss.sum().backward()
    np.testing.assert_allclose(out.loss, loss.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(out.grad_logp_w, tw.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(out.grad_logp_l, tl.grad.numpy(), rtol=1e-12)
    # the gradient weight is sigma(r_hat_l - r_hat_w) and the gradients are -/+ beta times it
    np.testing.assert_allclose(out.weight, special.expit(out.reward_l - out.reward_w), rtol=1e-12)
    np.testing.assert_allclose(out.grad_logp_w, -beta * out.weight, rtol=1e-15)


def test_dpo_gradient_weight_is_a_finite_difference_derivative():
    p = DPO_PRESETS["worked_b"]
    h = 1e-6

    def loss(lw, ll):
        return dpo_loss(lw, ll, p.ref_logp_w, p.ref_logp_l, p.beta).loss

    out = dpo_loss(p.logp_w, p.logp_l, p.ref_logp_w, p.ref_logp_l, p.beta)
    d_w = (loss(p.logp_w + h, p.logp_l) - loss(p.logp_w - h, p.logp_l)) / (2 * h)
    d_l = (loss(p.logp_w, p.logp_l + h) - loss(p.logp_w, p.logp_l - h)) / (2 * h)
    assert d_w == pytest.approx(-p.beta * out.weight, rel=1e-7)
    assert d_l == pytest.approx(p.beta * out.weight, rel=1e-7)
    assert d_w == pytest.approx(out.grad_logp_w, rel=1e-7)


# --------------------------------------------------------------------------------------------------------------
# the theorem, by Monte Carlo on the device


@pytest.mark.parametrize("key", sorted(LEASH_PRESETS))
@pytest.mark.parametrize("beta", [1e-3, 0.2, 1.0, 50.0])
def test_no_random_policy_beats_pi_star(key, beta):
    p = LEASH_PRESETS[key]
    cloud = random_policies(p.pi_ref, p.r, beta, n=5000, seed=7)
    assert cloud.n_better == 0
    assert np.all(cloud.objective <= cloud.optimum + cloud.tolerance)
    assert cloud.best_objective == pytest.approx(cloud.objective.max())
    np.testing.assert_allclose(cloud.objective, cloud.reward - beta * cloud.kl, rtol=1e-9, atol=1e-9)
    # J(pi) = beta log Z - beta KL(pi || pi*): the gap of the best draw is its KL to pi*, times beta
    pi_star = kl_regularized_policy(p.pi_ref, p.r, beta)
    gap = beta * kl_divergence(cloud.best / cloud.best.sum(), pi_star)
    assert cloud.optimum - cloud.best_objective == pytest.approx(gap, abs=1e-9 * (1 + abs(cloud.optimum)))
    assert cloud.device == str(get_device())
    assert np.all(np.isfinite(cloud.kl)) and np.all(cloud.kl >= 0)


def test_random_policies_respect_zeros_and_are_reproducible():
    pi_ref, r = [0.0, 0.5, 0.0, 0.5], [1e3, 0.0, 5.0, 1.0]
    a = random_policies(pi_ref, r, 0.5, n=2000, seed=3)
    b = random_policies(pi_ref, r, 0.5, n=2000, seed=3)
    np.testing.assert_array_equal(a.objective, b.objective)
    assert a.best[0] == 0.0 and a.best[2] == 0.0
    assert np.all(np.isfinite(a.objective))
    assert a.n_better == 0
    c = random_policies(pi_ref, r, 0.5, n=2000, seed=4)
    assert not np.array_equal(a.objective, c.objective)


def test_random_policies_cover_the_simplex():
    cloud = random_policies([0.25] * 4, [0.0, 1.0, 2.0, 3.0], 1.0, n=20_000)
    assert cloud.kl.shape == (20_000,)
    assert cloud.kl.min() < 1e-3 and cloud.kl.max() > 0.9 * math.log(4)  # from pi_ref to near a corner
    assert cloud.reward.min() < 0.2 and cloud.reward.max() > 2.8


# --------------------------------------------------------------------------------------------------------------
# extreme inputs


def test_extreme_beta_and_rewards_with_zeros_and_ten_answers():
    pi_ref = np.array([0.0, 0.1, 0.0, 0.2, 0.05, 0.0, 0.3, 0.15, 0.1, 0.1])
    r = np.array([1e3, -1e3, 999.0, 998.0, 1e3, 0.0, -500.0, 1e3, 3.0, -2.0])
    for beta in (1e-3, 1.0, 1e3):
        pi = kl_regularized_policy(pi_ref, r, beta)
        assert np.all(np.isfinite(pi)) and np.all(pi >= 0)
        assert pi.sum() == pytest.approx(1.0, abs=1e-12)
        assert pi[0] == 0.0 and pi[2] == 0.0 and pi[5] == 0.0  # exactly zero where pi_ref is zero
    pi = kl_regularized_policy(pi_ref, r, 1e-3)
    # the top reward 1e3 is shared by answers 4 and 7 (answer 0 has pi_ref = 0): split as their pi_ref
    np.testing.assert_allclose(pi[[4, 7]], [0.25, 0.75], rtol=1e-12)
    s = leash_sweep(pi_ref, r, beta_grid())
    for name in ("pi", "kl", "reward", "objective", "beta_log_Z", "entropy"):
        assert np.all(np.isfinite(getattr(s, name))), name
    np.testing.assert_allclose(s.pi.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(s.objective, s.beta_log_Z, rtol=1e-10, atol=1e-9)


def test_vectorised_over_betas_and_batches():
    betas = np.array([0.5, 1.0, 2.0])
    pi = kl_regularized_policy([0.5, 0.5], [1.0, 0.0], betas)
    assert pi.shape == (3, 2)
    np.testing.assert_allclose(pi[1], [0.7310585786, 0.2689414214], rtol=1e-9)
    batch = kl_regularized_policy([[0.5, 0.5], [0.9, 0.1]], [[1.0, 0.0], [0.0, 1.0]], 1.0)
    assert batch.shape == (2, 2)
    np.testing.assert_allclose(batch[1], special.softmax(np.log([0.9, 0.1]) + np.array([0.0, 1.0])))
    grid = kl_regularized_policy([0.5, 0.5], [1.0, 0.0], betas[:, None] * np.ones((1, 4)))
    assert grid.shape == (3, 4, 2)


def test_reference_normalisation_flag():
    ref = normalize_reference([0.5, 0.5])
    assert ref.renormalised is False and ref.total == 1.0
    ref = normalize_reference([1, 1, 2])
    assert ref.renormalised is True and ref.total == 4.0
    np.testing.assert_allclose(ref.pi_ref, [0.25, 0.25, 0.5])
    s = leash_sweep([2.0, 2.0], [1.0, 0.0], [1.0])
    assert s.renormalised is True
    np.testing.assert_allclose(s.pi[0], [0.7310585786, 0.2689414214], rtol=1e-9)
    batch = normalize_reference([[0.5, 0.5], [1.0, 2.0]])
    assert batch.renormalised.tolist() == [False, True]


@pytest.mark.parametrize(
    ("pi_ref", "r", "beta", "match"),
    [
        ([], [], 1.0, "empty"),
        ([0.0, 0.0], [1.0, 0.0], 1.0, "all zeros"),
        ([-0.1, 1.1], [1.0, 0.0], 1.0, "negative"),
        (["a", 0.5], [1.0, 0.0], 1.0, "numbers"),
        ([np.nan, 0.5], [1.0, 0.0], 1.0, "finite"),
        (0.5, [1.0], 1.0, "list of probabilities"),
        ([0.5, 0.5], [1.0], 1.0, "one reward per answer"),
        ([0.5, 0.5], [1.0, np.inf], 1.0, "finite"),
        ([0.5, 0.5], [1.0, 0.0], 0.0, "positive"),
        ([0.5, 0.5], [1.0, 0.0], -1.0, "positive"),
        ([0.5, 0.5], [1.0, 0.0], np.nan, "finite"),
        ([0.5, 0.5], [1.0, 0.0], "x", "numbers"),
    ],
)
def test_bad_input_raises_a_clear_value_error(pi_ref, r, beta, match):
    with pytest.raises(ValueError, match=match):
        kl_regularized_policy(pi_ref, r, beta)
    with pytest.raises(ValueError, match=match):
        leash_sweep(pi_ref, r, [beta], r)


def test_huge_reward_gaps_do_not_overflow():
    s = leash_sweep([0.5, 0.5], [1e308, -1e308], [1e-3, 1.0, 1e3])
    np.testing.assert_array_equal(s.pi, [[1.0, 0.0]] * 3)
    np.testing.assert_allclose(s.kl, math.log(2))
    assert np.all(np.isfinite(s.beta_log_Z)) and np.all(np.isfinite(s.objective))


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="sum to 1"):
        kl_divergence([0.5, 0.6], [0.5, 0.5])
    with pytest.raises(ValueError, match="negative"):
        kl_divergence([0.5, 0.5], [1.5, -0.5])
    with pytest.raises(ValueError, match="r_true"):
        leash_sweep([0.5, 0.5], [1.0, 0.0], [1.0], r_true=[1.0])
    with pytest.raises(ValueError, match="positive whole number"):
        random_policies([0.5, 0.5], [1.0, 0.0], 1.0, n=0)
    with pytest.raises(ValueError, match="at least 2"):
        beta_grid(1)
    with pytest.raises(ValueError, match="lo < hi"):
        beta_grid(10, 1.0, 0.5)


# --------------------------------------------------------------------------------------------------------------
# the sweep helpers and the presets


def test_beta_grid():
    g = beta_grid()
    assert g.shape == (121,) and g[0] == pytest.approx(1e-3) and g[-1] == pytest.approx(1e3)
    np.testing.assert_allclose(np.diff(np.log10(g)), 0.05)
    g2 = beta_grid(include=0.5)
    assert 0.5 in g2 and np.all(np.diff(g2) > 0) and g2.shape == (122,)
    assert beta_grid(include=1.0).shape == (121,)  # 1 is already a grid point: no duplicate step
    assert beta_grid(61).shape == (61,)


def test_sweep_index_and_monotone_readouts():
    s = leash_sweep([0.1, 0.6, 0.3], [2.0, 0.0, 1.0], beta_grid(include=0.5))
    assert s.beta[s.index(0.5)] == 0.5
    assert s.index(1e-9) == 0 and s.index(1e9) == len(s.beta) - 1
    # as beta grows the leash shortens (its length is 1/beta): KL and E[r] fall, entropy moves back towards pi_ref's
    assert np.all(np.diff(s.kl) <= 1e-12)
    assert np.all(np.diff(s.reward) <= 1e-12)
    assert s.kl[0] == pytest.approx(-math.log(0.1), rel=1e-9)  # all mass on answer 0: KL = -log pi_ref(0)
    assert s.entropy[-1] == pytest.approx(stats.entropy([0.1, 0.6, 0.3]), rel=1e-3)


def test_reward_hack_preset_rises_then_falls():
    p = LEASH_PRESETS["reward_hack"]
    s = leash_sweep(p.pi_ref, p.r, beta_grid(), p.r_true)
    i = s.true_peak
    assert 0 < i < len(s.beta) - 1
    assert s.true_reward[i] > s.true_reward[-1] + 0.2  # rises from pi_ref ...
    assert s.true_reward[0] < 0 < s.true_reward[i]  # ... then falls below zero as beta -> 0
    assert s.reward[0] == pytest.approx(2.0, abs=1e-9)  # the proxy says all is well
    assert s.kl[0] == pytest.approx(math.log(1000), rel=1e-6)  # all mass on an answer with pi_ref = 0.001
    # pi* prefers the exploit to the helpful answer once exp(1 / beta) > 0.3 / 0.001, i.e. beta < 1 / log 300
    b_star = 1 / math.log(300)
    below = kl_regularized_policy(p.pi_ref, p.r, b_star * 0.99)
    above = kl_regularized_policy(p.pi_ref, p.r, b_star * 1.01)
    assert below[3] > below[0] and above[3] < above[0]


def test_presets_are_valid():
    for p in LEASH_PRESETS.values():
        assert len(p.answers) == len(p.pi_ref) == len(p.r) == len(p.r_true)
        assert 2 <= len(p.answers) <= 10 and 1e-3 <= p.beta <= 1e3
        assert sum(p.pi_ref) == pytest.approx(1.0)
    toy = LEASH_PRESETS["toy"]
    assert (toy.pi_ref, toy.r, toy.beta) == ((0.5, 0.5), (1.0, 0.0), 1.0)
    fell = DPO_PRESETS["both_fell"]
    out = dpo_loss(fell.logp_w, fell.logp_l, fell.ref_logp_w, fell.ref_logp_l, fell.beta)
    assert out.both_fell is True and out.margin > 0


# --------------------------------------------------------------------------------------------------------------
# DPO: batches, extremes, bad input


def test_dpo_broadcasts_and_is_stable_in_both_tails():
    out = dpo_loss([-1.0, -500.0, -1.0], [-500.0, -1.0, -1.0], -1.0, -1.0, [10.0])
    assert out.loss.shape == (3,) and out.both_fell.shape == (3,)
    assert out.loss[0] == pytest.approx(0.0, abs=1e-300)  # margin +4990: no overflow
    assert out.loss[1] == pytest.approx(4990.0)  # margin -4990: -log sigma(m) = -m
    assert out.weight[1] == 1.0 and out.weight[0] == pytest.approx(0.0, abs=1e-300)
    assert out.loss[2] == pytest.approx(LOG2)
    assert np.all(np.isfinite(out.loss)) and np.all(np.isfinite(out.weight))


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1.0, -1.0, -1.0, -1.0, 0.1), "<= 0"),
        ((np.nan, -1.0, -1.0, -1.0, 0.1), "finite"),
        (("x", -1.0, -1.0, -1.0, 0.1), "number"),
        ((-1.0, -1.0, -1.0, -1.0, 0.0), "positive"),
        ((-1.0, -1.0, -1.0, -1.0, "b"), "positive"),
    ],
)
def test_dpo_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        dpo_loss(*args)


def test_dpo_curve():
    c = dpo_curve(0.3)
    assert c.margin[0] == -6.0 and c.margin[-1] == 6.0 and len(c.margin) == 401
    i0 = int(np.argmin(np.abs(c.margin)))
    assert c.loss[i0] == pytest.approx(LOG2) and c.weight[i0] == pytest.approx(0.5)
    np.testing.assert_allclose(c.loss, -np.log(special.expit(c.margin)), rtol=1e-12)
    assert dpo_curve(-20.0).margin[0] == -25.0  # wide enough to show the pair
    with pytest.raises(ValueError):
        dpo_curve(np.inf)


# --------------------------------------------------------------------------------------------------------------
# properties


@st.composite
def leash_inputs(draw):
    K = draw(st.integers(1, 10))
    pi_ref = np.array(draw(st.lists(st.floats(0, 1), min_size=K, max_size=K)))
    if pi_ref.sum() == 0:
        pi_ref[draw(st.integers(0, K - 1))] = 1.0
    r = np.array(draw(st.lists(st.floats(-1e3, 1e3), min_size=K, max_size=K)))
    beta = draw(st.floats(1e-3, 1e3))
    return pi_ref, r, beta


@settings(max_examples=150, deadline=None)
@given(leash_inputs())
def test_property_normalised_finite_zeros_kept_and_objective_equals_beta_log_Z(inp):
    pi_ref, r, beta = inp
    s = leash_sweep(pi_ref, r, [beta])
    pi = s.pi[0]
    assert np.all(np.isfinite(pi)) and np.all(pi >= 0)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(pi[pi_ref == 0] == 0)
    assert s.kl[0] >= 0 and np.isfinite(s.kl[0])
    assert s.entropy[0] >= 0
    # the theorem: E[r] - beta KL at pi* equals beta log Z (relative to the size of the terms)
    scale = 1 + np.max(np.abs(r)) + beta * s.kl[0]
    assert abs(s.objective[0] - s.beta_log_Z[0]) <= 1e-12 * scale
    # the objective at pi* is at least that of pi_ref (KL 0) and of the best single answer
    p = pi_ref / pi_ref.sum()
    assert s.beta_log_Z[0] >= p @ r - 1e-12 * scale
    support = p > 0  # (a subnormal pi_ref can vanish when rescaled)
    k = np.argmax(np.where(support, r, -np.inf))
    assert s.beta_log_Z[0] >= r[k] + beta * np.log(p[k]) - 1e-12 * scale


@settings(max_examples=60, deadline=None)
@given(leash_inputs())
def test_property_kl_and_reward_fall_as_beta_grows(inp):
    pi_ref, r, _ = inp
    s = leash_sweep(pi_ref, r, beta_grid(41))
    tol = 1e-9 * (1 + np.max(np.abs(r)))
    assert np.all(np.diff(s.kl) <= tol)
    assert np.all(np.diff(s.reward) <= tol)


@settings(max_examples=100, deadline=None)
@given(
    st.floats(-200, 0),
    st.floats(-200, 0),
    st.floats(-200, 0),
    st.floats(-200, 0),
    st.floats(1e-3, 10),
)
def test_property_dpo(lw, ll, rw, rl, beta):
    out = dpo_loss(lw, ll, rw, rl, beta)
    assert out.loss >= 0 and 0 <= out.weight <= 1
    assert out.margin == pytest.approx(out.reward_w - out.reward_l, abs=1e-12)
    # swapping winner and loser flips the margin; the two losses are softplus(-m) and softplus(m)
    swap = dpo_loss(ll, lw, rl, rw, beta)
    assert swap.margin == pytest.approx(-out.margin, abs=1e-12)
    assert out.loss - swap.loss == pytest.approx(-out.margin, abs=1e-9)
    assert out.weight + swap.weight == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------------------------------------------
# the page's helpers: beta choices, the takeover beta, answers typed as text, a sweep's point and table


def test_beta_choices_are_round_log_spaced_and_hold_the_quick_check():
    b = np.array(kl_leash.beta_choices())
    assert b[0] == kl_leash.BETA_MIN and b[-1] == kl_leash.BETA_MAX and len(b) == 61
    assert np.all(np.diff(b) > 0)
    assert {0.5, 1.0, 0.1, 2.0}.issubset(set(b.tolist()))
    ratios = b[1:] / b[:-1]
    assert ratios.max() <= 1.34 and ratios.min() >= 1.19  # at most a third apart: a smooth log slider
    assert all(float(f"{v:.3g}") == v for v in b)  # short labels: 0.00125, 0.5, 1000


def test_takeover_beta_toy_closed_form():
    # pi*(better) = e^{1/beta} / (e^{1/beta} + 1) = 0.9  <=>  beta = 1 / log 9
    t = kl_leash.takeover_beta([0.5, 0.5], [1.0, 0.0], 0.9)
    assert t.top == (0,)
    assert t.beta == pytest.approx(1 / math.log(9), rel=1e-12)
    pi = kl_regularized_policy([0.5, 0.5], [1.0, 0.0], t.beta)
    assert t.kl == pytest.approx(kl_divergence(pi, [0.5, 0.5]), rel=1e-9)


def test_takeover_beta_reward_hack_needs_a_small_beta_and_a_large_kl():
    p = LEASH_PRESETS["reward_hack"]
    t = kl_leash.takeover_beta(p.pi_ref, p.r, 0.9)
    assert p.answers[t.top[0]] == "exploit"
    # brute force: the largest beta of a fine grid where the exploit holds 90%
    grid = np.geomspace(1e-3, 1e3, 200_001)
    pi = kl_regularized_policy(p.pi_ref, p.r, grid)
    assert t.beta == pytest.approx(grid[pi[:, 3] >= 0.9].max(), rel=1e-4)
    assert round(t.beta, 3) == 0.126 and 5.9 < t.kl < 6.1  # about log(1000) = 6.9 nats would be all of it


def test_takeover_beta_edge_cases():
    assert math.isinf(kl_leash.takeover_beta([0.95, 0.05], [1.0, 0.0], 0.9).beta)  # pi_ref already gives 90%
    tied = kl_leash.takeover_beta([0.2, 0.3, 0.5], [1.0, 1.0, 0.0], 0.9)
    assert tied.top == (0, 1)
    pi = kl_regularized_policy([0.2, 0.3, 0.5], [1.0, 1.0, 0.0], tied.beta)
    assert pi[:2].sum() == pytest.approx(0.9, abs=1e-9)
    zero = kl_leash.takeover_beta([0.5, 0.5, 0.0], [0.0, 1.0, 5.0], 0.9)  # pi_ref = 0 never counts as the top
    assert zero.top == (1,)
    with pytest.raises(ValueError, match="share"):
        kl_leash.takeover_beta([0.5, 0.5], [1, 0], 1.0)


def test_answers_resize():
    toy = kl_leash.Answers.from_preset(LEASH_PRESETS["toy"])
    big = toy.resized(4)
    assert big.pi_ref == (0.5,) * 4 and big.r == (1.0, 0.0, 0.0, 0.0) and big.r_true == big.r
    assert big.names == ("better", "worse", "y3", "y4")
    hack = kl_leash.Answers.from_preset(LEASH_PRESETS["reward_hack"]).resized(2)
    assert hack.pi_ref == (0.3, 0.4) and hack.r_true == (1.0, 0.5) and not hack.proxy_gap
    with pytest.raises(ValueError, match="K must be between"):
        toy.resized(1)


def test_sweep_point_and_table():
    s = leash_sweep([0.5, 0.5], [1.0, 0.0], beta_grid(include=0.5))
    pt = s.at(0.5)
    assert pt.beta == 0.5 and round(pt.pi[0], 3) == 0.881
    assert pt.objective == pytest.approx(pt.beta_log_Z, abs=1e-12)
    assert pt.beta_log_Z == pytest.approx(0.5 * math.log(0.5 * math.e**2 + 0.5), rel=1e-12)
    table = s.table(["better", "worse"])
    assert list(table)[:3] == ["beta", "KL_nats", "E_r"] and "pi_star[worse]" in table
    assert all(len(col) == len(s.beta) for col in table.values())
    with pytest.raises(ValueError, match="names"):
        s.table(["one"])
