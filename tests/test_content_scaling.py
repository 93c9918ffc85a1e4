"""The scaling page's interview-facing numbers, each against an independent numerical reference (scipy)."""

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

from core import scaling
from tests.apptest import no_exception, open_page
from views import scaling as view_of


def _loss(C, N, fit):
    f = scaling.FITS[fit]
    return f.E + f.A / N**f.alpha + f.B / (C / (6 * N)) ** f.beta  # the fit written out, independent of core


def _numeric_optimum(C, fit):
    """N_opt and L_opt of the iso-FLOP curve by a bounded scalar minimiser over log N."""
    res = minimize_scalar(lambda u: _loss(C, np.exp(u), fit), bounds=(np.log(1e6), np.log(1e14)), method="bounded",
                          options={"xatol": 1e-10})  # fmt: skip
    return np.exp(res.x), res.fun


@pytest.mark.parametrize(("C", "fit", "expect"), [
    (2.7e20, "hoffmann2022", 44), (1.2e21, "hoffmann2022", 51), (5.9e23, "hoffmann2022", 93),
    (2.73e20, "epoch2024", 22), (1e20, "epoch2024", 23), (1e24, "epoch2024", 18),
])  # fmt: skip
def test_optimal_tokens_per_param(C, fit, expect):
    N, _ = _numeric_optimum(C, fit)
    assert scaling.optimal_tokens_per_param(C, fit) == pytest.approx(C / (6 * N) / N, rel=1e-5)
    assert round(float(scaling.optimal_tokens_per_param(C, fit))) == expect


def test_chinchilla_70b_is_above_the_approach3_optimum_but_not_epochs():
    N_h, _ = _numeric_optimum(5.88e23, "hoffmann2022")
    N_e, _ = _numeric_optimum(5.88e23, "epoch2024")
    assert 3.2e10 < N_h < 3.3e10 < 7e10  # the approach-3 constants want ~32.5B params, half of Chinchilla's 70B
    assert abs(N_e / 7e10 - 1) < 0.05  # Epoch's refit puts the optimum at Chinchilla's own size


def test_quick_check_1b_lies_left_of_the_minimum_at_6e20():
    N, _ = _numeric_optimum(6e20, "hoffmann2022")
    assert N == pytest.approx(1.45e9, rel=0.01) and 1e9 < N
    assert float(scaling.chinchilla_optimum(6e20)[0]) == pytest.approx(N, rel=1e-6)


@pytest.mark.parametrize(("C", "factor", "expect"), [
    (1.2e21, 3.0, 1.53), (1.2e21, 1 / 3, 1.59), (2.73e20, 3.0, 1.79), (2.73e20, 1 / 3, 1.87),
    (1.2e21, 2.0, 0.61), (1.2e21, 0.5, 0.63), (2.73e20, 2.0, 0.71), (2.73e20, 0.5, 0.74),
])  # fmt: skip
def test_loss_penalty_off_the_optimum(C, factor, expect):
    N, L = _numeric_optimum(C, "hoffmann2022")
    ref = 100 * (_loss(C, N * factor, "hoffmann2022") - L) / L
    assert scaling.loss_penalty_pct(C, factor) == pytest.approx(ref, rel=1e-6)
    assert ref == pytest.approx(expect, abs=0.005)


@pytest.mark.parametrize("fit", sorted(scaling.FITS))
@pytest.mark.parametrize("C", [1e19, 2.73e20, 7.2e23, 1e26])
def test_optimal_loss_and_its_inverse_match_a_numeric_optimum(fit, C):
    _, L = _numeric_optimum(C, fit)
    assert scaling.optimal_loss(C, fit) == pytest.approx(L, rel=1e-9)
    # the inverse by a root finder on the numeric optimum, in log C
    logC = brentq(lambda u: _numeric_optimum(np.exp(u), fit)[1] - L, np.log(1e17), np.log(1e28), xtol=1e-12)
    assert scaling.compute_equivalent(L, fit) == pytest.approx(np.exp(logC), rel=1e-5)
    assert scaling.compute_equivalent(L, fit) == pytest.approx(C, rel=1e-9)


@pytest.mark.parametrize(("fit", "expect"), [("hoffmann2022", 0.50), ("epoch2024", 0.18)])
def test_llama3_8b_costs_half_or_more_of_its_compute(fit, expect):
    C = 6 * 8e9 * 15e12  # 7.2e23 FLOPs
    L = _loss(C, 8e9, fit)
    C_eq = np.exp(brentq(lambda u: _numeric_optimum(np.exp(u), fit)[1] - L, np.log(1e20), np.log(1e25)))
    assert scaling.compute_efficiency(C, 8e9, fit) == pytest.approx(C_eq / C, rel=1e-5)
    assert C_eq / C == pytest.approx(expect, abs=0.005)


def test_compute_equivalent_rejects_a_loss_at_or_below_E():
    for bad in (1.69, 1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            scaling.compute_equivalent(bad)


def test_page_texts_carry_the_corrected_numbers():
    at = open_page("pages/1_Scaling_laws.py")  # default: C = 1.2e21
    assert no_exception(at)
    text = " ".join(" ".join(m.value for m in at.markdown).split())
    assert "2× off the optimum loses 0.6% in loss and one 3× off 1.6%" in text
    assert "well under 1%" not in text and "right of the fit's minimum" not in text
    assert "*left* of the Hoffmann fit's minimum at 1.45B" in text
    for number in ("44 at 2.7×10²⁰", "51 at 1.2×10²¹", "93 at 5.9×10²³", "Besiroglu et al. 2024"):
        assert number in text
    assert "50% of its compute under Hoffmann's fit (18% under Epoch's)" in text
    assert "Pearce & Song 2024" in text and "Porian et al. 2024" in text


def test_the_view_hands_the_page_its_text_numbers():
    facts = view_of.figures(view_of.SPEC.defaults()).facts  # C = 1.2e21, the Hoffmann fit
    N, L = _numeric_optimum(1.2e21, "hoffmann2022")
    for factor in (2.0, 3.0):
        worse = max(100 * (_loss(1.2e21, N * f, "hoffmann2022") - L) / L for f in (factor, 1 / factor))
        assert facts["penalty_pct"][factor] == pytest.approx(worse, rel=1e-6)
    assert facts["fit_label"] == scaling.FITS["hoffmann2022"].label and "Epoch" in facts["other_label"]
    numbers = facts["text_numbers"]
    assert [round(numbers["tokens_per_param"][C]) for C in (2.7e20, 1.2e21, 5.9e23)] == [44, 51, 93]
    assert [round(numbers["epoch_tokens_per_param"][C]) for C in (1e20, 1e24)] == [23, 18]
    assert numbers["optimum_N"][6e20] == pytest.approx(_numeric_optimum(6e20, "hoffmann2022")[0], rel=1e-6)
    assert numbers["llama_efficiency"] == pytest.approx({"hoffmann2022": 0.50, "epoch2024": 0.18}, abs=0.005)
    assert view_of.fit_label(scaling.FITS["epoch2024"].short) == scaling.FITS["epoch2024"].label
