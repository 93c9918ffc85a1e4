"""The reward model: a Bradley-Terry fit, its accuracy under label noise, a length bias hacked as β falls, and DPO."""

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from pages.frame import InterviewAnswer, Page, cached_view, draw_tabs, metric_row
from views import Options
from views import reward_model as view_of

KL_PAGE = "pages/2_KL_leash.py"

page = Page.setup(
    "The reward model: Bradley-Terry and its limits",
    ":material/balance:",
    "A reward model is logistic regression on the difference of two scores. It pins down differences only, it "
    "agrees with held-out labels only about 60-75% of the time (less on close pairs), and whatever it "
    "over-rewards the policy will find: that is why the KL leash stays on.",
    r"P(y_w \succ y_l \mid x) = \sigma\big(r_\phi(x, y_w) - r_\phi(x, y_l)\big),\qquad "
    r"\mathcal{L}_{\text{RM}} = -\log\sigma(r_w - r_l)",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
)
figures = cached_view(view_of.figures)
PARTS = dict(zip(view_of.VIEWS, ("noise", "length", "dpo"), strict=True))


def _link(query: dict[str, str], label: str) -> None:
    try:
        st.page_link(KL_PAGE, label=label, icon=":material/compare_arrows:", query_params=query)
    except StreamlitPageNotFoundError:  # the script run on its own has no other pages
        st.caption(f"{label}: pages/2_KL_leash.py?" + "&".join(f"{k}={v}" for k, v in query.items()))


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        for name in ("rm_items", "rm_pairs", "rm_shift", "rm_seed"):
            page.control(name)

    with page.views():
        tabs = draw_tabs(view_of.SPEC["rm_view"])
        with tabs[0]:
            page.control_row("flip", "train_pairs")
        with tabs[1]:
            page.control_row("rm_beta", "len_bonus")
        with tabs[2]:
            page.control("dpo_pair")

    open_parts = {PARTS[name] for name, tab in zip(view_of.VIEWS, tabs, strict=True) if tab.open}
    out = figures(
        page.state(), Options(theme=page.theme, presenter=page.presenter, parts=frozenset({"main", *open_parts}))
    )
    page.show_notices(out)
    if "main" in out.figures:
        page.figure(out.figures["main"], key="bt", filename="reward-model-bradley-terry")
    page.readouts(out.readouts, per_row=3)

    with tabs[0]:
        if tabs[0].open and "noise" in out.figures:
            metric_row(out.facts["noise_readouts"])
            page.chart(out.figures["noise"], "noise", "reward-model-label-noise")
            page.note(
                "Twelve answers with evenly spread true rewards; labels drawn from Bradley-Terry and then flipped at "
                "the chosen rate; a fresh fit for every rate, scored on 2,000 held-out pairs labelled the same way. "
                "Even the true rewards cannot beat the ceiling (blue): close answers are near coin tosses, and the "
                "flips mix in their opposites. At a flip rate of 0.5 the labels carry nothing and everything sits at "
                "50%. Real reward models score about 60-75% on held-out pairs (seed 003, Q7: the sixties to "
                "seventies; Llama 2's helpfulness and safety reward models, 63.2% and 64.5%, each on Meta's own test "
                "set of its kind, Touvron et al., 2023, Table 7), and less on pairs the labelers found close. The "
                "blue ceiling is what the true rewards score, so a model at 60-75% means a flip rate of at most about "
                "0.15 to 0.36 here; a fitted model scores below the ceiling and reaches 60-75% at lower flip rates."
            )
    with tabs[1]:
        if tabs[1].open and "length" in out.figures:
            metric_row(out.facts["length_readouts"])
            page.chart(out.figures["length"], "length", "reward-model-length-bias")
            _link(out.facts["kl_link"], f"These five answers on the KL page, at the same β = {page.state().rm_beta}")
            st.markdown(
                r"""
Give the reward model a taste for length, $r = \text{quality} + c\log_2(\text{length})$, and take the best
KL-regularised policy $\pi^* \propto \pi_{\text{ref}}\, e^{r/\beta}$ from the KL-leash page over five answers of
50 to 800 tokens. At a large β the policy stays with the SFT model (178 tokens on average, quality 0.555). As
β falls the answers grow; the true quality peaks at 0.683 near β = 0.3, and at β = 0.01 the policy writes the
800-token answer, whose quality 0.50 is below where it started, while the proxy reward rose all the way (seed 003, Q6).
Gao et al. (2022) measured the same rise and fall in a synthetic set-up: a 6B "gold" reward model stands in for
the human labelers, proxy reward models are trained on its labels, and the "true" reward is the gold model's
score.
"""
            )
    with tabs[2]:
        if tabs[2].open and "dpo" in out.figures:
            metric_row(out.facts["dpo_readouts"])
            page.chart(out.figures["dpo"], "dpo", "reward-model-dpo")
            _link(out.facts["dpo_link"], "This pair on the KL page's DPO tab, with the derivation")
            st.markdown(
                r"""
DPO (Rafailov et al., 2023) trains no separate reward network: it plugs the implicit reward
$\hat r(y) = \beta\log\frac{\pi_\theta(y)}{\pi_{\text{ref}}(y)}$ into the same Bradley-Terry loss,
$-\log\sigma(\hat r_w - \hat r_l)$. The last two readouts are computed by different functions, the reward
model's loss on $\hat r$ and the DPO loss, and agree. Worked example B: $\hat r_w = 0.2$, $\hat r_l = -0.1$,
loss $-\log\sigma(0.3) = 0.554$.
"""
            )

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
Labelers compare two answers to one prompt. Bradley-Terry (Bradley and Terry, 1952) says the winner wins with
probability σ(r_w − r_l), so training minimises −log σ(r_w − r_l) over the labelled pairs (seed 001, section 3.6).
Left: that probability against the difference. Right: the true rewards (faint, centred) and the fitted ones.

Maximum likelihood recovers the rewards only up to a constant: add c to every reward and every probability, and
so the loss, stays exactly as it was (the second readout). The fit here picks mean 0; any other run may pick
another offset, so raw scores cannot be compared across runs, and rewards are normalised per batch (seed 002,
A6.3).
"""
        )

    page.quick_check(
        "Two reward-model training runs give mean rewards of 3.1 and −0.4 on the same answers. Is the first model more "
        "positive about them?",
        "No. Bradley-Terry fixes rewards only up to an additive constant, so the means carry no information; compare "
        "differences between answers, or normalise per batch (seed 002, A6.3; seed 003, Q7). Press *Add a constant: "
        "c = 3 changes nothing*.",
    )
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="On pairs of answers with the Bradley-Terry loss: logistic regression on the difference of the "
            "two scores, so only differences are identified (Bradley and Terry, 1952; seed 003, Q7).",
            equation=r"P(y_w \succ y_l \mid x) = \sigma\big(r_\phi(x, y_w) - r_\phi(x, y_l)\big)",
            number="Real reward models agree with held-out human labels about 60-75% of the time, and less on pairs "
            "the labelers found close (seed 003, Q7; Touvron et al., 2023).",
            trade_off="A learned reward can score fuzzy qualities that no checker can, but it can be gamed (length, "
            "flattery: seed 003, Q2 and Q6), so RLHF keeps a KL penalty to the SFT model; a verifier is harder to "
            "fool but exists only for checkable tasks (seed 002, A6.3; seed 001, section 3.8). DPO skips the separate "
            "network by using β log(π_θ/π_ref) as the reward (Rafailov et al., 2023).",
        ),
    )
    page.mistakes(
        [
            "Comparing raw reward values across runs, or setting thresholds on them: the offset is arbitrary "
            "(seed 002, A6.3).",
            "“The reward went up, so the model got better.” The reward is a proxy: watch the KL and a held-out "
            "evaluation as well (Gao et al., 2022).",
            "Expecting near-100% held-out accuracy: the labelers themselves disagree, so even the true rewards score "
            "far below 100% on their labels; real reward models reach about 60-75% (seed 003, Q7; Touvron et al., "
            "2023, Table 7).",
            "Dropping the KL term because the reward model is “good enough”: its errors are exactly where the policy "
            "goes (seed 003, Q2; seed 002, A6.3).",
        ]
    )

    page.download(out.tables, "reward-model")
    page.finish()


page.run(_body)
