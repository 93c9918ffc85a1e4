"""KL leash: the optimal KL-regularised policy pi* ∝ pi_ref·exp(r/beta), reward hacking, and DPO built on it."""

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from pages.frame import InterviewAnswer, Page, cached_view, draw_tabs, metric_row, preset_buttons
from views import Options, inputs
from views import kl_leash as view_of

page = Page.setup(
    "KL leash: how far the optimal policy moves",
    ":material/compare_arrows:",
    "RLHF maximises reward minus β times the KL divergence from the SFT model. The best policy reweights the SFT "
    "model by exp(r/β): β sets the leash (its length is 1/β), and a long leash (small β) on a flawed reward model "
    "is how reward hacking happens.",
    r"\begin{gathered}\max_\pi\ \mathbb{E}_{\pi}[r] - \beta\,\mathrm{KL}(\pi\,\|\,\pi_{\text{ref}}):\quad "
    r"\pi^*(y) = \frac{\pi_{\text{ref}}(y)\,e^{r(y)/\beta}}{Z}, \\ Z = \sum_y \pi_{\text{ref}}(y)\,e^{r(y)/\beta},"
    r"\quad \text{maximum} = \beta \log Z\end{gathered}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
)
figures = cached_view(view_of.figures)
LAST = "_kl_answers"  # the answers the previous run showed: K's callback cuts or pads them
TOY = view_of.TOY
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
    last = st.session_state.get(LAST, view_of.TOY_ANSWERS)
    texts = {key: st.session_state.get(key, TOY[key]) for key in ("pi_ref", "r", "r_true", "names")}
    st.session_state.update(inputs.resize_texts(texts, st.session_state["K"], last))


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls(presets=list(view_of.LEASH_PRESETS)):
        page.control("K", on_change=_resize)
        page.control("beta")
        for name in ("pi_ref", "r", "r_true", "names"):
            page.control(name)
        if page.control("predict_kl"):
            page.control("guess_pi")

    with page.views():
        st.caption(
            "Drag β on the slider under the bars: plotly moves the orange bars and the panel in the browser. "
            "The views below and the readouts follow the β of the sidebar."
        )
        tabs = draw_tabs(view_of.SPEC["kl_view"])
        with tabs[1]:
            page.control("sqrt")
        with tabs[2]:
            page.control_row("thm", "policies", overrides={"thm": {"required": True}})
        with tabs[3]:
            left, right = st.columns([1, 2])
            with left:
                for name in ("logp_w", "logp_l", "ref_w", "ref_l", "dpo_beta"):
                    page.control(name)
                preset_buttons(view_of.SPEC, list(view_of.DPO), group="DPO")
            step = page.control("step")
            st.latex(DERIVATION[step][0])
            st.markdown(DERIVATION[step][1])

    open_parts = {name for name, tab in zip(view_of.VIEWS, tabs, strict=True) if tab.open}
    out = figures(
        page.state(), Options(theme=page.theme, presenter=page.presenter, parts=frozenset({"main", *open_parts}))
    )
    st.session_state[LAST] = out.facts["answers"]
    page.show_notices(out)
    page.predict_first(out.facts["predict"] == "hidden")  # Predict first: the quick check quotes the answer
    page.figure(out.figures["main"], key="bars", filename="kl-leash")
    page.readouts(out.readouts, per_row=len(out.readouts))

    with tabs[0]:
        if "Beta sweep" in out.figures:
            page.chart(out.figures["Beta sweep"], "sweep", "kl-leash-sweep")
    with tabs[1]:
        if "Reward hacking" in out.figures:
            st.caption(out.facts["hacking_caption"])
            page.chart(out.figures["Reward hacking"], "hacking", "kl-reward-hacking")
            try:
                st.page_link(
                    "pages/10_Reward_model.py",
                    label="A reward model that pays for length, hacked the same way as β falls: the Reward model page",
                    icon=":material/balance:",
                    query_params={"rm_view": "Length bias"},
                )
            except StreamlitPageNotFoundError:  # the script run on its own has no other pages
                pass
    with tabs[2]:
        if "Theorem check" in out.figures:
            page.chart(out.figures["Theorem check"], "theorem", "kl-theorem-check")
            st.caption(out.facts["theorem_caption"])
    if "DPO" in out.figures:
        with right:
            page.chart(out.figures["DPO"], "dpo", "dpo-loss")
            metric_row(out.facts["dpo_readouts"])
            if "dpo_note" in out.facts:
                st.info(out.facts["dpo_note"])

    @page.explain()
    def _explanation() -> None:
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

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="The reward model is only trustworthy near the text it was trained on, so we maximise reward "
            "minus β·KL to the frozen SFT model, whose optimum is the SFT model reweighted by exp(r/β).",
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
            "the margin grows (Pal et al. 2024; called likelihood displacement by Razin et al. 2024).",
            "Comparing β across setups as if it had units of its own: it prices one nat of KL in reward units, so "
            "rescaling the reward rescales the right β.",
        ]
    )
    page.download(out.tables, "kl-leash")  # built on click
    page.finish()


page.run(_body)
