"""viz.ppo: the numbers inside the traces, the slider's update steps, and plotly's validation of every figure."""

import numpy as np
import plotly.graph_objects as go
import pytest

from core.ppo import (
    GAE_PRESETS,
    gae,
    gae_bias_variance,
    kl_estimator_study,
    kl_estimators,
    ppo_clip_curve,
    rlhf_memory,
    td_errors,
    token_batch,
)
from viz.ppo import (
    clip_batch_figure,
    gae_bias_variance_figure,
    gae_figure,
    kl_estimators_figure,
    ppo_clip_figure,
    rlhf_memory_figure,
)
from viz.style import PALETTE


def _clip_fig(ratio=1.3, eps_low=0.2, eps_high=None):
    curve = ppo_clip_curve(eps_low, eps_high)
    return curve, ppo_clip_figure(curve, ratio)


def test_clip_figure_curves_and_markers_at_the_start():
    curve, fig = _clip_fig(1.3)
    np.testing.assert_allclose(fig.data[0].y, curve.objective[0])  # objective, A > 0
    np.testing.assert_allclose(fig.data[2].y, curve.objective[1])  # objective, A < 0
    np.testing.assert_allclose(fig.data[4].y, np.where(curve.ratio > 1.2, 0.0, 1.0))  # gradient, A > 0
    np.testing.assert_allclose(fig.data[5].y, np.where(curve.ratio < 0.8, 0.0, -1.0))  # gradient, A < 0
    assert fig.data[0].line.color == PALETTE["optimised"]
    # the markers sit at rho = 1.3: objective 1.2 (clipped) and -1.3 (the pessimistic min), gradients 0 and -1
    assert [float(fig.data[k].x[0]) for k in range(6, 10)] == [1.3] * 4
    assert [float(fig.data[k].y[0]) for k in range(6, 10)] == pytest.approx([1.2, -1.3, 0.0, -1.0])
    text = fig.layout.annotations[0].text
    assert "ρ = 1.30" in text and "d/dρ = 0.00 (clipped: no gradient)" in text
    assert "objective −1.300, d/dρ = −1.00 (full gradient)" in text


def test_clip_slider_steps_move_the_markers_with_update():
    curve, fig = _clip_fig(1.0)
    slider = fig.layout.sliders[0]
    assert len(slider.steps) == curve.ratio.size == 101
    assert curve.ratio[slider.active] == 1.0
    for i in (0, 30, 70, 85, 100):
        step = slider.steps[i]
        assert step.method == "update"
        data, layout, traces = step.args
        assert list(traces) == [6, 7, 8, 9]
        assert [x[0] for x in data["x"]] == [curve.ratio[i]] * 4
        ys = [y[0] for y in data["y"]]
        assert ys == pytest.approx([curve.objective[0, i], curve.objective[1, i], curve.gradient[0, i],
                                    curve.gradient[1, i]])  # fmt: skip
        assert layout["annotations[0].text"].startswith(f"<b>ρ = {curve.ratio[i]:.2f}</b>")
    # rho = 0.5: A > 0 keeps its gradient 1, A < 0 is clipped; rho = 1.5: the other way round
    assert [y[0] for y in slider.steps[0].args[0]["y"]][2:] == [1.0, 0.0]
    assert [y[0] for y in slider.steps[100].args[0]["y"]][2:] == [0.0, -1.0]


def test_clip_figure_shades_the_range_and_dapo_widens_it():
    _, fig = _clip_fig(1.25, 0.2, 0.28)
    bands = [s for s in fig.layout.shapes if s.fillcolor == "rgba(128,128,128,0.15)"]
    assert len(bands) == 4 and all((s.x0, s.x1) == pytest.approx((0.8, 1.28)) for s in bands)
    assert [float(fig.data[k].y[0]) for k in (8, 9)] == [1.0, -1.0]  # 1.25 < 1.28: not clipped
    with pytest.raises(ValueError, match="two advantages"):
        ppo_clip_figure(ppo_clip_curve(advantages=(1.0,)), 1.0)


def test_clip_batch_figure_splits_tokens_and_reports_the_shares():
    b = token_batch(n=500, log_ratio_std=0.3, seed=1)
    fig = clip_batch_figure(b)
    kept_in, kept_out, clipped = fig.data
    assert len(kept_in.x) + len(kept_out.x) + len(clipped.x) == 500
    assert len(clipped.x) == int(b.clipped.sum()) and len(kept_out.x) == int((~b.clipped & b.outside).sum())
    np.testing.assert_allclose(clipped.x, b.ratio[b.clipped])
    # every clipped token lies in a zero-gradient corner
    cx, cy = np.asarray(clipped.x), np.asarray(clipped.y)
    assert np.all(((cx > 1.2) & (cy > 0)) | ((cx < 0.8) & (cy < 0)))
    text = fig.layout.annotations[0].text
    assert f"clipped (gradient 0): {100 * b.fraction_clipped:.1f}%" in text
    assert f"share of |d/dρ| kept: {100 * b.surviving_share:.1f}% of Σ|A|" in text


def test_gae_figure_draws_the_trajectory_and_each_lambda():
    p = GAE_PRESETS["sparse"]
    lams = [0.0, 0.5, 0.95, 1.0]
    A = np.stack([gae(p.rewards, p.values, p.gamma, lm) for lm in lams])
    fig = gae_figure(p.rewards, p.values, td_errors(p.rewards, p.values, p.gamma), lams, A, lam=0.95)
    np.testing.assert_allclose(fig.data[0].y, p.rewards)
    np.testing.assert_allclose(fig.data[1].y, p.values)
    np.testing.assert_allclose(fig.data[2].y, [0.0, 0.0, 0.1, 0.1, 0.1, 0.2], atol=1e-15)  # r + V(s_t+1) - V(s_t)
    np.testing.assert_allclose(fig.data[3].y, fig.data[2].y)  # lambda = 0 is delta
    # lambda = 1 with gamma = 1 and V(s_T) = 0: A_t = (sum of rewards to go) - V(s_t) = 1 - V(s_t)
    np.testing.assert_allclose(fig.data[6].y, 1.0 - np.asarray(p.values[:-1]))
    assert fig.data[3].name == "λ = 0 (one-step TD)" and fig.data[6].name == "λ = 1 (Monte Carlo)"
    assert fig.data[5].line.width == 4 and fig.data[5].line.color == PALETTE["optimised"]
    with pytest.raises(ValueError, match="shape"):
        gae_figure(p.rewards, p.values, td_errors(p.rewards, p.values, 1.0), [0.0], A)


def test_gae_bias_variance_figure():
    s = gae_bias_variance(n=500)
    fig = gae_bias_variance_figure(s, lam=0.95)
    np.testing.assert_allclose(fig.data[0].y, s.bias_sq_exact)
    np.testing.assert_allclose(fig.data[3].y, s.variance)
    np.testing.assert_allclose(fig.data[4].y, s.bias_sq_exact + s.variance_exact)
    assert fig.layout.shapes[0].x0 == s.best_lam == pytest.approx(0.7)
    assert fig.layout.shapes[1].x0 == 0.95


def test_kl_estimators_figure():
    s = kl_estimator_study([0.5, 0.3, 0.15, 0.05], [0.2, 0.3, 0.3, 0.2], n=1000)
    r = np.geomspace(0.1, 10, 201)
    curves = kl_estimators(np.zeros_like(r), np.log(r))
    fig = kl_estimators_figure(s, r, curves)
    k1, k2, k3 = (np.asarray(fig.data[k].y) for k in range(3))
    np.testing.assert_allclose(k1, -np.log(r))
    assert k1[-1] < 0 and np.all(k3 >= 0) and np.all(k2 >= 0)
    bars = fig.data[3]
    np.testing.assert_allclose(bars.y, s.mean)
    np.testing.assert_allclose(bars.error_y.array, s.std)
    np.testing.assert_allclose(fig.data[4].y, s.sample_mean)
    assert fig.layout.shapes[0].y0 == pytest.approx(s.exact_kl)
    assert f"{s.exact_kl:.4f}" in fig.layout.annotations[0].text


def test_memory_figure_stacks_the_models():
    fig = rlhf_memory_figure({m: rlhf_memory(7e9, method=m) for m in ("ppo", "grpo", "dpo")})
    names = [t.name for t in fig.data]
    assert names == ["policy (trains)", "reference (frozen)", "reward model (frozen)", "critic (trains)"]
    assert list(fig.data[3].x) == [112.0, 0.0, 0.0]  # the critic only in PPO
    assert [a.text for a in fig.layout.annotations] == [" 252 GB", " 140 GB", " 126 GB"]
    assert fig.data[0].marker.color == PALETTE["optimised"] and fig.data[1].marker.color == PALETTE["reference"]


def test_every_figure_is_valid_plotly():
    p = GAE_PRESETS["dense"]
    A = np.stack([gae(p.rewards, p.values, p.gamma, lm) for lm in (0.0, 1.0)])
    r = np.geomspace(0.1, 10, 11)
    figs = [
        _clip_fig()[1],
        clip_batch_figure(token_batch(n=50)),
        gae_figure(p.rewards, p.values, td_errors(p.rewards, p.values, p.gamma), [0.0, 1.0], A),
        gae_bias_variance_figure(gae_bias_variance(n=50)),
        kl_estimators_figure(kl_estimator_study([0.6, 0.4], [0.5, 0.5], n=10), r, kl_estimators(0 * r, np.log(r))),
        rlhf_memory_figure({"PPO": rlhf_memory(1e9)}),
    ]
    for fig in figs:
        go.Figure(fig.to_dict())  # raises ValueError on an invalid property


def test_fixed_writes_a_real_minus_sign():
    from viz import format as fmt

    assert [fmt.fixed(x) for x in (-0.1234, 0.5, 0.0)] == ["\u22120.123", "0.500", "0.000"]
    assert fmt.fixed(-2, 2) == "\u22122.00" and fmt.fixed(1.23456, 4) == "1.2346"
