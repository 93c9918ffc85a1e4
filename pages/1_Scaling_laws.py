"""Scaling laws: the iso-FLOP U-curve of the Chinchilla fit, with a plan you drag along one budget."""

import streamlit as st

from core import scaling
from pages.frame import InterviewAnswer, Page, cached_view
from pages.views import Options
from pages.views import scaling as view_of

page = Page.setup(
    "Scaling laws: the iso-FLOP U-curve",
    "📈",
    "At a fixed compute budget, model size and data trade against each other; the loss along that line is a "
    "flat-bottomed U, and its bottom is the compute-optimal model.",
    r"L(N, D) = E + \frac{A}{N^{\alpha}} + \frac{B}{D^{\beta}}, \quad D = \frac{C}{6N}, \quad "
    r"N_{\text{opt}} = G\left(\frac{C}{6}\right)^{\frac{\beta}{\alpha+\beta}},\ "
    r"G = \left(\frac{\alpha A}{\beta B}\right)^{\frac{1}{\alpha+\beta}}",
    spec=view_of.SPEC,
)
figures = cached_view(view_of.figures)

with page.controls():
    page.control("fit")
    st.caption(scaling.FITS[scaling.fit_by_short_name(st.session_state.get("fit", view_of.FIT_NAMES[0]))].label)
    budget_source = page.control("budget")
    st.caption("Hardware (sets the budget in Hardware mode; the training time always)")
    for name in ("gpu", "gpus", "hours", "mfu"):
        page.control(name)
    if budget_source == "Hardware":
        st.metric("Budget C (FLOPs)", f"{view_of.budget(page.state())[0]:.3g}")
    else:
        page.control("C")
    page.control("N")

state = page.state()
out = figures(state, Options(presenter=page.presenter, parts=frozenset({"main", "family"})))
study, fit_key = out.facts["study"], out.facts["fit_key"]
p, other_plan = study.current, study.other
other_label = scaling.FITS[study.other_fit].label
page.show_notices(out)
page.figure(out.figures["main"], key="isoflop", filename="isoflop-u-curve", drag="N", drag_values=study.slider.N)
page.readouts(out.readouts)

with page.views():
    page.chart(out.figures["family"], "family", "isoflop-family")

with page.explain():
    st.markdown(
        f"""
Every point of the blue curve costs the same compute C: a model of N parameters gets D = C/(6N) tokens.
Small models see many tokens but lack capacity; large models have capacity but see few tokens. The orange dot
is the fit's own minimum (closed form of Hoffmann et al.'s theorem); the square is the "20 tokens per
parameter" rule of thumb, N = √(C/120). The bottom is flat: inside a factor of about 3 in N the loss moves by
well under 1%, which is why teams happily **over-train** smaller models that are cheaper to serve
(2N FLOPs per generated token, for the model's whole life).

The two fits disagree: at this budget {scaling.FITS[fit_key].label} wants {p.tokens_per_param_opt:,.0f} tokens per
parameter, the {other_label} fit {other_plan.tokens_per_param_opt:,.0f}. The Epoch AI replication
re-extracted Chinchilla's data and found exponents closer to the paper's other two methods.
"""
    )

page.quick_check(
    "A model with **1B parameters** is trained on **100B tokens**. About how many FLOPs does training cost?",
    "C ≈ 6·N·D = 6 · 10⁹ · 10¹¹ = **6×10²⁰ FLOPs** (set C = 6e20 and N = 1e9 to see it: 100 tokens per "
    "parameter, a little right of the fit's minimum).",
)
page.interview(
    "“How big a model should I train for this budget, and why does Llama train far past 20 tokens per parameter?”",
    InterviewAnswer(
        sentence="At fixed compute, parameters and tokens should grow together; Chinchilla's fit puts the optimum "
        "near 20 tokens per parameter, and the loss curve is flat around it.",
        equation=r"C \approx 6ND,\qquad N_{\text{opt}} \approx \sqrt{C/120}",
        number="Eight H100s for a day at 40% MFU give 2.7×10²⁰ FLOPs: about a 1.5B model on 30B tokens.",
        trade_off="Chinchilla counts only training compute. Serving costs 2N FLOPs per token forever, so a "
        "smaller model trained longer (Llama 3 8B: ~1,900 tokens per parameter) is cheaper overall, and the flat "
        "bottom makes the loss penalty small.",
    ),
)
page.mistakes(
    [
        "Treating 20 tokens per parameter as a law: it is the training-compute optimum of one fit on one data "
        "mix; inference cost and data quality move the best choice.",
        "Forgetting what 6ND leaves out: attention FLOPs at long context, activation recomputation (8N instead "
        "of 6N per token), and the gap between peak and achieved FLOP/s (MFU).",
        "Reading Kaplan's N ∝ C^0.73 as current advice: its short runs were read off one long cosine schedule, "
        "which undervalued data.",
        "Counting only weights when sizing memory: mixed-precision Adam keeps about 16 bytes per parameter, "
        "before activations.",
    ]
)

page.download(out.tables, "scaling")
page.finish()
