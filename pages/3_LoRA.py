"""LoRA: the best rank-r approximation of an update, what adapters cost at model scale, and the init traps."""

import hashlib
import time

import numpy as np
import pandas as pd
import streamlit as st

from core import lora as L
from pages.frame import InterviewAnswer, Page, Readout, cached, cached_figures, draw_tabs
from pages.views import lora as view_of
from viz import format as fmt
from viz import lora as V

page = Page.setup(
    "LoRA: a low-rank correction",
    "🧩",
    "LoRA bets that the update a fine-tune needs has low rank: r(d + k) trainable numbers instead of dk. When the "
    "singular values of ΔW fall fast, a small r captures almost all of it, and the memory saved is the gradients "
    "and Adam states of the frozen base.",
    r"h = W_0 x + s\,BAx,\quad s = \frac{\alpha}{r},\quad B \in \mathbb{R}^{d\times r},\ A \in \mathbb{R}^{r\times k};"
    r"\quad \frac{\|\Delta W - \Delta W_r\|_F}{\|\Delta W\|_F} = \sqrt{\frac{\sum_{i>r}\sigma_i^2}{\sum_i \sigma_i^2}}",
    spec=view_of.SPEC,
)

# The demo's layer size, data and steps; r, alpha, rsLoRA and seed come from the controls.
TRAIN = L.TrainConfig(steps=200)


@cached_figures  # parsed once per file (keyed by its digest), not on every rerun
def read_upload(name: str, digest: str, _data: bytes) -> tuple[np.ndarray | None, str | None]:
    """(matrix, None) for a good upload, (None, message) for a bad one; never raises."""
    try:
        return L.load_matrix(_data, name), None
    except ValueError as err:
        return None, f"The upload `{name}` was not used: {str(err).rstrip('.')}. Showing the generated matrix instead."


@cached_figures  # cache_resource: the SVD of a 4096 x 4096 upload is not copied on every rerun (read-only)
def analyse(source: tuple, _upload: np.ndarray | None = None) -> tuple[L.SVD, L.RankCurves]:
    """One SVD per matrix; ``source`` names it (generator settings, or the upload's name and digest)."""
    if _upload is None:
        _, d, k, profile, seed, basis = source
        delta_w = L.make_target(d, k, profile, seed, basis=basis)
    else:
        delta_w = _upload
    s = L.svd(delta_w)
    return s, L.rank_curves(s)


@cached_figures
def rank_figures(source: tuple, r: int, log_r: bool, presenter: bool, _svd: L.SVD, _curves: L.RankCurves) -> tuple:
    frames = L.display_frames(_svd, L.slider_ranks(_svd.m, 16, include=[r]))
    heat = V.lora_heatmaps_figure(frames, _curves, r, height=470)
    curves = V.lora_curves_figure(_curves, r, log_r=log_r, height=620)
    if presenter:  # the frame's 20 px type needs room: readout above the panel titles, slider label below the axes
        heat.update_layout(margin_t=175, sliders=[{**heat.layout.sliders[0].to_plotly_json(), "pad": {"t": 85}}])
        heat.layout.annotations[-1].yshift = 36
        curves.update_layout(margin_t=150)
    return heat, curves


@cached
def train(config: L.TrainConfig) -> dict[str, L.TrainResult]:
    """The three initialisations, with a progress bar once training has run for more than a second (the bar is
    created in here so that the cache may replay it)."""
    bar, start = st.empty(), time.perf_counter()

    def report(fraction: float) -> None:
        if time.perf_counter() - start > 1.0:
            bar.progress(fraction, text=f"Training three LoRA layers… {fraction:.0%}")

    runs = L.train_all_inits(config, progress=report)
    bar.empty()
    return runs


with page.controls():
    r_in = page.control("rank")
    st.subheader("The target update ΔW")
    d, k, profile = page.control("rows"), page.control("cols"), page.control("profile")
    st.caption(L.PROFILE_LABELS[profile])
    seed_in, smooth, log_r = page.control("seed"), page.control("smooth"), page.control("logr")
    upload = st.file_uploader(  # no type filter: a wrong file gets the page's message, not Streamlit's exception
        "…or upload ΔW (.npy or .csv, up to 4096 × 4096)",
        key="upload",
        help="A 2-D array of finite numbers. Uploads are not part of the link.",
    )
    st.subheader("At model scale")
    model, mats, alpha = page.control("model"), page.control("mats"), page.control("alpha")
    rslora, base, gpu_gb = page.control("rs"), page.control("base"), page.control("gpu_gb")

seed, notes = L.clamp_whole(seed_in, "seed", 0, 10**9, 0)
delta_upload, source = None, ("generated", d, k, profile, seed, "smooth" if smooth else "random")
if upload is not None:
    data = upload.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    delta_upload, problem = read_upload(upload.name, digest, data)
    if problem:
        page.notice(problem)
    else:
        source = ("upload", upload.name, digest)
        page.notice(
            f"Using the uploaded matrix `{upload.name}` ({delta_upload.shape[0]} × {delta_upload.shape[1]}); d, k, "
            "profile and seed are ignored. Uploads are not part of the link: a shared link shows the generated "
            "matrix.",
            "info",
        )
        st.sidebar.caption("🔗 The link below does not carry the upload.")
base = base or "bf16"
mats = list(mats or [])

with page.figure_area():
    tab_rank, tab_cost, tab_init = draw_tabs(view_of.SPEC["lora_view"])

readouts, tables = [], {}
if tab_rank.open:
    with st.spinner("Decomposing ΔW (one SVD per matrix; moving r later reuses it)…"):
        svd_result, curves = analyse(source, delta_upload)
    r, more = L.clamp_whole(r_in, "r", 0, curves.m, 8 if curves.m >= 8 else curves.m)
    notes += more
    heat, curve_fig = rank_figures(source, r, log_r, page.presenter, svd_result, curves)
    with tab_rank:
        ranks = [int(x) for x in L.slider_ranks(svd_result.m, 16, include=[r])]
        page.chart(heat, "heatmaps", "lora-rank-r", drag="rank", drag_values=ranks)
        st.caption(
            "Drag the slider under the heatmaps: BA, the residual and the readout line change in the browser, "
            "without a round trip. "
            + (
                f"The {svd_result.d} × {svd_result.k} matrices are shown as block averages."
                if max(svd_result.d, svd_result.k) > L.DISPLAY_SIDE
                else "Every entry is shown."
            )
        )
        page.chart(curve_fig, "curves", "lora-rank-curves")
    ro = curves.readout(r)
    readouts = [
        Readout("Relative error", V.percent(ro.rel_frobenius), "‖ΔW − BA‖F / ‖ΔW‖F = √(Σ_{i>r} σᵢ²) / √(Σ σᵢ²)"),
        Readout("Energy captured", V.percent(ro.energy), "Σ_{i≤r} σᵢ² / Σ σᵢ²"),
        Readout("Trainable r(d + k)", f"{ro.params:,}", f"against dk = {ro.params_full:,}"),
        Readout("Share of dk", V.percent(ro.share)),
        Readout(
            "SVD (once per matrix)",
            f"{1e3 * svd_result.seconds:,.{0 if svd_result.seconds >= 0.01 else 1}f} ms",
            f"torch.linalg.svd on {svd_result.device}; moving r reuses it",
        ),
    ]
    tables = {
        "Rank curves": pd.DataFrame(
            {
                "r": curves.r,
                "rel_frobenius": curves.rel_frobenius,
                "rel_spectral": curves.rel_spectral,
                "energy": curves.energy,
                "trainable": curves.params,
                "full_dk": curves.params_full,
            }
        ),
        "Singular values": pd.DataFrame({"i": np.arange(1, curves.m + 1), "sigma": curves.sigma}),
    }

if tab_cost.open:
    r, more = L.clamp_whole(r_in, "r", 1, 4096, 8)
    notes += more
    if not mats:
        notes.append("Choose at least one matrix to adapt; showing q, k, v, o.")
        mats = ["q", "k", "v", "o"]
    mem = cached(L.lora_memory)(L.MODEL_PRESETS[model], tuple(mats), r, alpha=alpha, rslora=rslora, base_format=base)
    notes += list(mem.notes)
    label = f"LoRA r = {r} on {', '.join(mats)} ({base} base)"
    with tab_cost:
        page.chart(V.lora_memory_figure({label: mem}, gpu_gb=gpu_gb), "memory", "lora-memory")
        st.caption(
            f"{model}: {fmt.count(mem.n_params)} parameters; per layer "
            + ", ".join(f"{t}: {n:,}" for t, n in mem.per_matrix.items())
            + " trainable."
        )
    readouts = [
        Readout("Trainable parameters", f"{mem.trainable:,}", f"{mem.per_layer:,} per layer"),
        Readout("Share of the model", V.percent(mem.share), f"of N = {fmt.count(mem.n_params)}"),
        Readout("Adapter training states", fmt.nbytes(mem.adapter_state_bytes), "16 bytes per trainable parameter"),
        Readout(
            f"Frozen base ({base})", fmt.nbytes(mem.base_bytes), f"{8 * L.BASE_BYTES[base]:.4g} bits per parameter"
        ),
        Readout("LoRA total", fmt.nbytes(mem.lora_total_bytes), "base + adapter states; activations not included"),
        Readout("Full fine-tuning states", fmt.nbytes(mem.full_ft_bytes), "16 bytes per parameter"),
        Readout(
            "Adapter checkpoint",
            fmt.nbytes(mem.checkpoint_bytes),
            f"a full copy: {fmt.nbytes(mem.full_checkpoint_bytes)} (bf16)",
        ),
        Readout("Scale s", f"{mem.scale:.3g}", "α/√r (rsLoRA)" if rslora else "α/r"),
    ]
    tables = {"Memory": pd.DataFrame([{"matrix": t, "trainable_per_layer": n} for t, n in mem.per_matrix.items()])}

if tab_init.open:
    r, more = L.clamp_whole(r_in, "r", 1, min(TRAIN.d, TRAIN.k), 8)
    notes += more
    config = L.TrainConfig(r=r, alpha=alpha, rslora=rslora, seed=seed, steps=TRAIN.steps)
    with tab_init:
        runs = train(config)
        page.chart(V.lora_training_figure(runs), "training", "lora-initialisation")
        b0, zeros = runs["B0"], runs["zeros"]
        st.caption(
            f"A {config.d} × {config.k} layer fitted to a rank-{config.target_rank} target on {b0.device}, "
            f"{config.steps} Adam steps per initialisation ({sum(x.seconds for x in runs.values()):.2f} s in all)."
        )
    readouts = [
        Readout(
            "∂L/∂A at step 0, B = 0",
            "0 exactly" if b0.grad_A0_norm == 0 else f"{b0.grad_A0_norm:.3g}",
            "s Bᵀ g xᵀ with B = 0",
        ),
        Readout("∂L/∂B at step 0, B = 0", f"{b0.grad_B0_norm:.3g}", "‖s g uᵀ‖F: B moves first"),
        Readout(
            "Output change at step 0, B = 0",
            "0.0 exactly" if b0.delta_at_init == 0 else f"{b0.delta_at_init:.3g}",
            "max |h − W₀x|: starts at the base",
        ),
        Readout("Loss with A = B = 0", f"{zeros.loss[0]:.3g} → {zeros.loss[-1]:.3g}", "both gradients stay 0"),
        Readout("Merge gap", f"{b0.merge_gap:.1e}", "max |(W₀ + sBA)x − adapter path|, after training"),
    ]
    tables = {
        "Training": pd.DataFrame(
            {f"{col}_{init}": getattr(res, col) for init, res in runs.items() for col in ("loss", "norm_A", "norm_B")}
        )
    }

for note in notes:
    page.notice(note, "info")
page.readouts(readouts)

_qlora = L.lora_memory(**L.PRESET_QLORA_65B)  # for the explanation's numbers

with page.explain():
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
{L.NF4_BITS_PER_PARAM:.3f} bits ({L.BASE_BYTES["nf4"]:.3f} bytes) in QLoRA's NF4 with double quantisation: 4 bits per
weight, an fp8 absmax per block of 64 weights (0.125 bits) and an fp32 constant per 256 blocks (0.002 bits)
(Dettmers et al. 2023). Full fine-tuning needs 16 bytes per parameter. Activations are the same either way, and
these estimates leave them out: the QLoRA preset's {_qlora.lora_total_bytes / 1e9:.1f} GB leaves
{48 - _qlora.lora_total_bytes / 1e9:.1f} GB of a 48 GB GPU for them, so it fits only with gradient checkpointing
(which the QLoRA paper uses, with paged optimizers for the memory spikes). Hu et al. (2021) report, for GPT-3
175B with r = 4 on W_q and W_v, training memory down from 1.2 TB to 350 GB, a 35 MB checkpoint instead of 350 GB,
and 25% faster training than full fine-tuning; those are their measurements, beside the 16-bytes-per-parameter
estimate used here.

**Initialisation traps.** A small LoRA layer is fitted to a low-rank target from the same frozen W₀. With B = 0
and A random, ΔW = 0 at the start and B gets a gradient at once; with A = B = 0 both gradients stay zero
forever; with both random the model starts changed (unless, as in PiSSA and OLoRA, the product sBA of the
non-zero start is subtracted from W₀). The gradients theorem says why: with u = Ax and
g = ∂L/∂h, ∂L/∂B = s g uᵀ and ∂L/∂A = s Bᵀ g xᵀ, so B = 0 silences A's gradient for one step only, while A = B = 0
silences both for good. After training, merging W₀ + sBA gives the adapter path's outputs up to rounding.
"""
    )

page.quick_check(
    "A colleague initialises a LoRA layer with **A = 0 and B = 0**, “to start exactly at the pretrained model”. "
    "What happens during training?",
    "Nothing trains. ∂L/∂B = s g (Ax)ᵀ is zero because A = 0, and ∂L/∂A = s Bᵀ g xᵀ is zero because B = 0, at "
    "every step. The start is right (ΔW = 0), but one factor must be non-zero: B = 0 with A random. See the grey "
    "line in the *Initialisation traps* tab: its loss never moves.",
)
page.interview(
    "“LoRA or full fine-tuning? And what does LoRA actually save?”",
    InterviewAnswer(
        sentence="LoRA freezes W₀ and trains a rank-r correction BA, so only r(d + k) numbers per matrix need "
        "gradients and Adam states; the checkpoint is small and one base can serve many adapters.",
        equation=r"h = W_0 x + \tfrac{\alpha}{r} B A x,\qquad r(d+k) \ll dk",
        number="Llama-2-7B, r = 8 on q, k, v, o: 8,388,608 trainable parameters (0.12%), 134 MB of training "
        "states against 112 GB for full fine-tuning; the frozen bf16 base is 14 GB.",
        trade_off="It saves optimizer memory, not activations, and each matrix can change only by rank r: for a "
        "large domain shift full fine-tuning has more capacity, though LoRA forgets less of the base. Hu et al. "
        "(2021) report for GPT-3 175B: 1.2 TB of training memory down to 350 GB, a 35 MB checkpoint, and 25% "
        "faster training.",
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
        "Building the d × k matrix BA in the training forward pass: compute (xAᵀ)Bᵀ and keep the r-wide bottleneck.",
        "Expecting LoRA to cut activation memory: backpropagation still stores the inputs of every adapted layer.",
    ]
)
page.download(tables, "lora")
page.finish()
