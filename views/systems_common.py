"""What the two systems pages share: a problem of seed 002's A10 shown as readouts (the computed answer, with the
source's stated answer in its help), and number formats for those answers."""

from __future__ import annotations

import math

from core.model_spec import CATALOGUE, ModelSpec
from core.systems_presets import PRESETS, PRESETS_BY_KEY, Preset
from views import Readout
from views.state import Answer, Field, State
from viz import format as fmt

NONE = "none"
CUSTOM = CATALOGUE["custom"]
# The shape fields a "custom" model reads (suffix of the field's URL name -> ModelSpec attribute).
CUSTOM_SHAPE = {
    "layers": "layers",
    "d": "d_model",
    "heads": "n_heads",
    "kv": "n_kv_heads",
    "ff": "d_ff",
    "vocab": "vocab",
    "tied": "tied",
}


# Each problem's answers in plain words, in the order the page shows them: the first answers the problem's own
# question and leads the page's readouts while the problem is on (issue 30: "A10-08 · sequences 8k fp8 kv" said
# nothing to a newcomer and sat thirteenth of fifteen).
ANSWER_LABELS: dict[str, dict[str, str]] = {
    "A10-01": {
        "gqa_saving_total": "Saved by grouped-query attention, all layers",
        "mha_count_from_formula": "Llama-3-70B's shape with full multi-head attention (formula)",
        "gqa_saving_per_layer": "Saved by grouped-query attention, per layer",
        "tie_saving_V128256_D2048": "Saved by tied embeddings at V = 128,256, D = 2,048",
    },
    "A10-02": {
        "total": "Parameters in total",
        "per_layer": "Parameters per layer",
        "ffn_share_of_layer": "Feed-forward share of a layer",
        "attention_share": "Attention's share of the model",
        "ffn_share": "Feed-forward share of the model",
        "embedding_share": "Embeddings' share of the model",
        "mha_total": "Total with full multi-head attention",
        "gqa_saving_vs_mha": "Share saved by grouped-query attention (of the 80B multi-head total)",
    },
    "A10-03": {
        "crossover_002": "Sequence length past which attention scores dominate activation memory (tokens)",
        "crossover_korthikanti": "The same by Korthikanti et al.'s count (tokens)",
    },
    "A10-04": {
        "gqa_attention_constant": "Attention projections with grouped-query heads (× B·S·D²)",
        "kv_projection_saving": "Key and value projections: times fewer FLOPs than full multi-head",
    },
    "A10-05": {
        "attention_crossover_S": "Sequence length past which attention FLOPs stop being small next to 6N (tokens)",
        "C_7B_2T": "Training compute, 7B parameters on 2T tokens (FLOPs)",
    },
    "A10-06": {
        "mfu": "Model FLOPs utilisation",
        "cluster_peak_flops": "Cluster peak (FLOP/s)",
        "tokens_per_s_for_40pct": "Tokens per second for 40% utilisation",
        "bubble_p8_m8": "Pipeline bubble, 8 stages, 8 micro-batches (share of wall-clock time)",
        "bubble_megatron_p8_m8": "The same bubble over the ideal compute time",
    },
    "A10-07": {
        "gqa_KiB_per_token": "KV cache per token, grouped-query",
        "mha_KiB_per_token": "KV cache per token, full multi-head",
        "mqa_KiB_per_token": "KV cache per token, multi-query",
        "gqa_GiB_128k": "KV cache at 131,072 tokens, grouped-query",
        "mha_GiB_128k": "KV cache at 131,072 tokens, full multi-head",
        "mla_80_layers_KiB": "KV cache per token, DeepSeek-V2's latent attention on 80 layers",
        "deepseek_v3_mla_KiB": "KV cache per token, DeepSeek-V3's latent attention",
    },
    "A10-08": {
        "sequences_8k": "Sequences of 8,192 tokens that fit",
        "sequences_8k_fp8_kv": "The same with the KV cache in fp8",
        "sequences_128k": "Sequences that fit at 131,072 tokens each",
        "per_sequence_GiB_8k": "KV cache of one 8,192-token sequence",
        "weights_GiB": "Weights in bf16",
        "left_GiB": "Memory left after the weights",
    },
    "A10-09": {
        "bytes_per_param_standard": "Bytes per parameter, mixed-precision Adam",
        "bytes_per_param_fp32_grads": "The same with fp32 gradients",
        "bytes_per_param_adam8bit": "The same with 8-bit Adam moments",
        "bytes_per_param_pure_bf16": "The same with everything in bf16",
        "states_70B_GB": "Training states of a 70B model",
        "cards_of_80GiB_for_70B": "80 GiB cards they fill",
    },
    "A10-10": {
        "per_card_GiB_zero1": "Training states per card with ZeRO stage 1",
        "per_card_GiB_before_zero": "Training states per card before ZeRO",
        "bytes_per_param_zero1": "Bytes per parameter per card with ZeRO stage 1",
        "total_TB": "Training states in total",
        "cluster_TiB": "Memory of the 512 cards",
        "cluster_TB": "The same in decimal terabytes",
        "microbatches_for_10pct": "Micro-batches for a 10% pipeline bubble",
    },
    "A10-11": {
        "decode_intensity_batch1": "Decode at batch 1: FLOPs per byte",
        "prefill_intensity_2048": "Prefill of 2,048 tokens: FLOPs per byte",
        "ridge_point": "H100's ridge point: FLOPs per byte",
        "decode_ms_per_token": "Floor on decode time per token, batch 1 (weights read once)",
        "decode_tokens_per_s": "Tokens per second at batch 1, at most",
    },
    "A10-12": {
        "days": "Training time (days)",
        "flops": "Training compute (FLOPs)",
        "cost_dollars": "Cost of the GPU time",
        "forgot_mfu_ratio": "Too short by this factor if utilisation is left out",
        "compute_for_a_month": "Speed-up a one-month run needs",
        "gpus_for_a_month": "GPUs for a one-month run",
    },
    "001-3.2": {"states_7B_GB": "Training states of a 7B model"},
    "001-A": {
        "N": "Parameters by the 20-tokens rule",
        "C": "Compute budget (FLOPs)",
        "states_GB": "Training states",
        "serving_GFLOP_per_token": "Serving compute per token (GFLOP)",
    },
    "A2.8-MoE": {
        "total": "Parameters in total: memory goes by these",
        "active": "Parameters active per token: compute goes by these",
    },
}


def problem_answer(key: str) -> Answer:
    """A problem preset's answer: its first answer's readout and the number its source states."""
    p = PRESETS_BY_KEY[key]
    name = next(iter(ANSWER_LABELS[key]))
    stated, tolerance = p.expected[name]
    text = p.stated_text.get(name, "").split(" (")[0].split(";")[0] or answer_text(name, stated)
    return Answer(ANSWER_LABELS[key][name], text, p.source, tolerance=tolerance)


def custom_fields(prefix: str) -> tuple[Field, ...]:
    """The shape fields of the "custom" model on one page (URL names ``<prefix>_layers`` ...), defaulting to
    core's custom shape (Llama-3.2-1B's)."""
    c = CUSTOM
    return (
        Field(f"{prefix}_layers", "Layers L", "int", c.layers, lo=1, hi=512),
        Field(f"{prefix}_d", "Width d_model", "int", c.d_model, lo=64, hi=65_536, help="a multiple of the heads"),
        Field(f"{prefix}_heads", "Query heads N", "int", c.n_heads, lo=1, hi=1024, help="must divide d_model"),
        Field(f"{prefix}_kv", "KV heads K", "int", c.n_kv_heads, lo=1, hi=1024, help="must divide the query heads"),
        Field(f"{prefix}_ff", "FFN width d_ff", "int", c.d_ff, lo=1, hi=262_144, help="SwiGLU: 3 D d_ff weights"),
        Field(f"{prefix}_vocab", "Vocabulary V", "int", c.vocab, lo=1, hi=1_048_576),
        Field(f"{prefix}_tied", "Tied input and output embeddings", "bool", c.tied),
    )


def model_of(state: State, model_field: str, prefix: str) -> tuple[ModelSpec, str | None]:
    """The chosen model; for "custom", core's custom spec with the page's shape fields (ModelSpec.replace), or the
    starting shape and a message when the fields do not make a valid model."""
    name = state[model_field]
    if name != "custom":
        return CATALOGUE[name], None
    shape = {attr: state[f"{prefix}_{suffix}"] for suffix, attr in CUSTOM_SHAPE.items()}
    shape = {k: (v if isinstance(v, bool) else int(v)) for k, v in shape.items()}
    why = None
    if shape["d_model"] % shape["n_heads"]:
        why = f"d_model = {shape['d_model']} is not a multiple of the {shape['n_heads']} query heads"
    elif shape["n_heads"] % shape["n_kv_heads"]:
        why = f"{shape['n_kv_heads']} KV heads do not divide the {shape['n_heads']} query heads"
    else:
        try:
            return CUSTOM.replace(name="custom", source="custom shape", **shape), None
        except ValueError as e:
            why = str(e)
    return CUSTOM, (
        f"The custom shape is not a valid model: {why}. Showing the starting shape (Llama-3.2-1B: "
        f"{CUSTOM.layers} layers, d_model {CUSTOM.d_model}, {CUSTOM.n_heads} heads, {CUSTOM.n_kv_heads} KV "
        f"heads) instead."
    )


def problem_keys(page: str) -> tuple[str, ...]:
    """The problems a page shows ("memory" or "serving"), in the source's order."""
    return tuple(p.key for p in PRESETS if p.page == page)


def preset_name(p: Preset) -> str:
    return f"{p.key}: {p.title}"


def answer_text(name: str, value: float) -> str:
    """An answer with the unit its name carries (``..._GiB``, ``..._KiB``, ``..._GB``, ``..._ms...``)."""
    if not math.isfinite(value):
        return "—"
    low = name.lower()
    for unit in ("gib", "kib", "tib", "gb", "tb"):
        if low.endswith("_" + unit) or f"_{unit}_" in low:
            label = {"gib": "GiB", "kib": "KiB", "tib": "TiB", "gb": "GB", "tb": "TB"}[unit]
            return f"{value:,.4g} {label}"
    if "_ms_" in low or low.endswith("_ms"):
        return f"{value:,.3g} ms"
    if "dollars" in low:
        return f"${value / 1e6:,.2f}M" if value >= 1e6 else f"${value:,.0f}"
    if any(w in low for w in ("share", "saving_vs", "bubble", "mfu")) and "tokens" not in low and abs(value) < 1:
        return f"{100 * value:.3g}%"
    if 1e4 <= abs(value) < 1e6:
        return f"{value:,.0f}"
    if abs(value) >= 1e6:
        return fmt.sci(value, 4) if abs(value) >= 1e13 else fmt.count(value, 4)
    return f"{value:,.4g}"


def problem_readouts(key: str) -> list[Readout]:
    """One readout per answer of problem ``key``: core's value, the stated answer and the source in its help."""
    if key == NONE:
        return []
    p = PRESETS_BY_KEY[key]
    got = p.compute()
    out = []
    for name in ANSWER_LABELS[key]:
        stated = p.expected[name][0]
        stated_text = p.stated_text.get(name) or answer_text(name, stated)
        if name in p.lost:
            help_text = (
                f"{p.title}: the source's number was lost in extraction; its own inputs and rounding give "
                f"{stated_text} ({p.source})."
            )
        elif name in p.derived:
            help_text = f"{p.title}: derived from {p.derived[name]}, {stated_text}; the source does not state it."
        else:
            help_text = f"{p.title}: the source states {stated_text} ({p.source})."
        if name in p.about:
            help_text += f" {p.about[name][0].upper()}{p.about[name][1:]}."
        if name in p.why:
            help_text += f" Core differs: {p.why[name]}."
        if p.note:
            help_text += f" Note: {p.note}."
        out.append(Readout(ANSWER_LABELS[key][name], answer_text(name, got[name]), help_text))
    return out
