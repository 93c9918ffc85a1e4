"""KL leash: the optimal KL-regularised policy pi* ∝ pi_ref·exp(r/beta), reward hacking, and DPO built on it."""

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import kl_leash as kl
from core.dpo import dpo_curve, dpo_loss
from pages.frame import InterviewAnswer, Page, Readout, cached_figures, draw_tabs, preset_buttons
from pages.views import kl_leash as view_of
from viz.dpo import dpo_figure
from viz.kl_leash import kl_hacking_figure, kl_leash_figure, kl_sweep_figure, kl_theorem_figure, number

page = Page.setup(
    "KL leash: how far the optimal policy moves",
    "🪢",
    "RLHF maximises reward minus β times the KL divergence from the SFT model. The best policy reweights the SFT "
    "model by exp(r/β): β sets the leash (its length is 1/β), and a long leash (small β) on a flawed reward model "
    "is how reward hacking happens.",
    r"\max_\pi\ \mathbb{E}_{\pi}[r] - \beta\,\mathrm{KL}(\pi\,\|\,\pi_{\text{ref}}):\quad "
    r"\pi^*(y) = \frac{\pi_{\text{ref}}(y)\,e^{r(y)/\beta}}{Z},\quad Z = \sum_y \pi_{\text{ref}}(y)\,e^{r(y)/\beta},"
    r"\quad \text{maximum} = \beta \log Z",
    spec=view_of.SPEC,
)
LAST = "_kl_answers"  # the answers of the previous run (valid by construction): bad typing falls back to them
TOY = view_of.TOY
DEFAULT = kl.read_answers(TOY["K"], TOY["pi_ref"], TOY["r"], TOY["r_true"], TOY["names"])[0]
# the DPO derivation, one step at a time: (equation, what happens)
DERIVATION = {
    "1 optimal policy": (
        r"\pi^*(y) = \frac{1}{Z(x)}\,\pi_{\text{ref}}(y)\,e^{r(y)/\beta}",
        "Start from the closed-form maximiser of the KL-regularised objective (the equation at the top).",
    ),
    "2 reward via policy": (
        r"r(y) = \beta\log\frac{\pi^*(y)}{\pi_{\text{ref}}(y)} + \beta\log Z(x)",
        "Take logs and solve for r: a reward is β times a log-ratio of policies, plus a constant that depends on "
        "the prompt only.",
    ),
    "3 Bradley-Terry": (
        r"P(y_w \succ y_l) = \sigma\big(r(y_w) - r(y_l)\big)",
        "Human preferences only ever see the difference of two answers' rewards.",
    ),
    "4 log Z cancels": (
        r"\mathcal{L}_{\text{DPO}} = -\log\sigma\Big(\beta\log\frac{\pi_\theta(y_w)}{\pi_{\text{ref}}(y_w)}"
        r" - \beta\log\frac{\pi_\theta(y_l)}{\pi_{\text{ref}}(y_l)}\Big)",
        "Both answers answer the same prompt, so β log Z(x) drops out of the difference. Put the trained π_θ in "
        "place of π* and minimise: no reward model, no sampling, the training loop of SFT.",
    ),
}


def _resize() -> None:
    """K moved: cut or pad the answers in the text fields that do not already have K values."""
    last = st.session_state.get(LAST, DEFAULT)
    texts = {key: st.session_state.get(key, TOY[key]) for key in ("pi_ref", "r", "r_true", "names")}
    st.session_state.update(kl.resize_texts(texts, st.session_state["K"], last))


with page.controls(presets=list(view_of.LEASH_PRESETS)):
    K = page.control("K", on_change=_resize)
    beta_label = page.control("beta")
    text = {name: page.control(name) for name in ("pi_ref", "r", "r_true", "names")}

beta = float(beta_label)
answers, problems = kl.read_answers(K, **text, fallback=st.session_state.get(LAST, DEFAULT))
st.session_state[LAST] = answers
for message in problems:
    page.notice(message)
ref = kl.normalize_reference(answers.pi_ref)
if ref.renormalised:
    page.notice(
        f"π_ref sums to {ref.total:.6g}, not 1, so it was normalised to {kl.format_values(ref.pi_ref)}.", "info"
    )


@cached_figures
def _leash(answers: kl.Answers, beta: float) -> tuple:
    sweep = kl.leash_sweep(answers.pi_ref, answers.r, np.asarray(kl.beta_choices()), answers.r_true)
    return sweep, kl_leash_figure(sweep, beta, answers.names)


@cached_figures
def _sweep_view(answers: kl.Answers, beta: float) -> go.Figure:
    return kl_sweep_figure(_leash(answers, beta)[0], beta, answers.names, height=560)


@cached_figures
def _hacking_view(answers: kl.Answers, beta: float, sqrt_kl: bool) -> tuple:
    takeover = kl.takeover_beta(answers.pi_ref, answers.r, 0.9)
    return takeover, kl_hacking_figure(_leash(answers, beta)[0], beta, sqrt_kl=sqrt_kl)


@cached_figures
def _theorem_view(answers: kl.Answers, beta: float, mode: str, n: int) -> tuple:
    cloud = kl.random_policies(answers.pi_ref, answers.r, beta, n=n)
    return cloud, kl_theorem_figure(cloud, _leash(answers, beta)[0], beta, mode=mode)


@cached_figures
def _dpo_view(logp_w: float, logp_l: float, ref_w: float, ref_l: float, b: float) -> tuple:
    pair = dpo_loss(logp_w, logp_l, ref_w, ref_l, b)
    return pair, dpo_figure(*dpo_curve(pair.margin), pair.margin, pair.loss, pair.weight, both_fell=pair.both_fell)


def _metrics(items: list[Readout]) -> None:
    """A row of live numbers inside a tab, next to its own controls (page.readouts draws under all figures)."""
    for col, item in zip(st.columns(len(items)), items, strict=True):
        col.metric(item.label, item.value, help=item.help)


sweep, bars = _leash(answers, beta)
page.figure(bars, key="bars", filename="kl-leash", drag="beta", drag_values=view_of.BETAS)

with page.views():
    st.caption(
        "Drag β on the slider under the bars: plotly moves the orange bars and the panel in the browser. "
        "The views below and the readouts follow the β of the sidebar."
    )
    tabs = draw_tabs(view_of.SPEC["kl_view"])
    with tabs[0]:
        if tabs[0].open:
            page.chart(_sweep_view(answers, beta), "sweep", "kl-leash-sweep")
    with tabs[1]:
        sqrt_kl = page.control("sqrt")
        if tabs[1].open:
            takeover, hacking = _hacking_view(answers, beta, sqrt_kl)
            top = " and ".join(answers.names[k] for k in takeover.top)
            if math.isinf(takeover.beta):
                st.caption(f"π_ref alone already gives {top} (top proxy reward) 90% of the mass.")
            else:
                st.caption(
                    f"π* gives **{top}** (top proxy reward) 90% of its mass only once β < "
                    f"**{takeover.beta:.3g}**; the KL from π_ref is then **{takeover.kl:.2f} nats**."
                )
            page.chart(hacking, "hacking", "kl-reward-hacking")
    with tabs[2]:
        c1, c2 = st.columns(2)
        with c1:
            mode = page.control("thm", required=True)
        with c2:
            n = page.control("policies")
        if tabs[2].open:
            cloud, theorem = _theorem_view(answers, beta, mode, n)
            page.chart(theorem, "theorem", "kl-theorem-check")
            st.caption(
                f"{n:,} policies drawn with torch on {cloud.device}: softmax of Gumbel noise around the "
                "uniform policy, π_ref and π*, at spreads from tiny to huge."
            )
    with tabs[3]:
        left, right = st.columns([1, 2])
        with left:
            pair_in = {name: page.control(name) for name in ("logp_w", "logp_l", "ref_w", "ref_l", "dpo_beta")}
            preset_buttons(view_of.SPEC, list(view_of.DPO))
        if tabs[3].open:
            pair, dpo = _dpo_view(*pair_in.values())
            with right:
                page.chart(dpo, "dpo", "dpo-loss")
                _metrics(
                    [
                        Readout("r̂_w", number(pair.reward_w), "implicit reward β·(log π_θ(y_w) − log π_ref(y_w))"),
                        Readout("r̂_l", number(pair.reward_l), "implicit reward β·(log π_θ(y_l) − log π_ref(y_l))"),
                        Readout("Margin", number(pair.margin), "r̂_w − r̂_l"),
                        Readout("DPO loss", number(pair.loss), "−log σ(margin) in nats; log 2 = 0.693 at π_θ = π_ref"),
                        Readout("Weight", number(pair.weight), "σ(r̂_l − r̂_w): large while the pair is ranked wrong"),
                    ]
                )
                if pair.both_fell:
                    st.info(
                        "Both answers became *less* likely than under π_ref, yet the margin is positive and the "
                        "loss fell: DPO rewards the gap, not the winner's likelihood (likelihood displacement)."
                    )
        step = page.control("step")
        st.latex(DERIVATION[step][0])
        st.markdown(DERIVATION[step][1])

point = sweep.at(beta)
readouts = [
    Readout("KL(π* ‖ π_ref)", f"{number(point.kl)} nats", "how far the optimal policy moved from the SFT model"),
    Readout("E_π*[r]", number(point.reward), "expected reward-model score under π*"),
    Readout("E[r] − β·KL", number(point.objective), "the objective at π*"),
    Readout("β·log Z", number(point.beta_log_Z), "the theorem: equal to the objective at its maximiser π*"),
    Readout("Entropy H(π*)", f"{number(point.entropy)} nats", f"π_ref has {number(kl.entropy(ref.pi_ref))} nats"),
]
if answers.proxy_gap:
    readouts.insert(2, Readout("True E_π*[r_true]", number(point.true_reward), "what people get"))
page.readouts(readouts, per_row=len(readouts))

with page.explain():
    st.markdown(
        """
One prompt, K answers. The faint blue bars are the SFT model π_ref; the orange bars are the policy that
maximises expected reward minus β·KL. It reweights π_ref by exp(r/β) and renormalises. β is how hard the leash
pulls, so its length is 1/β: a large β (a short leash) leaves π_ref almost untouched, a small β (a long leash)
piles the mass onto the best-scored answer. In this closed form an answer with π_ref = 0 stays at 0 for every
β; a real softmax policy gives every sequence some mass, so the honest statement is that the KL term charges
about log(1/π_ref(y)) nats to move most of the mass onto an answer y that π_ref rarely writes.

**Beta sweep** plots each answer's probability, the KL and the expected reward over six decades of β.
**Reward hacking** gives each answer a true reward beside the proxy: as β shrinks (the leash lengthens) the proxy
only rises,
while the true reward rises, peaks and falls (the over-optimisation curve of Gao et al., 2022).
**Theorem check** draws thousands of random policies: none scores above β·log Z, because
J(π) = β·log Z − β·KL(π ‖ π*). **DPO** turns the same formula around into a loss on preference pairs.
"""
    )

page.quick_check(
    "In the lesson's toy (π_ref = (0.5, 0.5), rewards (1, 0)), β = 1 gives π* = (0.731, 0.269). "
    "**Halve β to 0.5.** What probability does the better answer get?",
    "π* ∝ (0.5·e², 0.5·e⁰), so π*(better) = e²/(e² + 1) = **0.881**. Halving β doubles every r/β: the same "
    "reward difference now buys twice the log-odds. Set β = 0.5 in the sidebar to see it.",
)
page.interview(
    "“Why does RLHF need a KL penalty against the reference model, and what happens without it?”",
    InterviewAnswer(
        sentence="The reward model is only trustworthy near the text it was trained on, so we maximise reward minus "
        "β·KL to the frozen SFT model, whose optimum is the SFT model reweighted by exp(r/β).",
        equation=r"\pi^*(y) \propto \pi_{\text{ref}}(y)\,e^{r(y)/\beta}",
        number="Two equally likely answers scored 1 and 0: β = 1 gives (0.73, 0.27), β = 0.5 already 0.88 on the "
        "better one; as β → 0 all mass goes to the top score.",
        trade_off="Too small a β (a long leash) and the policy chases the reward model's mistakes (reward hacking, "
        "collapsed entropy); too large (a short leash) and it barely moves from SFT. Teams watch the KL and a "
        "held-out evaluation.",
    ),
)
page.mistakes(
    [
        "“Reward went up, so the model improved”: the reward model is a proxy. Check the KL and a held-out, "
        "independent evaluation; rising reward with a runaway KL is the signature of hacking.",
        "Thinking RLHF easily reaches answers the SFT model almost never writes: the optimum only reweights π_ref "
        "(exactly 0 stays 0 over a fixed set of answers), and although a softmax model gives every sequence some "
        "mass, moving most of the mass onto an answer of probability π_ref costs about log(1/π_ref) nats of KL "
        "(about 23 nats for one in 10¹⁰), so sampling must first find it.",
        "Saying “a large β is a long leash”: β is the pull. A large β is a short leash that keeps π* near π_ref; "
        "the leash's length is 1/β, and reward hacking comes from a small β.",
        "Saying DPO has no reference model: π_ref is frozen inside the loss. SimPO and ORPO are the variants "
        "without one.",
        "Reading a falling DPO loss as the winner becoming more likely: both log-probabilities can fall while "
        "the margin grows.",
        "Comparing β across setups as if it had units of its own: it prices one nat of KL in reward units, so "
        "rescaling the reward rescales the right β.",
    ]
)
page.download({"Beta sweep": lambda: pd.DataFrame(sweep.table(answers.names))}, "kl-leash")  # built on click
page.finish()
