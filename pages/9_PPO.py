"""PPO: the clipped surrogate and its gradient against the ratio, a token batch, GAE, the KL estimators, memory."""

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from pages.frame import InterviewAnswer, Page, cached_view, draw_tabs, metric_row
from views import Options
from views import ppo as view_of

page = Page.setup(
    "PPO: the clip and the advantage",
    ":material/content_cut:",
    "PPO's clip does not cap the size of a step. It switches a token's gradient off once its probability ratio has "
    "already moved past 1 ± ε in the direction its advantage asks for; everywhere else the token keeps the "
    "importance-weighted policy gradient ρ·A·∇_θ log π_θ (the figure plots the derivative in ρ, which is A).",
    r"L^{\text{CLIP}} = \mathbb{E}_t\Big[\min\big(\rho_t A_t,\ \operatorname{clip}(\rho_t, 1-\varepsilon,"
    r" 1+\varepsilon)\,A_t\big)\Big],\qquad \rho_t = \frac{\pi_\theta(a_t\mid s_t)}{\pi_{\text{old}}(a_t\mid s_t)}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
)
figures = cached_view(view_of.figures)
PARTS = dict(zip(view_of.VIEWS, ("batch", "gae", "kl", "memory"), strict=True))


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        page.control("rho")
        page.control("clip_eps")
        higher = page.control("clip_higher")
        page.control("clip_high", disabled=not higher)

    with page.views():
        st.caption(
            "Drag ρ on the slider under the figure: the four markers and the panel move in the browser, and the "
            "readouts follow when you let go."
        )
        tabs = draw_tabs(view_of.SPEC["ppo_view"])
        with tabs[0]:
            page.control_row("noise", "tok_n")
        with tabs[1]:
            page.control_row("gae_r", "gae_v", "gamma", "lam", "critic_err", per_row=2)
        with tabs[2]:
            page.control_row("drift", "kl_n")
        with tabs[3]:
            page.control_row("pol_b", "rm_b")

    open_parts = {PARTS[name] for name, tab in zip(view_of.VIEWS, tabs, strict=True) if tab.open}
    state = page.state()
    out = figures(state, Options(theme=page.theme, presenter=page.presenter, parts=frozenset({"main", *open_parts})))
    page.show_notices(out)
    if "main" in out.figures:
        page.figure(out.figures["main"], key="clip", filename="ppo-clip")
    page.readouts(out.readouts, per_row=3)

    with tabs[0]:
        if tabs[0].open and "batch" in out.figures:
            metric_row(out.facts["batch_readouts"])
            page.chart(out.figures["batch"], "batch", "ppo-token-batch")
            page.note(
                "Each point is a token: log ρ drawn from N(0, σ²), A from N(0, 1), seeded. The further the policy has "
                "moved from the one that sampled the batch (a larger σ: more epochs per batch, a larger learning "
                "rate), the more tokens leave the band and the more of the update the clip throws away, but never all "
                "of it: a token outside the band on its pessimistic side keeps its gradient. That is why fewer tokens "
                "are *clipped* than lie *outside*. So a clip fraction that climbs during training says the policy "
                "moves far from its sampling policy within each batch."
            )
    with tabs[1]:
        if tabs[1].open:
            if "gae_readouts" in out.facts:
                metric_row(out.facts["gae_readouts"])
            if "gae_limit_readouts" in out.facts:  # both limits checked on the typed trajectory
                metric_row(out.facts["gae_limit_readouts"])
            if "gae" in out.figures:
                page.chart(out.figures["gae"], "gae", "ppo-gae")
            if "gae_bv" in out.figures:
                page.chart(out.figures["gae_bv"], "gae_bv", "ppo-gae-bias-variance")
            st.markdown(
                r"""
With a critic V, the TD error $\delta_t = r_t + \gamma V(s_{t+1}) - V(s_t)$ is a one-step estimate of the
advantage, and $\hat A^{(k)}_t = \sum_{l<k} \gamma^l\,\delta_{t+l}$ is the k-step one (k rewards, then the
critic). GAE averages the k-step estimates with weights $(1-\lambda)\lambda^{k-1}$ (in a finite episode the
remaining weight goes to the longest one, which runs to the end of the trajectory). Written in TD errors this is
$A_t = \sum_l (\gamma\lambda)^l\,\delta_{t+l}$, computed backwards as $A_t = \delta_t + \gamma\lambda A_{t+1}$
(Schulman et al., 2016, eqs. 11-16). λ = 0 is $\delta_t$ itself: little variance, but exactly as wrong as the
critic. λ = 1 telescopes to the discounted return minus $V(s_t)$: the critic is then only the baseline
$V(s_t)$, which depends on $s_t$ alone and so does not bias the policy gradient, however wrong it is (GAE with
λ = 1 is γ-just, Schulman et al., 2016, §3), as long as the episode ends within the trajectory or the bootstrap
value $V(s_T)$ is exact; but every later reward's noise adds in.

The lower figure samples 4,000 trajectories of an eight-step chain whose rewards carry noise of standard deviation
σ = 0.3 at every step and whose critic is off by b at every state but the terminal one (whose value, 0, it gets
right). It measures each estimate against $Q(s_t,a_t) - V(s_t)$ with
the critic's own $V(s_t)$ as the baseline, so that only the error that can bias the policy gradient counts: the
critic's values at later states, which in general depend on the action. (In this chain the next state does not
depend on the action, so even that error is a constant per step here and would not bias the gradient in this
chain either; the chain stands in for the usual case, where the critic's error at $s_{t+1}$ varies with
$a_t$.) Against that target the squared bias
falls to 0 at λ = 1, the variance rises from 0, and their sum is smallest in between (at γ = 1 and b = 0.5:
λ = 0.7 on the figure's grid of 0.1, 0.75 on a grid of 0.01; the best λ moves with γ, b and σ). Measured against
the true advantage, with the true $V(s_t)$, λ = 1 would show the error b at every step instead: that is the
baseline's error, which does no harm. In RLHF the reward model's score arrives only at the last token;
a λ close to 1 lets it reach the early tokens without relying on the critic at every step. Testing both limits
(λ = 0 gives δ, λ = 1 gives return minus value) is the cheapest check of an implementation (seed 002, A6.6); the
second row of numbers runs it on your trajectory, against δ_t and the return summed directly.
"""
            )
    with tabs[2]:
        if tabs[2].open and "kl" in out.figures:
            metric_row(out.facts["kl_readouts"])
            page.chart(out.figures["kl"], "kl", "ppo-kl-estimators")
            st.markdown(
                r"""
The KL between the two models' distributions over whole answers is a sum over every possible answer, which
no one can compute. At one position the KL over the vocabulary is cheap, since both models' logits are there,
but trainers usually take the sampled token's log-ratio instead, by convention and so that the reference's
full logits need not be kept: with $r = \pi_{\text{ref}}/\pi_\theta$ at that token (Schulman, 2020),
$k_1 = -\log r$ (unbiased, often negative, noisy), $k_2 = \tfrac12(\log r)^2$ (biased, low variance),
$k_3 = (r - 1) - \log r$ (unbiased, never negative). Under samples of $\pi_\theta$ the mean of $r$ is 1, so
adding $r - 1$ to $k_1$ changes nothing on average. While $\pi_\theta$ stays close to $\pi_{\text{ref}}$ it
also removes most of $k_1$'s variance; far apart, r is heavy-tailed and k3 can be the noisier one (the preset
*KL: a policy twice as far*: a standard deviation of 1.97 per sample for k3 against 0.99 for k1; at the default
drift, 0.34 for k3 against 0.71 for k1). PPO for RLHF subtracts β·k1 from each token's reward before GAE (Ouyang et al.,
2022); GRPO adds β·k3 to the loss (Shao et al., 2024). Write r the other way up and k3 is no longer unbiased
for KL(π_θ ‖ π_ref).

Used as a loss, with the sampled tokens held fixed, an estimator's gradient need not be the gradient of what it
estimates. At one position, with the prefix held fixed and on average over samples of $\pi_\theta$, the gradient
of k1 is 0, that of k2 is the gradient of that position's $\mathrm{KL}(\pi_\theta \,\|\, \pi_{\text{ref}})$, and
that of k3 is the gradient of that position's $\mathrm{KL}(\pi_{\text{ref}} \,\|\, \pi_\theta)$, the KL the other
way round (Tang and Munos, 2025). So, on average, GRPO's β·k3 term descends KL(π_ref ‖ π_θ) position by
position, although its value estimates KL(π_θ ‖ π_ref). Summed over the tokens of an answer, even k2 gives only
part of the gradient of the whole answer's KL(π_θ ‖ π_ref): it leaves out how earlier tokens change the
distributions at later positions (Tang and Munos, 2025).
"""
            )
    with tabs[3]:
        if tabs[3].open and "memory" in out.figures:
            metric_row(out.facts["memory_readouts"])
            page.chart(out.figures["memory"], "memory", "ppo-memory")
            st.markdown(
                "PPO for RLHF holds four models and trains two of them: the policy and the critic train (16 bytes per "
                "parameter with mixed-precision Adam), the reference and the reward model are frozen (2 bytes per "
                "parameter in bf16). GRPO drops the critic and uses the mean reward of a group of answers as its "
                "baseline (three models with a learned reward model, as counted here; two when a checker program "
                "scores the answers, one when the KL term is dropped as well, β = 0, as in DAPO). DPO needs only "
                "policy and reference, and since its pairs are fixed the "
                "reference's log-probabilities can be computed once before training, leaving only the policy in "
                "memory (the figure counts the reference as resident). This is a bytes-per-parameter count before "
                "activations and the generation's KV cache. InstructGPT paired a 175B policy with a 6B reward model, "
                "and initialised the value function from it (Ouyang et al., 2022)."
            )
            try:
                st.page_link(
                    "pages/7_Training_memory.py",
                    label="Where 16 and 2 bytes per parameter come from, and what ZeRO shards: the Training memory "
                    "page",
                    icon=":material/memory:",
                )
            except StreamlitPageNotFoundError:  # the script run on its own has no other pages
                pass

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
A batch of answers is sampled by the old policy π_old and then used for several gradient steps. For one token,
ρ = π_θ / π_old says how much more (or less) likely the current policy makes it; at the first step every ρ is 1.

**A > 0 (a good token, left).** The objective rises with ρ until ρ = 1 + ε and is flat beyond: raising the token
further earns nothing, so its gradient is exactly 0. **A < 0 (a bad token, right).** The flat part is below
1 − ε: once the token is rare enough, pushing it down further earns nothing.

On the other sides the min picks the unclipped term ρA, which is the *smaller* one: if an update has made a bad
token more likely (ρ = 1.3, A = −1) the objective is −1.3, not −1.2, and the full corrective gradient flows.
Gains are capped, losses are not: the min makes PPO pessimistic (Schulman et al., 2017).

**Clip-higher.** DAPO (Yu et al., 2025) widens only the upper side, ε_low = 0.2 and ε_high = 0.28, so that a rare
good token can still be pushed up further; that keeps the policy's entropy from collapsing.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="The clip removes the incentive to move a token's probability ratio past 1 ± ε in the direction "
            "its advantage wants; the min makes the objective pessimistic, so a move that hurt still gets its full "
            "corrective gradient (Schulman et al., 2017; seed 002, A6.6).",
            equation=r"L^{\text{CLIP}} = \mathbb{E}_t\big[\min(\rho_t A_t,\ \operatorname{clip}(\rho_t,"
            r" 1-\varepsilon, 1+\varepsilon)A_t)\big]",
            number="ε ≈ 0.2 (Schulman et al., 2017); at ρ = 1.3 and A = +1 the gradient is exactly 0; at ρ = 1.3 and "
            "A = −1 the derivative in ρ is the full A, and the gradient in θ is ρ·A·∇_θ log π_θ. DAPO raises the upper "
            "side to 0.28 (Yu et al., 2025).",
            trade_off="A small ε keeps each update close to the policy that sampled the data (stable) but wastes the "
            "signal of tokens that already moved; a large ε uses more of each batch but lets the policy drift far from "
            "the one that sampled it, where the importance weights stop being trustworthy (Schulman et al., 2017; "
            "seed 002, A6.6).",
        ),
    )
    page.mistakes(
        [
            "“The clip bounds the gradient.” It does not: wherever the min selects the unclipped term ρA (inside the "
            "range, or outside it on the pessimistic side) the token's gradient in θ is A·∇_θρ = ρ·A·∇_θ log π_θ, "
            "with no bound: for A < 0 it grows with ρ, which is why dual-clip PPO adds a second clip (Ye et al., "
            "2020). Where the clip is active the gradient is 0. The clip removes the incentive to move the ratio "
            "further (seed 002, A6.6).",
            "“Ratios cannot leave [1 − ε, 1 + ε].” They can and do, since one step moves many tokens at once; the clip "
            "only stops rewarding the move, and it does not bound the KL to π_old either (seed 002, A6.6).",
            "Writing clip(ρ)·A without the min: a bad token whose ratio rose past 1 + ε would then lose its gradient "
            "(seed 002, A6.6).",
            "Forgetting that A < 0 mirrors the picture: the flat side is below 1 − ε (Schulman et al., 2017, Figure "
            "1).",
            "Swapping GAE's limits: λ = 1 is Monte Carlo (noisy; when the episode ends within the "
            "trajectory the critic is only its baseline, so no bias in the policy gradient), λ = 0 one-step TD "
            "(biased by the critic) "
            "(Schulman et al., 2016; seed 002, A6.6).",
            "Reading one token's negative k1 as a negative KL: it is one noisy sample; only the average estimates it "
            "(Schulman, 2020; seed 002, A6.7).",
        ]
    )

    page.download(out.tables, "ppo")
    page.finish()


page.run(_body)
