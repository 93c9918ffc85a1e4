"""LoRA: the best rank-r approximation of an update, what adapters cost at model scale, and the init traps."""

import hashlib
import time
from contextlib import nullcontext

import numpy as np
import streamlit as st

from pages.frame import InterviewAnswer, Page, cached_figures, cached_view, draw_tabs
from views import Options, View, inputs
from views import lora as view_of
from views.state import State

page = Page.setup(
    "LoRA: a low-rank correction",
    ":material/extension:",
    "LoRA bets that the update a fine-tune needs has low rank: r(d + k) trainable numbers instead of dk. When the "
    "singular values of ΔW fall fast, a small r captures almost all of it, and the memory saved is the gradients "
    "and Adam states of the frozen base.",
    r"h = W_0 x + s\,BAx,\quad s = \frac{\alpha}{r},\quad B \in \mathbb{R}^{d\times r},\ A \in \mathbb{R}^{r\times k};"
    r"\quad \frac{\|\Delta W - \Delta W_r\|_F}{\|\Delta W\|_F} = \sqrt{\frac{\sum_{i>r}\sigma_i^2}{\sum_i \sigma_i^2}}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)


@cached_figures  # parsed once per file (keyed by its digest), not on every rerun
def read_upload(name: str, digest: str, _data: bytes) -> tuple[np.ndarray | None, str | None]:
    """(matrix, None) for a good upload, (None, message) for a bad one; never raises."""
    try:
        return inputs.load_matrix(_data, name), None
    except ValueError as err:
        return None, view_of.upload_problem(name, err)


@cached_figures  # cache_resource: the SVD of a 4096 x 4096 upload is not copied on every rerun (read-only)
def analyse_upload(name: str, digest: str, _matrix: np.ndarray) -> view_of.Analysis:
    """One SVD per uploaded file (the view caches the generated matrices' own)."""
    return view_of.analyse(_matrix)


@cached_view
def figures(
    state: State,
    options: Options,
    upload: tuple[str, ...],
    _matrix: np.ndarray | None = None,
    _analysis: view_of.Analysis | None = None,
) -> View:
    """The open tab's view, cached per state (only the fields that tab reads), options and upload (name, digest).
    Training shows a progress bar once it has run for more than a second (the bar is created in here, so that the
    cache may replay it)."""
    bar, start = st.empty(), time.perf_counter()

    def report(fraction: float) -> None:
        if time.perf_counter() - start > 1.0:
            bar.progress(fraction, text=f"Training three LoRA layers… {fraction:.0%}")

    out = view_of.figures(state, options, _matrix, upload[0] if upload else None, analysis=_analysis, progress=report)
    bar.empty()
    return out


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        page.control("rank")
        if page.control("predict_lora"):
            page.control("guess_rank")
        st.subheader("The target update ΔW")
        page.control("rows")
        page.control("cols")
        st.caption(view_of.profile_caption(page.control("profile")))
        for name in ("seed", "smooth", "logr"):
            page.control(name)
        upload = st.file_uploader(  # no type filter: a wrong file gets the page's message, not Streamlit's exception
            "…or upload ΔW (.npy or .csv, up to 4096 × 4096)",
            key="upload",
            help="A 2-D array of finite numbers. Uploads are not part of the link.",
        )
        st.subheader("At model scale")
        for name in ("model", "mats", "alpha", "rs", "base", "gpu_gb"):
            page.control(name)

    delta_upload, upload_key = None, ()
    if upload is not None:
        data = upload.getvalue()
        digest = hashlib.sha256(data).hexdigest()
        delta_upload, problem = read_upload(upload.name, digest, data)
        if problem:
            page.notice(problem)
        else:
            upload_key = (upload.name, digest)
            page.notice(
                f"Using the uploaded matrix `{upload.name}` ({delta_upload.shape[0]} × {delta_upload.shape[1]}); d, k, "
                "profile and seed are ignored. Uploads are not part of the link: a shared link shows the generated "
                "matrix.",
                "info",
            )
            st.sidebar.caption(":material/link_off: The link below does not carry the upload.")

    with page.figure_area():
        tab_rank, tab_cost, tab_init = draw_tabs(view_of.SPEC["lora_view"])

    is_open = dict(zip(view_of.PARTS.values(), (tab_rank.open, tab_cost.open, tab_init.open), strict=True))
    options = Options(
        theme=page.theme, presenter=page.presenter, parts=frozenset(part for part, yes in is_open.items() if yes)
    )
    if not tab_rank.open:  # only the rank tab shows the upload
        delta_upload, upload_key = None, ()
    analysis = analyse_upload(*upload_key, delta_upload) if upload_key else None
    spinner = st.spinner("Decomposing ΔW (one SVD per matrix; moving r later reuses it)…") if tab_rank.open else None
    with spinner or nullcontext(), tab_init if tab_init.open else nullcontext():  # the progress bar goes in its tab
        out = figures(view_of.relevant(page.state(), options), options, upload_key, delta_upload, analysis)

    page.show_notices(out)  # before the charts: the view's readouts go into their text alternatives
    page.predict_first(out.facts.get("predict") == "hidden")  # Predict first: no answer in any text
    if "predict" in out.figures:
        with tab_rank:
            page.chart(out.figures["predict"], "lora-predict", "lora-predict")
    if "heatmaps" in out.figures:
        with tab_rank:
            page.chart(out.figures["heatmaps"], "heatmaps", "lora-rank-r")
            st.caption(
                "Drag the slider under the heatmaps: BA, the residual and the readout line change in the browser, "
                "without a round trip. "
                + (
                    f"The {out.facts['d']} × {out.facts['k']} matrices are shown as block averages."
                    if out.facts["averaged"]
                    else "Every entry is shown."
                )
            )
            page.chart(out.figures["curves"], "curves", "lora-rank-curves")
    if "memory" in out.figures:
        with tab_cost:
            page.chart(out.figures["memory"], "memory", "lora-memory")
            st.caption(out.facts["memory_caption"])
    if "training" in out.figures:
        with tab_init:
            page.chart(out.figures["training"], "training", "lora-initialisation")
            st.caption(out.facts["training_caption"])
    page.readouts(out.readouts)

    qlora = out.facts["qlora"]  # NF4 and the QLoRA preset, for the explanation's numbers

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            f"""
**Rank-r approximation.** ΔW is a d × k update built from a seed and a chosen singular-value profile (or your
upload). One SVD gives its best rank-r approximation for every r at once (Eckart-Young): keep the r largest
singular values. The heatmaps share one colour scale, so the residual fades as r grows; the curves show the
singular values, the relative error (the root of the discarded squared singular values over the total), the
energy captured, and the cost r(d + k) against dk. With fast decay a tiny r explains most of ΔW; with a flat
spectrum every direction matters and low rank buys little.

**What LoRA costs.** Every adapted d_out × d_in matrix gets r(d_out + d_in) trainable numbers. Training them with
Adam costs about 16 bytes each; the frozen base costs 2 bytes per parameter in bf16, or
{qlora["nf4_bits"]:.3f} bits ({qlora["nf4_bytes"]:.3f} bytes) in QLoRA's NF4 with double
quantisation: 4 bits per weight, an fp8 absmax per block of 64 weights (0.125 bits)
and an fp32 constant per 256 blocks (0.002 bits)
(Dettmers et al. 2023). Full fine-tuning needs 16 bytes per parameter. Activation memory changes much less: only
frozen linears without an adapter skip storing their inputs (they need no weight gradient), and a frozen norm gain
skips storing the normalised activations its gradient would need. These estimates leave activations out: the QLoRA
preset's {qlora["total_gb"]:.1f} GB ({qlora["total_gib"]:.1f} GiB) leaves at most about {qlora["spare_gib"]:.1f}
GiB ({qlora["spare_gb"]:.1f} GB) of a 48 GiB (“48 GB”) GPU for them, and under 2 GiB on an A40 or L40S, which ship
with ECC on (it reserves about 1/16 of the memory: they report 46,068 MiB, about 45 GiB). That is the preset's count:
65e9 parameters, all in NF4. LLaMA-65B has 65.3e9, and QLoRA keeps the input embedding and the output head in bf16
(the code of Dettmers et al. 2023), which takes about 0.9 GiB more: about 4.0 GiB left, 1.0 GiB with ECC on, with
each adapter parameter counted as this page counts it, with an fp32 master copy; the same code keeps the adapters in
bf16 without one, which leaves about 3 GiB more. So it
fits only with gradient checkpointing (which the QLoRA paper uses, with paged optimizers for the memory spikes). Hu et
al. (2021) report, for GPT-3 175B with r = 4 on W_q and W_v, training memory down from 1.2 TB to 350 GB, a 35 MB
checkpoint instead of 350 GB, and 25% faster training than full fine-tuning; those are their measurements, beside the
16-bytes-per-parameter estimate used here.

**Initialisation traps.** A small LoRA layer is fitted to a low-rank target from the same frozen W₀. With B = 0
and A random, ΔW = 0 at the start and B gets a gradient at once; with A = B = 0 both gradients stay zero
forever; with both random the model starts changed (unless, as in PiSSA and OLoRA, the product sBA of the
non-zero start is subtracted from W₀). The gradients theorem says why: with u = Ax and
g = ∂L/∂h, ∂L/∂B = s g uᵀ and ∂L/∂A = s Bᵀ g xᵀ, so B = 0 silences A's gradient for one step only, while A = B = 0
silences both for good. After training, merging W₀ + sBA gives the adapter path's outputs up to rounding.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="LoRA freezes W₀ and trains a rank-r correction BA, so only r(d + k) numbers per matrix need "
            "gradients and Adam states; the checkpoint is small and one base can serve many adapters.",
            equation=r"h = W_0 x + \tfrac{\alpha}{r} B A x,\qquad r(d+k) \ll dk",
            number="Llama-2-7B, r = 8 on q, k, v, o: 8,388,608 trainable parameters (0.12%), 134 MB of training "
            "states against 112 GB for full fine-tuning; the frozen bf16 base is 14 GB.",
            trade_off="It saves optimizer memory, activation memory only modestly: frozen linears without an adapter "
            "skip storing their inputs, which with q, k, v, o adapted spares mainly the MLP's, about a quarter to a "
            "third of a Llama-2-7B block's saved activations (bf16, a fused attention kernel; the share depends on "
            "the RMSNorm implementation), under a fifth with every linear adapted. LoRA dropout stores a dropped copy "
            "of each adapted input: with q, k, v, o adapted that roughly cancels the saving, and with every linear "
            "adapted (QLoRA's recipe) LoRA stores more than full fine-tuning. "
            "Each matrix can change only by rank r: for a large domain shift full fine-tuning has more capacity (on "
            "code and math it learns updates of far higher rank), though LoRA forgets less of the base (Biderman et "
            "al. 2024). Hu et al. (2021) report for GPT-3 175B: 1.2 TB of training memory down to 350 GB, a 35 MB "
            "checkpoint, and 25% faster training.",
        ),
    )
    page.mistakes(
        [
            "Initialising both factors to zero: both gradients vanish and nothing ever trains.",
            "Initialising both at random and leaving W₀ as it is: ΔW ≠ 0 at step 0, so fine-tuning starts from a "
            "damaged model. Two non-zero factors are fine when their product is subtracted from W₀ first: PiSSA "
            "starts from W₀'s top singular directions (Meng et al. 2024), OLoRA from a QR factorisation "
            "(Büyükakyüz 2024).",
            "Quoting QLoRA's base as 4 bits per parameter: NF4 with double quantisation costs about 4.127 bits "
            "(Dettmers et al. 2023), and the 65B-on-48-GB result also needs gradient checkpointing for activations.",
            "Forgetting to freeze W₀: its gradients and Adam states come back and the memory saving is gone.",
            "Building the d × k matrix BA in the training forward pass: compute (xAᵀ)Bᵀ and keep the r-wide "
            "bottleneck.",
            "Expecting LoRA to cut activation memory much: backpropagation still stores the inputs of every adapted "
            "layer, and of the norms, nonlinearities and attention.",
        ]
    )
    page.download(out.tables, "lora")
    page.finish()


page.run(_body)
