"""The LoRA page's state: the rank budget, the target update ΔW, and the adapters at model scale."""

from __future__ import annotations

from core import lora as L
from pages.frame.state import Field, Spec

VIEWS = ("Rank-r approximation", "What LoRA costs", "Initialisation traps")  # tab labels = the link's values
MODELS = tuple(L.MODEL_PRESETS)

SPEC = Spec(
    "LoRA",
    (
        Field("lora_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs", aliases=("view",)),
        Field("rank", "r: rank budget", "int", 8, lo=0, hi=4096, aliases=("r",)),
        Field("rows", "d: rows (outputs)", "int", 64, lo=16, hi=1024, widget="slider", aliases=("d",)),
        Field("cols", "k: columns (inputs)", "int", 64, lo=16, hi=1024, widget="slider", aliases=("k",)),
        Field("profile", "Singular values", "choice", L.PROFILES[0], choices=L.PROFILES),
        Field("seed", "Seed", "int", 0, lo=0, hi=1e9),
        Field("smooth", "Smooth basis (image-like)", "bool", False),
        Field("logr", "Log r axis", "bool", False),
        Field("model", "Model shape", "choice", MODELS[0], choices=MODELS),
        Field("mats", "Adapted matrices", "multi", ("q", "k", "v", "o"), choices=L.ADAPTABLE),
        Field("alpha", "α (scale s = α/r)", "float", 16.0, lo=0.01, hi=1e4, step=1.0),
        Field("rs", "rsLoRA: s = α/√r", "bool", False),
        Field("base", "Frozen base format", "choice", "bf16", choices=tuple(L.BASE_BYTES), widget="segmented"),
        Field("gpu_gb", "GPU memory line (GB)", "int", 80, lo=1, hi=1e4, step=8, aliases=("gpu",)),
    ),
    presets={
        "Worked example F": {
            "lora_view": VIEWS[1],
            "model": L.LLAMA2_7B.name,
            "mats": ("q", "k", "v", "o"),
            "rank": 8,
            "alpha": 16.0,
            "base": "bf16",
            "rs": False,
            "gpu_gb": 80,
        },
        "QLoRA: 65B on one 48 GB GPU": {
            "lora_view": VIEWS[1],
            "model": L.LLAMA_65B.name,
            "mats": L.ADAPTABLE,
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
)
