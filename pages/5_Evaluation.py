"""Evaluation: pass@k from n samples (unbiased vs plug-in), its bias by simulation, and "is model B better?"."""

import time

import streamlit as st

from pages.frame import InterviewAnswer, Page, cached_view, draw_tabs
from views import Options, View
from views import evaluation as view_of
from views.state import State

page = Page.setup(
    "pass@k and error bars",
    ":material/straighten:",
    "Estimate pass@k with the unbiased formula, not by plugging c/n into 1 − (1 − p)^k (that is too low); and "
    "before you call model B better, check that the difference is larger than its error bar.",
    r"\widehat{\text{pass@}k} = 1 - \frac{\binom{n-c}{k}}{\binom{n}{k}},\quad "
    r"\text{plug-in } 1 - \left(1 - \tfrac{c}{n}\right)^k,\quad "
    r"\widehat{\text{pass}^k} = \frac{\binom{c}{k}}{\binom{n}{k}},\quad "
    r"\mathrm{SE} = \sqrt{\hat p (1 - \hat p) / N}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

figures = cached_view(view_of.figures)


@cached_view
def simulated(state: State, options: Options) -> View:
    """The bias tab's view, keyed by :func:`view_of.simulation_state` (moving another control does not draw the
    problems again), with a progress bar once the simulation has run for more than a second.

    The bar is created in here, not outside: the cache replays what a cached function drew, and may only do so
    for elements the function created itself.
    """
    bar, start = st.empty(), time.perf_counter()

    def report(fraction: float, text: str) -> None:
        if time.perf_counter() - start > 1.0:
            bar.progress(fraction, text=text)

    out = view_of.figures(state, options, progress=report)
    bar.empty()
    return out


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        st.subheader("One problem")
        for name in ("n", "c", "k", "axis"):
            page.control(name)
        if page.control("predict_eval"):
            page.control("guess_pass")
        st.subheader("Bias simulation")
        for name in ("p", "problems", "sim_seed"):
            page.control(name)
        st.subheader("Is model B better?")
        for name in ("accA", "accB", "questions"):
            page.control(name)
        st.caption("Paired analysis (optional): per-question results")
        for name in ("onlyA", "onlyB"):
            page.control(name)

    with page.figure_area():
        tab_curves, tab_bias, tab_compare = tabs = draw_tabs(view_of.SPEC["eval_view"])

    state = page.state()
    open_parts = {name for name, tab in zip(view_of.VIEWS, tabs, strict=True) if tab.open}
    out = figures(
        state, Options(theme=page.theme, presenter=page.presenter, parts=frozenset(open_parts - {view_of.BIAS}))
    )
    page.show_notices(out)
    page.predict_first(out.facts["predict"] == "hidden")  # Predict first: the interview answer quotes pass@5
    n, c = out.facts["n"], out.facts["c"]
    readouts, tables = list(out.readouts), {name: t for name, t in out.tables.items() if name != view_of.EVERY_K}

    if tab_curves.open:
        r = out.facts.get("curves")  # None while Predict first holds the answer back
        with tab_curves:
            for key in ("pass-at-k", "pass-hat-k"):
                if key in out.figures:
                    page.chart(out.figures[key], key, key)
            # the display grid is log-spaced: offer every k, built only when asked for
            if view_of.EVERY_K in out.tables:
                st.caption(f"The curves and the CSV below hold {r.ks.size:,} of the {n:,} values of k. Every k:")
                st.download_button(
                    f"pass@k at every k = 1…{n:,} (CSV, built on click)",
                    lambda make=out.tables[view_of.EVERY_K]: make().to_csv(index=False),
                    file_name=f"evaluation-pass-at-k-n{n}-c{c}-every-k.csv",
                    mime="text/csv",
                    icon=":material/download:",
                    key="csv-every-k",
                )

    if tab_bias.open:
        with tab_bias:
            sim_out = simulated(
                view_of.simulation_state(state),
                Options(theme=page.theme, presenter=page.presenter, parts=frozenset({view_of.BIAS})),
            )
            page.chart(sim_out.figures["bias"], "bias", "pass-at-k-bias")
            st.caption(sim_out.facts["simulation_caption"])
        readouts += sim_out.readouts
        tables |= sim_out.tables

    if tab_compare.open:
        with tab_compare:
            page.chart(out.figures["compare"], "compare", "a-vs-b")
            for kind, text in out.facts["verdicts"]:
                {"success": st.success, "info": st.info}[kind](text)

    page.readouts(readouts)

    where_worst = out.facts["where_worst"]  # where the plug-in's bias is largest, for this n and p
    interior = out.facts["interior_thresholds"]  # p above which the plug-in's worst k lies inside 1 < k < n

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            f"""
**Estimators.** Draw n samples for one problem and count the c correct ones. The blue curve is the chance that
k of those n, picked at random without replacement, contain a correct one: its average over the draws is
exactly pass@k = 1 − (1 − p)^k. The orange curve plugs the estimate c/n into that formula instead; the curve
1 − (1 − x)^k bends downwards (concave), so by Jensen's inequality it comes out too low on average. Both agree at
k = 1, and at k = n the blue one reaches 1 as soon as one sample is correct. The second figure sets pass^k, the
chance that *all* k attempts succeed, against pass@k: the shaded band is where an agent looks capable but is
not dependable.

**Bias simulation.** With a known p, many problems of n samples each are drawn; each gets both estimates. The
blue histogram's mean sits on the truth, the orange one's below it; the gap shrinks as n grows.

The plug-in's bias is not always largest at a middle k. {where_worst}

**Is model B better?** An accuracy on N questions has a standard error √(p(1 − p)/N). Treating the two
scores as independent, the errors add in quadrature; when you know how many questions only A or only B got
right, the paired analysis cancels question difficulty and gives a tighter interval. The interval is only the
first check (lesson, sections 3.9 and 9): run several seeds, since training and sampling noise can be as large as
the gain; check for contamination, test items inside the training data (n-gram overlap, GPT-3 used 13-grams,
Brown et al. 2020), and report a clean subset; and when a model is the judge, swap the answer order and average,
control for length, and prefer a judge from another model family, because judges favour the first position,
longer answers and their own outputs (Zheng et al. 2023).
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="pass@k is the chance that at least one of k attempts solves the problem; from n ≥ k samples with "
            "c correct, the fraction of k-subsets that contain a correct sample estimates it without bias.",
            equation=r"\widehat{\text{pass@}k} = 1 - \binom{n-c}{k} \Big/ \binom{n}{k}",
            number="n = 10, c = 3: pass@5 is 1 − 21/252 = 0.917, while the plug-in 1 − 0.7⁵ gives 0.832.",
            trade_off="The plug-in is biased low because 1 − (1 − x)^k is concave (Jensen). The unbiased form needs n "
            "samples per problem (Codex drew 200 for k up to 100), and a high pass@k says nothing about reliability: "
            "for agents, report pass^k too.",
        ),
    )
    page.mistakes(
        [
            "Plugging c/n into 1 − (1 − p)^k: it underestimates pass@k, most for small n; the worst k is a middle "
            f"one only for moderate p (for n = 10, above p ≈ {interior[10]:.2f}; for n = 100, above "
            f"{interior[100]:.3f}); for rarer successes the bias is worst at k = n.",
            "Drawing only k samples per problem: with n = k the estimate is 0 or 1 per problem and very noisy; draw "
            "n well above k.",
            "Reading pass@k at large k as reliability: an agent that must succeed every time is measured by pass^k, "
            "which falls as k grows.",
            "Announcing a win smaller than its error bar: 71.0% vs 72.5% on 1,000 questions is 1.5 ± 3.9 points, "
            "not significant (the point estimate still leans towards B; a paired test or more questions may settle "
            "it).",
            "Treating scores on the same questions as independent when per-question results exist: the paired "
            "analysis is tighter, and you should report its interval.",
            "Stopping at the error bar: one seed, a possibly contaminated benchmark, or an LLM judge that prefers the "
            "first position and longer answers (Zheng et al. 2023) can each fake a win; use several seeds, a clean "
            "subset, and swapped orders with length controlled.",
        ]
    )
    page.download(tables, "evaluation")
    page.finish()


page.run(_body)
