"""Attention: per-head heatmaps of a seeded toy layer, the √d_k scale, the causal mask, KV heads and the KV cache."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, preset_buttons
from views import attention as view_of

page = Page.setup(
    "Attention: heads, the √d_k scale, masks and the KV cache",
    ":material/visibility:",
    "Each query mixes the values of the tokens it may see, weighted by a softmax of dot products; dividing by √d_k "
    "keeps that softmax from saturating, the mask goes in before it, and the KV heads set the cache.",
    r"\begin{gathered}\mathrm{Attention}(Q, K, V) = "
    r"\operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V, \\"
    r"M_{ij} = -\infty \text{ where key } j \text{ comes after query } i \\"
    r"\text{KV cache per token} = 2 \cdot L \cdot K \cdot H \cdot b \text{ bytes}\end{gathered}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

VIEWS = view_of.VIEWS


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls(presets=list(view_of.MAIN_PRESETS)):
        st.subheader("Tokens")
        source = page.control("src")
        page.control("text", disabled=source != "text")
        page.control("split")
        page.control("tokens", disabled=source != "random")
        st.subheader("Toy layer")
        for name in ("dm", "h", "kv", "dk", "layer_seed"):
            page.control(name)
        settings, _, variant = view_of.toy_layer(page.state())
        st.caption(
            f"d_k = {settings.d_k} · {variant}: {settings.heads} query heads, {settings.n_kv_heads} KV "
            f"head{'s' if settings.n_kv_heads > 1 else ''}"
        )
        st.subheader("Softmax")
        for name in ("scale", "temp", "causal", "designed"):
            page.control(name)
        if page.control("predict_attn"):
            page.control("guess_head")
        with st.expander("KV-cache calculator", expanded=False):
            preset_buttons(view_of.SPEC, list(view_of.KV_PRESETS), group="KV")
            for name in ("L", "Hq", "Hkv", "hd", "dtype", "ctx", "B"):
                page.control(name)

    tabs = page.view_tabs("attn_view", VIEWS)
    real_slot = None
    if view_of.real_available():
        with tabs["Real model"]:
            real_slot = st.container()  # the figure goes above its layer and head, so that it starts the screen
            page.control_row("rl", "rh")

    with tabs["Tiny GPT"]:
        gpt_slot = st.container()  # the figure above its layer and head, as on the real model's tab
        page.control_row("gpt_layer", "gpt_head")

    out = page.open_view(view_of.figures, tabs)  # Predict first: no answer in any text
    facts = out.facts

    with tabs["Heads"]:
        if "Heads" in out.figures:
            page.chart(out.figures["Heads"], "fig-heads", "attention-heads")
    with tabs["Outputs"]:
        if "Outputs" in out.figures:
            page.chart(out.figures["Outputs"], "fig-outputs", "attention-outputs")
            st.caption("Each row is y_t = Σ_j A_tj v_j: a weighted mix of the value vectors the token may see.")
    with tabs["Mask"]:
        if "Mask" in out.figures:
            page.chart(out.figures["Mask"], "fig-mask", "attention-mask")
            check = facts["causality"]
            if check is not None:
                edit = f"token {check.position} '{check.old_token}' → '{check.new_token}'"
                st.caption(
                    f"Causality check: change {edit} and rerun the layer. With the mask, every earlier output moves by "
                    f"{check.max_change_before_causal:.2g} (nothing); without it, by up to "
                    f"{check.max_change_before_unmasked:.3f}."
                )
            else:
                st.caption("The causality check needs at least two tokens.")
    with tabs["Scale"]:
        if "Scale" in out.figures:
            page.chart(out.figures["Scale"], "fig-scale", "attention-scale")
            st.caption(
                f"Random q, k with independent zero-mean, unit-variance components, {facts['scale_tokens']} tokens, "
                "no mask, 8 draws; dotted lines: "
                "theory d_k · multiplier². 1/√d_model uses your d_model."
            )
    with tabs["KV cache"]:
        if "KV cache" in out.figures:
            page.chart(out.figures["KV cache"], "fig-kv", "attention-kv-cache")
            st.caption("Set the shape, number format, context and batch in the sidebar's KV-cache calculator.")
    with tabs["Real model"]:
        if not facts["real_available"]:
            st.caption(facts["real_install_hint"])
        elif "Real model" in out.figures and real_slot is not None:
            with real_slot:
                page.chart(out.figures["Real model"], "fig-real", "attention-real-model")
            if facts["real"].note:
                st.caption(facts["real"].note)
            st.caption(
                "all-MiniLM-L6-v2, a 6-layer encoder (12 heads of d_k = 32), run offline from the installed package; "
                "WordPiece tokens with [CLS] and [SEP]; no causal mask (an encoder sees both sides)."
            )

    with tabs["Tiny GPT"]:
        if "Tiny GPT" in out.figures:
            with gpt_slot:
                page.chart(out.figures["Tiny GPT"], "fig-gpt", "attention-tiny-gpt")
            st.caption(
                f"The app's tiny GPT (the training lab's model): a byte-level decoder of {view_of.GPT.n_layer} "
                f"layers with {view_of.GPT.n_head} heads of d_k = {view_of.GPT.head_dim}, trained on this app's "
                "cards, decks, README and docs/using.md, run in numpy on the sidebar's tokens as UTF-8 (their first "
                "64 bytes). Its causal mask leaves every weight above the diagonal at 0: a byte sees only itself and "
                "the bytes before it."
            )

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
**Heads.** Every query token takes a softmax over its dot products with the keys; row *t* of a heatmap is that
distribution (it sums to 1), and the output is the same mix of value vectors. The toy layer draws its embeddings,
position signal and projections from the seed; the three designed heads are built by hand to show patterns real
models learn: look at the previous token, park on the first token, find earlier copies of the same word.

**Scale.** If the components of q and k are independent with mean 0 and variance 1, q·k is a sum of d_k
products of variance 1 each, so Var(q·k) = d_k (the argument of Vaswani et al. 2017; trained q and k need not
satisfy it). Without a scale the rows turn one-hot as d_k grows (entropy falls towards 0, from its ceiling: log T
for a row that sees T keys, log t for causal row t, which sees t keys) and the softmax's gradient vanishes;
1/√d_k keeps the variance at 1.
1/√d_model is the classic slip: with h heads it divides by √h too much, so for any given weights the logits are
√h smaller than intended, at every step and not only at initialisation. To compensate, the model must grow q·k by
√h (q·k is bilinear: W_Q and W_K by h^(1/4) each; raising the gain of the norm in front of attention also scales v
by h^(1/4), which W_V or W_O must then undo; with a QK-norm, which normalises q and k so that neither route changes
q·k, only its learned scale by √h, Henry et al. 2020, or its gains by h^(1/4) each, Dehghani et al. 2023), so with
hyperparameters tuned for 1/√d_k it usually trains worse. The scale is a convention tied to the parametrisation:
μP uses 1/d_head on purpose (Yang et al. 2022).

**Mask.** Adding −∞ before the softmax removes the future from the denominator. Multiplying by 0 afterwards leaves
it there, so every row but the last (which sees every key) sums to less than 1, by a different amount per
position.

**KV cache.** At decode time each new token needs the keys and values of all earlier ones, so they are kept:
2·L·K·H·b bytes per token. Only the K KV heads count, which is why GQA (groups of query heads sharing one K and V)
and MQA (one for all) exist; the attention FLOPs stay the same. The 8× (GQA) and 64× (MQA) of Llama-3-70B's shape
are cache-size ratios, not decoding speed-ups: at small batch and short context, reading the weights dominates
the memory traffic, and the gain in speed grows with batch size and context length.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="Each token's query is compared with every visible key, the softmax of those scores weights the "
            "values, and the scale and the mask are what keep that softmax healthy and honest.",
            equation=r"\operatorname{softmax}\!\left(QK^\top/\sqrt{d_k} + M\right)V,\qquad"
            r"\operatorname{Var}(q\cdot k) = d_k",
            number="With independent zero-mean, unit-variance components of q and k, unscaled logits at d_k = 128 have "
            "a standard deviation of √128 ≈ 11, enough to make rows nearly one-hot at initialisation; Llama-3-70B's "
            "GQA cache is 320 KiB per token, 40 GiB at the 128k-token context of Llama 3.1 (Llama 3 itself had 8k).",
            trade_off="Fewer KV heads shrink the cache (8× for Llama-3-70B's GQA, 64× for MQA: ratios of cache size, "
            "not of decoding speed, since at small batch the weight reads dominate memory traffic) but share K and V "
            "across heads; MQA loses measurable quality, GQA little (Ainslie et al. 2023), and neither reduces the "
            "attention FLOPs.",
        ),
    )
    page.mistakes(
        [
            "Dividing by √d_model instead of √d_k: the dot product runs over one head's d_k dimensions.",
            "Masking after the softmax (multiply by 0): the future still sits in the denominator and every row but "
            "the last no longer sums to 1.",
            "Inverting the mask: masked_fill fills where the mask is True, so a True-means-allowed mask needs ~mask.",
            "With a KV cache, a plain tril for the new queries: they are the last positions, so the diagonal moves "
            "right by the number of cached tokens.",
            "Sizing the KV cache with the query heads, or forgetting the factor 2 for K and V.",
            "Saying GQA saves attention FLOPs: K and V are repeated back to every query head; it saves memory and "
            "bandwidth.",
        ]
    )

    page.download(out.tables, "attention")
    page.finish()


page.run(_body)
