"""Scaling laws: the iso-FLOP U-curve of the Chinchilla fit, with a plan you drag along one budget."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, cached, cached_view, metric_row
from views import Options
from views import scaling as view_of
from viz import format as fmt

page = Page.setup(
    "Scaling laws: the iso-FLOP U-curve",
    ":material/trending_up:",
    "At a fixed compute budget, model size and data trade against each other; the loss along that line is a "
    "flat-bottomed U, and its bottom is the compute-optimal model.",
    r"L(N, D) = E + \frac{A}{N^{\alpha}} + \frac{B}{D^{\beta}}, \quad D = \frac{C}{6N}, \quad "
    r"N_{\text{opt}} = G\left(\frac{C}{6}\right)^{\frac{\beta}{\alpha+\beta}},\ "
    r"G = \left(\frac{\alpha A}{\beta B}\right)^{\frac{1}{\alpha+\beta}}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
)
figures = cached_view(view_of.figures)
flop_check = cached(view_of.flop_check)  # imports torch on its first call, the button's click
FLOPS_COUNTED = "scaling_flops_counted"  # session state: the button was clicked, its readouts stay on reruns


def _model_to_n() -> None:
    """A model chosen from the catalogue writes its parameter count into N (N stays the plan's source of truth)."""
    n = view_of.model_params(st.session_state.get("scale_model", view_of.NO_MODEL))
    if n is not None:
        st.session_state["N"] = n


def _count_flops() -> None:
    st.session_state[FLOPS_COUNTED] = True


def _flop_check() -> None:
    """The lesson's 6ND check with torch's FLOP counter, folded below the figures: torch is imported on the click."""
    with st.expander(view_of.FLOP_CHECK_TITLE, expanded=False):
        st.markdown(view_of.FLOP_CHECK_TEXT)
        st.button("Count with torch", key="flops-count", on_click=_count_flops)
        if st.session_state.get(FLOPS_COUNTED):
            with st.spinner("Counting (torch takes a few seconds to import the first time)"):
                readouts = flop_check(**view_of.FLOP_CHECK_SIZE)
            metric_row(readouts)
            st.code(view_of.FLOP_CHECK_CODE, language="python")


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        page.control("fit")
        st.caption(view_of.fit_label(st.session_state.get("fit", view_of.FIT_NAMES[0])))
        budget_source = page.control("budget")
        st.caption("Hardware (sets the budget in Hardware mode; the training time always)")
        for name in ("gpu", "gpus", "hours", "mfu"):
            page.control(name)
        if budget_source == "Hardware":
            st.metric("Budget C (FLOPs)", fmt.sci(view_of.budget(page.state())[0]))
        else:
            page.control("C")
        page.control("scale_model", on_change=_model_to_n)
        page.control("N")
        if page.control("predict_scaling"):
            page.control("guess_N")

    state = page.state()
    out = figures(state, Options(theme=page.theme, presenter=page.presenter, parts=frozenset({"main", "family"})))
    study = out.facts["study"]
    p, other_plan = study.current, study.other
    other_label = out.facts["other_label"]
    page.show_notices(out)
    hidden = out.facts["predict"] == "hidden"  # Predict first, no guess yet: no text may give the answer away
    page.predict_first(hidden)
    page.figure(out.figures["main"], key="isoflop", filename="isoflop-u-curve")
    page.readouts(out.readouts)

    with page.views():
        if "family" in out.figures:
            page.chart(out.figures["family"], "family", "isoflop-family")
        _flop_check()

    numbers = out.facts["text_numbers"]  # the fits' optima at the budgets the texts below quote
    tpp, epoch_tpp, optimum_N = (numbers[name] for name in ("tokens_per_param", "epoch_tokens_per_param", "optimum_N"))
    llama = numbers["llama_efficiency"]  # by fit: the share of Llama 3 8B's compute an optimal model needs
    fit_label, penalty = out.facts["fit_label"], out.facts["penalty_pct"]  # penalty: % above the minimum, 2x and 3x off
    waste = out.facts["waste_pct"]  # % of the budget an optimal model saves at the loss of a model 2x and 3x off
    epoch_N = numbers["epoch_optimum_N"]

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            f"""
Every point of the blue curve costs the same compute C: a model of N parameters gets D = C/(6N) tokens.
Small models see many tokens but lack capacity; large models have capacity but see few tokens. The orange dot
is the selected fit's own minimum (the closed form for a loss of the approach-3 form above); the square is the "20
tokens per parameter" rule of thumb, N = √(C/120). The bottom is flat but not that flat: on this budget, under this
fit, a model 2× off the optimum loses {penalty[2.0]:.1f}% in loss and one 3× off {penalty[3.0]:.1f}% (the worse side
of each, too small or too large). These percentages shrink as the budget grows, because the floor E does not shrink
with it. In compute the price does not depend on the budget, a property of the fit's form (a floor plus power laws):
a compute-optimal model would reach the loss of a model 2× off with {waste[2.0]:.0f}% less compute, and that of one
3× off with {waste[3.0]:.0f}% less (again the worse side of each). Teams still **over-train** smaller models,
because those are cheaper to serve (2N FLOPs per generated token, for the model's whole life).

The two fits disagree: at this budget {fit_label} wants {p.tokens_per_param_opt:,.0f} tokens per
parameter, the {other_label} fit {other_plan.tokens_per_param_opt:,.0f}. "About 20 tokens per parameter" comes
from Hoffmann et al.'s approaches 1 and 2 (envelopes of training curves, minima of iso-FLOP profiles) and from
Epoch AI's refit of approach 3 (Besiroglu et al. 2024; their constants give {epoch_tpp[1e20]:.0f} at 10²⁰ FLOPs,
falling to {epoch_tpp[1e24]:.0f} at 10²⁴). The published approach-3 constants, drawn by the Hoffmann fit, ask for
more tokens per parameter as C grows: {tpp[2.7e20]:.0f} at 2.7×10²⁰ FLOPs, {tpp[1.2e21]:.0f} at 1.2×10²¹ and
{tpp[5.9e23]:.0f} at 5.9×10²³. With these rounded constants the optimum at Chinchilla's 6ND (6 · 70B · 1.4T =
5.88×10²³ FLOPs) is {fmt.count(optimum_N[5.88e23])} parameters, well under the 70B that was trained. The paper
counts Gopher's budget as 5.76×10²³ FLOPs (6ND gives Gopher 5.0×10²³) and gave Chinchilla the same budget; for it
(where these constants give {fmt.count(optimum_N[5.76e23])}) the paper projected about 40B from approach 3 and 63B
to 67B from approaches 1 and 2, concluded that the optimum lies between 40B and 70B, and trained 70B, the top of
that range, for reasons of data and compute efficiency (Hoffmann et al. 2022, section 4). Besiroglu et al. (2024)
reconstructed the data and found that the published constants fit it poorly (with implausibly narrow confidence
intervals); their refit puts the optimum at 5.88×10²³ FLOPs at {fmt.count(epoch_N[5.88e23])} and agrees with
approaches 1 and 2. Quote 20 tokens per parameter, and treat the approach-3 curve at large C with suspicion.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="At fixed compute, parameters and tokens should grow together; Hoffmann et al.'s approaches 1 and "
            "2 (and Epoch AI's refit of their approach 3, Besiroglu et al. 2024) put the optimum near 20 tokens per "
            "parameter, and the loss is fairly flat around it.",
            equation=r"C \approx 6ND,\qquad N_{\text{opt}} \approx \sqrt{C/120}",
            number="Eight H100s for a day at 40% MFU give 2.7×10²⁰ FLOPs: about a 1.5B model on 30B tokens by the "
            "20-tokens rule (Hoffmann et al.'s published approach-3 fit, the page's default, says "
            f"{fmt.count(optimum_N[2.73e20])} on {tpp[2.73e20]:.0f} tokens per parameter; its "
            "published constants are disputed, Besiroglu et al. 2024).",
            trade_off="Chinchilla counts only training compute. Llama 3 8B on 15T tokens (~1,900 tokens per parameter) "
            f"reaches the loss that a compute-optimal model would reach with {llama['hoffmann2022']:.0%} of its "
            f"compute under Hoffmann's fit ({llama['epoch2024']:.0%} under Epoch's): about half (Hoffmann) to four "
            "fifths (Epoch) of the training compute is spent on purpose. It pays because serving costs 2N FLOPs per "
            "generated token for the model's whole life and a small model is cheaper and faster to deploy, and "
            "because Meta reported the models' performance still improving log-linearly at 15T tokens (Meta 2024, "
            "the Llama 3 announcement).",
        ),
    )
    page.mistakes(
        [
            "Treating 20 tokens per parameter as a law: it is a rule of thumb from Hoffmann et al.'s approaches 1 and "
            "2 (and Epoch AI's refit), a training-compute optimum for one model family and data mix; inference cost "
            "and data quality move the best choice, and the published approach-3 fit itself drifts from "
            f"{tpp[1e20]:.0f} to {tpp[1e24]:.0f} tokens per parameter between 10²⁰ and 10²⁴ FLOPs.",
            "Forgetting what 6ND leaves out (attention FLOPs at long context), or counting recomputation twice. 6ND "
            "counts FLOPs, not time: turning the model's FLOPs (6ND plus attention, about 6ND at short context) into "
            "days needs the MFU, the share of peak FLOP/s that they achieve. Activation recomputation is not counted "
            "there: it lowers the MFU, and the 8N per token of full recomputation goes only with the hardware FLOPs "
            "utilisation, HFU (Chowdhery et al. 2022, appendix B).",
            "Reading Kaplan's N ∝ C^0.73 as current advice, or blaming its gap with Chinchilla on one cause: most of "
            "it comes from counting only non-embedding parameters, which matters at small scale (Pearce & Song 2024), "
            "and from leaving out the last layer's FLOPs, too long a warm-up for small models and optimizer settings "
            "(AdamW's β₂ at small batches) not tuned per scale (Porian et al. 2024).",
            "Counting only weights when sizing memory: mixed-precision Adam keeps about 16 bytes per parameter, "
            "before activations.",
        ]
    )

    page.download(out.tables, "scaling")
    page.finish()


page.run(_body)
