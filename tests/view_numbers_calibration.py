"""The tables of tests/test_view_numbers.py for the calibration page: per view (tests/page_numbers.py ``views``), a
list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, captions and figure texts show.

The references are written here and in tests/calibration_reference.py (samples drawn again, ECE by a plain loop,
temperatures fitted by scipy on a likelihood written there, the c^γ closed form by quad, the crossing by brentq),
never from core/calibration.py.
"""

from __future__ import annotations

import math

from tests import calibration_reference as ref
from tests.page_numbers import Ref
from tests.test_page_numbers import FORMULA, GIVEN, _preset
from views import calibration as v_cal

CS = v_cal.SPEC
N_TOY = "the toy's sample size (views/calibration.py N_TOY), an input"
N_TS = "the 10-class model's set size (views/calibration.py N_TS), an input"
CLASSES = "the simulated model's number of classes, an input"
BETA = "the Beta(5, 2) distribution's parameters, inputs"
SIGN = "a sign condition: κ > 0 and T > 0"
NAMES = {"width": ("equal-width", "equal-mass"), "mass": ("equal-mass", "equal-width")}


def main(p: dict) -> list[Ref]:
    k, m, b = float(p["cal_kappa"]), int(p["cal_bins"]), v_cal.BINNINGS[p["cal_binning"]]
    other = "mass" if b == "width" else "width"
    r, o = ref.toy(k, m, b), ref.toy(k, m, other)
    this, that = NAMES[b]
    return [
        Ref(f"ECE after tuning: {r['tuned']:.3f}", r["tuned"]),
        Ref(f"ECE after tuning help: {this}, M = {m}; {that}: {o['tuned']:.3f}. Before tuning: {r['before']:.3f} "
            f"({this}), {o['before']:.3f} ({that})", GIVEN, o["tuned"], r["before"], o["before"]),
        Ref(f"Fitted temperature T: {r['T']:.2f}", r["T"]),
        Ref(f"held-out sample of {ref.N_TOY:,} predictions", N_TOY),
        Ref(f"a logit scale of κ = {k:g}, so", GIVEN),
        Ref(f"ECE after temperature scaling: {r['scaled']:.3f}", r["scaled"]),
        Ref(f"ECE after temperature scaling help: {this}; {that}: {o['scaled']:.3f}", o["scaled"]),
        Ref(f"Right side of ½: {r['right']:.3f}", r["right"]),
        Ref("since κ > 0 and T > 0 keep the sign", SIGN, SIGN),
        Ref(f"κ = {k:g} ECE ({this}): pre-trained {r['before']:.3f} tuned {r['tuned']:.3f} rescaled "
            f"{r['scaled']:.3f} fitted T = {r['T']:.2f}", GIVEN, r["before"], r["tuned"], r["scaled"], r["T"]),
    ]  # fmt: skip


def power(p: dict) -> list[Ref]:
    g, n, m = p["cal_gamma"], int(p["cal_n"]), int(p["cal_bins"])
    c, a = ref.power_sample(n, g)
    width, mass = ref.loop_ece(c, a, m, "width"), ref.loop_ece(c, a, m, "mass")
    expected = ref.expected_ece_power(g)
    return [
        Ref("Confidences drawn from Beta(5, 2)", BETA, BETA),
        Ref(f"ECE of infinitely many predictions (closed form): {expected:.4f}", expected),
        Ref(f"for c ~ Beta(5, 2), γ = {g:g}:", BETA, BETA, GIVEN),
        Ref(f"Sample ECE, {n:,} predictions: {width:.4f}", GIVEN, width),
        Ref(f"Sample ECE, {n:,} predictions help: equal width, M = {m}; equal mass: {mass:.4f}", GIVEN, GIVEN, mass),
        Ref("(γ near 1, few predictions", "γ = 1: calibrated, the gap's sign changes only by noise"),
        Ref(f"accuracy = c^{g:g}", GIVEN),
        Ref(f"sample, {m} equal-width bins", GIVEN),
        Ref(f"sample, {m} equal-mass bins", GIVEN),
    ]  # fmt: skip


def temp(p: dict) -> list[Ref]:
    t0, m, b = p["cal_t0"], int(p["cal_bins"]), v_cal.BINNINGS[p["cal_binning"]]
    r = ref.multiclass(t0, m, b)
    this, _ = NAMES[b]
    return [
        Ref("A simulated 10-class model", CLASSES),
        Ref(f"Fitted T (10 classes): {r['T']:.3f}", CLASSES, r["T"]),
        Ref(f"Fitted T (10 classes) help: the simulation's T₀ = {t0:g}; fitted on 5,000 held-out", CLASSES, GIVEN,
            N_TS),
        Ref(f"Test NLL: {r['nll_before']:.3f} → {r['nll_after']:.3f} nats", r["nll_before"], r["nll_after"]),
        Ref("Test NLL help: at T = 1, then", "T = 1: the logits as they are"),
        Ref(f"Test ECE: {r['ece_before']:.3f} → {r['ece_after']:.3f}", r["ece_before"], r["ece_after"]),
        Ref(f"Test ECE help: {this}, M = {m}", GIVEN),
        Ref(f"Test accuracy: {r['accuracy']:.3f} → {r['accuracy']:.3f}", r["accuracy"], r["accuracy"]),
        Ref("dividing every logit by T > 0 keeps", SIGN),
        Ref("test set, T = 1", "T = 1: the logits as they are"),
    ]  # fmt: skip


def emerge(p: dict) -> list[Ref]:
    k, tau = p["cal_k"], p["cal_tau"]
    x, one = ref.crossing(tau, k), ref.crossing(tau, 1)
    tokens = "token" if k == 1 else "tokens"
    return [
        Ref(f"Exact match on {k} {tokens} reaches τ: log10 C = {x:.2f}", GIVEN, x),
        Ref(f"Exact match on {k} {tokens} reaches τ help: where p^{k} = {tau:g}: p = {tau ** (1 / k):.3f} per token",
            GIVEN, GIVEN, GIVEN, math.exp(math.log(tau) / k)),
        Ref(f"Per-token accuracy reaches τ: log10 C = {one:.2f}", one),
        Ref(f"Per-token accuracy reaches τ help: p = {tau:g}", GIVEN),
        Ref(f"The delay: {x - one:.2f} decades", x - one),
        Ref(f"log10(k)/α with α = {ref.ALPHA:g}:", "the toy's illustrative slope α"),
        Ref(f"exact match, {k}-token answers (p^{k})", GIVEN, GIVEN),
        Ref(f"token edit distance k (1 - p), k = {k}", FORMULA, GIVEN),
        Ref("a straight line once p nears 1", "the ceiling of a probability"),
    ]  # fmt: skip


def _new(refs: list[Ref], shown: list[Ref]) -> list[Ref]:
    """The refs whose passage the defaults do not already show (a preset's view lists only new texts)."""
    return [r for r in refs if r.snippet not in {t.snippet for t in shown}]


P0 = CS.defaults()
_MAIN0 = main(P0)
_P = {name: _preset(CS, name) for name in CS.presets}
_KIND = {v_cal.MAIN: main, v_cal.POWER: power, v_cal.TEMP: temp, v_cal.EMERGE: emerge}

CAL: dict[str, list[Ref]] = {
    "defaults": _MAIN0,
    f"tab {v_cal.POWER}": power(P0),
    f"tab {v_cal.TEMP}": temp(P0),
    f"tab {v_cal.EMERGE}": emerge(P0),
    **{
        f"preset {name}": _new(_KIND[_P[name]["cal_view"]](_P[name]), _MAIN0)
        + (
            [Ref(f"held-out sample of {ref.N_TOY:,} predictions", N_TOY)]
            if _P[name].get("cal_kappa", "2.5") != "2.5"
            else []
        )
        for name in CS.presets
    },
}

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/25_Calibration.py": CAL}
