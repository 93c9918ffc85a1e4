"""Optimizers and normalisation: SGD, momentum, Adam and AdamW on 2-D surfaces, bias correction, warm-up, LayerNorm
and RMSNorm, pre-LN and post-LN, muP."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, draw_tabs
from views import Options
from views import optimizers as view_of

page = Page.setup(
    "Optimizers and normalisation",
    ":material/route:",
    "SGD steps against the gradient, so its learning rate is capped by the steepest direction; momentum averages the "
    "gradients; Adam divides each coordinate's step by the root of its second moment, and AdamW takes the weight "
    "decay outside that division. Normalisation fixes each vector's scale (LayerNorm also its mean).",
    r"\theta_t = \theta_{t-1} - \eta\,\frac{\hat m_t}{\sqrt{\hat v_t}+\epsilon} - \eta\lambda\,\theta_{t-1}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

VIEWS = view_of.VIEWS


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        st.subheader("The paths")
        for name in ("opt_surface", "opt_kappa", "opt_lr", "opt_steps", "opt_beta1", "opt_beta2", "opt_wd"):
            page.control(name)
        st.subheader("Normalisation")
        for name in ("opt_shift", "opt_depth", "opt_init"):
            page.control(name)
        if page.control("predict_opt"):
            page.control("guess_opt_lr")

    with page.figure_area():
        tabs = dict(zip(VIEWS, draw_tabs(view_of.SPEC["opt_view"]), strict=True))

    open_tabs = frozenset(name for name, tab in tabs.items() if tab.open)
    out = view_of.figures(page.state(), Options(theme=page.theme, presenter=page.presenter, parts=open_tabs))
    page.show_notices(out)
    page.predict_first(out.facts["predict"] == "hidden")

    with tabs[view_of.PATHS]:
        if view_of.PATHS in out.figures:
            page.chart(out.figures[view_of.PATHS], "fig-paths", "optimizer-paths")
            st.caption(
                "Every optimizer in torch.optim's form (SGD, SGD with momentum, Adam, Adam with weight_decay, AdamW), "
                "the same η and start, exact gradients. The contours are log-spaced. A run that leaves the plot or "
                "overflows shows as diverged."
            )
    with tabs[view_of.BIAS]:
        if view_of.BIAS in out.figures:
            page.chart(out.figures[view_of.BIAS], "fig-bias", "adam-bias-correction")
            st.caption(
                "A constant gradient g from m = v = 0: m_t = (1 − β1^t) g and v_t = (1 − β2^t) g², so the step "
                "without correction is η (1 − β1^t) / √(1 − β2^t) and with it exactly η (ε left out)."
            )
    with tabs[view_of.WARMUP]:
        if view_of.WARMUP in out.figures:
            page.chart(out.figures[view_of.WARMUP], "fig-warmup", "adam-second-moment")
            st.caption(
                "Simulated runs of Adam's bias-corrected v̂ on independent zero-mean Gaussian gradients of unit "
                "variance (seeded), against the closed form √(2 / n_eff), where n_eff is the number of gradients "
                "the weights of v̂ amount to."
            )
    with tabs[view_of.NORMS]:
        if view_of.NORMS in out.figures:
            page.chart(out.figures[view_of.NORMS], "fig-norms", "layernorm-rmsnorm")
            st.caption("One seeded vector, no gain and no bias: LayerNorm with eps 1e-5, RMSNorm with float64's "
                       "machine epsilon (torch.nn.RMSNorm's default eps=None).")  # fmt: skip
    with tabs[view_of.DEPTH]:
        if view_of.DEPTH in out.figures:
            page.chart(out.figures[view_of.DEPTH], "fig-depth", "pre-post-ln")
            st.caption(
                "The tiny GPT's blocks (RMSNorm, width 64, 4 heads) at initialisation, one batch of seeded random "
                "bytes, the next-byte loss; shipped in core/data/optimizers.npz (make optim-data). Under Xavier "
                "init the top block's gradient is larger under post-LN, the direction of Xiong et al. 2020; under "
                "the tiny GPT's own GPT-2 init the order reverses, because the init's scale, not where the norm "
                "sits, then sets the size. Unlike Xiong et al.'s Fig. 3, post-LN's norms here are flat across depth "
                "and pre-LN's fall toward the top."
            )
    with tabs[view_of.MUP]:
        if view_of.MUP in out.figures:
            page.chart(out.figures[view_of.MUP], "fig-mup", "mup")
            st.caption(
                "A ReLU MLP with two hidden layers of width n, Adam, a fixed random teacher's MSE, seeded. muP here: "
                "the hidden matrix's η divided by n / 32 and the output multiplied by 32 / n (the mup package's "
                "MuAdam and MuReadout); at width 32 both agree. Shipped in core/data/optimizers.npz (make "
                "optim-data, about 11 s on one thread)."
            )

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
**SGD and momentum.** SGD takes θ ← θ − η g. On a bowl whose Hessian has eigenvalues λ_max and λ_min it is stable
only for η < 2/λ_max, and at that η the flat direction shrinks by only about 1 − 2λ_min/λ_max per step: the
condition number κ = λ_max/λ_min sets how slowly it crawls. Momentum (Polyak's heavy ball, torch's v ← μv + g,
θ ← θ − ηv) averages the gradients, so the oscillation across the valley cancels and the drift along it adds up.

**Adam** (Kingma and Ba 2015) keeps running means of g and g², m and v, and steps η m̂/(√v̂ + ε) per coordinate:
while a coordinate's gradient is steady its step is about η whatever its curvature, so the steep direction no
longer caps η. **Bias
correction** divides m by 1 − β1^t and v by 1 − β2^t: both start at zero. Without it the first step is not small:
m is biased toward zero by 1 − β1^t, but √v by √(1 − β2^t), which is smaller, so with β2 = 0.999 the first step
is 3.16 η (Kingma and Ba §3 warn of large initial steps). The interview bank's answer (002 A1.5.2) names only m's
bias; the step is the ratio.

**AdamW** (Loshchilov and Hutter 2019) takes the decay out of the adaptive step: θ ← θ(1 − ηλ), then Adam. With
L2 in Adam the decay λθ is added to g and divided by √v̂ like the rest, so parameters with large gradients are
barely decayed. torch.optim.AdamW multiplies λ by η; the paper's λ is not multiplied by the step size.

**Warm-up.** At step t, v̂ averages about n_eff gradients: 1 at the first step, about 100 at the hundredth with
β2 = 0.999. A v̂ that happens to be small makes a large step; a small η during the first steps keeps those steps
small while n_eff grows (the argument of Liu et al. 2020, RAdam).

**LayerNorm and RMSNorm.** LayerNorm (Ba et al. 2016) subtracts each vector's mean and divides by its standard
deviation; RMSNorm (Zhang and Sennrich 2019) only divides by the root mean square, keeping the mean, with one
reduction less. Both then multiply by a learned gain (LayerNorm also adds a bias).

**Pre-LN and post-LN.** Post-LN normalises after the residual add, pre-LN inside the branch. Xiong et al. 2020
(Theorem 1, Xavier init, L layers of width d) bound the last layer's gradient under post-LN by O(d √ln d),
independent of depth, and under pre-LN by O(d √(ln d / L)), and explain post-LN's need for warm-up by it.

**muP** (Yang et al. 2022, Tensor Programs V) scales the initialisation, the output and each layer's learning rate
with width, so that the updates change activations by a width-independent amount: the best learning rate found at
a small width transfers to a large one.
"""
        )

    page.quick_check(
        "Adam with β1 = 0.9, β2 = 0.999 and no bias correction sees a constant gradient. How large is its first step, "
        "in units of η?",
        "m_1 = 0.1 g and √v_1 = √0.001 |g|, so the step is 0.1 / 0.0316 = **3.16 η**: larger than η, not smaller "
        "(the Bias correction tab).",
    )
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="Adam divides each coordinate's step by the root of its second moment; both moments start "
            "biased toward zero, which bias correction removes; AdamW applies the decay outside the adaptive step.",
            equation=r"\hat m_t = \frac{m_t}{1-\beta_1^t},\quad \hat v_t = \frac{v_t}{1-\beta_2^t}",
            number="Without correction the first step is 3.16 η at β2 = 0.999.",
            trade_off="Adam holds two extra values per parameter; SGD with momentum one.",
        ),
    )
    page.mistakes(
        [
            "Saying the uncorrected first step is too small: m is biased toward zero, but √v more so; at β2 = 0.999 "
            "the step is 3.16 η.",
            "Treating L2 in Adam as weight decay: the decay term is divided by √v̂ with the gradient.",
            "Reading post-LN's larger top-layer gradient as a law of any initialisation: under a small GPT-2 style "
            "init the order reverses here.",
        ]
    )
    page.download(out.tables, "optimizers")
    page.finish()


page.run(_body)
