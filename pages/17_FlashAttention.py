"""FlashAttention: the tiled forward with the online softmax, HBM traffic as N grows, what the backward keeps."""

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from pages.frame import InterviewAnswer, Page
from views import flash_attention as view_of

page = Page.setup(
    "FlashAttention and the memory hierarchy",
    ":material/bolt:",
    "FlashAttention computes exact attention one tile at a time in on-chip SRAM and never writes the N × N scores "
    "to HBM: a running max and a running sum per row let each row's softmax finish without the whole row at once, "
    "and the backward recomputes the scores instead of storing them. Standard attention is bound by memory traffic: "
    "it writes the scores and probabilities and reads them back; FlashAttention never stores them, so it does more "
    "FLOPs in the backward (with no mask) and is still faster.",
    r"\begin{gathered}m' = \max(m, \tilde m) \\ \ell' = e^{m - m'}\ell + e^{\tilde m - m'}\tilde\ell \\"
    r"O' = \big(e^{m - m'}\ell\,O + e^{\tilde m - m'}\tilde P V_j\big) / \ell'\end{gathered}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

VIEWS = view_of.VIEWS


def _link(script: str, label: str, icon: str, query: dict[str, str] | None = None) -> None:
    try:
        st.page_link(script, label=label, icon=icon, query_params=query)
    except StreamlitPageNotFoundError:  # the script run on its own has no other pages
        pass


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        st.subheader("The toy")
        for name in ("fa_tokens", "fa_dim", "fa_bq", "fa_bk", "fa_causal", "fa_step", "fa_seed"):
            page.control(name)
        st.subheader("At scale")
        for name in ("fa_n", "fa_hd", "fa_sram", "fa_heads"):
            page.control(name)
        if page.control("predict_fa"):
            page.control("guess_skipped")

    tabs = page.view_tabs("fa_view", VIEWS)

    out = page.open_view(view_of.figures, tabs)  # Predict first: no answer in any text

    with tabs[view_of.TILES]:
        if view_of.TILES in out.figures:
            page.chart(out.figures[view_of.TILES], "fig-tiles", "flash-tiles")
            st.caption(
                "A seeded toy: Q, K and V with standard normal entries, S = QKᵀ/√d, float64. The steps follow "
                "Algorithm 1 of Dao et al. 2022: key blocks in the outer loop, query blocks in the inner one. The "
                "panel lists each row of the current tile after it: the running max m, the running sum ℓ of "
                "e^(S − m), and the factor the running sum (and the unnormalised output ℓ·O) was multiplied by."
            )
    with tabs[view_of.HBM]:
        if view_of.HBM in out.figures:
            page.chart(out.figures[view_of.HBM], "fig-hbm", "flash-hbm")
            st.caption(
                "Values moved between HBM and SRAM by one head's forward attention, T_q = T_k = N, counted as "
                "Algorithms 0 and 1 of the paper load and store them, 2 bytes a value, the row statistics at the "
                "same width; no causal skipping. A count of the paper's algorithms, not a measured kernel, and bytes "
                "over bandwidth is a floor on the time, not a time."
            )
            _link("pages/8_Serving.py", "Bytes against FLOPs, the roofline: the Serving page",
                  ":material/rocket_launch:")  # fmt: skip
    with tabs[view_of.BACKWARD]:
        if view_of.BACKWARD in out.figures:
            page.chart(out.figures[view_of.BACKWARD], "fig-backward", "flash-backward")
            st.caption(
                "Beyond Q, K and V, which both keep. Standard: the probabilities P, N × N per head, 2 bytes each. "
                "FlashAttention: O (N × d per head, 2 bytes) and one logsumexp per row in fp32, as the flash-attn "
                "code keeps it; Algorithm 1 of the 2022 paper writes m and ℓ to HBM, two numbers per row."
            )
            _link("pages/7_Training_memory.py", "The whole layer's activations, with FlashAttention on: the Training "
                  "memory page", ":material/memory:", {"flash": "true"})  # fmt: skip

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
**Why standard attention is slow.** Algorithm 0 of Dao et al. 2022 computes S = QKᵀ and writes it to HBM, reads
it back for the softmax, writes P, and reads P again to multiply by V. Besides the N·d values of each of Q, K, V and
O, that moves 4N² values per head. With N in the thousands and d = 64 or 128 the N² term dominates, and the
softmax does a few operations per value it moves: the step is bound by memory bandwidth, not by arithmetic.

**The online softmax.** A row's softmax needs the row's max and its normaliser over all keys, but a tile holds only
B_c keys. Keep a running max m and a running sum ℓ of e^(S − m) per row. When a tile brings a larger max, multiply
ℓ and the unnormalised output ℓ·O by e^(m_old − m_new) ≤ 1, then add the tile's terms (Algorithm 1 keeps O
normalised, so it multiplies O by ℓ_old·e^(m_old − m_new)/ℓ_new, the equation above). Every
exponent stays ≤ 0, so nothing overflows, and the end result is the softmax itself: exact in exact arithmetic, equal
to the one-shot computation up to round-off in floating point (the readout), not bit for bit. The one-pass normaliser
is Milakov & Gimelshein 2018; Rabe & Staats 2021 carried the output along with it through attention, for memory;
FlashAttention's contribution is the IO-aware tiling in one fused kernel.

**The loop.** Algorithm 1 picks B_c = ⌈M/4d⌉ and B_r = min(⌈M/4d⌉, d) for an SRAM of M values, loads K_j and V_j in
its outer loop and Q_i with its partial O_i, ℓ_i, m_i in its inner loop, and writes them back after each tile.
FlashAttention-2 (Dao 2023) swaps the loops, query blocks outside, so each query block's output stays on chip and is
divided by ℓ once at the end. Algorithm 1 has no mask (the paper's Algorithm 2, in its appendix, adds masking, and
the released kernels skip fully masked tiles); with a causal mask a tile whose keys all come after all its queries
contributes nothing, and the tiles drawn dotted are skipped here.

**HBM traffic.** Theorem 2 of the paper: standard attention needs Θ(Nd + N²) HBM accesses, FlashAttention
Θ(N²d²/M) for d ≤ M ≤ Nd. Counting Algorithm 1's loads and stores exactly, its traffic grows like
(12 + 16/d)·N²d²/M, so its advantage over the standard 4N² levels off at about 4M/((12 + 16/d)·d²) as N grows:
about 4× at d = 64 with 100 KiB of fp16 SRAM, about 1× at d = 128 (with an A100's 192 KB, about 7.8× and 2×).
That count compares with standard attention at its floor, each N × N operand read once; unfused implementations run
mask, softmax and dropout as separate passes and move several times more, which is why the paper measures about 9×
fewer bytes (its Figure 2: GPT-2 medium, N = 1,024, d = 64, forward and backward on an A100, 40.3 against 4.4 GB).
It is the paper's algorithm counted as written, not a production kernel, whose speed also comes from fusing the
matmul, mask, softmax and second matmul into one kernel; FlashAttention-2's loop order writes O once instead of once
per key block. Bytes over bandwidth give a floor on the time (the Serving page's roofline).

**The backward.** The standard backward reads back P, N² values per head kept from the forward. FlashAttention keeps
only O and the softmax statistics and recomputes S and P tile by tile from Q, K and those statistics (section 3.1
of the paper): more FLOPs, and memory linear in N instead of quadratic.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="Standard attention is bound by HBM traffic: it writes S and P and reads them back. "
            "FlashAttention tiles Q, K and V into SRAM, keeps each row's softmax online with a running max and sum, "
            "and never writes or reads the N × N matrices, so it becomes compute-bound and is exact up to round-off.",
            equation=r"\ell' = e^{\tilde m-m'}\tilde\ell + e^{m-m'}\ell",
            number="For the backward of 32 heads at N = 32,768 and d = 128, the standard forward keeps 64 GiB of "
            "fp16 P per layer and sequence, against 260 MiB of O and logsumexp.",
            trade_off="The backward recomputes S and P, more FLOPs for far less memory and traffic; the gain is "
            "largest where the N² term dominates, and a sliding window or sparse attention is a different model, "
            "while FlashAttention computes the same function.",
        ),
    )
    page.mistakes(
        [
            "Calling FlashAttention an approximation: it computes the same softmax, up to floating-point round-off.",
            "Saying it does fewer FLOPs: with no mask the backward's recomputation adds FLOPs (about 17% more matmul "
            "FLOPs over forward and backward); it saves memory traffic. With a causal mask its tile skipping can "
            "leave it with fewer FLOPs than an unfused masked implementation.",
            "Confusing it with a sliding window: a window changes the model, FlashAttention only the memory access.",
            "Reading Theorem 2's Θ(N²d²/M) as a speedup for every head size: counted exactly, Algorithm 1's saving "
            "levels off at about 4M/((12 + 16/d)·d²), small at d = 128 with 100 KiB of SRAM.",
            "Forgetting the rescale e^(m_old − m_new) of the running sum and output when a later block brings a larger "
            "max.",
        ]
    )

    page.download(out.tables, "flash_attention")
    page.finish()


page.run(_body)
