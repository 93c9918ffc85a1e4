"""The test-time compute page's state and what it shows: best-of-n with a perfect verifier beside the gold score of
best-of-n against a learned reward model (main, with a drag over n), majority voting (self-consistency) with m
distractors, pass@k against samples and against compute, and a toy split of one budget between training and
inference (one tab each, built only when open)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import test_time_compute as ttc
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Field, Spec, State
from viz.predict import predict_figure, with_guess
from viz.test_time_compute import best_of_n_figure, pass_per_compute_figure, split_figure, vote_figure

QUESTION = (
    "What does best-of-n buy with a verifier and with a reward model, when does majority voting help, and how would "
    "you split a fixed budget between training and inference?"
)
ANSWER_PHRASES = (
    "the verifier, not the sampler",
    "over-optimises",
    "depends on the number of queries",
)

QUICK_CHECK = QuickCheck(
    question=(
        "One sample solves a problem with probability p = 0.1. With a perfect verifier, how many independent samples, "
        "at the fewest, give at least a 90% chance of solving it?"
    ),
    options=(
        "10",
        "22",
        "9",
        "21",
    ),
    right=1,
    answer=(
        "1 − 0.9ⁿ ≥ 0.9 needs 0.9ⁿ ≤ 0.1, so n ≥ ln 0.1 / ln 0.9 = 21.9: **22 samples** (1 − 0.9²² = 0.902). "
        "A majority vote or a reward model gets no more (usually less) from the same 22."
    ),
)

VIEWS = ("Best-of-n", "Majority vote", "Per FLOP", "Compute split")
BEST, VOTE, PASS, SPLIT = VIEWS
N_STEPS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
N_CHOICES = tuple(str(n) for n in N_STEPS)
N_CURVE = np.unique(np.round(np.logspace(0, math.log10(1024), 160))).astype(np.float64)  # whole n, 1..1024
M_CHOICES = ("1", "2", "3", "5", "10", "100", "1000", "∞")
VOTE_NS = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 32, 40, 50, 64, 80, 100, 128, 150])
VOTE_PS = np.linspace(0.0, 1.0, 51)
BUDGETS = ("1e22", "1e23", "1e24", "1e25")
QUERIES = ("1e6", "1e7", "1e8", "1e9", "1e10")

SPEC = Spec(
    "Test_time_compute",
    (
        Field("ttc_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field("ttc_p", "p: one sample's success rate", "float", 0.1, lo=0.0, hi=1.0, step=0.01, fmt="%.2f"),
        Field(
            "ttc_n",
            "n: samples drawn (best-of-n)",
            "choice",
            "16",
            choices=N_CHOICES,
            widget="select_slider",
            help="the row under the figure drags it in the browser",
        ),
        Field(
            "ttc_alpha",
            "Gold score's α",
            "float",
            ttc.GOLD_ALPHA,
            lo=0.25,
            hi=2.0,
            step=0.05,
            fmt="%.2f",
            help="gold = d (α − β d), d = √KL: Gao et al. 2022's form for best-of-n; the values are illustrative",
        ),
        Field(
            "ttc_beta",
            "Gold score's β",
            "float",
            ttc.GOLD_BETA,
            lo=0.1,
            hi=1.0,
            step=0.05,
            fmt="%.2f",
            help="illustrative, not Gao et al.'s fit",
        ),
        Field("ttc_vote_p", "p: one sample's accuracy (vote)", "float", 0.35, lo=0.0, hi=1.0, step=0.01, fmt="%.2f"),
        Field(
            "ttc_m",
            "m: distinct wrong answers",
            "choice",
            "10",
            choices=M_CHOICES,
            widget="segmented",
            help="a wrong sample picks one of m wrong answers uniformly at random (∞: every wrong answer distinct)",
        ),
        Field("ttc_vote_n", "n: samples voted on", "int", 15, lo=1, hi=ttc.VOTE_N_MAX, step=1),
        Field("ttc_p_small", "Small model's pass@1", "float", 0.05, lo=0.0, hi=1.0, step=0.01, fmt="%.2f"),
        Field("ttc_p_large", "Large model's pass@1", "float", 0.3, lo=0.0, hi=1.0, step=0.01, fmt="%.2f"),
        Field(
            "ttc_ratio",
            "Cost of a large sample, in small ones",
            "int",
            10,
            lo=1,
            hi=100,
            step=1,
            help="a forward pass costs about 2N FLOPs per token (plus attention over the context), so at equal answer "
            "lengths the cost ratio is about the parameter ratio",
        ),
        Field("ttc_k", "k: large-model samples", "int", 4, lo=1, hi=100, step=1),
        Field("ttc_budget", "Total budget (FLOPs)", "choice", "1e23", choices=BUDGETS, widget="segmented"),
        Field("ttc_queries", "Queries served R", "choice", "1e8", choices=QUERIES, widget="segmented"),
        Field("ttc_tokens", "Tokens per sampled answer T", "int", 1000, lo=10, hi=100_000, step=10),
        ask.switch("predict_ttc"),
        ask.guess("guess_ttc_peak", "Your guess: n at the gold score's peak", "int", 1, 1_000_000),
    ),
    presets={
        "A7.1: the third axis, best-of-n with a verifier at p = 0.05": {
            "ttc_p": 0.05,
            "ttc_n": "64",
            "ttc_view": BEST,
        },
        "A7.1.2: best-of-512 against a reward model, past the gold score's peak (illustrative α = 1, β = 0.25)": {
            "ttc_n": "512",
            "ttc_alpha": 1.0,
            "ttc_beta": 0.25,
            "ttc_view": BEST,
        },
        "A7.1.2: a majority vote's best case, 1,000 equally likely wrong answers, 25 samples at p = 0.3": {
            "ttc_vote_p": 0.3,
            "ttc_m": "1000",
            "ttc_vote_n": 25,
            "ttc_view": VOTE,
        },
        "A7.1.2: two wrong answers at 0.35 each beat the right one at p = 0.3 (m = 2): the vote falls with n": {
            "ttc_vote_p": 0.3,
            "ttc_m": "2",
            "ttc_vote_n": 25,
            "ttc_view": VOTE,
        },
        "A7.1.2: a majority vote with one wrong answer at p = 0.45": {
            "ttc_vote_p": 0.45,
            "ttc_m": "1",
            "ttc_vote_n": 25,
            "ttc_view": VOTE,
        },
        "A7.2: a group of 8 rollouts at pass@1 = 0.01 holds a success 7.7% of the time": {
            "ttc_p_small": 0.01,
            "ttc_ratio": 1,
            "ttc_k": 8,
            "ttc_view": PASS,
        },
        "A7.4: on problems the small model rarely solves (pass@1 = 0.005), the 10× larger one wins per FLOP": {
            "ttc_p_small": 0.005,
            "ttc_p_large": 0.1,
            "ttc_ratio": 10,
            "ttc_k": 4,
            "ttc_tokens": 1000,
            "ttc_view": PASS,
        },
        "A7.4: 10⁸ queries on 10²³ FLOPs": {
            "ttc_budget": "1e23",
            "ttc_queries": "1e8",
            "ttc_tokens": 1000,
            "ttc_view": SPLIT,
        },
        "A7.4: 10¹⁰ queries on 10²³ FLOPs": {
            "ttc_budget": "1e23",
            "ttc_queries": "1e10",
            "ttc_tokens": 1000,
            "ttc_view": SPLIT,
        },
    },
)


def _pow10(x: float) -> str:
    """10⁸ for 1e8 (the budgets and query counts are whole powers of ten)."""
    return "10" + str(round(math.log10(x))).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _m(text: str) -> float:
    return math.inf if text == "∞" else float(int(text))


def _panel(n: int, success: float, kl: float, gold: float) -> str:
    return "<br>".join(
        [
            f"<b>n = {n}</b>",
            f"verifier: {success:.3f}",
            f"KL: {kl:.2f} nats",
            f"gold: {gold:+.3f}".replace("-", "−"),
            "(α, β illustrative)",
        ]
    )


@functools.lru_cache(maxsize=32)
def _best_fig(p: float, alpha: float, beta: float, at: int, theme: str, pres: bool) -> go.Figure:
    curve = ttc.over_optimisation_curve(N_CURVE, alpha, beta)
    success = np.asarray(ttc.best_of_n_success(p, N_CURVE))
    steps = np.array(N_STEPS, dtype=np.float64)
    s_success = np.asarray(ttc.best_of_n_success(p, steps))
    s_curve = ttc.over_optimisation_curve(steps, alpha, beta)
    panels = [_panel(n, float(s), float(k), float(g))
              for n, s, k, g in zip(N_STEPS, s_success, s_curve.kl, s_curve.gold, strict=True)]  # fmt: skip
    peak = curve.peak
    return best_of_n_figure(N_CURVE, success, p, curve.gold, float(peak.n_best), peak.gold, N_STEPS,
                            s_success.tolist(), s_curve.gold.tolist(), panels, active=at, theme=theme,
                            presenter=pres)  # fmt: skip


@functools.lru_cache(maxsize=32)
def _vote(p: float, n: int, m: float) -> tuple[float, float, float, float]:
    """(majority vote with m, with one wrong answer, every wrong answer distinct, best-of-n with a verifier)."""
    return (
        float(ttc.majority_vote_accuracy(p, n, m)),
        float(ttc.majority_vote_accuracy(p, n, 1)),
        float(ttc.majority_vote_accuracy(p, n, math.inf)),
        float(ttc.best_of_n_success(p, n)),
    )


@functools.lru_cache(maxsize=16)
def _vote_fig(p: float, n: int, m: float, theme: str, pres: bool) -> go.Figure:
    name = "every wrong answer distinct" if math.isinf(m) else f"majority vote, m = {m:g}"
    ms_ = [(name, m)] + [(lab, x) for lab, x in (("one wrong answer (m = 1)", 1.0),
                                                 ("every wrong answer distinct", math.inf)) if x != m]  # fmt: skip
    curves = [("best-of-n, verifier", np.asarray(ttc.best_of_n_success(p, VOTE_NS)))]
    curves += [(lab, np.array([float(ttc.majority_vote_accuracy(p, int(k), x)) for k in VOTE_NS])) for lab, x in ms_]
    by_p = [("best-of-n, verifier", np.asarray(ttc.best_of_n_success(VOTE_PS, n)))]
    by_p += [(lab, np.asarray(ttc.majority_vote_accuracy(VOTE_PS, n, x))) for lab, x in ms_]
    # the chosen m's curve first in colour order: the verifier's ceiling takes the neutral dotted style last
    curves = curves[1:] + curves[:1]
    by_p = by_p[1:] + by_p[:1]
    return vote_figure(VOTE_NS.astype(np.float64), curves, VOTE_PS, by_p, n, p, theme=theme, presenter=pres)


@functools.lru_cache(maxsize=8)
def _split(budget: float, queries: float, tokens: float) -> ttc.ComputeSplit:
    return ttc.compute_split(budget, queries, tokens)


def figures(state: State, options: Options = DEFAULT) -> View:
    """The figures of the tabs named in ``options.parts`` (``Best-of-n``, ``Majority vote``, ``pass@k``, ``Compute
    split``; ``main`` is the open tab's), each tab's readouts and the tables behind them.

    Facts: ``success``, ``kl``, ``gold``, ``peak`` (Best-of-n), ``vote`` (Majority vote), ``pass`` (pass@k),
    ``split`` (Compute split), ``predict``. Bad input gives a note, never an exception.
    """
    parts = set(options.parts)
    if "main" in parts:
        parts.add(state.ttc_view)
    view = View()
    p, alpha, beta = float(state.ttc_p), float(state.ttc_alpha), float(state.ttc_beta)
    n = int(state.ttc_n) if state.ttc_n in N_CHOICES else 16
    at = N_STEPS.index(n)
    success = float(ttc.best_of_n_success(p, n))
    kl = float(ttc.best_of_n_kl_formula(n))
    gold = float(ttc.gold_score(kl, alpha, beta))
    peak = ttc.over_optimisation_peak(alpha, beta)
    view.facts.update(success=success, kl=kl, gold=gold, peak=peak)
    predicting = ask.mode(state, "predict_ttc", "guess_ttc_peak")
    view.facts["predict"] = predicting
    question = (
        f"Best-of-n against a learned reward model, gold score d (α − β d) with d = √KL, α = {alpha:g}, "
        f"β = {beta:g}: at which n does the gold score peak?"
    )
    if BEST in parts:
        if predicting == "hidden":
            view.figures[BEST] = predict_figure(
                question, x_title="n: samples drawn", y_title="gold score (illustrative α, β)", x_range=(1, 1024),
                y_range=(0, 1.1), log_x=True, **options.look,
            )  # fmt: skip
        else:
            view.figures[BEST] = _best_fig(p, alpha, beta, at, options.theme, options.presenter)
            view.drags[BEST] = Drag("ttc_n", N_CHOICES)
    n_peak = f"{peak.n_best:,}" if peak.n_best < 10**7 else f"{peak.n:.3g}".replace("e+", "e")
    view.readouts = [
        Readout("Best-of-n with a verifier", f"{success:.3f}",
                f"P(at least one of n = {n} samples is correct) = 1 − (1 − {p:g})^{n}: pass@{n}"),
        Readout("KL from the base policy", f"{kl:.2f} nats",
                f"log n − (n − 1)/n at n = {n}: an upper bound on the KL of best-of-n (Beirami et al. 2024), exact "
                "only for a continuous reward and close when every output is individually unlikely."),
        Readout("Gold score, reward model", f"{gold:+.3f}".replace("-", "−"),
                f"d (α − β d) with d = √KL = {math.sqrt(kl):.2f}, α = {alpha:g}, β = {beta:g}: illustrative "
                "coefficients in Gao et al. 2022's form"),
        Readout("Gold score's peak", f"n* = {n_peak}",
                "n from the KL formula (an upper bound, so the true n is at least this); "
                f"KL* = (α / 2β)² = {peak.kl:.3g} nats, gold α²/4β = {peak.gold:.3g}; beyond it the proxy keeps "
                "rising while the gold score falls"),
    ]  # fmt: skip
    if BEST in parts and predicting != "hidden" and peak.n_best > N_STEPS[-1]:  # the answer, on its own tab only
        view.notices.append(("info", f"The gold score peaks at n ≈ {n_peak}, beyond the figure's 1,024."))
    if VOTE in parts:
        vp, m, vn = (
            float(state.ttc_vote_p),
            _m(state.ttc_m if state.ttc_m in M_CHOICES else "10"),
            int(state.ttc_vote_n),
        )
        v_m, v_1, v_inf, v_best = _vote(vp, vn, m)
        view.figures[VOTE] = _vote_fig(vp, vn, m, options.theme, options.presenter)
        view.facts["vote"] = (v_m, v_1, v_inf, v_best)
        label = "every wrong answer distinct" if math.isinf(m) else f"m = {m:g}"
        view.readouts += [
            Readout(f"Majority vote, {label}", f"{v_m:.3f}",
                    f"P(the plurality of n = {vn} samples is right) at p = {vp:g}, ties broken at random: the exact "
                    "multinomial sum"),
            *([] if m == 1 else [Readout("Majority vote, one wrong answer", f"{v_1:.3f}",
                                          "m = 1: right only with more than half the votes (an even split is a "
                                          "coin flip)")]),
            Readout("A verifier instead", f"{v_best:.3f}", f"1 − (1 − {vp:g})^{vn}: the ceiling of any selector"),
        ]  # fmt: skip
    if PASS in parts:
        ps, pl, ratio, k = float(state.ttc_p_small), float(state.ttc_p_large), int(state.ttc_ratio), int(state.ttc_k)
        ks = np.unique(np.round(np.logspace(0, 3, 120)))
        small = np.asarray(ttc.best_of_n_success(ps, ks))
        large = np.asarray(ttc.best_of_n_success(pl, ks))
        small_at = float(ttc.best_of_n_success(ps, k * ratio))
        large_at = float(ttc.best_of_n_success(pl, k))
        view.facts["pass"] = (small_at, large_at)
        view.figures[PASS] = pass_per_compute_figure(
            ks, small, large, float(ratio), k, small_at, large_at, **options.look
        )
        view.readouts += [
            Readout(f"Large model, pass@{k}", f"{large_at:.3f}", f"1 − (1 − {pl:g})^{k}"),
            Readout(f"Small model, pass@{k * ratio} at the same compute", f"{small_at:.3f}",
                    f"1 − (1 − {ps:g})^{k * ratio}: {ratio} small "
                    f"{'sample costs' if ratio == 1 else 'samples cost'} one large one"),
        ]  # fmt: skip
    if SPLIT in parts:
        budget = float(state.ttc_budget if state.ttc_budget in BUDGETS else "1e23")
        queries = float(state.ttc_queries if state.ttc_queries in QUERIES else "1e8")
        tokens = float(state.ttc_tokens)
        s = _split(budget, queries, tokens)
        view.facts["split"] = s
        if not np.any(np.isfinite(s.accuracy)):
            view.notices.append(("info", "No split of this budget serves every query with one sample."))
        else:
            i = int(np.nanargmax(s.accuracy))
            view.figures[SPLIT] = split_figure(s.share, s.accuracy, s.tokens_per_param, s.best_share,
                                               float(s.accuracy[i]), **options.look)  # fmt: skip
            view.readouts += [
                Readout("Best share on training (toy)", f"{100 * s.best_share:.1f}%",
                        "the smallest share with the highest accuracy, on a grid of half a percent"),
                Readout("Its model", f"{s.params[i] / 1e9:.2f}B parameters",
                        f"trained on {s.tokens_per_param[i]:,.0f} tokens per parameter (Chinchilla: about 20)"),
                Readout("Samples per query", f"{s.samples[i]:.1f}",
                        f"what the rest of the budget buys each of R = {_pow10(queries)} queries of T = {tokens:,.0f} "
                        "tokens"),
                Readout("Problems solved (toy)", f"{s.accuracy[i]:.3f}",
                        "a verifier picks any correct sample; one sample alone solves "
                        f"{s.p_single[i]:.3f} on average"),
            ]  # fmt: skip
            if s.accuracy[i] > 0.999:
                view.notices.append(("info", "The toy's accuracy saturates here: many shares reach it, and the best "
                                     "share is the smallest of them, not a prediction."))  # fmt: skip
    view.tables[BEST] = lambda: pd.DataFrame(
        {
            "n": N_STEPS,
            "P(success), verifier": np.asarray(ttc.best_of_n_success(p, np.array(N_STEPS, float))),
            "KL (nats)": np.asarray(ttc.best_of_n_kl_formula(np.array(N_STEPS, float))),
            "gold score": ttc.over_optimisation_curve(np.array(N_STEPS, float), alpha, beta).gold,
        }
    )
    if predicting == "hidden":
        ask.hide(view, question, ("Gold score", "KL from the base policy"), tables=(BEST,))
    elif predicting == "revealed":
        g = int(state.guess_ttc_peak)
        if BEST in view.figures:
            view.figures[BEST] = with_guess(view.figures[BEST], g, f"your guess: n = {g}", axis="x", ref="x2",
                                            theme=options.theme)  # fmt: skip
        ask.reveal(
            view,
            Readout("Gold score's peak (the answer)", f"n* = {n_peak}", f"KL* = {peak.kl:.3g} nats"),
            f"n = {g}",
            ask.ratio_text(g, peak.n_best),
            "your guess against the answer",
            value=peak.n_best,  # the best whole n, as the guess field and the error (not the curve's real peak.n)
        )
    if "main" in parts and state.ttc_view in view.figures:
        view.show_as_main(state.ttc_view)
    return with_answers(SPEC, state, view)
