"""Number formats and mixed precision: fp32, bf16, fp16 and fp8 on a log line, loss scaling, softmax, running sums."""

import streamlit as st

from pages.frame import InterviewAnswer, Page
from views import number_formats as view_of

page = Page.setup(
    "Number formats and mixed precision",
    ":material/decimal_increase:",
    "bf16 keeps the same exponent range as fp32 and gives up mantissa bits; fp16 keeps more precision but not the "
    "range, so its small gradients underflow and it needs a loss scale. fp8 needs a scale per tensor or per tile, "
    "and in the usual recipe sums and master weights stay in fp32.",
    # one formula for both ranges: below 2^e_min (the subnormals) the spacing stays 2^(e_min − p)
    r"x = (-1)^s\,\Big(1 + \frac{m}{2^p}\Big)\,2^{e - \text{bias}}, \qquad "
    r"\text{ulp}(x) = 2^{\max(\lfloor \log_2 |x| \rfloor,\ e_{\min}) - p}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

VIEWS = view_of.VIEWS


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        st.subheader("The number line")
        page.control("fmt_x")
        st.subheader("Loss scaling")
        for name in ("fmt_scale_log2", "fmt_interval", "fmt_seed"):
            page.control(name)
        st.subheader("Stability")
        for name in ("fmt_logit_top", "fmt_increment"):
            page.control(name)
        if page.control("predict_fmt"):
            page.control("guess_fmt_err")

    tabs = page.view_tabs("fmt_view", VIEWS)

    out = page.open_view(view_of.figures, tabs)

    with tabs[view_of.LINE]:
        if view_of.LINE in out.figures:
            page.chart(out.figures[view_of.LINE], "fig-number-line", "number-line")
            st.caption(
                "Each line is a format's spacing between neighbouring values; a cross marks its smallest subnormal "
                "and its largest finite value where the axis reaches them. Casts round to nearest, ties to even, "
                "subnormals kept, checked against torch's own casts on the CPU. The grey bands: where this "
                "project's tiny GPT (820,352 parameters) keeps its numbers after 60 more fp32 AdamW steps from its "
                "shipped checkpoint, |x| from the 1st to the 99th percentile, a diamond at the median: the inputs of "
                "its linear layers (not the residual stream), every parameter's gradient, and Adam's second moment v "
                "(torch's exp_avg_sq). A toy, not a large model."
            )
    with tabs[view_of.LOSS]:
        if view_of.LOSS in out.figures:
            page.chart(out.figures[view_of.LOSS], "fig-loss-scaling", "loss-scaling")
            st.caption(
                "A seeded toy, not data: gradient magnitudes log-normal around 1e-6, spread over decades. Below, "
                "torch's GradScaler rule stepped over seeded per-step largest gradients with rare spikes: an inf "
                "skips the step and halves S, a run of good steps doubles it."
            )
    with tabs[view_of.SOFTMAX]:
        if view_of.SOFTMAX in out.figures:
            page.chart(out.figures[view_of.SOFTMAX], "fig-softmax", "softmax")
            st.caption("Logits x, x − 1, x − 2 and x − 3 for the largest logit x; each exp and the sum stored in fp16.")
    with tabs[view_of.SUM]:
        if view_of.SUM in out.figures:
            page.chart(out.figures[view_of.SUM], "fig-running-sum", "running-sum")
            st.caption("Each addition rounded to the format (round to nearest, ties to even), from 0.")

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
**The formats.** fp32 has 8 exponent and 23 mantissa bits, bf16 8 and 7 (the top half of fp32), fp16 5 and 10
(IEEE 754 binary16); fp8 E4M3 has 4 and 3, E5M2 5 and 2 (Micikevicius et al. 2022, arXiv 2209.05433, specified in
the OCP 8-bit floating point specification, OFP8). The exponent bits set the range, the mantissa bits the spacing:
a format with p mantissa bits has 2^p equally spaced values between 2^e and 2^(e+1). Rounding to nearest moves x
by at most half a unit in the last place, so the relative error of a normal value is at most 2^−(p+1) (the unit
roundoff; torch.finfo's eps is 2^−p, the gap above 1): 2^−8 for bf16, 2^−11 for fp16. Below the smallest normal
value (2^−14 in fp16) the subnormals keep one fixed spacing (2^−24 in fp16), so the relative error grows until a
value rounds to zero.

**Overflow.** A value that rounds above fp16's largest, 65,504, becomes inf (IEEE 754): every value from 65,520 up.
E5M2 has an infinity too: its largest is 57,344, and torch's cast, IEEE-style (the OFP8 non-saturating mode), gives
inf from 61,440, what rounds above it. E4M3 (torch.float8_e4m3fn) has no infinity and its largest value is 448;
torch 2.13's CPU cast saturates every value above it to 448, ±inf included (the tests pin it for the torch this
project runs), while older torch casts and the OFP8 non-saturating conversion give NaN instead. NVIDIA's conversions
(cuda_fp8.h, __NV_SATFINITE) offer a saturating mode for both fp8 formats, which gives the largest finite value (the
OFP8 specification describes saturating and non-saturating conversions, as secondary sources report). FP8 training
code often clamps to the format's range before the cast (torchao's float8 does, in to_fp8_saturated, whose docstring
says PyTorch's default casts to the two fp8 types did not saturate).

**Loss scaling** (Micikevicius et al. 2018, arXiv 1710.03740). fp16 needs it because small gradients underflow,
not because they overflow: multiply the loss by S, and every gradient of the backward is S times larger; divide by
S in fp32 before the optimizer step. torch.amp.GradScaler starts at S = 2^16, halves S and skips the step when a
gradient is inf or NaN, and doubles S after 2,000 steps in a row without one. bf16 has fp32's exponent range, so
its gradients need no scale (seed 002, A5.3).

**Stability** (seed 002, A1.10). Without the max, a softmax in fp16 breaks in two steps. First the sum: once Σ
exp(x) rounds above 65,504 (from 65,520), it is inf and every share becomes 0, though no single exp has overflowed;
for this row, x, x − 1, x − 2, x − 3, that happens at a top logit above about 10.65. Then a single exp: above
ln 65,520 = 11.09 the top logit's exp is inf on its own, and its share is NaN (∞/∞). Softmax is unchanged by a
shift, so subtracting the max keeps every exp at most 1; log-sum-exp, m + log Σ exp(x − m), does the same for the
log. A running sum in bf16 stops growing once the increment is below half an ulp of the sum (at exactly half, when
the tie rounds back to an even sum): adding 1 stops at 256. A weight's update smaller than half the spacing on the
side it moves is lost the same way. In the standard recipe, reductions and the master weights stay in fp32
(Micikevicius et al. 2018), and so do Adam's moments (the 16-bytes-per-parameter count of Rajbhandari et al. 2020).
DeepSeek-V3 keeps the moments in bf16 (arXiv 2412.19437, section 3.3.3), and 8-bit optimizers exist (Dettmers et
al. 2022, arXiv 2110.02861).

**Where a model's numbers sit** (the grey bands: this project's tiny GPT, measured by `make fmt-data`). Almost all
of its activations lie inside fp16's normal range; a share of its weight gradients lies below fp16's smallest
normal, 2^−14, the underflow that loss scaling lifts (Micikevicius et al. 2018, arXiv 1710.03740). Adam's second
moment v is an exponential moving average of g², so it sits near the square of the gradients' magnitudes: a gradient
of 10^−4 gives a v near 10^−8, below fp16's smallest subnormal, 2^−24 ≈ 6.0 × 10^−8. A loss scale does not reach
it, because the optimizer steps on the unscaled gradients (GradScaler unscales them first). bf16 would hold v, with
fp32's exponent range, but to 8 significant bits. That fits the usual recipe, which keeps the optimizer state in
fp32 beside the master weights: ZeRO's count of mixed-precision Adam has an fp32 copy of the weights, the momentum
and the variance, 12 bytes per parameter on top of the fp16 weights and gradients (Rajbhandari et al. 2020, ZeRO,
arXiv 1910.02054). It is a convention, not a law: DeepSeek-V3's bf16 moments came, it reports, without
observable performance degradation (section 3.3.3). The tiny GPT has 0.82M parameters and trained on a 0.18 MB
corpus: where a large model's tensors sit is not measured here.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="bf16 has the same exponent range as fp32, so small gradients do not underflow (no loss scale) "
            "and activations and logits do not overflow at 65,504; in fp16 small gradients underflow, and a loss "
            "scale lifts them into range.",
            equation=r"\text{ulp}(x) = 2^{\lfloor \log_2 |x| \rfloor - p}\ \ (\text{normal } x)",
            number="fp16: largest 65,504, smallest normal 2⁻¹⁴; bf16: relative error at most 2⁻⁸ in the normal "
            "range (the unit roundoff; torch.finfo's eps is 2⁻⁷).",
            trade_off="bf16 trades precision for range; fp8 needs a scale per tensor or per tile.",
        ),
    )
    page.mistakes(
        [
            "Calling bf16 more precise than fp16: it has 7 mantissa bits against 10; it wins on range (seed 002, "
            "A5.3).",
            "Saying fp16 needs loss scaling because gradients overflow: they underflow; the scaler backs off on an "
            "inf or NaN, usually because the scale pushed a large gradient past 65,504, sometimes because the "
            "forward pass itself overflowed (seed 002's A5.3.1 answer says bf16 keeps gradients from overflowing; "
            "what fp16 loses is the small end, below 2⁻¹⁴).",
            "Assuming every fp8 cast overflows to inf: E4M3 has no infinity (torch 2.13's CPU cast saturates at "
            "448), and saturating conversions exist for E5M2 too.",
            "Keeping sums or master weights in bf16: an update below half the spacing on the side it moves is "
            "rounded off: the weight does not change.",
        ]
    )
    page.download(out.tables, "number_formats")
    page.finish()


page.run(_body)
