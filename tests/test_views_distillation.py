"""The distillation page's view without Streamlit: its numbers against tests/distillation_reference.py (scipy's normal
pdf and entropy on the page's grid, the mixture's closed-form moments, scipy.optimize for the reverse fit, scipy's
softmax for the soft targets, direct sums over the toy's sequences), not core.distillation; the drag's steps are the
page at each distance."""

from __future__ import annotations

import json

import pytest

from tests import distillation_reference as ref
from views import Options
from views import distillation as view_of

SPEC = view_of.SPEC
MAIN = Options(parts=frozenset({"main"}))


def _readouts(state, options: Options = MAIN) -> dict[str, str]:
    return {r.label: r.value for r in view_of.figures(state, options).readouts}


@pytest.mark.parametrize("d", ["4", "8"])
def test_the_fits_readouts_against_scipy(d: str) -> None:
    r = _readouts(SPEC.defaults().replace(dist_d=d))
    m, s = ref.forward_fit(float(d))
    assert r["Forward fit: mean, sd"] == f"{m + 0.0:.2f}, {s:.2f}"
    assert r["Forward fit: KL(p‖q), KL(q‖p)"] == "{:.3f}, {:.3f}".format(*ref.forward_kls(float(d)))
    rm, rs = ref.reverse_fit(float(d))
    assert r["Reverse fit: mean, sd"] == f"{round(rm, 2) + 0.0:.2f}, {rs:.2f}".replace("-", "−")
    assert r["Reverse fit: KL(p‖q), KL(q‖p)"] == "{:.3f}, {:.3f}".format(*ref.reverse_kls(float(d)))


def test_the_reverse_fit_stays_in_the_middle_at_d_5_and_jumps_by_d_6() -> None:
    """Two clear peaks (d > 2) and the reverse fit still in the middle, wider than a mode; by d = 6 it sits on one."""
    fits = {d: view_of.figures(SPEC.defaults().replace(dist_d=d), MAIN).facts for d in ("5", "5.5", "6")}
    assert abs(fits["5"]["reverse_mean"]) < 1e-3 and abs(fits["5.5"]["reverse_mean"]) < 1e-3
    assert fits["6"]["reverse_offset"] == pytest.approx(abs(ref.reverse_fit(6.0)[0]), abs=0.01)
    assert fits["6"]["reverse_offset"] > 2.5


def test_the_heavier_mode_wins() -> None:
    facts = view_of.figures(SPEC.defaults().replace(dist_d="8", dist_w="0.3"), MAIN).facts
    assert facts["reverse_mean"] == pytest.approx(ref.reverse_fit(8.0, 0.3)[0], abs=0.01)


def test_each_drag_step_is_the_page_at_that_distance() -> None:
    """The slider's step i restyles the three traces to what the page draws at d = values[i]."""
    import numpy as np

    view = view_of.figures(SPEC.defaults(), MAIN)
    drag = view.drags["main"]
    assert drag.field == "dist_d" and drag.values == view_of.D_CHOICES
    fig = view.figures["main"]
    steps = fig.layout.sliders[0].steps
    assert len(fig.data) == 3 and len(steps) == len(drag.values)
    for i in (0, 7, 9):
        other = view_of.figures(SPEC.defaults().replace(dist_d=drag.values[i]), MAIN)
        for j in range(3):
            np.testing.assert_allclose(steps[i].args[0]["y"][j], other.figures["main"].data[j].y)
        assert steps[i].args[1]["annotations[0].text"] == other.figures["main"].layout.annotations[0].text


def test_temperature_readouts_against_scipy() -> None:
    r = _readouts(SPEC.defaults().replace(dist_view=view_of.TEMPERATURE, dist_T=4.0))
    assert r["Soft targets: the top class's probability"] == f"{ref.soft(ref.V, 4.0).max():.3f}"
    assert r["Soft targets' entropy H(p_T)"] == f"{ref.entropy(4.0):.3f}"
    assert r["Soft loss gradient |∇ KL|, without T²"] == f"{ref.grad_norm(4.0, False):.4f}"
    assert r["Soft loss gradient |∇ T² KL|, with T²"] == f"{ref.grad_norm(4.0, True):.4f}"
    # the 1/T² fall and the T² factor's limit
    assert ref.grad_norm(40.0, False) * 40.0**2 == pytest.approx(ref.limit_norm(), rel=0.02)


def test_sequence_readouts_against_direct_sums() -> None:
    r = _readouts(SPEC.defaults().replace(dist_view=view_of.SEQUENCE, dist_smooth=0.05))
    st = ref.students(0.05)
    for m in view_of.METHODS:
        name = view_of.LABELS[m]
        assert r[f"{name}: KL(p‖q), KL(q‖p)"] == f"{st[m]['forward']:.3f}, {st[m]['reverse']:.3f}"
        assert r[f"{name}: q(A A), q(A A or B B)"] == f"{st[m]['mode']:.3f}, {st[m]['coherent']:.3f}"
    # the third student minimises the whole-sequence KL(q‖p), sampling's gradient included: MiniLLM's objective, not
    # GKD's, whose fixed point (q(y1) at the teacher's marginal) puts less on A A
    assert view_of.LABELS["on-policy"] == "whole-sequence reverse KL (MiniLLM's objective)"
    assert not any("GKD" in label for label in r)
    assert st["on-policy"]["mode"] > ref.gkd_fixed_point()[0, 0] + 0.1
    zero = _readouts(SPEC.defaults().replace(dist_view=view_of.SEQUENCE, dist_smooth=0.0))
    assert zero["sequence-level: KL(p‖q), KL(q‖p)"].startswith("∞, ")  # smoothing 0: infinite forward KL


def test_predict_hides_the_reverse_fit_and_reveals_it_with_the_guess() -> None:
    hidden = view_of.figures(SPEC.defaults().replace(predict_dist=True), MAIN)
    assert hidden.facts["predict"] == "hidden" and "main" not in hidden.drags
    assert {r.label: r.value for r in hidden.readouts}["Reverse fit: mean, sd"] == "?"
    shown = view_of.figures(SPEC.defaults().replace(predict_dist=True, guess_dist_mean=2.0), MAIN)
    r = {x.label: x.value for x in shown.readouts}
    assert r["Reverse fit: distance from the midpoint (the answer)"] == f"{abs(ref.reverse_fit(4.0)[0]):.2f}"
    assert r["Error"] == f"{2.0 - abs(ref.reverse_fit(4.0)[0]):+.2f}"


def test_the_reverse_objective_has_a_local_minimum_on_a_mode_before_the_jump() -> None:
    """At d = 5 the reverse fit is in the middle, yet a Gaussian on a mode is already a local minimum with a higher
    KL(q‖p) (Nelder-Mead from the mode, by scipy): the jump by d = 6 is a switch between optima, not a drift."""
    assert ref.reverse_optima(5.0) == 3 and ref.reverse_optima(4.0) == 1
    r = _readouts(SPEC.defaults().replace(dist_d="5"))
    assert r["Reverse fit: mean, sd"].startswith("0.00, ")


@pytest.mark.parametrize("k", ["1", "2"])
def test_the_predict_question_names_the_student_it_asks_about(k: str) -> None:
    """The question names the student the capacity control sets: one Gaussian, or a two-Gaussian mixture."""
    fig = view_of.figures(SPEC.defaults().replace(predict_dist=True, dist_k=k), MAIN).figures["main"]
    text = json.dumps(fig.to_dict()["layout"], ensure_ascii=False)
    assert ("A single Gaussian is fitted" in text) == (k == "1")
    assert ("A two-Gaussian mixture is fitted" in text) == (k == "2")
