"""Mixture of experts: top-k routing with a capacity limit, balancing with a loss or a bias, total vs active."""

import streamlit as st

from pages.frame import InterviewAnswer, Page
from views import moe as view_of

page = Page.setup(
    "Mixture of experts",
    ":material/hub:",
    "A router sends each token to a few of many expert FFNs, so parameters grow with the number of experts while "
    "the FLOPs per token stay about fixed. An expert with a fixed number of slots drops the assignments beyond them; "
    "a balance loss or, in DeepSeek-V3, a selection-only bias keeps the loads even.",
    r"\mathcal{L}_\text{aux} = \alpha\,E \sum_{e} f_e P_e",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

VIEWS = view_of.VIEWS


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        st.subheader("The toy router")
        for name in ("moe_experts", "moe_top_k", "moe_tokens", "moe_skew", "moe_cf", "moe_seed"):
            page.control(name)
        st.subheader("Balancing")
        for name in ("moe_aux_step", "moe_gamma", "moe_steps"):
            page.control(name)
        st.subheader("Expert design")
        for name in ("moe_model", "moe_ep", "moe_split"):
            page.control(name)
        if page.control("predict_moe"):
            page.control("guess_dropped")

    tabs = page.view_tabs("moe_view", VIEWS)

    out = page.open_view(view_of.figures, tabs)

    with tabs[view_of.ROUTING]:
        if view_of.ROUTING in out.figures:
            page.chart(out.figures[view_of.ROUTING], "fig-routing", "moe-routing")
            st.caption(
                "A seeded toy: Gaussian router logits plus a skew that favours the low experts, softmax, top k "
                "(gates renormalised over the k for k > 1). Slots are filled token by token, each token's choices "
                "best first."
            )
    with tabs[view_of.BALANCING]:
        if view_of.BALANCING in out.figures:
            page.chart(out.figures[view_of.BALANCING], "fig-balancing", "moe-balancing")
            st.caption(
                "The same batches three ways. Auxiliary loss: softmax router, a per-expert logit offset trained by "
                "gradient descent on E·Σ f·P alone (Switch Transformer's loss). Selection bias: sigmoid affinities, "
                "the bias added only to choose the top k, gates from the unbiased affinities, the bias moved by γ "
                "against each expert's load after every step (DeepSeek-V3). No capacity limit; no language-model "
                "loss trains the router here."
            )
    with tabs[view_of.PARAMETERS]:
        if view_of.PARAMETERS in out.figures:
            page.chart(out.figures[view_of.PARAMETERS], "fig-parameters", "moe-parameters")
            st.caption(
                "Parameter counts from each model's published configuration (DeepSeek-V3's without its MTP "
                "module). Mistral AI's announcement gives Mixtral 46.7B / 12.9B (its paper, Jiang et al. 2024, "
                "rounds to 47B / 13B); DeepSeek-AI 2024 gives 671B / 37B, where the count here gives 37.6B with the "
                "0.9B embedding table included."
            )

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
**Routing.** The router scores each token's hidden state against E experts and sends it to its top-k experts.
Each expert has C = ⌈capacity factor · T · k / E⌉ slots (Switch Transformer, Fedus et al. 2022, eq. 3, is T/E ·
capacity factor for k = 1; k assignments per token multiply it, and this page rounds up); assignments over capacity
are dropped: the token gets nothing from that expert, while its other experts and the residual
stream still carry it.

**The balance loss.** E · Σ f_e P_e, with f_e the fraction of dispatches that go to expert e and P_e the mean
router probability of e. The gradient reaches the router through P only; f comes from the top-k selection.

**DeepSeek-V3** (DeepSeek-AI 2024, arXiv 2412.19437, §2.1.2; the method is Wang et al. 2024, arXiv 2408.15664)
selects by sigmoid affinity plus a per-expert bias, gates with the unbiased affinities normalised over the selected
experts, and after each step lowers the bias of overloaded experts and raises it for underloaded ones by γ; a
sequence-wise balance loss with weight 0.0001 remains. The bias only chooses the experts and never enters a gate:
each chosen expert is weighted by its own unbiased affinity, normalised over the experts chosen. A balance loss
balances by moving the router's probabilities, and in training its gradient competes with the language-model loss's:
too large a balance loss impairs the model (DeepSeek-V3 §2.1.2, citing Wang et al. 2024), too small a one balances
poorly (Wang et al. 2024).

**Shared and fine-grained experts** (DeepSeekMoE, Dai et al. 2024, arXiv 2401.06066). A shared expert sees every
token, so common knowledge need not be copied into many routed experts; cutting each expert into m narrower ones
and routing to m·k of them keeps the expert parameters and expert FLOPs (the router grows m-fold) but multiplies
the combinations a token can reach.
DeepSeek-V3 has 1 shared and 256 routed experts of width 2,048 per MoE layer, 8 routed per token.

**Memory and traffic.** Every expert is resident, so memory follows the total parameters, while a token's FLOPs
follow the active ones. With experts spread over devices (expert parallelism), each token's hidden vector travels
to its k experts and their outputs travel back: an all-to-all exchange in every MoE layer, twice the volume with
the backward pass.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="A router sends each token to its top-k experts; an expert's assignments over capacity are "
            "dropped; the balance loss multiplies each expert's fraction of dispatches by its mean router probability.",
            equation=r"C = \lceil \text{cf}\cdot T k / E \rceil",
            number="Mixtral 8x7B: about 46.7B parameters resident, about 12.9B active per token.",
            trade_off="Memory follows total parameters, compute the active ones.",
        ),
    )
    page.mistakes(
        [
            "Saying a dropped token skips the layer whatever k is: that holds for top-1 with no shared expert "
            "(Switch), but with k > 1 it loses only the experts that were full and keeps its other experts; the "
            "residual stream carries it either way.",
            "Reading the router as gradient-free: the gate multiplies the expert's output, so the language-model loss "
            "reaches the router through it; only the top-k selection has no gradient.",
            "Counting memory from active parameters: every expert must be resident, so memory follows the total.",
            "Calling DeepSeek-V3 free of any balance loss: a sequence-wise balance loss with a small weight remains.",
        ]
    )
    page.download(out.tables, "moe")
    page.finish()


page.run(_body)
