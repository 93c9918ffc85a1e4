"""Optimizers and normalisation: SGD, momentum, Adam and AdamW on 2-D surfaces, bias correction, warm-up, LayerNorm
and RMSNorm, pre-LN and post-LN, muP."""

import streamlit as st

from pages.frame import InterviewAnswer, Page
from views import optimizers as view_of

page = Page.setup(
    "Optimizers and normalisation",
    ":material/route:",
    "SGD steps against the gradient, so its learning rate is capped by the steepest direction; momentum sums past "
    "gradients with weights μ^k; Adam divides each coordinate's step by the root of its second moment, and AdamW "
    "takes the weight decay outside that division. Normalisation fixes each vector's scale (LayerNorm also its mean).",
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

    tabs = page.view_tabs("opt_view", VIEWS)

    out = page.open_view(view_of.figures, tabs)

    with tabs[view_of.PATHS]:
        if view_of.PATHS in out.figures:
            page.chart(out.figures[view_of.PATHS], "fig-paths", "optimizer-paths")
            st.caption(
                "Every optimizer in torch.optim's form (SGD and SGD with momentum without weight decay, Adam, Adam "
                "with weight_decay, AdamW), the same η and start, exact gradients; the weight-decay control applies "
                "to Adam + L2 and AdamW only. The contours are log-spaced. A run whose loss passes 10⁶ or overflows "
                "shows as diverged. In the A1.5.1 preset (the valley, η = 0.1, λ = 0.5, 300 steps) Adam + L2 ends "
                "at (0.678, 0.449), the minimum of f + (λ/2)|θ|², where f = 0.105; AdamW ends at (0.395, 0.147), "
                "with a higher f, because its decay ηλθ is not divided by √v̂: while v̂ still remembers the steep "
                "early gradients, Adam's own step is small beside it (A1.5.1's point). The ranking of the end losses "
                "shows where each decay pulls, not which optimizer is better."
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
                "init the top block's gradient is larger under post-LN, the direction of Xiong et al. 2020. In this "
                "toy, under its GPT-2 init the order reverses: the 0.02-scale embedding keeps pre-LN's residual "
                "stream small (RMS 0.028 before the final norm, against 1.0 under post-LN), and the final norm "
                "scales every block's gradient up by about 1/0.028 ≈ 35; post-LN renormalises after each sublayer. "
                "This is the mechanism Xiong et al. invoke (the final norm divides every gradient by its input's "
                "scale, their Lemma 3), with a residual stream far below unit scale instead of one growing with L; a "
                "uniform rescale across blocks like this is largely undone by Adam. Xiong et al.'s Fig. 3 plots "
                "single weight matrices' gradient norms layer by layer, the page each whole block's; unlike their "
                "figure, post-LN's norms here are flat across depth and pre-LN's fall toward the top."
            )
    with tabs[view_of.MUP]:
        if view_of.MUP in out.figures:
            page.chart(out.figures[view_of.MUP], "fig-mup", "mup")
            st.caption(
                "A ReLU MLP with two hidden layers of width n, Adam, a fixed random teacher's MSE. muP here: the "
                "hidden matrix's η divided by n / 32 and the output multiplied by 32 / n (the mup package's MuAdam "
                "and MuReadout); at width 32 both agree. The sweep: 150 steps; its loss is the mean over the last 20 "
                "steps, then the mean over 3 seeds (each its own teacher, data and init); near each width's best η "
                "the curves are flat, so a one-step difference in the best η is not a result. The coordinate check "
                "records each layer at a step's forward pass, before its update, seed 0. Shipped in "
                "core/data/optimizers.npz (make optim-data, about 54 s on one thread)."
            )

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
**SGD and momentum.** SGD takes θ ← θ − η g. On a bowl whose Hessian has eigenvalues λ_max and λ_min it is stable
only for η < 2/λ_max, and at that η the flat direction shrinks by only about 1 − 2λ_min/λ_max per step: the
condition number κ = λ_max/λ_min sets how slowly it crawls. Momentum (Polyak's heavy ball, torch's v ← μv + g,
θ ← θ − ηv; the β1 control sets μ) sums past gradients with weights μ^k, about 1/(1 − μ) times a steady gradient,
so the oscillation across the valley cancels and the drift along it adds up; on a quadratic it is stable for
η < 2(1 + μ)/λ_max (0.38 on the bowl at κ = 10, μ = 0.9).

**Adam** (Kingma and Ba 2015) keeps running means of g and g², m and v, and steps η m̂/(√v̂ + ε) per coordinate:
while a coordinate's gradient is steady its step is about η whatever its curvature. That frees η from the steep
direction only when the Hessian's eigen-directions are the coordinate axes, as on the bowl: the rescaling is per
coordinate, so a rotated ill-conditioned quadratic still caps η. On the axis-aligned bowl Adam + L2 follows Adam's
path exactly (ε aside): L2 multiplies each coordinate's gradient by the constant 1 + λ/a_i, and m̂/√v̂ is unchanged.

**Bias correction** divides m by 1 − β1^t and v by 1 − β2^t: both start at zero. Without it the first step is
(1 − β1)/√(1 − β2) η: m is biased toward zero by 1 − β1^t, but √v by √(1 − β2^t), which at t = 1 is the smaller
of the two when β2 > 1 − (1 − β1)², 0.99 at β1 = 0.9. With β1 = 0.9, β2 = 0.999 the first step is 3.16 η (Kingma and
Ba 2015, §6.4 and Fig. 4: with β2 close to 1 and no correction, training was unstable, especially in the first few
epochs); with the β2 = 0.95 of LLaMA (Touvron et al. 2023) it is 0.45 η, and reaches η only at step 9.
The interview bank's answer (002 A1.5.2) says the uncorrected steps are tiny for the first few hundred iterations.
That does not hold: even if m alone went uncorrected, the step would be (1 − β1^t) η, 0.1 η at t = 1 but 0.65 η by
t = 10 and 0.99 η by t = 44 (small for tens of steps, not hundreds). At β2 = 0.999 the uncorrected step stays above
η for thousands of steps (3.24 η at t = 100, 1.26 η at t = 1,000, above 1.1 η until t = 1,750); at β2 = 0.95 it is below
η for the first 8 steps only.

**AdamW** (Loshchilov and Hutter 2019) takes the decay out of the adaptive step: θ ← θ(1 − ηλ), then Adam. With
L2 in Adam the decay λθ is added to g and divided by √v̂ like the rest, so parameters with large gradients are
decayed less (by λθ/√v̂). torch.optim.AdamW multiplies λ by η; the paper's Algorithm 2 multiplies it only by the
schedule multiplier η_t, not by the step size α.

**Warm-up.** At step t, v̂ averages about n_eff gradients: 1 at the first step, about 100 at the hundredth with
β2 = 0.999, so a v̂ from few gradients is noisy. Liu et al. 2020 attribute warm-up's need to the large early variance
of the adaptive learning rate 1/√v̂, which they argue leads to bad optima (their Adam-2k experiment, which updates
only v̂ for the first 2,000 steps, supports it), and RAdam rectifies it. What the data here rule out is the stronger
claim of the seed's answer to A1.6.1, that the effective step can be enormous: m̂ comes from the same gradients and
shares v̂'s noise, so the bias-corrected step |m̂/√v̂| is at most about η per coordinate over the first steps
(exactly η at t = 1; by Cauchy–Schwarz never above 1.04 η at t = 10 with β1 = 0.9, β2 = 0.999), and smaller where
the gradients are noisy. Ma and Yarats 2021 dispute Liu et al.'s analysis and explain warm-up by the update's size:
Adam's first step moves every coordinate by exactly η, whatever its gradient's size, and a steady gradient keeps it
near η.

**LayerNorm and RMSNorm.** LayerNorm (Ba et al. 2016) subtracts each vector's mean and divides by its standard
deviation; RMSNorm (Zhang and Sennrich 2019) only divides by the root mean square, with one reduction less: the
mean is not subtracted, it is divided by the RMS like every coordinate. Both then multiply by a learned gain
(LayerNorm also adds a bias).

**Pre-LN and post-LN.** Post-LN normalises after the residual add, pre-LN inside the branch. Xiong et al. 2020
(Theorem 1, Xavier init, L layers of width d) bound the last layer's gradient under post-LN by O(d √ln d),
independent of depth, and under pre-LN by O(d √(ln d / L)), and explain post-LN's need for warm-up by it.

**muP** (Yang et al. 2022, Tensor Programs V) scales the initialisation, the output and each layer's learning rate
with width, so that the updates change activations by a width-independent amount: the best learning rate found at
a small width transfers to a large one.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="SGD steps against the gradient, and momentum against a running sum of past gradients; Adam "
            "divides each coordinate's step by the root of its second moment; both moments start biased toward zero, "
            "which bias correction removes; AdamW applies the decay outside the adaptive step; warm-up keeps Adam's "
            "early steps, each at most about η per coordinate, small while its moments rest on few gradients; "
            "LayerNorm removes each vector's mean and scale, RMSNorm only its scale.",
            equation=r"\hat m_t = \frac{m_t}{1-\beta_1^t},\quad \hat v_t = \frac{v_t}{1-\beta_2^t}",
            number="Without correction the first step is 3.16 η at β1 = 0.9, β2 = 0.999 (0.45 η at β2 = 0.95).",
            trade_off="Adam holds two extra values per parameter; SGD with momentum one.",
        ),
    )
    page.mistakes(
        [
            "Saying the uncorrected first step is always too small: at β1 = 0.9, β2 = 0.999 it is 3.16 η (at "
            "β2 = 0.95, 0.45 η).",
            "Saying a small early v̂ makes Adam's step enormous: m̂ shares v̂'s noise, so the step is at most about η "
            "per coordinate over the first steps (exactly η at t = 1, ≤ 1.04 η at t = 10), and smaller where the "
            "gradients are noisy.",
            "Treating L2 in Adam as weight decay: the decay term is divided by √v̂ with the gradient.",
            "Reading post-LN's larger top-layer gradient as a law of any initialisation: under a small GPT-2 style "
            "init the order reverses here (the final norm's rescaling, Xiong et al.'s own mechanism, run with a tiny "
            "residual stream).",
        ]
    )
    page.download(out.tables, "optimizers")
    page.finish()


page.run(_body)
