"""viz.kl_leash and viz.dpo: the figures carry the right data (bars, slider steps, markers, curves)."""

import math

import numpy as np
import pytest

from core.dpo import DPO_PRESETS, dpo_curve, dpo_loss
from core.kl_leash import LEASH_PRESETS, beta_grid, leash_sweep, random_policies
from viz.dpo import dpo_figure
from viz.format import number
from viz.kl_leash import kl_hacking_figure, kl_leash_figure, kl_sweep_figure, kl_theorem_figure
from viz.style import LIGHT, PALETTE


def _sweep(key="toy", beta=None, n=121):
    p = LEASH_PRESETS[key]
    return leash_sweep(p.pi_ref, p.r, beta_grid(n, include=p.beta if beta is None else beta), p.r_true)


def _y(trace):
    return np.asarray(trace.y, dtype=float)


# --------------------------------------------------------------------------------------------------------------
# (1) bars and the slider


def test_bars_show_pi_ref_and_pi_star_at_the_page_beta():
    s = _sweep("toy")
    fig = kl_leash_figure(s, 1.0)
    ref, opt = fig.data
    np.testing.assert_allclose(_y(ref), [0.5, 0.5])
    np.testing.assert_allclose(_y(opt), [0.73106, 0.26894])
    assert ref.marker.color == PALETTE["reference"] and ref.marker.opacity < 0.5
    assert opt.marker.color == PALETTE["optimised"] and opt.marker.opacity is None
    text = fig.layout.annotations[0].text
    assert "β = 1<" in text
    assert "KL(π* ‖ π_ref) = 0.111 nats" in text
    assert "E<sub>π*</sub>[r] = 0.731" in text
    assert "E[r] − β·KL = 0.620" in text and "β·log Z = 0.620" in text
    assert "H(π*) = 0.582 nats" in text
    assert "true" not in text  # no proxy gap in the toy


def test_slider_steps_update_the_orange_bars_and_the_readouts():
    s = _sweep("toy", beta=0.5)
    fig = kl_leash_figure(s, 0.5)
    slider = fig.layout.sliders[0]
    assert len(slider.steps) == len(s.beta) == 122  # 121 log-spaced values plus the page's 0.5
    assert 61 <= len(slider.steps) <= 122
    assert s.beta[slider.active] == 0.5 and slider.steps[slider.active].label == "0.5"
    for i in (0, slider.active, len(s.beta) - 1):
        step = slider.steps[i]
        assert step.method == "update"
        data, layout, traces = step.args
        assert list(traces) == [1]  # only the orange bars move
        np.testing.assert_allclose(data["y"][0], s.pi[i], atol=1e-5)
        assert layout["annotations[0].text"].startswith(f"<b>β = {s.beta[i]:.3g}</b>")
    # the quick check: at beta = 0.5 the better answer has 0.881
    active = slider.steps[slider.active].args[0]["y"][0]
    assert round(float(active[0]), 3) == 0.881
    # the ends: beta = 1e-3 is greedy, beta = 1e3 is pi_ref
    np.testing.assert_allclose(slider.steps[0].args[0]["y"][0], [1.0, 0.0])
    np.testing.assert_allclose(slider.steps[-1].args[0]["y"][0], [0.5, 0.5], atol=1e-3)


def test_slider_starts_at_the_nearest_step_when_beta_is_off_the_grid():
    s = leash_sweep([0.5, 0.5], [1.0, 0.0], beta_grid(61))
    fig = kl_leash_figure(s, 0.5)
    assert len(fig.layout.sliders[0].steps) == 61
    assert s.beta[fig.layout.sliders[0].active] == pytest.approx(0.501, rel=1e-3)


def test_bars_name_answers_and_show_the_proxy_gap():
    p = LEASH_PRESETS["reward_hack"]
    fig = kl_leash_figure(_sweep("reward_hack"), p.beta, p.answers)
    assert list(fig.data[0].x) == list(fig.data[1].x)
    assert fig.data[0].x[3] == "exploit<br>r = 2 (true −1)"
    assert "true E<sub>π*</sub>[r]" in fig.layout.annotations[0].text
    with pytest.raises(ValueError, match="labels"):
        kl_leash_figure(_sweep("reward_hack"), p.beta, ["a", "b"])


def test_ten_answers_figure_is_small():
    rng = np.random.default_rng(0)
    pi_ref, r = rng.dirichlet(np.ones(10)), rng.normal(size=10)
    s = leash_sweep(pi_ref, r, beta_grid(121, include=0.37), r + rng.normal(size=10))
    fig = kl_leash_figure(s, 0.37)
    assert len(fig.data[1].y) == 10
    assert len(fig.to_json()) < 300_000


# --------------------------------------------------------------------------------------------------------------
# (2) the sweep view


def test_sweep_view_curves_and_current_beta():
    p = LEASH_PRESETS["k5"]
    s = _sweep("k5")
    fig = kl_sweep_figure(s, p.beta, p.answers)
    probs = [t for t in fig.data if t.name and t.name.startswith("π*(")]
    assert len(probs) == 5
    for k, t in enumerate(probs):
        np.testing.assert_allclose(np.asarray(t.x, dtype=float), s.beta)
        np.testing.assert_allclose(_y(t), s.pi[:, k])
    kl = next(t for t in fig.data if t.name == "KL(π* ‖ π_ref)")
    np.testing.assert_allclose(_y(kl), s.kl)
    reward = next(t for t in fig.data if t.name == "E[r]")
    np.testing.assert_allclose(_y(reward), s.reward)
    assert all(ax.type == "log" for ax in (fig.layout.xaxis, fig.layout.xaxis2, fig.layout.xaxis3))
    assert len(fig.layout.shapes) == 3 and all(sh.x0 == p.beta == sh.x1 for sh in fig.layout.shapes)
    marks = [t for t in fig.data if t.mode == "markers"]
    i0 = s.index(p.beta)
    np.testing.assert_allclose(sorted(_y(marks[0])), sorted(s.pi[i0]))
    assert _y(marks[1])[0] == pytest.approx(s.kl[i0]) and _y(marks[2])[0] == pytest.approx(s.reward[i0])
    assert fig.layout.annotations[0].x == pytest.approx(math.log10(p.beta))  # log axes take log10 positions


def test_sweep_view_shows_the_true_reward_when_it_differs():
    s = _sweep("reward_hack")
    fig = kl_sweep_figure(s, 0.5)
    true = next(t for t in fig.data if t.name == "E[r_true]")
    np.testing.assert_allclose(_y(true), s.true_reward)


# --------------------------------------------------------------------------------------------------------------
# (3) reward hacking


def test_hacking_curves_and_peak():
    s = _sweep("reward_hack")
    fig = kl_hacking_figure(s, 0.5)
    proxy, true, current, peak = fig.data
    np.testing.assert_allclose(np.asarray(proxy.x, dtype=float), s.kl)
    np.testing.assert_allclose(_y(proxy), s.reward)
    np.testing.assert_allclose(_y(true), s.true_reward)
    np.testing.assert_allclose(np.asarray(proxy.customdata, dtype=float), s.beta)
    i0 = s.index(0.5)
    np.testing.assert_allclose(_y(current), [s.reward[i0], s.true_reward[i0]])
    ip = s.true_peak
    assert peak.x[0] == pytest.approx(s.kl[ip]) and peak.y[0] == pytest.approx(s.true_reward.max())
    # the over-optimisation shape: the peak is inside the curve, and the true reward ends below it
    assert 0 < s.kl[ip] < s.kl.max() and s.true_reward[0] < s.true_reward[ip] - 1
    sq = kl_hacking_figure(s, 0.5, sqrt_kl=True)
    np.testing.assert_allclose(np.asarray(sq.data[0].x, dtype=float), np.sqrt(s.kl))


def test_hacking_without_a_proxy_gap_says_so():
    fig = kl_hacking_figure(_sweep("k5"), 0.5)
    assert len(fig.data) == 3
    assert "true reward = proxy reward" in fig.layout.annotations[0].text


# --------------------------------------------------------------------------------------------------------------
# (4) the theorem check


@pytest.mark.parametrize("key", sorted(LEASH_PRESETS))
def test_theorem_plane_no_point_above_the_line(key):
    p = LEASH_PRESETS[key]
    s = _sweep(key)
    cloud = random_policies(p.pi_ref, p.r, p.beta, n=10_000, seed=1)
    fig = kl_theorem_figure(cloud, s, p.beta, max_points=3000)
    dots, frontier, line, star = fig.data
    x, y = np.asarray(dots.x, dtype=float), np.asarray(dots.y, dtype=float)
    assert len(x) == 3000 and "3,000 of 10,000 shown" in dots.name
    assert np.all(y <= cloud.optimum + p.beta * x + 1e-5)  # float32 dots: a float32 tolerance
    assert star.x[0] == pytest.approx(cloud.optimum_kl) and star.y[0] == pytest.approx(cloud.optimum_reward)
    # the line E[r] = beta log Z + beta KL passes through pi*
    slope = (line.y[1] - line.y[0]) / (line.x[1] - line.x[0])
    assert slope == pytest.approx(p.beta)
    assert line.y[0] + slope * star.x[0] == pytest.approx(star.y[0], abs=1e-9)
    np.testing.assert_allclose(np.asarray(frontier.x, dtype=float), s.kl)
    assert "none beats π*" in fig.layout.title.text
    # the best random policy is always among the dots drawn
    best = int(np.argmax(cloud.objective))
    assert np.any(np.isclose(x, cloud.kl[best], rtol=1e-6) & np.isclose(y, cloud.reward[best], rtol=1e-6))


def test_theorem_objective_histogram():
    p = LEASH_PRESETS["toy"]
    cloud = random_policies(p.pi_ref, p.r, p.beta, n=5000)
    fig = kl_theorem_figure(cloud, _sweep("toy"), p.beta, mode="objective")
    (bars,) = fig.data
    assert int(np.sum(_y(bars))) == 5000
    assert fig.layout.shapes[0].x0 == pytest.approx(math.log(0.5 * math.e + 0.5))
    assert max(np.asarray(bars.x, dtype=float)) < cloud.optimum
    with pytest.raises(ValueError, match="mode"):
        kl_theorem_figure(cloud, _sweep("toy"), p.beta, mode="3d")


def test_theorem_figure_small_cloud_is_drawn_whole():
    p = LEASH_PRESETS["toy"]
    cloud = random_policies(p.pi_ref, p.r, p.beta, n=500)
    fig = kl_theorem_figure(cloud, _sweep("toy"), p.beta)
    assert len(fig.data[0].x) == 500 and fig.data[0].name == "random policies"


# --------------------------------------------------------------------------------------------------------------
# (5) DPO


def _dpo_fig(key):
    p = DPO_PRESETS[key]
    out = dpo_loss(p.logp_w, p.logp_l, p.ref_logp_w, p.ref_logp_l, p.beta)
    curve = dpo_curve(out.margin)
    return out, curve, dpo_figure(*curve, out.margin, out.loss, out.weight, both_fell=out.both_fell)


def test_dpo_figure_worked_example_b():
    _, curve, fig = _dpo_fig("worked_b")
    loss, weight, start, pair, pair_w = fig.data
    np.testing.assert_allclose(_y(loss), curve.loss)
    np.testing.assert_allclose(_y(weight), curve.weight)
    assert (start.x[0], start.y[0]) == (0.0, pytest.approx(math.log(2)))
    assert pair.x[0] == pytest.approx(0.3) and round(pair.y[0], 3) == 0.554
    assert round(pair_w.y[0], 3) == 0.426
    texts = [a.text for a in fig.layout.annotations]
    assert any("loss 0.554, weight 0.426" in t for t in texts)
    assert not any("both log-probabilities fell" in t for t in texts)


def test_dpo_figure_warns_when_both_log_probabilities_fell():
    out, _, fig = _dpo_fig("both_fell")
    assert out.both_fell
    assert any("both log-probabilities fell" in a.text for a in fig.layout.annotations)


def test_dpo_figure_keeps_a_far_pair_in_view():
    out = dpo_loss(-40.0, -1.0, -1.0, -1.0, 0.5)  # margin -19.5: loss 19.5
    fig = dpo_figure(*dpo_curve(out.margin), out.margin, out.loss, out.weight)
    assert fig.layout.yaxis.range[1] >= out.loss
    assert min(fig.data[0].x) <= out.margin


def test_sweep_figure_names_the_two_limits_under_the_beta_axis():
    fig = kl_sweep_figure(_sweep("toy"), 1.0)
    notes = {a.text: a for a in fig.layout.annotations if "β →" in a.text}
    assert set(notes) == {"← β → 0: all mass on the top reward", "β → ∞: back to π_ref →"}
    assert all(a.yref == "paper" and a.y == 0 and a.yanchor == "top" for a in notes.values())


def test_number_formats_readouts_like_the_figure_panel():
    assert number(0.11067) == "0.111" and number(-0.1) == "−0.100" and number(float("inf")) == "∞"
    assert number(2.5e-5) == "2.50e−05" and number(0.0) == "0.000"


def test_ten_answers_get_stacked_unrotated_tick_labels_and_dark_safe_colours():
    r = np.linspace(-1, 2, 10)
    s = leash_sweep(np.full(10, 0.1), r, beta_grid(61), r_true=-r)
    fig = kl_leash_figure(s, 1.0, [f"y{k + 1}" for k in range(10)])
    assert fig.layout.xaxis.tickangle == 0 and fig.layout.xaxis.tickfont.size == 12
    assert fig.data[1].x[0] == "y1<br>r=−1<br>true 1"
    # the slider's own font is hidden, so its current value has its own (text-contrast) colour
    assert fig.layout.sliders[0].currentvalue.font.color == LIGHT.ink["neutral"]
    assert "255,255,255" not in fig.layout.annotations[0].bgcolor  # no white panel on a dark theme
    sweep_fig = kl_sweep_figure(s, 1.0)
    colours = {t.line.color for t in sweep_fig.data if t.line is not None and t.line.color}
    assert "#000000" not in colours and "black" not in colours


@pytest.mark.parametrize("key", ["toy", "reward_hack", "k5"])
def test_figures_assembled_without_validation_are_valid_plotly(key):
    """The builders skip plotly's per-property validation (viz.style.figure_from_dict); rebuilding their output
    with validation raises on any misspelt property."""
    import plotly.graph_objects as go

    p = LEASH_PRESETS[key]
    s = _sweep(key)
    cloud = random_policies(p.pi_ref, p.r, p.beta, n=500, device="cpu")
    pair = dpo_loss(-10.0, -15.0, -12.0, -14.0, 0.1)
    figures = [
        kl_leash_figure(s, p.beta, p.answers),
        kl_sweep_figure(s, p.beta, p.answers),
        kl_hacking_figure(s, p.beta),
        kl_hacking_figure(s, p.beta, sqrt_kl=True),
        kl_theorem_figure(cloud, s, p.beta),
        kl_theorem_figure(cloud, s, p.beta, mode="objective"),
        dpo_figure(*dpo_curve(pair.margin), pair.margin, pair.loss, pair.weight, both_fell=True),
    ]
    for fig in figures:
        go.Figure(fig.to_dict())  # raises ValueError on an invalid property
