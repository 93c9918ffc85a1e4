"""core.schedules: schedule shapes (warm-up peak, final value), the annealing loss model against a plain loop, the
WSD branch, the Kaplan read-off gap, the mixture, and bad input."""

import math

import numpy as np
import pytest

from core.schedules import (
    DEFAULT_LOSS_MODEL,
    AnnealingLossModel,
    data_mixture,
    kaplan_gap,
    lr_schedule,
    wsd_branch,
    wsd_sweep,
)


@pytest.mark.parametrize("kind", ["cosine", "wsd", "constant"])
def test_warmup_reaches_the_peak_exactly_at_the_end_of_warmup(kind):
    lr = lr_schedule(kind, 1000, peak_lr=3e-4, warmup=50)
    assert lr.shape == (1000,)
    np.testing.assert_allclose(lr[:50], 3e-4 * np.arange(1, 51) / 50)
    assert lr[49] == pytest.approx(3e-4) and lr.max() == pytest.approx(3e-4)
    assert int(np.argmax(lr)) == 49


def test_final_values_and_shapes():
    cos = lr_schedule("cosine", 1000, warmup=100, final_lr_frac=0.1)
    assert cos[-1] == pytest.approx(0.1)
    # step 550 is halfway through the decay: halfway between peak and floor; step 325 a quarter of the way
    assert cos[549] == pytest.approx(0.55)
    assert cos[324] == pytest.approx(0.1 + 0.9 * (1 + math.cos(math.pi * 225 / 900)) / 2)
    assert np.all(np.diff(cos[100:]) <= 0)
    wsd = lr_schedule("wsd", 1000, warmup=100, final_lr_frac=0.0, decay_steps=200)
    assert np.all(wsd[100:800] == 1.0) and wsd[-1] == 0.0
    np.testing.assert_allclose(wsd[800:], 1 - np.arange(1, 201) / 200)  # linear decay
    sq = lr_schedule("wsd", 1000, warmup=100, final_lr_frac=0.0, decay_steps=200, decay_shape="1-sqrt")
    # Hägele et al.'s 1 - sqrt(u) drops faster than linear at first: below the linear decay inside it
    assert sq[-1] == pytest.approx(0.0) and np.all(sq[800:-1] < wsd[800:-1])
    assert np.all(lr_schedule("constant", 100, warmup=10)[10:] == 1.0)


def test_annealing_areas_against_a_plain_loop():
    lr = lr_schedule("wsd", 300, warmup=10, decay_steps=100).tolist()
    lam = 0.99
    S1, S2, m, prev = [], [], 0.0, lr[0]
    for i, eta in enumerate(lr):
        m = lam * m + (prev - eta)
        prev = eta
        S1.append((S1[-1] if i else 0.0) + eta)
        S2.append((S2[-1] if i else 0.0) + m)
    model = AnnealingLossModel(lam=lam)
    a1, a2 = model.areas(lr)
    np.testing.assert_allclose(a1, S1)
    np.testing.assert_allclose(a2, S2, atol=1e-12)
    L = model.loss(lr)
    np.testing.assert_allclose(
        L, [model.L0 + model.A * s1**-model.alpha - model.C * s2 for s1, s2 in zip(S1, S2, strict=True)]
    )


def test_loss_model_shapes():
    m = DEFAULT_LOSS_MODEL
    cos = m.loss(lr_schedule("cosine", 10_000))
    wsd = m.loss(lr_schedule("wsd", 10_000))
    const = m.loss(lr_schedule("constant", 10_000))
    # decaying the learning rate lowers the final loss; WSD and cosine end close together
    assert cos[-1] < const[-1] and wsd[-1] < const[-1]
    assert abs(cos[-1] - wsd[-1]) < 0.03
    # during WSD's stable phase it follows the constant run exactly, and its decay drops the loss fast
    np.testing.assert_allclose(wsd[:8000], const[:8000])
    assert const[7999] - wsd[-1] > 3 * (const[7999] - const[-1])


def test_wsd_branches_share_the_stable_prefix_and_later_branches_end_lower():
    a = wsd_branch(10_000, 3000, 1000)
    b = wsd_branch(10_000, 6000, 1000)
    assert a.shape == (4000,) and b.shape == (7000,)
    np.testing.assert_array_equal(a[:3000], b[:3000])
    m = DEFAULT_LOSS_MODEL
    assert m.loss(b)[-1] < m.loss(a)[-1]
    assert a[-1] == pytest.approx(0.1)


def test_kaplan_losses_read_from_a_long_cosine_are_too_high():
    g = kaplan_gap(10_000, [2500, 5000, 10_000])
    assert np.all(g.gap[:2] > 0.02)
    assert g.gap[2] == pytest.approx(0.0, abs=1e-12)  # at the full length both are the same run


def test_mixture_moves_to_the_best_data_during_the_decay():
    mx = data_mixture(1000, 800, ramp_steps=50)
    np.testing.assert_allclose(mx.weights.sum(axis=1), 1.0)
    assert mx.weights.shape == (1000, 4)
    np.testing.assert_allclose(mx.weights[0], [0.80, 0.12, 0.05, 0.03])
    np.testing.assert_allclose(mx.weights[-1], [0.35, 0.20, 0.15, 0.30])
    np.testing.assert_allclose(
        mx.weights[824], (0.5 * np.array([0.8, 0.12, 0.05, 0.03]) + 0.5 * np.array([0.35, 0.2, 0.15, 0.3]))
    )


@pytest.mark.parametrize("shape", ["linear", "cosine", "1-sqrt"])
@pytest.mark.parametrize(
    ("steps", "W", "floor", "decays", "model"),
    [
        (10_000, 100, 0.1, [100, 2000, 2000, 9899, 9900, 1], DEFAULT_LOSS_MODEL),
        (777, 0, 0.0, [776, 300, 5], AnnealingLossModel(lam=0.9, C=1e-3)),
        (3000, 30, 0.5, [1000, 2969], AnnealingLossModel(lam=1.0)),
        (50, 1, 0.25, [49, 2], AnnealingLossModel(lam=0.0)),
    ],
)
def test_wsd_sweep_matches_each_schedules_own_loss(shape, steps, W, floor, decays, model):
    """The slider's WSD curves (one pass over every decay length) against lr_schedule and the loss model's plain
    loop, one run at a time, at every sampled step: a decay as long as the run allows, one step long, repeated."""
    sweep = wsd_sweep(steps, decays, warmup=W, final_lr_frac=floor, decay_shape=shape, model=model)
    assert sweep.decay_steps == tuple(decays) and sweep.decay_shape == shape
    for D, at, lr, loss in zip(decays, sweep.at, sweep.lr, sweep.loss, strict=True):
        want = lr_schedule("wsd", steps, warmup=W, final_lr_frac=floor, decay_steps=D, decay_shape=shape)
        assert np.all(np.diff(at) > 0) and at[0] == 1 and at[-1] == steps and steps - D in at
        np.testing.assert_allclose(lr, want[at - 1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(loss, model.loss(want)[at - 1], rtol=1e-12)
        assert np.sum(at > steps - D) == min(D, 100)  # the decay's samples: every step of a short one


@pytest.mark.parametrize(
    "call",
    [
        lambda: lr_schedule("linear", 100),
        lambda: lr_schedule("cosine", 1),
        lambda: lr_schedule("cosine", 100, warmup=100),
        lambda: lr_schedule("cosine", 100, peak_lr=0.0),
        lambda: lr_schedule("cosine", 100, final_lr_frac=1.5),
        lambda: lr_schedule("wsd", 100, warmup=10, decay_steps=95),
        lambda: lr_schedule("wsd", 100, decay_shape="step"),
        lambda: lr_schedule("wsd", 100, decay_shape="sqrt"),  # the old name of a mirrored shape: gone
        lambda: wsd_branch(100, 95, 10),
        lambda: AnnealingLossModel().loss([]),
        lambda: AnnealingLossModel().loss([1.0, -0.1]),
        lambda: kaplan_gap(100, [200]),
        lambda: data_mixture(100, 100),
        lambda: data_mixture(100, 50, pretrain=(1.0, 0.0)),
        lambda: wsd_sweep(100, [], warmup=10),
        lambda: wsd_sweep(100, [91], warmup=10),  # no step at the peak before the decay
        lambda: wsd_sweep(100, [100], warmup=0),
        lambda: wsd_sweep(100, [0], warmup=10),
        lambda: wsd_sweep(100, [20], warmup=10, decay_shape="sqrt"),
        lambda: wsd_sweep(100, [20], warmup=10, final_lr_frac=1.5),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
