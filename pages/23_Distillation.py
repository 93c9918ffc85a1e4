"""Distillation: forward vs reverse KL on a two-mode teacher, the temperature and T², sequence-level vs on-policy."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, draw_tabs
from views import Options
from views import distillation as view_of

page = Page.setup(
    "Distillation",
    ":material/school:",
    "A student learns from a teacher's distribution rather than from hard labels. Which KL it minimises decides "
    "what a student too small for the teacher does: forward KL(p‖q) is mode-covering (it spreads over every mode, "
    "and into the gap between them), reverse KL(q‖p) is mode-seeking (it may drop a mode to fit another well). "
    "A temperature softens the targets; sequence-level distillation trains on the teacher's outputs, on-policy "
    "distillation on the student's own.",
    r"\mathrm{KL}(p\,\|\,q)=\sum_x p(x)\log\frac{p(x)}{q(x)}\quad\text{vs}\quad"
    r"\mathrm{KL}(q\,\|\,p)=\sum_x q(x)\log\frac{q(x)}{p(x)}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

VIEWS = view_of.VIEWS


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        for name in ("dist_d", "dist_w", "dist_k"):
            page.control(name)
        st.subheader("Soft targets and sequences")
        for name in ("dist_T", "dist_smooth"):
            page.control(name)
        if page.control("predict_dist"):
            page.control("guess_dist_mean")

    with page.figure_area():
        tabs = dict(zip(VIEWS, draw_tabs(view_of.SPEC["dist_view"]), strict=True))

    open_tabs = frozenset(name for name, tab in tabs.items() if tab.open)
    out = view_of.figures(page.state(), Options(theme=page.theme, presenter=page.presenter, parts=open_tabs))
    page.show_notices(out)
    page.predict_first(out.facts["predict"] == "hidden")

    with tabs[view_of.KL]:
        if view_of.KL in out.figures:
            page.chart(out.figures[view_of.KL], "fig-dist-kl", "distillation-kl")
            if page.hide:  # the caption says where the reverse fit sits: the predict-first question's answer
                st.caption(f"{page.hidden_caption}: the note under this figure states the answer.")
            else:
                st.caption(
                    "The teacher is two Gaussians of width 1 at −d/2 and +d/2, sampled on a grid and normalised there, "
                    "so every KL is a sum over the grid. The forward fit of one Gaussian is the teacher's mean and "
                    "variance (moment matching); the reverse fit is found numerically. With equal modes and one "
                    "Gaussian, the reverse fit stays in the middle, widening, while the teacher already has two "
                    "peaks (beyond d = 2), and jumps onto one mode only between d = 5.5 and 6: two local optima trade "
                    "places, it does not drift. "
                    "The dragged row moves d over precomputed fits; two components fit the teacher in both directions."
                )
    with tabs[view_of.TEMPERATURE]:
        if view_of.TEMPERATURE in out.figures:
            page.chart(out.figures[view_of.TEMPERATURE], "fig-dist-temperature", "distillation-temperature")
            st.caption(
                "Illustrative logits over five classes, the teacher's v and a student's z. Left: softmax(v / T) "
                "flattens as T grows and the wrong classes' relative sizes show. Middle: their entropy rises toward "
                "log 5, the most five classes can have. Right: the gradient of "
                "KL(p_T ‖ q_T) in the student's logits is (q_T − p_T) / T and falls about as 1/T² once T is large; "
                "multiplied by T², it tends to a constant (Hinton, Vinyals and Dean 2015, §2.1)."
            )
    with tabs[view_of.SEQUENCE]:
        if view_of.SEQUENCE in out.figures:
            page.chart(out.figures[view_of.SEQUENCE], "fig-dist-sequence", "distillation-sequence")
            st.caption(
                "A toy, exact sums over the four sequences. The teacher's two coherent answers are A A and B B. "
                "The student is factorised, q(y1) q(y2): it cannot make its second token depend on its first. "
                "Token-level: the teacher's next-token distributions on the teacher's prefixes. Sequence-level: the "
                "teacher's most likely sequence (Kim and Rush 2016), with a small smoothing ε, since at ε = 0 the "
                "student gives every other sequence probability 0 and its forward KL is infinite. Whole-sequence "
                "reverse KL: the student's own samples scored with KL(q‖p), minimised exactly, gradient through the "
                "sampling included (the objective MiniLLM, Gu et al. 2024, optimises with a policy gradient). GKD "
                "(Agarwal et al. 2024) does not backpropagate through the sampling; its fixed point here keeps q(y1) "
                "at the teacher's marginal and puts 0.32 on A A. Nothing is trained by sampled gradient steps: each "
                "objective is minimised exactly, so the toy shows where each pulls, not how large the effects are in "
                "a real model."
            )

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            r"""
**Forward vs reverse KL.** KL(p‖q) = Σ p log(p/q) is weighted by the teacher p: wherever p has mass and q has almost
none, log(p/q) is huge, so the student must cover every mode: mode-covering (the seed says "mean-covering"). For one
Gaussian the optimum is moment matching: the teacher's mean and variance, which puts the student's peak in the gap
between two modes. KL(q‖p) = Σ q log(q/p) is weighted by the student: it pays for mass where p has little and only a
bounded price for a mode it ignores, mode-seeking. With two far-apart equal modes, the reverse fit sits on one
of them with a reverse KL of about −log 0.5 = log 2: minus the log of the teacher's mass on the mode it
covers, while the forward fit's reverse KL keeps growing. It is not "one mode as soon as there are two": at d = 4 the
teacher has two peaks and the reverse fit still sits in the middle, wider than one mode. With unequal modes far enough
apart (w = 0.4: from d = 5.5 of the drag's steps), its best optimum is on the heavier mode; the lighter mode stays a
local optimum, where a fit started there would stop. A student with the capacity to represent both modes (two
components) fits the teacher in both directions: the direction matters when the student is too small.

**Temperature and T²** (Hinton, Vinyals and Dean 2015). Soft targets softmax(v / T) at T > 1 show the relative
probabilities of the wrong classes (Hinton's 2014 talk called it "dark knowledge"). The gradient of the soft term
KL(p_T ‖ q_T) in the student's logits is (q_T − p_T) / T, which shrinks about as 1/T² when T is large against the
logits; the paper multiplies the soft loss by T² so that its weight against a hard-label term stays about the same
when T changes. At high T the scaled loss becomes matching the centred logits.

**Three things called distillation for LLMs.** Logit (token-level) distillation matches the teacher's next-token
distribution at every position, on the teacher's (or the data's) prefixes; it needs the teacher's logits.
Sequence-level distillation (Kim and Rush 2016, who train on the teacher's beam-search output) trains the student
by plain SFT on the teacher's generated sequences; it needs only samples. Both are off-policy: the student never
sees prefixes it produced itself. On-policy distillation samples from the student and has the teacher score each of
its tokens, so the student is corrected on the prefixes it actually meets. MiniLLM (Gu et al. 2024) minimises the
reverse KL over whole sequences, KL(q‖p), with a policy gradient: the gradient goes through the student's sampling.
GKD (Agarwal et al. 2024) allows several divergences (forward KL, reverse KL, a generalised Jensen-Shannon between
them) and does not backpropagate through the sampling: it scores the student's samples token by token, as supervised
learning on the student's prefixes. The toy's third student minimises MiniLLM's objective exactly. In the toy, the
token-level student spreads about half its mass over the incoherent A B and B A; the sequence-level student piles
onto the teacher's mode A A; the whole-sequence reverse-KL student is mode-seeking too: most of its mass on A A,
little on B B, and less on the incoherent pairs than the token-level student.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="The student minimises a divergence to the teacher's distribution: forward KL is "
            "mode-covering, reverse KL is mode-seeking; with soft targets at a temperature T, Hinton multiplies the "
            "soft loss by T² to keep its gradient's scale; on-policy distillation trains the student on its own "
            "prefixes.",
            equation=r"\nabla_z\,\mathrm{KL}(p_T\,\|\,q_T) = \tfrac{1}{T}\,(q_T - p_T)",
            number="Two equal modes 8 widths apart: the reverse fit sits on one with KL(q‖p) ≈ log 2 = 0.693.",
            trade_off="For a student too small to represent the teacher, mode-covering keeps diversity but puts "
            "mass where the teacher has none; mode-seeking drops modes and can generate better (MiniLLM, Gu et al. "
            "2024).",
        ),
    )
    page.mistakes(
        [
            "Getting the two directions backwards: forward KL(p‖q), weighted by the teacher, is the mode-covering one.",
            "Saying the reverse fit leaves the middle as soon as the teacher has two peaks: it jumps between two "
            "local optima only when the modes are far enough apart.",
            "Dropping the T² factor when the loss mixes soft and hard targets: at high T the soft term's gradient "
            "shrinks about as 1/T², so the hard-label term dominates and changing T silently changes the mix.",
            "Covering only Hinton-style soft targets: much of what is called distillation for LLMs (R1's distilled "
            "Qwen and Llama models, for one) is sequence-level SFT on a teacher's outputs; logit distillation is "
            "used where the teacher's logits are in-house (the pretraining of Gemma 2's 2B and 9B models).",
        ]
    )
    page.download(out.tables, "distillation")
    page.finish()


page.run(_body)
