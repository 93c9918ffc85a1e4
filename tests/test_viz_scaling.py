"""viz.scaling: the figures carry the right data, pass plotly's validation, and the slider moves the plan."""

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from core import scaling
from viz.scaling import PLAN_TRACE, isoflop_family_figure, isoflop_figure, plan_readout


@pytest.fixture(scope="module")
def study():
    return scaling.isoflop_study(2.7343872e20, 1.5e9)


@pytest.fixture(scope="module")
def u_curve(study):
    return isoflop_figure(
        study.curve, study.current, study.slider, study.slider_active, "Hoffmann", ("Epoch", study.other.N_opt)
    )


def test_figures_pass_plotly_validation(study, u_curve):
    go.Figure(u_curve.to_dict())  # raises on any invalid property
    family = isoflop_family_figure(
        study.budgets, study.family_N, study.family_loss, study.family_N_opt, study.family_loss_opt, 2.7e20
    )
    go.Figure(family.to_dict())


def test_u_curve_marks_optimum_rule_and_plan(study, u_curve):
    names = [t.name for t in u_curve.data]
    assert names[PLAN_TRACE].startswith("your plan")
    opt, rule, plan = u_curve.data[1], u_curve.data[2], u_curve.data[PLAN_TRACE]
    assert opt.x[0] == pytest.approx(1.016e9, rel=1e-3) and round(opt.y[0], 3) == 2.470
    assert rule.x[0] == pytest.approx(1.51e9, rel=1e-2)
    assert plan.x[0] == 1.5e9 and round(plan.y[0], 3) == 2.475
    curve = u_curve.data[0]
    assert np.all(np.diff(np.asarray(curve.x)) > 0)
    assert np.min(curve.y) == pytest.approx(study.current.loss_opt, abs=1e-4)  # the U's bottom is the optimum


def test_slider_steps_move_the_plan_and_rewrite_the_readout(study, u_curve):
    slider = u_curve.layout.sliders[0]
    assert slider.active == study.slider_active
    assert len(slider.steps) == len(study.slider.N)
    for i in (0, len(slider.steps) // 2, len(slider.steps) - 1):
        data_update, layout_update, traces = slider.steps[i].args
        assert list(traces) == [PLAN_TRACE]
        assert data_update["x"][0][0] == float(study.slider.N[i])
        assert data_update["y"][0][0] == pytest.approx(float(study.slider.loss[i]))
        assert layout_update["annotations[0].text"] == plan_readout(study.slider, i)
    assert u_curve.layout.annotations[0].text == plan_readout(study.slider, study.slider_active)


def test_readout_text_has_the_lesson_numbers(study):
    text = plan_readout(study.current)
    assert "N = 1.50B params on D = 30.4B tokens (20.3 tokens/param)" in text
    assert "loss 2.475" in text and "24.0 GB" in text and "3.00×10⁹ FLOP/token" in text


def test_family_bolds_the_current_budget(study):
    fig = isoflop_family_figure(
        study.budgets, study.family_N, study.family_loss, study.family_N_opt, study.family_loss_opt, 3e20
    )
    widths = [t.line.width for t in fig.data[:-1]]
    assert widths.index(max(widths)) == 2  # 1e20 is the nearest budget to 3e20
    frontier = fig.data[-1]
    assert np.all(np.diff(np.asarray(frontier.x)) > 0) and np.all(np.diff(np.asarray(frontier.y)) < 0)


def test_figure_json_is_small(u_curve):
    assert len(json.dumps(u_curve.to_plotly_json(), default=str)) < 300_000


def test_compact_readout_for_presenter_mode_keeps_the_numbers(study):
    full, short = plan_readout(study.current), plan_readout(study.current, compact=True)
    for number in ("1.50B", "30.4B", "20.3", f"{study.current.loss:.3f}", f"{study.current.excess_pct:+.2f}%"):
        assert number in full and number in short, number
    assert short.count("<br>") == 4 and max(len(line) for line in short.split("<br>")) < len(full.split("<br>")[0])
