"""The policy gradient from scratch: REINFORCE on a four-answer bandit, baselines, GRPO's group mean and RLOO."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, carried_params, page_link
from views import catalog
from views import policy_gradient as view_of

page = Page.setup(
    "The policy gradient from scratch",
    ":material/functions:",
    "The log-derivative trick turns the gradient of the expected reward into an average over the policy's own "
    "samples: each answer's score ∇ log π times its reward. Subtracting a baseline that does not depend on the answer "
    "leaves that average's mean exactly as it was and changes only its variance. GRPO's group mean contains the "
    "answer's own reward, so it is not exactly unbiased; RLOO's leave-one-out mean is; dividing by the group's std "
    "re-weights the gradient.",
    r"\nabla_\theta J = \mathbb{E}_{a\sim\pi_\theta}\big[(r_a - b)\,\nabla_\theta \log \pi_\theta(a)\big]",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

VIEWS = view_of.VIEWS


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        # no heading above the first control: with Post-training's six pages listed, one pushed it below 720 px
        for name in ("pg_rewards", "pg_policy", "pg_G", "pg_b", "pg_seed"):
            page.control(name)
        st.subheader("Learning")
        for name in ("pg_steps", "pg_lr", "pg_mode"):
            page.control(name)
        if page.control("predict_pg"):
            page.control("guess_pg_scale")

    tabs = page.view_tabs("pg_view", VIEWS)

    out = page.open_view(view_of.figures, tabs)

    with tabs[view_of.SPREAD]:
        if view_of.SPREAD in out.figures:
            page.chart(out.figures[view_of.SPREAD], "fig-pg-spread", "policy-gradient-spread")
            st.caption(
                "Each estimate g is a vector over the four logits; the figure projects it on the true gradient ∇J "
                "and measures it in units of |∇J|, so an unbiased estimator's mean sits on the dashed line. The bars "
                "span the exact mean ± one standard deviation of that projection, summed over the groups of "
                "answers: the spread the points, seeded draws, show. The readouts give tr Cov[g], every direction's "
                "variance, the ones orthogonal to ∇J included. The mean-reward and best-constant baselines use the "
                "policy's exact E[r] (as a perfect value model would) and b* (an oracle). The group size G is dragged "
                "because it moves every row; the std-normalised estimate stays off ∇J, except where it lands on it "
                "by accident (0/1 rewards at G = 2, where it equals RLOO)."
            )
    with tabs[view_of.ZERO]:
        if view_of.ZERO in out.figures:
            page.chart(out.figures[view_of.ZERO], "fig-pg-zero", "policy-gradient-zero")
            st.caption(
                "Left: the baseline's expected contribution, one bar per answer a for each logit θ_k: "
                "π_k b (1 − π_k) for a = k and −π_a b π_k for the others; they cancel. Right: tr Cov[g], the variance "
                "summed over the four logits, of a one-answer estimate against the constant b, a parabola whose "
                "lowest point is b*."
            )
    with tabs[view_of.GROUP]:
        if view_of.GROUP in out.figures:
            page.chart(out.figures[view_of.GROUP], "fig-pg-group", "policy-gradient-group")
            st.caption(
                "Left: exact expected gradients, summed over every group of answers, with the page's rewards and "
                "policy. Right: the std-normalised estimate with 0/1 rewards as a function of the prompt's success "
                "rate p. The std here is the population std with no ε; torch's r.std(), as GRPO code often calls it, "
                "is the sample std, larger by the constant factor √(G/(G − 1)) for every group with a spread."
            )
        st.caption(
            "PPO's learned value V(s) is another baseline: it estimates E[r] for the state, as the mean-reward row "
            "here does exactly; GRPO replaces it with the group's mean reward."
        )
        for url in ("GRPO", "PPO"):
            entry = catalog.by_url(url)
            if entry is not None:
                page_link(entry.script, label=entry.label, icon=entry.icon, query_params=carried_params() or None)
    with tabs[view_of.LEARNING]:
        if view_of.LEARNING in out.figures:
            page.chart(out.figures[view_of.LEARNING], "fig-pg-learning", "policy-gradient-learning")
            st.caption(
                "Gradient ascent on the logits, θ ← θ + η g, from the page's policy. Exact: each step takes the "
                "estimator's expected gradient, so only a bias shows. Sampled: one seeded group of G answers per "
                "step; the lines are the mean of the seeded runs, the bands one standard deviation across them."
            )

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            r"""
**The derivation** (REINFORCE, Williams 1992). J(θ) = Σ_a π_θ(a) r_a. The gradient of a probability is the
probability times the gradient of its log, ∇π = π ∇ log π (the log-derivative trick), so
∇J = Σ_a π_θ(a) r_a ∇ log π_θ(a) = E_a[r_a ∇ log π_θ(a)]: an expectation under the policy itself, which one sampled
answer estimates without bias. For a softmax over logits θ, ∇_θ log π(a) = e_a − π. The estimate is noisy because one
scalar reward multiplies the whole score: on a sequence, every token of the answer gets the same credit.

**Why a baseline is unbiased.** E_a[b ∇ log π(a)] = b Σ_a ∇π(a) = b ∇ Σ_a π(a) = b ∇1 = 0. Pulling b out of the
sum is the step that needs b not to depend on the action (it may depend on the state); the Zero tab shows the sum
term by term. The baseline changes only the variance. The constant that minimises tr Cov is
b* = E[r |s|²] / E[|s|²] with s the score (derived on this page: the bandit case of the optimal baseline of
Greensmith, Bartlett and Baxter 2004, who also show the average reward can be suboptimal). It equals E[r] only when
every answer's score has the same norm (the uniform policy), and with a peaked policy it can sit far from it (mostly
right, checker: b* = 0.175, E[r] = 0.700; there E[r] gives more variance than no baseline at all). It depends on the
parameterisation, through s = ∇_θ log π: here θ are the logits. PPO learns V(s) to play E[r]'s part.

**Group baselines.** GRPO (Shao et al. 2024) samples G answers per prompt and uses their mean reward. That mean
contains the answer's own reward, so the expected gradient is (G − 1)/G ∇J: the same direction, a shorter step. The
leave-one-out mean of RLOO (Kool et al. 2019; Ahmadian et al. 2024) does not depend on the answer and is exactly
unbiased. RLOO's estimate is G/(G − 1) times the group mean's, draw by draw: unbiased, with (G/(G − 1))² the
covariance and the same signal-to-noise ratio. The group mean's bias and RLOO's extra variance are the same
rescaling, which a learning rate (or Adam, whose step ignores a whole-gradient rescale) absorbs when the KL penalty
is folded into the reward; with GRPO's KL term in the loss it also acts like rescaling β by G/(G − 1). Dividing by
the group's std makes the weight depend on the sampled rewards: in general the expected gradient is neither
(G − 1)/G ∇J nor parallel to it; with 0/1 rewards it stays parallel within a prompt, scaled by a factor that, for G
≥ 4, depends on the prompt's success rate (at G = 2 and 3, with the population std, the factor is the same for every
success rate), which across prompts weights some prompts more than others (Dr. GRPO, Liu et al. 2025, arXiv
2503.20783, drops the std division for this reason, with the length normalisation).
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="By the log-derivative trick ∇J = E[r ∇ log π]; a baseline b that does not depend on the action "
            "adds b ∇Σπ = 0; a group mean that includes the sample scales the expected gradient to (G − 1)/G of ∇J, a "
            "leave-one-out mean is unbiased.",
            equation=r"\mathbb{E}[b\,\nabla\log\pi] = b\,\nabla\textstyle\sum_a \pi(a) = 0",
            number="G = 4: the group mean gives 0.75 ∇J; RLOO gives ∇J with (4/3)² ≈ 1.78 times the group mean's "
            "variance, the same estimate scaled by 4/3.",
            trade_off="A baseline lowers variance at no bias only if it does not depend on the action.",
        ),
    )
    page.mistakes(
        [
            "Using the sampled answer's own reward in its baseline and calling it unbiased: GRPO's group mean "
            "includes it, which shrinks the expected gradient to (G − 1)/G of ∇J.",
            "Reading unbiased as better: RLOO and the group mean differ only by the factor G/(G − 1) (a step size, "
            "and with a KL term in the loss a β), not in signal-to-noise.",
            "Calling E[r] the variance-minimising baseline: the best constant weights each reward by its score's "
            "squared norm; E[r] can be close to it or far from it.",
            "Thinking the std division only rescales: with graded rewards it can also turn the expected gradient, "
            "and with 0/1 rewards (G ≥ 4) it weights prompts by their success rate.",
        ]
    )
    page.download(out.tables, "policy-gradient")
    page.finish()


page.run(_body)
