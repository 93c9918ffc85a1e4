"""The tables of tests/test_view_numbers.py for the pages of group 'lora': per page, per view (tests/page_numbers.py
``views``), a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, figure texts and
(outside the defaults) new texts show.

The LoRA page's three tabs, each written once as a function of the view's inputs (the state's values, read from the
SPEC's defaults and presets) and used for every view that shows it:
- the rank tab (:func:`_refs_rank`): the relative error and energy of the best rank-r approximation by Eckart-Young
  from the profile's singular values (the generated ΔW is U diag(σ) Vᵀ with orthonormal U, V, so its singular values
  are the profile's, up to one scale that cancels), and the counts r(d + k), dk and their break-even dk / (d + k);
- the cost tab (:func:`_refs_cost`): tests/card_references.py's accounting from the published shapes;
- the initialisation traps (:func:`_refs_init`): the loss and ∂L/∂B at step 0 of the page's seeded toy, recomputed
  here by hand from the same seeded draws (numpy's generator, torch.randn) and the closed-form gradient
  ∂L/∂B = s Σₙ gₙ uₙᵀ; only the column space of the target's random basis enters, so no QR convention is copied.
"""

from __future__ import annotations

import math
import re

import numpy as np
import torch

from tests import card_references as ref
from tests.page_numbers import Ref
from tests.test_page_numbers import COUNT, FORMULA, GIVEN, NAME, UNIT, _preset
from views import lora as v_lora

LO = v_lora.SPEC
TIMING = "a measured wall time (different on every run and machine)"
DISPLAY = "the heatmaps' grid of at most 64 × 64 cells (core/lora.py DISPLAY_SIDE, a display setting)"
MERGE_TEST = "test_core_lora.py::test_merge_after_training_and_records"


def _3(x: float) -> str:
    """Three significant digits as the readouts print them (14.0, 33.5, 130): for a passage that must be matched word
    for word (tests/page_numbers.py falls back to the exact text when a word holds a digit, as "nf4" and "bf16" do)."""
    return f"{x:.{max(0, 2 - math.floor(math.log10(x)))}f}"


# ---------------------------------------------------------------------------------------------------------- rank tab
def _sigma(profile: str, m: int) -> np.ndarray:
    """The generated ΔW's singular values (largest 1): the profiles of the page's "Singular values" control."""
    i = np.arange(1, m + 1, dtype=np.float64)
    return {"exponential": np.exp(-(i - 1) / 5.0), "power_law": i**-0.5, "flat": np.ones(m)}[profile]


def _energy(profile: str, m: int, r: int) -> float:
    """Σ_{i≤r} σᵢ² / Σ σᵢ² (Eckart-Young: the best rank-r approximation keeps the r largest)."""
    s2 = _sigma(profile, m) ** 2
    return float(s2[:r].sum() / s2.sum())


def _refs_rank(values: dict, skip: tuple[str, ...] = ()) -> list[Ref]:
    """The rank tab's readouts and figure texts for the view's d, k, r and profile; ``skip``: the passages this view
    shows word for word as the defaults do (checked there)."""
    d, k, r, profile = values["rows"], values["cols"], values["rank"], values["profile"]
    m = min(d, k)
    energy = 100 * _energy(profile, m, r)
    error = 100 * math.sqrt(1 - _energy(profile, m, r))
    params, full = r * (d + k), d * k
    share = 100 * params / full
    refs = {
        "error": Ref("Relative error: 20.2%", error),
        "energy": Ref("Energy captured: 95.9%", energy),
        "help": Ref("Relative error help: ‖ΔW − BA‖F / ‖ΔW‖F = √(Σ_{i>r} σᵢ²) / √(Σ σᵢ²)"),
        "params": Ref("Trainable r(d + k): 1,024", params),
        "dk": Ref("Trainable r(d + k) help: against dk = 4,096", full),
        "share": Ref("Share of dk: 25.0%", share),
        "svd": Ref("SVD (once per matrix): 1.3 ms", TIMING),
        "title": Ref("ΔW is 64×64", GIVEN, GIVEN) if m <= 64 else
                 Ref("ΔW is 256×256; shown as 64×64 block averages (up to 4×4 entries per cell)",
                     GIVEN, GIVEN, DISPLAY, DISPLAY, math.ceil(d / 64), math.ceil(k / 64)),
        "panel": Ref("best rank-8 approximation BA", GIVEN),
        "line": Ref("r = 8 of min(d, k) = 64 &nbsp;·&nbsp; error ‖ΔW − BA‖ F /‖ΔW‖ F = 20.2% &nbsp;·&nbsp; energy "
                    "captured 95.9% trainable r(d+k) = 1,024 of dk = 4,096 (25.0%)",
                    GIVEN, m, error, energy, params, full, share),
        "size": Ref("d = 64, k = 64", GIVEN, GIVEN),
        "break_even": Ref("r(d+k) = dk at r = 32", d * k / (d + k)),
        "spectral": Ref("σ r+1 / σ 1 (spectral)", FORMULA),
        "caption": Ref("The 256 × 256 matrices are shown as block averages", GIVEN, GIVEN),
    }  # fmt: skip
    if m <= 64:
        skip += ("caption",)  # every entry is shown
    return [ref_ for key, ref_ in refs.items() if key not in skip]


# ---------------------------------------------------------------------------------------------------------- cost tab
def _refs_cost(values: dict) -> list[Ref]:
    """The cost tab's caption, readouts and figure texts for the view's model, matrices, r, α, base and GPU line."""
    model, mats, r = values["model"], tuple(values["mats"]), values["rank"]
    base, gpu = values["base"], values["gpu_gb"]

    def mem(field: str) -> float:
        return ref.lora_memory(model, mats, r, field, base)

    shape = ref.LORA_SHAPES[model]
    shapes = ref._lora_matrix_shapes(shape)
    per_matrix = [r * sum(shapes[t]) for t in mats]
    N = shape.n_params
    scale = ref.lora_scale(values["alpha"], r)
    mats_text = ", ".join(f"{t}: 1" for t in mats)  # the numbers are wildcarded; only the names must match
    name = (NAME,) * len(re.findall(r"\d+", model))  # "Llama-2-7B": 2 and 7B; "LLaMA-65B": 65B

    def shown(field: str) -> tuple[str, float]:
        """A byte count as the readout prints it: its value in the unit (kB to TB) it is printed in."""
        x = mem(field)
        unit = next(u for u, e in (("TB", 12), ("GB", 9), ("MB", 6), ("kB", 3)) if x >= 10**e)
        return unit, x / 10 ** {"TB": 12, "GB": 9, "MB": 6, "kB": 3}[unit]

    states, base_b, total, full_ft = (
        shown(f) for f in ("adapter_state_bytes", "base_bytes", "lora_total_bytes", "full_ft_bytes")
    )
    checkpoint, full_copy = shown("checkpoint_bytes"), shown("full_checkpoint_bytes")
    return [
        Ref(f"{model}: N = 7B as the page counts it (the nominal size, not the exact parameter count); per layer "
            f"{mats_text} trainable.", *name, N, *per_matrix),
        Ref("Trainable parameters: 8,388,608", mem("trainable")),
        Ref("Trainable parameters help: 262,144 per layer", sum(per_matrix)),
        Ref("Share of the model: 0.12%", mem("share_pct")),
        # N is the nominal size the lesson (7B) and QLoRA (65B) count, and the help says so
        Ref("Share of the model help: of N = 7B, the nominal size the page counts (not the exact parameter count)", N),
        Ref(f"Adapter training states: 134 {states[0]}", states[1]),
        Ref("Adapter training states help: 16 bytes per trainable parameter", ref.ADAM_MIXED_BYTES_PER_PARAM),
        Ref(f"Frozen base ({base}): {_3(base_b[1])} {base_b[0]}", base_b[1]),
        Ref(f"Frozen base ({base}) help: {ref.base_bits_per_param(base):.4g} bits per parameter",
            ref.base_bits_per_param(base)),
        Ref(f"LoRA total: 14.1 {total[0]}", total[1]),
        Ref(f"Full fine-tuning states: 112 {full_ft[0]}", full_ft[1]),
        Ref("Full fine-tuning states help: 16 bytes per parameter", ref.ADAM_MIXED_BYTES_PER_PARAM),
        Ref(f"Adapter checkpoint: 16.8 {checkpoint[0]}", checkpoint[1]),
        Ref(f"Adapter checkpoint help: a full copy: {_3(full_copy[1])} {full_copy[0]} (bf16)", full_copy[1]),
        Ref("Scale s: 2", scale),
        # the figure: the stacked bar's total, the GPU line (a GPU's "GB" are GiB), the axis and the legend
        Ref("14.1 GB total; adapter states 0.134 GB", mem("lora_total_bytes") / 1e9, mem("adapter_state_bytes") / 1e9),
        Ref("one “80 GB” GPU: 80 GiB = 85.9 GB", GIVEN, "the convention the line states: the GPU's “GB” are GiB",
            gpu * 2**30 / 1e9),
        Ref("memory for training (GB, 10 9 bytes; activations not included)", UNIT),
        Ref("weights + gradients + Adam states (16 B/param)", ref.ADAM_MIXED_BYTES_PER_PARAM),
        Ref("adapter states (16 B per trainable parameter)", ref.ADAM_MIXED_BYTES_PER_PARAM),
    ]  # fmt: skip


# ------------------------------------------------------------------------------------------- initialisation traps
def _init_toy(seed: int, r: int, alpha: float) -> dict[str, float]:
    """The page's toy at step 0, by hand: W0 and X from numpy's generator seeded ``seed`` (in that order), the
    target ΔW* = c U Vᵀ of rank 4 with U, V orthonormal bases of two Gaussian draws from numpy's generator seeded
    ``seed + 1`` and ‖ΔW*‖_F = √(dk)/√k (so c = √d / 2), A ~ N(0, 1/k) from torch's generator seeded ``seed``.
    With B = 0 (or A = B = 0) h = W0 x, so L = ‖X ΔW*ᵀ‖²_F / (n d) and ∂L/∂B = (2s / (n d)) (h − y)ᵀ (X Aᵀ)."""
    d = k = 64
    n, rank = 256, 4
    rng = np.random.default_rng(seed)
    rng.standard_normal((d, k))  # W0: cancels in h − y
    X = rng.standard_normal((n, k))
    gen = np.random.default_rng(seed + 1)
    gen.standard_normal((d, rank))  # U's draw: only ‖U·‖ = ‖·‖ enters
    V, _ = np.linalg.qr(gen.standard_normal((k, rank)))  # an orthonormal basis of V's column space
    c = math.sqrt(d * k) / math.sqrt(rank) / math.sqrt(k)
    C = X.T @ X
    A = torch.randn((r, k), generator=torch.Generator().manual_seed(seed), dtype=torch.float64).numpy() / math.sqrt(k)
    return {
        "loss": c**2 * float(np.trace(V.T @ C @ V)) / (n * d),
        "grad_B": 2 * (alpha / r) / (n * d) * c * float(np.linalg.norm(V.T @ C @ A.T)),
    }


def _refs_init(values: dict) -> list[Ref]:
    toy = _init_toy(values["seed"], values["rank"], values["alpha"])
    train = v_lora.TRAIN
    return [
        Ref(
            "A 64 × 64 layer fitted to a rank-4 target on cpu, 200 Adam steps per initialisation (0.49 s in all).",
            f"the toy's d = {train.d} (core/lora_layer.py TrainConfig)",
            f"the toy's k = {train.k}",
            f"the target's rank {train.target_rank}",
            f"the page's {train.steps} steps (views/lora.py TRAIN)",
            TIMING,
        ),
        Ref("∂L/∂A at step 0, B = 0: 0 exactly", COUNT, GIVEN, 0.0),  # s Bᵀ g xᵀ with B = 0
        Ref("∂L/∂A at step 0, B = 0 help: s Bᵀ g xᵀ with B = 0", COUNT, GIVEN, GIVEN),
        Ref("∂L/∂B at step 0, B = 0: 0.256", COUNT, GIVEN, toy["grad_B"]),
        Ref("∂L/∂B at step 0, B = 0 help: ‖s g uᵀ‖F: B moves first", COUNT, GIVEN),
        Ref("Step-0 output change, B = 0: 0.0 exactly", COUNT, GIVEN, 0.0),  # s B A x with B = 0
        Ref("Step-0 output change, B = 0 help: max |h − W₀x|: starts at the base", COUNT, GIVEN),
        Ref("Loss with A = B = 0: 1.06 → 1.06", GIVEN, toy["loss"], toy["loss"]),  # no gradient: it stays
        Ref("Loss with A = B = 0 help: both gradients stay 0", GIVEN, 0.0),
        Ref("Merge gap: 3.6e-15", f"float64 rounding, bounded by {MERGE_TEST}"),
        Ref("gradient norms at step 0", COUNT),
        Ref("B = 0, A random", GIVEN),
        Ref("A = B = 0", GIVEN),
    ]


# ------------------------------------------------------------------------------------------------------------ tables
_DEFAULTS = LO.defaults()
_SAME_AS_DEFAULTS = ("help", "panel", "spectral")  # shown at the defaults word for word (r = 8 in every rank view)

# fmt: off
TABLES: dict[str, dict[str, list[Ref]]] = {
    "pages/3_LoRA.py": {
        "defaults": _refs_rank(_DEFAULTS, skip=("caption",)),
        "tab What LoRA costs": _refs_cost(_DEFAULTS),
        "tab Initialisation traps": _refs_init(_DEFAULTS),
        "preset QLoRA: 65B on one 48 GB GPU": _refs_cost(_preset(LO, "QLoRA: 65B on one 48 GB GPU")),
        "preset Fast decay: r = 8 is plenty": _refs_rank(
            _preset(LO, "Fast decay: r = 8 is plenty"),
            skip=(*_SAME_AS_DEFAULTS, "error", "energy")),
        "preset Flat spectrum: no free lunch": _refs_rank(
            _preset(LO, "Flat spectrum: no free lunch"), skip=_SAME_AS_DEFAULTS),
    },
}
# fmt: on
