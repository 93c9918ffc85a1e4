"""core.reward_model: Bradley-Terry against scipy's optimiser and known rewards, the shift invariance, DPO as the same
form, accuracy under label noise, and the length-biased reward against the KL leash."""

import numpy as np
import pytest
from scipy import optimize, special

from core.device import get_device
from core.dpo import DPO_PRESETS, dpo_loss
from core.kl_leash import kl_regularized_policy
from core.reward_model import (
    LENGTH_TOY,
    LengthToy,
    accuracy_vs_noise,
    bradley_terry_fit,
    bradley_terry_nll,
    implicit_reward,
    length_bias_sweep,
    length_biased_reward,
    pair_accuracy,
    preference_probability,
    sample_pairs,
)

TRUE = np.array([-1.5, -0.8, -0.2, 0.0, 0.4, 1.1, 1.6])


def test_preference_probability_is_the_logistic_of_the_difference():
    assert preference_probability(2.0, 1.0) == pytest.approx(special.expit(1.0), rel=1e-15)
    np.testing.assert_allclose(preference_probability([800.0, -800.0], 0.0), [1.0, 0.0])
    assert preference_probability(5.3, 4.3) == pytest.approx(preference_probability(1.0, 0.0), rel=1e-14)


def test_only_differences_are_identified():
    pairs = sample_pairs(TRUE, 300, seed=1)
    base = bradley_terry_nll(TRUE, pairs)
    for c in (-7.0, 0.3, 100.0):
        assert bradley_terry_nll(TRUE + c, pairs) == pytest.approx(base, rel=1e-12)
    # the fit picks mean 0, and a shifted copy of its answer scores exactly as well
    fit = bradley_terry_fit(pairs, n_items=TRUE.size)
    assert abs(fit.rewards.mean()) < 1e-10
    assert bradley_terry_nll(fit.rewards + 3.0, pairs) == pytest.approx(fit.nll, rel=1e-12)


def test_fit_recovers_known_rewards_up_to_a_constant():
    pairs = sample_pairs(TRUE + 5.0, 30_000, seed=0)  # the offset 5 cannot be recovered, only the differences
    fit = bradley_terry_fit(pairs, n_items=TRUE.size)
    assert fit.converged and fit.iterations < 20
    assert (fit.backend, fit.device) == ("numpy", "cpu")  # numpy unless a torch device is asked for
    np.testing.assert_allclose(fit.rewards, TRUE - TRUE.mean(), atol=0.06)


def test_fit_is_the_maximum_likelihood_found_by_scipy():
    pairs = sample_pairs(TRUE, 200, seed=4)
    l2 = 0.1

    def f(r):
        d = r[pairs[:, 0]] - r[pairs[:, 1]]
        return np.sum(np.logaddexp(0.0, -d)) + l2 / 2 * np.sum(r**2)

    ref = optimize.minimize(f, np.zeros(TRUE.size), method="BFGS", options={"gtol": 1e-10}).x
    fit = bradley_terry_fit(pairs, n_items=TRUE.size, l2=l2)
    np.testing.assert_allclose(fit.rewards, ref, atol=1e-5)
    # without the ridge: the centred maximum likelihood
    ref0 = optimize.minimize(lambda r: f(r) - l2 / 2 * np.sum(r**2), np.zeros(TRUE.size), method="BFGS").x
    fit0 = bradley_terry_fit(pairs, n_items=TRUE.size, l2=0.0)
    np.testing.assert_allclose(fit0.rewards, ref0 - ref0.mean(), atol=1e-4)


@pytest.mark.parametrize(
    ("n", "n_pairs", "flip", "seed", "l2"),
    [
        (7, 300, 0.0, 0, 1e-3),  # the page's default fit
        (12, 5000, 0.3, 4, 0.1),  # the label-noise study's answers, many noisy pairs, a strong ridge
        (20, 40, 0.0, 9, 1e-3),  # the most answers the page allows, few pairs
        (5, 500, 0.1, 2, 0.0),  # no ridge
    ],
)
def test_numpy_newton_equals_torch_newton(n, n_pairs, flip, seed, l2):
    """The numpy path (the page's) and the torch path on core's device take the same Newton steps."""
    pairs = sample_pairs(np.linspace(-2.0, 2.0, n), n_pairs, flip=flip, seed=seed)
    a = bradley_terry_fit(pairs, n_items=n, l2=l2)
    b = bradley_terry_fit(pairs, n_items=n, l2=l2, device=get_device())
    assert (a.backend, b.backend, b.device) == ("numpy", "torch", str(get_device()))
    mps = get_device().type == "mps"  # no float64 there: float32 round-off, and Newton's tol is out of its reach
    rtol = 1e-5 if mps else 1e-12
    np.testing.assert_allclose(a.rewards, b.rewards, rtol=rtol, atol=rtol * np.max(np.abs(a.rewards)))
    assert a.nll == pytest.approx(b.nll, rel=rtol)
    if not mps:
        assert (a.iterations, a.converged, a.train_accuracy) == (b.iterations, b.converged, b.train_accuracy)


def test_fit_is_a_stationary_point_by_torch_autograd():
    """An independent gradient: torch autograd of the penalised log-likelihood vanishes at the numpy fit."""
    torch = pytest.importorskip("torch")
    for n, n_pairs, seed, l2 in ((7, 300, 0, 1e-3), (15, 2000, 3, 0.05)):
        pairs = sample_pairs(np.linspace(-1.5, 1.5, n), n_pairs, flip=0.2, seed=seed)
        fit = bradley_terry_fit(pairs, n_items=n, l2=l2)
        r = torch.tensor(fit.rewards, dtype=torch.float64, requires_grad=True)
        w, lo = torch.as_tensor(pairs[:, 0]), torch.as_tensor(pairs[:, 1])
        loss = torch.nn.functional.softplus(r[lo] - r[w]).sum() + l2 / 2 * (r**2).sum()
        (grad,) = torch.autograd.grad(loss, r)
        assert float(grad.abs().max()) < 1e-9 * n_pairs


def test_tied_items_count_as_ties_in_either_backend():
    """Items with the same record have equal maximum-likelihood rewards; round-off must not rank one above the other."""
    pairs = [(0, 1), (1, 0), (2, 0), (2, 1)]  # 0 and 1 beat each other once, and both lose to 2
    for device in (None, get_device()) if get_device().type != "mps" else (None,):  # float32 ties are wider
        fit = bradley_terry_fit(pairs, n_items=3, device=device)
        assert fit.rewards[0] == pytest.approx(fit.rewards[1], abs=1e-12)
        assert fit.train_accuracy == 0.5  # (2, 0) and (2, 1) right; the ties are not
        assert pair_accuracy(fit.rewards, pairs) == 0.75  # ties count one half
    # a page state whose tied fitted rewards came out a few ulps apart (rm_items 4, rm_pairs 10, seed 1)
    pairs = sample_pairs(np.linspace(-1.5, 1.5, 4), 10, seed=1)
    assert bradley_terry_fit(pairs, n_items=4).train_accuracy == 0.5
    assert pair_accuracy([0.0, 1e-13], [(1, 0)]) == 0.5 and pair_accuracy([0.0, 1e-6], [(1, 0)]) == 1.0


def test_dpo_is_bradley_terry_with_the_implicit_reward():
    p = DPO_PRESETS["worked_b"]
    r_w = implicit_reward(p.logp_w, p.ref_logp_w, p.beta)
    r_l = implicit_reward(p.logp_l, p.ref_logp_l, p.beta)
    assert (round(r_w, 3), round(r_l, 3)) == (0.2, -0.1)  # worked example B
    loss = -np.log(preference_probability(r_w, r_l))
    assert round(loss, 3) == 0.554
    assert loss == pytest.approx(dpo_loss(p.logp_w, p.logp_l, p.ref_logp_w, p.ref_logp_l, p.beta).loss, rel=1e-12)


def test_sample_pairs_follow_bradley_terry_and_the_flip_rate():
    r = np.array([0.0, 1.0])
    pairs = sample_pairs(r, 40_000, seed=2)
    share = np.mean(pairs[:, 0] == 1)
    assert share == pytest.approx(special.expit(1.0), abs=0.01)  # 0.731
    flipped = sample_pairs(r, 40_000, flip=0.2, seed=2)
    assert np.mean(flipped[:, 0] == 1) == pytest.approx(0.8 * 0.731 + 0.2 * 0.269, abs=0.01)
    assert np.all(pairs[:, 0] != pairs[:, 1])


def test_heldout_accuracy_falls_with_label_noise():
    r = np.linspace(-3, 3, 12)
    s = accuracy_vs_noise(r, flips=(0.0, 0.1, 0.2, 0.3, 0.5), n_train=400, n_test=3000, seed=0)
    assert s.heldout_accuracy[0] > s.heldout_accuracy[2] > s.heldout_accuracy[-1]
    assert s.heldout_accuracy[-1] == pytest.approx(0.5, abs=0.03)  # flip 1/2: labels carry nothing
    # nobody beats the true rewards on noisy held-out labels (up to sampling noise of the test set)
    assert np.all(s.heldout_accuracy <= s.ceiling + 0.02)
    # the ceiling: BT's own noise, then the flips mix it with its complement
    a0 = s.ceiling[0]
    np.testing.assert_allclose(s.ceiling[1:4], [(1 - f) * a0 + f * (1 - a0) for f in (0.1, 0.2, 0.3)], atol=0.03)
    # the reward models of 003 Q7 sit at about 60-75% held-out accuracy: here a flip rate of about 0.15-0.36
    assert np.any((s.heldout_accuracy > 0.6) & (s.heldout_accuracy < 0.7))
    assert pair_accuracy([0.0, 1.0], [(1, 0), (0, 1), (1, 0)]) == pytest.approx(2 / 3)


def test_length_biased_reward_grows_with_length():
    r = length_biased_reward(LENGTH_TOY.quality, LENGTH_TOY.lengths, LENGTH_TOY.length_coef)
    np.testing.assert_allclose(r, np.array(LENGTH_TOY.quality) + 0.3 * np.log2(LENGTH_TOY.lengths))
    assert np.all(np.diff(r) > 0)  # longer always scores higher, although the true best is the 200-token answer


def test_falling_beta_chooses_longer_answers_and_the_true_reward_rises_then_falls():
    s = length_bias_sweep(betas=np.geomspace(1e-2, 1e2, 61))
    L, q, ref = np.array(LENGTH_TOY.lengths, float), np.array(LENGTH_TOY.quality), np.array(LENGTH_TOY.pi_ref)
    # the same optimum as the KL leash page, and as the formula by hand
    np.testing.assert_allclose(s.pi, kl_regularized_policy(ref, s.proxy, s.beta))
    by_hand = ref * np.exp(s.proxy / 0.5) / np.sum(ref * np.exp(s.proxy / 0.5))
    np.testing.assert_allclose(length_bias_sweep(betas=[0.5]).pi[0], by_hand, rtol=1e-12)
    # beta falls (right to left): longer answers
    assert np.all(np.diff(s.mean_length) < 0)
    assert s.mean_length[0] == pytest.approx(800.0, rel=1e-4)
    assert s.mean_length[-1] == pytest.approx(ref @ L, rel=0.01)  # 177.5 tokens: the SFT model
    # the true reward: the reference's 0.555, a peak in between, then below the reference at a tiny beta
    assert s.true_reward[-1] == pytest.approx(ref @ q, abs=0.002)
    assert s.true_reward.max() > 0.65 and 0.1 < s.best_beta < 1.0
    assert s.true_reward[0] == pytest.approx(0.5, abs=1e-4) and s.true_reward[0] < ref @ q
    assert np.all(np.diff(s.proxy_reward) < 0) and np.all(np.diff(s.kl) < 0)  # proxy and KL keep rising


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: bradley_terry_fit([]), "no preference pairs"),
        (lambda: bradley_terry_fit([(0, 1, 2)]), "shape"),
        (lambda: bradley_terry_fit([(0, 0)]), "different items"),
        (lambda: bradley_terry_fit([(0, -1)]), ">= 0"),
        (lambda: bradley_terry_fit([(0, 1.5)]), "whole"),
        (lambda: bradley_terry_fit([(0, 5)], n_items=3), "out of range"),
        (lambda: bradley_terry_fit([(0, 1)], l2=-1.0), "l2"),
        (lambda: bradley_terry_fit([(0, 1), (1, 2)], l2=0.0), "no finite maximum"),
        (lambda: bradley_terry_fit([(0, 1), (1, 0), (2, 3), (3, 2)], l2=0.0), "no finite maximum"),
        (lambda: sample_pairs([1.0], 10), "two items"),
        (lambda: sample_pairs([0.0, 1.0], 10, flip=0.7), "flip"),
        (lambda: implicit_reward(-1.0, -2.0, 0.0), "beta"),
        (lambda: length_biased_reward([1.0], [0.0], 0.3), "positive"),
        (lambda: length_bias_sweep(LengthToy((10, 20), (0.5,), (1.0, 0.0), 0.3)), "one entry per answer"),
        (lambda: length_bias_sweep(betas=[0.0]), "beta"),
    ],
)
def test_bad_input_raises_a_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
