"""Positions: RoPE's frequencies and wavelengths, the long-context scalings, relative scores and RoFormer's decay."""

import streamlit as st

from pages.frame import InterviewAnswer, Page
from views import positions as view_of

page = Page.setup(
    "Positions: RoPE and long context",
    ":material/rotate_right:",
    "RoPE turns each pair of dimensions of q and k by the position times the pair's own frequency, so a score "
    "depends only on m − n. Pairs whose wavelength is longer than the trained context make less than one full turn "
    "in training; position interpolation slows every pair by s, while YaRN and Llama 3.1's scaling keep the short "
    "wavelengths and slow the long ones.",
    r"\begin{gathered}\theta_i = b^{-2i/d},\quad \lambda_i = 2\pi/\theta_i \\"
    r"q_m \cdot k_n = \operatorname{Re}\sum_i q_i\,\overline{k_i}\,e^{\mathrm{i}(m-n)\theta_i}\end{gathered}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

VIEWS = view_of.VIEWS


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        st.subheader("RoPE")
        for name in ("rope_d", "rope_base", "rope_ctx"):
            page.control(name)
        st.subheader("Long context")
        method = page.control("rope_method")
        page.control("rope_s", disabled=method == "none")
        page.control("rope_len", disabled=method != "dynamic")
        if page.control("predict_pos"):
            page.control("guess_pairs")

    tabs = page.view_tabs("pos_view", VIEWS)
    with tabs[view_of.RELATIVE]:
        rel_slot = st.container()
        page.control_row("rope_shift")

    out = page.open_view(view_of.figures, tabs)  # Predict first: no answer in any text

    with tabs[view_of.WAVES]:
        if view_of.WAVES in out.figures:
            page.chart(out.figures[view_of.WAVES], "fig-wavelengths", "rope-wavelengths")
            st.caption(
                "Pairs counted from 0, interleaved as in RoFormer: pair i is dimensions (2i, 2i+1); Hugging Face's "
                "Llama pairs i with i + d/2 (rotate_half), which gives the same scores once W_q and W_k are permuted. "
                "The scaled curve follows Hugging Face transformers' modeling_rope_utils.py for linear, dynamic, "
                "YaRN and Llama 3.1; static NTK-aware is bloc97's base change, which Hugging Face offers only in its "
                "dynamic form."
            )
    with tabs[view_of.RELATIVE]:
        if view_of.RELATIVE in out.figures:
            with rel_slot:
                page.chart(out.figures[view_of.RELATIVE], "fig-relative", "rope-relative")
            st.caption(
                "One seeded q and one seeded k (independent, unit-variance components) placed at every position, "
                "scores before any mask or scale. Each diagonal is constant, and the shifted block is the same."
            )
    with tabs[view_of.DECAY]:
        if view_of.DECAY in out.figures:
            page.chart(out.figures[view_of.DECAY], "fig-decay", "rope-decay")
            st.caption(
                "Blue: RoFormer's relative upper bound (section 3.4.3), the mean of |S_j| over the pairs, divided by "
                "its value at distance 0. Orange: the expected score when q = k with unit-variance components, "
                "divided by d. Green: the expected score of independent zero-mean q and k, which is 0 at every "
                "distance."
            )

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
**The rotation.** Attention without positions is permutation-equivariant: shuffle the tokens and the outputs are
shuffled the same way. RoPE (Su et al. 2021, RoFormer) groups the d dimensions of each query and key into d/2 pairs
and turns pair i at position m by the angle m·θ_i, with θ_i = base^(−2i/d). Read a pair as a complex number: the
query at m and the key at n meet as q_i·conj(k_i)·e^{i(m−n)θ_i}, so the score depends only on m − n (the
*Relative position* tab moves both positions and nothing changes). Only q and k are turned, never v.

**The wavelengths.** Pair i comes back to where it started every 2π/θ_i tokens. The fastest pair turns once
every 2π tokens; the slowest, at base 10,000 and d = 128, once every 54,410 tokens. A pair whose wavelength is
longer than the trained context made less than one full turn in training: past that context it meets angles
it never saw. That is the usual explanation (seed 002; Peng et al. 2023), and it is why being relative does not
make RoPE extrapolate; Chen et al. 2023 add that attention scores at unseen distances can blow up, and YaRN that
attention entropy grows with length.
Llama 3 raised the base to 500,000 (Llama 3 herd paper, 2024), which stretches every wavelength but the first.

**Stretching the context by s.** Position interpolation (Chen et al. 2023) divides every frequency by s: the
long wavelengths fit again, and neighbouring tokens are s times closer in angle. NTK-aware scaling (bloc97, 2023)
raises the base to base·s^(d/(d−2)): the fastest pair is kept, the slowest is slowed by exactly s, the ones
between by less; dynamic NTK recomputes that base from the current length. YaRN (Peng et al. 2023) keeps
the pairs that turn many times in the trained context (β = 32), slows those that turn less than once (α = 1) by
s, ramps between them, and multiplies q and k by 0.1·ln s + 1, which sharpens the softmax. Llama 3.1's scaling
splits the pairs the same way, by wavelength thresholds, with no attention factor: wavelengths over L are slowed
by s, those under L/4 kept, a smooth ramp between. Position
interpolation and YaRN were published with a short fine-tune at the new length; NTK-aware and dynamic scaling
were proposed for use without one, and a model still does better after long-context training.

**The decay.** RoFormer shows that a bound on |q_m·k_n| falls with distance (with bumps). The bound holds for
fixed q and k; it is not the score. For independent zero-mean q and k the expected score is 0 at every distance,
and for q = k it oscillates and goes negative (the *Decay* tab draws all three).
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="RoPE turns each pair of query and key dimensions by position times a fixed frequency, so the "
            "score depends only on m − n; past the trained context the slow pairs meet angles they never saw, and "
            "the long-context methods change the frequencies so that they fit again.",
            equation=r"q_m\cdot k_n = \operatorname{Re}\sum_i q_i\overline{k_i}\,e^{\mathrm{i}(m-n)\theta_i},"
            r"\qquad \theta_i = b^{-2i/d}",
            number="At d = 128 and base 10,000 the wavelengths run from 2π to about 54,400 tokens, and 14 of the 64 "
            "pairs make less than one full turn in an 8,192-token context; YaRN at s = 16 multiplies q and k by "
            "0.1·ln 16 + 1 ≈ 1.28.",
            trade_off="Position interpolation slows every pair and blurs neighbouring positions; NTK-aware barely "
            "changes the shortest wavelengths, and YaRN and Llama 3.1 keep the short wavelengths and slow the long "
            "ones, so local order stays sharp. Relative is "
            "not the same as extrapolating, and training at the new length still helps every method.",
        ),
    )
    page.mistakes(
        [
            "Rotating the values too: RoPE turns q and k only.",
            "Saying RoPE extrapolates because it is relative: past the trained context the slow pairs reach angles "
            "training never showed.",
            "Mixing the pairings: weights trained with interleaved pairs (2i, 2i+1) and run with rotate_half pairs "
            "(i, i + d/2) give other scores unless W_q and W_k are permuted to match.",
            "Reading RoFormer's decay as attention fading with distance: it is a bound for fixed q and k.",
            "Taking s·L as the served context: Llama 3.1's factor is 8 on an 8,192-token original context, and its "
            "configuration allows 131,072 tokens.",
            "Forgetting YaRN's attention factor, or applying it to the logits instead of q and k: on the logits it "
            "is its square.",
        ]
    )

    page.download(out.tables, "positions")
    page.finish()


page.run(_body)
