"""The reward-model page's state and what it shows: a Bradley-Terry fit (main), held-out accuracy under label
noise, a length-biased reward against the KL leash, and DPO as the same Bradley-Terry form (tabs)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from core import reward_model
from core.dpo import DPO_PRESETS, dpo_curve, dpo_loss
from core.kl_leash import beta_choices
from views import DEFAULT, Drag, Options, Readout, View, inputs, with_answers
from views import kl_leash as kl_view
from views.state import Answer, Field, Spec, State
from viz.dpo import dpo_figure
from viz.reward_model import accuracy_noise_figure, bradley_terry_figure, length_bias_figure

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "How is a reward model trained, and how good is it?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "logistic regression",
    "60-75%",
    "pins down differences only",
    "only differences are identified",
)

VIEWS = ("Label noise", "Length bias", "DPO")
FLIPS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
FLIP_TEXT = tuple(f"{f:g}" for f in FLIPS)
NOISE_REWARDS = tuple(np.linspace(-3.0, 3.0, 12))  # twelve answers, evenly spread true rewards
BETAS = kl_view.BETAS  # the KL page's β steps: a link carries this page's β there unchanged
DPO_PAIRS = {p.label: p for p in DPO_PRESETS.values()}

SPEC = Spec(
    "Reward_model",
    (
        Field("rm_items", "Answers", "int", 7, lo=3, hi=20, widget="slider",
              help="Their true rewards are evenly spread from −1.5 to 1.5."),
        Field("rm_pairs", "Labelled pairs", "int", 300, lo=10, hi=5000, step=10),
        Field("rm_shift", "Add a constant c to every fitted reward", "float", 0.0, lo=-10.0, hi=10.0, step=0.5,
              help="Bradley-Terry sees only differences: the loss does not move."),
        Field("rm_seed", "Seed of the labels", "int", 0, lo=0, hi=1000, step=1),
        Field("rm_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field("flip", "Labelers' flip rate", "choice", "0.2", choices=FLIP_TEXT, widget="select_slider",
              help="The share of labels that are plain mistakes (flipped)."),
        Field("train_pairs", "Training pairs", "int", 400, lo=20, hi=5000, step=20),
        Field("rm_beta", "β (KL price per nat)", "choice", "1", choices=BETAS, widget="select_slider"),
        Field("len_bonus", "Proxy's reward per doubling of the length", "float", reward_model.LENGTH_TOY.length_coef,
              lo=0.0, hi=1.0, step=0.05, widget="slider"),
        Field("dpo_pair", "Preference pair", "choice", "Worked example B", choices=tuple(DPO_PAIRS),
              widget="radio", extra=(("horizontal", True),)),
    ),
    presets={
        "Add a constant: c = 3 changes nothing": {"rm_shift": 3.0},
        "003 Q7: flip rate 0.2, held-out accuracy in the sixties": {"rm_view": "Label noise", "flip": "0.2"},
        "Length hacking: a loose leash, β = 0.01": {"rm_view": "Length bias", "rm_beta": "0.01"},
        "Length bias: the best β, 0.3": {"rm_view": "Length bias", "rm_beta": "0.3"},
        "DPO: worked example B": {"rm_view": "DPO", "dpo_pair": "Worked example B"},
    },
    answers={
        "003 Q7: flip rate 0.2, held-out accuracy in the sixties": Answer(
            "Held-out accuracy at flip 0.2",
            "60–75%",
            "seed 003 Q7 (real reward models: the sixties to seventies); this page's toy at flip 0.2 lands there",
            row="noise_readouts",
        ),
    },
)  # fmt: skip


def true_rewards(state: State) -> np.ndarray:
    return np.linspace(-1.5, 1.5, int(state.rm_items))


def kl_link(**values: object) -> dict[str, str]:
    """The query of a link to the KL-leash page with these of its fields set (only non-default values)."""
    return kl_view.SPEC.query(kl_view.SPEC.state(values))


def figures(state: State, options: Options = DEFAULT) -> View:
    """The Bradley-Terry fit (``main``) and, when asked for, ``noise``, ``length`` and ``dpo``."""
    view = View()
    r_true = true_rewards(state)
    shift = float(state.rm_shift)
    try:
        pairs = reward_model.sample_pairs(r_true, int(state.rm_pairs), seed=int(state.rm_seed))
        fit = reward_model.bradley_terry_fit(pairs, n_items=r_true.size)
        shifted_nll = reward_model.bradley_terry_nll(fit.rewards + shift, pairs)
    except ValueError as err:
        view.notices.append(("warning", f"The Bradley-Terry fit failed: {err}."))
        fit = None
    if fit is not None:
        margin = np.linspace(-6.0, 6.0, 241)
        if options.wants("main"):
            view.figures["main"] = bradley_terry_figure(
                fit,
                r_true,
                margin,
                reward_model.preference_probability(margin, 0.0),
                shift=shift,
                shifted_nll=shifted_nll,
                labels=[f"y{k + 1}" for k in range(r_true.size)],
                **options.look,
            )
        error = float(np.max(np.abs(fit.rewards - (r_true - r_true.mean()))))
        mean = float(np.mean(fit.rewards)) + shift
        mean = 0.0 if abs(mean) < 5e-4 else mean  # no "-0.000"
        view.facts.update(fit=fit, shifted_nll=shifted_nll)
        view.readouts = [
            Readout("Mean −log σ(r_w − r_l)", f"{fit.nll:.4f} nats", "the fit's loss on its training pairs"),
            Readout(f"… after adding c = {shift:g}", f"{shifted_nll:.4f} nats", "the same: only differences count"),
            Readout("Mean fitted reward", f"{mean:.3f}".replace("-", "−"), "whatever c says: arbitrary"),
            Readout("Training pairs ranked right", f"{100 * fit.train_accuracy:.1f}%"),
            Readout("Largest error vs the truth", f"{error:.3f}", "after centring both"),
            Readout("Newton steps", f"{fit.iterations}", f"{fit.backend} on {fit.device}"),
        ]
        view.tables["Fit"] = lambda: pd.DataFrame(
            {"answer": np.arange(1, r_true.size + 1), "true_centred": r_true - r_true.mean(), "fitted": fit.rewards}
        )
    if options.wants("noise"):
        _noise(state, options, view)
    if options.wants("length"):
        _length(state, options, view)
    if options.wants("dpo"):
        _dpo(state, options, view)
    return with_answers(SPEC, state, view)


def _noise(state: State, options: Options, view: View) -> None:
    try:
        study = reward_model.accuracy_vs_noise(
            NOISE_REWARDS, flips=FLIPS, n_train=int(state.train_pairs), n_test=2000, seed=0
        )
    except ValueError as err:
        view.notices.append(("warning", f"The label-noise study failed: {err}."))
        return
    i = FLIP_TEXT.index(state.flip)
    view.figures["noise"] = accuracy_noise_figure(study, FLIPS[i], **options.look)
    view.drags["noise"] = Drag("flip", FLIP_TEXT)  # the figure's slider steps: one per flip rate of the study
    view.facts["noise"] = study
    view.facts["noise_readouts"] = [
        Readout(f"Held-out accuracy at flip {state.flip}", f"{100 * study.heldout_accuracy[i]:.1f}%",
                "the fitted model on fresh, equally noisy labels"),
        Readout(
            "Ceiling: the true rewards",
            f"{100 * study.ceiling[i]:.1f}%",
            "on the same held-out labels: a ceiling in expectation, which a fit can beat by chance on a finite set",
        ),
        Readout("Fitted order vs the true order", f"{100 * study.true_accuracy[i]:.1f}%", "all pairs of answers"),
    ]  # fmt: skip
    view.tables["Label noise"] = lambda: pd.DataFrame(
        {"flip": study.flip, "heldout_accuracy": study.heldout_accuracy, "ceiling": study.ceiling,
         "true_order_accuracy": study.true_accuracy}
    )  # fmt: skip


def _length(state: State, options: Options, view: View) -> None:
    beta = float(state.rm_beta)
    try:
        toy = dataclasses.replace(reward_model.LENGTH_TOY, length_coef=float(state.len_bonus))
        sweep = reward_model.length_bias_sweep(toy, betas=np.array(beta_choices()))
    except ValueError as err:
        view.notices.append(("warning", f"The length sweep failed: {err}."))
        return
    i = int(np.argmin(np.abs(np.log(sweep.beta / beta))))
    view.figures["length"] = length_bias_figure(sweep, beta, **options.look)
    # the same answers on the KL page: its r is this proxy, its r_true the quality, the answers named by length
    answers = {
        "K": int(sweep.lengths.size),
        "pi_ref": inputs.format_values(sweep.pi_ref),
        "r": inputs.format_values(sweep.proxy),
        "r_true": inputs.format_values(sweep.quality),
        "names": ", ".join(f"{n:g} tokens" for n in sweep.lengths),
    }
    view.facts.update(length=sweep, kl_link=kl_link(beta=state.rm_beta, **answers))
    view.facts["length_readouts"] = [
        Readout("Mean length under π*", f"{sweep.mean_length[i]:.0f} tokens"),
        Readout("True quality", f"{sweep.true_reward[i]:.3f}", "what people want"),
        Readout("Proxy reward", f"{sweep.proxy_reward[i]:.3f}", "what the policy is optimising"),
        Readout("KL(π* ‖ π_ref)", f"{sweep.kl[i]:.3f} nats"),
        Readout("Best β for true quality", f"{sweep.best_beta:g}", f"quality {sweep.true_reward.max():.3f}"),
    ]
    view.tables["Length bias"] = lambda: pd.DataFrame(
        {"beta": sweep.beta, "mean_length": sweep.mean_length, "proxy_reward": sweep.proxy_reward,
         "true_quality": sweep.true_reward, "kl_nats": sweep.kl}
    )  # fmt: skip


def _dpo(state: State, options: Options, view: View) -> None:
    p = DPO_PAIRS[state.dpo_pair]
    try:
        pair = dpo_loss(p.logp_w, p.logp_l, p.ref_logp_w, p.ref_logp_l, p.beta)
        r_w = reward_model.implicit_reward(p.logp_w, p.ref_logp_w, p.beta)
        r_l = reward_model.implicit_reward(p.logp_l, p.ref_logp_l, p.beta)
        bt = reward_model.bradley_terry_nll([r_w, r_l], [(0, 1)])
    except ValueError as err:
        view.notices.append(("warning", f"The DPO pair cannot be computed: {err}."))
        return
    view.figures["dpo"] = dpo_figure(*dpo_curve(pair.margin), pair.margin, pair.loss, pair.weight,
                                     both_fell=pair.both_fell, **options.look)  # fmt: skip
    view.facts["dpo_link"] = kl_link(
        kl_view="DPO", logp_w=p.logp_w, logp_l=p.logp_l, ref_w=p.ref_logp_w, ref_l=p.ref_logp_l, dpo_beta=p.beta
    )
    view.facts["dpo_readouts"] = [
        Readout("Implicit reward r̂_w", f"{r_w:+.3f}".replace("-", "−"), "β · log(π_θ(y_w) / π_ref(y_w))"),
        Readout("Implicit reward r̂_l", f"{r_l:+.3f}".replace("-", "−"), "β · log(π_θ(y_l) / π_ref(y_l))"),
        Readout("Bradley-Terry −log σ(r̂_w − r̂_l)", f"{bt:.3f}", "the reward model's loss, on r̂"),
        Readout(
            "DPO loss",
            f"{float(pair.loss):.3f}",
            "the DPO loss computed from the log-probabilities: the same number as the Bradley-Terry loss on r̂",
        ),
    ]
