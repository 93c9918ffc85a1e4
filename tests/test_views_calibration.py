"""The calibration page's view without Streamlit: its numbers against tests/calibration_reference.py (samples drawn
again, ECE by a plain loop, temperatures fitted by scipy on a likelihood written there, the c^γ closed form by
quad, the exact-match crossing by brentq), not core.calibration; the drag, predict-first and presets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests import calibration_reference as ref
from views import Options
from views import calibration as view_of

SPEC = view_of.SPEC
ALL = Options(parts=frozenset({"main", *view_of.VIEWS}))
MAIN = Options(parts=frozenset({"main"}))


def _readouts(state, options: Options = ALL) -> dict[str, str]:
    return {r.label: r.value for r in view_of.figures(state, options).readouts}


@pytest.mark.parametrize(("kappa", "bins", "binning"), [("2.5", "10", "equal width"), ("4", "5", "equal mass"),
                                                        ("1", "15", "equal width")])  # fmt: skip
def test_the_toy_against_a_plain_loop_and_a_scipy_fit(kappa: str, bins: str, binning: str) -> None:
    state = SPEC.defaults().replace(cal_kappa=kappa, cal_bins=bins, cal_binning=binning)
    r = _readouts(state, MAIN)
    want = ref.toy(float(kappa), int(bins), view_of.BINNINGS[binning])
    assert r["ECE after tuning"] == f"{want['tuned']:.3f}"
    assert r["Fitted temperature T"] == f"{want['T']:.2f}"
    assert r["ECE after temperature scaling"] == f"{want['scaled']:.3f}"
    assert r["Right side of ½"] == f"{want['right']:.3f}"
    assert abs(want["T"] - float(kappa)) < 0.1 * float(kappa)  # the fitted T follows κ


def test_tuning_worsens_ece_along_the_drag_and_temperature_scaling_undoes_it() -> None:
    toys = [view_of.figures(SPEC.defaults().replace(cal_kappa=k), MAIN).facts["toy"] for k in view_of.KAPPA_CHOICES]
    tuned = [t["ece"]["tuned"] for t in toys]
    assert tuned == sorted(tuned) and tuned[-1] > 0.15
    assert all(t["ece"]["scaled"] < 0.02 for t in toys)
    assert len({t["right"]["tuned"] for t in toys}) == 1  # what is right never moves


def test_the_drag_covers_every_kappa_and_keeps_its_traces() -> None:
    view = view_of.figures(SPEC.defaults(), MAIN)
    drag = view.drags["main"]
    assert drag.field == "cal_kappa" and drag.values == view_of.KAPPA_CHOICES
    fig = view.figures["main"]
    slider = fig.layout.sliders[0]
    assert len(slider.steps) == len(view_of.KAPPAS) and slider.active == view_of.KAPPA_CHOICES.index("2.5")
    for i, k in enumerate(view_of.KAPPA_CHOICES):
        other = view_of.figures(SPEC.defaults().replace(cal_kappa=k), MAIN).figures["main"]
        assert len(other.data) == len(fig.data) == 8
        step = slider.steps[i]
        assert list(step.args[2]) == [2, 3, 4, 6, 7]
        for j, trace in enumerate(step.args[2]):
            assert np.allclose(np.asarray(other.data[trace].y, float), np.asarray(step.args[0]["y"][j], float),
                               equal_nan=True)  # fmt: skip
        assert other.layout.annotations[0].text == step.args[1]["annotations[0].text"]
        assert f"κ = {k}" in step.args[1]["annotations[0].text"]


def test_the_known_miscalibration_against_quad_and_a_loop() -> None:
    state = SPEC.defaults().replace(cal_view=view_of.POWER, cal_gamma=2.0, cal_n="2000")
    view = view_of.figures(state, ALL)
    r = {x.label: x.value for x in view.readouts}
    assert r["ECE of infinitely many predictions (closed form)"] == f"{ref.expected_ece_power(2.0):.4f}"
    c, a = ref.power_sample(2000, 2.0)
    assert r["Sample ECE, 2,000 predictions"] == f"{ref.loop_ece(c, a, 10):.4f}"
    # while every bin's gap has one sign the sample ECE is |mean c − accuracy| for both binnings; on 2,000
    # predictions that holds up to M = 10 here, and noise flips some bins' signs at larger M (ECE then above it)
    gap = abs(sum(c) / len(c) - sum(a) / len(a))
    p = view.facts["power"]
    assert np.allclose(p["sweep_w"][:10], gap) and np.allclose(p["sweep_m"][:10], gap)
    assert (p["sweep_w"] >= gap - 1e-12).all() and p["sweep_w"].max() > gap + 1e-4


def test_the_expected_ece_is_the_same_for_every_binning_at_large_n() -> None:
    p = view_of.figures(SPEC.defaults().replace(cal_view=view_of.POWER, cal_n="100000"), ALL).facts["power"]
    assert abs(p["sweep_w"] - ref.expected_ece_power(2.0)).max() < 0.01


def test_the_bias_shows_when_bins_of_both_signs_appear() -> None:
    """γ = 1 (calibrated) on 500 predictions: the population ECE is 0, the sample's grows with the number of bins."""
    p = view_of.figures(SPEC.defaults().replace(cal_view=view_of.POWER, cal_gamma=1.0, cal_n="500"), ALL)
    p = p.facts["power"]
    assert p["expected"] == 0.0
    assert p["sweep_w"][-1] > p["sweep_w"][4] > 0


@pytest.mark.parametrize("t0", [2.0, 3.0])
def test_temperature_scaling_against_scipy(t0: float) -> None:
    r = _readouts(SPEC.defaults().replace(cal_view=view_of.TEMP, cal_t0=t0))
    want = ref.multiclass(t0)
    assert r["Fitted T (10 classes)"] == f"{want['T']:.3f}"
    assert r["Test NLL"] == f"{want['nll_before']:.3f} → {want['nll_after']:.3f} nats"
    assert r["Test ECE"] == f"{want['ece_before']:.3f} → {want['ece_after']:.3f}"
    assert r["Test accuracy"] == f"{want['accuracy']:.3f} → {want['accuracy']:.3f}"


@pytest.mark.parametrize(("k", "tau"), [(5, 0.5), (10, 0.5), (1, 0.3), (20, 0.9)])
def test_the_crossing_by_a_root_search(k: int, tau: float) -> None:
    r = _readouts(SPEC.defaults().replace(cal_view=view_of.EMERGE, cal_k=k, cal_tau=tau))
    assert r[f"Exact match on {k} token{'' if k == 1 else 's'} reaches τ"] == f"log10 C = {ref.crossing(tau, k):.2f}"
    assert r["Per-token accuracy reaches τ"] == f"log10 C = {ref.crossing(tau, 1):.2f}"
    assert r["The delay"] == f"{math.log10(k) / ref.ALPHA:.2f} decades"


def test_exact_match_is_the_per_token_curve_shifted() -> None:
    """p(x)^k = p(x − log10(k)/α): on a log-compute axis exact match is delayed, not sharper."""
    x = np.linspace(18, 26, 81)
    p = lambda x: np.exp(-(10 ** (-ref.ALPHA * (x - ref.X0))))  # noqa: E731
    for k in (2, 5, 10):
        assert np.allclose(p(x) ** k, p(x - math.log10(k) / ref.ALPHA), rtol=1e-9, atol=1e-300)


def test_predict_first_hides_the_accuracy_at_0_9_then_reveals_it() -> None:
    """The tuned curve at a stated 0.9: sigmoid(logit(0.9) / κ) = 1 / (1 + 9^(−1/κ)), 0.707 at κ = 2.5."""
    value = 1 / (1 + 9 ** (-1 / 2.5))
    truth = f"{value:.3f}"
    hidden = view_of.figures(SPEC.defaults().replace(predict_cal=True), ALL)
    assert hidden.facts["predict"] == "hidden" and "main" not in hidden.drags
    assert all(truth not in r.value and truth not in (r.help or "") for r in hidden.readouts)
    shown = view_of.figures(SPEC.defaults().replace(predict_cal=True, guess_cal_acc=0.8), ALL)
    r = {x.label: x.value for x in shown.readouts}
    assert r["Accuracy at a stated 0.9 (the answer)"] == truth == "0.707" and r["Your guess"] == "0.800"
    assert r["Error"] == f"{0.8 - value:+.3f}".replace("-", "−")
    # the sample agrees: the tuned model's bin (0.8, 0.9] and (0.9, 1.0] straddle it
    c, a = ref.toy_sample()
    stated = ref.sharpened(c, 2.5)
    near = [y for x, y in zip(stated, a, strict=True) if 0.88 < x <= 0.92]
    assert abs(sum(near) / len(near) - value) < 0.05


@pytest.mark.parametrize("name", list(SPEC.presets))
def test_presets_build(name: str) -> None:
    view = view_of.figures(SPEC.defaults().replace(**SPEC.presets[name]), MAIN)
    assert "main" in view.figures


def test_the_five_bin_preset_lowers_the_ece_it_names() -> None:
    name = next(k for k in SPEC.presets if k.startswith("A13.3: 5 equal-mass bins"))
    state = SPEC.defaults().replace(**SPEC.presets[name])
    assert (state.cal_bins, state.cal_binning) == ("5", "equal mass")
    assert ref.toy(2.5, 5, "mass")["tuned"] < ref.toy(2.5, 10, "mass")["tuned"]
    assert ref.toy(2.5, 5, "width")["tuned"] < ref.toy(2.5, 10, "width")["tuned"]
