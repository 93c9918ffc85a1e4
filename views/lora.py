"""The LoRA page's state and what it shows: ΔW against its best rank-r approximation, what adapters cost at model
scale, and the initialisation traps (one tab each, built only when asked for)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from core import lora, lora_memory
from core.model_spec import CATALOGUE, ModelSpec, param_count
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, inputs, with_answers
from views import predict as ask
from views.state import Answer, Field, Spec, State
from viz import format as fmt
from viz.lora import lora_curves_figure, lora_heatmaps_figure, lora_memory_figure, lora_training_figure
from viz.predict import predict_figure, with_guess

if TYPE_CHECKING:  # core.lora_layer is a torch module: imported only where the initialisation traps need it
    from core import lora_layer

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "LoRA or full fine-tuning? And what does LoRA actually save?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "singular values of ΔW fall fast",
    "one base can serve many adapters",
    "the memory saved is",
    "8,388,608",
)

QUICK_CHECK = QuickCheck(
    question=(
        "A colleague initialises a LoRA layer with **A = 0 and B = 0**, “to start exactly at the pretrained model”. "
        "What happens during training?"
    ),
    options=(
        "It trains as usual, from exactly the pretrained model",
        "Only B trains at first; A follows once B is non-zero",
        "Only A trains at first; B follows once A is non-zero",
        "Nothing trains: both gradients stay 0 at every step",
    ),
    right=3,
    answer=(
        "Nothing trains. ∂L/∂B = s g (Ax)ᵀ is zero because A = 0, and ∂L/∂A = s Bᵀ g xᵀ is zero because B = 0, at "
        "every step. The start is right (ΔW = 0), but one factor must be non-zero: B = 0 with A random. See the grey "
        "line in the *Initialisation traps* tab: its loss never moves."
    ),
)

VIEWS = ("Rank-r approximation", "What LoRA costs", "Initialisation traps")  # tab labels = the link's values
PARTS = dict(zip(VIEWS, ("rank", "cost", "init"), strict=True))  # the figures() part of each tab
# The model shapes of the cost tab, from the shared catalogue (core.model_spec) so that the memory, serving, scaling,
# KV-cache and LoRA pages count the same models. The choice labels are those links already carry (the GQA note
# on Llama-3-8B stays); each names a catalogue model. MoE and MLA models are left out: LoRA's per-layer matrices
# below are those of a dense model.
MODEL_LABELS: dict[str, str] = {
    "Llama-2-7B": "Llama-2-7B",
    "Llama-3-8B (GQA)": "Llama-3-8B",
    "LLaMA-65B": "LLaMA-65B",
    "Llama-3-70B (GQA)": "Llama-3-70B",
    "Llama-3.1-405B (GQA)": "Llama-3.1-405B",
}
# N as the lesson and QLoRA state it, where that is the number the page has always shown: worked example F counts
# "a 7B model" (0.12%, 14.0 GB of bf16 base), QLoRA a 65B one. The other models use their exact count.
STATED_N: dict[str, float] = {"Llama-2-7B": 7e9, "LLaMA-65B": 65e9}
MODELS = tuple(MODEL_LABELS)


def lora_shape(spec: ModelSpec, label: str | None = None, n_params: float | None = None) -> lora_memory.ModelShape:
    """The shape LoRA's accounting takes, from a catalogue spec: width, layers, FFN width, K and V width
    (KV heads x head dim), vocabulary, and N (``n_params``; None counts it from the spec with param_count)."""
    return lora_memory.ModelShape(
        name=label or spec.name,
        hidden=spec.d_model,
        layers=spec.layers,
        intermediate=spec.d_ff,
        kv_width=spec.n_kv_heads * spec.head_dim,
        vocab=spec.vocab,
        n_params=float(param_count(spec)) if n_params is None else n_params,
    )


def model_shape(label: str) -> lora_memory.ModelShape:
    """The ModelShape of a choice of the ``model`` field (its label is the shape's name)."""
    spec = CATALOGUE[MODEL_LABELS[label]]
    return lora_shape(spec, label, STATED_N.get(label))


SPEC = Spec(
    "LoRA",
    (
        Field("lora_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs", aliases=("view",)),
        Field("rank", "r: rank budget", "int", 8, lo=0, hi=4096, aliases=("r",)),
        Field("rows", "d: rows (outputs)", "int", 64, lo=16, hi=1024, widget="slider", aliases=("d",)),
        Field("cols", "k: columns (inputs)", "int", 64, lo=16, hi=1024, widget="slider", aliases=("k",)),
        Field("profile", "Singular values", "choice", lora.PROFILES[0], choices=lora.PROFILES),
        Field("seed", "Seed", "int", 0, lo=0, hi=1e9),
        Field("smooth", "Smooth basis (image-like)", "bool", False),
        Field("logr", "Log r axis", "bool", False),
        Field("model", "Model shape", "choice", MODELS[0], choices=MODELS),
        Field("mats", "Adapted matrices", "multi", ("q", "k", "v", "o"), choices=lora_memory.ADAPTABLE),
        Field("alpha", "α (scale s = α/r)", "float", 16.0, lo=0.01, hi=1e4, step=1.0),
        Field("rs", "rsLoRA: s = α/√r", "bool", False),
        Field(
            "base", "Frozen base format", "choice", "bf16", choices=tuple(lora_memory.BASE_BYTES), widget="segmented"
        ),
        Field(
            "gpu_gb",
            "GPU memory line (the GPU's “GB”, which are GiB)",
            "int",
            80,
            lo=1,
            hi=1e4,
            step=8,
            aliases=("gpu",),
            help="As GPUs are sold: an “80 GB” GPU holds 80 GiB = 85.9 GB (10^9 bytes), and the line is drawn there.",
        ),
        ask.switch("predict_lora"),
        ask.guess("guess_rank", "Your guess: the rank that keeps 90% of the energy", "int", 0, 4096),
    ),
    presets={
        "Worked example F": {
            "lora_view": VIEWS[1],
            "model": "Llama-2-7B",
            "mats": ("q", "k", "v", "o"),
            "rank": 8,
            "alpha": 16.0,
            "base": "bf16",
            "rs": False,
            "gpu_gb": 80,
        },
        "QLoRA: 65B on one 48 GB GPU": {
            "lora_view": VIEWS[1],
            "model": "LLaMA-65B",
            "mats": lora_memory.ADAPTABLE,
            "rank": 64,
            "alpha": 16.0,
            "base": "nf4",
            "rs": False,
            "gpu_gb": 48,
        },
        "Fast decay: r = 8 is plenty": {
            "lora_view": VIEWS[0],
            "profile": "exponential",
            "rows": 256,
            "cols": 256,
            "rank": 8,
        },
        "Flat spectrum: no free lunch": {"lora_view": VIEWS[0], "profile": "flat", "rows": 256, "cols": 256, "rank": 8},
        "Initialisation traps": {"lora_view": VIEWS[2], "rank": 8, "alpha": 16.0, "rs": False},
    },
    preset_help={
        "Worked example F": "Llama-2-7B, r = 8 on q, k, v, o: 8,388,608 trainable (0.12%), 134 MB of states.",
        "QLoRA: 65B on one 48 GB GPU": "4-bit base, r = 64 adapters on every linear layer.",
    },
    answers={
        "Worked example F": Answer("Trainable parameters", "8,388,608", "lesson 001 section 4, worked example F"),
    },
)

# The demo layer of the initialisation traps: its size, data and steps; r, alpha, rsLoRA and seed come from the state.
# It is core.lora_layer's TrainConfig, and that module imports torch, so ``TRAIN`` is made on first use (see
# :func:`train_defaults`; the module's ``__getattr__`` makes ``views.lora.TRAIN`` work as before) and importing this
# view or drawing its other tabs does not import torch.
TRAIN: lora_layer.TrainConfig
TRAIN_STEPS = 200


def train_defaults() -> lora_layer.TrainConfig:
    """``TRAIN``, made on first use (a test may have set it already)."""
    global TRAIN
    try:
        return TRAIN
    except NameError:
        from core import lora_layer

        TRAIN = lora_layer.TrainConfig(steps=TRAIN_STEPS)
        return TRAIN


def __getattr__(name: str) -> object:
    if name == "TRAIN":
        return train_defaults()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The fields each part reads (``main`` also reads lora_view, to know which part it is).
READS = {
    "rank": ("rank", "rows", "cols", "profile", "seed", "smooth", "logr", "predict_lora", "guess_rank"),
    "cost": ("rank", "model", "mats", "alpha", "rs", "base", "gpu_gb"),
    "init": ("rank", "alpha", "rs", "seed"),
}


def parts_of(state: State, options: Options) -> list[str]:
    """The parts to build, in tab order; ``main`` means the tab that the state's ``lora_view`` names (a deck or a
    handout drawing a preset gets the view a link to it shows)."""
    wanted = {PARTS.get(state.lora_view, "rank") if p == "main" else p for p in options.parts}
    return [p for p in PARTS.values() if p in wanted]


def relevant(state: State, options: Options) -> State:
    """The state with every field the requested parts do not read put back to its default: the same figures, and a
    cache key that does not change when a control of another tab does."""
    parts = parts_of(state, options)
    keep = {name for p in parts for name in READS[p]} | ({"lora_view"} if "main" in options.parts else set())
    return SPEC.defaults().replace(**{name: state[name] for name in keep})


def upload_problem(name: str, err: ValueError) -> str:
    """The message for an upload that cannot be used."""
    return f"The upload `{name}` was not used: {str(err).rstrip('.')}. Showing the generated matrix instead."


# ----------------------------------------------------------------------------------------------------------------
# One SVD per matrix


@dataclass(frozen=True)
class Analysis:
    """The SVD of one ΔW and every rank's readout from it."""

    svd: lora.SVD
    curves: lora.RankCurves


def analyse(delta_w: np.ndarray) -> Analysis:
    """The SVD of ΔW (numpy at the page's sizes, torch on core's device above them) and its rank curves.
    Uncached: see :func:`generated` and ``analysis=``."""
    s = lora.svd(delta_w)
    return Analysis(s, lora.rank_curves(s))


# An lru_cache keyed by the generator's five settings, not a Streamlit cache, so that figures() itself decomposes each
# generated matrix once whoever calls it (the page, a deck, a test): moving r, the log axis or presenter mode, or any
# control of another tab, reuses it. Process-wide and shared by sessions like the page's former cache_resource; a
# 1024 x 1024 entry holds about 16 MB (U and Vh in float64), so 16 entries stay under 300 MB.
@functools.lru_cache(maxsize=16)
def generated(d: int, k: int, profile: str, seed: int, basis: str) -> Analysis:
    """The :class:`Analysis` of the generated ΔW of these settings (cached; callers must not mutate it)."""
    return analyse(lora.make_target(d, k, profile, seed, basis=basis))


# ----------------------------------------------------------------------------------------------------------------
# Training runs, once per configuration

_RUNS: dict[
    lora_layer.TrainConfig, dict[str, lora_layer.TrainResult]
] = {}  # insertion order: the oldest is evicted first
_RUNS_LOCK = threading.Lock()
_RUNS_MAX = 16


def train(
    config: lora_layer.TrainConfig, progress: Callable[[float], None] | None = None
) -> dict[str, lora_layer.TrainResult]:
    """The three initialisations trained under ``config`` (cached per config, so presenter mode or another tab's
    control does not retrain; ``progress`` hears the fraction done only when training actually runs)."""
    with _RUNS_LOCK:
        runs = _RUNS.get(config)
    if runs is None:
        from core import lora_layer  # torch: only when the initialisation traps train

        runs = lora_layer.train_all_inits(config, progress=progress)
        with _RUNS_LOCK:
            _RUNS[config] = runs
            while len(_RUNS) > _RUNS_MAX:
                del _RUNS[next(iter(_RUNS))]
    return runs


# ----------------------------------------------------------------------------------------------------------------
# The view

# The QLoRA paper's "single 48GB GPU" (RTX A6000, A40, L40S) holds 48 GiB physical: a GPU's "GB" are GiB. The A40 and
# L40S ship with ECC on (GDDR6's in-band ECC reserves about 1/16 of the memory): they report
# 46,068 MiB, about 45 GiB usable. In GB (10^9 bytes):
GPU_48GB = 48 * 2**30 / 1e9


def profile_caption(profile: str) -> str:
    """What a singular-value profile of the generated ΔW looks like (the caption under its choice)."""
    return lora.PROFILE_LABELS[profile]


@functools.cache
def qlora_numbers() -> dict[str, float]:
    """The explanation's NF4 and QLoRA numbers: NF4's bits and bytes per parameter, the QLoRA 65B preset's total
    (base + adapter states, in GB and GiB) and what it leaves at most of a "48 GB" GPU, which holds 48 GiB, for
    activations (in GB and GiB; less on an A40 or L40S, which ship with ECC on)."""
    total = lora_memory.lora_memory(**lora_memory.PRESET_QLORA_65B).lora_total_bytes
    spare = GPU_48GB * 1e9 - total
    return {
        "nf4_bits": lora_memory.NF4_BITS_PER_PARAM,
        "nf4_bytes": lora_memory.BASE_BYTES["nf4"],
        "total_gb": total / 1e9,
        "total_gib": total / 2**30,
        "spare_gb": spare / 1e9,
        "spare_gib": spare / 2**30,
    }


def figures(
    state: State,
    options: Options = DEFAULT,
    upload: np.ndarray | None = None,
    upload_name: str | None = None,
    *,
    analysis: Analysis | None = None,
    progress: Callable[[float], None] | None = None,
) -> View:
    """The parts that ``options.parts`` names (``rank``, ``cost``, ``init``, or ``main`` for the state's tab), with
    their readouts, clamping notes and (lazy) tables; readouts follow the tab order when several parts are built.

    ``upload``: a ΔW to use instead of the generated one (``upload_name`` names it in messages); an array that is not
    a finite 2-D matrix gives a warning and the generated ΔW. ``analysis``: the upload's :func:`analyse`, when the
    caller caches it per file (the page does), so that moving r does not decompose it again; generated matrices are
    cached here (:func:`generated`). ``progress``: told the fraction done while the initialisation traps train.
    """
    view, notes, parts = View(), [], parts_of(state, options)
    view.facts["qlora"] = qlora_numbers()  # the explanation quotes them whichever tab is open
    if "rank" in parts:
        _rank(state, options, view, notes, upload, upload_name, analysis)
    if "cost" in parts:
        _cost(state, options, view, notes)
    if "init" in parts:
        _init(state, options, view, notes, progress)
    view.notices += [("info", note) for note in notes]  # after any warning about the upload, as on the page
    return with_answers(SPEC, state, view)


def _seed(state: State, notes: list[str]) -> int:
    seed, more = inputs.clamp_field(state.seed, SPEC["seed"])
    for note in more:
        if note not in notes:
            notes.append(note)
    return seed


def _rank(
    state: State,
    options: Options,
    view: View,
    notes: list[str],
    upload: np.ndarray | None,
    upload_name: str | None,
    analysis: Analysis | None,
) -> None:
    seed = _seed(state, notes)
    if upload is not None and analysis is None:
        try:
            analysis = analyse(upload)  # validates it: 2-D, finite, at most 4096 x 4096
        except ValueError as err:
            view.notices.append(("warning", upload_problem(upload_name or "the array", err)))
            upload = None
    if upload is None:
        analysis = generated(state.rows, state.cols, state.profile, seed, "smooth" if state.smooth else "random")
    s, curves = analysis.svd, analysis.curves
    r, more = inputs.clamp_field(state.rank, SPEC["rank"], hi=curves.m, name="r")
    notes += more
    ranks = [int(x) for x in lora.slider_ranks(s.m, 16, include=[r])]
    predicting = ask.mode(state, "predict_lora", "guess_rank")
    question = f"Which smallest rank r keeps 90% of the energy of this {s.d} × {s.k} ΔW ({state.profile} spectrum)?"
    if predicting == "hidden":  # the heatmaps' slider and every curve give the answer away
        view.figures["predict"] = predict_figure(
            question, x_title="rank r", y_title="energy captured", x_range=(0, curves.m), y_range=(0, 1), **options.look
        )
    else:
        frames = lora.display_frames(s, ranks)
        view.figures["heatmaps"] = lora_heatmaps_figure(frames, curves, r, height=470, **options.look)
        view.drags["heatmaps"] = Drag("rank", tuple(int(x) for x in ranks))
        view.figures["curves"] = lora_curves_figure(curves, r, log_r=bool(state.logr), height=620, **options.look)
    view.facts.update(r=r, ranks=ranks, d=s.d, k=s.k, averaged=max(s.d, s.k) > lora.DISPLAY_SIDE, svd=s, curves=curves)
    ro = curves.readout(r)
    view.readouts += [
        Readout("Relative error", fmt.percent(ro.rel_frobenius), "‖ΔW − BA‖F / ‖ΔW‖F = √(Σ_{i>r} σᵢ²) / √(Σ σᵢ²)"),
        Readout("Energy captured", fmt.percent(ro.energy), "Σ_{i≤r} σᵢ² / Σ σᵢ²"),
        Readout("Trainable r(d + k)", f"{ro.params:,}", f"against dk = {ro.params_full:,}"),
        Readout("Share of dk", fmt.percent(ro.share)),
        Readout(
            "SVD (once per matrix)",
            f"{1e3 * s.seconds:,.{0 if s.seconds >= 0.01 else 1}f} ms",
            f"{s.library}.linalg.svd on {s.device}; moving r reuses it",
        ),
    ]
    view.tables["Rank curves"] = lambda: pd.DataFrame(
        {"r": curves.r, "rel_frobenius": curves.rel_frobenius, "rel_spectral": curves.rel_spectral,
         "energy": curves.energy, "trainable": curves.params, "full_dk": curves.params_full}
    )  # fmt: skip
    view.tables["Singular values"] = lambda: pd.DataFrame({"i": np.arange(1, curves.m + 1), "sigma": curves.sigma})
    view.facts["predict"] = predicting
    if predicting == "hidden":
        ask.hide(view, question, ("Relative error", "Energy captured"), tables=("Rank curves", "Singular values"))
    elif predicting == "revealed":
        truth, guess_r = rank_for_energy(curves, 0.9), int(state.guess_rank)
        kept = float(curves.energy[min(guess_r, curves.m)])
        view.figures["curves"] = with_guess(
            view.figures["curves"], guess_r, f"your guess r = {guess_r}", ref="x3", theme=options.theme
        )
        ask.reveal(
            view,
            Readout("Rank for 90% energy", f"{truth:,}", "the smallest r with Σ_{i≤r} σᵢ² ≥ 0.9 Σ σᵢ²"),
            f"{guess_r:,}",
            f"{guess_r - truth:+,}",
            f"your r keeps {fmt.percent(kept)} of the energy",
            value=truth,
        )


def rank_for_energy(curves: lora.RankCurves, share: float) -> int:
    """The smallest rank whose best approximation keeps ``share`` of ΔW's energy (Σ_{i≤r} σᵢ² / Σ σᵢ²)."""
    return int(curves.r[int(np.argmax(curves.energy >= share))])


def _of_n(label: str, n_params: float) -> str:
    """The share's denominator: N, said to be the nominal size where it is the one the lesson and QLoRA count (7B,
    65B), so that "7.00B" is not read as Llama-2-7B's parameter count (its published shape has 6.74B)."""
    if label not in STATED_N:
        return f"of N = {fmt.count(n_params)}"
    return f"of N = {n_params / 1e9:g}B, the nominal size the page counts (not the exact parameter count)"


def _n_text(label: str, n_params: float) -> str:
    """The caption's model size: the nominal N where the page counts one (see ``_of_n``), else the count."""
    if label not in STATED_N:
        return f"{fmt.count(n_params)} parameters"
    return f"N = {n_params / 1e9:g}B as the page counts it (the nominal size, not the exact parameter count)"


def _cost(state: State, options: Options, view: View, notes: list[str]) -> None:
    r, more = inputs.clamp_field(state.rank, SPEC["rank"], lo=1, name="r")
    notes += more
    base, mats = state.base or "bf16", list(state.mats or [])
    if not mats:
        notes.append("Choose at least one matrix to adapt; showing q, k, v, o.")
        mats = ["q", "k", "v", "o"]
    mem = lora_memory.lora_memory(
        model_shape(state.model), tuple(mats), r, alpha=state.alpha, rslora=state.rs, base_format=base
    )
    notes += list(mem.notes)
    label = f"LoRA r = {r} on {', '.join(mats)} ({base} base)"
    view.figures["memory"] = lora_memory_figure({label: mem}, gpu_gb=state.gpu_gb, **options.look)
    view.facts.update(
        memory=mem,
        model=state.model,
        memory_caption=f"{state.model}: {_n_text(state.model, mem.n_params)}; per layer "
        + ", ".join(f"{t}: {n:,}" for t, n in mem.per_matrix.items())
        + " trainable.",
    )
    view.readouts += [
        Readout("Trainable parameters", f"{mem.trainable:,}", f"{mem.per_layer:,} per layer"),
        Readout("Share of the model", fmt.percent(mem.share), _of_n(state.model, mem.n_params)),
        Readout("Adapter training states", fmt.nbytes(mem.adapter_state_bytes), "16 bytes per trainable parameter"),
        Readout(
            f"Frozen base ({base})",
            fmt.nbytes(mem.base_bytes),
            f"{8 * lora_memory.BASE_BYTES[base]:.4g} bits per parameter",
        ),
        Readout("LoRA total", fmt.nbytes(mem.lora_total_bytes), "base + adapter states; activations not included"),
        Readout("Full fine-tuning states", fmt.nbytes(mem.full_ft_bytes), "16 bytes per parameter"),
        Readout(
            "Adapter checkpoint",
            fmt.nbytes(mem.checkpoint_bytes),
            f"a full copy: {fmt.nbytes(mem.full_checkpoint_bytes)} (bf16)",
        ),
        Readout("Scale s", f"{mem.scale:.3g}", "α/√r (rsLoRA)" if state.rs else "α/r"),
    ]
    view.tables["Memory"] = lambda: pd.DataFrame(
        [{"matrix": t, "trainable_per_layer": n} for t, n in mem.per_matrix.items()]
    )


def _init(
    state: State, options: Options, view: View, notes: list[str], progress: Callable[[float], None] | None
) -> None:
    from core import lora_layer  # torch: this tab trains a torch layer

    seed, defaults = _seed(state, notes), train_defaults()
    r, more = inputs.clamp_field(state.rank, SPEC["rank"], lo=1, hi=min(defaults.d, defaults.k), name="r")
    notes += more
    config = lora_layer.TrainConfig(r=r, alpha=state.alpha, rslora=state.rs, seed=seed, steps=defaults.steps)
    runs = train(config, progress)
    view.figures["training"] = lora_training_figure(runs, **options.look)
    view.facts.update(
        config=config,
        runs=runs,
        training_caption=f"A {config.d} × {config.k} layer fitted to a rank-{config.target_rank} target on "
        f"{runs['B0'].device}, {config.steps} Adam steps per initialisation "
        f"({sum(x.seconds for x in runs.values()):.2f} s in all).",
    )
    b0, zeros = runs["B0"], runs["zeros"]
    view.readouts += [
        Readout(
            "∂L/∂A at step 0, B = 0",
            "0 exactly" if b0.grad_A0_norm == 0 else f"{b0.grad_A0_norm:.3g}",
            "s Bᵀ g xᵀ with B = 0",
        ),
        Readout("∂L/∂B at step 0, B = 0", f"{b0.grad_B0_norm:.3g}", "‖s g uᵀ‖F: B moves first"),
        Readout(
            "Step-0 output change, B = 0",
            "0.0 exactly" if b0.delta_at_init == 0 else f"{b0.delta_at_init:.3g}",
            "max |h − W₀x|: starts at the base",
        ),
        Readout("Loss with A = B = 0", f"{zeros.loss[0]:.3g} → {zeros.loss[-1]:.3g}", "both gradients stay 0"),
        Readout("Merge gap", f"{b0.merge_gap:.1e}", "max |(W₀ + sBA)x − adapter path|, after training"),
    ]
    view.tables["Training"] = lambda: pd.DataFrame(
        {f"{col}_{init}": getattr(res, col) for init, res in runs.items() for col in ("loss", "norm_A", "norm_B")}
    )
