"""Sampling and decoding: temperature, top-k, top-p and min-p on next-token bars, and greedy loops."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, cached_view, draw_tabs
from views import Options
from views import sampling as view_of

page = Page.setup(
    "Sampling and decoding",
    ":material/casino:",
    "The model gives a distribution; the decoder decides how much of it to use. Temperature reshapes it, top-k, "
    "top-p and min-p cut its tail, and T = 0 keeps only the most likely token.",
    r"\begin{gathered} p = \operatorname{softmax}(z / T), \qquad H = -\sum_i p_i \ln p_i \\ "
    r"\text{top-}p\text{: drop sorted token } i \iff \sum_{j<i} p_j \ge p_{\text{top}} \end{gathered}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
)
figures = cached_view(view_of.figures)


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        source = page.control("vocab")
        if source == "tiny GPT":
            page.control("gpt_prompt")
        page.control("logits")
        if source in view_of.sampling_presets():
            with st.expander("The preset's logits, to copy and edit"):
                st.code(view_of.preset_logits_text(source), language=None, wrap_lines=True)
        if source == "bigram":
            page.control("word")
        for name in ("T", "top_k", "top_p", "min_p", "order", "chain_seed"):
            page.control(name)

    with page.views():
        tab_order, tab_loops = draw_tabs(view_of.SPEC["samp_view"])
    parts = {"main"} | ({"order"} if tab_order.open else set()) | ({"loops"} if tab_loops.open else set())
    state = page.state()
    out = figures(state, Options(theme=page.theme, presenter=page.presenter, parts=frozenset(parts)))
    page.show_notices(out)
    page.figure(out.figures["main"], key="fig-sampling", filename="sampling")
    st.caption(
        f"Context: {out.facts['context']}. Drag the temperature slider under the bars: the bars and the panel change "
        "in the browser, and the readouts follow when you let go."
    )
    page.readouts(out.readouts)

    if tab_order.open:
        with tab_order:
            page.chart(out.figures["order"], "fig-order", "sampling-order")
            kept = out.facts["kept_by_order"]
            st.caption(
                f"Temperature first keeps {kept['temperature first']} "
                f"token{'' if kept['temperature first'] == 1 else 's'}, truncation first "
                f"{kept['filters first']}. "
                "Truncating the T = 1 distribution fixes the kept set before the temperature can widen it."
            )
    if tab_loops.open:
        with tab_loops:
            page.chart(out.figures["loops"], "fig-loops", "sampling-loops")
            gens = out.facts["generations"]
            greedy = gens["greedy (T = 0)"]
            st.caption(
                f"A seeded Markov chain over {view_of.CHAIN_V} tokens (each next token depends only on the last). "
                f"Greedy decoding repeats a {greedy.loop_period}-token "
                f"loop{' from the first step' if greedy.loop_start == 0 else ''}; a red box marks a loop that repeats "
                "to the end. Sampling can leave it."
            )

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
The last layer gives one logit z per token of the vocabulary; the sampler draws from softmax(z / T). Dividing by T
never changes the ranking, only how peaked the distribution is: below 1 it sharpens, above 1 it flattens, towards 0
it becomes the argmax and towards infinity uniform. T = 0 itself cannot be divided by, so greedy decoding is a
separate branch of the code (seed 002, A8.7).

The truncations decide which tokens may be drawn at all (faint bars: before truncation, grey where cut; orange:
what is sampled after renormalising):

- **top-k** (Fan et al., 2018) keeps a fixed number of tokens whether the model is sure or not;
- **top-p** (nucleus sampling, Holtzman et al., 2020) sorts the tokens and keeps the shortest prefix whose mass
  reaches the threshold p_top (the slider "top-p"; the p_i are the token probabilities). A token goes only if the
  mass *before* it already reaches p_top, so the token that crosses p_top stays (seed 002, A8.7); the kept set
  grows when the model is unsure and shrinks when it is sure;
- **min-p** (Nguyen et al., 2024) keeps every token with at least min-p times the top token's probability.

Order matters, and it is a convention of each library. Hugging Face transformers and vLLM temper first and
truncate the tempered distribution (so does seed 002, A8.7); llama.cpp's default chain applies the temperature
last, after top-k, top-p and min-p (ggml-org/llama.cpp issue 4091, 2023), an order some min-p users choose on
purpose. Truncating first fixes top-p's and min-p's kept set at T = 1, so a high temperature can no longer widen
the choice (the first preset: 20 tokens against 8); top-k alone keeps the same k tokens and gives the same
distribution in either order, since temperature keeps the ranking.

The entropy H in nats (Shannon, 1948), and exp(H), the number of equally likely tokens with the same entropy (the
branching-factor reading of perplexity in seed 003), say how open the choice is: 1 for greedy, V for uniform. On the
preset vocabulary exp(H) is 2.95 at T = 0.5, 7.3 at T = 1 and 18.7 at T = 2. A model with finite memory decoded
greedily must repeat itself eventually (the Greedy loops tab). Holtzman et al. (2020) introduced nucleus sampling
against two failures at once: maximisation (greedy or beam search) falls into repetitive, bland text, and pure
sampling from the full distribution draws from the unreliable tail and turns incoherent; cutting the tail but
still sampling avoids both (seed 002, A8.7).
"""
        )

    page.quick_check(
        "Probabilities 0.5, 0.3, 0.2 and top-p = 0.6. Which tokens can be sampled, and with what probabilities?",
        "The first two. The mass before the second token is 0.5 < 0.6, so it stays (it is the one that crosses 0.6); "
        "the mass before the third is 0.8 ≥ 0.6, so it goes (the `cum − p ≥ top_p` shift of seed 002, A8.7). "
        "Renormalised: **0.625 and 0.375** (the preset “Quick check” shows it).",
    )
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="Temperature rescales the logits without changing their order; top-p then keeps the smallest set "
            "of tokens whose mass reaches the threshold p_top, including the one that crosses it; T = 0 is a separate "
            "argmax branch (Holtzman et al., 2020; seed 002, A8.7). The order is each library's convention: Hugging "
            "Face and vLLM temper first, llama.cpp's default chain tempers last.",
            equation=r"p = \operatorname{softmax}(z/T);\quad \text{drop sorted } i \iff "
            r"\textstyle\sum_{j<i} p_j \ge p_{\text{top}}",
            number="At T = 2 with top-p 0.9, this page's 30-token preset keeps 20 tokens when tempered first (the "
            "order of seed 002, A8.7) and 8 when truncated first.",
            trade_off="A fixed k is too many tokens when the model is sure and too few when it is not; top-p adapts "
            "to the model's confidence (Holtzman et al., 2020; seed 002, A8.7) but still lets a long flat tail in at "
            "high T, which min-p cuts relative to the top token (Nguyen et al., 2024).",
        ),
    )
    page.mistakes(
        [
            "Dropping the crossing token (testing `cum > p_top` instead of `cum − p_i ≥ p_top`): the sampled "
            "distribution silently changes (seed 002, A8.7).",
            "No T = 0 branch: a division by zero in the sampler (seed 002, A8.7).",
            "Truncating before tempering (llama.cpp's default order) and expecting a higher temperature to widen the "
            "choice (seed 002, A8.7).",
            "Blaming repetition loops on the decoder alone or on the model alone: greedy decoding of a model that "
            "sees only the last n tokens must cycle eventually whatever the model (the Greedy loops tab: a Markov "
            "chain with no self-reinforcement still loops), but real LMs fall into short loops and stay there "
            "because their probabilities reinforce repetition (each repeat makes the next one likelier: Holtzman et "
            "al., 2020, Figure 4; Xu et al., 2022), and greedy decoding locks into it (seed 002, A8.7). Sampling, a "
            "repetition penalty (Keskar et al., 2019) or unlikelihood training (Welleck et al., 2020) makes loops "
            "much rarer, without a guarantee.",
        ]
    )
    page.download(out.tables, "sampling")
    page.finish()


page.run(_body)
