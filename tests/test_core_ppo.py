"""core.ppo: the clip against torch autograd, GAE against a plain loop and its two limits, the KL estimators
against exact sums and Gaussian closed forms, the memory count, and bad input."""

import math

import numpy as np
import pytest
import torch

from core.ppo import (
    BYTES_FROZEN,
    BYTES_TRAINED,
    CLIP_PRESETS,
    GAE_PRESETS,
    clip_active,
    clip_batch_stats,
    discounted_returns,
    gae,
    gae_bias_variance,
    kl_estimator_study,
    kl_estimators,
    kl_penalized_rewards,
    ppo_clip_curve,
    ppo_clip_gradient,
    ppo_clip_objective,
    rlhf_memory,
    td_errors,
    token_batch,
)
from core.training_memory import RECIPES

# --------------------------------------------------------------------------------------------------------------
# the clip


def _torch_objective_and_grad(rho, A, lo, hi):
    """The seed's formula written in torch (min and clamp), differentiated by autograd."""
    r = torch.tensor(rho, dtype=torch.float64, requires_grad=True)
    a = torch.tensor(A, dtype=torch.float64)
    obj = torch.min(r * a, r.clamp(1 - lo, 1 + hi) * a)
    obj.sum().backward()
    return obj.detach().numpy(), r.grad.numpy()


@pytest.mark.parametrize(("lo", "hi"), [(0.2, 0.2), (0.2, 0.28), (0.1, 0.5)])
def test_clip_objective_and_gradient_match_torch_autograd_away_from_the_kinks(lo, hi):
    rng = np.random.default_rng(1)
    rho = np.exp(0.4 * rng.standard_normal(5000))
    A = rng.standard_normal(5000)
    A[:50] = 0.0
    keep = (np.abs(rho - (1 - lo)) > 1e-9) & (np.abs(rho - (1 + hi)) > 1e-9)
    rho, A = rho[keep], A[keep]
    obj_t, grad_t = _torch_objective_and_grad(rho, A, lo, hi)
    np.testing.assert_allclose(ppo_clip_objective(rho, A, lo, hi), obj_t, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(ppo_clip_gradient(rho, A, lo, hi), grad_t)
    # the clip zeroed some gradients of both signs, and only there
    cl = clip_active(rho, A, lo, hi)
    assert cl.sum() > 100 and np.all(grad_t[cl] == 0) and np.all(grad_t[~cl] == A[~cl])


def test_presets_answer_the_seeds_question():
    # 002 A6.6.2: past 1 + eps in the improving direction the gradient is exactly 0; with A < 0 it is the full A
    expected = {"inside": 1.0, "above_pos": 0.0, "above_neg": -1.0, "below_neg": 0.0, "below_pos": 1.0, "dapo": 1.0}
    for key, g in expected.items():
        p = CLIP_PRESETS[key]
        assert float(ppo_clip_gradient(p.ratio, p.advantage, p.eps_low, p.eps_high)) == g, key
    # the pessimistic min: at rho = 1.3, A = -1 the objective is -1.3 (unclipped), not -1.2
    assert float(ppo_clip_objective(1.3, -1.0, 0.2)) == pytest.approx(-1.3)
    assert float(ppo_clip_objective(1.3, 1.0, 0.2)) == pytest.approx(1.2)
    # clip-higher: 1.25 with A > 0 is clipped by symmetric PPO only
    assert float(ppo_clip_gradient(1.25, 1.0, 0.2)) == 0.0


def test_clip_curve_is_flat_exactly_where_the_gradient_is_zero():
    c = ppo_clip_curve(0.2, None, (1.0, -1.0), 0.5, 1.5, 101)
    assert c.ratio[70] == 1.2 and c.ratio[30] == 0.8
    pos, neg = c.gradient
    np.testing.assert_array_equal(pos, np.where(c.ratio > 1.2, 0.0, 1.0))
    np.testing.assert_array_equal(neg, np.where(c.ratio < 0.8, 0.0, -1.0))
    np.testing.assert_allclose(c.objective[0, c.ratio > 1.2], 1.2)
    np.testing.assert_allclose(c.objective[1, c.ratio < 0.8], -0.8)
    # the objective is never above the unclipped surrogate (the min is pessimistic)
    assert np.all(c.objective <= c.unclipped + 1e-15)
    # finite differences agree with the gradient between the kinks
    fd = np.diff(c.objective, axis=1) / np.diff(c.ratio)
    mid = (c.ratio[:-1] + c.ratio[1:]) / 2
    away = (np.abs(mid - 0.8) > 0.01) & (np.abs(mid - 1.2) > 0.01)
    np.testing.assert_allclose(fd[:, away], ppo_clip_gradient(mid[away], c.advantage[:, None]), atol=1e-9)


def test_token_batch_counts_match_a_plain_loop():
    b = token_batch(n=300, log_ratio_std=0.2, eps_low=0.2, eps_high=0.28, seed=3)
    clipped = outside = 0
    surviving = total = 0.0
    for rho, A in zip(b.ratio, b.advantage, strict=True):
        is_clipped = (A > 0 and rho > 1.28) or (A < 0 and rho < 0.8)
        clipped += is_clipped
        outside += rho > 1.28 or rho < 0.8
        surviving += 0.0 if is_clipped else abs(A)
        total += abs(A)
    assert b.fraction_clipped == clipped / 300 and b.fraction_outside == outside / 300
    assert b.surviving_share == pytest.approx(surviving / total, rel=1e-12)
    # ratios leave the range in the non-improving direction and keep their gradient
    assert b.fraction_outside > b.fraction_clipped > 0
    # a policy that moved further loses more of its update
    far = token_batch(n=300, log_ratio_std=0.6, seed=3)
    assert far.fraction_clipped > token_batch(n=300, log_ratio_std=0.05, seed=3).fraction_clipped
    assert token_batch(n=300, log_ratio_std=0.0).fraction_clipped == 0.0


def test_the_clip_bounds_neither_the_ratio_nor_the_gradient_size():
    b = clip_batch_stats([3.0, 0.1], [-5.0, 5.0], 0.2)
    assert not b.clipped.any()  # both far outside the range, both in the non-improving direction
    np.testing.assert_array_equal(b.gradient, [-5.0, 5.0])  # the full advantage, however large


# --------------------------------------------------------------------------------------------------------------
# GAE


def _gae_loop(r, v, gamma, lam):
    """The textbook definition, a double loop: A_t = sum_l (gamma lam)^l delta_{t+l}."""
    T = len(r)
    delta = [r[t] + gamma * v[t + 1] - v[t] for t in range(T)]
    return [sum((gamma * lam) ** k * delta[t + k] for k in range(T - t)) for t in range(T)]


def test_gae_equals_the_loop_for_random_trajectories():
    rng = np.random.default_rng(0)
    r = rng.standard_normal((6, 9))
    v = rng.standard_normal((6, 10))
    for gamma, lam in ((0.99, 0.95), (0.5, 0.3), (1.0, 1.0), (0.0, 0.7), (0.9, 0.0)):
        A = gae(r, v, gamma, lam)
        ref = np.array([_gae_loop(r[i], v[i], gamma, lam) for i in range(6)])
        np.testing.assert_allclose(A, ref, rtol=1e-12, atol=1e-12)


def test_gae_limits_one_step_td_and_monte_carlo():
    rng = np.random.default_rng(1)
    r, v, gamma = rng.standard_normal((4, 7)), rng.standard_normal((4, 8)), 0.9
    # lambda = 0: the TD error
    np.testing.assert_allclose(gae(r, v, gamma, 0.0), r + gamma * v[:, 1:] - v[:, :-1], atol=1e-14)
    np.testing.assert_array_equal(gae(r, v, gamma, 0.0), td_errors(r, v, gamma))
    # lambda = 1: discounted return-to-go with the bootstrap, minus the value
    G = np.array(
        [
            [sum(gamma**k * r[i, t + k] for k in range(7 - t)) + gamma ** (7 - t) * v[i, 7] for t in range(7)]
            for i in range(4)
        ]
    )
    np.testing.assert_allclose(gae(r, v, gamma, 1.0), G - v[:, :-1], atol=1e-12)
    np.testing.assert_allclose(discounted_returns(r, gamma, v[:, 7]), G, atol=1e-12)


def test_gae_broadcasts_one_critic_over_many_trajectories_and_keeps_presets_valid():
    p = GAE_PRESETS["sparse"]
    rewards = np.tile(p.rewards, (3, 1))
    one = gae(p.rewards, p.values, 1.0, 0.95)
    np.testing.assert_allclose(gae(rewards, p.values, p.gamma, p.lam), np.tile(one, (3, 1)))
    # sparse preset: the last token's TD error is 1 - 0.8 = 0.2, and it flows back with weight 0.95 per step
    A = gae(p.rewards, p.values, p.gamma, p.lam)
    assert A[-1] == pytest.approx(0.2) and A[-2] == pytest.approx(0.1 + 0.95 * 0.2)


def test_gae_study_samples_agree_with_the_closed_form_and_show_the_trade():
    s = gae_bias_variance(n=4000, seed=0)
    # lambda = 1 is unbiased, lambda = 0 has no variance (besides the action's own reward)
    assert s.bias_sq_exact[-1] == pytest.approx(0.0, abs=1e-20) and s.variance_exact[0] == 0.0
    # lambda = 0: mean error gamma b_{t+1} = 0.5 on the first 7 steps, 0 on the last: 7/8 · 0.25
    assert s.bias_sq_exact[0] == pytest.approx(7 / 8 * 0.25)
    # lambda = 1, gamma = 1: variance sigma^2 (T-1-t) averaged over t: 0.09 · 3.5
    assert s.variance_exact[-1] == pytest.approx(0.09 * 3.5)
    np.testing.assert_allclose(s.variance, s.variance_exact, rtol=0.08, atol=1e-12)
    np.testing.assert_allclose(s.bias_sq, s.bias_sq_exact, atol=3e-3)
    assert np.all(np.diff(s.bias_sq_exact) <= 0) and np.all(np.diff(s.variance_exact) >= 0)
    assert 0 < s.best_lam < 1  # the trade has an interior optimum
    # a perfect critic removes the bias at every lambda
    perfect = gae_bias_variance(critic_error=0.0, n=50)
    np.testing.assert_allclose(perfect.bias_sq_exact, 0.0, atol=1e-25)
    assert perfect.best_lam == 0.0


# --------------------------------------------------------------------------------------------------------------
# KL estimators


def test_kl_estimators_formulas_and_torch_path():
    lp, lr = np.array([-1.0, -2.0, -0.5]), np.array([-1.5, -1.0, -0.5])
    k = kl_estimators(lp, lr)
    r = np.exp(lr - lp)
    np.testing.assert_allclose(k.k1, -np.log(r))
    np.testing.assert_allclose(k.k2, np.log(r) ** 2 / 2)
    np.testing.assert_allclose(k.k3, (r - 1) - np.log(r), atol=1e-15)
    # the GRPO loss line of 002 A6.7: log_ratio.exp() - log_ratio - 1, with log_ratio = logp_ref - logp
    t = kl_estimators(torch.tensor(lp), torch.tensor(lr))
    assert isinstance(t.k3, torch.Tensor)
    log_ratio = torch.tensor(lr) - torch.tensor(lp)
    torch.testing.assert_close(t.k3, log_ratio.exp() - log_ratio - 1.0)
    # k3 keeps its digits near r = 1 (expm1), where (r - 1) - log r is O(x^2)
    assert float(kl_estimators(0.0, 1e-8).k3) == pytest.approx(0.5e-16, rel=1e-6)


def test_k1_and_k3_are_unbiased_k3_non_negative_k2_biased():
    p, q = np.array([0.5, 0.3, 0.15, 0.05]), np.array([0.2, 0.3, 0.3, 0.2])
    s = kl_estimator_study(p, q, n=20000, seed=2)
    exact = float(np.sum(p * np.log(p / q)))
    assert s.exact_kl == pytest.approx(exact, rel=1e-12)
    np.testing.assert_allclose(s.bias[[0, 2]], 0.0, atol=1e-15)  # sum_x pi_theta (r - 1) = 0 exactly
    assert abs(s.bias[1]) > 1e-3  # k2 is biased
    # the samples: k1 and k3 within 4 standard errors of the exact KL; k3 never negative, k1 often
    se = s.std / math.sqrt(s.n)
    assert abs(s.sample_mean[0] - exact) < 4 * se[0] and abs(s.sample_mean[2] - exact) < 4 * se[2]
    assert s.negative_share[2] == 0.0 and s.negative_share[1] == 0.0
    assert s.negative_share[0] == pytest.approx(0.2, abs=0.01)  # -log r < 0 where p < q: tokens 3 and 4
    assert s.std[2] < s.std[0]  # k3's spread is smaller here
    # k3 >= 0 for any log-ratio: (r - 1) - log r >= 0
    x = np.linspace(-30, 5, 1001)
    assert np.all(kl_estimators(np.zeros_like(x), x).k3 >= 0)


def test_gaussian_case_matches_schulmans_closed_forms():
    # q = N(0, 1) samples, p = N(mu, 1): log r = mu x - mu^2/2, KL = mu^2/2; k1's std is mu, i.e. std/KL = 2/mu
    rng = np.random.default_rng(0)
    x = rng.standard_normal(200_000)
    for mu in (0.1, 1.0):
        lq = -0.5 * x**2
        lp = -0.5 * (x - mu) ** 2
        k = kl_estimators(lq, lp)
        kl = mu**2 / 2
        assert np.std(k.k1) / kl == pytest.approx(2 / mu, rel=0.01)  # 20 at mu = 0.1 (Schulman 2020's table)
        assert np.mean(k.k1) == pytest.approx(kl, abs=4 * mu / math.sqrt(x.size))
        # E[k3] = E[r] - 1 - E[log r] = 0 + mu^2/2; k2: E = (mu^2 + mu^4/4) / 2, a relative bias mu^2/4
        assert np.mean(k.k3) == pytest.approx(kl, rel=0.02)
        assert (np.mean(k.k2) - kl) / kl == pytest.approx(mu**2 / 4, abs=0.02)


def test_kl_enters_ppo_as_a_per_token_reward():
    lp = np.array([[-1.0, -0.5, -2.0]])
    lr = np.array([[-1.2, -0.5, -1.0]])
    R = kl_penalized_rewards([3.0], lp, lr, beta=0.1)
    np.testing.assert_allclose(R, [[-0.1 * 0.2, 0.0, -0.1 * -1.0 + 3.0]])


# --------------------------------------------------------------------------------------------------------------
# memory


def test_four_models_two_of_them_training():
    # the bytes per parameter are the training-memory page's standard recipe: 2 + 2 + 4 + 4 + 4 trained, 2 frozen
    assert BYTES_TRAINED == RECIPES["standard"].total == 16
    assert BYTES_FROZEN == RECIPES["standard"].weights == 2
    rows = rlhf_memory(7e9)
    assert [m.name for m in rows] == ["policy", "reference", "reward model", "critic"]
    assert [m.trains for m in rows] == [True, False, False, True]
    assert sum(m.bytes for m in rows) == 7e9 * (2 * BYTES_TRAINED + 2 * BYTES_FROZEN) == 252e9
    assert [m.name for m in rlhf_memory(7e9, method="grpo")] == ["policy", "reference", "reward model"]
    assert sum(m.bytes for m in rlhf_memory(7e9, method="dpo")) == 126e9  # 112 GB states + 14 GB frozen (lesson)


# --------------------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ppo_clip_objective(1.0, 1.0, 0.0), "eps_low must be a positive"),
        (lambda: ppo_clip_objective(1.0, 1.0, -0.1), "eps_low must be a positive"),
        (lambda: ppo_clip_objective(1.0, 1.0, 0.2, 0.0), "eps_high must be a positive"),
        (lambda: ppo_clip_gradient(1.0, 1.0, float("nan")), "eps_low"),
        (lambda: ppo_clip_objective(1.0, 1.0, 1.0), "below 1"),
        (lambda: ppo_clip_objective(0.0, 1.0), "must be > 0"),
        (lambda: ppo_clip_objective([1.0, np.nan], 1.0), "finite"),
        (lambda: ppo_clip_objective("a", 1.0), "numbers"),
        (lambda: gae([1.0], [0.0, 0.0], 1.1, 0.5), "gamma must lie in"),
        (lambda: gae([1.0], [0.0, 0.0], -0.1, 0.5), "gamma must lie in"),
        (lambda: gae([1.0], [0.0, 0.0], float("nan"), 0.5), "gamma must lie in"),
        (lambda: gae([1.0], [0.0, 0.0], 0.9, 2.0), "lam must lie in"),
        (lambda: gae([], [0.0], 0.9, 0.5), "empty trajectory"),
        (lambda: gae(np.zeros((3, 0)), np.zeros((3, 1)), 0.9, 0.5), "empty trajectory"),
        (lambda: gae([1.0, 2.0], [0.0, 0.0], 0.9, 0.5), "one more entry"),
        (lambda: gae(np.zeros((2, 3)), np.zeros((3, 4)), 0.9, 0.5), "broadcast"),
        (lambda: gae_bias_variance(mean_reward=[]), "empty trajectory"),
        (lambda: clip_batch_stats([], [], 0.2), "at least one token"),
        (lambda: kl_estimators([0.0, np.nan], [0.0, 0.0]), "finite"),
        (lambda: kl_estimators(torch.tensor([0.0, float("inf")]), torch.tensor([0.0, 0.0])), "finite"),
        (lambda: kl_estimator_study([0.5, 0.5], [1.0, 0.0]), "infinite"),
        (lambda: kl_penalized_rewards(1.0, [], [], 0.1), "empty trajectory"),
        (lambda: rlhf_memory(7e9, method="sft"), "method"),
    ],
)
def test_bad_input_raises_a_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
