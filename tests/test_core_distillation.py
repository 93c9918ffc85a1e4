"""core.distillation against independent references: scipy.stats.entropy for every KL, the mixture's closed-form
moments for the forward fit, a brute-force scan for the reverse fit, torch.autograd for the soft loss's gradient,
and direct sums over the toy's sequences."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import special, stats

from core import distillation as D

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------------------------
# forward vs reverse KL on the grid


def _teacher_ref(x, d, w, s):
    """The teacher on the grid from scipy's normal pdf, normalised over the grid."""
    f = w * stats.norm.pdf(x, -d / 2, s) + (1 - w) * stats.norm.pdf(x, d / 2, s)
    return f / f.sum()


def test_teacher_matches_scipy_pdf_on_the_grid():
    x = D.default_grid()
    for d, w in [(0.0, 0.5), (3.0, 0.3), (8.0, 0.5)]:
        np.testing.assert_allclose(D.two_mode_teacher(x, d, w), _teacher_ref(x, d, w, 1.0), rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("d", [1.0, 4.0, 8.0])
def test_both_kls_of_both_fits_match_scipy_entropy(d):
    f = D.kl_fits(d)
    for fit in (f.forward, f.reverse):
        assert fit.forward_kl == pytest.approx(stats.entropy(f.p, fit.q), rel=1e-9, abs=1e-12)
        assert fit.reverse_kl == pytest.approx(stats.entropy(fit.q, f.p), rel=1e-9, abs=1e-12)
    assert D.kl_divergence(f.p, f.reverse.q) == pytest.approx(stats.entropy(f.p, f.reverse.q), rel=1e-12)


def test_kl_divergence_conventions():
    assert D.kl_divergence([0.5, 0.5, 0.0], [0.25, 0.25, 0.5]) == pytest.approx(math.log(2))
    assert D.kl_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf
    with pytest.raises(ValueError, match="sum to 1"):
        D.kl_divergence([0.5, 0.6], [0.5, 0.5])


@pytest.mark.parametrize(("d", "w", "s"), [(0.0, 0.5, 1.0), (2.0, 0.5, 1.0), (6.0, 0.3, 1.0), (10.0, 0.8, 0.7)])
def test_forward_fit_is_the_mixtures_mean_and_variance(d, w, s):
    fit = D.kl_fits(d, w, s).forward
    # closed form: modes at -d/2 and +d/2
    mean = w * (-d / 2) + (1 - w) * (d / 2)
    var = s**2 + w * (1 - w) * d**2
    assert fit.mean == pytest.approx(mean, abs=1e-9)
    assert fit.variance == pytest.approx(var, rel=1e-9)
    # and it is a minimum of the forward KL: nudging the mean or the width only raises it
    x, p = D.default_grid(), _teacher_ref(D.default_grid(), d, w, s)
    for dm, ds in [(0.05, 0), (-0.05, 0), (0, 0.05), (0, -0.05)]:
        q = stats.norm.pdf(x, mean + dm, math.sqrt(var) + ds)
        assert stats.entropy(p, q / q.sum()) > fit.forward_kl


def _brute_reverse(d, w=0.5):
    """min over a fine (mean, std) table of KL(q || p), by scipy: an independent reference for the reverse fit."""
    x = D.default_grid()
    p = _teacher_ref(x, d, w, 1.0)
    mm, ss = np.meshgrid(np.arange(-5.0, 5.0001, 0.05), np.arange(0.8, 2.5, 0.025), indexing="ij")
    q = stats.norm.pdf(x[None, :], mm.reshape(-1, 1), ss.reshape(-1, 1))  # (candidates, n)
    kl = stats.entropy(q, p[None, :], axis=1)  # entropy normalises each row of q
    i = int(np.argmin(kl))
    return float(kl[i]), float(mm.ravel()[i]), float(ss.ravel()[i])


def test_reverse_fit_sits_on_one_mode_when_far_and_between_them_when_near():
    far, near = D.kl_fits(8.0), D.kl_fits(1.0)
    # far: on the left mode (the tie between the mirror images goes to the smaller mean), about its width
    assert far.reverse.mean == pytest.approx(-4.0, abs=0.02)
    assert math.sqrt(far.reverse.variance) == pytest.approx(1.0, abs=0.02)
    assert far.reverse.reverse_kl == pytest.approx(math.log(2), abs=1e-3)  # -log w for separated modes
    assert len(far.reverse.local_optima) >= 2  # the mirror image on the right mode was found too
    assert any(o[0] == pytest.approx(4.0, abs=0.02) for o in far.reverse.local_optima)
    # near: in the middle, narrower than the forward fit
    assert abs(near.reverse.mean) < 1e-4
    assert 1.0 < math.sqrt(near.reverse.variance) < math.sqrt(near.forward.variance)
    for f in (far, near):
        assert f.reverse.reverse_kl <= f.forward.reverse_kl + 1e-12
    assert far.reverse.reverse_kl < far.forward.reverse_kl - 1.0


def test_reverse_fit_is_no_worse_than_a_brute_force_scan():
    for d in (2.0, 6.0):
        kl, _, _ = _brute_reverse(d)
        assert D.kl_fits(d).reverse.reverse_kl <= kl + 1e-9


def test_reverse_fit_picks_the_heavier_mode():
    assert D.kl_fits(8.0, weight=0.3).reverse.mean == pytest.approx(4.0, abs=0.02)
    assert D.kl_fits(8.0, weight=0.7).reverse.mean == pytest.approx(-4.0, abs=0.02)


def test_two_components_recover_the_teacher_in_both_directions():
    f = D.kl_fits(6.0, weight=0.4, components=2)
    for fit in (f.forward, f.reverse):
        np.testing.assert_allclose(fit.means, [-3.0, 3.0], atol=1e-3)
        np.testing.assert_allclose(fit.stds, [1.0, 1.0], atol=1e-3)
        np.testing.assert_allclose(fit.weights, [0.4, 0.6], atol=1e-3)
        assert fit.forward_kl < 1e-6 and fit.reverse_kl < 1e-6


def test_sweep_moves_the_reverse_fit_from_the_middle_to_a_mode():
    s = D.kl_sweep([1.0, 2.0, 6.0, 8.0])
    np.testing.assert_allclose(s.forward_mean, 0.0, atol=1e-9)
    assert np.all(np.abs(s.reverse_mean[:2]) < 1e-3) and np.all(np.abs(s.reverse_mean[2:]) > 2.5)
    assert np.all(np.diff(s.teacher_mass_near_forward_mean) < 0)  # the forward fit's centre empties as d grows


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="does not hold"):
        D.kl_fits(45.0)
    with pytest.raises(ValueError, match="weight"):
        D.kl_fits(2.0, weight=1.0)
    with pytest.raises(ValueError, match="capacity"):
        D.kl_fits(2.0, components=0)


# ---------------------------------------------------------------------------------------------------------------
# temperature and the T² factor

Z = np.array([1.0, 0.2, -1.3, 2.1, 0.4])  # student
V = np.array([2.5, -0.5, -2.0, 0.7, 1.1])  # teacher


def _torch_grad(z, v, T):
    zt = torch.tensor(z, dtype=torch.float64, requires_grad=True)
    p = torch.softmax(torch.tensor(v, dtype=torch.float64) / T, dim=-1)
    log_q = torch.log_softmax(zt / T, dim=-1)
    loss = T**2 * torch.sum(p * (torch.log(p) - log_q))
    loss.backward()
    return float(loss.detach()), zt.grad.numpy()


@pytest.mark.parametrize("T", [0.5, 1.0, 4.0, 20.0])
def test_soft_loss_and_its_gradient_match_torch_autograd(T):
    loss, grad = _torch_grad(Z, V, T)
    assert D.soft_target_loss(Z, V, T) == pytest.approx(loss, rel=1e-10)
    np.testing.assert_allclose(D.soft_loss_gradient(Z, V, T), grad, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(D.soft_loss_gradient(Z, V, T, scaled=False) * T**2, grad, rtol=1e-9, atol=1e-14)
    # and the loss against scipy: T² · KL(p_T || q_T)
    p, q = special.softmax(V / T), special.softmax(Z / T)
    assert D.soft_target_loss(Z, V, T) == pytest.approx(T**2 * stats.entropy(p, q), rel=1e-9)


def test_t_squared_times_the_gradient_tends_to_the_centred_logit_difference_over_n():
    limit = ((Z - Z.mean()) - (V - V.mean())) / Z.size
    errs = []
    for T in (10.0, 100.0, 1000.0):
        g = T**2 * D.soft_loss_gradient(Z, V, T, scaled=False)
        errs.append(np.max(np.abs(g - limit)))
        np.testing.assert_allclose(T**2 * D.high_temperature_gradient(Z, V, T), limit, rtol=1e-12)
    assert errs[2] < 2e-3 * np.max(np.abs(limit))
    assert errs[0] / errs[1] == pytest.approx(10, rel=0.2) and errs[1] / errs[2] == pytest.approx(
        10, rel=0.05
    )  # O(1/T)
    # the unscaled gradient falls like 1/T²: T² · |grad| settles
    s = D.temperature_sweep(Z, V, [100.0, 1000.0])
    assert s.grad_norm[1] / s.grad_norm[0] == pytest.approx(1e-2, rel=1e-2)
    assert s.scaled_grad_norm[1] == pytest.approx(np.linalg.norm(limit), rel=1e-3)


def test_soft_target_entropy_rises_to_log_n():
    Ts = np.geomspace(0.05, 1e4, 40)
    h = D.soft_target_entropy(V, Ts)
    assert np.all(np.diff(h) > 0)
    assert h[-1] == pytest.approx(math.log(V.size), abs=1e-6)
    assert h[0] == pytest.approx(stats.entropy(special.softmax(V / 0.05)), rel=1e-9)


# ---------------------------------------------------------------------------------------------------------------
# sequence-level, token-level and on-policy distillation on the toy


def _product_kls(p, forward):
    """KL(p || q) or KL(q || p) by scipy for every factorised q = (a, 1-a) x (b, 1-b) on a 199 x 199 table."""
    a, b = (g.ravel() for g in np.meshgrid(np.linspace(0.005, 0.995, 199), np.linspace(0.005, 0.995, 199)))
    q = np.stack([a * b, a * (1 - b), (1 - a) * b, (1 - a) * (1 - b)], axis=1)  # rows: AA, AB, BA, BB
    pp = np.broadcast_to(p.ravel(), q.shape)
    return stats.entropy(pp, q, axis=1) if forward else stats.entropy(q, pp, axis=1)


def test_token_level_student_is_the_teachers_marginals():
    p = np.array(D.TOY_TEACHER)
    s = D.sequence_distillation()["token-level"]
    np.testing.assert_allclose(s.first, [p[0, 0] + p[0, 1], p[1, 0] + p[1, 1]])
    np.testing.assert_allclose(s.second, [p[0, 0] + p[1, 0], p[0, 1] + p[1, 1]])
    assert s.forward_kl == pytest.approx(stats.entropy(p.ravel(), s.joint.ravel()), rel=1e-12)
    # the best factorised student for the forward KL: no 2 x 2 product does better
    assert _product_kls(p, forward=True).min() >= s.forward_kl - 1e-12


def test_sequence_level_student_trains_on_the_mode():
    s = D.sequence_distillation()["sequence-level"]
    np.testing.assert_array_equal(s.joint, [[1.0, 0.0], [0.0, 0.0]])
    assert s.mode_mass == 1.0 and s.forward_kl == math.inf
    assert s.reverse_kl == pytest.approx(-math.log(0.5))
    smooth = D.sequence_distillation(smoothing=0.1)["sequence-level"]
    np.testing.assert_allclose(smooth.first, [0.95, 0.05])


def test_on_policy_student_minimises_the_reverse_kl_and_the_chain_rule_holds():
    p = np.array(D.TOY_TEACHER)
    s = D.sequence_distillation()["on-policy"]
    q = s.joint
    assert s.reverse_kl == pytest.approx(stats.entropy(q.ravel(), p.ravel()), rel=1e-10)
    # sum_t E_{y<t ~ q} KL(q_t || p(.|y<t)), by a loop over the student's own prefixes
    chain = stats.entropy(s.first, p.sum(axis=1))
    for y1 in range(2):
        chain += s.first[y1] * stats.entropy(s.second, p[y1] / p[y1].sum())
    assert s.reverse_kl == pytest.approx(chain, rel=1e-10)
    assert s.reverse_kl <= _product_kls(p, forward=False).min() + 1e-9
    # mode-seeking: more of its mass on the consistent answers than the token-level student's
    assert s.coherent_mass > D.sequence_distillation()["token-level"].coherent_mass


# ---------------------------------------------------------------------------------------------------------------
# no torch at import


def test_importing_the_module_leaves_torch_out():
    code = "import json, sys; import core.distillation; print(json.dumps('torch' in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip()) is False
