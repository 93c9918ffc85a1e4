"""The attention page's state: the tokens, the toy layer, the softmax, the KV-cache calculator and the real model."""

from __future__ import annotations

from core import attention as attn
from core import attention_real as real
from pages.frame.state import Field, Spec

VIEWS = ("Heads", "Outputs", "Mask", "Scale", "KV cache", "Real model")
DTYPES = tuple(attn.BYTES_PER_VALUE)
_TOP = attn.KV_LIMITS
_70B = attn.KV_PRESETS["Llama-3-70B"]


def _kv_preset(name: str, tokens: int) -> dict:
    shape = attn.KV_PRESETS[name]
    values = {"L": shape.layers, "Hq": shape.query_heads, "Hkv": shape.kv_heads, "hd": shape.head_dim, "ctx": tokens}
    return values | {"dtype": "bf16", "B": 1, "attn_view": "KV cache"}


MAIN_PRESETS = {
    "The lesson sentence, designed heads": {
        "src": "text",
        "text": attn.DEFAULT_TEXT,
        "split": "word",
        "dm": 64,
        "h": 4,
        "kv": 4,
        "dk": 0,
        "scale": "sqrt_dk",
        "temp": 1.0,
        "causal": True,
        "designed": True,
        "attn_view": "Heads",
    },
    "No scale at d_k = 128: one-hot rows": {"dm": 512, "h": 4, "kv": 4, "dk": 0, "scale": "none", "temp": 1.0},
    "The trap: 1/√d_model with 16 heads": {
        "dm": 512,
        "h": 16,
        "kv": 16,
        "dk": 0,
        "scale": "sqrt_dmodel",
        "temp": 1.0,
        "attn_view": "Scale",
    },
    "Causal mask: −∞ before vs × 0 after": {"causal": True, "attn_view": "Mask"},
    "GQA: 8 query heads share 2 KV heads": {"dm": 256, "h": 8, "kv": 2, "dk": 0, "attn_view": "Heads"},
    "512 random tokens": {"src": "random", "tokens": 512, "attn_view": "Heads"},
}
KV_PRESETS = {
    "Llama-3-70B at 128k tokens": _kv_preset("Llama-3-70B", 131_072),
    "Llama-3-8B at 128k tokens": _kv_preset("Llama-3-8B", 131_072),
    "Llama-2-7B (MHA) at 4k tokens": _kv_preset("Llama-2-7B", 4_096),
}

SPEC = Spec(
    "Attention",
    (
        Field("attn_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs", aliases=("view",)),
        Field("src", "Tokens from", "choice", "text", choices=("text", "random"), widget="segmented"),
        Field("text", "Text", "text", attn.DEFAULT_TEXT),
        Field("split", "Split on", "choice", "word", choices=("word", "char"), widget="segmented"),
        Field("tokens", "Random tokens", "int", 64, lo=2, hi=512, widget="slider", aliases=("n",)),
        Field("dm", "d_model", "int", 64, lo=1, hi=attn.MAX_D_MODEL, step=8),
        Field("h", "Heads", "int", 4, lo=1, hi=attn.MAX_HEADS, widget="slider"),
        Field(
            "kv",
            "KV heads",
            "int",
            4,
            lo=1,
            hi=attn.MAX_HEADS,
            widget="slider",
            help="Query heads share K and V in groups",
        ),
        Field("dk", "d_k (0: d_model / heads)", "int", 0, lo=0, hi=attn.MAX_D_MODEL),
        Field("layer_seed", "Seed", "int", 0, lo=0, hi=1e9, aliases=("seed",)),
        Field(
            "scale",
            "Scale of the logits",
            "choice",
            attn.SCALE_CHOICES[0],
            choices=attn.SCALE_CHOICES,
            widget="radio",
            extra=(("captions", [attn.SCALE_LABELS[c] for c in attn.SCALE_CHOICES]),),
        ),
        Field("temp", "Temperature", "float", 1.0, lo=0.05, hi=20.0, step=0.1, help="logits ÷ T"),
        Field("causal", "Causal mask", "bool", True),
        Field("designed", "Designed heads", "bool", True, help="previous token, first token, same word"),
        Field("L", "Layers L", "int", _70B.layers, lo=1, hi=_TOP["layers"]),
        Field("Hq", "Query heads", "int", _70B.query_heads, lo=1, hi=_TOP["query_heads"]),
        Field("Hkv", "KV heads K", "int", _70B.kv_heads, lo=1, hi=_TOP["kv_heads"]),
        Field("hd", "Head dim H", "int", _70B.head_dim, lo=1, hi=_TOP["head_dim"]),
        Field("dtype", "Number format", "choice", "bf16", choices=DTYPES),
        Field("ctx", "Context (tokens)", "int", 131_072, lo=1, hi=_TOP["tokens"], step=1024),
        Field("B", "Sequences (batch)", "int", 1, lo=1, hi=_TOP["batch"]),
        Field("rl", "Layer", "int", 1, lo=1, hi=real.LAYERS, widget="slider"),
        Field("rh", f"Head (0: all {real.HEADS})", "int", 0, lo=0, hi=real.HEADS, widget="slider"),
    ),
    presets={**MAIN_PRESETS, **KV_PRESETS},
)
