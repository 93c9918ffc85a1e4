"""The policy-gradient page's view without Streamlit: its numbers against tests/policy_gradient_reference.py (sums over
answers in plain Python, every ordered group enumerated, a two-answer bandit for the 0/1 case, plain gradient ascent),
not core.policy_gradient; the drag's steps are the page at each group size."""

from __future__ import annotations

import numpy as np
import pytest

from tests import policy_gradient_reference as ref
from views import Options
from views import policy_gradient as view_of

SPEC = view_of.SPEC
ALL = Options(parts=frozenset({"main", *view_of.VIEWS}))
PI = (0.1, 0.2, 0.3, 0.4)
R = (1.0, 0.6, 0.3, 0.0)


def _readouts(state, options: Options = ALL) -> dict[str, str]:
    return {r.label: r.value for r in view_of.figures(state, options).readouts}


@pytest.mark.parametrize("G", [2, 4])
def test_the_spread_readouts_against_enumeration(G: int) -> None:
    r = _readouts(SPEC.defaults().replace(pg_G=str(G)), Options(parts=frozenset({"main"})))
    assert r["Expected reward J"] == f"{ref.objective(PI, R):.3f}"
    gm, v_gm = ref.group_moments(PI, R, "group_mean", G)
    _, v_loo = ref.group_moments(PI, R, "leave_one_out", G)
    norm, _ = ref.group_moments(PI, R, "group_norm", G)
    assert r["Group mean: E[g] on ∇J"] == f"{ref.on_gradient(PI, R, gm):.3f}" == f"{(G - 1) / G:.3f}"
    assert r["RLOO: variance ÷ the group mean's"] == f"{v_loo / v_gm:.2f}" == f"{(G / (G - 1)) ** 2:.2f}"
    assert r["Mean and std: E[g] on ∇J, cosine"] == (
        f"{ref.on_gradient(PI, R, norm):.2f}, {ref.cosine(PI, R, norm):.3f}"
    )
    g = ref.gradient(PI, R)
    gg = ref.dot(g, g)
    bs = (0.0, 0.5, ref.objective(PI, R), ref.best_baseline(PI, R))
    v = [ref.single_variance(PI, R, b, G) / gg for b in bs]
    assert r["tr Cov, no baseline"] == f"{v[0]:.2f}" and r["tr Cov, best constant b*"] == f"{v[3]:.2f}"


@pytest.mark.parametrize("G", [2, 4])
def test_the_bars_are_the_projections_own_sd_against_enumeration(G: int) -> None:
    """Each bar spans the exact mean ± the sd of ⟨g, ∇J⟩ / |∇J|², the spread of the points it stands beside (not
    √tr Cov / |∇J|, which also counts the directions orthogonal to ∇J)."""
    fig = view_of.figures(SPEC.defaults().replace(pg_G=str(G)), Options(parts=frozenset({"main"}))).figures["main"]
    bars = [t for t in fig.data if t.legendgroup == "sd"]
    assert bars[0].name == "exact mean ± 1 sd along ∇J" and len(bars) == len(view_of.ORDER)
    J, bstar = ref.objective(PI, R), ref.best_baseline(PI, R)
    kinds = [("single", 0.0), ("single", 0.5), ("single", J), ("single", bstar), ("group_mean", 0.0),
             ("leave_one_out", 0.0), ("group_norm", 0.0)]  # fmt: skip
    for bar, (kind, b) in zip(bars, kinds, strict=True):
        half = (bar.x[1] - bar.x[0]) / 2
        assert half == pytest.approx(ref.projected_sd(PI, R, kind, G, b), rel=1e-9), (kind, b)


def test_b_star_equals_the_mean_reward_only_for_the_uniform_policy() -> None:
    helps = {r.label: r.help for r in view_of.figures(SPEC.defaults().replace(pg_policy="uniform: 0.25 each"),
                                                       ALL).readouts}  # fmt: skip
    assert helps["Best constant b*"].endswith("equals E[r] here (every |s_a|² is the same)")
    uniform = (0.25,) * 4
    assert ref.best_baseline(uniform, R) == pytest.approx(ref.objective(uniform, R))
    helps = {r.label: r.help for r in view_of.figures(SPEC.defaults(), ALL).readouts}
    assert helps["Best constant b*"].endswith(f"not E[r] = {ref.objective(PI, R):.3f}")
    mostly, checker = (0.7, 0.1, 0.1, 0.1), (1.0, 0.0, 0.0, 0.0)  # the explanation's example
    assert f"{ref.best_baseline(mostly, checker):.3f}, {ref.objective(mostly, checker):.3f}" == "0.175, 0.700"
    assert ref.single_variance(mostly, checker, 0.7) > ref.single_variance(mostly, checker, 0.0)


def test_graded_rewards_turn_the_std_normalised_gradient_and_0_1_rewards_do_not() -> None:
    graded = view_of.figures(SPEC.defaults(), Options(parts=frozenset({"main"}))).readouts
    checker = view_of.figures(SPEC.defaults().replace(pg_rewards="checker: 1, 0, 0, 0")).readouts
    cos = {x.label: x.value for x in graded}["Mean and std: E[g] on ∇J, cosine"].split(", ")[1]
    assert float(cos) < 0.99
    assert {x.label: x.value for x in checker}["Mean and std: E[g] on ∇J, cosine"].endswith(", 1.000")


def test_the_zero_tab() -> None:
    r = _readouts(SPEC.defaults())
    assert r["Σ_a π_a b (e_a − π)"] == "0"
    assert r["Best constant b*"] == f"{ref.best_baseline(PI, R):.3f}"
    vals = (ref.single_variance(PI, R, 0.5), ref.single_variance(PI, R, ref.best_baseline(PI, R)),
            ref.single_variance(PI, R, 0.0))  # fmt: skip
    assert r["One answer: tr Cov at your b"] == f"{vals[0]:.4f}" and r["One answer: tr Cov at b*"] == f"{vals[1]:.4f}"
    fig = view_of.figures(SPEC.defaults(), ALL).figures[view_of.ZERO]
    sums = next(t for t in fig.data if t.name == "the sum: 0").y
    assert np.max(np.abs(sums)) < 1e-15


def test_the_group_tab_and_the_0_1_weights() -> None:
    r = _readouts(SPEC.defaults())
    want = f"{ref.binary_scale(0.5, 4):.2f} / {ref.binary_scale(0.1, 4):.2f}"
    assert r["0/1 rewards: E[g] ÷ ∇J at p = 0.5 / 0.1"] == want
    for G in (2, 3):  # one weight for every p
        assert ref.binary_scale(0.5, G) == pytest.approx(ref.binary_scale(0.1, G))


def test_the_learning_readouts_against_plain_ascent() -> None:
    r = _readouts(SPEC.defaults())
    assert r["J after 40 exact steps: ∇J"] == f"{ref.ascent(PI, R, 'true', 4, 40, 1.0):.3f}"
    assert r["J after 40 exact steps: group mean"] == f"{ref.ascent(PI, R, 'group_mean', 4, 40, 1.0):.3f}"
    assert r["J after 40 exact steps: mean and std"] == f"{ref.ascent(PI, R, 'group_norm', 4, 40, 1.0):.3f}"


def test_the_drag_covers_every_group_size_and_each_step_is_the_page_at_that_g() -> None:
    main = Options(parts=frozenset({"main"}))
    view = view_of.figures(SPEC.defaults(), main)
    drag = view.drags["main"]
    assert drag.field == "pg_G" and drag.values == view_of.G_CHOICES
    fig = view.figures["main"]
    steps = fig.layout.sliders[0].steps
    assert len(steps) == len(view_of.G_VALUES) and fig.layout.sliders[0].active == view_of.G_VALUES.index(4)
    for i, G in enumerate(view_of.G_VALUES):
        other = view_of.figures(SPEC.defaults().replace(pg_G=str(G)), main).figures["main"]
        assert len(other.data) == len(fig.data)  # a step restyles existing traces only
        for k, x in enumerate(steps[i].args[0]["x"]):
            np.testing.assert_allclose(np.asarray(other.data[k].x, float), np.asarray(x, float))
        assert steps[i].args[1]["annotations[0].text"] == other.layout.annotations[0].text


def test_every_preset_builds_its_tab() -> None:
    for name, values in SPEC.presets.items():
        view = view_of.figures(SPEC.state(values), Options(parts=frozenset({"main"})))
        assert values["pg_view"] in view.figures and "main" in view.figures, name
