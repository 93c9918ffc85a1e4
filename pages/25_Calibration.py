"""Calibration and emergence: a reliability diagram and ECE for a toy model before and after preference tuning and
after temperature scaling, a known miscalibration with its closed-form ECE, temperature scaling of a multi-class
model, and emergence as a choice of metric."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, draw_tabs
from views import Options
from views import calibration as view_of

page = Page.setup(
    "Calibration and emergence",
    ":material/adjust:",
    "A model is calibrated when, of the answers it gives with confidence c, a fraction c is right. A reliability "
    "diagram bins the predictions and draws accuracy against confidence; ECE is the bins' weighted gap. Tuning can "
    "move confidence without changing what is right, and when that move is a single logit scale, one temperature "
    "fitted on held-out data moves it back.",
    r"\mathrm{ECE} = \sum_m \frac{|B_m|}{n}\,\bigl|\mathrm{acc}(B_m) - \mathrm{conf}(B_m)\bigr|",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

VIEWS = view_of.VIEWS
CONVENTION = (
    "This diagram bins every option's probability, as the GPT-4 report's Fig. 8 does. Guo et al.'s ECE bins only the "
    "predicted class's confidence; in that form the tuned toy is overconfident everywhere and its curve does not cross "
    "the diagonal. The two halves of the S are one overconfidence, seen from the chosen and the rejected option."
)


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        st.subheader("Reliability diagram")
        for name in ("cal_kappa", "cal_bins", "cal_binning"):
            page.control(name)
        st.subheader("Known miscalibration")
        for name in ("cal_gamma", "cal_n"):
            page.control(name)
        st.subheader("Temperature scaling")
        page.control("cal_t0")
        st.subheader("Emergence")
        for name in ("cal_k", "cal_tau"):
            page.control(name)
        if page.control("predict_cal"):
            page.control("guess_cal_acc")

    with page.figure_area():
        tabs = dict(zip(VIEWS, draw_tabs(view_of.SPEC["cal_view"]), strict=True))

    open_tabs = frozenset(name for name, tab in tabs.items() if tab.open)
    out = view_of.figures(page.state(), Options(theme=page.theme, presenter=page.presenter, parts=open_tabs))
    page.show_notices(out)
    page.predict_first(out.facts["predict"] == "hidden")

    with tabs[view_of.MAIN]:
        if view_of.MAIN in out.figures:
            page.chart(out.figures[view_of.MAIN], "fig-reliability", "reliability-diagram")
            toy = (
                "A toy, not a fitted model: each prediction is one answer option's probability c, right with "
                "probability c; the tuning states sigmoid(κ · logit c) instead and changes nothing that is right."
            )
            if page.hide:  # the dotted curve's formula at κ and 0.9 is the predict-first answer
                st.caption(f"{toy} {page.hidden_caption}: the sentence on the dotted curve states the answer.")
            else:
                st.caption(
                    f"{toy} Temperature scaling divides the tuned logit by a T fitted on a second, held-out sample. "
                    "The dotted curve is the tuned model's exact accuracy, sigmoid(logit c / κ). Under the plot: how "
                    "many predictions fall in each equal-width bin. "
                    f"{CONVENTION}"
                )
    with tabs[view_of.POWER]:
        if view_of.POWER in out.figures:
            page.chart(out.figures[view_of.POWER], "fig-power", "known-miscalibration")
            st.caption(
                "Confidences drawn from Beta(5, 2), each prediction right with probability c^γ (seeded). The dashed "
                "line is the ECE of infinitely many predictions (closed form), the same for every binning."
            )
    with tabs[view_of.TEMP]:
        if view_of.TEMP in out.figures:
            page.chart(out.figures[view_of.TEMP], "fig-temperature", "temperature-scaling")
            st.caption(
                "A simulated 10-class model: true logits z, labels drawn from softmax(z), the model reports T₀ · z. "
                "T is fitted on one seeded set by the mean NLL and applied to another."
            )
    with tabs[view_of.EMERGE]:
        if view_of.EMERGE in out.figures:
            page.chart(out.figures[view_of.EMERGE], "fig-emergence", "emergence-metric")
            st.caption(
                "Schaeffer et al. 2023's model (a power law in the number of parameters N), drawn here against an "
                "illustrative log10-compute axis: p = exp(−loss), tokens right independently, errors substitutions "
                "only."
            )

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            f"""
**Calibration** (seed 002, A13.3). Among the predictions made with confidence c, a fraction c should be right. A
reliability diagram bins the predictions by confidence and draws each bin's accuracy against its mean confidence; ECE
weighs each bin's gap by its share of the predictions (Guo et al. 2017, arXiv 1706.04599, after Naeini et al. 2015).
Equal-width bins cut [0, 1] into M equal intervals; equal-mass bins hold as many predictions each (Nixon et al. 2019).

**What ECE misses.** It is not a proper scoring rule: a model that always states the base rate has an ECE of 0 in
one bin and is useless, so report accuracy (or a proper score such as the Brier score) beside it. It weighs a bin by
how many predictions fall in it, not by what a confident error costs. And it depends on the bins in two ways. On a
finite sample, more bins mean fewer predictions per bin and a larger upward bias (the 500-prediction preset). In the
infinite-sample limit, the bins matter only where the reliability curve crosses the diagonal: a bin across the
crossing averages the two sides and hides both. When accuracy is c^γ, the gap has one sign everywhere, and the
population ECE is |E[c] − E[c^γ]| for every number of bins and for equal-mass bins too (the Known miscalibration
tab). The tuned toy crosses at ½: an odd number of equal-width bins puts one across it (at M = 5, (0.4, 0.6]), and
so does an odd number of equal-mass bins (the middle one holds the median, near ½ here). {CONVENTION}

**What post-training does.** The GPT-4 technical report (OpenAI 2023, arXiv 2303.08774, Fig. 8) shows the
pre-trained model close to the diagonal on a subset of MMLU, with the probability of each answer option as the
confidence, and the post-trained model less calibrated; its caption says post-training (the right panel is labelled as
the PPO model), and the report gives no cause.
The seed (002 A13.4) walks the operators: SFT imitates uniformly confident demonstrations, human preferences reward
confident answers, a 0/1 reward says nothing about stated confidence, and best-of-n selection sharpens the output
distribution. The toy is an illustrative sharpening, not a model of any of these operators: sigmoid(κ · logit c),
above the diagonal below ½, below it above ½, with what is right unchanged.

**Temperature scaling** (Guo et al. 2017, §4.2) divides the logits by one T > 0 fitted on held-out data by the
negative log-likelihood. Every argmax stays, so accuracy does not move; only confidence does. The toy's distortion
is exactly a logit scale, so the fitted T comes out near κ and undoes it everywhere. A real model's distortion need
not be one scale: the seed's point that one T fixes average calibration, not the high-confidence tail, is about
that case. It cannot fix a distortion that differs between inputs or classes, and it keeps every input's argmax, so
accuracy cannot move; with two options it keeps the order of confidences too, and with more classes it can reorder
them across inputs, but it is not designed to improve AUROC or a risk-coverage curve. It holds only on the distribution
T was fitted on (Guo et al. assume training, validation and test sets drawn from the same distribution, §4).

**Emergence as a metric choice** (seed 002, A11.6). Wei et al. 2022 (arXiv 2206.07682) called an ability emergent
when it is not present in smaller models but is present in larger ones, so that it cannot be predicted by
extrapolating the smaller models. Schaeffer, Miranda and Koyejo 2023 (arXiv 2304.15004) argue that many such jumps
come from the metric, and secondarily from test sets too small to resolve small models' accuracy above zero: if the
per-token loss falls as a power law and each of k tokens is right with p = exp(−loss), exact match is p^k, flat for
long and then steep, while a linear metric such as the token edit distance k (1 − p) falls smoothly, as a straight
line on log axes once p is close to 1. They do not claim that emergence cannot happen. In this model p^k is p itself
moved right by log10(k)/α decades of compute: the per-token curve is already rising where exact match still reads 0.
The seed's position: capability mostly scales smoothly, usefulness has thresholds (a product that works 20% of the
time against one that works 80%), and only the smooth metric extrapolates from small runs.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="Calibrated means confidence matches accuracy; measure it with a reliability diagram and ECE "
            "beside accuracy; post-training can sharpen stated probabilities without making more answers right, and "
            "one temperature undoes it when the distortion is a logit scale; sudden jumps in exact match are often "
            "the metric, not the model, though products have real thresholds.",
            equation=r"p = \mathrm{softmax}(z / T),\qquad \mathrm{EM}_k = p_\text{token}^{\,k}",
            number="A bin stated at 0.9 with 72 of 100 right has a gap of 0.18.",
            trade_off="One temperature fixes average calibration, not every bin.",
        ),
    )
    page.mistakes(
        [
            "Reporting ECE without accuracy: a model that always states the base rate has an ECE of 0.",
            "Taking ECE as a property of the model alone: the bins change it where the reliability curve crosses the "
            "diagonal, and the number of predictions per bin biases it upward.",
            "Citing the GPT-4 report for why RLHF makes models overconfident: it shows calibration worse after "
            "post-training (the PPO model) on one MMLU subset, and gives no cause.",
            "Expecting temperature scaling to change accuracy: dividing by T > 0 keeps every argmax.",
            "Reading a sudden rise in exact match as a sudden change in the model: p^k of a smoothly improving p stays "
            "near 0 until p is close to 1, so over a limited range of scales it reads 0 and then rises: later, not "
            "sharper.",
        ]
    )
    page.download(out.tables, "calibration")
    page.finish()


page.run(_body)
