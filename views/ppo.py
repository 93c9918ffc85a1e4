"""The PPO page's state and what it shows: the clip and its gradient (main), a token batch, GAE, the KL estimators
and the memory of the four models (tabs, built only when open)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core import ppo
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, inputs, with_answers
from views.state import Answer, Field, Spec, State
from viz import format as fmt
from viz.ppo import (
    clip_batch_figure,
    gae_bias_variance_figure,
    gae_figure,
    kl_estimators_figure,
    ppo_clip_figure,
    rlhf_memory_figure,
)

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "What does PPO's clip actually do, and why the min?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "does not cap the size of a step",
    "switches a token's gradient off",
    "pessimistic",
    "full corrective gradient",
)

QUICK_CHECK = QuickCheck(
    question=(
        "ε = 0.2 and a token has ratio ρ = 1.3. What is the gradient of PPO's clipped objective "
        "min(ρA, clip(ρ, 1 − ε, 1 + ε)A) (maximised) with respect to ρ if A = +1? If A = −1?"
    ),
    options=(
        "0 for A = +1; −1.3 for A = −1",
        "+1 for A = +1; 0 for A = −1",
        "0 for both: ρ lies outside [0.8, 1.2]",
        "0 for A = +1; −1 for A = −1",
    ),
    right=3,
    answer=(
        "**0** for A = +1: it is past 1 + ε in the direction its advantage favours, so the clipped term is the "
        "minimum and it is flat. **−1** (the full A) for A = −1: the min keeps ρA = −1.3 < −1.2, the unclipped term. "
        "In θ that token's gradient is ρ·A·∇_θ log π_θ = −1.3·∇_θ log π_θ. Press the preset *Ratio 1.3: above "
        "1 + ε* to see both (seed 002, A6.6)."
    ),
)

VIEWS = ("Token batch", "GAE", "KL estimators", "Memory")
RHO_RANGE = (0.5, 1.5)  # the clip figure's ratios (and its slider's), step 0.01
RHO_STEPS = 101
# the KL tab's toy vocabulary: pi_theta = the lesson-style example, pi_ref flatter (KL 0.285 nats at drift 1)
KL_TARGET = (0.5, 0.3, 0.15, 0.05)
KL_REF = (0.2, 0.3, 0.3, 0.2)
GAE_DEFAULT = ppo.GAE_PRESETS["sparse"]


def _clip_preset(key: str) -> dict:
    p = ppo.CLIP_PRESETS[key]
    asym = p.eps_high != p.eps_low
    return {"rho": p.ratio, "clip_eps": p.eps_low, "clip_higher": asym, "clip_high": p.eps_high if asym else 0.28}


def _gae_preset(key: str) -> dict:
    p = ppo.GAE_PRESETS[key]
    return {
        "ppo_view": "GAE",
        "gae_r": inputs.format_values(p.rewards),
        "gae_v": inputs.format_values(p.values),
        "gamma": p.gamma,
        "lam": p.lam,
    }


PRESETS = {
    "Ratio 1.3: above 1 + ε": _clip_preset("above_pos"),
    "Ratio 0.7: below 1 − ε": _clip_preset("below_neg"),
    "Ratio 1.05: inside the range": _clip_preset("inside"),
    "DAPO clip-higher: ratio 1.25": _clip_preset("dapo"),
    "Token batch: a policy that moved far": {"ppo_view": "Token batch", "noise": 0.3},
    "GAE: reward only at the end": _gae_preset("sparse"),
    "GAE: rewards along the way": _gae_preset("dense"),
    "KL: a policy twice as far": {"ppo_view": "KL estimators", "drift": 2.0},
    "Memory: InstructGPT, 175B policy, 6B reward model": {"ppo_view": "Memory", "pol_b": 175.0, "rm_b": 6.0},
}
PRESET_HELP = {
    "Ratio 1.3: above 1 + ε": "A > 0: gradient 0 (clipped). A < 0: d/dρ = A, the min keeps ρA (in θ: ρ·A·∇log π).",
    "Ratio 0.7: below 1 − ε": "A < 0: gradient 0 (clipped). A > 0: d/dρ = A (in θ: ρ·A·∇log π).",
    "Ratio 1.05: inside the range": "Both signs: d/dρ = A (in θ: ρ·A·∇log π).",
    "DAPO clip-higher: ratio 1.25": "ε_high = 0.28: 1.25 is still inside, so a good token keeps its gradient.",
}

SPEC = Spec(
    "PPO",
    (
        Field(
            "rho",
            "Ratio ρ = π_θ / π_old",
            "float",
            1.0,
            lo=RHO_RANGE[0],
            hi=RHO_RANGE[1],
            step=0.01,
            fmt="%.2f",
            widget="slider",
            help="Every token starts a batch at ρ = 1. Drag the slider under the figure to move ρ in the browser.",
        ),
        Field("clip_eps", "ε (clip range 1 ± ε)", "float", ppo.EPS_DEFAULT, lo=0.01, hi=0.5, step=0.01,
              widget="slider", help="PPO's default is 0.2 (Schulman et al., 2017). With clip-higher: ε_low."),
        Field("clip_higher", "Clip-higher (DAPO): a wider upper bound", "bool", False,
              help="Yu et al. (2025): ε_low = 0.2, ε_high = 0.28."),
        Field("clip_high", "ε_high (upper clip 1 + ε_high)", "float", ppo.DAPO_EPS_HIGH, lo=0.01, hi=0.5, step=0.01,
              widget="slider"),
        Field("ppo_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field("noise", "Spread of log ρ across tokens (σ)", "float", 0.15, lo=0.0, hi=1.0, step=0.01,
              widget="slider", help="How far the policy has moved since it sampled the batch."),
        Field("tok_n", "Tokens in the batch", "int", 400, lo=10, hi=5000, step=10),
        Field("gae_r", "Rewards r_t", "text", inputs.format_values(GAE_DEFAULT.rewards), max_chars=400,
              help="One per step, commas or spaces between them."),
        Field("gae_v", "Critic values V(s_0) … V(s_T)", "text", inputs.format_values(GAE_DEFAULT.values), max_chars=400,
              help="One more than the rewards: the last is the bootstrap value (0 if the episode ended)."),
        Field("gamma", "γ (discount)", "float", GAE_DEFAULT.gamma, lo=0.0, hi=1.0, step=0.01, widget="slider"),
        Field("lam", "λ (GAE)", "float", GAE_DEFAULT.lam, lo=0.0, hi=1.0, step=0.01, widget="slider"),
        Field("critic_err", "The critic's error b (bias/variance study)", "float", 0.5, lo=-2.0, hi=2.0, step=0.1,
              widget="slider"),
        Field("drift", "How far π_θ moved from π_ref (1 = the example)", "float", 1.0, lo=0.0, hi=2.0, step=0.05,
              widget="slider"),
        Field("kl_n", "Sampled tokens", "int", 2000, lo=10, hi=20_000, step=10),
        Field("pol_b", "Policy (billions of parameters)", "float", 7.0, lo=0.1, hi=2000.0, step=1.0),
        Field("rm_b", "Reward model and critic (billions)", "float", 7.0, lo=0.1, hi=2000.0, step=1.0),
    ),
    presets=PRESETS,
    preset_help=PRESET_HELP,
    answers={
        'Ratio 1.3: above 1 + ε': Answer('A > 0: gradient d/dρ', '0', 'Schulman et al. 2017, the clipped objective'),
        'Ratio 0.7: below 1 − ε': Answer('A < 0: gradient d/dρ', '0', 'Schulman et al. 2017, the clipped objective'),
        'DAPO clip-higher: ratio 1.25': Answer('A > 0: gradient d/dρ', '+1', 'Yu et al. 2025 (DAPO), ε_high = 0.28'),
    },
)  # fmt: skip


def eps_of(state: State) -> tuple[float, float]:
    """(ε_low, ε_high) of a state: symmetric unless clip-higher is on."""
    return float(state.clip_eps), float(state.clip_high if state.clip_higher else state.clip_eps)


def rho_grid() -> list[float]:
    """The ratios of the figure's slider steps (the values a drag can write into ``rho``)."""
    return [float(x) for x in np.round(np.linspace(*RHO_RANGE, RHO_STEPS), 12)]


def _grad_text(g: float, A: float) -> str:
    if A != 0 and g == 0:
        return "0 · clipped"
    return f"{g:+g} · full".replace("-", "−")


def kl_policy(drift: float) -> np.ndarray:
    """π_θ ∝ π_ref^(1 − t) · π_target^t: t = 0 is π_ref, t = 1 the example policy, t = 2 further along."""
    logits = (1.0 - drift) * np.log(KL_REF) + drift * np.log(KL_TARGET)
    p = np.exp(logits - logits.max())
    return p / p.sum()


def figures(state: State, options: Options = DEFAULT) -> View:
    """The clip (``main``) and, when asked for, the tabs' figures (``batch``, ``gae``, ``kl``, ``memory``).

    Bad input (ε <= 0, γ or λ outside [0, 1], an empty or mismatched trajectory) gives a notice and no figure
    for that part, never an exception.
    """
    view = View()
    lo, hi = eps_of(state)
    rho = float(state.rho)
    try:
        curve = ppo.ppo_clip_curve(lo, hi, (1.0, -1.0), *RHO_RANGE, RHO_STEPS)
        obj = ppo.ppo_clip_objective(rho, np.array([1.0, -1.0]), lo, hi)
        grad = ppo.ppo_clip_gradient(rho, np.array([1.0, -1.0]), lo, hi)
    except ValueError as err:
        view.notices.append(("warning", f"The clip cannot be drawn: {err}."))
        curve = None
    if curve is not None:
        view.facts.update(curve=curve, grad=grad, objective=obj)
        if options.wants("main"):
            view.figures["main"] = ppo_clip_figure(curve, rho, **options.look)
            view.drags["main"] = Drag("rho", tuple(rho_grid()))
        view.readouts = [
            Readout("Ratio ρ", f"{rho:.2f}", "π_θ(a|s) / π_old(a|s) of one token"),
            Readout("Clip range", f"[{1 - lo:.2f}, {1 + hi:.2f}]", "1 − ε_low to 1 + ε_high"),
            Readout("A > 0: gradient d/dρ", _grad_text(float(grad[0]), 1.0), "for A = +1"),
            Readout("A < 0: gradient d/dρ", _grad_text(float(grad[1]), -1.0), "for A = −1"),
            Readout("A > 0: objective", fmt.fixed(float(obj[0])), "min(ρA, clip(ρ)A) at A = +1"),
            Readout("A < 0: objective", fmt.fixed(float(obj[1])), "min(ρA, clip(ρ)A) at A = −1"),
        ]
        view.tables["Clip curve"] = lambda: pd.DataFrame(
            {
                "ratio": curve.ratio,
                "objective_A+1": curve.objective[0],
                "gradient_A+1": curve.gradient[0],
                "objective_A-1": curve.objective[1],
                "gradient_A-1": curve.gradient[1],
            }
        )

    if options.wants("batch"):
        _batch(state, options, view, lo, hi)
    gae_input = _gae_input(state, view)  # typed lists are checked on every run: a bad link says so at once
    if options.wants("gae"):
        _gae(state, options, view, gae_input)
    if options.wants("kl"):
        _kl(state, options, view)
    if options.wants("memory"):
        _memory(state, options, view)
    return with_answers(SPEC, state, view)


def _batch(state: State, options: Options, view: View, lo: float, hi: float) -> None:
    try:
        b = ppo.token_batch(int(state.tok_n), float(state.noise), lo, hi, seed=0)
    except ValueError as err:
        view.notices.append(("warning", f"The token batch cannot be drawn: {err}."))
        return
    view.figures["batch"] = clip_batch_figure(b, **options.look)
    view.facts["batch"] = b
    weight = b.ratio * np.abs(b.advantage)  # (n,) rho |A|: the size of each token's gradient in theta, unclipped
    theta_share = float(weight[~b.clipped].sum() / weight.sum()) if weight.sum() > 0 else 1.0
    view.facts["batch_readouts"] = [
        Readout("Outside the range", f"{100 * b.fraction_outside:.1f}%", "ratio outside [1 − ε_low, 1 + ε_high]"),
        Readout("Clipped (gradient 0)", f"{100 * b.fraction_clipped:.1f}%", "outside on the side A favours"),
        Readout(
            "Share of |d/dρ| kept",
            f"{100 * b.surviving_share:.1f}%",
            "Σ|d/dρ| / Σ|A| over the tokens. In θ a kept token's gradient is ρ·A·∇log π: weighted by ρ, "
            f"Σ ρ|A| over the kept tokens / Σ ρ|A| over all is {100 * theta_share:.1f}%",
        ),
    ]
    view.tables["Token batch"] = lambda: pd.DataFrame(
        {"ratio": b.ratio, "advantage": b.advantage, "clipped": b.clipped, "gradient": b.gradient}
    )


def _gae_input(state: State, view: View) -> tuple[list[float], list[float]] | None:
    rewards, p1 = inputs.read_numbers(state.gae_r, "Rewards")
    values, p2 = inputs.read_numbers(state.gae_v, "Critic values")
    problem = p1 or p2
    if problem is None and not rewards:
        problem = "The trajectory is empty: type at least one reward (and one more critic value than rewards)."
    elif problem is None and len(values) != len(rewards) + 1:
        problem = (
            f"The critic needs one more value than there are rewards (the last is the bootstrap value, 0 if the "
            f"episode ended): {len(rewards)} rewards, {len(values)} values."
        )
    if problem is not None:
        view.notices.append(("warning", f"GAE: {problem}"))
        return None
    return rewards, values


def _gae(state: State, options: Options, view: View, gae_input: tuple[list[float], list[float]] | None) -> None:
    gamma, lam = float(state.gamma), float(state.lam)
    try:
        study = ppo.gae_bias_variance(critic_error=float(state.critic_err), gamma=gamma, n=4000, seed=0)
        # the closed form at the slider's λ itself (the study's grid steps by 0.1; n only sizes its unused sample)
        at_lam = ppo.gae_bias_variance(critic_error=float(state.critic_err), gamma=gamma, lams=[lam], n=2, seed=0)
        if gae_input is not None:
            rewards, values = gae_input
            lams = sorted({0.0, 0.5, 0.9, 1.0, lam})
            delta = ppo.td_errors(rewards, values, gamma)
            adv = np.stack([ppo.gae(rewards, values, gamma, x) for x in lams])  # (L, T)
    except ValueError as err:
        view.notices.append(("warning", f"GAE cannot be computed: {err}."))
        return
    view.figures["gae_bv"] = gae_bias_variance_figure(study, lam, **options.look)
    view.facts["gae_study"] = study
    view.facts["gae_readouts"] = [
        Readout(
            "Best λ (toy chain)",
            f"{study.best_lam:.1f}",
            f"smallest bias² + variance, closed form, over λ = 0, 0.1, …, 1 at γ = {gamma:g}, b = "
            f"{float(state.critic_err):g} and the rewards' noise σ = {study.sigma:g}",
        ),
        Readout(
            "bias² at λ = 0 / 1",
            f"{study.bias_sq_exact[0]:.3f} / {study.bias_sq_exact[-1]:.3f}",
            "mean over steps of the squared mean error against Q(s_t, a_t) − V(s_t), V the critic's own values",
        ),
        Readout(
            "variance at λ = 0 / 1",
            f"{study.variance_exact[0]:.3f} / {study.variance_exact[-1]:.3f}",
            f"mean over steps of the error's variance: the chain's rewards carry noise of standard deviation "
            f"σ = {study.sigma:g} at every step, and the variance grows with σ²",
        ),
        Readout(
            f"bias² + variance at λ = {lam:g}",
            f"{at_lam.bias_sq_exact[0] + at_lam.variance_exact[0]:.3f}",
            "closed form, at the slider's λ",
        ),
    ]
    if gae_input is None:
        return
    view.figures["gae"] = gae_figure(rewards, values, delta, lams, adv, lam, **options.look)
    a_lam = adv[lams.index(lam)]
    view.facts["gae_advantages"] = a_lam
    view.facts["gae_readouts"].insert(0, Readout("A_0 at this λ", fmt.fixed(float(a_lam[0])), "the first step"))
    err0, err1 = ppo.gae_limit_residuals(rewards, values, gamma, adv[lams.index(0.0)], adv[lams.index(1.0)])
    view.facts["gae_limits"] = (err0, err1)
    view.facts["gae_limit_readouts"] = [
        Readout(
            "λ = 0: max |A − δ|",
            f"{err0:.1e}",
            "GAE at λ = 0 against the one-step TD error δ_t = r_t + γV(s_{t+1}) − V(s_t), written out: 0 up to "
            "float rounding",
        ),
        Readout(
            "λ = 1: max |A − (G − V)|",
            f"{err1:.1e}",
            "GAE at λ = 1 against the Monte Carlo return minus the value, G_t − V(s_t), with G_t summed directly "
            "(bootstrap γ^(T−t) V(s_T)): 0 up to float rounding",
        ),
    ]
    view.tables["GAE"] = lambda: pd.DataFrame(
        {"t": np.arange(len(rewards)), "reward": rewards, "value": values[:-1], "delta": delta}
        | {f"A_lambda={x:g}": row for x, row in zip(lams, adv, strict=True)}
    )


def _kl(state: State, options: Options, view: View) -> None:
    try:
        study = ppo.kl_estimator_study(kl_policy(float(state.drift)), np.array(KL_REF), n=int(state.kl_n), seed=0)
    except ValueError as err:
        view.notices.append(("warning", f"The KL estimators cannot be computed: {err}."))
        return
    r = np.geomspace(0.05, 20.0, 241)  # (241,) r = pi_ref / pi_theta
    curves = ppo.kl_estimators(np.zeros_like(r), np.log(r))
    view.figures["kl"] = kl_estimators_figure(study, r, curves, **options.look)
    view.facts["kl"] = study
    view.facts["kl_readouts"] = [
        Readout("Exact KL(π_θ ‖ π_ref)", f"{study.exact_kl:.3f} nats", "a sum over the 4-token vocabulary"),
        *(
            Readout(
                f"{name}: mean ± std",
                f"{study.mean[k]:.3f} ± {study.std[k]:.2f}",
                "both exact (sums over the vocabulary): the mean and the standard deviation of one sampled token's "
                "estimate",
            )
            for k, name in enumerate(ppo.KL_NAMES)
        ),
        Readout("k1 < 0 in the sample", f"{100 * study.negative_share[0]:.0f}%", f"of {study.n:,} tokens"),
        Readout("k3 < 0 in the sample", f"{100 * study.negative_share[2]:.0f}%", "never: (r − 1) − log r ≥ 0"),
    ]
    view.tables["KL estimators"] = lambda: pd.DataFrame(
        {"estimator": ppo.KL_NAMES, "exact_mean": study.mean, "std": study.std, "bias": study.bias,
         "sample_mean": study.sample_mean, "negative_share": study.negative_share}
    )  # fmt: skip


def _memory(state: State, options: Options, view: View) -> None:
    N, R = float(state.pol_b) * 1e9, float(state.rm_b) * 1e9
    try:
        methods = {
            "PPO": ppo.rlhf_memory(N, R, R, "ppo"),
            "GRPO": ppo.rlhf_memory(N, R, R, "grpo"),
            "DPO": ppo.rlhf_memory(N, R, R, "dpo"),
        }
    except ValueError as err:
        view.notices.append(("warning", f"The memory cannot be computed: {err}."))
        return
    view.figures["memory"] = rlhf_memory_figure(methods, **options.look)
    totals = {k: sum(m.bytes for m in rows) for k, rows in methods.items()}
    view.facts["memory_totals"] = totals
    view.facts["memory_readouts"] = [
        Readout(f"{k} total", fmt.nbytes(v), "16 bytes per trained parameter, 2 per frozen one; no activations")
        for k, v in totals.items()
    ]
    view.tables["Memory"] = lambda: pd.DataFrame(
        [{"method": k, "model": m.name, "params": m.params, "trains": m.trains, "bytes": m.bytes}
         for k, rows in methods.items() for m in rows]
    )  # fmt: skip
