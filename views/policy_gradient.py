"""The policy-gradient page's state and what it shows: REINFORCE on a bandit of four answers, where every expectation
is a finite sum. The main figure is each estimator's spread for one update (its exact mean against the true gradient
and the exact standard deviation of its projection on that gradient, seeded draws as points), dragged over the group
size G; the tabs show the baseline's expected contribution summed answer by answer beside the variance against the
baseline, the group baselines' bias against G and with 0/1 rewards, and learning curves (each built only when
open)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import policy_gradient as pg
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Field, Spec, State
from viz.policy_gradient import group_figure, learning_figure, spread_figure, zero_figure
from viz.predict import predict_figure, with_guess

QUESTION = "Derive the policy gradient. Why does a baseline not bias it, and what do GRPO's group mean and RLOO change?"
ANSWER_PHRASES = (
    "log-derivative trick",
    "does not depend on the action",
    "leave-one-out",
    "(G − 1)/G",
)

QUICK_CHECK = QuickCheck(
    question=(
        "On this bandit (one answer, one action; no clip, no per-answer length averaging), GRPO's group mean with "
        "G = 8 answers per prompt is subtracted from each reward, without dividing by the std. What multiple of the "
        "true policy gradient is the expected update, and what does RLOO give?"
    ),
    options=(
        "Exactly ∇J; RLOO gives 7/8 of ∇J",
        "7/8 of ∇J; RLOO gives exactly ∇J",
        "8/7 of ∇J; RLOO gives exactly ∇J",
        "7/8 of ∇J; RLOO gives 7/8 of ∇J too",
    ),
    right=1,
    answer=(
        "(G − 1)/G = 7/8 = **0.875** of ∇J: the answer's own reward is in the mean. RLOO gives exactly **∇J**: its "
        "estimate is 8/7 times the group mean's, draw by draw, so (8/7)² ≈ 1.31 times the group mean's variance and "
        "the same signal-to-noise."
    ),
)

VIEWS = ("Spread", "Zero in expectation", "Group baselines", "Learning")
SPREAD, ZERO, GROUP, LEARNING = VIEWS
ANSWERS = ("A", "B", "C", "D")  # A is the best answer
REWARD_SETS = {
    "graded: 1, 0.6, 0.3, 0": (1.0, 0.6, 0.3, 0.0),
    "checker: 1, 0, 0, 0": (1.0, 0.0, 0.0, 0.0),
}
POLICIES = {
    "untrained: 0.1, 0.2, 0.3, 0.4": (0.1, 0.2, 0.3, 0.4),
    "uniform: 0.25 each": (0.25, 0.25, 0.25, 0.25),
    "mostly right: 0.7, 0.1, 0.1, 0.1": (0.7, 0.1, 0.1, 0.1),
}
G_VALUES = (2, 3, 4, 6, 8, 12, 16)
G_CHOICES = tuple(str(g) for g in G_VALUES)
MODES = ("exact", "sampled")
DRAWS = 120  # seeded draws per estimator and group size on the main figure
RUNS = 32  # seeded runs averaged on the Learning tab
ORDER = ("none", "constant", "mean", "optimal", "group_mean", "leave_one_out", "group_norm")
ROW_LABELS = {
    "none": "no baseline",
    "constant": "constant b",
    "mean": "mean reward E[r]",
    "optimal": "best constant b*",
    "group_mean": "group mean (GRPO, no std)",
    "leave_one_out": "leave-one-out (RLOO)",
    "group_norm": "group mean and std (GRPO)",
}

SPEC = Spec(
    "Policy_gradient",
    (
        Field("pg_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field(
            "pg_rewards",
            "Rewards of answers A, B, C, D",
            "choice",
            next(iter(REWARD_SETS)),
            choices=tuple(REWARD_SETS),
            help="graded rewards take more than two values; a checker's are 0/1",
        ),
        Field("pg_policy", "Policy π over A, B, C, D", "choice", next(iter(POLICIES)), choices=tuple(POLICIES)),
        Field(
            "pg_G",
            "Answers per update G",
            "choice",
            "4",
            choices=G_CHOICES,
            widget="segmented",
            help="a single-answer baseline averages G independent answers; a group baseline uses the G answers of one "
            "prompt. The row under the figure drags it in the browser.",
        ),
        Field(
            "pg_b",
            "Constant baseline b",
            "float",
            0.5,
            lo=-1.0,
            hi=2.0,
            step=0.05,
            fmt="%.2f",
            help="subtracted from every reward; any b that does not depend on the answer leaves the mean unchanged",
        ),
        Field("pg_steps", "Updates", "int", 40, lo=10, hi=200, step=10),
        Field("pg_lr", "Learning rate", "float", 1.0, lo=0.1, hi=5.0, step=0.1, fmt="%.1f"),
        Field(
            "pg_mode",
            "Learning curves",
            "choice",
            MODES[0],
            choices=MODES,
            widget="segmented",
            help="exact: each step takes the estimator's expected gradient (the bias alone); sampled: one seeded "
            "group per step, the mean of the runs (the variance shows)",
        ),
        Field("pg_seed", "Seed", "int", 0, lo=0, hi=9999, step=1),
        ask.switch("predict_pg"),
        ask.guess("guess_pg_scale", "Your guess: the group mean's E[g] in units of ∇J", "float", 0.0, 3.0),
    ),
    presets={
        "A6.4: REINFORCE, the score-function estimator": {"pg_view": SPREAD, "pg_G": "4"},
        "A6.5: why a baseline is unbiased": {"pg_view": ZERO, "pg_b": 1.0},
        "A6.5: which baseline minimises the variance": {"pg_view": ZERO, "pg_b": 0.3},
        "A6.5 follow-up / A6.7: what GRPO's group mean does to the gradient": {"pg_view": GROUP, "pg_G": "4"},
        "RLOO: unbiased, the group mean's signal-to-noise": {"pg_view": SPREAD, "pg_G": "2"},
        "Dr. GRPO: with 0/1 rewards the std weights each prompt": {
            "pg_view": GROUP,
            "pg_rewards": "checker: 1, 0, 0, 0",
        },
        "Learning with sampled groups": {"pg_view": LEARNING, "pg_mode": "sampled"},
    },
)


def _inputs(state: State) -> tuple[np.ndarray, np.ndarray]:
    """theta = log pi (so that softmax(theta) = pi) and the rewards of the state's choices."""
    pi = POLICIES.get(state.pg_policy, next(iter(POLICIES.values())))
    r = REWARD_SETS.get(state.pg_rewards, next(iter(REWARD_SETS.values())))
    return np.log(np.array(pi)), np.array(r)


@functools.lru_cache(maxsize=32)
def _moments(pi: tuple, r: tuple, G: int, b: float) -> dict[str, pg.EstimatorMoments]:
    theta = np.log(np.array(pi))
    return {e: pg.estimator_moments(theta, np.array(r), e, G, b=b) for e in ORDER}


@functools.lru_cache(maxsize=16)
def _sweep(pi: tuple, r: tuple, b: float, seed: int) -> tuple:
    """For every G of the drag: the draws, exact means and standard deviations projected on ∇J in its units (the
    projection's own sd, √(∇Jᵀ Cov ∇J) / |∇J|², the spread the points show), and the panel's numbers. The same
    whatever the page's G, so that a drag step is the page at that G."""
    theta, rv = np.log(np.array(pi)), np.array(r)
    grad = pg.policy_gradient(theta, rv)
    gg = float(grad @ grad)
    points, means, sds, facts = [], [], [], []
    for G in G_VALUES:
        m = _moments(pi, r, G, b)
        sim = pg.simulate_estimators(theta, rv, ORDER, G, DRAWS, seed, b=b)
        points.append(np.array([sim[e].samples @ grad / gg for e in ORDER]))
        means.append(np.array([float(m[e].mean @ grad) / gg for e in ORDER]))
        sds.append(np.array([math.sqrt(max(float(grad @ m[e].covariance @ grad), 0.0)) / gg for e in ORDER]))
        cos, scale = pg.alignment(m["group_norm"].mean, grad)
        facts.append(
            {
                "group_mean": float(m["group_mean"].mean @ grad) / gg,
                "rloo_ratio": m["leave_one_out"].total_variance / m["group_mean"].total_variance,
                "norm_scale": scale,
                "norm_cos": cos,
                "variances": tuple(m[e].total_variance / gg for e in ("none", "constant", "mean", "optimal")),
            }
        )
    return points, means, sds, facts


def _panel(G: int, f: dict) -> str:
    return "<br>".join(
        [
            f"<b>G = {G} answers per update</b>",
            f"group mean: E[g] = {f['group_mean']:.3f} ∇J",
            f"RLOO: E[g] = ∇J, variance × {f['rloo_ratio']:.2f}",
            f"mean and std: {f['norm_scale']:.2f} on ∇J, cos {f['norm_cos']:.3f}",
        ]
    )


@functools.lru_cache(maxsize=16)
def _spread_fig(pi: tuple, r: tuple, b: float, seed: int, at: int, theme: str, pres: bool) -> go.Figure:
    points, means, sds, facts = _sweep(pi, r, b, seed)
    lo = min(float(np.min(m - 1.6 * s)) for m, s in zip(means, sds, strict=True))
    hi = max(float(np.max(m + 1.6 * s)) for m, s in zip(means, sds, strict=True))
    jitter = np.random.default_rng(1).uniform(-0.28, 0.28, DRAWS)
    return spread_figure(
        [ROW_LABELS[e] for e in ORDER], points, means, sds, jitter, G_CHOICES,
        [_panel(G, f) for G, f in zip(G_VALUES, facts, strict=True)], active=at,
        x_range=(math.floor(lo), math.ceil(hi)), theme=theme, presenter=pres,
    )  # fmt: skip


@functools.lru_cache(maxsize=16)
def _curves(pi: tuple, r: tuple, steps: int, lr: float, G: int, mode: str, seed: int, b: float) -> pg.LearningCurves:
    return pg.learning_curves(np.log(np.array(pi)), np.array(r), ORDER, steps, lr, G, mode, RUNS, seed, b=b)


def figures(state: State, options: Options = DEFAULT) -> View:
    """The figures of the tabs named in ``options.parts`` (the four ``VIEWS``; ``main`` is the open tab's), each
    tab's readouts, and the table behind the Spread figure.

    Facts: ``predict``, ``group_mean`` (the group mean's E[g] on ∇J at the page's G), ``b_star``. Bad input gives a
    note, never an exception.
    """
    parts = set(options.parts)
    if "main" in parts:
        parts.add(state.pg_view)
    view = View()
    theta, r = _inputs(state)
    pi_t = POLICIES.get(state.pg_policy, next(iter(POLICIES.values())))
    r_t = tuple(float(x) for x in r)
    G = int(state.pg_G) if state.pg_G in G_CHOICES else 4
    at = G_VALUES.index(G)
    b, seed = float(state.pg_b), int(state.pg_seed)
    J = pg.expected_reward(theta, r)
    grad = pg.policy_gradient(theta, r)
    _, means, sds, facts = _sweep(pi_t, r_t, b, seed)
    f = facts[at]
    b_star = pg.optimal_baseline(theta, r)
    view.facts.update(group_mean=f["group_mean"], b_star=b_star, J=J)
    predicting = ask.mode(state, "predict_pg", "guess_pg_scale")
    view.facts["predict"] = predicting
    question = (
        f"With G = {G} answers per prompt and GRPO's group mean as the baseline (no std), the expected gradient is "
        "what multiple of the true gradient ∇J?"
    )
    v = f["variances"]
    view.readouts = [
        Readout("Expected reward J", f"{J:.3f}", "Σ_a π_a r_a, the objective the gradient climbs"),
        Readout(
            "Group mean: E[g] on ∇J",
            f"{f['group_mean']:.3f}",
            f"(G − 1)/G at G = {G}: the sample's own reward sits in its baseline, a shorter step in the same direction",
        ),
        Readout(
            "RLOO: variance ÷ the group mean's",
            f"{f['rloo_ratio']:.2f}",
            f"(G/(G − 1))² at G = {G}: RLOO's estimate is G/(G − 1) times the group mean's, draw by draw: the same "
            "direction and signal-to-noise, a step size (with a KL term in the loss, also a β)",
        ),
        Readout(
            "Mean and std: E[g] on ∇J, cosine",
            f"{f['norm_scale']:.2f}, {f['norm_cos']:.3f}",
            "the std divides each group by its own spread: with three or more distinct rewards E[g] can also turn; "
            "with 0/1 rewards the cosine is 1",
        ),
        Readout("tr Cov, no baseline", f"{v[0]:.2f}", f"in units of |∇J|², one update of G = {G} answers"),
        Readout(
            "tr Cov, best constant b*",
            f"{v[3]:.2f}",
            f"in units of |∇J|², G = {G}; the constant b = {b:g} gives {v[1]:.2f}, the mean reward E[r] {v[2]:.2f}: "
            "every one of these baselines is unbiased",
        ),
    ]
    if SPREAD in parts:
        if predicting == "hidden":
            view.figures[SPREAD] = predict_figure(
                question, x_title="estimate projected on ∇J, in units of |∇J|", x_range=(-3, 5), **options.look
            )
        else:
            view.figures[SPREAD] = _spread_fig(pi_t, r_t, b, seed, at, options.theme, options.presenter)
            view.drags[SPREAD] = Drag("pg_G", G_CHOICES)
    if ZERO in parts:
        pi = np.array(pi_t)
        terms = np.array([pi[a] * b * (np.eye(len(pi))[a] - pi) for a in range(len(pi))])  # (answer, component)
        sums = pg.baseline_contribution(theta, b)
        bs = np.linspace(-1.0, 2.0, 121)
        var = np.array([pg.baseline_moments(theta, r, "constant", float(x)).total_variance for x in bs])
        view.figures[ZERO] = zero_figure(terms, sums, ANSWERS, bs, var, b, b_star, J, **options.look)
        v_b = pg.baseline_moments(theta, r, "constant", b).total_variance
        v_star = pg.baseline_moments(theta, r, "optimal").total_variance
        v_none = pg.baseline_moments(theta, r, "none").total_variance
        view.readouts += [
            Readout("Σ_a π_a b (e_a − π)", "0", "every component: the terms cancel exactly (to floating-point "
                    "rounding here), whatever b is"),
            Readout("Best constant b*", f"{b_star:.3f}", "E[r |s|²] / E[|s|²] with s = e_a − π: " + (
                "equals E[r] here (every |s_a|² is the same)" if abs(b_star - J) < 5e-4 else f"not E[r] = {J:.3f}")),
            Readout("One answer: tr Cov at your b", f"{v_b:.4f}", f"b = {b:g}; with no baseline {v_none:.4f}"),
            Readout("One answer: tr Cov at b*", f"{v_star:.4f}", "the lowest point of the parabola"),
        ]  # fmt: skip
    if GROUP in parts:
        Gs = np.arange(2, 17)
        scales = {
            "group mean": np.array([(g - 1) / g for g in Gs]),
            "leave-one-out (RLOO)": np.ones(len(Gs)),
            "mean and std": np.array([pg.alignment(pg.group_moments(theta, r, "group_norm", int(g)).mean, grad)[1]
                                      for g in Gs]),
        }  # fmt: skip
        p = np.linspace(0.01, 0.99, 99)
        binary = pg.group_norm_scale_binary(p, G)
        if predicting == "hidden":
            view.figures[GROUP] = predict_figure(question, x_title="group size G", x_range=(2, 16), **options.look)
        else:
            view.figures[GROUP] = group_figure(Gs, scales, G, p, binary, **options.look)
        half, tenth = pg.group_norm_scale_binary(0.5, G), pg.group_norm_scale_binary(0.1, G)
        view.facts["binary"] = (half, tenth)
        view.readouts += [
            Readout("0/1 rewards: E[g] ÷ ∇J at p = 0.5 / 0.1", f"{half:.2f} / {tenth:.2f}",
                    f"mean and std at G = {G}: parallel to ∇J within a prompt, times a weight that depends on its "
                    "success rate p (the same for every p at G = 2 and 3, about 1/√(p(1 − p)) in large groups): "
                    "across prompts, the difficulty bias that Dr. GRPO removes"),
        ]  # fmt: skip
    if LEARNING in parts:
        steps, lr = int(state.pg_steps), float(state.pg_lr)
        mode = state.pg_mode if state.pg_mode in MODES else MODES[0]
        core_mode = "expected" if mode == "exact" else "sampled"
        lc = _curves(pi_t, r_t, steps, lr, G, core_mode, seed, b)
        curves = {ROW_LABELS[e]: lc.expected_reward[e] for e in ORDER}
        spreads = {ROW_LABELS[e]: lc.reward_spread[e] for e in ORDER}
        if mode == "exact":  # every single-answer baseline and RLOO take the same expected step: one line
            keep = ("none", "group_mean", "group_norm")
            curves = {("∇J (every unbiased estimator)" if e == "none" else ROW_LABELS[e]):
                      lc.expected_reward[e] for e in keep}  # fmt: skip
        view.figures[LEARNING] = learning_figure(lc.steps, curves, spreads, core_mode, float(r.max()), **options.look)
        ex = lc if mode == "exact" else _curves(pi_t, r_t, steps, lr, G, "expected", seed, b)
        view.readouts += [
            Readout(f"J after {steps} exact steps: ∇J", f"{ex.expected_reward['none'][-1]:.3f}",
                    f"learning rate {lr:g}; every unbiased estimator's expected step"),
            Readout(f"J after {steps} exact steps: group mean", f"{ex.expected_reward['group_mean'][-1]:.3f}",
                    f"steps of (G − 1)/G ∇J at G = {G}"),
            Readout(f"J after {steps} exact steps: mean and std", f"{ex.expected_reward['group_norm'][-1]:.3f}",
                    "its steps are about 1/std times longer (the std is at most 0.5 with rewards in [0, 1]; the first "
                    f"expected step is {f['norm_scale']:.1f} ∇J here), like a larger learning rate: where it ends is "
                    "not a comparison of estimators"),
        ]  # fmt: skip
    view.tables[SPREAD] = lambda: pd.DataFrame(
        {
            "estimator": [ROW_LABELS[e] for e in ORDER],
            "mean_on_gradient": means[at],
            "sd_along_gradient_in_gradient_units": sds[at],
            "tr_cov_in_gradient_units_squared": [
                _moments(pi_t, r_t, G, b)[e].total_variance / float(grad @ grad) for e in ORDER
            ],
        }
    )
    if predicting == "hidden":
        ask.hide(view, question, ("Group mean", "RLOO", "J after"), tables=(SPREAD,))
    elif predicting == "revealed":
        g = float(state.guess_pg_scale)
        if SPREAD in view.figures:
            view.figures[SPREAD] = with_guess(view.figures[SPREAD], g, f"your guess: {g:g}", theme=options.theme)
        ask.reveal(
            view,
            Readout("Group mean: E[g] on ∇J (the answer)", f"{f['group_mean']:.3f}", f"(G − 1)/G at G = {G}"),
            f"{g:g}",
            f"{g - f['group_mean']:+.3f}".replace("-", "−"),
            "your guess minus the answer",
            value=f["group_mean"],
        )
    if "main" in parts:
        view.show_as_main(state.pg_view)
    return with_answers(SPEC, state, view)
