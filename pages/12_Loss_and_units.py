"""The loss and its units: perplexity against bits per byte across tokenizers, BPE merges, the SFT loss mask,
packing masks and padding waste."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, cached_view, draw_tabs
from views import Options
from views import loss_units as view_of

page = Page.setup(
    "The loss, its units and the SFT mask",
    ":material/calculate:",
    "Perplexity is per token, so it changes with the tokenizer; bits per byte is per byte of text, so it does not. "
    "Compare models with different tokenizers in bits per byte.",
    r"\begin{gathered}L = -\frac{1}{T}\sum_{t=1}^{T} \ln p(x_t \mid x_{<t}),\quad \mathrm{PPL} = e^{L},\quad "
    r"\mathrm{bpb} = \frac{T\,L}{n_{\text{bytes}} \ln 2}, \\ "
    r"L_{\text{SFT}} = -\frac{\sum_t m_t \ln \pi(z_t \mid z_{<t})}{\sum_t m_t}\end{gathered}",
    spec=view_of.SPEC,
    short_title="Loss, units and the SFT mask",
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
)
figures = cached_view(view_of.figures)


def _open_tab(tab: str) -> None:
    st.session_state[view_of.SPEC["loss_view"].name] = tab


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""

    def control(name: str) -> None:
        page.control(name, on_change=_open_tab, args=(view_of.TAB_OF[name],))

    with page.controls():
        page.control("eval_text")
        page.control("vocab_size")
        st.caption("BPE merge stepper")
        control("bpe_merges")
        st.caption("SFT loss mask")
        for name in ("prompt_len", "resp_len", "sft_mask", "sft_reduce", "sft_batch"):
            control(name)
        st.caption("Packing and padding")
        for name in ("doc_lens", "pad_batch", "pack_len"):
            control(name)

    with page.views():
        tabs = dict(zip(view_of.VIEWS, draw_tabs(view_of.SPEC["loss_view"]), strict=True))
    parts = {"main"} | {name for name, tab in tabs.items() if tab.open}
    state = page.state()
    out = figures(state, Options(theme=page.theme, presenter=page.presenter, parts=frozenset(parts)))
    page.show_notices(out)
    page.figure(out.figures["main"], key="fig-units", filename="loss-units")
    st.caption(
        "Blue: one byte-level model scored through every tokenizer (a token's log-probability is the sum of its "
        "bytes'), so its perplexity per token is the same total loss in another unit, not the perplexity of a "
        "token-level model. Orange: a bigram model trained per tokenizer, the realistic case. Trained on the bundled "
        "text, scored on the text in the sidebar."
    )
    page.readouts(out.readouts)

    if tabs["BPE merges"].open:
        with tabs["BPE merges"]:
            page.chart(out.figures["BPE merges"], "fig-bpe", "bpe-merges")
            page.note(
                "The text in the sidebar cut by the first merges of the page's largest BPE, and the one byte-level "
                "model of the figure above (its blue bars) scored through each cut: the same total loss over fewer "
                "tokens, so the loss per token, and with it the perplexity per token, rises while the bits per byte "
                "stay put."
            )
            st.dataframe(out.facts["merge_table"], hide_index=True, height=260)
            st.markdown(
                f"The text's first {len(out.facts['sample'])} characters after these {state.bpe_merges} merges "
                f"({len(out.facts['pieces'])} tokens):"
            )
            st.code(" · ".join(out.facts["pieces"]), language=None, wrap_lines=True)
    if tabs["SFT mask"].open:
        with tabs["SFT mask"]:
            page.chart(out.figures["SFT mask"], "fig-sft", "sft-mask")
            weights = out.facts["answer_weight"]
            if len(weights) == 2:
                st.caption(
                    f"Example 0: your prompt and response; example 1: a short chat turn ({view_of.SECOND_EXAMPLE[0]} "
                    f"prompt, {view_of.SECOND_EXAMPLE[1]} response tokens); padding is always masked. One answer token "
                    f"weighs {weights[0]:.2e} in example 0 and {weights[1]:.2e} in example 1 when averaging per "
                    f"{state.sft_reduce}."
                )
            else:
                st.caption(
                    "One example: the prompt's tokens, then the response's. Colour: each token's weight in the loss "
                    "(its share of the loss if every token's loss is the same). "
                    "Add a second example to see padding and the two ways of averaging over a batch."
                )
    if tabs["Packing"].open:
        with tabs["Packing"]:
            page.chart(out.figures["Packing"], "fig-packing", "packing-mask")
            st.caption(
                f"Left: naive packing lets {out.facts['leaks']} query-key pairs cross a document boundary (red). "
                f"Right: the block-diagonal mask. Positions restart per document: {out.facts['positions']}."
            )
    if tabs["Padding"].open:
        with tabs["Padding"]:
            page.chart(out.figures["Padding"], "fig-padding", "padding-waste")
            pad, bucket, pack = out.facts["padding"]
            st.caption(
                f"{view_of.N_LENGTHS} seeded log-normal lengths (median 300 tokens). Padding to the longest of each "
                f"batch of {state.pad_batch} wastes {pad.waste:.1%} of the slots; sorting by length first (bucketing) "
                f"{bucket.waste:.1%}; packing into rows of {state.pack_len:,} tokens {pack.waste:.1%}."
            )

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
The pretraining loss L is the mean of −ln p(x_t | x_<t) over the T tokens of a text. Perplexity e^L reads as a
branching factor: a model that knows nothing spreads its probability over all V tokens, so its loss is ln V
(10.8 nats for V = 50,000) and its perplexity is exactly V (seed 001, section 2). Bits per byte divides the *total*
loss T·L by the number of bytes and by ln 2 (seed 001, section 3.1). The Pile reports its language-model results in
this unit for the same reason (Gao et al., 2020).

The blue bars make the claim exact. One byte-level model scores the text; each tokenizer only groups its bytes,
and by the chain rule a token's log-probability is the sum of its bytes'. (A byte-level model rather than a
character-level one, since a byte-level BPE token can end inside a multi-byte character.) The total is then the
same for every tokenizer, so bits per byte agree to the last digit, while perplexity per token grows with the
token length: fewer tokens, each harder to guess (seed 001, section 3.1). That blue perplexity is a unit conversion
of one total, not the perplexity of a token-level model: the products of byte probabilities give the chance that
the next bytes spell a token, and over a vocabulary they do not sum to 1. A real token-level model scores only the
canonical tokenisation of a text, one of many that spell it, so its bits per byte bound from above the
cross-entropy of the byte distribution it defines (Cao and Rimell, 2021). The orange bars train a small bigram per
tokenizer: perplexities a factor of about 24 apart, bits per byte within a factor of 1.4, and what is left of the
difference comes from the models (a bigram over BPE tokens sees more context), not from the unit.

The BPE tokenizers are trained live (the `tokenizers` package) on the bundled text: start from the 256 bytes, merge
the most frequent adjacent pair, repeat until the vocabulary is full (Sennrich et al., 2016; byte-level as in GPT-2,
Radford et al., 2019). Encoding applies the merges in the order they were learned.

**SFT** uses the same cross-entropy averaged over the response tokens only (m_t = 0 on the prompt; seed 001,
section 3.4). Without the mask, a 2,000-token prompt with a 50-token answer puts 2,000 / 2,050 = 97.6% of the loss
terms on predicting the prompt (seed 002, A6.2; with the causal shift, 1,999 of the 2,049 predicted positions, also
97.6%). That is the share of the loss itself only if every token's loss is the same; the page assumes so. **Packing**
concatenates short examples to fill a row; without a block-diagonal mask each one attends to those before it, and
positions should restart per document (seed 002, A6.2; Krell et al., 2021). **Padding** every batch to its longest
sequence wastes token slots; bucketing by length removes most of it without touching attention (seed 002, A8.11).
The page's bucketing sorts all the sequences at once, so every batch holds one length range and the batches come in
length order; a training sampler shuffles, then sorts only within mega-batches of several batches, which keeps
most of the saving and the randomness (the group_by_length option of Hugging Face transformers does this). It pads
noticeably more than the full sort, though: on this page's 512 lengths in batches of 16, about 25% of the slots
instead of 6%, against 68% unsorted.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="Only if they share a tokenizer: perplexity is e to the loss per token, so longer tokens raise it "
            "on the same text with the same total likelihood; bits per byte divides the total loss by the bytes and "
            "compares across tokenizers (seed 001, section 3.1; seed 002, A11.4).",
            equation=r"\mathrm{PPL} = e^{L},\qquad \mathrm{bpb} = \frac{T\,L}{n_{\text{bytes}}\ln 2}",
            number="ln 50,000 = 10.8 nats for a model that knows nothing (seed 001, section 2); and 97.6% of the "
            "terms of an unmasked SFT loss sit on a 2,000-token prompt with a 50-token answer (seed 002, A6.2).",
            trade_off="Packing removes padding but needs a block-diagonal (variable-length) mask and restarted "
            "positions; bucketing by length gets most of the saving with no change to attention (seed 002, A8.11), "
            "but sorting the whole data set correlates batches with length, so samplers bucket within shuffled "
            "mega-batches.",
        ),
    )
    page.mistakes(
        [
            "Comparing perplexities of models with different tokenizers (seed 001, section 7).",
            "Computing the SFT loss on prompt tokens (seed 001, section 7), or masking one prompt length for a whole "
            "batch when every example has its own (seed 002, A6.2).",
            "Packing without a block-diagonal mask, so one example attends to another (seed 002, A6.2 and A8.11).",
            "Judging a post-trained model by its perplexity on a generic corpus: it measures language modelling, not "
            "usefulness, and usually rises after preference tuning (seed 002, A11.4).",
        ]
    )
    page.download(out.tables, "loss-units")
    page.finish()


page.run(_body)
