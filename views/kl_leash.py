"""The KL-leash page's state and what it shows: the optimal policy's bars (main) and, when asked for, the tabs'
views (the β sweep, reward hacking, the theorem check, DPO)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from core import kl_leash
from core.dpo import DPO_PRESETS, dpo_curve, dpo_loss
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, inputs, with_answers
from views import predict as ask
from views.state import Answer, Field, Spec, State
from viz import format as fmt
from viz.dpo import dpo_figure
from viz.kl_leash import kl_hacking_figure, kl_leash_figure, kl_sweep_figure, kl_theorem_figure
from viz.predict import predict_figure, with_guess

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "Why does RLHF need a KL penalty against the reference model, and what happens without it?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "exp(r/β)",
    "reweights",
    "only trustworthy near",
    "0.88",
    "chases the reward model's mistakes",
)

QUICK_CHECK = QuickCheck(
    question=(
        "In the lesson's toy (π_ref = (0.5, 0.5), rewards (1, 0); π* maximises E[r] − β·KL(π‖π_ref)), β = 1 gives "
        "π* = (0.731, 0.269). **Halve β to 0.5.** What probability does the better answer get?"
    ),
    options=(
        "0.622",
        "0.881",
        "0.962",
    ),
    right=1,
    answer=(
        "π* ∝ (0.5·e², 0.5·e⁰), so π*(better) = e²/(e² + 1) = **0.881**. Halving β doubles every r/β: the same "
        "reward difference now buys twice the log-odds. Set β = 0.5 in the sidebar to see it."
    ),
)

BETAS = tuple(f"{b:g}" for b in kl_leash.beta_choices())
VIEWS = ("Beta sweep", "Reward hacking", "Theorem check", "DPO")
DERIVATION_STEPS = ("1 optimal policy", "2 reward via policy", "3 Bradley-Terry", "4 log Z cancels")


def _leash(key: str) -> dict:
    p = kl_leash.LEASH_PRESETS[key]
    a = kl_leash.Answers.from_preset(p)
    return {"K": a.K, **inputs.answer_texts(a), "beta": f"{p.beta:g}"}


TOY = _leash("toy") | {"names": ""}  # the default view is the toy, its answers numbered
LEASH_PRESETS = {
    "Lesson's toy (two answers)": _leash("toy"),
    "Reward hack": _leash("reward_hack"),
    "Five answers": _leash("k5"),
}
DPO = {
    f"DPO: {p.label}": {
        "logp_w": p.logp_w,
        "logp_l": p.logp_l,
        "ref_w": p.ref_logp_w,
        "ref_l": p.ref_logp_l,
        "dpo_beta": p.beta,
    }
    for p in DPO_PRESETS.values()
}

SPEC = Spec(
    "KL_leash",
    (
        Field("K", "Answers K", "int", TOY["K"], lo=kl_leash.K_MIN, hi=kl_leash.K_MAX, widget="slider"),
        Field(
            "beta",
            "β (log scale)",
            "choice",
            TOY["beta"],
            choices=BETAS,
            widget="select_slider",
            help="The KL price per nat. The slider under the bars drags β continuously.",
        ),
        Field(
            "pi_ref",
            "π_ref (reference probabilities)",
            "text",
            TOY["pi_ref"],
            help="Comma-separated, one per answer; rescaled if they do not sum to 1.",
        ),
        Field("r", "r (reward-model score, optimised)", "text", TOY["r"]),
        Field(
            "r_true", "r_true (what people want)", "text", TOY["r_true"], extra=(("placeholder", "blank: same as r"),)
        ),
        Field("names", "Answer names", "text", TOY["names"], extra=(("placeholder", "blank: y1, y2, ..."),)),
        Field("kl_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs", aliases=("view",)),
        Field("sqrt", "√KL on the x-axis (Gao et al.'s distance)", "bool", False),
        Field(
            "thm",
            "View",
            "choice",
            "plane",
            choices=("plane", "objective"),
            widget="segmented",
            help="plane: (KL, E[r]) of every policy; objective: a histogram",
        ),
        Field(
            "policies",
            "Random policies",
            "int",
            20_000,
            lo=1_000,
            hi=100_000,
            step=1_000,
            widget="slider",
            aliases=("n",),
        ),
        Field("logp_w", "log π_θ(y_w), winner", "float", -10.0, lo=-1e4, hi=0.0, step=0.5),
        Field("logp_l", "log π_θ(y_l), loser", "float", -15.0, lo=-1e4, hi=0.0, step=0.5),
        Field("ref_w", "log π_ref(y_w)", "float", -12.0, lo=-1e4, hi=0.0, step=0.5),
        Field("ref_l", "log π_ref(y_l)", "float", -14.0, lo=-1e4, hi=0.0, step=0.5),
        Field("dpo_beta", "β (DPO)", "float", 0.1, lo=1e-3, hi=100.0, step=0.05, fmt="%.3f"),
        Field(
            "step",
            "The derivation, step by step",
            "choice",
            DERIVATION_STEPS[0],
            choices=DERIVATION_STEPS,
            widget="radio",
            extra=(("horizontal", True),),
        ),
        ask.switch("predict_kl"),
        ask.guess("guess_pi", "Your guess: π* of the top-reward answer", "float", 0.0, 1.0, step=0.01, fmt="%.3f"),
    ),
    presets={**LEASH_PRESETS, **DPO},
    answers={
        "DPO: Worked example B": Answer(
            "DPO loss", "0.554", "lesson 001 section 4, worked example B", row="dpo_readouts"
        ),
        "DPO: Start of training (pi = pi_ref)": Answer(
            "DPO loss", "0.693", "seed 002 A6.8: log 2 ≈ 0.693 at the reference policy", row="dpo_readouts"
        ),
    },
)


TOY_ANSWERS = inputs.read_answers(TOY["K"], TOY["pi_ref"], TOY["r"], TOY["r_true"], TOY["names"])[0]
"""The answers a text that cannot be read falls back to (field by field; a neutral set when K is not the toy's)."""


def answers_of(state: State) -> tuple[kl_leash.Answers, list[str]]:
    """The answers typed into a state's four text fields, and a message for each field that had to be replaced."""
    return inputs.read_answers(int(state.K), state.pi_ref, state.r, state.r_true, state.names, fallback=TOY_ANSWERS)


def figures(state: State, options: Options = DEFAULT) -> View:
    """The bars of π* against π_ref (``main``), the readouts at β, and, when asked for, each tab's figure under
    the tab's label (``Beta sweep``, ``Reward hacking``, ``Theorem check``, ``DPO``).

    Text that cannot be read gives a notice and the toy's values for that field, never an exception. ``facts``
    holds the answers in use (``answers``), the sweep, the numbers the tabs' captions quote, and DPO's readouts
    (``dpo_readouts``). Only the theorem check imports torch (on core's device).
    """
    view = View()
    beta = float(state.beta)
    answers, problems = answers_of(state)
    view.notices += [("warning", message) for message in problems]
    ref = kl_leash.normalize_reference(answers.pi_ref)
    if ref.renormalised:
        view.notices.append(
            (
                "info",
                f"π_ref sums to {ref.total:.6g}, not 1, so it was normalised to {inputs.format_values(ref.pi_ref)}.",
            )
        )
    sweep = kl_leash.leash_sweep(answers.pi_ref, answers.r, np.asarray(kl_leash.beta_choices()), answers.r_true)
    view.facts.update(answers=answers, beta=beta, sweep=sweep, predict="off")
    predicting = ask.mode(state, "predict_kl", "guess_pi")
    top = int(np.argmax(answers.r))  # the answer the question asks about: the reward model's favourite
    question = f"At β = {beta:g}, what probability does π* give {answers.names[top]}, the top-reward answer?"
    if predicting == "hidden" and options.wants("main"):
        reference = {"type": "bar", "x": list(answers.names), "y": list(ref.pi_ref), "name": "π_ref (the SFT model)"}
        view.figures["main"] = predict_figure(
            question, x_title="answer", y_title="probability", y_range=(0, 1.12), traces=[reference], **options.look
        )
    elif options.wants("main"):
        view.figures["main"] = kl_leash_figure(sweep, beta, answers.names, **options.look)  # its slider steps: BETAS
        view.drags["main"] = Drag("beta", BETAS)

    point = sweep.at(beta)
    view.facts["point"] = point
    view.readouts = [
        Readout(
            "KL(π* ‖ π_ref)", f"{fmt.number(point.kl)} nats", "how far the optimal policy moved from the SFT model"
        ),
        Readout("E_π*[r]", fmt.number(point.reward), "expected reward-model score under π*"),
        Readout("E[r] − β·KL", fmt.number(point.objective), "the objective at π*"),
        Readout("β·log Z", fmt.number(point.beta_log_Z), "the theorem: equal to the objective at its maximiser π*"),
        Readout(
            "Entropy H(π*)",
            f"{fmt.number(point.entropy)} nats",
            f"π_ref has {fmt.number(kl_leash.entropy(ref.pi_ref))} nats",
        ),
    ]
    if answers.proxy_gap:
        view.readouts.insert(2, Readout("True E_π*[r_true]", fmt.number(point.true_reward), "what people get"))
    view.tables["Beta sweep"] = lambda: pd.DataFrame(sweep.table(answers.names))  # built on click
    if predicting == "hidden":  # every readout and every tab but DPO shows π*
        ask.hide(view, question, [r.label for r in view.readouts], tables=view.tables)
        if options.wants("DPO"):
            _dpo(state, options, view)
        return with_answers(SPEC, state, view)
    if predicting == "revealed":
        truth, guess_pi = float(point.pi[top]), float(state.guess_pi)
        if "main" in view.figures:
            view.figures["main"] = with_guess(
                view.figures["main"], guess_pi, f"your guess {guess_pi:.3f}", axis="y", theme=options.theme
            )
        ask.reveal(
            view,
            Readout(f"π*({answers.names[top]}) at β = {beta:g}", fmt.number(truth), "π_ref·exp(r/β) / Z"),
            f"{guess_pi:.3f}",
            f"{guess_pi - truth:+.3f}",
            "your guess minus π*",
            value=truth,
        )

    if options.wants("Beta sweep"):
        view.figures["Beta sweep"] = kl_sweep_figure(sweep, beta, answers.names, height=560, **options.look)
    if options.wants("Reward hacking"):
        _hacking(state, options, view, answers, sweep, beta)
    if options.wants("Theorem check"):
        _theorem(state, options, view, answers, sweep, beta)
    if options.wants("DPO"):
        _dpo(state, options, view)
    return with_answers(SPEC, state, view)


def _hacking(
    state: State, options: Options, view: View, answers: kl_leash.Answers, sweep: kl_leash.LeashSweep, beta: float
) -> None:
    takeover = kl_leash.takeover_beta(answers.pi_ref, answers.r, 0.9)
    view.figures["Reward hacking"] = kl_hacking_figure(sweep, beta, sqrt_kl=bool(state.sqrt), **options.look)
    top = " and ".join(answers.names[k] for k in takeover.top)
    view.facts["takeover"] = takeover
    if math.isinf(takeover.beta):
        view.facts["hacking_caption"] = f"π_ref alone already gives {top} (top proxy reward) 90% of the mass."
    else:
        view.facts["hacking_caption"] = (
            f"π* gives **{top}** (top proxy reward) 90% of its mass only once β < **{takeover.beta:.3g}**; "
            f"the KL from π_ref is then **{takeover.kl:.2f} nats**."
        )


def _theorem(
    state: State, options: Options, view: View, answers: kl_leash.Answers, sweep: kl_leash.LeashSweep, beta: float
) -> None:
    n = int(state.policies)
    cloud = kl_leash.random_policies(answers.pi_ref, answers.r, beta, n=n)  # torch, on core's device
    view.figures["Theorem check"] = kl_theorem_figure(cloud, sweep, beta, mode=state.thm, **options.look)
    view.facts["cloud"] = cloud
    view.facts["theorem_caption"] = (
        f"{n:,} policies drawn with torch on {cloud.device}: softmax of Gumbel noise around the uniform policy, "
        "π_ref and π*, at spreads from tiny to huge."
    )


def _dpo(state: State, options: Options, view: View) -> None:
    try:
        pair = dpo_loss(
            float(state.logp_w), float(state.logp_l), float(state.ref_w), float(state.ref_l), float(state.dpo_beta)
        )
    except ValueError as err:
        view.notices.append(("warning", f"The DPO loss cannot be computed: {err}."))
        return
    view.figures["DPO"] = dpo_figure(
        *dpo_curve(pair.margin), pair.margin, pair.loss, pair.weight, both_fell=pair.both_fell, **options.look
    )
    view.facts["dpo"] = pair
    view.facts["dpo_readouts"] = [
        Readout("r̂_w", fmt.number(pair.reward_w), "implicit reward β·(log π_θ(y_w) − log π_ref(y_w))"),
        Readout("r̂_l", fmt.number(pair.reward_l), "implicit reward β·(log π_θ(y_l) − log π_ref(y_l))"),
        Readout("Margin", fmt.number(pair.margin), "r̂_w − r̂_l"),
        Readout("DPO loss", fmt.number(pair.loss), "−log σ(margin) in nats; log 2 = 0.693 at π_θ = π_ref"),
        Readout("Weight", fmt.number(pair.weight), "σ(r̂_l − r̂_w): large while the pair is ranked wrong"),
    ]
    if pair.both_fell:
        view.facts["dpo_note"] = (
            "Both answers became *less* likely than under π_ref, yet the margin is positive and the loss fell: "
            "DPO rewards the gap, not the winner's likelihood (Pal et al. 2024; called likelihood displacement by "
            "Razin et al. 2024)."
        )
