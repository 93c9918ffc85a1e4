"""The calibration page's state and what it shows: the reliability diagram of a simulated model before and after a
toy preference tuning and after temperature scaling (main, with a drag over the tuning strength κ), a known
miscalibration (accuracy = c^γ) with its closed-form population ECE, temperature scaling of a multi-class model, and
emergence as a choice of metric (one tab each, built only when open).

Why κ is the dragged control and not the number of bins: κ is what post-training changes (A13.4), and dragging it
moves every part of the lesson at once: the tuned curve turns into an S across the diagonal, ECE grows, and the
fitted temperature follows κ while accuracy stays put. The number of bins is a measurement choice; its lesson
(binning matters, in the infinite-sample limit, only where the curve crosses the diagonal) is a select box and the
c^γ tab's ECE-against-M panel.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import calibration as cal
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Field, Spec, State
from viz.calibration import emergence_figure, power_figure, reliability_figure, temperature_scaling_figure
from viz.predict import predict_figure, with_guess

QUESTION = (
    "What is calibration, how do you measure it, what does post-training do to it, and is emergence in large models "
    "real?"
)
ANSWER_PHRASES = (
    "confidence matches accuracy",
    "a logit scale",
    "the metric, not the model",
)

QUICK_CHECK = QuickCheck(
    question=(
        "A model states 0.9 on 100 answers and gets 72 of them right. Is it over- or underconfident, and what does "
        "temperature scaling with T = 2 make of a stated 0.9 on a two-class question (the other class gets 0.1), "
        "logits divided by T?"
    ),
    options=(
        "Underconfident; 0.9 becomes 0.99",
        "Overconfident; 0.9 becomes 0.75",
        "Underconfident; 0.9 becomes 0.75",
        "Overconfident; 0.9 becomes 0.99",
    ),
    right=1,
    answer=(
        "The gap is 0.9 − 0.72 = **0.18**: accuracy below confidence, overconfident. With two classes, 0.9 is the "
        "logit ln 9; divided by 2 it is ln 3, so the stated probability becomes 3/(3 + 1) = **0.75**. Whether the "
        "model chose that class does not change."
    ),
)

VIEWS = ("Reliability", "Known miscalibration", "Temperature scaling", "Emergence")
MAIN, POWER, TEMP, EMERGE = VIEWS
KAPPAS = (1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0)
KAPPA_CHOICES = tuple(f"{k:g}" for k in KAPPAS)
BIN_CHOICES = ("5", "6", "10", "15", "20")
BINNINGS = {"equal width": "width", "equal mass": "mass"}
N_TOY = 10_000  # predictions in the toy's test sample and in its held-out sample
TOY_SEED, HELD_OUT_SEED = 0, 1
SAMPLE_CHOICES = ("500", "2000", "10000", "100000")
BETA_A, BETA_B = 5.0, 2.0  # the c^γ tab's confidences: Beta(5, 2), mean 5/7
M_SWEEP = np.arange(1, 41)
N_CLASSES, LOGIT_SCALE, N_TS = 10, 2.0, 5_000
TEMPS = np.logspace(-0.7, 1.0, 120)
ALPHA, X0 = 0.5, 22.0  # the emergence toy's slope and midpoint (illustrative)
X_GRID = np.linspace(18.0, 28.0, 401)  # wide enough for the crossing at τ = 0.95, k = 30 (log10 C ≈ 27.5)
STATED = 0.9  # the predict-first question's stated probability

SPEC = Spec(
    "Calibration",
    (
        Field("cal_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field(
            "cal_kappa",
            "κ: tuning strength (toy)",
            "choice",
            "2.5",
            choices=KAPPA_CHOICES,
            widget="select_slider",
            help="the tuned model states sigmoid(κ · logit c) where the calibrated one stated c (κ = 1: no change); "
            "the row under the figure drags it in the browser",
        ),
        Field(
            "cal_bins",
            "M: number of bins",
            "choice",
            "10",
            choices=BIN_CHOICES,
            widget="segmented",
            help="an odd M puts a bin across ½, where the toy's curve crosses the diagonal (this diagram bins every "
            "option's probability, as the GPT-4 report's Fig. 8 does; Guo et al.'s ECE bins only the predicted "
            "class's confidence, and in that form the toy does not cross the diagonal)",
        ),
        Field("cal_binning", "Bins", "choice", "equal width", choices=tuple(BINNINGS), widget="segmented"),
        Field(
            "cal_gamma",
            "γ: accuracy = c^γ",
            "float",
            2.0,
            lo=0.25,
            hi=4.0,
            step=0.05,
            fmt="%.2f",
            help="γ > 1 overconfident, γ < 1 underconfident, γ = 1 calibrated",
        ),
        Field("cal_n", "Sample size (c^γ)", "choice", "2000", choices=SAMPLE_CHOICES, widget="segmented"),
        Field(
            "cal_t0",
            "T₀: the model's logits are T₀ times the true ones",
            "float",
            2.0,
            lo=0.5,
            hi=5.0,
            step=0.1,
            fmt="%.1f",
            help="T₀ > 1 overconfident, T₀ < 1 underconfident",
        ),
        Field("cal_k", "k: tokens in an answer", "int", 5, lo=1, hi=30, step=1),
        Field(
            "cal_tau",
            "τ: the threshold of 'the ability appears'",
            "float",
            0.5,
            lo=0.05,
            hi=0.95,
            step=0.05,
            fmt="%.2f",
        ),
        ask.switch("predict_cal"),
        ask.guess("guess_cal_acc", "Your guess: accuracy at a stated 0.9", "float", 0.0, 1.0, step=0.01, fmt="%.3f"),
    ),
    presets={
        "A13.3: ECE after strong tuning (κ = 4) with equal-width bins": {
            "cal_kappa": "4",
            "cal_bins": "10",
            "cal_binning": "equal width",
            "cal_view": MAIN,
        },
        "A13.3: 5 equal-mass bins, one across ½, where the tuned curve crosses the diagonal: ECE 0.106, against 0.121 "
        "with 10 equal-width bins": {
            "cal_kappa": "2.5",
            "cal_bins": "5",
            "cal_binning": "equal mass",
            "cal_view": MAIN,
        },
        "A13.3: a known miscalibration, accuracy = c², one population ECE for every binning": {
            "cal_gamma": 2.0,
            "cal_n": "100000",
            "cal_view": POWER,
        },
        "A13.3: ECE's upward bias on 500 predictions": {"cal_gamma": 1.0, "cal_n": "500", "cal_view": POWER},
        "A13.4: what a toy tuning does, and the temperature that undoes it (κ = 6)": {
            "cal_kappa": "6",
            "cal_view": MAIN,
        },
        "A13.4: temperature scaling of a 10-class model whose logits are 3 times too large": {
            "cal_t0": 3.0,
            "cal_view": TEMP,
        },
        "A11.6: exact match on 10-token answers": {"cal_k": 10, "cal_tau": 0.5, "cal_view": EMERGE},
        "A11.6: one-token answers, where exact match is the per-token accuracy": {"cal_k": 1, "cal_view": EMERGE},
    },
)


def _fmt(x: float) -> str:
    return f"{x:.3f}"


@functools.lru_cache(maxsize=16)
def _toy(kappa: float, n_bins: int, binning: str) -> dict[str, object]:
    """The toy at one κ: its test and held-out samples, the fitted T and the three models' diagrams and ECEs."""
    toy = cal.preference_tuning_toy(N_TOY, kappa, n_bins=n_bins, binning=binning, seed=TOY_SEED)
    held = cal.preference_tuning_toy(N_TOY, kappa, n_bins=n_bins, binning=binning, seed=HELD_OUT_SEED)
    t = cal.fit_temperature(cal.tuned_logits(held.before, kappa), (1 - held.correct).astype(np.int64))
    scaled = cal.sharpen(toy.before, kappa / t)  # sigmoid(κ logit c / T): the tuned logits divided by T
    other = "mass" if binning == "width" else "width"
    diagrams = {
        "before": toy.before_diagram,
        "tuned": toy.after_diagram,
        "scaled": cal.reliability_diagram(scaled, toy.correct, n_bins, binning),
    }
    other_ece = {
        name: cal.expected_calibration_error(c, toy.correct, n_bins, other)
        for name, c in (("before", toy.before), ("tuned", toy.after), ("scaled", scaled))
    }
    counts = {
        name: cal.reliability_diagram(c, toy.correct, n_bins, "width").count
        for name, c in (("before", toy.before), ("tuned", toy.after), ("scaled", scaled))
    }
    right = {name: float(np.mean((c > 0.5) == (toy.correct == 1))) for name, c in
             (("before", toy.before), ("tuned", toy.after), ("scaled", scaled))}  # fmt: skip
    return {"T": t, "diagrams": diagrams, "other": other_ece, "counts": counts, "right": right}


def _names(binning: str) -> tuple[str, str]:
    return ("equal-width", "equal-mass") if binning == "width" else ("equal-mass", "equal-width")


def _panel(kappa: float, r: dict, binning: str) -> str:
    this, _ = _names(binning)
    d = r["diagrams"]
    return "<br>".join(
        [
            f"<b>κ = {kappa:g}</b>",
            f"ECE ({this}):",
            f"pre-trained {_fmt(d['before'].ece)}",
            f"tuned {_fmt(d['tuned'].ece)}",
            f"rescaled {_fmt(d['scaled'].ece)}",
            f"fitted T = {r['T']:.2f}",
        ]
    )


@functools.lru_cache(maxsize=16)
def _main_fig(n_bins: int, binning: str, at: int, theme: str, pres: bool) -> go.Figure:
    runs = [_toy(k, n_bins, binning) for k in KAPPAS]
    curve_x = np.linspace(0.001, 0.999, 161)
    centers = (np.arange(n_bins) + 0.5) / n_bins

    def pts(d: cal.Reliability) -> tuple[np.ndarray, np.ndarray]:
        return d.confidence, d.accuracy

    return reliability_figure(
        pts(runs[0]["diagrams"]["before"]),
        [pts(r["diagrams"]["tuned"]) for r in runs],
        [pts(r["diagrams"]["scaled"]) for r in runs],
        curve_x,
        [cal.tuned_accuracy(curve_x, k) for k in KAPPAS],
        centers,
        runs[0]["counts"]["before"],
        [r["counts"]["tuned"] for r in runs],
        [r["counts"]["scaled"] for r in runs],
        KAPPAS,
        [_panel(k, r, binning) for k, r in zip(KAPPAS, runs, strict=True)],
        active=at,
        theme=theme,
        presenter=pres,
    )


@functools.lru_cache(maxsize=16)
def _power(gamma: float, n: int, n_bins: int) -> dict[str, object]:
    c, a = cal.simulate_power_miscalibration(n, gamma, BETA_A, BETA_B, seed=0)
    width = cal.reliability_diagram(c, a, n_bins, "width")
    mass = cal.reliability_diagram(c, a, n_bins, "mass")
    sweep_w = np.array([cal.expected_calibration_error(c, a, int(m), "width") for m in M_SWEEP])
    sweep_m = np.array([cal.expected_calibration_error(c, a, int(m), "mass") for m in M_SWEEP])
    return {
        "width": width,
        "mass": mass,
        "sweep_w": sweep_w,
        "sweep_m": sweep_m,
        "expected": cal.expected_ece_power(gamma, BETA_A, BETA_B, n_bins),
        "gap": cal.mean_gap_power(gamma, BETA_A, BETA_B),
    }


@functools.lru_cache(maxsize=8)
def _temp(t0: float, n_bins: int, binning: str) -> tuple[cal.TemperatureScaling, np.ndarray, np.ndarray]:
    val = cal.simulate_logit_model(N_TS, N_CLASSES, LOGIT_SCALE, t0, seed=1)
    test = cal.simulate_logit_model(N_TS, N_CLASSES, LOGIT_SCALE, t0, seed=2)
    ts = cal.temperature_scaling(*val, *test, n_bins=n_bins, binning=binning)
    nll_val = np.array([cal.nll(*val, float(t)) for t in TEMPS])
    nll_test = np.array([cal.nll(*test, float(t)) for t in TEMPS])
    return ts, nll_val, nll_test


def figures(state: State, options: Options = DEFAULT) -> View:
    """The figures of the tabs named in ``options.parts`` (the four of ``VIEWS``; ``main`` is the open tab's), each
    tab's readouts and the tables behind them.

    Facts: ``toy`` (Reliability: T, the three ECEs in both binnings, the share right), ``power``, ``temp``,
    ``emergence``, ``predict``. Bad input gives a note, never an exception.
    """
    parts = set(options.parts)
    if "main" in parts:
        parts.add(state.cal_view)
    view = View()
    kappa_text = state.cal_kappa if state.cal_kappa in KAPPA_CHOICES else "2.5"
    kappa = float(kappa_text)
    at = KAPPA_CHOICES.index(kappa_text)
    n_bins = int(state.cal_bins) if state.cal_bins in BIN_CHOICES else 10
    binning = BINNINGS.get(state.cal_binning, "width")
    this, other = _names(binning)
    r = _toy(kappa, n_bins, binning)
    d = r["diagrams"]
    view.facts["toy"] = {
        "T": r["T"],
        "ece": {k: v.ece for k, v in d.items()},
        "other": dict(r["other"]),
        "right": dict(r["right"]),
    }
    predicting = ask.mode(state, "predict_cal", "guess_cal_acc")
    view.facts["predict"] = predicting
    question = (
        f"A calibrated model's stated probabilities c become sigmoid(κ · logit c) with κ = {kappa:g}; what is right "
        "does not change. Of the options the tuned model states at 0.9, what fraction is right?"
    )
    if MAIN in parts:
        if predicting == "hidden":
            view.figures[MAIN] = predict_figure(
                question, x_title="confidence (mean per bin)", y_title="accuracy per bin", x_range=(0, 1),
                y_range=(0, 1), traces=[{"type": "scatter", "x": [0, 1], "y": [0, 1], "mode": "lines",
                                         "name": "perfect calibration", "line": {"dash": "dash"}}], **options.look,
            )  # fmt: skip
        else:
            view.figures[MAIN] = _main_fig(n_bins, binning, at, options.theme, options.presenter)
            view.drags[MAIN] = Drag("cal_kappa", KAPPA_CHOICES)
    view.readouts = [
        Readout("ECE after tuning", _fmt(d["tuned"].ece),
                f"{this}, M = {n_bins}; {other}: {_fmt(r['other']['tuned'])}. Before tuning: "
                f"{_fmt(d['before'].ece)} ({this}), {_fmt(r['other']['before'])} ({other}), sampling noise alone"),
        Readout("Fitted temperature T", f"{r['T']:.2f}",
                f"minimises the NLL on a held-out sample of {N_TOY:,} predictions (another seed); the toy's "
                f"tuning is a logit scale of κ = {kappa:g}, so T ≈ κ undoes it"),
        Readout("ECE after temperature scaling", _fmt(d["scaled"].ece),
                f"{this}; {other}: {_fmt(r['other']['scaled'])}; on the test sample, T fitted on the held-out one"),
        Readout("Right side of ½", _fmt(r["right"]["tuned"]),
                "the share of options whose stated probability is on the right side of ½ (above it when the option "
                "is right): the same for the three models, since κ > 0 and T > 0 keep the sign of every logit"),
    ]  # fmt: skip
    view.tables[MAIN] = lambda: pd.DataFrame(
        {
            "bin": np.arange(1, n_bins + 1),
            "pre-trained confidence": d["before"].confidence,
            "pre-trained accuracy": d["before"].accuracy,
            "tuned confidence": d["tuned"].confidence,
            "tuned accuracy": d["tuned"].accuracy,
            "tuned count": d["tuned"].count,
            "rescaled confidence": d["scaled"].confidence,
            "rescaled accuracy": d["scaled"].accuracy,
        }
    )
    if POWER in parts:
        gamma = float(state.cal_gamma)
        n = int(state.cal_n) if state.cal_n in SAMPLE_CHOICES else 2000
        p = _power(gamma, n, n_bins)
        view.facts["power"] = p
        curve_x = np.linspace(0.0, 1.0, 101)
        view.figures[POWER] = power_figure(
            (p["width"].confidence, p["width"].accuracy), (p["mass"].confidence, p["mass"].accuracy), curve_x,
            curve_x**gamma, gamma, M_SWEEP.astype(np.float64), p["sweep_w"], p["sweep_m"], p["expected"], n_bins,
            **options.look,
        )  # fmt: skip
        view.readouts += [
            Readout("ECE of infinitely many predictions (closed form)", f"{p['expected']:.4f}",
                    f"|E[c] − E[c^γ]| for c ~ Beta(5, 2), γ = {gamma:g}: the same for every M and for equal mass, "
                    "since the gap c − c^γ never changes sign"),
            Readout(f"Sample ECE, {n:,} predictions", f"{p['width'].ece:.4f}",
                    f"equal width, M = {n_bins}; equal mass: {p['mass'].ece:.4f}; while every bin's gap has "
                    "one sign it is |mean confidence − accuracy| for any binning; it is biased upward on average "
                    "(γ near 1, few predictions per bin); one sample can also fall below, by the noise in its overall "
                    "accuracy"),
        ]  # fmt: skip
        view.tables[POWER] = lambda: pd.DataFrame(
            {"bins": M_SWEEP, "ECE, equal width": p["sweep_w"], "ECE, equal mass": p["sweep_m"]}
        )
    if TEMP in parts:
        t0 = float(state.cal_t0)
        ts, nll_val, nll_test = _temp(t0, n_bins, binning)
        view.facts["temp"] = ts
        view.figures[TEMP] = temperature_scaling_figure(
            TEMPS, nll_val, nll_test, ts.T, t0, (ts.before.confidence, ts.before.accuracy),
            (ts.after.confidence, ts.after.accuracy), **options.look,
        )  # fmt: skip
        view.readouts += [
            Readout("Fitted T (10 classes)", f"{ts.T:.3f}", f"the simulation's T₀ = {t0:g}; fitted on {N_TS:,} "
                    "held-out examples, applied to another seeded set of as many"),
            Readout("Test NLL", f"{ts.nll_before:.3f} → {ts.nll_after:.3f} nats", "at T = 1, then at the fitted T"),
            Readout("Test ECE", f"{ts.ece_before:.3f} → {ts.ece_after:.3f}", f"{this}, M = {n_bins}"),
            Readout("Test accuracy", f"{ts.accuracy_before:.3f} → {ts.accuracy_after:.3f}",
                    "dividing every logit by T > 0 keeps each argmax"),
        ]  # fmt: skip
        view.tables[TEMP] = lambda: pd.DataFrame({"T": TEMPS, "NLL held-out": nll_val, "NLL test": nll_test})
    if EMERGE in parts:
        k, tau = int(state.cal_k), float(state.cal_tau)
        e = cal.emergence_curves(X_GRID, k, ALPHA, X0, tau)
        one = cal.exact_match_crossing(tau, 1, ALPHA, X0)
        view.facts["emergence"] = (e.crossing, one)
        view.figures[EMERGE] = emergence_figure(
            X_GRID, e.per_token, e.exact_match, e.edit_distance, k, tau, e.crossing, one, **options.look
        )
        view.readouts += [
            Readout(f"Exact match on {k} token{'' if k == 1 else 's'} reaches τ", f"log10 C = {e.crossing:.2f}",
                    f"where p^{k} = {tau:g}: p = {tau ** (1 / k):.3f} per token"),
            Readout("Per-token accuracy reaches τ", f"log10 C = {one:.2f}", f"p = {tau:g}"),
            Readout("The delay", f"{e.crossing - one:.2f} decades",
                    f"log10(k)/α with α = {ALPHA:g}: on a log-compute axis p^k is p shifted right, not sharper"),
        ]  # fmt: skip
        view.tables[EMERGE] = lambda: pd.DataFrame(
            {"log10 compute": X_GRID, "per-token p": e.per_token, f"exact match p^{k}": e.exact_match,
             "token edit distance": e.edit_distance}
        )  # fmt: skip
    if predicting == "hidden":
        ask.hide(view, question, ("ECE after tuning", "ECE after temperature scaling", "Fitted temperature T"),
                 tables=(MAIN,))  # fmt: skip
    elif predicting == "revealed":
        g = float(state.guess_cal_acc)
        truth = float(cal.tuned_accuracy(STATED, kappa))
        if MAIN in view.figures:
            view.figures[MAIN] = with_guess(view.figures[MAIN], g, f"your guess: {g:.2f}", axis="y", ref="y",
                                            theme=options.theme)  # fmt: skip
        ask.reveal(
            view,
            Readout(
                "Accuracy at a stated 0.9 (the answer)",
                _fmt(truth),
                f"sigmoid(logit(0.9) / κ) at κ = {kappa:g}: the dotted curve at 0.9",
            ),
            f"{g:.3f}",
            f"{g - truth:+.3f}".replace("-", "−"),
            "your guess minus the answer",
            value=truth,
        )
    if "main" in parts and state.cal_view in view.figures:
        view.show_as_main(state.cal_view)
    return with_answers(SPEC, state, view)
